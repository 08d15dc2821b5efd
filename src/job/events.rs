//! The job's machine-readable event log, `events_<UTC %Y%m%d_%H%M%S>.jsonl` in the job directory:
//! one JSON object a line, in Data-Juicer's field names and order, written with Python
//! `json.dumps`'s separators and ASCII escaping. Each event is also logged (`tracing`, info) as a
//! human-readable line, which lands in the job's `logs/` (see [`crate::logging`]).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use dj_plans::nodes::{CheckpointListener, SavedCheckpoint};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::JobPaths;

/// The event types this engine writes (Data-Juicer's names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum EventKind {
    #[default]
    JobStart,
    JobComplete,
    JobFailed,
    PartitionStart,
    PartitionComplete,
    PartitionFailed,
    OpStart,
    OpComplete,
    OpFailed,
    CheckpointSave,
    CheckpointLoad,
    /// A saved file failed verification and was moved aside.
    CheckpointInvalid,
}

impl EventKind {
    /// The kind of a logged event (`None`: not one this engine writes).
    pub(crate) fn of(event: &Value) -> Option<EventKind> {
        EventKind::deserialize(&event["event_type"]).ok()
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            EventKind::JobStart => "job_start",
            EventKind::JobComplete => "job_complete",
            EventKind::JobFailed => "job_failed",
            EventKind::PartitionStart => "partition_start",
            EventKind::PartitionComplete => "partition_complete",
            EventKind::PartitionFailed => "partition_failed",
            EventKind::OpStart => "op_start",
            EventKind::OpComplete => "op_complete",
            EventKind::OpFailed => "op_failed",
            EventKind::CheckpointSave => "checkpoint_save",
            EventKind::CheckpointLoad => "checkpoint_load",
            EventKind::CheckpointInvalid => "checkpoint_invalid",
        }
    }
}

/// One event; `None` fields are left out of the line.
#[derive(Debug, Default, Clone)]
pub(crate) struct Event {
    pub(crate) event_type: EventKind,
    pub(crate) message: String,
    pub(crate) partition_id: Option<usize>,
    pub(crate) operation_name: Option<String>,
    pub(crate) operation_idx: Option<usize>,
    pub(crate) status: Option<&'static str>,
    pub(crate) duration: Option<f64>,
    pub(crate) error_message: Option<String>,
    pub(crate) checkpoint_path: Option<String>,
    pub(crate) input_rows: Option<u64>,
    pub(crate) output_rows: Option<u64>,
    pub(crate) output_path: Option<String>,
    pub(crate) total_partitions: Option<usize>,
    pub(crate) metadata: Option<Value>,
}

impl Event {
    pub(crate) fn new(event_type: EventKind, message: impl Into<String>) -> Self {
        Event {
            event_type,
            message: message.into(),
            ..Default::default()
        }
    }
    pub(crate) fn partition(mut self, p: usize) -> Self {
        self.partition_id = Some(p);
        self
    }
    pub(crate) fn op(mut self, idx: usize, name: &str) -> Self {
        self.operation_idx = Some(idx);
        self.operation_name = Some(name.to_string());
        self
    }
    pub(crate) fn meta(mut self, m: Value) -> Self {
        self.metadata = Some(m);
        self
    }
}

/// Appends events to the job's event file (flushed per line, so `dj-job monitor` and a resume see
/// every event written before a crash).
#[derive(Debug)]
pub(crate) struct EventLog {
    job_id: String,
    path: PathBuf,
    file: Option<Mutex<File>>,
    closed: std::sync::atomic::AtomicBool,
    /// Test hook ([`crate::options::RunOptions::event_delay`]): sleep after each event, so kill
    /// tests can hit every moment.
    delay: Option<Duration>,
}

fn epoch() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

impl EventLog {
    /// A new log file in `work_dir`; `delay`: a pause after each event (a test hook).
    pub(crate) fn create(
        work_dir: &Path,
        job_id: &str,
        delay: Option<Duration>,
    ) -> Result<EventLog> {
        let path = JobPaths::new(work_dir.to_path_buf()).new_events_file();
        let open = |p: &Path| {
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .with_context(|| format!("cannot open {}", p.display()))
        };
        let events = open(&path)?;
        Ok(EventLog {
            job_id: job_id.to_string(),
            path,
            file: Some(Mutex::new(events)),
            closed: Default::default(),
            delay,
        })
    }

