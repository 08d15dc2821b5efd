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

use crate::events::{event_files, load_events};
use crate::job::{JobPaths, LockInfo, lock_info, process_alive};

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
pub fn load_job_summary(job_dir: &Path) -> Result<Option<Value>> {
    require_dir(job_dir)?;
    let path = JobPaths::new(job_dir.to_path_buf()).summary();
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            Ok(Some(serde_json::from_str(&text).with_context(|| {
                format!("{} is not valid JSON", path.display())
            })?))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Every event of the job, oldest first, from all its `events_*.jsonl` files (one per run).
/// Lines torn by a crash are skipped.
pub fn load_event_logs(job_dir: &Path) -> Result<Vec<Value>> {
    require_dir(job_dir)?;
    Ok(load_events(job_dir))
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// Whether `dir` looks like a job directory of the partitioned executor.
pub fn is_job_dir(dir: &Path) -> bool {
    dir.is_dir()
        && (!event_files(dir).is_empty()
            || dir.join("job_summary.json").is_file()
            || dir.join(".lock").is_file()
            || JobPaths::new(dir.to_path_buf())
                .partitioning_info()
                .is_file())
}

/// The job's recipe copy in its directory (the YAML file next to `cli.yaml`).
pub fn recipe_copy(job_dir: &Path) -> Option<PathBuf> {
    let summary_name = read_json(&job_dir.join("job_summary.json"))
        .and_then(|s| s["config_file"].as_str().map(str::to_string))
        .and_then(|f| Path::new(&f).file_name().map(|n| n.to_owned()));
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
pub fn effective_recipe(job_dir: &Path) -> Option<Value> {
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
pub fn cli_overrides(job_dir: &Path) -> Vec<(String, String)> {
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

// ---------------------------------------------------------------------------------------------
// Progress

/// A job's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JobStatus {
    /// A live process holds the job's lock.
    Running,
    /// The latest run logged `job_complete`.
    Completed,
    /// The latest run logged `job_failed` (an error).
    Failed,
    /// The latest run logged `job_failed` with status `stopped` (SIGTERM/SIGINT or `dj-job stop`).
    Stopped,
    /// The latest run neither completed nor failed and no live process holds the lock: it was
    /// killed or crashed. `--resume` continues it.
    Dead,
    /// No events at all.
    Unknown,
}

impl JobStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Running => "running",
            JobStatus::Completed => "completed",
            JobStatus::Failed => "failed",
            JobStatus::Stopped => "stopped",
            JobStatus::Dead => "dead",
            JobStatus::Unknown => "unknown",
        }
    }
    fn icon(self) -> &'static str {
        match self {
            JobStatus::Running => "🔄",
            JobStatus::Completed => "✅",
            JobStatus::Failed => "❌",
            JobStatus::Stopped => "⏹️",
            JobStatus::Dead => "💀",
            JobStatus::Unknown => "❓",
        }
    }
}

impl fmt::Display for JobStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A partition's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PartitionStatus {
    /// Not started in the current run (yet).
    Pending,
    Processing,
    Completed,
    Failed,
    /// Was processing when the job stopped or died (resume runs it again from its newest
    /// checkpoint).
    Interrupted,
}

impl PartitionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            PartitionStatus::Pending => "pending",
            PartitionStatus::Processing => "processing",
            PartitionStatus::Completed => "completed",
            PartitionStatus::Failed => "failed",
            PartitionStatus::Interrupted => "interrupted",
        }
    }
    fn icon(self) -> &'static str {
        match self {
            PartitionStatus::Pending => "⏳",
            PartitionStatus::Processing => "🔄",
            PartitionStatus::Completed => "✅",
            PartitionStatus::Failed => "❌",
            PartitionStatus::Interrupted => "⏸️",
        }
    }
}

impl fmt::Display for PartitionStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An op of the recipe, by global index.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpRef {
    pub idx: usize,
    pub name: String,
}

/// An op that completed on a partition (`op_complete`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpProgress {
    pub idx: usize,
    pub name: String,
    pub duration_seconds: Option<f64>,
    pub input_rows: Option<u64>,
    pub output_rows: Option<u64>,
    /// `input_rows / duration` (None without both, or with a zero duration).
    pub throughput_rows_per_second: Option<f64>,
    /// `(input_rows - output_rows) / input_rows` (None without both, or with no input).
    pub reduction_ratio: Option<f64>,
    pub completed_at: Option<f64>,
}

/// A partition checkpoint: from its `checkpoint_save` event and/or found on disk.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckpointInfo {
    pub operation_idx: usize,
    pub operation_name: Option<String>,
    pub path: PathBuf,
    pub rows: Option<u64>,
    /// When the checkpoint became durable (the event's timestamp).
    pub saved_at: Option<f64>,
    /// The file is in the job's `checkpoints/` now (retention may have removed it).
    pub exists: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartitionProgress {
    pub partition_id: usize,
    pub status: PartitionStatus,
    /// Input rows of the partition (saved boundaries).
    pub sample_count: Option<u64>,
    pub start_row: Option<u64>,
    pub end_row: Option<u64>,
    pub start_time: Option<f64>,
    pub end_time: Option<f64>,
    pub duration_seconds: Option<f64>,
    /// Rows the partition produced (`partition_complete`).
    pub output_rows: Option<u64>,
    /// The first op started and not completed in the partition's current attempt (ops stream,
    /// so the ops after it run at the same time).
    pub current_op: Option<OpRef>,
    pub completed_ops: Vec<OpProgress>,
    pub failed_op: Option<OpRef>,
    /// The checkpoint the partition resumed from (`checkpoint_load`), if it did.
    pub resumed_from_op: Option<OpRef>,
    pub checkpoints: Vec<CheckpointInfo>,
    /// Saved files that failed verification on a resume and were moved aside
    /// (`checkpoint_invalid`).
    pub moved_aside: Vec<MovedAside>,
    pub error_message: Option<String>,
}

/// A saved file moved aside after failing verification.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MovedAside {
    pub operation_idx: Option<usize>,
    pub path: String,
    pub moved_to: Option<String>,
    pub reason: Option<String>,
    pub at: Option<f64>,
}

