//! What the global nodes use once their keys or values do not fit in memory: the run's
//! [`MemoryBudget`] (one DataFusion memory pool and disk manager), per-partition row files on disk
//! ([`RowFile`]), and [`sort_files`], DataFusion's `SortExec` over all of them within the budget
//! (spilling sorted runs and merging them when they do not fit).

use std::sync::{Arc, Mutex};

use datafusion::arrow::array::{ArrayRef, AsArray, RecordBatch, UInt32Array, UInt64Array};
use datafusion::arrow::compute::SortOptions;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, UInt32Type};
use datafusion::common::{Result, exec_datafusion_err};
use datafusion::execution::memory_pool::{FairSpillPool, MemoryConsumer, MemoryReservation};
use datafusion::execution::runtime_env::{RuntimeEnv, RuntimeEnvBuilder};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{LexOrdering, PhysicalSortExpr};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::expressions::col;
use datafusion::physical_plan::sorts::sort::SortExec;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::{PartitionStream, StreamingTableExec};
use datafusion::prelude::SessionConfig;
use futures::StreamExt;

use super::spill::{Spill, SpillCache, Spilled};

/// The memory a run's global operators may hold: one DataFusion memory pool (fair among the
/// consumers that can spill) and its disk manager (spill files in the OS's temporary directory,
/// `TMPDIR`).
///
/// Besides the pool, the spill files of the rows that global nodes hold back until their
/// barrier decides stay in the page cache up to half the budget ([`MemoryBudget::spill_cache`]); past
/// it they drop behind to the disk.
#[derive(Debug)]
pub struct MemoryBudget {
    runtime: Arc<RuntimeEnv>,
    bytes: usize,
    spill_cache: Arc<SpillCache>,
}

impl MemoryBudget {
    pub fn new(bytes: usize) -> Result<Arc<MemoryBudget>> {
        let runtime = RuntimeEnvBuilder::new()
            .with_memory_pool(Arc::new(FairSpillPool::new(bytes)))
            .build_arc()?;
        Ok(Arc::new(MemoryBudget {
            runtime,
            bytes,
            spill_cache: SpillCache::new(bytes / 2),
        }))
    }

    /// What the temporary files kept in the page cache (spilled rows, staged export fragments)
    /// may take of the budget (half of it).
    pub fn spill_cache(&self) -> Arc<SpillCache> {
        self.spill_cache.clone()
    }

    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The rows of `input` sorted ascending by its column `column`, as a stream: DataFusion's
    /// `SortExec` in this budget, spilling sorted runs to disk and merging them when they do
    /// not fit. `row_bytes`: about what a row takes, to size the batches.
    pub fn sort_stream(
        &self,
        input: SendableRecordBatchStream,
        column: &str,
        row_bytes: usize,
    ) -> Result<SendableRecordBatchStream> {
        let schema = input.schema();
        let source = Arc::new(OneStream {
            stream: Mutex::new(Some(input)),
            schema: schema.clone(),
        });
        sort_exec(source, &schema, [(column, false)])?.execute(0, self.task_ctx(row_bytes))
    }

    /// A reservation of `name` in the pool, for what a barrier holds in memory while it can.
    pub(crate) fn reservation(&self, name: String) -> MemoryReservation {
        MemoryConsumer::new(name)
            .with_can_spill(true)
            .register(&self.runtime.memory_pool)
    }

    /// A task context whose sorts run in this budget: batches and the sort's merge reservation
    /// scaled to it, so that a small budget spills instead of failing. A quarter of the budget
    /// stays reserved for the merge: a sort whose rows end just under the budget merges them in
    /// memory, and that merge's cursors (about 70 KB a sorted run) need room of their own; with a
    /// fixed 10 MB, MinHash keys of 5M rows under a 5.7 GB budget failed there.
    fn task_ctx(&self, row_bytes: usize) -> Arc<TaskContext> {
        let batch = (self.bytes / 64 / row_bytes.max(1)).clamp(256, 8192);
        let mut config = SessionConfig::new().with_batch_size(batch);
        let options = &mut config.options_mut().execution;
        options.sort_spill_reservation_bytes = self.bytes / 4;
        options.sort_in_place_threshold_bytes = (self.bytes / 8).min(1 << 20);
        Arc::new(
            TaskContext::default()
                .with_session_config(config)
                .with_runtime(self.runtime.clone()),
        )
    }
}

