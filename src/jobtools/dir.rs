//! Reading a job directory: whether it is one, its summary, its recipe copy and saved overrides.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::job::events::event_files;
use crate::job::{
    CLI_ARGS_FILE, EVENTS_PREFIX, EVENTS_SUFFIX, JobPaths, JobSummary, LOCK_FILE, SUMMARY_FILE,
};

/// `Job directory not found: <dir>` unless `job_dir` is a directory.
pub(super) fn require_dir(job_dir: &Path) -> Result<()> {
    if !job_dir.is_dir() {
        bail!("Job directory not found: {}", job_dir.display());
    }
    Ok(())
}

/// [`require_dir`], and an error unless the directory [is a job directory](is_job_dir).
pub(crate) fn require_job_dir(job_dir: &Path) -> Result<()> {
    require_dir(job_dir)?;
    if !is_job_dir(job_dir) {
        bail!(
            "{} is not a job directory (no {EVENTS_PREFIX}*{EVENTS_SUFFIX}, {SUMMARY_FILE} or {LOCK_FILE})",
            job_dir.display()
        );
    }
    Ok(())
}

/// The job id of `job_dir`: its name.
pub(super) fn job_id_of(job_dir: &Path) -> String {
    job_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
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

pub(super) fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// Whether `dir` looks like a job directory of the partitioned executor.
pub(crate) fn is_job_dir(dir: &Path) -> bool {
    let paths = JobPaths::new(dir.to_path_buf());
    dir.is_dir()
        && (!event_files(dir).is_empty()
            || paths.summary().is_file()
            || paths.lock().is_file()
            || paths.partitioning_info().is_file())
}

/// The job's recipe copy in its directory (the YAML file next to `cli.yaml`).
pub(super) fn recipe_copy(job_dir: &Path) -> Option<PathBuf> {
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
                && p.file_name().is_some_and(|n| n != CLI_ARGS_FILE)
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
pub(super) fn cli_overrides(job_dir: &Path) -> Vec<(String, String)> {
    let args = crate::job::saved_cli_args(&JobPaths::new(job_dir.to_path_buf()));
    args.chunks(2)
        .filter_map(|c| match c {
            [k, v] => Some((k.trim_start_matches("--").to_string(), v.clone())),
            _ => None,
        })
        .collect()
}

/// Now, in seconds since the epoch.
pub(super) fn epoch_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// `--work_dir` on object storage (`s3://...`): the tools read local views of its jobs.
pub(crate) fn remote_work_dir(work_dir: &Path) -> Option<&str> {
    work_dir.to_str().filter(|w| dj_plans::store::is_remote(w))
}

/// The directory of job `job_id` under `work_dir` (a local view of it on object storage); an
/// error for an id that is not a plain name, or a job that does not exist.
pub(crate) fn job_path(work_dir: &Path, job_id: &str) -> Result<PathBuf> {
    crate::job::validate_job_id(job_id)?;
    if let Some(url) = remote_work_dir(work_dir) {
        return crate::job::mirror::job_view(url, job_id, false);
    }
    let dir = work_dir.join(job_id);
    if !dir.is_dir() {
        bail!(
            "Job directory not found: {} (--work_dir is the directory holding job directories)",
            dir.display()
        );
    }
    Ok(dir)
}
