//! `DjDedupRemoved`: stage 3 of a staged dedup (see [`super`]). Turns the edges into each
//! partition's sorted list of removed rows, written whole under a temporary directory and renamed
//! into place; and [`read_removed`], how a partition's final plan reads its list back.

use std::cmp::Ordering;
use std::fmt;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::array::{AsArray, RecordBatch, UInt32Array, UInt64Array};
use datafusion::arrow::compute::filter_record_batch;
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
use super::{FIRST, ID, KEY_LO, count_schema, removed_file_name};
use crate::nodes::external::MemoryBudget;
use crate::nodes::sorted_keys::find;
use crate::nodes::sorted_simhash::{PermutedValues, join_near_values};
use crate::nodes::spill::Spill;
use crate::seal::SealedFile;

/// Output column of the sink: the rows it removed.
pub const REMOVED: &str = "removed";
/// Column of a removed-rows file: the row in its partition.
const ROW: &str = "row";

/// What a stage-3 sink decides: dedup op `index` of `kind` over `partitions` partitions, into the
/// removed-rows lists in `dir`; a SimHash search sorts within `budget_bytes`.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub index: usize,
    pub op_name: String,
    pub kind: DedupKind,
    pub partitions: usize,
    pub dir: PathBuf,
    pub budget_bytes: usize,
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "#{} {} removed rows of {} partitions -> {}",
            self.index,
            self.op_name,
            self.partitions,
            self.dir.display()
        )
    }
}

/// Logical stage-3 sink: edges `(id, first)` in (SimHash: every row, `(id, first, key_lo)`),
/// lists out.
#[derive(Debug, Clone)]
pub struct RemovedSinkNode {
    pub input: LogicalPlan,
    pub decision: Decision,
    schema: DFSchemaRef,
}

impl RemovedSinkNode {
    pub fn try_new(input: LogicalPlan, decision: Decision) -> Result<Self> {
        let (_, schema) = count_schema(REMOVED)?;
        Ok(RemovedSinkNode {
            input,
            decision,
            schema,
        })
    }
}

impl PartialEq for RemovedSinkNode {
    fn eq(&self, o: &Self) -> bool {
        self.decision.dir == o.decision.dir && self.input == o.input
    }
}
impl Eq for RemovedSinkNode {}
impl std::hash::Hash for RemovedSinkNode {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.decision.dir.hash(state);
        self.input.hash(state);
    }
}
impl PartialOrd for RemovedSinkNode {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        self.decision.dir.partial_cmp(&o.decision.dir)
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
        write!(f, "DjDedupRemoved: {}", self.decision)
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
    pub decision: Decision,
    schema: SchemaRef,
    properties: Arc<PlanProperties>,
}

impl RemovedSinkExec {
    pub fn try_new(input: Arc<dyn ExecutionPlan>, decision: Decision) -> Result<Self> {
        let (schema, _) = count_schema(REMOVED)?;
        Ok(RemovedSinkExec {
            input,
            decision,
            properties: sink_properties(&schema),
            schema,
        })
    }
}

impl DisplayAs for RemovedSinkExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RemovedSinkExec: {}", self.decision)
    }
}

