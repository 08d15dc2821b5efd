//! What a run reports: rows in and out per op, the export files, the job it belongs to, and
//! the human summary `dj-run` prints.

use std::path::PathBuf;
use std::time::Duration;

/// Rows in and out of one op.
#[derive(Debug, Clone, serde::Serialize)]
pub struct OpReport {
    pub index: usize,
    pub name: String,
    pub kind: &'static str,
    pub rows_in: u64,
    pub rows_out: u64,
}

impl OpReport {
    pub fn removed(&self) -> u64 {
        self.rows_in.saturating_sub(self.rows_out)
    }
}

/// What a run did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunReport {
    pub rows_in: u64,
    pub rows_out: u64,
    pub partitions: usize,
    pub ops: Vec<OpReport>,
    pub export_files: Vec<PathBuf>,
    pub elapsed: Duration,
    /// The job id and directory (partitioned executor).
    pub job: Option<JobReport>,
    /// Partitions that resumed from a checkpoint (their earlier ops did not run again).
    pub resumed_partitions: usize,
    /// The `max_concurrent_partitions` limit, and the most partitions that ran at once.
    pub concurrency_limit: usize,
    pub peak_concurrency: usize,
    /// Saved files that failed verification on resume and were moved aside.
    pub quarantined: Vec<crate::job::checkpoints::Quarantined>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct JobReport {
    pub job_id: String,
    pub job_dir: PathBuf,
    /// The job had completed before: nothing was run or exported.
    pub already_complete: bool,
}

impl RunReport {
    /// The human summary `dj-run` prints.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let w = self
            .ops
            .iter()
            .map(|o| o.name.len())
            .max()
            .unwrap_or(0)
            .max(10);
        s.push_str(&format!(
            "rows in: {}  rows out: {}  partitions: {}\n",
            self.rows_in, self.rows_out, self.partitions
        ));
        for op in &self.ops {
            s.push_str(&format!(
                "  #{:<2} {:<w$}  in {:>10}  kept {:>10}  removed {:>10}\n",
                op.index,
                op.name,
                op.rows_in,
                op.rows_out,
                op.removed()
            ));
        }
        for f in &self.export_files {
            s.push_str(&format!("wrote {}\n", f.display()));
        }
        s.push_str(&format!("elapsed: {:.3}s\n", self.elapsed.as_secs_f64()));
        s
    }
}
