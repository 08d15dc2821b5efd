//! A job's progress replayed from its event files and lock: per-partition status, ops,
//! checkpoints and moved-aside files; overall counts, throughput and ETA; the job's status.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::Result;
use dj_plans::nodes::checkpoint::parse_checkpoint_file_name;
use serde::Serialize;
use serde_json::Value;

use super::dir::{
    effective_recipe, epoch_now, job_id_of, load_job_summary, read_json, require_job_dir,
};
use crate::job::events::{EventKind, load_events};
use crate::job::{JobPaths, JobSummary, LockInfo, lock_info};

/// A job's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum JobStatus {
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
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            JobStatus::Running => "running",
            JobStatus::Completed => "completed",
            JobStatus::Failed => "failed",
            JobStatus::Stopped => "stopped",
            JobStatus::Dead => "dead",
            JobStatus::Unknown => "unknown",
        }
    }
    pub(super) fn icon(self) -> &'static str {
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
pub(crate) enum PartitionStatus {
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
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            PartitionStatus::Pending => "pending",
            PartitionStatus::Processing => "processing",
            PartitionStatus::Completed => "completed",
            PartitionStatus::Failed => "failed",
            PartitionStatus::Interrupted => "interrupted",
        }
    }
    pub(super) fn icon(self) -> &'static str {
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
pub(crate) struct OpRef {
    pub idx: usize,
    pub name: String,
}