    /// Appends to the existing event file `path` (a job's log written by another process, e.g. to
    /// record a stop forced from outside). A line torn by a crash is ended first, so the next
    /// event starts on a line of its own.
    pub(crate) fn append_to(path: &Path, job_id: &str) -> Result<EventLog> {
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        let torn = {
            use std::os::unix::fs::FileExt;
            let len = file.metadata().map(|m| m.len()).unwrap_or(0);
            let mut last = [b'\n'];
            len > 0 && file.read_at(&mut last, len - 1).is_ok() && last[0] != b'\n'
        };
        if torn {
            file.write_all(b"\n")
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        Ok(EventLog {
            job_id: job_id.to_string(),
            path: path.to_path_buf(),
            file: Some(Mutex::new(file)),
            closed: Default::default(),
            delay: None,
        })
    }

    /// Writes `e` as the log's last event and makes the file durable; an error if either fails.
    pub(crate) fn log_last_durably(&self, e: Event) -> Result<()> {
        self.write(e, true)
            .and_then(|_| match &self.file {
                Some(f) => f.lock().unwrap().sync_all(),
                None => Ok(()),
            })
            .with_context(|| format!("cannot write {}", self.path.display()))
    }

    /// A log that writes nothing (plans built only to be explained).
    pub(crate) fn disabled() -> EventLog {
        EventLog {
            job_id: String::new(),
            path: PathBuf::new(),
            file: None,
            closed: Default::default(),
            delay: None,
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `e` as the log's last event: events from work still winding down after a stop
    /// (a checkpoint that became durable meanwhile is still found on disk by a resume) are dropped.
    pub(crate) fn log_last(&self, e: Event) {
        self.log_or_warn(e, true);
    }

    pub(crate) fn log(&self, e: Event) {
        self.log_or_warn(e, false);
    }

    /// An event that cannot be written must not fail the job; tracing reports it.
    fn log_or_warn(&self, e: Event, last: bool) {
        if let Err(err) = self.write(e, last) {
            tracing::warn!("cannot write event to {}: {err}", self.path.display());
        }
    }

    fn write(&self, e: Event, last: bool) -> std::io::Result<()> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        let t = epoch();
        let line = encode(&e, &self.job_id, t, std::process::id(), thread_id());
        let mut human = format!(
            "EVENT[{}] | TIME[{}]",
            e.event_type.as_str(),
            chrono::Local::now().to_rfc3339()
        );
        if let Some(p) = e.partition_id {
            human.push_str(&format!(" | PARTITION[{p}]"));
        }
        if let Some(op) = &e.operation_name {
            human.push_str(&format!(" | OP[{op}]"));
        }
        if let Some(d) = e.duration {
            human.push_str(&format!(" | DURATION[{d:.3}s]"));
        }
        human.push_str(&format!(" | MSG[{}]", e.message));
        if let Some(err) = &e.error_message {
            human.push_str(&format!(" | ERROR[{err}]"));
        }
        let written = {
            // Checked and set under the file lock, so nothing lands after the last event.
            let mut f = file.lock().unwrap();
            if self.closed.load(std::sync::atomic::Ordering::SeqCst) {
                return Ok(());
            }
            if last {
                self.closed.store(true, std::sync::atomic::Ordering::SeqCst);
            }
            writeln!(f, "{line}")
        };
        tracing::info!("{human}");
        if let Some(d) = self.delay {
            std::thread::sleep(d);
        }
        written
    }
}

/// An event line's fields, in Data-Juicer's order.
#[derive(Serialize)]
struct Line<'a> {
    event_type: EventKind,
    timestamp: f64,
    message: &'a str,
    event_id: String,
    job_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    partition_id: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    operation_name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    operation_idx: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    duration: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error_message: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    checkpoint_path: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    input_rows: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_rows: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_path: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    total_partitions: Option<usize>,
    process_id: u32,
    thread_id: u64,
}

/// One event as its line: Data-Juicer's field names and order, `None` fields left out, Python
/// `json.dumps` formatting. `t` is the UNIX time; `pid` and `tid` the writing process and thread.
fn encode(e: &Event, job_id: &str, t: f64, pid: u32, tid: u64) -> String {
    let id_tail = match (e.partition_id, e.operation_idx) {
        (Some(p), Some(i)) => format!("{p}_{i}_"),
        (Some(p), None) => format!("{p}_"),
        _ => String::new(),
    };
    python_json(&Line {
        event_type: e.event_type,
        timestamp: t,
        message: &e.message,
        event_id: format!("{}_{id_tail}{}", e.event_type.as_str(), t as u64),
        job_id,
        partition_id: e.partition_id,
        operation_name: e.operation_name.as_deref(),
        operation_idx: e.operation_idx,
        status: e.status,
        duration: e.duration,
        error_message: e.error_message.as_deref(),
        checkpoint_path: e.checkpoint_path.as_deref(),
        input_rows: e.input_rows,
        output_rows: e.output_rows,
        output_path: e.output_path.as_deref(),
        metadata: e.metadata.as_ref(),
        total_partitions: e.total_partitions,
        process_id: pid,
        thread_id: tid,
    })
}

fn thread_id() -> u64 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() as u64 }
}

