//! `DjDedupRemoved`: stage 3 of a staged dedup (see [`super`]). Turns the edges into each
//! partition's sorted list of removed rows, written whole under a temporary directory and renamed
//! into place; and [`read_removed`], how a partition's final plan reads its list back.

use std::cmp::Ordering;
use std::fmt;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::array::{AsArray, RecordBatch, UInt32Array, UInt64Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, UInt32Type, UInt64Type};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DFSchemaRef, DataFusionError, Result, exec_datafusion_err, exec_err};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{Expr, LogicalPlan, UserDefinedLogicalNodeCore};
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, Distribution, ExecutionPlan, PlanProperties,
    ReplaceChildrenOptions,
};
use dj_udfs::DedupKind;
use futures::StreamExt;

use super::keys_sink::{sink_exec_methods, sink_properties};
use super::{FIRST, ID, count_schema, removed_file_name};
use crate::nodes::spill::Spill;
use crate::seal::SealedFile;

/// Output column of the sink: the rows it removed.
pub const REMOVED: &str = "removed";
/// Column of a removed-rows file: the row in its partition.
const ROW: &str = "row";

/// Logical stage-3 sink of dedup op `index`: edges `(id, first)` in, lists in `dir`.
#[derive(Debug, Clone)]
pub struct RemovedSinkNode {
    pub input: LogicalPlan,
    pub index: usize,
    pub op_name: String,
    pub kind: DedupKind,
    pub partitions: usize,
    pub dir: PathBuf,
    schema: DFSchemaRef,
}

impl RemovedSinkNode {
    pub fn try_new(
        input: LogicalPlan,
        index: usize,
        op_name: String,
        kind: DedupKind,
        partitions: usize,
        dir: PathBuf,
    ) -> Result<Self> {
        let (_, schema) = count_schema(REMOVED)?;
        Ok(RemovedSinkNode {
            input,
            index,
            op_name,
            kind,
            partitions,
            dir,
            schema,
        })
    }
}

impl PartialEq for RemovedSinkNode {
    fn eq(&self, o: &Self) -> bool {
        self.dir == o.dir && self.input == o.input
    }
}
impl Eq for RemovedSinkNode {}
impl std::hash::Hash for RemovedSinkNode {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.dir.hash(state);
        self.input.hash(state);
    }
}
impl PartialOrd for RemovedSinkNode {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        self.dir.partial_cmp(&o.dir)
    }
}

impl UserDefinedLogicalNodeCore for RemovedSinkNode {
    fn name(&self) -> &str {
        "DjDedupRemoved"
    }
    fn inputs(&self) -> Vec<&LogicalPlan> {
        vec![&self.input]
    }
    fn schema(&self) -> &DFSchemaRef {
        &self.schema
    }
    fn expressions(&self) -> Vec<Expr> {
        vec![]
    }
    fn fmt_for_explain(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "DjDedupRemoved: #{} {} removed rows of {} partitions -> {}",
            self.index,
            self.op_name,
            self.partitions,
            self.dir.display()
        )
    }
    fn with_exprs_and_inputs(
        &self,
        _exprs: Vec<Expr>,
        mut inputs: Vec<LogicalPlan>,
    ) -> Result<Self> {
        Ok(RemovedSinkNode {
            input: inputs.swap_remove(0),
            ..self.clone()
        })
    }
}

/// Physical side of [`RemovedSinkNode`]: needs its edges as one partition.
#[derive(Debug)]
pub struct RemovedSinkExec {
    input: Arc<dyn ExecutionPlan>,
    pub index: usize,
    pub op_name: String,
    pub kind: DedupKind,
    pub partitions: usize,
    pub dir: PathBuf,
    schema: SchemaRef,
    properties: Arc<PlanProperties>,
}

impl RemovedSinkExec {
    pub fn try_new(
        input: Arc<dyn ExecutionPlan>,
        index: usize,
        op_name: String,
        kind: DedupKind,
        partitions: usize,
        dir: PathBuf,
    ) -> Result<Self> {
        if matches!(kind, DedupKind::SimHash { .. }) {
            return exec_err!("dedup op #{index} {op_name}: SimHash is not decided in stages");
        }
        let (schema, _) = count_schema(REMOVED)?;
        Ok(RemovedSinkExec {
            input,
            index,
            op_name,
            kind,
            partitions,
            dir,
            properties: sink_properties(&schema),
            schema,
        })
    }
}