/// An op that completed on a partition (`op_complete`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct OpProgress {
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
pub(crate) struct CheckpointInfo {
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
pub(crate) struct PartitionProgress {
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
pub(crate) struct MovedAside {
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
pub(crate) struct OverallProgress {
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
pub(crate) struct LastEvent {
    pub event_type: String,
    pub timestamp: Option<f64>,
}

/// Everything `dj-job monitor` shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct JobProgress {
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
    pub summary: Option<JobSummary>,
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
/// The partitions the job saved: its partitioning info, else its dataset mapping.
fn saved_partitions(
    info: Option<&Value>,
    mapping: Option<&Value>,
) -> BTreeMap<usize, PartitionProgress> {
    let mut parts: BTreeMap<usize, PartitionProgress> = BTreeMap::new();
    let saved = info
        .and_then(|i| i["partitions"].as_array().cloned())
        .or_else(|| mapping.and_then(|m| m["partitions"].as_array().cloned()))
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
    parts
}

/// What the event log says about the job's runs.
struct RunHistory {
    runs: usize,
    start_time: Option<f64>,
    /// The latest run's start, and its end (time, status, error) if it ended.
    run_start_time: Option<f64>,
    run_end: Option<(f64, JobStatus, Option<String>)>,
    /// Partitions the latest run completed.
    completed_in_run: Vec<usize>,
}

/// Replays the events into `parts` (status, current op, checkpoints) and the run history; a
/// `job_start` may declare the partition count.
fn replay_events(
    events: &[Value],
    parts: &mut BTreeMap<usize, PartitionProgress>,
    declared_total: &mut Option<usize>,
    checkpoints: &Path,
    now: f64,
) -> RunHistory {
    let mut replay: BTreeMap<usize, Replay> = BTreeMap::new();
    let mut runs = 0usize;
    let mut start_time = None;
    let mut run_start_time = None;
    let mut run_end: Option<(f64, JobStatus, Option<String>)> = None;
    let mut completed_in_run: Vec<usize> = vec![];
    for e in events {
        // Events this engine does not write (another tool's) say nothing about progress.
        let Some(kind) = EventKind::of(e) else {
            continue;
        };
        let ts = e["timestamp"].as_f64();
        let pid = u64_of(&e["partition_id"]).map(|v| v as usize);
        match kind {
            EventKind::JobStart => {
                runs += 1;
                start_time = start_time.or(ts);
                run_start_time = ts;
                run_end = None;
                completed_in_run.clear();
                if declared_total.is_none() {
                    *declared_total = u64_of(&e["total_partitions"]).map(|v| v as usize);
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
            EventKind::JobComplete => {
                run_end = Some((ts.unwrap_or(now), JobStatus::Completed, None));
                continue;
            }
            EventKind::JobFailed => {
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
        if apply_partition_event(kind, e, ts, p, r, checkpoints) {
            completed_in_run.push(pid);
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
    RunHistory {
        runs,
        start_time,
        run_start_time,
        run_end,
        completed_in_run,
    }
}

/// The op names of the recipe copy's `process` list.
fn op_names(recipe: Option<&Value>) -> Vec<String> {
    recipe
        .and_then(|r| r["process"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|op| match op {
            Value::Object(m) => m.keys().next().cloned(),
            Value::String(s) => Some(s.clone()),
            _ => None,
        })
        .collect()
}

/// Checkpoint files on disk that no event recorded (an event file removed, say), and the op
/// name of every checkpoint.
fn add_unrecorded_checkpoints(
    parts: &mut BTreeMap<usize, PartitionProgress>,
    checkpoints: &Path,
    ops: &[String],
) {
    if let Ok(dir) = std::fs::read_dir(checkpoints) {
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
    for p in parts.values_mut() {
        p.checkpoints.sort_by_key(|c| c.operation_idx);
        for c in &mut p.checkpoints {
            if c.operation_name.is_none() {
                c.operation_name = ops.get(c.operation_idx).cloned();
            }
        }
    }
}

#[derive(Default)]
struct Replay {
    /// Ops started and not completed in the current attempt.
    started: BTreeMap<usize, String>,
    /// The newest op checkpointed in the current attempt: the ops up to it are done.
    checkpointed: Option<usize>,
}

/// Progress of the job in `job_dir`, from its event files, saved partitioning, lock and summary.
pub(crate) fn job_progress(job_dir: &Path) -> Result<JobProgress> {
    require_job_dir(job_dir)?;
    progress_at(job_dir, epoch_now())
}

pub(super) fn progress_at(job_dir: &Path, now: f64) -> Result<JobProgress> {
    let paths = JobPaths::new(job_dir.to_path_buf());
    let job_id = job_id_of(job_dir);
    let summary = load_job_summary(job_dir).unwrap_or(None);
    let events = load_events(job_dir);
    let lock = lock_info(job_dir);
    let info = read_json(&paths.partitioning_info());
    let mapping = read_json(&paths.dataset_mapping());
    let recipe = effective_recipe(job_dir);

    // Partitions: saved boundaries, else the dataset mapping, else the events.
    let mut parts = saved_partitions(info.as_ref(), mapping.as_ref());
    let mut declared_total = info
        .as_ref()
        .and_then(|i| u64_of(&i["num_partitions"]))
        .map(|v| v as usize);

    let RunHistory {
        runs,
        start_time,
        run_start_time,
        run_end,
        completed_in_run,
    } = replay_events(
        &events,
        &mut parts,
        &mut declared_total,
        &paths.checkpoints,
        now,
    );

    let ops = op_names(recipe.as_ref());
    add_unrecorded_checkpoints(&mut parts, &paths.checkpoints, &ops);
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
            None if events.is_empty() => match summary.as_ref().map(|s| s.status.as_str()) {
                Some("completed") => JobStatus::Completed,
                _ => JobStatus::Unknown,
            },
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
    let total_samples = info
        .as_ref()
        .and_then(|i| u64_of(&i["total_rows"]))
        .or_else(|| {
            mapping
                .as_ref()
                .and_then(|m| u64_of(&m["original_dataset_size"]))
        });
    let overall = overall_progress(
        &partitions,
        status,
        elapsed,
        &completed_in_run,
        total_samples,
    );
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

/// Applies one partition event of the current attempt to its partition; true for the partition's
/// completion.
fn apply_partition_event(
    kind: EventKind,
    e: &Value,
    ts: Option<f64>,
    p: &mut PartitionProgress,
    r: &mut Replay,
    checkpoints_dir: &Path,
) -> bool {
    let mut completed = false;
    match kind {
        EventKind::PartitionStart => {
            p.status = PartitionStatus::Processing;
            p.start_time = ts;
            p.end_time = None;
            p.duration_seconds = None;
            p.error_message = None;
            p.failed_op = None;
            r.started.clear();
            r.checkpointed = None;
        }
        EventKind::OpStart => {
            if let Some(op) = op_of(e) {
                r.started.insert(op.idx, op.name);
            }
        }
        EventKind::OpComplete => {
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
        EventKind::OpFailed => {
            if let Some(op) = op_of(e) {
                r.started.remove(&op.idx);
                p.failed_op.get_or_insert(op);
            }
            p.error_message = str_of(&e["error_message"]).or(p.error_message.take());
        }
        EventKind::CheckpointSave => {
            if let Some(op) = op_of(e) {
                let recorded = str_of(&e["checkpoint_path"])
                    .or_else(|| str_of(&e["metadata"]["checkpoint_path"]))
                    .map(PathBuf::from)
                    .unwrap_or_default();
                // The recorded path may be relative to the run's directory: look in ours.
                let path = recorded
                    .file_name()
                    .filter(|n| n.to_str().and_then(parse_checkpoint_file_name).is_some())
                    .map(|n| checkpoints_dir.join(n))
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
        EventKind::CheckpointLoad => p.resumed_from_op = op_of(e),
        EventKind::CheckpointInvalid => p.moved_aside.push(MovedAside {
            operation_idx: u64_of(&e["operation_idx"]).map(|v| v as usize),
            path: str_of(&e["checkpoint_path"]).unwrap_or_default(),
            moved_to: str_of(&e["metadata"]["moved_to"]),
            reason: str_of(&e["error_message"]),
            at: ts,
        }),
        EventKind::PartitionComplete => {
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
            completed = true;
        }
        EventKind::PartitionFailed => {
            p.status = PartitionStatus::Failed;
            p.end_time = ts;
            p.duration_seconds = e["duration"].as_f64();
            p.error_message = str_of(&e["error_message"]).or(p.error_message.take());
            r.started.clear();
        }
        _ => {}
    }
    completed
}

/// The overall figures of a job from its partitions: counts, percentage, rows, throughput over the
/// latest run (`elapsed` seconds, `completed_in_run` partitions) and the ETA.
fn overall_progress(
    partitions: &[PartitionProgress],
    status: JobStatus,
    elapsed: Option<f64>,
    completed_in_run: &[usize],
    total_samples: Option<u64>,
) -> OverallProgress {
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
    let distinct_completed_in_run = {
        let mut v = completed_in_run.to_vec();
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
    OverallProgress {
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
    }
}