/// One partition's rows on disk, as Arrow batches whose last column is the row's index in its
/// partition (`UInt32`), in row order.
pub(crate) struct RowFile {
    data: Option<Spilled>,
    rows: usize,
}

impl RowFile {
    /// Writes `batches` (a partition of `rows` rows).
    pub(crate) fn write(
        rows: usize,
        batches: impl IntoIterator<Item = Result<RecordBatch>>,
    ) -> Result<RowFile> {
        let mut writer = RowFileWriter::default();
        for batch in batches {
            writer.write(&batch?)?;
        }
        writer.finish_rows(rows)
    }

    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    /// Its batches, read back once.
    pub(crate) fn read(self) -> Result<Vec<RecordBatch>> {
        match self.data {
            None => Ok(Vec::new()),
            Some(data) => Ok(data.read()?.collect::<Result<_, _>>()?),
        }
    }
}

/// A [`RowFile`] written batch by batch.
#[derive(Default)]
pub(crate) struct RowFileWriter {
    spill: Spill,
    rows: usize,
}

impl RowFileWriter {
    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.rows += batch.num_rows();
        self.spill.write(batch)
    }

    pub(crate) fn finish(self) -> Result<RowFile> {
        let rows = self.rows;
        self.finish_rows(rows)
    }

    /// The file, of `rows` rows (a key file has one line per key, and none for a keyless row).
    pub(crate) fn finish_rows(self, rows: usize) -> Result<RowFile> {
        Ok(RowFile {
            data: self.spill.finish()?,
            rows,
        })
    }
}

/// Sorts the rows of every file in `files` (partition order), their row indices made global
/// (each file's rows follow the previous files'), by `order` (`(column, descending)`, ascending
/// global row last) within `budget`; calls `each` with the sorted batches, whose last column is
/// the global row (`UInt64`). Blocks: runs the sort on a private runtime.
pub(crate) fn sort_files(
    budget: &MemoryBudget,
    file_schema: &SchemaRef,
    files: Vec<RowFile>,
    order: &[(&str, bool)],
    mut each: impl FnMut(&RecordBatch) -> Result<()> + Send,
) -> Result<()> {
    let schema = global_schema(file_schema);
    let row_bytes = schema.fields().len() * 8;
    let plan = sort_plan(&schema, files, order)?;
    let ctx = budget.task_ctx(row_bytes);
    crate::store::block_on(async move {
        let mut sorted = plan.execute(0, ctx)?;
        while let Some(batch) = sorted.next().await {
            each(&batch?)?;
        }
        Ok(())
    })
}

/// `file_schema` with its last column (the row in its partition) a `UInt64` global row.
fn global_schema(file_schema: &SchemaRef) -> SchemaRef {
    let mut fields: Vec<Field> = file_schema
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    if let Some(last) = fields.pop() {
        fields.push(Field::new(last.name(), DataType::UInt64, false));
    }
    Arc::new(Schema::new(fields))
}

fn sort_plan(
    schema: &SchemaRef,
    files: Vec<RowFile>,
    order: &[(&str, bool)],
) -> Result<Arc<dyn ExecutionPlan>> {
    let source = Arc::new(AllRows {
        files: Mutex::new(Some(files)),
        schema: schema.clone(),
    });
    let row = schema.field(schema.fields().len() - 1).name().clone();
    sort_exec(
        source,
        schema,
        order.iter().copied().chain([(row.as_str(), false)]),
    )
}

