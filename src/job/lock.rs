//! `{job dir}/.lock`: one process runs a job at a time; `dj-run` and `dj-job` judge a lock by
//! the same rule.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use anyhow::{Context, Result, bail};
use serde::Serialize;

use super::JobPaths;

/// `{job dir}/.lock` holding the running process id. A stale lock ([`lock_info`]: its process is
/// gone, a zombie, or a younger process that reused its pid) is taken over; a live one refuses the
/// run. `dj-job` judges locks by the same rule.
#[derive(Debug)]
pub(crate) struct JobLock {
    path: PathBuf,
}

/// The pid in a lock file, if the file exists and parses.
pub(crate) fn lock_pid(job_root: &Path) -> Option<i32> {
    std::fs::read_to_string(JobPaths::new(job_root.to_path_buf()).lock())
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
    /// For a job on object storage: the machine whose lease holds it (`pid` is a process
    /// there; `stale`: the lease expired).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

/// Reads the lock of `job_dir`.
pub(crate) fn lock_info(job_dir: &Path) -> LockInfo {
    let path = JobPaths::new(job_dir.to_path_buf()).lock();
    let Ok(meta) = std::fs::metadata(&path) else {
        // A view of a job on object storage carries a snapshot of its lease instead.
        let holder = super::lease::snapshot_holder(job_dir);
        return holder.map_or_else(LockInfo::default, |h| LockInfo {
            present: true,
            pid: h.pid,
            stale: h.expired,
            host: Some(h.host),
        });
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
        host: None,
    }
}

impl JobLock {
    pub(crate) fn acquire(job_root: &Path, job_id: &str) -> Result<JobLock> {
        let path = JobPaths::new(job_root.to_path_buf()).lock();
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
