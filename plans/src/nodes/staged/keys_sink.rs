//! `DjDedupKeys`: stage 1 of a staged dedup (see [`super`]). Drains one partition's rows
//! entering the dedup and writes their keys to the partition's sealed key file; returns the row
//! count. Runs where the partition's pass runs (a cluster executor).

use std::cmp::Ordering;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::array::{AsArray, RecordBatch, UInt64Array};
use datafusion::arrow::datatypes::{SchemaRef, UInt64Type};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DFSchemaRef, DataFusionError, Result, exec_datafusion_err};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{Expr, LogicalPlan, UserDefinedLogicalNodeCore};
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use datafusion::parquet::file::metadata::KeyValue;
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, Distribution, ExecutionPlan, Partitioning, PlanProperties,
    ReplaceChildrenOptions,
};
use dj_udfs::DedupKind;
use futures::StreamExt;

use super::{count_schema, keys_schema, row_id};
use crate::drop_behind::DropBehindWriter;
use crate::nodes::keys::Keys;
use crate::nodes::keys::keys_of;
use crate::seal::{HashingWriter, SealedFile};

/// Output column of the sink: the rows whose keys it wrote.
pub const ROWS: &str = "rows";

/// A partition's key file being written under a temporary name: rows `(id, key_hi, key_lo)`.
pub struct KeysWriter {
    writer: ArrowWriter<HashingWriter<DropBehindWriter>>,
    sealed: SealedFile,
    path: PathBuf,
    partition: usize,
    rows: u64,
}

impl KeysWriter {
    pub fn create(path: &Path, partition: usize) -> Result<KeysWriter> {
        let (sealed, w) = SealedFile::create(path).map_err(|e| file_error(path, e))?;
        let writer = ArrowWriter::try_new(w, keys_schema(), None)?;
        Ok(KeysWriter {
            writer,
            sealed,
            path: path.to_path_buf(),
            partition,
            rows: 0,
        })
    }

    /// Appends the keys of the partition's next rows.
    pub fn write(&mut self, keys: &Keys) -> Result<()> {
        let n = keys.keys.len();
        let (mut ids, mut his, mut los) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        for i in 0..keys.rows() {
            let id = row_id(self.partition, self.rows + i as u64);
            for key in keys.row(i) {
                ids.push(id);
                his.push((key >> 64) as u64);
                los.push(*key as u64);
            }
        }
        self.rows += keys.rows() as u64;
        if self.rows > u32::MAX as u64 {
            return Err(exec_datafusion_err!(
                "{}: a partition of more than {} rows cannot be deduplicated in stages",
                self.path.display(),
                u32::MAX
            ));
        }
        let batch = RecordBatch::try_new(
            keys_schema(),
            vec![
                Arc::new(UInt64Array::from(ids)),
                Arc::new(UInt64Array::from(his)),
                Arc::new(UInt64Array::from(los)),
            ],
        )?;
        self.writer.write(&batch)?;
        Ok(())
    }

    /// Seals the file and renames it into place; returns the rows written.
    pub fn commit(mut self) -> Result<u64> {
        self.writer
            .append_key_value_metadata(KeyValue::new(ROWS_KEY.into(), self.rows.to_string()));
        let inner = self.writer.into_inner()?;
        self.sealed
            .commit(inner)
            .map_err(|e| file_error(&self.path, e))?;
        Ok(self.rows)
    }
}

/// Key-value metadata of a key file: the partition's row count (rows without keys included).
const ROWS_KEY: &str = "dj.rows";

/// A partition's keys from its key file (checked against its seal): what a local run resuming
/// a job the cluster ran gives its barrier.
pub fn read_keys_file(path: &Path) -> Result<Keys> {
    crate::seal::verify(path).map_err(|e| file_error(path, e))?;
    let file = std::fs::File::open(path).map_err(|e| file_error(path, e))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file)?;
    let rows: u64 = (builder.metadata().file_metadata().key_value_metadata())
        .and_then(|kv| kv.iter().find(|k| k.key == ROWS_KEY))
        .and_then(|k| k.value.as_deref()?.parse().ok())
        .ok_or_else(|| file_error(path, format!("no {ROWS_KEY} metadata")))?;
    let mut keys = Keys::new();
    let mut row: Vec<u128> = Vec::new();
    let mut at = 0u64;
    for batch in builder.build()? {
        let batch = batch?;
        let column = |i: usize| {
            batch
                .column(i)
                .as_primitive::<UInt64Type>()
                .values()
                .clone()
        };
        let (ids, his, los) = (column(0), column(1), column(2));
        for ((&id, &hi), &lo) in ids.iter().zip(his.iter()).zip(los.iter()) {
            let r = id & u32::MAX as u64;
            if r < at || r >= rows {
                return Err(file_error(
                    path,
                    format!("row {r} out of order or past {rows} rows"),
                ));
            }
            while at < r {
                keys.push_row(row.drain(..));
                at += 1;
            }
            row.push((hi as u128) << 64 | lo as u128);
        }
    }
    while at < rows {
        keys.push_row(row.drain(..));
        at += 1;
    }
    Ok(keys)
}

fn file_error(path: &Path, e: impl fmt::Display) -> DataFusionError {
    exec_datafusion_err!("dedup key file {}: {e}", path.display())
}

