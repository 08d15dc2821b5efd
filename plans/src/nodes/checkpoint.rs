//! `DjCheckpoint`: the sink the checkpoint strategy places after an op. Its exec passes every
//! batch through unchanged while writing it to the partition's checkpoint file under a temporary
//! name; at the end of the stream the file is fsynced, sealed with its checksum (see
//! [`crate::seal`]) and renamed into place, and only then is the checkpoint reported. A crash at
//! any instant leaves either no checkpoint or a complete, sealed one.

use super::auto::AutoCheckpoints;
use std::cmp::Ordering;
use std::fmt;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::ipc::writer::FileWriter;
use datafusion::common::{DFSchemaRef, DataFusionError, Result, exec_datafusion_err};
use datafusion::execution::{RecordBatchStream, SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{Expr, LogicalPlan, UserDefinedLogicalNodeCore};
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::parquet::basic::{Compression as PqCompression, GzipLevel};
use datafusion::parquet::file::properties::WriterProperties;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan};
use futures::Stream;

use crate::drop_behind::DropBehindWriter;
use crate::pyjson;
use crate::recipe::{Compression, StorageFormat};
use crate::seal::{HashingWriter, Seal, SealedFile, seal_path};

/// Parquet row groups are closed at about this many buffered bytes (several writers run at once: one per checkpointed op).
pub const ROW_GROUP_BYTES: usize = 8 << 20;

/// File name of the checkpoint after op `op` of partition `partition`.
pub fn checkpoint_file_name(
    op: usize,
    partition: usize,
    format: StorageFormat,
    compression: Compression,
) -> String {
    let ext = match (format, compression) {
        (StorageFormat::Parquet, _) => "parquet",
        (StorageFormat::Arrow, _) => "arrow",
        (StorageFormat::Jsonl, Compression::Gzip) => "jsonl.gz",
        (StorageFormat::Jsonl, _) => "jsonl",
    };
    format!("checkpoint_op_{op:04}_partition_{partition:04}.{ext}")
}

/// Parses `checkpoint_op_XXXX_partition_YYYY.<ext>` into (op, partition).
pub fn parse_checkpoint_file_name(name: &str) -> Option<(usize, usize)> {
    let rest = name.strip_prefix("checkpoint_op_")?;
    let (op, rest) = rest.split_once("_partition_")?;
    let (partition, ext) = rest.split_once('.')?;
    if !matches!(ext, "parquet" | "arrow" | "jsonl" | "jsonl.gz")
        || op.len() < 4
        || partition.len() < 4
    {
        return None;
    }
    Some((op.parse().ok()?, partition.parse().ok()?))
}

/// A checkpoint that became durable.
#[derive(Debug, Clone)]
pub struct SavedCheckpoint {
    pub op_index: usize,
    pub op_name: String,
    pub partition: usize,
    pub path: PathBuf,
    pub rows: u64,
    pub seconds: f64,
    /// The file's size and digest, as recorded in its seal (unknown to a client whose
    /// executors write elsewhere).
    pub seal: Option<Seal>,
    /// Why the checkpoint was placed, when the strategy decided at run time (`auto`).
    pub reason: Option<String>,
}

/// Told about every checkpoint once it is durable (the runner logs `checkpoint_save`).
pub trait CheckpointListener: fmt::Debug + Send + Sync {
    fn saved(&self, checkpoint: &SavedCheckpoint);
}

/// Where and how one checkpoint is written.
#[derive(Debug, Clone)]
pub struct CheckpointTarget {
    pub op_index: usize,
    pub op_name: String,
    pub partition: usize,
    pub path: PathBuf,
    pub format: StorageFormat,
    pub compression: Compression,
    pub listener: Arc<dyn CheckpointListener>,
    /// Object (`s3://...`) the sink uploads the checkpoint to once it is durable: a job
    /// directory on object storage whose plans run on cluster executors, which may not share
    /// the client's disk.
    pub publish: Option<String>,
    /// `checkpoint.strategy: auto`: the sink decides whether to write when its first batch
    /// arrives (see [`AutoCheckpoints`]); `first_op` is where the partition's plan starts.
    pub auto: Option<AutoSink>,
}

/// A checkpoint sink that decides at run time.
#[derive(Debug, Clone)]
pub struct AutoSink {
    pub model: Arc<AutoCheckpoints>,
    pub first_op: usize,
}

/// Logical checkpoint sink after op `target.op_index`.
#[derive(Debug, Clone)]
pub struct CheckpointNode {
    pub input: LogicalPlan,
    pub target: CheckpointTarget,
}

