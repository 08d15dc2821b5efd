//! `dj-sql`: a job directory as SQL tables in a DataFusion `SessionContext`.
//!
//! * `checkpoint_op_XXXX_partition_YYYY`: every checkpoint file (parquet, Arrow IPC, jsonl,
//!   jsonl.gz), named after its file stem; `checkpoint_op_XXXX`: a view that is the `UNION ALL`
//!   of that op's partitions in partition order (JSON checkpoints share one schema inferred over
//!   all of the op's files, so the union lines up).
//! * `export` (and `export_stats`): the job's export, from `job_summary.json`'s `export_files`,
//!   else the recipe copy's `export_path`.
//! * `events`: every event of every `events_*.jsonl`, with a schema inferred over all events in
//!   first-appearance order (events have different keys; `metadata` is a struct).
//! * `input`: the recipe's `dataset_path`, one DataFusion partition per saved logical partition;
//!   `input_partition_YYYY`: each partition's rows `[start_row, end_row)`.
//!
//! Relative paths in the job files are relative to the directory the job was run from, which is
//! recovered from where the job directory is (`work_dir`); the current directory is the fallback.

mod cli;
mod events_table;
mod output;
mod paths;
mod register;
mod statements;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::prelude::{SessionConfig, SessionContext};
use serde::Serialize;

pub use cli::sql_main;
pub(crate) use output::{OutputFormat, format_result};
pub(crate) use statements::split_statements;

use crate::jobtools::{effective_recipe, load_job_summary, require_job_dir};
use paths::run_dirs;

/// A table (or view) registered for a job.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct TableEntry {
    pub name: String,
    /// `checkpoint`, `checkpoint view`, `export`, `export stats`, `events`, `input`,
    /// `input partition`.
    pub kind: String,
    /// Where its rows come from.
    pub source: String,
}

/// A job's tables in a DataFusion session.
pub(crate) struct JobSql {
    pub ctx: SessionContext,
    pub job_dir: PathBuf,
    pub tables: Vec<TableEntry>,
    /// Parts of the job that could not be registered (missing export, unreadable input, ...).
    pub warnings: Vec<String>,
}

impl std::fmt::Debug for JobSql {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobSql")
            .field("job_dir", &self.job_dir)
            .field("tables", &self.tables)
            .field("warnings", &self.warnings)
            .finish()
    }
}

/// A query's result.
#[derive(Debug, Clone)]
pub(crate) struct QueryResult {
    pub schema: SchemaRef,
    pub batches: Vec<RecordBatch>,
}

impl QueryResult {
    pub(crate) fn num_rows(&self) -> usize {
        self.batches.iter().map(|b| b.num_rows()).sum()
    }
}

impl JobSql {
    /// Registers every table of the job in `job_dir`.
    pub(crate) async fn open(job_dir: &Path) -> Result<JobSql> {
        require_job_dir(job_dir)?;
        let config = SessionConfig::new().with_information_schema(true);
        let mut s = JobSql {
            ctx: SessionContext::new_with_config(config),
            job_dir: job_dir.to_path_buf(),
            tables: vec![],
            warnings: vec![],
        };
        let summary = load_job_summary(job_dir).unwrap_or(None);
        let recipe = effective_recipe(job_dir);
        let bases = run_dirs(job_dir, summary.as_ref(), recipe.as_ref());
        s.register_checkpoints().await;
        s.register_export(summary.as_ref(), recipe.as_ref(), &bases)
            .await;
        if let Err(e) = s.register_events() {
            s.warnings
                .push(format!("table `events` not registered: {e:#}"));
        }
        s.register_input(recipe.as_ref(), &bases).await;
        Ok(s)
    }

    fn add(&mut self, name: &str, kind: &str, source: impl Into<String>) {
        self.tables.push(TableEntry {
            name: name.into(),
            kind: kind.into(),
            source: source.into(),
        });
    }

    /// Runs one SQL statement and collects its result.
    pub(crate) async fn query(&self, sql: &str) -> Result<QueryResult> {
        let df = self.ctx.sql(sql).await?;
        let schema = df.schema().inner().clone();
        let batches = df.collect().await?;
        Ok(QueryResult { schema, batches })
    }

    /// `\d`: the registered tables.
    pub(crate) fn describe_tables(&self) -> String {
        let wn = self
            .tables
            .iter()
            .map(|t| t.name.len())
            .max()
            .unwrap_or(4)
            .max(4);
        let wk = self
            .tables
            .iter()
            .map(|t| t.kind.len())
            .max()
            .unwrap_or(4)
            .max(4);
        let mut s = format!("{:<wn$}  {:<wk$}  source\n", "name", "kind");
        for t in &self.tables {
            s.push_str(&format!("{:<wn$}  {:<wk$}  {}\n", t.name, t.kind, t.source));
        }
        s
    }

    /// `\d NAME`: a table's columns.
    pub(crate) async fn describe_table(&self, name: &str) -> Result<String> {
        let df = self
            .ctx
            .table(name)
            .await
            .with_context(|| format!("no table {name:?} (\\d lists them)"))?;
        let schema = df.schema().as_arrow();
        let w = schema
            .fields()
            .iter()
            .map(|f| f.name().len())
            .max()
            .unwrap_or(6)
            .max(6);
        let mut s = format!("{:<w$}  type\n", "column");
        for f in schema.fields() {
            s.push_str(&format!("{:<w$}  {}\n", f.name(), f.data_type()));
        }
        Ok(s)
    }
}
