//! `DjDedup`: global exact deduplication on a hash column, keeping the first row of each hash in
//! input order (Data-Juicer's `document_deduplicator`), correct across all partitions.
//!
//! The exec runs every input partition concurrently, spills its batches to Arrow IPC files and
//! keeps only 128-bit keys in memory; once all are done, keep-masks are decided in partition
//! order, and output partition `i` streams partition `i`'s spill through its mask.

use std::cmp::Ordering;
use std::collections::HashSet;
use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray, BooleanArray, RecordBatch};
use datafusion::arrow::compute::filter_record_batch;
use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::arrow::ipc::reader::StreamReader;
use datafusion::arrow::ipc::writer::StreamWriter;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DFSchemaRef, DataFusionError, Result};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{Expr, LogicalPlan, UserDefinedLogicalNodeCore};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::stream::RecordBatchReceiverStreamBuilder;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties, ReplaceChildrenOptions,
};
use futures::StreamExt;
use tokio::sync::OnceCell;

/// Logical global dedup after op `index`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DedupNode {
    pub input: LogicalPlan,
    pub index: usize,
    pub op_name: String,
    pub hash_column: String,
}

impl PartialOrd for DedupNode {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        (self.index, &self.op_name, &self.hash_column).partial_cmp(&(
            o.index,
            &o.op_name,
            &o.hash_column,
        ))
    }
}

impl UserDefinedLogicalNodeCore for DedupNode {
    fn name(&self) -> &str {
        "DjDedup"
    }
    fn inputs(&self) -> Vec<&LogicalPlan> {
        vec![&self.input]
    }
    fn schema(&self) -> &DFSchemaRef {
        self.input.schema()
    }
    fn expressions(&self) -> Vec<Expr> {
        vec![]
    }
    fn fmt_for_explain(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "DjDedup: #{} {} keep first per {}",
            self.index, self.op_name, self.hash_column
        )
    }
    fn with_exprs_and_inputs(
        &self,
        _exprs: Vec<Expr>,
        mut inputs: Vec<LogicalPlan>,
    ) -> Result<Self> {
        Ok(DedupNode {
            input: inputs.swap_remove(0),
            ..self.clone()
        })
    }
}

/// One input partition, spilled, with the 128-bit key of each row (None for a null hash,
/// which is never a duplicate).
struct Spilled {
    file: Option<std::fs::File>,
    keys: Vec<Option<u128>>,
}

struct Decided {
    parts: Vec<Spilled>,
    keep: Vec<Vec<bool>>,
}

/// Physical global dedup; see the module docs.
pub struct DedupExec {
    input: Arc<dyn ExecutionPlan>,
    hash_index: usize,
    pub op_name: String,
    state: Arc<OnceCell<Arc<Decided>>>,
}

impl fmt::Debug for DedupExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DedupExec")
            .field("op_name", &self.op_name)
            .field("hash_index", &self.hash_index)
            .finish()
    }
}

impl DedupExec {
    pub fn try_new(
        input: Arc<dyn ExecutionPlan>,
        hash_column: &str,
        op_name: String,
    ) -> Result<Self> {
        let hash_index = input.schema().index_of(hash_column)?;
        Ok(DedupExec {
            input,
            hash_index,
            op_name,
            state: Arc::new(OnceCell::new()),
        })
    }
}

impl DisplayAs for DedupExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let name = self.input.schema().field(self.hash_index).name().clone();
        write!(
            f,
            "DedupExec: {} keep first per {} (global, input order)",
            self.op_name, name
        )
    }
}

/// 128-bit key of a hash value: the value itself when it is 32 hex digits (an MD5), else a
/// BLAKE3 digest prefix of its bytes.
fn key_of(value: &str) -> u128 {
    if value.len() == 32 {
        if let Ok(k) = u128::from_str_radix(value, 16) {
            return k;
        }
    }
    let d = blake3::hash(value.as_bytes());
    u128::from_le_bytes(d.as_bytes()[..16].try_into().unwrap())
}

fn keys_of(batch: &RecordBatch, col: usize, out: &mut Vec<Option<u128>>) -> Result<()> {
    let c = batch.column(col);
    let push = |out: &mut Vec<Option<u128>>, v: Option<&str>| out.push(v.map(key_of));
    match c.data_type() {
        DataType::Utf8 => c.as_string::<i32>().iter().for_each(|v| push(out, v)),
        DataType::LargeUtf8 => c.as_string::<i64>().iter().for_each(|v| push(out, v)),
        DataType::Utf8View => c.as_string_view().iter().for_each(|v| push(out, v)),
        other => {
            return Err(DataFusionError::Execution(format!(
                "hash column must be a string, got {other}"
            )));
        }
    }
    Ok(())
}

