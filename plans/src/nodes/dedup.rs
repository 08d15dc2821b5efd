//! `DjDedup`: global exact deduplication on a hash column, keeping the first row of each hash in
//! input order (Data-Juicer's `document_deduplicator`), correct across all partitions and resumes.
//!
//! Every logical partition runs its own plan; its `DedupExec` spills the partition's rows to an
//! Arrow IPC file, hands the rows' 128-bit keys to the op's shared [`DedupBarrier`] and waits until
//! every partition has done so. Keys are also persisted (when the barrier has a directory), so a
//! partition that resumes past the dedup contributes its keys without being recomputed. The keep
//! decision is then the first occurrence over partitions in index order, rows in order.

use std::cmp::Ordering;
use std::collections::HashSet;
use std::fmt;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use datafusion::arrow::array::{Array, AsArray, BooleanArray, RecordBatch};
use datafusion::arrow::compute::filter_record_batch;
use datafusion::arrow::datatypes::DataType;
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
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

/// Keys of one partition's rows entering the dedup; `None` for a null hash (never a duplicate).
pub type Keys = Vec<Option<u128>>;

/// The meeting point of all partitions at one dedup op.
pub struct DedupBarrier {
    partitions: usize,
    /// Where keys are persisted (`dedup_keys_op_XXXX_partition_YYYY.bin`), if anywhere.
    dir: Option<PathBuf>,
    op_index: usize,
    state: Mutex<BarrierState>,
    notify: Notify,
    /// Concurrency limit shared with the runner: a partition waiting here gives its permit back,
    /// so partitions not yet started can reach the barrier.
    concurrency: Option<Arc<Concurrency>>,
}

/// The runner's limit on concurrently running partitions, with one permit slot per partition so
/// that a partition blocked at a dedup barrier can hand its permit back.
pub struct Concurrency {
    semaphore: Arc<Semaphore>,
    slots: Vec<Mutex<Option<OwnedSemaphorePermit>>>,
    peak: std::sync::atomic::AtomicUsize,
}

impl Concurrency {
    pub fn new(limit: usize, partitions: usize) -> Arc<Self> {
        Arc::new(Concurrency {
            semaphore: Arc::new(Semaphore::new(limit.max(1))),
            slots: (0..partitions).map(|_| Mutex::new(None)).collect(),
            peak: Default::default(),
        })
    }

    /// Waits for a permit for partition `p` and holds it in `p`'s slot.
    pub async fn acquire(&self, p: usize) {
        let permit = self
            .semaphore
            .clone()
            .acquire_owned()
            .await
            .expect("semaphore never closed");
        *self.slots[p].lock().unwrap() = Some(permit);
        self.peak
            .fetch_max(self.running(), std::sync::atomic::Ordering::Relaxed);
    }

    /// Gives partition `p`'s permit back.
    pub fn release(&self, p: usize) {
        self.slots[p].lock().unwrap().take();
    }

    /// The most partitions that ever ran at once.
    pub fn peak(&self) -> usize {
        self.peak.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many partitions run now.
    pub fn running(&self) -> usize {
        self.slots
            .iter()
            .filter(|s| s.lock().unwrap().is_some())
            .count()
    }
}

struct BarrierState {
    keys: Vec<Option<Keys>>,
    keep: Option<Arc<Vec<Vec<bool>>>>,
}

impl fmt::Debug for DedupBarrier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DedupBarrier")
            .field("op_index", &self.op_index)
            .field("partitions", &self.partitions)
            .finish()
    }
}

impl DedupBarrier {
    pub fn new(
        op_index: usize,
        partitions: usize,
        dir: Option<PathBuf>,
        concurrency: Option<Arc<Concurrency>>,
    ) -> Arc<Self> {
        Arc::new(DedupBarrier {
            partitions,
            dir,
            op_index,
            state: Mutex::new(BarrierState {
                keys: vec![None; partitions],
                keep: None,
            }),
            notify: Notify::new(),
            concurrency,
        })
    }

