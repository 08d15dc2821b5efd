//! Exact, MinHash and SimHash dedup decided by a cluster's executors, in stages whose outputs
//! are sealed files in the job directory, so that no process (client or executor) holds every
//! key:
//!
//! 1. **keys**: each partition's pass writes its rows' keys, [`KeysSinkExec`], as
//!    `dedup_keys_op_XXXX_partition_YYYY.parquet`: rows `(id, key_hi, key_lo)`, one per key (one
//!    per row for exact dedup and SimHash, one per LSH band for MinHash), `id = partition << 32 | row`: the
//!    stable row id, from the logical partition and the row's place in it, never arrival order.
//! 2. **edges**: one query over every key file ([`decision_plan`]): `min(id) OVER (PARTITION BY
//!    key ORDER BY id)` is each row's bucket's first row, and every row that is not its bucket's
//!    first gives an edge `(id, first)` (SimHash keeps the first rows too, with their values).
//!    DataFusion plans it as a hash repartition on the key
//!    (a shuffle between Ballista's executors) and a sort per bucket range that spills.
//! 3. **components** ([`RemovedSinkExec`], on one executor): exact dedup removes every edge's
//!    row; MinHash runs a union-find over the rows in edges only (8 bytes of id and 4 of parent
//!    per such row; the edges wait in a spill file), and removes every row that is not the
//!    smallest of its component: Data-Juicer's survivor. SimHash first adds the edges between
//!    the first rows of distinct values within its Hamming distance, found with simhash-cpp's
//!    block permutations, each permutation sorted on the executor's disk within the run's
//!    memory budget (see [`super::sorted_simhash`]), then does as MinHash. Each partition's sorted removed rows are
//!    written to `dedup_removed_op_XXXX/partition_YYYY.parquet` under a temporary directory
//!    name, renamed into place once whole.
//! 4. each partition's final plan filters its rows through its own list (a `DedupExec` decided
//!    by lists).
//!
//! Why this shape: a near-duplicate component can span every partition, so some step must see
//! its edges together. Large-star/small-star rounds would keep that step distributed, at
//! O(log n) shuffles of every edge; a union-find over the duplicated rows alone is one pass and
//! 12 bytes per duplicated row (1.2 GB for 100M duplicated rows), which is the lesser cost up to
//! billions of documents. The window replaces the join a "bucket's first row" would otherwise
//! need (DataFusion's hash joins cannot spill; its sorts can). SimHash's near values are not a
//! key's bucket, so its search is not a query: it runs where the components do, on the
//! distinct values only, which it sorts once per permutation.

mod keys_sink;
mod removed;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::common::{DFSchema, DFSchemaRef, Result};
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::listing::{
    ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl,
};
use datafusion::datasource::provider_as_source;
use datafusion::functions_aggregate::min_max::min_udaf;
use datafusion::logical_expr::expr::WindowFunction;
use datafusion::logical_expr::{
    Expr, ExprFunctionExt, Extension, LogicalPlan, LogicalPlanBuilder, WindowFunctionDefinition,
};
use datafusion::prelude::col;
use dj_udfs::DedupKind;

pub use keys_sink::{KeysSinkExec, KeysSinkNode, KeysWriter, read_keys_file};
pub use removed::{Decision, RemovedSinkExec, RemovedSinkNode, read_removed};

/// Column of a key file and of an edge: the row id, `partition << 32 | row`.
pub const ID: &str = "id";
/// Columns of a key file: the key's high and low 64 bits.
pub const KEY_HI: &str = "key_hi";
pub const KEY_LO: &str = "key_lo";
/// Column of an edge: the first row of the bucket `id` is in.
pub const FIRST: &str = "first";

/// File name of partition `partition`'s keys at dedup op `op`, decided in stages.
pub fn keys_parquet_name(op: usize, partition: usize) -> String {
    format!("dedup_keys_op_{op:04}_partition_{partition:04}.parquet")
}

/// Directory name of dedup op `op`'s removed-row lists, one file per partition.
pub fn removed_dir_name(op: usize) -> String {
    format!("dedup_removed_op_{op:04}")
}

/// File name of partition `partition`'s removed rows in its op's [`removed_dir_name`].
pub fn removed_file_name(partition: usize) -> String {
    format!("partition_{partition:04}.parquet")
}

/// The stable id of row `row` of logical partition `partition`.
pub fn row_id(partition: usize, row: u64) -> u64 {
    (partition as u64) << 32 | row
}

/// Schema of a key file.
pub fn keys_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new(ID, DataType::UInt64, false),
        Field::new(KEY_HI, DataType::UInt64, false),
        Field::new(KEY_LO, DataType::UInt64, false),
    ]))
}

/// A one-column, one-row schema: what a sink node returns (`name`: a count).
fn count_schema(name: &str) -> Result<(SchemaRef, DFSchemaRef)> {
    let schema = Arc::new(Schema::new(vec![Field::new(name, DataType::UInt64, false)]));
    let df = Arc::new(DFSchema::try_from(schema.as_ref().clone())?);
    Ok((schema, df))
}

/// Stages 2 and 3 as one plan: the edges of every key file in `keys`, decided into `dir`'s
/// removed lists for `partitions` partitions (a SimHash search sorting within `budget_bytes`). Runs wherever the session runs it (on a
/// Ballista cluster: the shuffle and the sort on the executors).
pub fn decision_plan(
    keys: &[PathBuf],
    (index, op_name): (usize, &str),
    kind: DedupKind,
    partitions: usize,
    dir: &Path,
    budget_bytes: usize,
) -> Result<LogicalPlan> {
    let urls = keys
        .iter()
        .map(|p| ListingTableUrl::parse(p.to_string_lossy()))
        .collect::<Result<Vec<_>>>()?;
    let options =
        ListingOptions::new(Arc::new(ParquetFormat::default())).with_file_extension(".parquet");
    let config = ListingTableConfig::new_with_multi_paths(urls)
        .with_listing_options(options)
        .with_schema(keys_schema());
    let table = ListingTable::try_new(config)?;
    let min = WindowFunction::new(
        WindowFunctionDefinition::AggregateUDF(min_udaf()),
        vec![col(ID)],
    );
    let first = Expr::from(min)
        .partition_by(vec![col(KEY_HI), col(KEY_LO)])
        .order_by(vec![col(ID).sort(true, false)])
        .build()?
        .alias(FIRST);
    let scan = LogicalPlanBuilder::scan("dedup_keys", provider_as_source(Arc::new(table)), None)?
        .window(vec![first])?;
    let edges = match kind {
        // Every row: the first of each value, with the value, is searched for near values.
        DedupKind::SimHash { .. } => scan.project(vec![col(ID), col(FIRST), col(KEY_LO)])?,
        _ => scan
            .filter(col(ID).not_eq(col(FIRST)))?
            .project(vec![col(ID), col(FIRST)])?,
    };
    let decision = Decision {
        index,
        op_name: op_name.to_string(),
        kind,
        partitions,
        dir: dir.to_path_buf(),
        budget_bytes,
    };
    Ok(LogicalPlan::Extension(Extension {
        node: Arc::new(RemovedSinkNode::try_new(edges.build()?, decision)?),
    }))
}

#[cfg(test)]
mod tests;