impl PartitionProgress {
    fn new(partition_id: usize) -> Self {
        PartitionProgress {
            partition_id,
            status: PartitionStatus::Pending,
            sample_count: None,
            start_row: None,
            end_row: None,
            start_time: None,
            end_time: None,
            duration_seconds: None,
            output_rows: None,
            current_op: None,
            completed_ops: vec![],
            failed_op: None,
            resumed_from_op: None,
            checkpoints: vec![],
            moved_aside: vec![],
            error_message: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OverallProgress {
    pub total_partitions: usize,
    pub completed_partitions: usize,
    pub processing_partitions: usize,
    pub pending_partitions: usize,
    pub failed_partitions: usize,
    pub interrupted_partitions: usize,
    /// `completed / total * 100`.
    pub progress_percentage: f64,
    /// Input rows of the job.
    pub total_samples: u64,
    /// Input rows of the completed partitions.
    pub processed_samples: u64,
    /// Rows the completed partitions produced.
    pub output_rows: u64,
    /// Input rows of the partitions completed in the latest run over that run's elapsed time.
    pub throughput_rows_per_second: Option<f64>,
    /// While running: the latest run's elapsed time per partition completed in it, times the
    /// partitions left. 0 once completed; None when unknown.
    pub estimated_remaining_seconds: Option<f64>,
    /// Checkpoints recorded (one per partition and op), and how many are on disk.
    pub checkpoints: usize,
    pub checkpoints_on_disk: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LastEvent {
    pub event_type: String,
    pub timestamp: Option<f64>,
}

/// Everything `dj-job monitor` shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobProgress {
    pub job_id: String,
    pub job_dir: PathBuf,
    pub status: JobStatus,
    /// The live process running the job.
    pub pid: Option<i32>,
    pub lock: LockInfo,
    pub dataset_path: Option<String>,
    pub export_path: Option<String>,
    pub total_samples: Option<u64>,
    pub partition_size: Option<u64>,
    /// The recipe's ops in order.
    pub ops: Vec<String>,
    /// Runs of the job (`job_start` events): 2 or more after a resume.
    pub runs: usize,
    /// The first run's start.
    pub start_time: Option<f64>,
    /// The latest run's start, and its end (`job_complete`/`job_failed`).
    pub run_start_time: Option<f64>,
    pub end_time: Option<f64>,
    /// The latest run's elapsed time (until now while running).
    pub elapsed_seconds: Option<f64>,
    pub last_event: Option<LastEvent>,
    pub events: usize,
    /// The latest run's failure message.
    pub error_message: Option<String>,
    pub overall: OverallProgress,
    pub partitions: Vec<PartitionProgress>,
    pub summary: Option<Value>,
}

fn u64_of(v: &Value) -> Option<u64> {
    v.as_u64()
        .or_else(|| v.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
}

fn str_of(v: &Value) -> Option<String> {
    v.as_str().map(str::to_string)
}

/// The op named by an event (`operation_idx`, `operation_name`).
fn op_of(e: &Value) -> Option<OpRef> {
    Some(OpRef {
        idx: u64_of(&e["operation_idx"])? as usize,
        name: str_of(&e["operation_name"]).unwrap_or_default(),
    })
}

/// The partition's state while replaying its events.
#[derive(Default)]
struct Replay {
    /// Ops started and not completed in the current attempt.
    started: BTreeMap<usize, String>,
    /// The newest op checkpointed in the current attempt: the ops up to it are done.
    checkpointed: Option<usize>,
}

/// Progress of the job in `job_dir`, from its event files, saved partitioning, lock and summary.
pub fn job_progress(job_dir: &Path) -> Result<JobProgress> {
    require_dir(job_dir)?;
    if !is_job_dir(job_dir) {
        bail!(
            "{} is not a job directory (no events_*.jsonl, job_summary.json or .lock)",
            job_dir.display()
        );
    }
    progress_at(job_dir, epoch_now())
}

fn progress_at(job_dir: &Path, now: f64) -> Result<JobProgress> {
    let paths = JobPaths::new(job_dir.to_path_buf());
    let job_id = job_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let summary = load_job_summary(job_dir).unwrap_or(None);
    let events = load_events(job_dir);
    let lock = lock_info(job_dir);
    let info = read_json(&paths.partitioning_info());
    let mapping = read_json(&paths.metadata.join("dataset_mapping.json"));
    let recipe = effective_recipe(job_dir);

    // Partitions: saved boundaries, else the dataset mapping, else the events.
    let mut parts: BTreeMap<usize, PartitionProgress> = BTreeMap::new();
    let saved = info
        .as_ref()
        .and_then(|i| i["partitions"].as_array().cloned())
        .or_else(|| {
            mapping
                .as_ref()
                .and_then(|m| m["partitions"].as_array().cloned())
        })
        .unwrap_or_default();
    for (i, p) in saved.iter().enumerate() {
        let id = u64_of(&p["partition_id"]).map(|v| v as usize).unwrap_or(i);
        let mut pp = PartitionProgress::new(id);
        pp.start_row = u64_of(&p["start_row"]);
        pp.end_row = u64_of(&p["end_row"]);
        pp.sample_count = u64_of(&p["row_count"])
            .or_else(|| u64_of(&p["sample_count"]))
            .or_else(|| Some(pp.end_row? - pp.start_row?));
        parts.insert(id, pp);
    }
    let mut declared_total = info
        .as_ref()
        .and_then(|i| u64_of(&i["num_partitions"]))
        .map(|v| v as usize);

    let mut replay: BTreeMap<usize, Replay> = BTreeMap::new();
    let mut runs = 0usize;
    let mut start_time = None;
    let mut run_start_time = None;
    let mut run_end: Option<(f64, JobStatus, Option<String>)> = None;
    let mut completed_in_run: Vec<usize> = vec![];
    for e in &events {
        let kind = e["event_type"].as_str().unwrap_or_default();
        let ts = e["timestamp"].as_f64();
        let pid = u64_of(&e["partition_id"]).map(|v| v as usize);
        match kind {
            "job_start" => {
                runs += 1;
                start_time = start_time.or(ts);
                run_start_time = ts;
                run_end = None;
                completed_in_run.clear();
                if declared_total.is_none() {
                    declared_total = u64_of(&e["total_partitions"]).map(|v| v as usize);
                }
                // Partitions a previous run left processing wait for this run to restart them.
                for p in parts.values_mut() {
                    if p.status == PartitionStatus::Processing {
                        p.status = PartitionStatus::Pending;
                        p.current_op = None;
                    }
                }
                replay.clear();
                continue;
            }
            "job_complete" => {
                run_end = Some((ts.unwrap_or(now), JobStatus::Completed, None));
                continue;
            }
            "job_failed" => {
                let status = if e["status"] == "stopped" {
                    JobStatus::Stopped
                } else {
                    JobStatus::Failed
                };
                let msg = str_of(&e["error_message"]).or_else(|| str_of(&e["message"]));
                run_end = Some((ts.unwrap_or(now), status, msg));
                continue;
            }
            _ => {}
        }
        let Some(pid) = pid else { continue };
        let p = parts
            .entry(pid)
            .or_insert_with(|| PartitionProgress::new(pid));
        let r = replay.entry(pid).or_default();
        match kind {
            "partition_start" => {
                p.status = PartitionStatus::Processing;
                p.start_time = ts;
                p.end_time = None;
                p.duration_seconds = None;
                p.error_message = None;
                p.failed_op = None;
                r.started.clear();
                r.checkpointed = None;
            }
            "op_start" => {
                if let Some(op) = op_of(e) {
                    r.started.insert(op.idx, op.name);
                }
            }
            "op_complete" => {
                if let Some(op) = op_of(e) {
                    r.started.remove(&op.idx);
                    let duration = e["duration"].as_f64();
                    let input_rows = u64_of(&e["input_rows"]);
                    let output_rows = u64_of(&e["output_rows"]);
                    let done = OpProgress {
                        idx: op.idx,
                        name: op.name,
                        duration_seconds: duration,
                        input_rows,
                        output_rows,
                        throughput_rows_per_second: match (input_rows, duration) {
                            (Some(i), Some(d)) if d > 0.0 => Some(i as f64 / d),
                            _ => None,
                        },
                        reduction_ratio: match (input_rows, output_rows) {
                            (Some(i), Some(o)) if i > 0 => Some((i as f64 - o as f64) / i as f64),
                            _ => None,
                        },
                        completed_at: ts,
                    };
                    p.completed_ops.retain(|o| o.idx != done.idx);
                    p.completed_ops.push(done);
                    p.completed_ops.sort_by_key(|o| o.idx);
                }
            }
            "op_failed" => {
                if let Some(op) = op_of(e) {
                    r.started.remove(&op.idx);
                    p.failed_op.get_or_insert(op);
                }
                p.error_message = str_of(&e["error_message"]).or(p.error_message.take());
            }
            "checkpoint_save" => {
                if let Some(op) = op_of(e) {
                    let recorded = str_of(&e["checkpoint_path"])
                        .or_else(|| str_of(&e["metadata"]["checkpoint_path"]))
                        .map(PathBuf::from)
                        .unwrap_or_default();
                    // The recorded path may be relative to the run's directory: look in ours.
                    let path = recorded
                        .file_name()
                        .filter(|n| n.to_str().and_then(parse_checkpoint_file_name).is_some())
                        .map(|n| paths.checkpoints.join(n))
                        .unwrap_or(recorded);
                    r.checkpointed = r.checkpointed.max(Some(op.idx));
                    p.checkpoints.retain(|c| c.operation_idx != op.idx);
                    p.checkpoints.push(CheckpointInfo {
                        operation_idx: op.idx,
                        operation_name: Some(op.name),
                        exists: path.is_file(),
                        path,
                        rows: u64_of(&e["output_rows"]).or_else(|| u64_of(&e["metadata"]["rows"])),
                        saved_at: ts,
                    });
                }
            }
            "checkpoint_load" => p.resumed_from_op = op_of(e),
            "checkpoint_invalid" => p.moved_aside.push(MovedAside {
                operation_idx: u64_of(&e["operation_idx"]).map(|v| v as usize),
                path: str_of(&e["checkpoint_path"]).unwrap_or_default(),
                moved_to: str_of(&e["metadata"]["moved_to"]),
                reason: str_of(&e["error_message"]),
                at: ts,
            }),
            "partition_complete" => {
                p.status = PartitionStatus::Completed;
                p.end_time = ts;
                p.duration_seconds = e["duration"].as_f64().or_else(|| Some(ts? - p.start_time?));
                p.output_rows = u64_of(&e["output_rows"]).or_else(|| {
                    p.completed_ops
                        .iter()
                        .max_by_key(|o| o.idx)
                        .and_then(|o| o.output_rows)
                });
                r.started.clear();
                completed_in_run.push(pid);
            }
            "partition_failed" => {
                p.status = PartitionStatus::Failed;
                p.end_time = ts;
                p.duration_seconds = e["duration"].as_f64();
                p.error_message = str_of(&e["error_message"]).or(p.error_message.take());
                r.started.clear();
            }
            _ => {}
        }
        // Ops stream, and their op_complete events come at the partition's end: the first op
        // started after the newest checkpoint of this attempt is where the partition is.
        p.current_op = r
            .started
            .iter()
            .find(|(idx, _)| r.checkpointed.is_none_or(|c| **idx > c))
            .map(|(idx, name)| OpRef {
                idx: *idx,
                name: name.clone(),
            });
    }

    // Checkpoint files on disk that no event recorded (an event file removed, say).
    if let Ok(dir) = std::fs::read_dir(&paths.checkpoints) {
        for entry in dir.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some((op, pid)) = parse_checkpoint_file_name(&name) else {
                continue;
            };
            let p = parts
                .entry(pid)
                .or_insert_with(|| PartitionProgress::new(pid));
            if !p.checkpoints.iter().any(|c| c.operation_idx == op) {
                p.checkpoints.push(CheckpointInfo {
                    operation_idx: op,
                    operation_name: None,
                    path: entry.path(),
                    rows: None,
                    saved_at: None,
                    exists: true,
                });
            }
        }
    }
    let ops: Vec<String> = recipe
        .as_ref()
        .and_then(|r| r["process"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|op| match op {
            Value::Object(m) => m.keys().next().cloned(),
            Value::String(s) => Some(s.clone()),
            _ => None,
        })
        .collect();
    for p in parts.values_mut() {
        p.checkpoints.sort_by_key(|c| c.operation_idx);
        for c in &mut p.checkpoints {
            if c.operation_name.is_none() {
                c.operation_name = ops.get(c.operation_idx).cloned();
            }
        }
    }
    if let Some(n) = declared_total {
        for id in 0..n {
            parts
                .entry(id)
                .or_insert_with(|| PartitionProgress::new(id));
        }
    }

    // The job's status: a live lock means running; otherwise the latest run's end.
    let status = if lock.present && !lock.stale {
        JobStatus::Running
    } else {
        match &run_end {
            Some((_, s, _)) => *s,
            None if events.is_empty() => {
                match summary.as_ref().and_then(|s| s["status"].as_str()) {
                    Some("completed") => JobStatus::Completed,
                    _ => JobStatus::Unknown,
                }
            }
            None => JobStatus::Dead,
        }
    };
    if status != JobStatus::Running {
        for p in parts.values_mut() {
            if p.status == PartitionStatus::Processing {
                p.status = PartitionStatus::Interrupted;
            }
        }
    }
    let partitions: Vec<PartitionProgress> = parts.into_values().collect();

    let run_end_time = run_end.as_ref().map(|(t, _, _)| *t);
    let last_ts = events.iter().rev().find_map(|e| e["timestamp"].as_f64());
    let elapsed = run_start_time.and_then(|start| {
        let end = if status == JobStatus::Running {
            now
        } else {
            run_end_time.or(last_ts)?
        };
        Some((end - start).max(0.0))
    });
    let count = |s: PartitionStatus| partitions.iter().filter(|p| p.status == s).count();
    let total = partitions.len();
    let completed = count(PartitionStatus::Completed);
    let samples = |p: &PartitionProgress| p.sample_count.unwrap_or(0);
    let processed: u64 = partitions
        .iter()
        .filter(|p| p.status == PartitionStatus::Completed)
        .map(samples)
        .sum();
    let processed_in_run: u64 = partitions
        .iter()
        .filter(|p| {
            p.status == PartitionStatus::Completed && completed_in_run.contains(&p.partition_id)
        })
        .map(samples)
        .sum();
    let total_samples = info
        .as_ref()
        .and_then(|i| u64_of(&i["total_rows"]))
        .or_else(|| {
            mapping
                .as_ref()
                .and_then(|m| u64_of(&m["original_dataset_size"]))
        });
    let distinct_completed_in_run = {
        let mut v = completed_in_run.clone();
        v.sort_unstable();
        v.dedup();
        v.len()
    };
    let eta = match status {
        JobStatus::Completed => Some(0.0),
        JobStatus::Running if distinct_completed_in_run > 0 => elapsed
            .map(|e| e / distinct_completed_in_run as f64 * total.saturating_sub(completed) as f64),
        _ => None,
    };
    let checkpoints: usize = partitions.iter().map(|p| p.checkpoints.len()).sum();
    let on_disk: usize = partitions
        .iter()
        .map(|p| p.checkpoints.iter().filter(|c| c.exists).count())
        .sum();
    let overall = OverallProgress {
        total_partitions: total,
        completed_partitions: completed,
        processing_partitions: count(PartitionStatus::Processing),
        pending_partitions: count(PartitionStatus::Pending),
        failed_partitions: count(PartitionStatus::Failed),
        interrupted_partitions: count(PartitionStatus::Interrupted),
        progress_percentage: if total == 0 {
            0.0
        } else {
            completed as f64 / total as f64 * 100.0
        },
        total_samples: total_samples.unwrap_or_else(|| partitions.iter().map(samples).sum()),
        processed_samples: processed,
        output_rows: partitions
            .iter()
            .filter(|p| p.status == PartitionStatus::Completed)
            .filter_map(|p| p.output_rows)
            .sum(),
        throughput_rows_per_second: elapsed
            .filter(|e| *e > 0.0)
            .map(|e| processed_in_run as f64 / e),
        estimated_remaining_seconds: eta,
        checkpoints,
        checkpoints_on_disk: on_disk,
    };
    let text = |v: Option<&Value>, key: &str| v.and_then(|v| str_of(&v[key]));
    Ok(JobProgress {
        job_id,
        job_dir: job_dir.to_path_buf(),
        status,
        pid: lock.pid.filter(|_| status == JobStatus::Running),
        lock,
        dataset_path: text(info.as_ref(), "dataset_path")
            .or_else(|| text(recipe.as_ref(), "dataset_path"))
            .or_else(|| text(mapping.as_ref(), "original_dataset_path")),
        export_path: text(recipe.as_ref(), "export_path"),
        total_samples,
        partition_size: mapping.as_ref().and_then(|m| u64_of(&m["partition_size"])),
        ops,
        runs,
        start_time,
        run_start_time,
        end_time: run_end_time.filter(|_| status != JobStatus::Running),
        elapsed_seconds: elapsed,
        last_event: events.last().map(|e| LastEvent {
            event_type: str_of(&e["event_type"]).unwrap_or_default(),
            timestamp: e["timestamp"].as_f64(),
        }),
        events: events.len(),
        error_message: run_end.and_then(|(_, _, m)| m),
        overall,
        partitions,
        summary,
    })
}

// ---------------------------------------------------------------------------------------------
// Listing

/// One job directory of a work directory.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobListing {
    pub job_id: String,
    pub job_dir: PathBuf,
    pub status: JobStatus,
    /// The first run's start (epoch seconds).
    pub start_time: Option<f64>,
    pub last_event_time: Option<f64>,
    /// The live process running the job.
    pub pid: Option<i32>,
    /// A lock naming a dead process (harmless: the next run takes it over).
    pub stale_lock: bool,
    pub completed_partitions: usize,
    pub total_partitions: usize,
    pub progress_percentage: f64,
}

/// Every job directory under `work_dir`, newest first (by first start time, then id).
pub fn list_jobs(work_dir: &Path) -> Result<Vec<JobListing>> {
    if !work_dir.is_dir() {
        bail!("work directory not found: {}", work_dir.display());
    }
    let mut jobs = Vec::new();
    for entry in std::fs::read_dir(work_dir)
        .with_context(|| format!("cannot read {}", work_dir.display()))?
    {
        let dir = entry?.path();
        if !is_job_dir(&dir) {
            continue;
        }
        let p = progress_at(&dir, epoch_now())?;
        jobs.push(JobListing {
            job_id: p.job_id,
            job_dir: p.job_dir,
            status: p.status,
            start_time: p.start_time,
            last_event_time: p.last_event.and_then(|e| e.timestamp),
            pid: p.pid,
            stale_lock: p.lock.present && p.lock.stale,
            completed_partitions: p.overall.completed_partitions,
            total_partitions: p.overall.total_partitions,
            progress_percentage: p.overall.progress_percentage,
        });
    }
    jobs.sort_by(|a, b| {
        b.start_time
            .unwrap_or(f64::NEG_INFINITY)
            .total_cmp(&a.start_time.unwrap_or(f64::NEG_INFINITY))
            .then_with(|| b.job_id.cmp(&a.job_id))
    });
    Ok(jobs)
}

// ---------------------------------------------------------------------------------------------
// Stopping

/// What [`stop_job`] did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StopResult {
    pub job_id: String,
    pub job_dir: PathBuf,
    /// The process the lock named.
    pub pid: i32,
    /// `SIGTERM` (graceful) or `SIGKILL` (force).
    pub signal: String,
    pub force: bool,
    /// The process is gone (or, graceful, has released the job) and the job is not running.
    pub success: bool,
    pub process_exited: bool,
    pub lock_released: bool,
    /// The lock was left by the killed process and removed here.
    pub stale_lock_removed: bool,
    /// The event log records the stop (`job_failed` with status `stopped`: written by the run on
    /// SIGTERM, by this tool after SIGKILL).
    pub stop_event_logged: bool,
    /// The job's status afterwards.
    pub status: JobStatus,
    /// `--resume` can continue the job (it did not complete and has saved partitioning).
    pub resumable: bool,
    pub waited_seconds: f64,
    pub message: String,
    pub resume_command: Option<String>,
}

/// How long a graceful stop waits for a process that has released its job to exit.
const RELEASE_GRACE: Duration = Duration::from_secs(5);

/// Stops the running job in `job_dir`. Graceful: SIGTERM to the process in `.lock`, then waits
/// (up to `timeout`) until the process is gone and the job resumable, and reports; it does not
/// escalate (see `force`). Force: SIGKILL at once, waits for the process to go, removes the
/// stale lock and logs `job_failed` (status `stopped`). A job that is not running is an error.
pub fn stop_job(job_dir: &Path, force: bool, timeout: Duration) -> Result<StopResult> {
    require_dir(job_dir)?;
    let job_id = job_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let lock = lock_info(job_dir);
    let pid = match (lock.present, lock.pid, lock.stale) {
        (false, _, _) => {
            let status = progress_at(job_dir, epoch_now())
                .map(|p| p.status)
                .unwrap_or(JobStatus::Unknown);
            bail!("job {job_id} is not running (no lock file; status: {status}); nothing to stop");
        }
        (true, Some(pid), false) => pid,
        (true, pid, _) => {
            let status = progress_at(job_dir, epoch_now())
                .map(|p| p.status)
                .unwrap_or(JobStatus::Unknown);
            let who = pid.map_or("an unreadable pid".to_string(), |p| format!("process {p}"));
            bail!(
                "job {job_id} is not running: its lock names {who}, which is gone (a stale lock; \
                 status: {status}); nothing to stop"
            );
        }
    };
    if pid == std::process::id() as i32 {
        bail!("job {job_id} is run by this process ({pid}); refusing to signal myself");
    }
    let (signal, signo) = if force {
        ("SIGKILL", libc::SIGKILL)
    } else {
        ("SIGTERM", libc::SIGTERM)
    };
    let signalled_at = epoch_now();
    // SAFETY: sending a signal to the pid the job's lock names (checked live just above).
    if unsafe { libc::kill(pid, signo) } != 0 {
        let err = std::io::Error::last_os_error();
        bail!("cannot send {signal} to process {pid} of job {job_id}: {err}");
    }
    let t0 = Instant::now();
    let lock_released = || crate::job::lock_pid(job_dir) != Some(pid);
    let stop_logged = || {
        let events = load_events(job_dir);
        let run_start = events.iter().rposition(|e| e["event_type"] == "job_start");
        events[run_start.unwrap_or(0)..]
            .iter()
            .any(|e| e["event_type"] == "job_failed" && e["status"] == "stopped")
    };
    let mut exited;
    let mut released_at: Option<Instant> = None;
    loop {
        exited = !process_alive(pid);
        if exited || t0.elapsed() >= timeout {
            break;
        }
        // Graceful: the run logs the stop and releases its lock, then exits. A process that
        // lives on after releasing the job (a job run inside a longer-lived program) is given
        // a grace period, then the stop is reported as done.
        if !force && lock_released() && stop_logged() {
            let at = *released_at.get_or_insert_with(Instant::now);
            if at.elapsed() >= RELEASE_GRACE {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    let mut stale_lock_removed = false;
    if exited && !lock_released() {
        std::fs::remove_file(job_dir.join(".lock"))
            .with_context(|| format!("cannot remove the stale lock of job {job_id}"))?;
        stale_lock_removed = true;
    }
    if force && exited && !stop_logged() {
        log_forced_stop(job_dir, &job_id, pid, signalled_at)?;
    }
    let waited = t0.elapsed().as_secs_f64();
    let progress = progress_at(job_dir, epoch_now())?;
    let released = lock_released();
    let success = (exited || released) && progress.status != JobStatus::Running;
    let resumable = success
        && progress.status != JobStatus::Completed
        && JobPaths::new(job_dir.to_path_buf())
            .partitioning_info()
            .is_file();
    let resume_command = resumable.then(|| resume_command(job_dir, &job_id));
    let message = if success {
        let how = if force { "killed" } else { "stopped" };
        let mut m = format!(
            "Job {job_id}: sent {signal} to process {pid}; it {how} after {waited:.1}s. Status: {}.",
            progress.status
        );
        if let Some(cmd) = &resume_command {
            m.push_str(&format!(" Resume it with: {cmd}"));
        } else if progress.status == JobStatus::Completed {
            m.push_str(" (It completed before the signal took effect.)");
        }
        m
    } else {
        format!(
            "Job {job_id}: process {pid} is still running {waited:.1}s after {signal}. \
             Wait longer (--timeout) or kill it with `dj-job stop {job_id} --force`."
        )
    };
    Ok(StopResult {
        job_id,
        job_dir: job_dir.to_path_buf(),
        pid,
        signal: signal.into(),
        force,
        success,
        process_exited: exited,
        lock_released: released,
        stale_lock_removed,
        stop_event_logged: stop_logged(),
        status: progress.status,
        resumable,
        waited_seconds: waited,
        message,
        resume_command,
    })
}

/// After SIGKILL nothing logged the end of the run: record it as the run itself would on SIGTERM.
fn log_forced_stop(job_dir: &Path, job_id: &str, pid: i32, at: f64) -> Result<()> {
    let path = event_files(job_dir).pop().unwrap_or_else(|| {
        job_dir.join(format!(
            "events_{}.jsonl",
            chrono::Utc::now().format("%Y%m%d_%H%M%S")
        ))
    });
    let err = format!(
        "killed by SIGKILL (dj-job stop --force) at process {pid}; the job is resumable with --resume {job_id}"
    );
    let mut e = crate::events::Event::new("job_failed", format!("Job failed: {err}")).meta(
        json!({"stopped_by": "dj-job stop --force", "signal": "SIGKILL", "killed_pid": pid, "signalled_at": at}),
    );
    e.status = Some("stopped");
    e.error_message = Some(err);
    crate::events::EventLog::append_to(&path, job_id)?.log_last_durably(e)
}

/// The command that resumes the job: the recipe copy's name and the saved overrides.
pub fn resume_command(job_dir: &Path, job_id: &str) -> String {
    let recipe = recipe_copy(job_dir)
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "RECIPE.yaml".into());
    let mut cmd = format!("dj-run --config {recipe}");
    for (k, v) in cli_overrides(job_dir) {
        cmd.push_str(&format!(" --{k} {v}"));
    }
    cmd.push_str(&format!(" --resume {job_id}"));
    cmd
}

// ---------------------------------------------------------------------------------------------
// Reports

fn local_time(epoch: Option<f64>) -> String {
    epoch
        .and_then(|t| chrono::DateTime::from_timestamp_millis((t * 1000.0) as i64))
        .map(|d| {
            d.with_timezone(&chrono::Local)
                .format("%Y-%m-%d %H:%M:%S")
                .to_string()
        })
        .unwrap_or_else(|| "-".into())
}

/// `0.25s`, `12.3s`, `4m 05s`, `2h 03m`.
pub fn human_duration(secs: f64) -> String {
    if secs < 10.0 {
        format!("{secs:.2}s")
    } else if secs < 60.0 {
        format!("{secs:.1}s")
    } else if secs < 3600.0 {
        format!("{}m {:02}s", (secs / 60.0) as u64, secs as u64 % 60)
    } else {
        format!(
            "{}h {:02}m",
            (secs / 3600.0) as u64,
            (secs as u64 / 60) % 60
        )
    }
}

fn opt_num(v: Option<u64>) -> String {
    v.map_or("-".into(), |v| v.to_string())
}

/// The monitor's report.
pub fn render_progress(p: &JobProgress, detailed: bool, work_dir: &Path) -> String {
    let mut s = String::new();
    let rule = "=".repeat(72);
    let sub = "-".repeat(72);
    s.push_str(&format!(
        "{rule}\nDataJuicer Job Progress Monitor\nJob ID: {}\n{rule}\n",
        p.job_id
    ));
    s.push_str("\n📊 JOB OVERVIEW\n");
    s.push_str(&format!(
        "  Status:          {} {}\n",
        p.status.icon(),
        p.status.as_str().to_uppercase()
    ));
    s.push_str(&format!("  Job directory:   {}\n", p.job_dir.display()));
    match (p.pid, &p.lock) {
        (Some(pid), _) => s.push_str(&format!("  Process:         {pid}\n")),
        (None, l) if l.present => s.push_str(&format!(
            "  Lock:            stale (process {} is gone)\n",
            opt_num(l.pid.map(|p| p as u64))
        )),
        _ => {}
    }
    if let Some(d) = &p.dataset_path {
        s.push_str(&format!("  Dataset:         {d}\n"));
    }
    s.push_str(&format!(
        "  Total samples:   {}\n",
        opt_num(p.total_samples)
    ));
    if let Some(ps) = p.partition_size {
        s.push_str(&format!("  Partition size:  {ps}\n"));
    }
    if !p.ops.is_empty() {
        s.push_str(&format!("  Operations:      {}\n", p.ops.len()));
    }
    s.push_str(&format!(
        "  Start time:      {}\n",
        local_time(p.start_time)
    ));
    if p.runs > 1 {
        s.push_str(&format!(
            "  Runs:            {} (latest started {})\n",
            p.runs,
            local_time(p.run_start_time)
        ));
    }
    if let Some(e) = p.elapsed_seconds {
        let label = if p.status == JobStatus::Running {
            "Elapsed:"
        } else {
            "Duration:"
        };
        s.push_str(&format!("  {label:<17}{}\n", human_duration(e)));
    }
    if let Some(e) = &p.last_event {
        s.push_str(&format!(
            "  Last event:      {} at {}\n",
            e.event_type,
            local_time(e.timestamp)
        ));
    }
    if let Some(err) = &p.error_message {
        s.push_str(&format!("  Error:           {err}\n"));
    }

    let o = &p.overall;
    s.push_str("\n🎯 OVERALL PROGRESS\n");
    s.push_str(&format!(
        "  Progress:        {:.1}% ({}/{} partitions)\n",
        o.progress_percentage, o.completed_partitions, o.total_partitions
    ));
    s.push_str(&format!(
        "  Partitions:      {} completed, {} processing, {} pending, {} failed, {} interrupted\n",
        o.completed_partitions,
        o.processing_partitions,
        o.pending_partitions,
        o.failed_partitions,
        o.interrupted_partitions
    ));
    s.push_str(&format!(
        "  Samples:         {}/{} processed, {} rows out\n",
        o.processed_samples, o.total_samples, o.output_rows
    ));
    if let Some(t) = o.throughput_rows_per_second {
        s.push_str(&format!("  Throughput:      {t:.1} rows/s\n"));
    }
    match o.estimated_remaining_seconds {
        Some(eta) if p.status == JobStatus::Running => s.push_str(&format!(
            "  ETA:             {} ({:.1} min)\n",
            human_duration(eta),
            eta / 60.0
        )),
        None if p.status == JobStatus::Running => {
            s.push_str("  ETA:             unknown until a partition completes\n")
        }
        _ => {}
    }

    s.push_str("\n📦 PARTITION STATUS\n");
    for part in &p.partitions {
        let mut line = format!(
            "  {} Partition {:>4}: {:<11} samples {:>8}",
            part.status.icon(),
            part.partition_id,
            part.status.as_str(),
            opt_num(part.sample_count)
        );
        if let Some(out) = part.output_rows {
            line.push_str(&format!("  out {out:>8}"));
        }
        let total_ops = if p.ops.is_empty() {
            String::new()
        } else {
            format!("/{}", p.ops.len())
        };
        line.push_str(&format!(
            "  ops {}{total_ops}  checkpoints {}",
            part.completed_ops.len(),
            part.checkpoints.len()
        ));
        if let Some(op) = &part.current_op {
            line.push_str(&format!("  current: #{} {}", op.idx, op.name));
        }
        if let Some(op) = &part.resumed_from_op {
            line.push_str(&format!("  resumed after #{}", op.idx));
        }
        if let Some(d) = part.duration_seconds {
            line.push_str(&format!("  {}", human_duration(d)));
        }
        s.push_str(&line);
        s.push('\n');
        if let Some(err) = &part.error_message {
            s.push_str(&format!("       error: {err}\n"));
        }
    }

    if detailed {
        s.push_str("\n🔧 OPERATION DETAILS\n");
        for part in &p.partitions {
            if part.completed_ops.is_empty() {
                continue;
            }
            s.push_str(&format!("  Partition {}:\n", part.partition_id));
            let w = part
                .completed_ops
                .iter()
                .map(|o| o.name.len())
                .max()
                .unwrap_or(0);
            for op in &part.completed_ops {
                s.push_str(&format!(
                    "    #{:<2} {:<w$}  {:>9}  {:>12}  {:>8} → {:<8}  reduction {}\n",
                    op.idx,
                    op.name,
                    op.duration_seconds
                        .map_or("-".into(), |d| format!("{d:.3}s")),
                    op.throughput_rows_per_second
                        .map_or("-".into(), |t| format!("{t:.1} rows/s")),
                    opt_num(op.input_rows),
                    opt_num(op.output_rows),
                    op.reduction_ratio
                        .map_or("-".into(), |r| format!("{:.1}%", r * 100.0)),
                ));
            }
        }
        s.push_str("\n💾 CHECKPOINTS\n");
        for part in &p.partitions {
            for c in &part.checkpoints {
                s.push_str(&format!(
                    "  Partition {:>4}  after #{:<2} {:<32} rows {:>8}  {}  {}{}\n",
                    part.partition_id,
                    c.operation_idx,
                    c.operation_name.as_deref().unwrap_or("?"),
                    opt_num(c.rows),
                    local_time(c.saved_at),
                    c.path
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    if c.exists { "" } else { " (removed)" }
                ));
            }
        }
    }
    let moved: Vec<(usize, &MovedAside)> = p
        .partitions
        .iter()
        .flat_map(|part| part.moved_aside.iter().map(|m| (part.partition_id, m)))
        .collect();
    if detailed && !moved.is_empty() {
        s.push_str("\n⚠️  MOVED ASIDE (failed verification on resume)\n");
        for (pid, m) in &moved {
            s.push_str(&format!(
                "  Partition {pid:>4}  after #{:<2} {}  {}\n       {} -> {}\n",
                m.operation_idx.map_or("?".into(), |i| i.to_string()),
                local_time(m.at),
                m.reason.as_deref().unwrap_or("?"),
                m.path,
                m.moved_to.as_deref().unwrap_or("?"),
            ));
        }
    }
    s.push_str("\n💾 CHECKPOINT SUMMARY\n");
    s.push_str(&format!(
        "  {} checkpoints recorded, {} on disk\n",
        o.checkpoints, o.checkpoints_on_disk
    ));
    if !moved.is_empty() {
        s.push_str(&format!(
            "  {} saved file(s) failed verification and were moved aside{}\n",
            moved.len(),
            if detailed {
                ""
            } else {
                " (--detailed lists them)"
            }
        ));
    }
    let latest: BTreeMap<usize, usize> = p
        .partitions
        .iter()
        .filter_map(|part| {
            part.checkpoints
                .iter()
                .filter(|c| c.exists)
                .map(|c| c.operation_idx)
                .max()
                .map(|op| (part.partition_id, op))
        })
        .collect();
    if !latest.is_empty() {
        let list: Vec<String> = latest.iter().map(|(p, op)| format!("{p}:#{op}")).collect();
        s.push_str(&format!(
            "  newest per partition (partition:op): {}\n",
            list.join(" ")
        ));
    }
    s.push_str(&format!("\n{sub}\n"));
    let wd = work_dir.display();
    match p.status {
        JobStatus::Running => s.push_str(&format!(
            "To stop this job: dj-job --work_dir {wd} stop {}\n",
            p.job_id
        )),
        JobStatus::Completed => {}
        _ if JobPaths::new(p.job_dir.clone())
            .partitioning_info()
            .is_file() =>
        {
            s.push_str(&format!(
                "To resume this job (from the directory it was started in, with its recipe file): {}\n",
                resume_command(&p.job_dir, &p.job_id)
            ))
        }
        _ => {}
    }
    s
}

/// The list's report.
pub fn render_list(jobs: &[JobListing], work_dir: &Path) -> String {
    if jobs.is_empty() {
        return format!("No jobs in {}\n", work_dir.display());
    }
    let mut s = format!("📋 DataJuicer Jobs ({}):\n", work_dir.display());
    let w = jobs.iter().map(|j| j.job_id.len()).max().unwrap_or(0);
    for j in jobs {
        let mut line = format!(
            "{} {:<w$} | Status: {:<9} | Partitions: {}/{} ({:.0}%) | Started: {}",
            j.status.icon(),
            j.job_id,
            j.status.as_str(),
            j.completed_partitions,
            j.total_partitions,
            j.progress_percentage,
            local_time(j.start_time)
        );
        if let Some(pid) = j.pid {
            line.push_str(&format!(" | PID: {pid}"));
        }
        if j.stale_lock {
            line.push_str(" | stale lock");
        }
        s.push_str(&line);
        s.push('\n');
    }
    s
}

// ---------------------------------------------------------------------------------------------
// dj-job

/// Monitor, stop and list the partitioned executor's jobs.
#[derive(Debug, Parser)]
#[command(name = "dj-job", version)]
pub struct JobFlags {
    /// The directory holding the job directories (the recipe's work_dir, e.g.
    /// outputs/partitioned/jobs).
    #[arg(
        long = "work_dir",
        alias = "work-dir",
        global = true,
        default_value = "."
    )]
    pub work_dir: PathBuf,
    /// Print the result as JSON.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: JobCommand,
}

#[derive(Debug, Subcommand)]
pub enum JobCommand {
    /// Show a job's progress: overview, overall progress, per-partition status.
    Monitor {
        job_id: String,
        /// Add per-op durations, throughput and reduction, and every checkpoint.
        #[arg(long)]
        detailed: bool,
        /// Redraw every --interval seconds until Ctrl+C or the job ends.
        #[arg(long)]
        watch: bool,
        /// Seconds between redraws with --watch.
        #[arg(long, default_value_t = 10.0)]
        interval: f64,
    },
    /// Stop a running job: SIGTERM (it logs the stop, releases its lock and stays resumable),
    /// or SIGKILL with --force.
    Stop {
        job_id: String,
        /// Kill at once (SIGKILL) instead of a graceful stop.
        #[arg(long)]
        force: bool,
        /// Seconds to wait for the process to exit.
        #[arg(long, default_value_t = 30.0)]
        timeout: f64,
    },
    /// List the jobs under --work_dir.
    List,
}

fn job_path(work_dir: &Path, job_id: &str) -> Result<PathBuf> {
    crate::job::validate_job_id(job_id)?;
    let dir = work_dir.join(job_id);
    if !dir.is_dir() {
        bail!(
            "Job directory not found: {} (--work_dir is the directory holding job directories)",
            dir.display()
        );
    }
    Ok(dir)
}

fn print_json<T: Serialize>(v: &T, pretty: bool) -> Result<()> {
    let text = if pretty {
        serde_json::to_string_pretty(v)?
    } else {
        serde_json::to_string(v)?
    };
    println!("{text}");
    Ok(())
}

/// `dj-job`.
pub fn job_main() -> ExitCode {
    let flags = JobFlags::parse();
    match job_cmd(&flags) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Runs one `dj-job` command; `Ok(false)` when it ran but did not succeed (a stop that timed out).
fn job_cmd(flags: &JobFlags) -> Result<bool> {
    match &flags.command {
        JobCommand::List => {
            let jobs = list_jobs(&flags.work_dir)?;
            if flags.json {
                print_json(&jobs, true)?;
            } else {
                print!("{}", render_list(&jobs, &flags.work_dir));
            }
            Ok(true)
        }
        JobCommand::Stop {
            job_id,
            force,
            timeout,
        } => {
            if !timeout.is_finite() || *timeout < 0.0 {
                bail!("--timeout must be a number of seconds >= 0, got {timeout}");
            }
            let dir = job_path(&flags.work_dir, job_id)?;
            let r = stop_job(&dir, *force, Duration::from_secs_f64(*timeout))?;
            if flags.json {
                print_json(&r, true)?;
            } else if r.success {
                println!("{}", r.message);
            } else {
                eprintln!("error: {}", r.message);
            }
            Ok(r.success)
        }
        JobCommand::Monitor {
            job_id,
            detailed,
            watch,
            interval,
        } => {
            let dir = job_path(&flags.work_dir, job_id)?;
            if !watch {
                let p = job_progress(&dir)?;
                if flags.json {
                    print_json(&p, true)?;
                } else {
                    print!("{}", render_progress(&p, *detailed, &flags.work_dir));
                }
                return Ok(true);
            }
            if !interval.is_finite() || *interval <= 0.0 {
                bail!("--interval must be a positive number of seconds, got {interval}");
            }
            watch_progress(&dir, flags, *detailed, Duration::from_secs_f64(*interval))?;
            Ok(true)
        }
    }
}

/// `monitor --watch`: redraw until Ctrl+C or the job is no longer running.
fn watch_progress(dir: &Path, flags: &JobFlags, detailed: bool, interval: Duration) -> Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let tty = std::io::stdout().is_terminal();
    rt.block_on(async {
        let ctrl_c = tokio::signal::ctrl_c();
        tokio::pin!(ctrl_c);
        loop {
            let p = job_progress(dir)?;
            if flags.json {
                // One JSON object a line, a snapshot each interval.
                print_json(&p, false)?;
            } else {
                if tty {
                    print!("\x1b[2J\x1b[H");
                }
                print!("{}", render_progress(&p, detailed, &flags.work_dir));
                if p.status == JobStatus::Running {
                    println!(
                        "Watching every {}s; Ctrl+C to stop watching.",
                        interval.as_secs_f64()
                    );
                }
            }
            std::io::stdout().flush()?;
            if p.status != JobStatus::Running {
                if !flags.json {
                    println!("Job {} is {}: stopped watching.", p.job_id, p.status);
                }
                return Ok(());
            }
            tokio::select! {
                _ = tokio::time::sleep(interval) => {}
                _ = &mut ctrl_c => {
                    if !flags.json {
                        println!("\nStopped watching.");
                    }
                    return Ok(());
                }
            }
        }
    })
}

// ---------------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::python_json;

    /// A hand-written job directory.
    struct Dir {
        tmp: tempfile::TempDir,
    }

    impl Dir {
        fn new() -> Dir {
            Dir {
                tmp: tempfile::tempdir().unwrap(),
            }
        }
        fn job(&self, id: &str) -> PathBuf {
            let d = self.tmp.path().join(id);
            std::fs::create_dir_all(d.join("checkpoints")).unwrap();
            d
        }
    }

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Two partitions of 6 and 4 rows, ops `m` (mapper) and `f` (filter).
    fn layout(dir: &Path) {
        write(
            &dir.join("checkpoints/partitioning_info.json"),
            r#"{"num_partitions": 2, "total_rows": 10, "dataset_path": "data/in.jsonl",
               "partitions": [{"partition_id": 0, "row_count": 6, "start_row": 0, "end_row": 6, "content_hash": "a"},
                              {"partition_id": 1, "row_count": 4, "start_row": 6, "end_row": 10, "content_hash": "b"}]}"#,
        );
        write(
            &dir.join("metadata/dataset_mapping.json"),
            r#"{"original_dataset_path": "data/in.jsonl", "original_dataset_size": 10, "partition_size": 6, "partitions": []}"#,
        );
        write(
            &dir.join("r.yaml"),
            "dataset_path: data/in.jsonl\nexport_path: out/x.jsonl\nprocess:\n  - m:\n  - f:\n      min_len: 3\n",
        );
        write(&dir.join("cli.yaml"), "arguments:\n- --np\n- '2'\n");
    }