/// `checkpoint_save` events for checkpoints as they become durable.
impl CheckpointListener for EventLog {
    fn saved(&self, c: &SavedCheckpoint) {
        let mut e = Event::new(
            EventKind::CheckpointSave,
            format!(
                "Saved checkpoint after operation {}: {}",
                c.op_index, c.op_name
            ),
        )
        .partition(c.partition)
        .op(c.op_index, &c.op_name)
        .meta(json!({
            "checkpoint_path": c.path.display().to_string(),
            "rows": c.rows,
            "bytes": c.seal.as_ref().map(|s| s.size),
            "blake3": c.seal.as_ref().map(|s| &s.blake3),
        }));
        if let (Some(reason), Some(Value::Object(m))) = (&c.reason, e.metadata.as_mut()) {
            m.insert("reason".into(), json!(reason));
        }
        e.checkpoint_path = Some(c.path.display().to_string());
        e.duration = Some(c.seconds);
        e.output_rows = Some(c.rows);
        self.log(e);
    }
}

/// Python `json.dumps(v)`: `", "` and `": "` separators, non-ASCII escaped as `\uXXXX`.
pub(crate) fn python_json(v: &impl Serialize) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, PyFormatter);
    v.serialize(&mut ser)
        .expect("events and metadata serialize to JSON");
    String::from_utf8(out).expect("ASCII output")
}

struct PyFormatter;

impl serde_json::ser::Formatter for PyFormatter {
    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }
    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        for c in fragment.chars() {
            if c.is_ascii() {
                w.write_all(&[c as u8])?;
            } else {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    write!(w, "\\u{unit:04x}")?;
                }
            }
        }
        Ok(())
    }
    fn write_f64<W: ?Sized + Write>(&mut self, w: &mut W, value: f64) -> std::io::Result<()> {
        w.write_all(dj_udfs::py::pyfloat::repr(value).as_bytes())
    }
}

/// The event files of a job directory, oldest first (by name: the UTC stamp sorts).
pub(crate) fn event_files(work_dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(work_dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(JobPaths::is_events_file)
        })
        .collect();
    files.sort();
    files
}

/// Every event of a job, oldest first; unparsable lines (a line torn by a crash) are skipped.
pub(crate) fn load_events(work_dir: &Path) -> Vec<Value> {
    event_files(work_dir)
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .flat_map(|text| {
            text.lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect::<Vec<Value>>()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_json_matches_json_dumps() {
        let v =
            json!({"event_type": "job_start", "timestamp": 1.5, "message": "café ✓", "n": [1, 2]});
        assert_eq!(
            python_json(&v),
            r#"{"event_type": "job_start", "timestamp": 1.5, "message": "caf\u00e9 \u2713", "n": [1, 2]}"#
        );
    }

    /// The exact bytes of an event line with every field set (Data-Juicer's order, separators
    /// and escaping), and of a minimal one.
    #[test]
    fn event_lines_are_pinned() {
        let mut e = Event::new(EventKind::CheckpointSave, "Saved ✓")
            .partition(3)
            .op(2, "text_length_filter")
            .meta(json!({"rows": 7, "b": [1.5, null]}));
        e.status = Some("completed");
        e.duration = Some(0.25);
        e.error_message = Some("none".into());
        e.checkpoint_path = Some("/j/c.parquet".into());
        e.input_rows = Some(10);
        e.output_rows = Some(7);
        e.output_path = Some("out.jsonl".into());
        e.total_partitions = Some(4);
        assert_eq!(
            encode(&e, "job-1", 1700000000.125, 42, 43),
            r#"{"event_type": "checkpoint_save", "timestamp": 1700000000.125, "message": "Saved \u2713", "event_id": "checkpoint_save_3_2_1700000000", "job_id": "job-1", "partition_id": 3, "operation_name": "text_length_filter", "operation_idx": 2, "status": "completed", "duration": 0.25, "error_message": "none", "checkpoint_path": "/j/c.parquet", "input_rows": 10, "output_rows": 7, "output_path": "out.jsonl", "metadata": {"rows": 7, "b": [1.5, null]}, "total_partitions": 4, "process_id": 42, "thread_id": 43}"#
        );
        assert_eq!(
            encode(&Event::new(EventKind::JobStart, "go"), "j", 1.0, 1, 2),
            r#"{"event_type": "job_start", "timestamp": 1.0, "message": "go", "event_id": "job_start_1", "job_id": "j", "process_id": 1, "thread_id": 2}"#
        );
    }
}
