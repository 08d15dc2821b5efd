//! Job utilities for the partitioned executor's job directories, Data-Juicer's `JobUtils`,
//! monitor and stopper done as its documentation promises: progress from the real event files
//! (`events_*.jsonl`, not a missing `events.jsonl`), a stop that honours `--force`, and a list of
//! the jobs under a work directory.
//!
//! * [`job_progress::job_progress`]: per-partition status, current op, completed ops with
//!   durations, rows and throughput, checkpoints; overall counts, percentage, rows processed,
//!   throughput and ETA; the job status from the latest run's events and the lock (`running`,
//!   `completed`, `failed`, `stopped`, or `dead` when the last run neither completed nor failed
//!   and nothing holds the lock).
//! * [`list::list_jobs`]: every job directory under a work directory.
//! * [`stop::stop_job`]: SIGTERM (graceful: the run logs `job_failed` with status `stopped`,
//!   releases its lock and stays resumable) or SIGKILL (`force`), then waits and reports.
//!
//! The `dj-job` binary ([`job_main`]) prints these as reports or, with `--json`, as JSON, and
//! serves them as a live page ([`serve`]); `dj-sql`
//! ([`crate::sql`]) queries a job's checkpoints, export, events and input with DataFusion SQL.

mod cli;
mod dir;
mod job_progress;
mod list;
mod report;
mod serve;
mod stop;
#[cfg(test)]
mod tests;

pub use cli::job_main;
pub(crate) use dir::{effective_recipe, load_job_summary, require_job_dir};