    fn ev(kind: &str, t: f64, extra: Value) -> String {
        let mut v = json!({"event_type": kind, "timestamp": t, "message": "", "job_id": "j"});
        if let (Some(m), Value::Object(x)) = (v.as_object_mut(), extra) {
            m.extend(x);
        }
        python_json(&v) + "\n"
    }

    /// Partition `p` runs both ops: `m` 100.0→ +2s (rows in→in), `f` in→out; checkpoint after f.
    fn partition_run(p: usize, t: f64, rows_in: u64, rows_out: u64) -> String {
        let mut s = String::new();
        s += &ev("partition_start", t, json!({"partition_id": p}));
        for (i, n) in [(0, "m"), (1, "f")] {
            s += &ev(
                "op_start",
                t,
                json!({"partition_id": p, "operation_idx": i, "operation_name": n}),
            );
        }
        s += &ev(
            "op_complete",
            t + 2.0,
            json!({"partition_id": p, "operation_idx": 0, "operation_name": "m", "duration": 1.0, "input_rows": rows_in, "output_rows": rows_in, "status": "success"}),
        );
        s += &ev(
            "op_complete",
            t + 2.0,
            json!({"partition_id": p, "operation_idx": 1, "operation_name": "f", "duration": 1.0, "input_rows": rows_in, "output_rows": rows_out, "status": "success"}),
        );
        s += &ev(
            "checkpoint_save",
            t + 2.0,
            json!({"partition_id": p, "operation_idx": 1, "operation_name": "f", "output_rows": rows_out,
                   "checkpoint_path": format!("elsewhere/checkpoints/checkpoint_op_0001_partition_{p:04}.parquet")}),
        );
        s += &ev(
            "partition_complete",
            t + 2.0,
            json!({"partition_id": p, "output_rows": rows_out, "duration": 2.0}),
        );
        s
    }