async fn spill_partition(
    input: Arc<dyn ExecutionPlan>,
    partition: usize,
    hash_index: usize,
    ctx: Arc<TaskContext>,
) -> Result<Spilled> {
    let mut stream = input.execute(partition, ctx)?;
    let schema = stream.schema();
    let mut keys = Vec::new();
    let mut writer: Option<StreamWriter<std::io::BufWriter<std::fs::File>>> = None;
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        if batch.num_rows() == 0 {
            continue;
        }
        keys_of(&batch, hash_index, &mut keys)?;
        if writer.is_none() {
            // Anonymous temp file: removed by the OS when the last handle closes.
            let f = std::io::BufWriter::new(tempfile::tempfile()?);
            writer = Some(StreamWriter::try_new(f, &schema)?);
        }
        writer.as_mut().unwrap().write(&batch)?;
    }
    let file = match writer {
        Some(mut w) => {
            w.finish()?;
            let mut f = w
                .into_inner()?
                .into_inner()
                .map_err(|e| DataFusionError::IoError(e.into_error()))?;
            std::io::Seek::rewind(&mut f)?;
            Some(f)
        }
        None => None,
    };
    Ok(Spilled { file, keys })
}

async fn decide(
    input: Arc<dyn ExecutionPlan>,
    hash_index: usize,
    ctx: Arc<TaskContext>,
) -> Result<Arc<Decided>> {
    let n = input.properties().partitioning.partition_count();
    let tasks = (0..n).map(|p| {
        let (input, ctx) = (input.clone(), ctx.clone());
        tokio::spawn(spill_partition(input, p, hash_index, ctx))
    });
    let mut parts = Vec::with_capacity(n);
    for t in tasks.collect::<Vec<_>>() {
        parts.push(
            t.await
                .map_err(|e| DataFusionError::External(Box::new(e)))??,
        );
    }
    let mut seen: HashSet<u128> = HashSet::new();
    let keep = parts
        .iter()
        .map(|p| {
            p.keys
                .iter()
                .map(|k| k.is_none_or(|k| seen.insert(k)))
                .collect()
        })
        .collect();
    Ok(Arc::new(Decided { parts, keep }))
}

impl ExecutionPlan for DedupExec {
    fn name(&self) -> &str {
        "DedupExec"
    }
    fn properties(&self) -> &Arc<PlanProperties> {
        self.input.properties()
    }
    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }
    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true]
    }
    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }
    fn replace_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
        _options: ReplaceChildrenOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let name = self.input.schema().field(self.hash_index).name().clone();
        Ok(Arc::new(DedupExec::try_new(
            children.swap_remove(0),
            &name,
            self.op_name.clone(),
        )?))
    }
    #[allow(deprecated)]
    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.replace_children(
            children,
            ReplaceChildrenOptions::new(
                datafusion::physical_plan::ChildrenPropertiesMode::Recompute,
            ),
        )
    }
    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let schema: SchemaRef = self.schema();
        let (state, input, hash_index) = (self.state.clone(), self.input.clone(), self.hash_index);
        let mut builder = RecordBatchReceiverStreamBuilder::new(schema, 2);
        let tx = builder.tx();
        builder.spawn(async move {
            let decided = state
                .get_or_try_init(|| decide(input, hash_index, context))
                .await?
                .clone();
            let Some(file) = &decided.parts[partition].file else {
                return Ok(());
            };
            let file = file.try_clone()?;
            let keep = decided.keep[partition].clone();
            // Reading the spill is blocking file I/O: keep it off the async workers.
            let tx2 = tx.clone();
            tokio::task::spawn_blocking(move || -> Result<()> {
                let reader = StreamReader::try_new(std::io::BufReader::new(file), None)?;
                let mut offset = 0;
                for batch in reader {
                    let batch = batch?;
                    let n = batch.num_rows();
                    let mask = BooleanArray::from(keep[offset..offset + n].to_vec());
                    offset += n;
                    let kept = filter_record_batch(&batch, &mask)?;
                    if kept.num_rows() > 0 && tx2.blocking_send(Ok(kept)).is_err() {
                        break;
                    }
                }
                Ok(())
            })
            .await
            .map_err(|e| DataFusionError::External(Box::new(e)))??;
            drop(decided);
            Ok(())
        });
        Ok(builder.build())
    }
}
