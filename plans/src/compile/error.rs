//! What can go wrong compiling a recipe: each error names the process entry, the op and the
//! column or field at fault, with what the input has instead.

use datafusion::common::DataFusionError;
use dj_udfs::columns::STATS_COLUMN;

#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error(
        "process entry {entry} ({op}): text column `{column}` is not in the input; its columns are: {available}"
    )]
    MissingColumn {
        entry: usize,
        op: String,
        column: String,
        available: String,
    },
    #[error(
        "process entry {entry} ({op}): column `{column}` must be a string column, it is {actual}"
    )]
    NotText {
        entry: usize,
        op: String,
        column: String,
        actual: String,
    },
    #[error(
        "process entry {entry} ({op}): field `{field}` is not in the input (`{missing}` is missing; available: {available})"
    )]
    MissingField {
        entry: usize,
        op: String,
        field: String,
        missing: String,
        available: String,
    },
    #[error(
        "process entry {entry} ({op}): a deduplicator after a selector is not supported yet (the selector reorders rows; put the deduplicator first)"
    )]
    DedupAfterSelector { entry: usize, op: String },
    #[error("input column `{STATS_COLUMN}` must be a struct of stats, it is {0}")]
    BadStats(String),
    #[error(transparent)]
    DataFusion(#[from] DataFusionError),
}
