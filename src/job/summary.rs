//! `job_summary.json`: what a completed job reports.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::reuse::Reused;

/// `job_summary.json`, written when a job completes (Data-Juicer's keys, in its order). Read
/// leniently: a key it lacks takes its default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    /// Partitions that started from another job's checkpoint (absent when none did).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) reused_checkpoints: Vec<Reused>,
}