    fn completed_job(dir: &Path) {
        layout(dir);
        let mut s = ev("job_start", 1000.0, json!({"total_partitions": 2}));
        s += &partition_run(0, 1000.0, 6, 3);
        s += &partition_run(1, 1002.0, 4, 4);
        s += &ev("job_complete", 1005.0, json!({"status": "completed"}));
        write(&dir.join("events_20260101_000000.jsonl"), &s);
        write(
            &dir.join("checkpoints/checkpoint_op_0001_partition_0000.parquet"),
            "x",
        );
        write(
            &dir.join("checkpoints/checkpoint_op_0001_partition_0001.parquet"),
            "x",
        );
    }

    #[test]
    fn progress_of_a_completed_job() {
        let d = Dir::new();
        let job = d.job("done");
        completed_job(&job);
        let p = job_progress(&job).unwrap();
        assert_eq!(p.status, JobStatus::Completed);
        assert_eq!(p.job_id, "done");
        assert_eq!(p.ops, ["m", "f"]);
        assert_eq!(p.runs, 1);
        assert_eq!(p.elapsed_seconds, Some(5.0));
        assert_eq!(p.pid, None);
        assert!(!p.lock.present);
        let o = &p.overall;
        assert_eq!(
            (
                o.total_partitions,
                o.completed_partitions,
                o.pending_partitions
            ),
            (2, 2, 0)
        );
        assert_eq!(o.progress_percentage, 100.0);
        assert_eq!(
            (o.total_samples, o.processed_samples, o.output_rows),
            (10, 10, 7)
        );
        assert_eq!(o.throughput_rows_per_second, Some(2.0)); // 10 rows in 5 s
        assert_eq!(o.estimated_remaining_seconds, Some(0.0));
        assert_eq!((o.checkpoints, o.checkpoints_on_disk), (2, 2));
        let p0 = &p.partitions[0];
        assert_eq!(p0.status, PartitionStatus::Completed);
        assert_eq!(p0.sample_count, Some(6));
        assert_eq!(p0.output_rows, Some(3));
        assert_eq!(p0.duration_seconds, Some(2.0));
        assert_eq!(p0.current_op, None);
        assert_eq!(p0.completed_ops.len(), 2);
        let f = &p0.completed_ops[1];
        assert_eq!((f.idx, f.name.as_str()), (1, "f"));
        assert_eq!(f.throughput_rows_per_second, Some(6.0));
        assert_eq!(f.reduction_ratio, Some(0.5));
        assert_eq!(p.partitions[1].completed_ops[1].reduction_ratio, Some(0.0));
        let c = &p0.checkpoints[0];
        assert_eq!(c.rows, Some(3));
        assert!(c.exists);
        assert_eq!(
            c.path,
            job.join("checkpoints/checkpoint_op_0001_partition_0000.parquet")
        );
        let text = render_progress(&p, true, d.tmp.path());
        for want in [
            "COMPLETED",
            "100.0% (2/2 partitions)",
            "10/10 processed, 7 rows out",
            "OPERATION DETAILS",
            "reduction 50.0%",
            "6.0 rows/s",
        ] {
            assert!(text.contains(want), "{want:?} not in\n{text}");
        }
    }