impl PartialEq for CheckpointNode {
    fn eq(&self, o: &Self) -> bool {
        self.target.path == o.target.path && self.input == o.input
    }
}
impl Eq for CheckpointNode {}
impl std::hash::Hash for CheckpointNode {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.target.path.hash(state);
        self.input.hash(state);
    }
}
impl PartialOrd for CheckpointNode {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        self.target.path.partial_cmp(&o.target.path)
    }
}

fn describe(t: &CheckpointTarget) -> String {
    let name = t
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!(
        "#{} {} -> {} ({:?}, {:?}{})",
        t.op_index,
        t.op_name,
        name,
        t.format,
        t.compression,
        if t.auto.is_some() {
            ", if auto decides"
        } else {
            ""
        }
    )
    .to_lowercase()
}

impl UserDefinedLogicalNodeCore for CheckpointNode {
    fn name(&self) -> &str {
        "DjCheckpoint"
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
    fn fmt_for_explain(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DjCheckpoint: {}", describe(&self.target))
    }
    fn with_exprs_and_inputs(
        &self,
        _exprs: Vec<Expr>,
        mut inputs: Vec<LogicalPlan>,
    ) -> Result<Self> {
        Ok(CheckpointNode {
            input: inputs.swap_remove(0),
            target: self.target.clone(),
        })
    }
}

/// Pass-through writer of one checkpoint; see the module docs.
#[derive(Debug)]
pub struct CheckpointExec {
    input: Arc<dyn ExecutionPlan>,
    target: CheckpointTarget,
}

impl CheckpointExec {
    pub fn new(input: Arc<dyn ExecutionPlan>, target: CheckpointTarget) -> Self {
        CheckpointExec { input, target }
    }

    pub fn target(&self) -> &CheckpointTarget {
        &self.target
    }
}

impl DisplayAs for CheckpointExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CheckpointExec: {}", describe(&self.target))
    }
}

impl ExecutionPlan for CheckpointExec {
    unary_exec_methods!("CheckpointExec", |this, child| CheckpointExec::new(
        child,
        this.target.clone()
    ));
    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let inner = self.input.execute(partition, context)?;
        // An auto sink opens its file once it has decided to write.
        let writer = match self.target.auto {
            Some(_) => None,
            None => Some(CheckpointWriter::create(&self.target, inner.schema())?),
        };
        Ok(Box::pin(CheckpointStream {
            pending: self.target.auto.is_some(),
            inner,
            writer,
            target: self.target.clone(),
            rows: 0,
            started: Instant::now(),
            write_nanos: 0,
            reason: None,
        }))
    }
}

type Hashed = HashingWriter<DropBehindWriter>;

enum Sink {
    Parquet(ArrowWriter<Hashed>),
    Arrow(FileWriter<BufWriter<Hashed>>),
    Jsonl(BufWriter<Hashed>, String),
    JsonlGz(flate2::write::GzEncoder<BufWriter<Hashed>>, String),
}

/// Parquet has no empty groups: a column of empty structs (`{}`, such as Data-Juicer's
/// `__dj__meta__`) is written with one all-null placeholder field; reading it back with the
/// plan's schema restores the empty structs (`source::parquet_input::conform`).
fn parquet_schema(schema: &SchemaRef) -> SchemaRef {
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    if !schema
        .fields()
        .iter()
        .any(|f| is_empty_struct(f.data_type()))
    {
        return schema.clone();
    }
    let placeholder = Field::new(EMPTY_STRUCT_PLACEHOLDER, DataType::Boolean, true);
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| match is_empty_struct(f.data_type()) {
            true => Field::new(
                f.name(),
                DataType::Struct(vec![placeholder.clone()].into()),
                f.is_nullable(),
            ),
            false => f.as_ref().clone(),
        })
        .collect();
    Arc::new(Schema::new(fields))
}

fn is_empty_struct(t: &datafusion::arrow::datatypes::DataType) -> bool {
    matches!(t, datafusion::arrow::datatypes::DataType::Struct(fs) if fs.is_empty())
}

