//! The job directory `{work_dir}/{job_id}/` of the partitioned executor: job ids, the directory
//! layout, the lock that refuses a second run of a running job, and the small JSON files
//! (config backup, `cli.yaml`, `job_summary.json`, `metadata/`, `dag_execution_plan.json`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use anyhow::{Context, Result, bail};
use dj_plans::Recipe;
use serde::Serialize;
use serde_json::{Value, json};

/// A new job id: UTC `YYYYMMDD_HHMMSS_` + 6 hex digits, as Data-Juicer makes them.
pub(crate) fn new_job_id() -> String {
    let hex = uuid::Uuid::new_v4().simple().to_string();
    format!(
        "{}_{}",
        chrono::Utc::now().format("%Y%m%d_%H%M%S"),
        &hex[..6]
    )
}

/// Checks a user-given job id: it names one directory.
pub(crate) fn validate_job_id(id: &str) -> Result<()> {
    if id.is_empty() || id.len() > 200 {
        bail!("invalid job id {id:?}: expected 1 to 200 characters");
    }
    if id == "." || id == ".." || id.contains("..") || id.contains(['/', '\\', '\0']) {
        bail!("invalid job id {id:?}: it must not contain path separators or '..'");
    }
    Ok(())
}

/// Where the job directory is: `work_dir` (default: the export's directory), with a `{job_id}`
/// placeholder substituted, ending in the job id.
pub(crate) fn job_dir(recipe: &Recipe, job_id: &str) -> Result<PathBuf> {
    let base = match &recipe.work_dir {
        Some(w) => w.clone(),
        None => {
            let export = std::path::absolute(&recipe.export_path)?;
            export
                .parent()
                .unwrap_or(Path::new("."))
                .display()
                .to_string()
        }
    };
    if base.contains("{job_id}") && !base.trim_end_matches('/').ends_with("{job_id}") {
        bail!(
            "Invalid work_dir configuration: '{{job_id}}' must be the last part of the path. Current: '{base}'. \
             Expected format: 'path/to/directory/{{job_id}}'"
        );
    }
    let dir = PathBuf::from(base.replace("{job_id}", job_id));
    Ok(if dir.file_name().is_some_and(|n| n == job_id) {
        dir
    } else {
        dir.join(job_id)
    })
}

/// The paths inside a job directory.
#[derive(Debug, Clone)]
pub(crate) struct JobPaths {
    pub root: PathBuf,
    pub checkpoints: PathBuf,
    pub partitions: PathBuf,
    pub logs: PathBuf,
    pub metadata: PathBuf,
}

impl JobPaths {
    pub(crate) fn new(root: PathBuf) -> Self {
        JobPaths {
            checkpoints: root.join("checkpoints"),
            partitions: root.join("partitions"),
            logs: root.join("logs"),
            metadata: root.join("metadata"),
            root,
        }
    }

    pub(crate) fn create_all(&self) -> Result<()> {
        for d in [
            &self.root,
            &self.checkpoints,
            &self.partitions,
            &self.logs,
            &self.metadata,
        ] {
            std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
        }
        Ok(())
    }

    pub(crate) fn partitioning_info(&self) -> PathBuf {
        self.checkpoints.join("partitioning_info.json")
    }

    pub(crate) fn summary(&self) -> PathBuf {
        self.root.join("job_summary.json")
    }
}

/// `job_summary.json`, written when a job completes (Data-Juicer's keys, in its order). Read
/// leniently: a key it lacks takes its default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
#[serde(default)]
pub(crate) struct JobSummary {
    pub(crate) job_id: String,
    pub(crate) status: String,
    pub(crate) start_time: f64,
    pub(crate) end_time: f64,
    pub(crate) duration: f64,
    pub(crate) work_dir: PathBuf,
    pub(crate) config_file: String,
    pub(crate) executor_type: String,
    pub(crate) resumption_command: String,
    pub(crate) event_log_file: PathBuf,
    pub(crate) checkpoint_dir: PathBuf,
    pub(crate) metadata_dir: PathBuf,
    pub(crate) num_partitions: usize,
    pub(crate) rows_in: u64,
    pub(crate) rows_out: u64,
    pub(crate) export_files: Vec<PathBuf>,
}

