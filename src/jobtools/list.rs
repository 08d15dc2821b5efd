//! Every job directory under a work directory, with its status.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Serialize;

use super::dir::{epoch_now, is_job_dir};
use super::job_progress::{JobProgress, JobStatus, progress_at};

/// One job directory of a work directory.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct JobListing {
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
    /// The latest run's elapsed time (until now while running).
    pub elapsed_seconds: Option<f64>,
    /// Input rows of the job, of its completed partitions, and the rows they produced.
    pub total_samples: u64,
    pub processed_samples: u64,
    pub output_rows: u64,
    /// While running: the estimated seconds left (see `OverallProgress`).
    pub estimated_remaining_seconds: Option<f64>,
}

/// Every job directory under `work_dir`, newest first (by first start time, then id).
pub(crate) fn list_jobs(work_dir: &Path) -> Result<Vec<JobListing>> {
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
        jobs.push(listing(progress_at(&dir, epoch_now())?));
    }
    sort_newest_first(&mut jobs);
    Ok(jobs)
}

/// Every job directory under the work directory `url` on object storage, read through local
/// views (see [`crate::job::mirror::job_view`]); each listed under its URL.
pub(crate) fn list_remote_jobs(url: &str) -> Result<Vec<JobListing>> {
    let mut jobs = Vec::new();
    for id in crate::job::mirror::remote_job_ids(url)? {
        let view = crate::job::mirror::job_view(url, &id, false)?;
        let mut l = listing(progress_at(&view, epoch_now())?);
        l.job_dir = PathBuf::from(format!("{}/{id}", url.trim_end_matches('/')));
        jobs.push(l);
    }
    sort_newest_first(&mut jobs);
    Ok(jobs)
}

fn listing(p: JobProgress) -> JobListing {
    JobListing {
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
        elapsed_seconds: p.elapsed_seconds,
        total_samples: p.overall.total_samples,
        processed_samples: p.overall.processed_samples,
        output_rows: p.overall.output_rows,
        estimated_remaining_seconds: p.overall.estimated_remaining_seconds,
    }
}

fn sort_newest_first(jobs: &mut [JobListing]) {
    jobs.sort_by(|a, b| {
        b.start_time
            .unwrap_or(f64::NEG_INFINITY)
            .total_cmp(&a.start_time.unwrap_or(f64::NEG_INFINITY))
            .then_with(|| b.job_id.cmp(&a.job_id))
    });
}