/// `batch` in the shape of [`parquet_schema`].
fn parquet_writable(batch: &RecordBatch) -> Result<RecordBatch> {
    use datafusion::arrow::array::{ArrayRef, StructArray, new_null_array};
    use datafusion::arrow::datatypes::DataType;
    let schema = parquet_schema(&batch.schema());
    if Arc::ptr_eq(&schema, &batch.schema()) {
        return Ok(batch.clone());
    }
    let columns = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(c, f)| match f.data_type() {
            DataType::Struct(fs) if is_empty_struct(c.data_type()) => {
                let inner: ArrayRef = new_null_array(&DataType::Boolean, c.len());
                Ok(Arc::new(StructArray::try_new(
                    fs.clone(),
                    vec![inner],
                    c.nulls().cloned(),
                )?) as ArrayRef)
            }
            _ => Ok(c.clone()),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(RecordBatch::try_new(schema, columns)?)
}

/// The field a parquet checkpoint gives a column of empty structs.
const EMPTY_STRUCT_PLACEHOLDER: &str = "__dj_empty_struct__";

/// An open checkpoint file under its temporary name; removed unless committed.
struct CheckpointWriter {
    sink: Option<Sink>,
    sealed: SealedFile,
    dest: PathBuf,
}

fn err(path: &Path, e: impl fmt::Display) -> DataFusionError {
    exec_datafusion_err!("checkpoint {}: {e}", path.display())
}

impl CheckpointWriter {
    fn create(t: &CheckpointTarget, schema: SchemaRef) -> Result<Self> {
        let dest = t.path.clone();
        // An executor on another machine has no job directory yet.
        if let Some(dir) = dest.parent() {
            std::fs::create_dir_all(dir).map_err(|e| err(&dest, e))?;
        }
        let (sealed, file) = SealedFile::create(&dest).map_err(|e| err(&dest, e))?;
        let sink = match t.format {
            StorageFormat::Parquet => {
                let compression = match t.compression {
                    Compression::Snappy => PqCompression::SNAPPY,
                    Compression::Gzip => PqCompression::GZIP(GzipLevel::default()),
                    Compression::None => PqCompression::UNCOMPRESSED,
                };
                let props = WriterProperties::builder()
                    .set_compression(compression)
                    .build();
                Sink::Parquet(
                    ArrowWriter::try_new(file, parquet_schema(&schema), Some(props))
                        .map_err(|e| err(&dest, e))?,
                )
            }
            // Arrow IPC has no snappy/gzip codec: arrow checkpoints are written uncompressed.
            StorageFormat::Arrow => Sink::Arrow(
                FileWriter::try_new(BufWriter::new(file), &schema).map_err(|e| err(&dest, e))?,
            ),
            StorageFormat::Jsonl => match t.compression {
                Compression::Gzip => Sink::JsonlGz(
                    flate2::write::GzEncoder::new(
                        BufWriter::new(file),
                        flate2::Compression::default(),
                    ),
                    String::new(),
                ),
                // Snappy has no standard framing for JSON lines: written uncompressed.
                _ => Sink::Jsonl(BufWriter::new(file), String::new()),
            },
        };
        Ok(CheckpointWriter {
            sink: Some(sink),
            sealed,
            dest,
        })
    }

    fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        use std::io::Write;
        let dest = self.dest.clone();
        match self.sink.as_mut().expect("open") {
            Sink::Parquet(w) => {
                w.write(&parquet_writable(batch)?)
                    .map_err(|e| err(&dest, e))?;
                // Close row groups by size, so a writer holds at most ROW_GROUP_BYTES of a
                // partition in memory whatever the partition's size.
                if w.in_progress_size() > ROW_GROUP_BYTES {
                    w.flush().map_err(|e| err(&dest, e))?;
                }
                Ok(())
            }
            Sink::Arrow(w) => w.write(batch).map_err(|e| err(&dest, e)),
            Sink::Jsonl(w, buf) => {
                buf.clear();
                pyjson::write_rows(batch, buf, &pyjson::JsonTypes::none());
                w.write_all(buf.as_bytes()).map_err(|e| err(&dest, e))
            }
            Sink::JsonlGz(w, buf) => {
                buf.clear();
                pyjson::write_rows(batch, buf, &pyjson::JsonTypes::none());
                w.write_all(buf.as_bytes()).map_err(|e| err(&dest, e))
            }
        }
    }

    /// Flushes, fsyncs, seals, renames into place and fsyncs the directory.
    fn commit(mut self) -> Result<Seal> {
        let dest = self.dest.clone();
        let file = match self.sink.take().expect("open") {
            Sink::Parquet(w) => w.into_inner().map_err(|e| err(&dest, e))?,
            Sink::Arrow(mut w) => {
                w.finish().map_err(|e| err(&dest, e))?;
                w.into_inner()
                    .map_err(|e| err(&dest, e))?
                    .into_inner()
                    .map_err(|e| err(&dest, e.into_error()))?
            }
            Sink::Jsonl(w, _) => w.into_inner().map_err(|e| err(&dest, e.into_error()))?,
            Sink::JsonlGz(w, _) => w
                .finish()
                .map_err(|e| err(&dest, e))?
                .into_inner()
                .map_err(|e| err(&dest, e.into_error()))?,
        };
        self.sealed.commit(file).map_err(|e| err(&dest, e))
    }
}