/// DataFusion's `SortExec` over `source`'s rows by `order` (`(column, descending)`, nulls last).
fn sort_exec<'a>(
    source: Arc<dyn PartitionStream>,
    schema: &SchemaRef,
    order: impl IntoIterator<Item = (&'a str, bool)>,
) -> Result<Arc<dyn ExecutionPlan>> {
    let input = StreamingTableExec::try_new(schema.clone(), vec![source], None, [], false, None)?;
    let exprs = order
        .into_iter()
        .map(|(column, descending)| {
            let options = SortOptions {
                descending,
                nulls_first: false,
            };
            Ok(PhysicalSortExpr::new(col(column, schema)?, options))
        })
        .collect::<Result<Vec<_>>>()?;
    let order = LexOrdering::new(exprs).ok_or_else(|| exec_datafusion_err!("no sort key"))?;
    Ok(Arc::new(SortExec::new(order, Arc::new(input))))
}

/// A stream, executed once, as a [`PartitionStream`].
struct OneStream {
    stream: Mutex<Option<SendableRecordBatchStream>>,
    schema: SchemaRef,
}

impl std::fmt::Debug for OneStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OneStream")
    }
}

impl PartitionStream for OneStream {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let taken = self.stream.lock().unwrap().take();
        taken.unwrap_or_else(|| {
            let schema = self.schema.clone();
            let again = futures::stream::once(async {
                Err(exec_datafusion_err!("a one-shot stream executed twice"))
            });
            Box::pin(RecordBatchStreamAdapter::new(schema, again))
        })
    }
}

/// Every file's rows, with global row indices.
struct AllRows {
    files: Mutex<Option<Vec<RowFile>>>,
    schema: SchemaRef,
}

impl std::fmt::Debug for AllRows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AllRows")
    }
}

impl PartitionStream for AllRows {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let batch_size = ctx.session_config().batch_size();
        let files = self.files.lock().unwrap().take().unwrap_or_default();
        let mut offset = 0u64;
        let mut readers = Vec::with_capacity(files.len());
        for f in files {
            readers.push((offset, f.data));
            offset += f.rows as u64;
        }
        let schema = self.schema.clone();
        let out = schema.clone();
        let stream = futures::stream::iter(readers)
            .flat_map(move |(offset, data)| {
                let batches: Box<dyn Iterator<Item = Result<RecordBatch>> + Send> =
                    match data.map(Spilled::read).transpose() {
                        Ok(None) => Box::new(std::iter::empty()),
                        Ok(Some(reader)) => {
                            let schema = out.clone();
                            Box::new(reader.flat_map(move |b| match b {
                                Ok(b) => globalize(&schema, &b, offset, batch_size),
                                Err(e) => vec![Err(e.into())],
                            }))
                        }
                        Err(e) => Box::new(std::iter::once(Err(e))),
                    };
                futures::stream::iter(batches)
            })
            .boxed();
        Box::pin(RecordBatchStreamAdapter::new(schema, stream))
    }
}

/// `batch`'s rows with their row index `offset` further, in batches of `batch_size` rows with
/// buffers of their own (the sort accounts a batch by its buffers, which a slice would share).
fn globalize(
    schema: &SchemaRef,
    batch: &RecordBatch,
    offset: u64,
    batch_size: usize,
) -> Vec<Result<RecordBatch>> {
    let last = batch.num_columns() - 1;
    let rows = batch.column(last).as_primitive::<UInt32Type>().values();
    (0..batch.num_rows())
        .step_by(batch_size.max(1))
        .map(|a| {
            let n = batch_size.min(batch.num_rows() - a);
            // `take` copies into new buffers (`slice` and a one-array `concat` share them).
            let indices = UInt32Array::from_iter_values(a as u32..(a + n) as u32);
            let mut columns: Vec<ArrayRef> = (0..last)
                .map(|c| datafusion::arrow::compute::take(batch.column(c), &indices, None))
                .collect::<Result<_, _>>()?;
            let global: Vec<u64> = rows[a..a + n].iter().map(|r| offset + *r as u64).collect();
            columns.push(Arc::new(UInt64Array::from(global)));
            Ok(RecordBatch::try_new(schema.clone(), columns)?)
        })
        .collect()
}