impl DisplayAs for RemovedSinkExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "RemovedSinkExec: #{} {} removed rows of {} partitions -> {}",
            self.index,
            self.op_name,
            self.partitions,
            self.dir.display()
        )
    }
}

impl ExecutionPlan for RemovedSinkExec {
    sink_exec_methods!("RemovedSinkExec", |this, child| RemovedSinkExec::try_new(
        child,
        this.index,
        this.op_name.clone(),
        this.kind,
        this.partitions,
        this.dir.clone()
    ));
    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let mut input = self.input.execute(partition, context)?;
        let components = self.kind == DedupKind::MinHashBands;
        let (dir, partitions) = (self.dir.clone(), self.partitions);
        let schema = self.schema.clone();
        let out = schema.clone();
        let decided = futures::stream::once(async move {
            let (id, first) = (
                input.schema().index_of(ID)?,
                input.schema().index_of(FIRST)?,
            );
            // Every row in an edge; MinHash keeps the edges (on disk) for the union-find.
            // A row is in an edge per band it shares: kept distinct as they come.
            let mut rows: Vec<u64> = Vec::new();
            let mut distinct_at = 1 << 20;
            let mut edges = Spill::default();
            while let Some(batch) = input.next().await {
                let batch = batch?;
                rows.extend(batch.column(id).as_primitive::<UInt64Type>().values());
                if components {
                    rows.extend(batch.column(first).as_primitive::<UInt64Type>().values());
                    edges.write(&batch.project(&[id, first])?)?;
                }
                if rows.len() >= distinct_at {
                    rows.sort_unstable();
                    rows.dedup();
                    distinct_at = (rows.len() * 2).max(1 << 20);
                }
            }
            let removed = tokio::task::spawn_blocking(move || -> Result<u64> {
                rows.sort_unstable();
                rows.dedup();
                let removed = if components {
                    let edges = edges.finish()?;
                    let batches: Box<dyn Iterator<Item = Result<RecordBatch>>> = match edges {
                        None => Box::new(std::iter::empty()),
                        Some(e) => Box::new(e.read()?.map(|b| Ok(b?))),
                    };
                    not_smallest_of_component(rows, batches)?
                } else {
                    rows
                };
                write_lists(&dir, partitions, &removed)?;
                Ok(removed.len() as u64)
            })
            .await
            .map_err(|e| DataFusionError::External(Box::new(e)))??;
            Ok(RecordBatch::try_new(
                out,
                vec![Arc::new(UInt64Array::from(vec![removed]))],
            )?)
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, decided)))
    }
}

/// The rows (sorted, distinct `rows`: every row of an edge) that are not the smallest of their
/// component, by a union-find over `edges` (`(id, first)` batches) on dense indices: 8 bytes of id
/// and 4 of parent per row. A root is always the smallest index of its component, and indices
/// follow ids.
fn not_smallest_of_component(
    rows: Vec<u64>,
    edges: impl Iterator<Item = Result<RecordBatch>>,
) -> Result<Vec<u64>> {
    if rows.len() > u32::MAX as usize {
        return exec_err!("more than {} duplicated rows in one dedup", u32::MAX);
    }
    let mut parent: Vec<u32> = (0..rows.len() as u32).collect();
    fn find(parent: &mut [u32], mut x: u32) -> u32 {
        while parent[x as usize] != x {
            parent[x as usize] = parent[parent[x as usize] as usize];
            x = parent[x as usize];
        }
        x
    }
    let at = |id: u64| -> Result<u32> {
        rows.binary_search(&id)
            .map(|i| i as u32)
            .map_err(|_| exec_datafusion_err!("edge row {id} missing from the edge rows"))
    };
    for batch in edges {
        let batch = batch?;
        let ids = batch.column(0).as_primitive::<UInt64Type>().values();
        let firsts = batch.column(1).as_primitive::<UInt64Type>().values();
        for (&a, &b) in ids.iter().zip(firsts.iter()) {
            let (ra, rb) = (find(&mut parent, at(a)?), find(&mut parent, at(b)?));
            if ra != rb {
                parent[ra.max(rb) as usize] = ra.min(rb);
            }
        }
    }
    let mut removed = Vec::new();
    for i in 0..rows.len() as u32 {
        if find(&mut parent, i) != i {
            removed.push(rows[i as usize]);
        }
    }
    Ok(removed)
}

