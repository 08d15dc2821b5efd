//! `{job}/.lease.json` on object storage: the lock that keeps two machines from running one job
//! at once, where the per-machine `.lock` cannot see the other machine. A run takes the lease with
//! a conditional write (S3 `If-None-Match: *`), renews it every third of its time to live with
//! `If-Match` on the ETag it last wrote, and deletes it when done. A lease that was not renewed
//! in time (its machine died) may be taken over; a run that cannot renew its lease before it
//! expires, or finds it taken over, stops at once (exit 75), so it never writes next to another
//! run: the job then resumes as after a crash. Machines' clocks must agree to within the renewal
//! period (NTP).

use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use dj_plans::store::{Conditional, Remote};
use serde::{Deserialize, Serialize};

/// The lease object's name in the job directory (hidden: never mirrored).
pub(crate) const LEASE_FILE: &str = ".lease.json";

/// `dj-job stop` on object storage writes this next to the lease; the lease holder polls for it
/// and stops its own process (SIGTERM, or SIGKILL with `force`).
pub(crate) const STOP_FILE: &str = ".stop_request.json";

/// How often a run looks for a stop request (at most).
const STOP_POLL: Duration = Duration::from_secs(2);

/// A stop request.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct StopRequest {
    pub(crate) force: bool,
    pub(crate) requested_epoch: f64,
}

/// Who holds a job's lease, as a snapshot of it says.
pub(crate) struct LeaseHolder {
    pub(crate) pid: Option<i32>,
    pub(crate) host: String,
    /// The lease expired: its holder is gone.
    pub(crate) expired: bool,
}

/// What a snapshot of a job's lease (`{job view}/.lease.json`, fetched by `dj-job`) says about
/// who runs the job.
pub(crate) fn snapshot_holder(job_dir: &std::path::Path) -> Option<LeaseHolder> {
    let lease: Lease = serde_json::from_slice(
        &std::fs::read(super::JobPaths::new(job_dir.to_path_buf()).lease()).ok()?,
    )
    .ok()?;
    Some(LeaseHolder {
        pid: i32::try_from(lease.pid).ok(),
        host: lease.host,
        expired: now_epoch() > lease.expires_epoch,
    })
}

/// The exit code of a run that lost its lease.
const LOST_LEASE_EXIT: i32 = 75;

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Lease {
    /// Who holds it: unique per run.
    holder: String,
    host: String,
    pid: u32,
    expires_epoch: f64,
    ttl_seconds: u64,
}