struct CheckpointStream {
    inner: SendableRecordBatchStream,
    writer: Option<CheckpointWriter>,
    target: CheckpointTarget,
    rows: u64,
    started: Instant,
    /// An auto sink that has not decided yet.
    pending: bool,
    /// Time spent writing (auto sinks report it to their cost model).
    write_nanos: u64,
    /// Why an auto sink writes.
    reason: Option<String>,
}

impl CheckpointStream {
    /// An auto sink's decision, made when its first batch or the end of its input arrives.
    fn decide(&mut self) -> Result<()> {
        self.pending = false;
        let Some(auto) = &self.target.auto else {
            return Ok(());
        };
        let d = auto
            .model
            .decide(self.target.partition, auto.first_op, self.target.op_index);
        if d.checkpoint {
            self.writer = Some(CheckpointWriter::create(&self.target, self.inner.schema())?);
            self.reason = Some(d.reason);
        } else {
            tracing::debug!(
                "partition {} op {}: no checkpoint: {}",
                self.target.partition,
                self.target.op_index,
                d.reason
            );
        }
        Ok(())
    }
}

impl Stream for CheckpointStream {
    type Item = Result<RecordBatch>;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let polled = self.inner.as_mut().poll_next(cx);
        if self.pending
            && matches!(polled, Poll::Ready(Some(Ok(_)) | None))
            && let Err(e) = self.decide()
        {
            return Poll::Ready(Some(Err(e)));
        }
        match polled {
            Poll::Ready(Some(Ok(batch))) => {
                let started = Instant::now();
                if let Some(w) = self.writer.as_mut()
                    && let Err(e) = w.write(&batch)
                {
                    self.writer = None;
                    return Poll::Ready(Some(Err(e)));
                }
                self.write_nanos += started.elapsed().as_nanos() as u64;
                self.rows += batch.num_rows() as u64;
                Poll::Ready(Some(Ok(batch)))
            }
            Poll::Ready(None) => {
                if let Some(w) = self.writer.take() {
                    let started = Instant::now();
                    let seal = match w.commit() {
                        Ok(seal) => seal,
                        Err(e) => return Poll::Ready(Some(Err(e))),
                    };
                    self.write_nanos += started.elapsed().as_nanos() as u64;
                    if let Some(auto) = &self.target.auto {
                        auto.model.record_write(
                            self.target.partition,
                            self.target.op_index,
                            self.write_nanos,
                        );
                    }
                    let reason = self.reason.take();
                    let t = &self.target;
                    if let Some(url) = &t.publish {
                        // The seal first: a published checkpoint always has its seal.
                        let uploaded = crate::store::Remote::open(&format!(
                            "{url}{}",
                            crate::seal::SEAL_SUFFIX
                        ))
                        .and_then(|r| r.upload(&seal_path(&t.path)).map(|_| ()))
                        .and_then(|_| crate::store::Remote::open(url))
                        .and_then(|r| r.upload(&t.path).map(|_| ()));
                        if let Err(e) = uploaded {
                            return Poll::Ready(Some(Err(err(&t.path, e))));
                        }
                    }
                    t.listener.saved(&SavedCheckpoint {
                        op_index: t.op_index,
                        op_name: t.op_name.clone(),
                        partition: t.partition,
                        path: t.path.clone(),
                        rows: self.rows,
                        seconds: self.started.elapsed().as_secs_f64(),
                        seal: Some(seal),
                        reason,
                    });
                }
                Poll::Ready(None)
            }
            other => {
                if matches!(other, Poll::Ready(Some(Err(_)))) {
                    // An upstream error: the partial checkpoint is discarded (Drop removes it).
                    self.writer = None;
                }
                other
            }
        }
    }
}

impl RecordBatchStream for CheckpointStream {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let n = checkpoint_file_name(3, 12, StorageFormat::Parquet, Compression::Snappy);
        assert_eq!(n, "checkpoint_op_0003_partition_0012.parquet");
        assert_eq!(parse_checkpoint_file_name(&n), Some((3, 12)));
        assert_eq!(
            parse_checkpoint_file_name("checkpoint_op_0001_partition_0000.jsonl.gz"),
            Some((1, 0))
        );
        assert_eq!(
            parse_checkpoint_file_name(".checkpoint_op_0001_partition_0000.parquet.tmp-1"),
            None
        );
        assert_eq!(
            parse_checkpoint_file_name("checkpoint_op_0001_partition_0000.parquet.tmp-1"),
            None
        );
    }
}