/// Logical stage-1 sink of dedup op `index` for partition `partition`.
#[derive(Debug, Clone)]
pub struct KeysSinkNode {
    pub input: LogicalPlan,
    pub index: usize,
    pub op_name: String,
    pub hash_column: String,
    pub kind: DedupKind,
    pub partition: usize,
    pub path: PathBuf,
    schema: DFSchemaRef,
}

impl KeysSinkNode {
    pub fn try_new(
        input: LogicalPlan,
        index: usize,
        op_name: String,
        hash_column: String,
        kind: DedupKind,
        partition: usize,
        path: PathBuf,
    ) -> Result<Self> {
        let (_, schema) = count_schema(ROWS)?;
        Ok(KeysSinkNode {
            input,
            index,
            op_name,
            hash_column,
            kind,
            partition,
            path,
            schema,
        })
    }
}

impl PartialEq for KeysSinkNode {
    fn eq(&self, o: &Self) -> bool {
        self.path == o.path && self.input == o.input
    }
}
impl Eq for KeysSinkNode {}
impl std::hash::Hash for KeysSinkNode {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.path.hash(state);
        self.input.hash(state);
    }
}
impl PartialOrd for KeysSinkNode {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        self.path.partial_cmp(&o.path)
    }
}

impl UserDefinedLogicalNodeCore for KeysSinkNode {
    fn name(&self) -> &str {
        "DjDedupKeys"
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
            "DjDedupKeys: #{} {} keys of {} -> {}",
            self.index,
            self.op_name,
            self.hash_column,
            self.path.display()
        )
    }
    fn with_exprs_and_inputs(
        &self,
        _exprs: Vec<Expr>,
        mut inputs: Vec<LogicalPlan>,
    ) -> Result<Self> {
        Ok(KeysSinkNode {
            input: inputs.swap_remove(0),
            ..self.clone()
        })
    }
}

/// Physical side of [`KeysSinkNode`].
#[derive(Debug)]
pub struct KeysSinkExec {
    input: Arc<dyn ExecutionPlan>,
    hash_index: usize,
    pub index: usize,
    pub op_name: String,
    pub kind: DedupKind,
    pub partition: usize,
    pub path: PathBuf,
    schema: SchemaRef,
    properties: Arc<PlanProperties>,
}

impl KeysSinkExec {
    pub fn try_new(
        input: Arc<dyn ExecutionPlan>,
        hash_column: &str,
        index: usize,
        op_name: String,
        kind: DedupKind,
        partition: usize,
        path: PathBuf,
    ) -> Result<Self> {
        let hash_index = input.schema().index_of(hash_column)?;
        let (schema, _) = count_schema(ROWS)?;
        Ok(KeysSinkExec {
            input,
            hash_index,
            index,
            op_name,
            kind,
            partition,
            path,
            properties: sink_properties(&schema),
            schema,
        })
    }

    pub fn hash_column(&self) -> String {
        self.input.schema().field(self.hash_index).name().clone()
    }
}

/// One output partition, one batch at the end.
pub(super) fn sink_properties(schema: &SchemaRef) -> Arc<PlanProperties> {
    Arc::new(PlanProperties::new(
        EquivalenceProperties::new(schema.clone()),
        Partitioning::UnknownPartitioning(1),
        EmissionType::Final,
        Boundedness::Bounded,
    ))
}

impl DisplayAs for KeysSinkExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "KeysSinkExec: #{} {} keys of {} -> {}",
            self.index,
            self.op_name,
            self.hash_column(),
            self.path.display()
        )
    }
}

/// The `ExecutionPlan` methods of a sink over one input that needs it as one partition.
macro_rules! sink_exec_methods {
    ($name:literal, |$this:ident, $child:ident| $rebuild:expr) => {
        fn name(&self) -> &str {
            $name
        }
        fn properties(&self) -> &Arc<PlanProperties> {
            &self.properties
        }
        fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
            vec![&self.input]
        }
        fn required_input_distribution(&self) -> Vec<Distribution> {
            vec![Distribution::SinglePartition]
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
            let $this = self;
            let $child = children.swap_remove(0);
            Ok(Arc::new($rebuild?))
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
    };
}
pub(super) use sink_exec_methods;

impl ExecutionPlan for KeysSinkExec {
    sink_exec_methods!("KeysSinkExec", |this, child| KeysSinkExec::try_new(
        child,
        &this.hash_column(),
        this.index,
        this.op_name.clone(),
        this.kind,
        this.partition,
        this.path.clone()
    ));
    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let mut input = self.input.execute(partition, context)?;
        let (kind, col, path, logical) = (
            self.kind,
            self.hash_index,
            self.path.clone(),
            self.partition,
        );
        let schema = self.schema.clone();
        let out = schema.clone();
        let written = futures::stream::once(async move {
            let mut writer = KeysWriter::create(&path, logical)?;
            while let Some(batch) = input.next().await {
                let mut keys = Keys::new();
                keys_of(kind, &batch?, col, &mut keys)?;
                writer.write(&keys)?;
            }
            let rows = writer.commit()?;
            Ok(RecordBatch::try_new(
                out,
                vec![Arc::new(UInt64Array::from(vec![rows]))],
            )?)
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, written)))
    }
}