/// Writes `bytes` to `path` atomically (see [`dj_plans::atomic`]).
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    dj_plans::atomic::write_atomic(path, bytes)
        .with_context(|| format!("cannot write {}", path.display()))
}

pub(crate) fn write_json(path: &Path, v: &Value) -> Result<()> {
    write_atomic(path, (serde_json::to_string_pretty(v)? + "\n").as_bytes())
}

/// `{job dir}/.lock` holding the running process id. A stale lock ([`lock_info`]: its process is
/// gone, a zombie, or a younger process that reused its pid) is taken over; a live one refuses the
/// run. `dj-job` judges locks by the same rule.
#[derive(Debug)]
pub(crate) struct JobLock {
    path: PathBuf,
}

/// The pid in a lock file, if the file exists and parses.
pub(crate) fn lock_pid(job_root: &Path) -> Option<i32> {
    std::fs::read_to_string(job_root.join(".lock"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Whether a process exists and is not a zombie (a zombie has exited: only its parent has not
/// reaped it yet).
pub(crate) fn process_alive(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks that the process exists.
    let exists = unsafe { libc::kill(pid, 0) } == 0
        || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    exists && proc_stat(pid).is_none_or(|(state, _)| state != 'Z' && state != 'X')
}

/// `/proc/<pid>/stat`: the state letter and the start time (ticks after boot).
fn proc_stat(pid: i32) -> Option<(char, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces: fields follow the last ')'.
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((state, start))
}

/// When a process started, in seconds since the epoch (Linux `/proc`).
fn process_start_epoch(pid: i32) -> Option<f64> {
    let (_, ticks) = proc_stat(pid)?;
    let btime: f64 = std::fs::read_to_string("/proc/stat")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (hz > 0).then(|| btime + ticks as f64 / hz as f64)
}

/// The job's `.lock`: which process it names and whether that process still runs the job.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct LockInfo {
    /// A lock file exists.
    pub present: bool,
    /// The process id it holds (if it parses).
    pub pid: Option<i32>,
    /// The lock names no live process (dead, or its pid was since reused by a process started
    /// after the lock was written): the next run takes it over.
    pub stale: bool,
}

/// Reads the lock of `job_dir`.
pub(crate) fn lock_info(job_dir: &Path) -> LockInfo {
    let path = job_dir.join(".lock");
    let Ok(meta) = std::fs::metadata(&path) else {
        return LockInfo::default();
    };
    let pid = lock_pid(job_dir);
    let live = pid.is_some_and(|pid| {
        process_alive(pid) && {
            // A pid reused after the job died belongs to a process younger than the lock.
            let written = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map(|d| d.as_secs_f64());
            match (process_start_epoch(pid), written) {
                (Some(started), Some(written)) => started <= written + 1.0,
                _ => true,
            }
        }
    });
    LockInfo {
        present: true,
        pid,
        stale: !live,
    }
}

impl JobLock {
    pub(crate) fn acquire(job_root: &Path, job_id: &str) -> Result<JobLock> {
        let path = job_root.join(".lock");
        for _ in 0..2 {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut f) => {
                    let written = write!(f, "{}", std::process::id()).and_then(|_| f.sync_all());
                    if let Err(e) = written {
                        let _ = std::fs::remove_file(&path);
                        return Err(e)
                            .with_context(|| format!("cannot write lock {}", path.display()));
                    }
                    return Ok(JobLock { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    match lock_info(job_root) {
                        LockInfo {
                            pid: Some(pid),
                            stale: false,
                            ..
                        } => {
                            bail!(
                                "job {job_id} is already running (process {pid}, lock {})",
                                path.display()
                            )
                        }
                        other => {
                            tracing::warn!(
                                "removing stale lock {} of process {:?}, which no longer runs the job",
                                path.display(),
                                other.pid
                            );
                            std::fs::remove_file(&path)?;
                        }
                    }
                }
                Err(e) => {
                    return Err(e)
                        .with_context(|| format!("cannot create lock {}", path.display()));
                }
            }
        }
        bail!("cannot take the lock {}", path.display())
    }
}

impl Drop for JobLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Copies the recipe into the job directory (once) and records the command-line overrides in
/// `cli.yaml`, which a resume compares against.
pub(crate) fn backup_config(paths: &JobPaths, recipe: &Recipe) -> Result<()> {
    let name = Path::new(&recipe.file)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or("config.yaml".into());
    let backup = paths.root.join(name);
    if !backup.exists() {
        write_atomic(&backup, recipe.source_text.as_bytes())?;
    }
    let args: Vec<String> = comparable_overrides(recipe)
        .iter()
        .flat_map(|(k, v)| [format!("--{k}"), v.clone()])
        .collect();
    let yaml = serde_norway::to_string(&json!({ "arguments": args }))?;
    write_atomic(&paths.root.join("cli.yaml"), yaml.as_bytes())
}

/// Overrides that must match on resume (Data-Juicer excludes job_id, resume and work_dir).
pub(crate) fn comparable_overrides(recipe: &Recipe) -> Vec<(String, String)> {
    recipe
        .overrides
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "job_id" | "resume" | "work_dir"))
        .cloned()
        .collect()
}

/// The saved recipe text and overrides of a job, for resume's config check.
pub(crate) fn saved_config(paths: &JobPaths, recipe: &Recipe) -> Result<(String, Vec<String>)> {
    let name = Path::new(&recipe.file)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or("config.yaml".into());
    let backup = paths.root.join(&name);
    let text = std::fs::read_to_string(&backup).with_context(|| {
        format!(
            "the job directory has no saved recipe {} (was it started with another recipe file?)",
            backup.display()
        )
    })?;
    let cli = std::fs::read_to_string(paths.root.join("cli.yaml")).unwrap_or_default();
    let args: Vec<String> = serde_norway::from_str::<Value>(&cli)
        .ok()
        .and_then(|v| v.get("arguments").cloned())
        .and_then(|a| serde_json::from_value(a).ok())
        .unwrap_or_default();
    Ok((text, args))
}

/// A stable hash of the effective recipe: its text, the overrides that must match on resume, and
/// the content of every model file its ops load (another model gives other results), each file
/// once, in the order the ops first load it. Recipes without models hash as they always did.
pub(crate) fn recipe_hash(recipe: &Recipe) -> Result<String> {
    let mut h = blake3::Hasher::new();
    h.update(recipe.source_text.trim().as_bytes());
    for (k, v) in comparable_overrides(recipe) {
        h.update(b"\0");
        h.update(k.as_bytes());
        h.update(b"=");
        h.update(v.as_bytes());
    }
    let mut seen = std::collections::HashSet::new();
    for model in recipe.process.iter().flat_map(|op| &op.models) {
        if !seen.insert(&model.path) {
            continue;
        }
        h.update(b"\0model\0");
        let mut file = std::fs::File::open(&model.path)
            .with_context(|| format!("cannot read model file {}", model.path.display()))?;
        h.update_reader(&mut file)
            .with_context(|| format!("cannot read model file {}", model.path.display()))?;
    }
    Ok(h.finalize().to_hex().to_string())
}

/// `dag_execution_plan.json`: one node per partition and op, in Data-Juicer's shape.
pub(crate) fn dag_plan(recipe: &Recipe, partitions: usize) -> Value {
    let mut nodes = serde_json::Map::new();
    for p in 0..partitions {
        let mut prev: Option<String> = None;
        for op in &recipe.process {
            let id = format!("op_{:03}_{}_partition_{p}", op.index + 1, op.name);
            nodes.insert(
                id.clone(),
                json!({
                    "node_id": id,
                    "operation_name": op.name,
                    "node_type": "partition_operation",
                    "partition_id": p,
                    "config": op.params.to_json(),
                    "dependencies": prev.iter().collect::<Vec<_>>(),
                    "execution_order": op.index + 1,
                    "estimated_duration": 0.0,
                    "metadata": {"op_kind": op.spec.kind.as_str()},
                }),
            );
            prev = Some(id);
        }
    }
    json!({"nodes": nodes, "metadata": {"created_at": chrono::Utc::now().timestamp_millis() as f64 / 1000.0, "total_nodes": partitions * recipe.process.len()}})
}