fn list_error(path: &Path, e: impl fmt::Display) -> DataFusionError {
    exec_datafusion_err!("dedup removed-rows list {}: {e}", path.display())
}

fn row_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![Field::new(ROW, DataType::UInt32, false)]))
}

/// Writes one sealed file per partition (the rows of `removed`, sorted ids, in it) into a
/// temporary directory beside `dir`, then renames it to `dir`: `dir` exists only whole. A
/// leftover temporary directory (a crash) is removed with the job's saved work.
fn io(path: &Path) -> impl Fn(std::io::Error) -> DataFusionError + '_ {
    move |e| list_error(path, e)
}

fn write_lists(dir: &Path, partitions: usize, removed: &[u64]) -> Result<()> {
    let name = dir
        .file_name()
        .ok_or_else(|| list_error(dir, "no directory name"))?
        .to_string_lossy();
    // A name of its own: a job whose client died may still be deciding the same op.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let tmp = dir.with_file_name(format!("{name}.tmp-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&tmp).map_err(io(&tmp))?;
    let mut at = 0;
    for p in 0..partitions {
        let end = at + removed[at..].partition_point(|&id| id >> 32 <= p as u64);
        let rows: UInt32Array = removed[at..end].iter().map(|&id| id as u32).collect();
        at = end;
        let path = tmp.join(removed_file_name(p));
        let (sealed, w) = SealedFile::create(&path).map_err(io(&path))?;
        let mut writer = ArrowWriter::try_new(w, row_schema(), None)?;
        writer.write(&RecordBatch::try_new(row_schema(), vec![Arc::new(rows)])?)?;
        sealed.commit(writer.into_inner()?).map_err(io(&path))?;
    }
    if at != removed.len() {
        return exec_err!(
            "row id {} is past the {partitions} partitions of {}",
            removed[at],
            dir.display()
        );
    }
    File::open(&tmp)
        .and_then(|d| d.sync_all())
        .map_err(io(&tmp))?;
    if dir.exists() {
        // Decided already (the same lists: the decision is deterministic); keep those, which
        // plans may be reading.
        return std::fs::remove_dir_all(&tmp).map_err(io(&tmp));
    }
    std::fs::rename(&tmp, dir).map_err(io(dir))?;
    if let Some(parent) = dir.parent() {
        File::open(parent)
            .and_then(|d| d.sync_all())
            .map_err(io(parent))?;
    }
    Ok(())
}

#[cfg(test)]
pub(super) fn write_lists_for_test(dir: &Path, partitions: usize, removed: &[u64]) {
    write_lists(dir, partitions, removed).unwrap()
}

/// Partition `partition`'s removed rows (ascending) from the lists in `dir`, checked against
/// their seal.
pub fn read_removed(dir: &Path, partition: usize) -> Result<Vec<u32>> {
    let path = dir.join(removed_file_name(partition));
    crate::seal::verify(&path).map_err(|e| list_error(&path, e))?;
    let file = File::open(&path).map_err(|e| list_error(&path, e))?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)?.build()?;
    let mut rows = Vec::new();
    for batch in reader {
        let batch = batch?;
        let column = batch
            .column_by_name(ROW)
            .ok_or_else(|| list_error(&path, "no row column"))?;
        rows.extend(column.as_primitive::<UInt32Type>().values());
    }
    if !rows.is_sorted_by(|a, b| a < b) {
        return Err(list_error(&path, "rows not strictly ascending"));
    }
    Ok(rows)
}