    /// File holding partition `p`'s keys.
    pub fn keys_path(&self, p: usize) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| {
            d.join(format!(
                "dedup_keys_op_{:04}_partition_{p:04}.bin",
                self.op_index
            ))
        })
    }

    /// Loads the persisted keys of partition `p` (a partition that resumes past this op). Returns
    /// false if there are none.
    pub fn load_persisted(&self, p: usize) -> std::io::Result<bool> {
        let Some(path) = self.keys_path(p) else {
            return Ok(false);
        };
        if !path.exists() {
            return Ok(false);
        }
        let keys = read_keys(&path)?;
        self.submit(p, keys);
        Ok(true)
    }

    fn submit(&self, p: usize, keys: Keys) {
        let mut st = self.state.lock().unwrap();
        st.keys[p] = Some(keys);
        if st.keys.iter().all(Option::is_some) && st.keep.is_none() {
            let mut seen: HashSet<u128> = HashSet::new();
            let keep = st
                .keys
                .iter()
                .map(|k| {
                    k.as_ref()
                        .unwrap()
                        .iter()
                        .map(|k| k.is_none_or(|k| seen.insert(k)))
                        .collect()
                })
                .collect();
            st.keep = Some(Arc::new(keep));
            self.notify.notify_waiters();
        }
    }

    /// Persists and submits partition `p`'s keys, then waits for every partition; returns the
    /// keep-mask of `p`.
    async fn arrive(&self, p: usize, keys: Keys) -> Result<Vec<bool>> {
        if let Some(path) = self.keys_path(p) {
            write_keys_atomic(&path, &keys)?;
        }
        if let Some(c) = &self.concurrency {
            c.release(p);
        }
        self.submit(p, keys);
        let keep = loop {
            let notified = self.notify.notified();
            if let Some(keep) = self.state.lock().unwrap().keep.clone() {
                break keep[p].clone();
            }
            notified.await;
        };
        if let Some(c) = &self.concurrency {
            c.acquire(p).await;
        }
        Ok(keep)
    }
}

fn write_keys_atomic(path: &std::path::Path, keys: &Keys) -> std::io::Result<()> {
    let tmp = path.with_extension("bin.tmp");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
    for k in keys {
        match k {
            Some(k) => {
                w.write_all(&[1])?;
                w.write_all(&k.to_le_bytes())?;
            }
            None => w.write_all(&[0; 17])?,
        }
    }
    let f = w.into_inner().map_err(|e| e.into_error())?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)?;
    if let Some(dir) = path.parent() {
        std::fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}

fn read_keys(path: &std::path::Path) -> std::io::Result<Keys> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.read_to_end(&mut bytes)?;
    if bytes.len() % 17 != 0 {
        return Err(std::io::Error::other(format!(
            "{}: truncated dedup key file",
            path.display()
        )));
    }
    Ok(bytes
        .chunks_exact(17)
        .map(|c| (c[0] == 1).then(|| u128::from_le_bytes(c[1..].try_into().unwrap())))
        .collect())
}

/// Logical global dedup after op `index`, for logical partition `partition`.
#[derive(Debug, Clone)]
pub struct DedupNode {
    pub input: LogicalPlan,
    pub index: usize,
    pub op_name: String,
    pub hash_column: String,
    pub partition: usize,
    pub barrier: Arc<DedupBarrier>,
}

