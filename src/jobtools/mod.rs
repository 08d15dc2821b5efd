//! Job utilities for the partitioned executor's job directories, Data-Juicer's `JobUtils`,
//! monitor and stopper done as its documentation promises: progress from the real event files
//! (`events_*.jsonl`, not a missing `events.jsonl`), a stop that honours `--force`, and a list of
//! the jobs under a work directory.
//!
//! * [`job_progress`]: per-partition status, current op, completed ops with durations, rows and
//!   throughput, checkpoints; overall counts, percentage, rows processed, throughput and ETA; the
//!   job status from the latest run's events and the lock (`running`, `completed`, `failed`,
//!   `stopped`, or `dead` when the last run neither completed nor failed and nothing holds the lock).
//! * [`list_jobs`]: every job directory under a work directory.
//! * [`stop_job`]: SIGTERM (graceful: the run logs `job_failed` with status `stopped`, releases its
//!   lock and stays resumable) or SIGKILL (`force`), then waits and reports.
//!
//! The `dj-job` binary ([`job_main`]) prints these as reports or, with `--json`, as JSON; `dj-sql`
//! ([`crate::sql`]) queries a job's checkpoints, export, events and input with DataFusion SQL.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use dj_plans::nodes::checkpoint::parse_checkpoint_file_name;
use serde::Serialize;
use serde_json::{Value, json};

use crate::job::events::{EventKind, event_files, load_events};
use crate::job::{JobPaths, JobSummary, LockInfo, lock_info, process_alive};

mod cli;
mod job_progress;
mod list;
mod report;
mod stop;
#[cfg(test)]
mod tests;

pub use cli::*;

use job_progress::progress_at;
pub(crate) use job_progress::*;
pub(crate) use list::*;
pub(crate) use report::*;
pub(crate) use stop::*;

// ---------------------------------------------------------------------------------------------
// Loading

/// `Job directory not found: <dir>` unless `job_dir` is a directory.
fn require_dir(job_dir: &Path) -> Result<()> {
    if !job_dir.is_dir() {
        bail!("Job directory not found: {}", job_dir.display());
    }
    Ok(())
}

/// `job_summary.json` (written when a job completes), or `None` when there is none yet.
pub(crate) fn load_job_summary(job_dir: &Path) -> Result<Option<JobSummary>> {
    require_dir(job_dir)?;
    let path = JobPaths::new(job_dir.to_path_buf()).summary();
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(Some(serde_json::from_str(&text).with_context(|| {
            format!("{} is not a valid job summary", path.display())
        })?)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// Whether `dir` looks like a job directory of the partitioned executor.
pub(crate) fn is_job_dir(dir: &Path) -> bool {
    dir.is_dir()
        && (!event_files(dir).is_empty()
            || dir.join("job_summary.json").is_file()
            || dir.join(".lock").is_file()
            || JobPaths::new(dir.to_path_buf())
                .partitioning_info()
                .is_file())
}

/// The job's recipe copy in its directory (the YAML file next to `cli.yaml`).
pub(crate) fn recipe_copy(job_dir: &Path) -> Option<PathBuf> {
    let summary_name = load_job_summary(job_dir)
        .ok()
        .flatten()
        .and_then(|s| Path::new(&s.config_file).file_name().map(|n| n.to_owned()));
    if let Some(name) = summary_name
        && job_dir.join(&name).is_file()
    {
        return Some(job_dir.join(name));
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir(job_dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && p.file_name().is_some_and(|n| n != "cli.yaml")
                && p.extension().is_some_and(|e| e == "yaml" || e == "yml")
        })
        .collect();
    found.sort();
    found.into_iter().next()
}

/// The recipe copy as YAML with the saved `cli.yaml` overrides of top-level keys applied.
pub(crate) fn effective_recipe(job_dir: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(recipe_copy(job_dir)?).ok()?;
    let mut recipe: Value = serde_norway::from_str(&text).ok()?;
    for (k, v) in cli_overrides(job_dir) {
        if !k.contains('.')
            && let Some(m) = recipe.as_object_mut()
        {
            m.insert(k, Value::String(v));
        }
    }
    Some(recipe)
}

/// The saved command-line overrides (`cli.yaml`) as `(key, value)` pairs.
pub(crate) fn cli_overrides(job_dir: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(job_dir.join("cli.yaml")).unwrap_or_default();
    let args: Vec<String> = serde_norway::from_str::<Value>(&text)
        .ok()
        .and_then(|v| v.get("arguments").cloned())
        .and_then(|a| serde_json::from_value(a).ok())
        .unwrap_or_default();
    args.chunks(2)
        .filter_map(|c| match c {
            [k, v] => Some((k.trim_start_matches("--").to_string(), v.clone())),
            _ => None,
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Processes and the lock

fn epoch_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}