    #[test]
    fn progress_of_a_running_job_with_eta() {
        let d = Dir::new();
        let job = d.job("run");
        layout(&job);
        let now = epoch_now();
        let t = now - 10.0;
        let mut s = ev("job_start", t, json!({}));
        s += &partition_run(0, t, 6, 3);
        s += &ev("partition_start", t + 3.0, json!({"partition_id": 1}));
        for (i, n) in [(0, "m"), (1, "f")] {
            s += &ev(
                "op_start",
                t + 3.0,
                json!({"partition_id": 1, "operation_idx": i, "operation_name": n}),
            );
        }
        write(&job.join("events_20260101_000000.jsonl"), &s);
        // This test process holds the lock: the job is running.
        write(&job.join(".lock"), &std::process::id().to_string());
        let p = progress_at(&job, now).unwrap();
        assert_eq!(p.status, JobStatus::Running);
        assert_eq!(p.pid, Some(std::process::id() as i32));
        let o = &p.overall;
        assert_eq!((o.completed_partitions, o.processing_partitions), (1, 1));
        assert_eq!(o.progress_percentage, 50.0);
        assert_eq!(o.processed_samples, 6);
        let elapsed = p.elapsed_seconds.unwrap();
        assert!((elapsed - 10.0).abs() < 1e-6, "{elapsed}");
        // 10 s for one partition, one left.
        assert!((o.estimated_remaining_seconds.unwrap() - 10.0).abs() < 1e-6);
        assert!((o.throughput_rows_per_second.unwrap() - 0.6).abs() < 1e-6); // elapsed is 10 s up to float rounding of the timestamps
        let p1 = &p.partitions[1];
        assert_eq!(p1.status, PartitionStatus::Processing);
        assert_eq!(
            p1.current_op,
            Some(OpRef {
                idx: 0,
                name: "m".into()
            })
        );
        // The checkpoint event's file is not on disk.
        assert_eq!((o.checkpoints, o.checkpoints_on_disk), (1, 0));
        let text = render_progress(&p, false, d.tmp.path());
        assert!(text.contains("To stop this job"), "{text}");
        assert!(text.contains("ETA:             10.0"), "{text}"); // 10.0s, or 10.00s just under 10 s

        // Once op 0's checkpoint of partition 1 is durable, the partition is at op 1.
        s += &ev(
            "checkpoint_save",
            t + 4.0,
            json!({"partition_id": 1, "operation_idx": 0, "operation_name": "m", "output_rows": 4}),
        );
        write(&job.join("events_20260101_000000.jsonl"), &s);
        let p = progress_at(&job, now).unwrap();
        let p1 = &p.partitions[1];
        assert_eq!(p1.current_op.as_ref().map(|o| o.idx), Some(1));
        assert_eq!(p1.checkpoints[0].rows, Some(4));
        assert_eq!(p.overall.checkpoints, 2);
    }