impl ExecutionPlan for RemovedSinkExec {
    sink_exec_methods!("RemovedSinkExec", |this, child| RemovedSinkExec::try_new(
        child,
        this.decision.clone()
    ));
    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let mut input = self.input.execute(partition, context)?;
        let decision = self.decision.clone();
        let schema = self.schema.clone();
        let out = schema.clone();
        let decided = futures::stream::once(async move {
            let mut edges = Edges::new(&decision, input.schema().as_ref())?;
            while let Some(batch) = input.next().await {
                edges.add(&batch?)?;
            }
            let removed = tokio::task::spawn_blocking(move || -> Result<u64> {
                let removed = edges.removed()?;
                write_lists(&decision.dir, decision.partitions, &removed)?;
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

/// The edges as they come: every row in one, and (MinHash, SimHash) the edges on disk for the
/// union-find; SimHash's distinct values with their first rows, to search for near ones.
struct Edges {
    kind: DedupKind,
    budget_bytes: usize,
    columns: (usize, usize, Option<usize>),
    /// Every row in an edge; a row is in an edge per band it shares: kept distinct as they come.
    rows: Vec<u64>,
    distinct_at: usize,
    edges: Spill,
    values: Option<PermutedValues>,
}

impl Edges {
    fn new(decision: &Decision, schema: &Schema) -> Result<Edges> {
        let values = match decision.kind {
            DedupKind::SimHash {
                num_blocks,
                hamming_distance,
            } => Some(PermutedValues::first(num_blocks, hamming_distance)?),
            _ => None,
        };
        let value = values
            .is_some()
            .then(|| schema.index_of(KEY_LO))
            .transpose()?;
        Ok(Edges {
            kind: decision.kind,
            budget_bytes: decision.budget_bytes,
            columns: (schema.index_of(ID)?, schema.index_of(FIRST)?, value),
            rows: Vec::new(),
            distinct_at: 1 << 20,
            edges: Spill::default(),
            values,
        })
    }

    fn add(&mut self, batch: &RecordBatch) -> Result<()> {
        let (id, first, value) = self.columns;
        let Some(value) = value else {
            return self.add_edges(batch.project(&[id, first])?);
        };
        let ids = batch.column(id).as_primitive::<UInt64Type>();
        let firsts = batch.column(first).as_primitive::<UInt64Type>();
        let not_first = datafusion::arrow::compute::kernels::cmp::neq(ids, firsts)?;
        let values = batch.column(value).as_primitive::<UInt64Type>().values();
        let searched = self.values.as_mut().expect("SimHash has its values");
        for (i, (&a, &b)) in ids.values().iter().zip(firsts.values()).enumerate() {
            if a == b {
                searched.push(values[i], a)?;
            }
        }
        self.add_edges(filter_record_batch(
            &batch.project(&[id, first])?,
            &not_first,
        )?)
    }

    /// Adds edges `(id, first)`.
    fn add_edges(&mut self, edges: RecordBatch) -> Result<()> {
        self.rows
            .extend(edges.column(0).as_primitive::<UInt64Type>().values());
        if self.kind != DedupKind::Exact {
            self.rows
                .extend(edges.column(1).as_primitive::<UInt64Type>().values());
            self.edges.write(&edges)?;
        }
        if self.rows.len() >= self.distinct_at {
            self.rows.sort_unstable();
            self.rows.dedup();
            self.distinct_at = (self.rows.len() * 2).max(1 << 20);
        }
        Ok(())
    }

    /// The removed rows, sorted: exact dedup's edge rows; the others' rows that are not the
    /// smallest of their component (after SimHash's search for near values). Blocking.
    fn removed(mut self) -> Result<Vec<u64>> {
        if let (
            Some(values),
            DedupKind::SimHash {
                num_blocks,
                hamming_distance,
            },
        ) = (self.values.take(), self.kind)
        {
            let budget = MemoryBudget::new(self.budget_bytes)?;
            let mut near = (Vec::new(), Vec::new());
            join_near_values(&budget, values, num_blocks, hamming_distance, |a, b| {
                near.0.push(a);
                near.1.push(b);
                if near.0.len() == 8192 {
                    self.add_edges(edge_batch(&mut near)?)?;
                }
                Ok(())
            })?;
            self.add_edges(edge_batch(&mut near)?)?;
        }
        self.rows.sort_unstable();
        self.rows.dedup();
        if self.kind == DedupKind::Exact {
            return Ok(self.rows);
        }
        let batches: Box<dyn Iterator<Item = Result<RecordBatch>>> = match self.edges.finish()? {
            None => Box::new(std::iter::empty()),
            Some(e) => Box::new(e.read()?.map(|b| Ok(b?))),
        };
        not_smallest_of_component(self.rows, batches)
    }
}

/// The edges `(a, b)` collected, as a batch of `(id, first)` (which row is which does not
/// matter to a union-find).
fn edge_batch((a, b): &mut (Vec<u64>, Vec<u64>)) -> Result<RecordBatch> {
    let schema = Arc::new(Schema::new(vec![
        Field::new(ID, DataType::UInt64, false),
        Field::new(FIRST, DataType::UInt64, false),
    ]));
    Ok(RecordBatch::try_new(
        schema,
        vec![
            Arc::new(UInt64Array::from(std::mem::take(a))),
            Arc::new(UInt64Array::from(std::mem::take(b))),
        ],
    )?)
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