impl PartialEq for DedupNode {
    fn eq(&self, o: &Self) -> bool {
        (self.index, &self.op_name, &self.hash_column, self.partition)
            == (o.index, &o.op_name, &o.hash_column, o.partition)
            && self.input == o.input
    }
}
impl Eq for DedupNode {}
impl std::hash::Hash for DedupNode {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (self.index, &self.op_name, &self.hash_column, self.partition).hash(state);
        self.input.hash(state);
    }
}
impl PartialOrd for DedupNode {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        (self.index, &self.op_name, self.partition).partial_cmp(&(o.index, &o.op_name, o.partition))
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
            "DjDedup: #{} {} keep first per {} across {} partitions",
            self.index, self.op_name, self.hash_column, self.barrier.partitions
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

/// Physical side of [`DedupNode`] (single partition: one logical partition's plan).
pub struct DedupExec {
    input: Arc<dyn ExecutionPlan>,
    hash_index: usize,
    pub op_name: String,
    partition: usize,
    barrier: Arc<DedupBarrier>,
}

impl fmt::Debug for DedupExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DedupExec")
            .field("op_name", &self.op_name)
            .field("partition", &self.partition)
            .finish()
    }
}

impl DedupExec {
    pub fn try_new(
        input: Arc<dyn ExecutionPlan>,
        hash_column: &str,
        op_name: String,
        partition: usize,
        barrier: Arc<DedupBarrier>,
    ) -> Result<Self> {
        let hash_index = input.schema().index_of(hash_column)?;
        Ok(DedupExec {
            input,
            hash_index,
            op_name,
            partition,
            barrier,
        })
    }
}

impl DisplayAs for DedupExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let name = self.input.schema().field(self.hash_index).name().clone();
        write!(
            f,
            "DedupExec: {} keep first per {} (global barrier over {} partitions)",
            self.op_name, name, self.barrier.partitions
        )
    }
}

/// 128-bit key of a hash value: the value itself when it is 32 hex digits (an MD5), else a
/// BLAKE3 digest prefix of its bytes.
fn key_of(value: &str) -> u128 {
    if value.len() == 32
        && let Ok(k) = u128::from_str_radix(value, 16)
    {
        return k;
    }
    let d = blake3::hash(value.as_bytes());
    u128::from_le_bytes(d.as_bytes()[..16].try_into().unwrap())
}

fn keys_of(batch: &RecordBatch, col: usize, out: &mut Keys) -> Result<()> {
    let c = batch.column(col);
    let push = |out: &mut Keys, v: Option<&str>| out.push(v.map(key_of));
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

/// Drains `input` into an anonymous spill file, collecting the keys.
async fn spill(
    mut stream: SendableRecordBatchStream,
    hash_index: usize,
) -> Result<(Option<std::fs::File>, Keys)> {
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
            writer = Some(StreamWriter::try_new(
                std::io::BufWriter::new(tempfile::tempfile()?),
                &schema,
            )?);
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
    Ok((file, keys))
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
        let exec = DedupExec::try_new(
            children.swap_remove(0),
            &name,
            self.op_name.clone(),
            self.partition,
            self.barrier.clone(),
        )?;
        Ok(Arc::new(exec))
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
        let input = self.input.execute(partition, context)?;
        let (barrier, hash_index, logical) =
            (self.barrier.clone(), self.hash_index, self.partition);
        let mut builder = RecordBatchReceiverStreamBuilder::new(self.schema(), 2);
        let tx = builder.tx();
        builder.spawn(async move {
            let (file, keys) = spill(input, hash_index).await?;
            let keep = barrier.arrive(logical, keys).await?;
            let Some(file) = file else { return Ok(()) };
            tokio::task::spawn_blocking(move || -> Result<()> {
                let reader = StreamReader::try_new(std::io::BufReader::new(file), None)?;
                let mut offset = 0;
                for batch in reader {
                    let batch = batch?;
                    let n = batch.num_rows();
                    let mask = BooleanArray::from(keep[offset..offset + n].to_vec());
                    offset += n;
                    let kept = filter_record_batch(&batch, &mask)?;
                    if kept.num_rows() > 0 && tx.blocking_send(Ok(kept)).is_err() {
                        break;
                    }
                }
                Ok(())
            })
            .await
            .map_err(|e| DataFusionError::External(Box::new(e)))??;
            Ok(())
        });
        Ok(builder.build())
    }
}
