//! Stopping a running job: SIGTERM (graceful, resumable) or SIGKILL (`--force`), then waiting
//! for the lock and reporting.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde::Serialize;
use serde_json::{Value, json};

use super::dir::{cli_overrides, epoch_now, job_id_of, recipe_copy, require_dir};
use super::job_progress::{JobStatus, progress_at};
use crate::flags::RUN_BIN;
use crate::job::events::{Event, EventKind, EventLog, event_files, load_events};
use crate::job::{JobPaths, lock_info, lock_pid, process_alive};

/// What [`stop_job`] did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct StopResult {
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
pub(crate) fn stop_job(job_dir: &Path, force: bool, timeout: Duration) -> Result<StopResult> {
    require_dir(job_dir)?;
    let job_id = job_id_of(job_dir);
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
    let lock_released = || lock_pid(job_dir) != Some(pid);
    let stop_logged = || stop_logged(job_dir);
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
        std::fs::remove_file(JobPaths::new(job_dir.to_path_buf()).lock())
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

/// Whether the latest run's events record a stop (`job_failed` with status `stopped`).
fn stop_logged(job_dir: &Path) -> bool {
    let events = load_events(job_dir);
    let kind = |e: &Value| EventKind::of(e);
    let run_start = events
        .iter()
        .rposition(|e| kind(e) == Some(EventKind::JobStart));
    events[run_start.unwrap_or(0)..]
        .iter()
        .any(|e| kind(e) == Some(EventKind::JobFailed) && e["status"] == "stopped")
}

/// After SIGKILL nothing logged the end of the run: record it as the run itself would on SIGTERM.
fn log_forced_stop(job_dir: &Path, job_id: &str, pid: i32, at: f64) -> Result<()> {
    let path = event_files(job_dir)
        .pop()
        .unwrap_or_else(|| JobPaths::new(job_dir.to_path_buf()).new_events_file());
    let err = format!(
        "killed by SIGKILL (dj-job stop --force) at process {pid}; the job is resumable with --resume {job_id}"
    );
    let mut e = Event::new(EventKind::JobFailed, format!("Job failed: {err}")).meta(
        json!({"stopped_by": "dj-job stop --force", "signal": "SIGKILL", "killed_pid": pid, "signalled_at": at}),
    );
    e.status = Some("stopped");
    e.error_message = Some(err);
    EventLog::append_to(&path, job_id)?.log_last_durably(e)
}

/// The command that resumes the job: `dj-run` with the recipe copy's name and the saved
/// overrides (see [`crate::job::resume_command`]).
pub(super) fn resume_command(job_dir: &Path, job_id: &str) -> String {
    let recipe = recipe_copy(job_dir)
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "RECIPE.yaml".into());
    let mut run = vec![RUN_BIN.to_string(), "--config".to_string(), recipe];
    for (k, v) in cli_overrides(job_dir) {
        run.extend([format!("--{k}"), v]);
    }
    crate::job::command_line(&crate::job::resume_command(&run, job_id))
}

/// Stops a job whose directory is on object storage (`work_dir` a URL) and which a run on any
/// machine holds through its lease: writes a stop request that the run polls for (every 2 s),
/// then waits (up to `timeout`) until the run has released its lease. Graceful, the run stops as
/// on SIGTERM; `force`, it releases its lease and kills itself (SIGKILL).
pub(crate) fn stop_remote_job(
    work_dir: &str,
    job_id: &str,
    force: bool,
    timeout: Duration,
) -> Result<StopResult> {
    let view = crate::job::mirror::job_view(work_dir, job_id, false)?;
    let lock = lock_info(&view);
    let (pid, host) = match (&lock.host, lock.pid, lock.stale) {
        (Some(host), Some(pid), false) => (pid, host.clone()),
        (Some(host), _, true) => bail!(
            "job {job_id} is not running: its lease names {host}, which stopped renewing it (it \
             expired); nothing to stop"
        ),
        _ => {
            let status = progress_at(&view, epoch_now())
                .map(|p| p.status)
                .unwrap_or(JobStatus::Unknown);
            bail!("job {job_id} is not running (no lease; status: {status}); nothing to stop");
        }
    };
    let held = crate::job::mirror::lease_holder(work_dir, job_id)?;
    crate::job::mirror::request_stop(work_dir, job_id, force)?;
    let t0 = Instant::now();
    let released = loop {
        let now = crate::job::mirror::lease_holder(work_dir, job_id)?;
        if now.is_none() || now != held {
            break true;
        }
        if t0.elapsed() >= timeout {
            break false;
        }
        std::thread::sleep(Duration::from_millis(250));
    };
    let waited = t0.elapsed().as_secs_f64();
    let view = crate::job::mirror::job_view(work_dir, job_id, false)?;
    let progress = progress_at(&view, epoch_now())?;
    let (signal, how) = if force {
        ("SIGKILL", "was killed")
    } else {
        ("SIGTERM", "stopped")
    };
    let success = released && progress.status != JobStatus::Running;
    let resumable = success
        && progress.status != JobStatus::Completed
        && JobPaths::new(view.clone()).partitioning_info().is_file();
    let resume_command = resumable.then(|| resume_command(&view, job_id));
    let stop_logged = stop_logged(&view);
    let message = if success {
        let mut m = format!(
            "Job {job_id}: asked process {pid} on {host} to stop ({signal}); it {how} and \
             released the job after {waited:.1}s. Status: {}.",
            progress.status
        );
        if let Some(cmd) = &resume_command {
            m.push_str(&format!(" Resume it (on any machine) with: {cmd}"));
        }
        m
    } else {
        format!(
            "Job {job_id}: process {pid} on {host} still holds the job {waited:.1}s after the stop \
             request. Wait longer (--timeout) or use --force."
        )
    };
    Ok(StopResult {
        job_id: job_id.to_string(),
        job_dir: PathBuf::from(format!("{}/{job_id}", work_dir.trim_end_matches('/'))),
        pid,
        signal: signal.into(),
        force,
        success,
        process_exited: released,
        lock_released: released,
        stale_lock_removed: false,
        stop_event_logged: stop_logged,
        status: progress.status,
        resumable,
        waited_seconds: waited,
        message,
        resume_command,
    })
}