    #[test]
    fn dead_stopped_and_failed_jobs() {
        let d = Dir::new();
        // Killed mid-run: a lock of a dead process, no job_complete/job_failed.
        let job = d.job("dead");
        layout(&job);
        let mut s = ev("job_start", 100.0, json!({}));
        s += &partition_run(0, 100.0, 6, 3);
        s += &ev("partition_start", 103.0, json!({"partition_id": 1}));
        s += "{\"event_type\": \"op_sta"; // torn by the kill
        write(&job.join("events_20260101_000000.jsonl"), &s);
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead_pid = child.id();
        child.wait().unwrap();
        write(&job.join(".lock"), &dead_pid.to_string());
        let p = job_progress(&job).unwrap();
        assert_eq!(p.status, JobStatus::Dead);
        assert!(p.lock.present && p.lock.stale);
        assert_eq!(p.lock.pid, Some(dead_pid as i32));
        assert_eq!(p.pid, None);
        assert_eq!(p.partitions[1].status, PartitionStatus::Interrupted);
        assert_eq!(p.overall.interrupted_partitions, 1);
        assert_eq!(p.overall.estimated_remaining_seconds, None);
        assert_eq!(p.elapsed_seconds, Some(3.0));
        let err = stop_job(&job, false, Duration::from_secs(1)).unwrap_err();
        assert!(
            format!("{err}").contains("job dead is not running: its lock names process"),
            "{err}"
        );

        // Stopped by SIGTERM, then resumed: the second run starts partition 1 again.
        let job = d.job("stopped");
        layout(&job);
        let mut s = ev("job_start", 100.0, json!({}));
        s += &partition_run(0, 100.0, 6, 3);
        s += &ev("partition_start", 103.0, json!({"partition_id": 1}));
        s += &ev(
            "job_failed",
            104.0,
            json!({"status": "stopped", "error_message": "interrupted by SIGTERM"}),
        );
        write(&job.join("events_20260101_000000.jsonl"), &s);
        let p = job_progress(&job).unwrap();
        assert_eq!(p.status, JobStatus::Stopped);
        assert_eq!(p.error_message.as_deref(), Some("interrupted by SIGTERM"));
        assert_eq!(p.partitions[1].status, PartitionStatus::Interrupted);
        assert!(
            render_progress(&p, false, d.tmp.path())
                .contains("dj-run --config r.yaml --np 2 --resume stopped")
        );
        let err = stop_job(&job, true, Duration::from_secs(1)).unwrap_err();
        assert!(
            format!("{err}").contains("job stopped is not running (no lock file; status: stopped)"),
            "{err}"
        );
        let mut s2 = ev(
            "checkpoint_load",
            200.0,
            json!({"partition_id": 0, "operation_idx": 1, "operation_name": "f"}),
        );
        s2 += &ev("job_start", 200.0, json!({}));
        write(&job.join("events_20260101_000500.jsonl"), &s2);
        let p = job_progress(&job).unwrap();
        assert_eq!(p.runs, 2);
        assert_eq!(p.start_time, Some(100.0));
        assert_eq!(p.run_start_time, Some(200.0));
        assert_eq!(p.status, JobStatus::Dead);
        assert_eq!(p.partitions[0].status, PartitionStatus::Completed);
        assert_eq!(p.partitions[0].resumed_from_op.as_ref().unwrap().idx, 1);
        assert_eq!(p.partitions[1].status, PartitionStatus::Pending);

        // A failed partition fails the job.
        let job = d.job("failed");
        layout(&job);
        let mut s = ev("job_start", 100.0, json!({}));
        s += &ev("partition_start", 100.0, json!({"partition_id": 0}));
        s += &ev(
            "op_failed",
            101.0,
            json!({"partition_id": 0, "operation_idx": 1, "operation_name": "f", "error_message": "disk full"}),
        );
        s += &ev(
            "partition_failed",
            101.0,
            json!({"partition_id": 0, "status": "failed", "error_message": "disk full"}),
        );
        s += &ev(
            "job_failed",
            101.5,
            json!({"status": "failed", "error_message": "partition 0 failed"}),
        );
        write(&job.join("events_20260101_000000.jsonl"), &s);
        let p = job_progress(&job).unwrap();
        assert_eq!(p.status, JobStatus::Failed);
        let p0 = &p.partitions[0];
        assert_eq!(p0.status, PartitionStatus::Failed);
        assert_eq!(p0.error_message.as_deref(), Some("disk full"));
        assert_eq!(p0.failed_op.as_ref().unwrap().name, "f");
        assert_eq!(p.partitions[1].status, PartitionStatus::Pending);
        assert_eq!(
            (
                p.overall.failed_partitions,
                p.overall.pending_partitions,
                p.overall.progress_percentage
            ),
            (1, 1, 0.0)
        );
    }