/// How long a lease lives without renewal: `DJ_JOB_LEASE_SECONDS` (default 60, at least 1).
fn ttl() -> Duration {
    let secs = std::env::var("DJ_JOB_LEASE_SECONDS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(60)
        .max(1);
    Duration::from_secs(secs)
}

fn now_epoch() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

fn when(epoch: f64) -> String {
    chrono::DateTime::from_timestamp(epoch as i64, 0).map_or_else(
        || format!("{epoch}"),
        |t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
    )
}

/// A held lease, renewed in the background until dropped.
pub(crate) struct JobLease {
    remote: Remote,
    holder: String,
    stop: Option<mpsc::Sender<()>>,
    renewer: Option<JoinHandle<()>>,
}

impl JobLease {
    /// Takes the lease of the job directory at `job_url` for job `job_id`, or fails naming the
    /// machine and process that hold it and until when.
    pub(crate) fn acquire(job_url: &str, job_id: &str) -> Result<JobLease> {
        let remote = Remote::open(&format!("{}/{LEASE_FILE}", job_url.trim_end_matches('/')))?;
        let ttl = ttl();
        let lease = Lease {
            holder: uuid::Uuid::new_v4().to_string(),
            host: hostname(),
            pid: std::process::id(),
            expires_epoch: now_epoch() + ttl.as_secs_f64(),
            ttl_seconds: ttl.as_secs(),
        };
        let bytes = serde_json::to_vec(&lease)?;
        let cannot = || format!("cannot take the lease {} of job {job_id}", remote.url);
        let mut e_tag = None;
        // Two tries: an expired lease can be taken over by another machine at the same moment.
        for _ in 0..2 {
            if let Conditional::Written(tag) =
                remote.put_if_absent(bytes.clone()).with_context(cannot)?
            {
                e_tag = Some(tag);
                break;
            }
            let Some((current, tag)) = remote.get().with_context(cannot)? else {
                continue; // Released meanwhile.
            };
            let held: Lease = serde_json::from_slice(&current)
                .with_context(|| format!("{} is not a job lease", remote.url))?;
            if held.holder == lease.holder {
                // Our own write, retried after a lost response.
                e_tag = Some(tag);
                break;
            }
            if now_epoch() <= held.expires_epoch {
                bail!(
                    "job {job_id} is running on {} (pid {}): its lease {} is valid until {} and \
                     is renewed every {} s while it runs. Stop it there (dj-job stop), or wait: \
                     if that machine is gone, the lease expires and --resume {job_id} takes over.",
                    held.host,
                    held.pid,
                    remote.url,
                    when(held.expires_epoch),
                    (held.ttl_seconds / 3).max(1)
                );
            }
            let Some(tag) = tag else { continue };
            if let Conditional::Written(tag) = remote
                .put_if_match(bytes.clone(), &tag)
                .with_context(cannot)?
            {
                tracing::warn!(
                    "job {job_id}: took over the expired lease of {} (pid {}), which expired at {}",
                    held.host,
                    held.pid,
                    when(held.expires_epoch)
                );
                e_tag = Some(tag);
                break;
            }
        }
        let Some(e_tag) = e_tag else {
            bail!(
                "{}: another machine took the lease at the same moment",
                cannot()
            );
        };
        // A stop request addressed to an earlier run is not for this one.
        remote.sibling(STOP_FILE).delete().with_context(cannot)?;
        let holder = lease.holder.clone();
        let (stop, stopped) = mpsc::channel();
        let renewer = {
            let (remote, job_id) = (remote.clone(), job_id.to_string());
            std::thread::Builder::new()
                .name("dj-lease".into())
                .spawn(move || renew(remote, lease, e_tag, ttl, stopped, &job_id))?
        };
        Ok(JobLease {
            remote,
            holder,
            stop: Some(stop),
            renewer: Some(renewer),
        })
    }
}

/// Renews `lease` every third of `ttl` until told to stop; exits the process when it cannot.
fn renew(
    remote: Remote,
    mut lease: Lease,
    mut e_tag: Option<String>,
    ttl: Duration,
    stopped: mpsc::Receiver<()>,
    job_id: &str,
) {
    let lost = |why: String| -> ! {
        eprintln!(
            "error: job {job_id}: {why}; stopping now so that two machines never run the job at \
             once. Resume it with --resume {job_id}."
        );
        std::process::exit(LOST_LEASE_EXIT);
    };
    let stop_file = remote.sibling(STOP_FILE);
    let renew_every = ttl / 3;
    let mut next_renewal = std::time::Instant::now() + renew_every;
    loop {
        let wait = next_renewal
            .saturating_duration_since(std::time::Instant::now())
            .min(STOP_POLL);
        match stopped.recv_timeout(wait) {
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            _ => return,
        }
        if let Ok(Some((bytes, _))) = stop_file.get() {
            let force = serde_json::from_slice::<StopRequest>(&bytes).is_ok_and(|r| r.force);
            let _ = stop_file.delete();
            tracing::warn!("job {job_id}: stop requested through {}", stop_file.url);
            let signal = if force {
                // Killed, the run cannot release its lease: release it first.
                let _ = remote.delete();
                libc::SIGKILL
            } else {
                libc::SIGTERM
            };
            // SAFETY: signals this process, as `dj-job stop` does a local run.
            unsafe { libc::kill(libc::getpid(), signal) };
        }
        if std::time::Instant::now() < next_renewal {
            continue;
        }
        next_renewal = std::time::Instant::now() + renew_every;
        let Some(tag) = e_tag.clone() else {
            lost(format!(
                "the store gave no ETag for its lease {}",
                remote.url
            ));
        };
        let previous_expiry = lease.expires_epoch;
        lease.expires_epoch = now_epoch() + ttl.as_secs_f64();
        let bytes = serde_json::to_vec(&lease).expect("a lease serializes");
        match remote.put_if_match(bytes, &tag) {
            Ok(Conditional::Written(tag)) => e_tag = tag,
            Ok(Conditional::Conflict) => lost(format!(
                "its lease {} was taken over by another run",
                remote.url
            )),
            Err(e) if now_epoch() < previous_expiry => {
                lease.expires_epoch = previous_expiry;
                tracing::warn!("job {job_id}: cannot renew its lease yet: {e}");
            }
            Err(e) => lost(format!(
                "its lease {} expired before it could be renewed ({e})",
                remote.url
            )),
        }
    }
}

impl Drop for JobLease {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(r) = self.renewer.take() {
            let _ = r.join();
        }
        // Delete it only while it is still ours.
        if let Ok(Some((bytes, _))) = self.remote.get()
            && serde_json::from_slice::<Lease>(&bytes).is_ok_and(|l| l.holder == self.holder)
            && let Err(e) = self.remote.delete()
        {
            tracing::warn!("cannot release the job lease {}: {e}", self.remote.url);
        }
    }
}