    #[test]
    fn summary_and_events_load() {
        let d = Dir::new();
        let job = d.job("done");
        assert_eq!(load_job_summary(&job).unwrap(), None);
        completed_job(&job);
        write(
            &job.join("job_summary.json"),
            r#"{"status": "completed", "rows_out": 7}"#,
        );
        assert_eq!(load_job_summary(&job).unwrap().unwrap()["rows_out"], 7);
        assert_eq!(load_event_logs(&job).unwrap().len(), 16);
        let err = load_event_logs(&d.tmp.path().join("nope")).unwrap_err();
        assert!(format!("{err}").starts_with("Job directory not found: "));
        assert!(job_progress(&d.tmp.path().join("nope")).is_err());
        std::fs::create_dir_all(d.tmp.path().join("plain")).unwrap();
        let err = job_progress(&d.tmp.path().join("plain")).unwrap_err();
        assert!(format!("{err}").contains("is not a job directory"), "{err}");
    }

    #[test]
    fn list_jobs_newest_first_with_locks() {
        let d = Dir::new();
        completed_job(&d.job("a_done"));
        let live = d.job("b_live");
        layout(&live);
        write(
            &live.join("events_20260101_000000.jsonl"),
            &ev("job_start", 2000.0, json!({})),
        );
        write(&live.join(".lock"), &std::process::id().to_string());
        let stale = d.job("c_stale");
        write(
            &stale.join("events_20260101_000000.jsonl"),
            &ev("job_start", 1500.0, json!({})),
        );
        write(&stale.join(".lock"), "999999999");
        std::fs::create_dir_all(d.tmp.path().join("not_a_job/x")).unwrap();
        write(&d.tmp.path().join("file.txt"), "x");
        let jobs = list_jobs(d.tmp.path()).unwrap();
        let ids: Vec<&str> = jobs.iter().map(|j| j.job_id.as_str()).collect();
        assert_eq!(ids, ["b_live", "c_stale", "a_done"]);
        assert_eq!(jobs[0].status, JobStatus::Running);
        assert_eq!(jobs[0].pid, Some(std::process::id() as i32));
        assert!(!jobs[0].stale_lock);
        assert_eq!(
            (jobs[0].completed_partitions, jobs[0].total_partitions),
            (0, 2)
        );
        assert_eq!(jobs[1].status, JobStatus::Dead);
        assert!(jobs[1].stale_lock && jobs[1].pid.is_none());
        assert_eq!(jobs[2].status, JobStatus::Completed);
        assert_eq!(jobs[2].progress_percentage, 100.0);
        let text = render_list(&jobs, d.tmp.path());
        assert!(
            text.contains("b_live") && text.contains("stale lock"),
            "{text}"
        );
        assert!(list_jobs(&d.tmp.path().join("missing")).is_err());
    }

    /// A job "run" by a child process: `sh` ignoring SIGTERM or not.
    fn child_job(d: &Dir, id: &str, ignore_term: bool) -> (PathBuf, std::process::Child) {
        let job = d.job(id);
        layout(&job);
        write(
            &job.join("events_20260101_000000.jsonl"),
            &ev("job_start", epoch_now(), json!({})),
        );
        let script = if ignore_term {
            "trap '' TERM; exec sleep 30"
        } else {
            "exec sleep 30"
        };
        let child = std::process::Command::new("sh")
            .args(["-c", script])
            .spawn()
            .unwrap();
        write(&job.join(".lock"), &child.id().to_string());
        (job, child)
    }

    #[test]
    fn stop_graceful_force_and_timeout() {
        use std::os::unix::process::ExitStatusExt;
        let d = Dir::new();
        // Graceful: SIGTERM ends it; the lock it left is removed as stale.
        let (job, mut child) = child_job(&d, "term", false);
        assert_eq!(job_progress(&job).unwrap().status, JobStatus::Running);
        let r = stop_job(&job, false, Duration::from_secs(10)).unwrap();
        assert!(r.success && r.process_exited, "{r:?}");
        assert_eq!(r.signal, "SIGTERM");
        assert!(r.stale_lock_removed && r.lock_released);
        assert!(!r.stop_event_logged);
        assert_eq!(r.status, JobStatus::Dead);
        assert!(r.resumable);
        assert_eq!(
            r.resume_command.as_deref(),
            Some("dj-run --config r.yaml --np 2 --resume term")
        );
        assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGTERM));
        assert!(!job.join(".lock").exists());

        // SIGTERM ignored: the stop times out and says so; --force then kills it.
        let (job, mut child) = child_job(&d, "stubborn", true);
        std::thread::sleep(Duration::from_millis(200)); // let sh install the trap
        let r = stop_job(&job, false, Duration::from_millis(300)).unwrap();
        assert!(!r.success && !r.process_exited, "{r:?}");
        assert!(r.message.contains("still running") && r.message.contains("--force"));
        assert_eq!(r.status, JobStatus::Running);
        let r = stop_job(&job, true, Duration::from_secs(10)).unwrap();
        assert!(r.success && r.process_exited, "{r:?}");
        assert_eq!(r.signal, "SIGKILL");
        assert!(r.stale_lock_removed && r.stop_event_logged);
        assert_eq!(r.status, JobStatus::Stopped);
        assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
        let last = load_events(&job).pop().unwrap();
        assert_eq!(last["event_type"], "job_failed");
        assert_eq!(last["status"], "stopped");
        let err = stop_job(&job, true, Duration::from_secs(1)).unwrap_err();
        assert!(format!("{err}").contains("is not running"), "{err}");
    }

    #[test]
    fn a_reused_pid_is_not_the_job() {
        let d = Dir::new();
        let job = d.job("old");
        write(
            &job.join("events_20260101_000000.jsonl"),
            &ev("job_start", 1.0, json!({})),
        );
        write(&job.join(".lock"), &std::process::id().to_string());
        // The lock is older than this (live) process: its pid was reused.
        let old = std::fs::File::options()
            .write(true)
            .open(job.join(".lock"))
            .unwrap();
        old.set_modified(UNIX_EPOCH + Duration::from_secs(1_000_000))
            .unwrap();
        let l = lock_info(&job);
        assert!(l.present && l.stale, "{l:?}");
        assert_eq!(job_progress(&job).unwrap().status, JobStatus::Dead);
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(human_duration(0.25), "0.25s");
        assert_eq!(human_duration(12.34), "12.3s");
        assert_eq!(human_duration(245.0), "4m 05s");
        assert_eq!(human_duration(7380.0), "2h 03m");
    }
}
