//! `DjDedup`: global exact deduplication on a hash column, keeping the first row of each hash in
//! input order (Data-Juicer's `document_deduplicator`), correct across all partitions and resumes.
//!
//! Every logical partition runs its own plan; its `DedupExec` spills the partition's rows to an
//! Arrow IPC file, hands the rows' 128-bit keys to the op's shared [`DedupBarrier`] and waits until
//! its rows are decided: once every partition before it and itself are in (a row's first
//! occurrence depends on nothing after it). Keys are also persisted (when the barrier has a
//! directory), so a partition that resumes past the dedup contributes its keys without being
//! recomputed. The keep decision is the first occurrence over partitions in index order, rows in
//! order.
//!
//! The same node serves the near-duplicate deduplicators, whose keep decision clusters rows: MinHash
//! LSH band keys (rows sharing a key are connected) and SimHash values (rows whose 64-bit values
//! are within a Hamming distance are connected, found with simhash-cpp's block permutations);
//! the first row of each connected component survives.

use std::cmp::Ordering;
use std::fmt;
use std::io::Read;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use datafusion::arrow::array::BooleanArray;
use datafusion::arrow::compute::filter_record_batch;
use datafusion::common::{DFSchemaRef, DataFusionError, Result, exec_datafusion_err, exec_err};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{Expr, LogicalPlan, UserDefinedLogicalNodeCore};
use datafusion::physical_plan::metrics::{
    ExecutionPlanMetricsSet, MetricBuilder, MetricsSet, Time,
};
use datafusion::physical_plan::stream::RecordBatchReceiverStreamBuilder;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan};
use dj_udfs::DedupKind;
use futures::StreamExt;
use tokio::sync::Notify;

use super::band_union::BandUnion;
use super::concurrency::Concurrency;
use super::external::MemoryBudget;
use super::gather::{Gathered, GatheredKeys, KeyGatherer, write_rows};
use super::keys::{KeySet, Keys, keep_first, keys_of};
use super::sorted_keys::{KeyFile, decide_sorted};
use super::spill::{Spill, SpillCache, Spilled, saving_error};
use super::staged::{keys_parquet_name, read_keys_file, read_removed};
use super::timed::TimedStream;

/// The keep decision over all partitions' keys, in partition order then row order.
pub(crate) fn decide_in_memory(kind: DedupKind, parts: &[Keys]) -> Result<Vec<Vec<bool>>> {
    let keep = match kind {
        DedupKind::Exact => {
            let mut seen = KeySet::default();
            parts.iter().map(|k| keep_first(k, &mut seen)).collect()
        }
        DedupKind::MinHashBands => {
            // Rows sharing a band key are connected; the first row of each component survives.
            let mut bands = BandUnion::new(parts.len());
            for (p, keys) in parts.iter().enumerate() {
                assert!(bands.add(p, keys), "each partition once");
            }
            bands.decide()
        }
        DedupKind::SimHash {
            num_blocks,
            hamming_distance,
        } => {
            // Clusters over the distinct values (Data-Juicer's find_all runs on the set of
            // values), then each row is kept iff it is the first of its value's cluster.
            let mut values: Vec<u64> = parts
                .iter()
                .flat_map(|k| k.keys.iter().map(|&v| v as u64))
                .collect();
            values.sort_unstable();
            values.dedup();
            values.shrink_to_fit();
            let cluster =
                dj_udfs::dedup::simhash::components(&values, num_blocks, hamming_distance)
                    .map_err(|e| exec_datafusion_err!("document_simhash_deduplicator: {e}"))?;
            let mut seen = vec![false; values.len()];
            parts
                .iter()
                .map(|k| {
                    (0..k.rows())
                        .map(|i| match k.row(i).first() {
                            None => true,
                            Some(&v) => {
                                let at = values
                                    .binary_search(&(v as u64))
                                    .expect("every row's value is in the value list");
                                !std::mem::replace(&mut seen[cluster[at] as usize], true)
                            }
                        })
                        .collect()
                })
                .collect()
        }
    };
    Ok(keep)
}

/// File name of partition `partition`'s keys at dedup op `op`.
pub fn keys_file_name(op: usize, partition: usize) -> String {
    format!("dedup_keys_op_{op:04}_partition_{partition:04}.bin")
}

/// The meeting point of all partitions at one dedup op.
pub struct DedupBarrier {
    kind: DedupKind,
    partitions: usize,
    /// Where keys are persisted (`dedup_keys_op_XXXX_partition_YYYY.bin`), if anywhere.
    dir: Option<PathBuf>,
    op_index: usize,
    state: Mutex<BarrierState>,
    notify: Notify,
    /// Concurrency limit shared with the runner: a partition waiting here gives its permit back,
    /// so partitions not yet started can reach the barrier.
    concurrency: Option<Arc<Concurrency>>,
    /// The memory the keys may hold; past it they go to disk. Unset: no limit.
    budget: std::sync::OnceLock<Arc<MemoryBudget>>,
    /// Decided in stages elsewhere (see [`super::staged`]): the directory of every partition's
    /// removed rows.
    removed_lists: std::sync::OnceLock<PathBuf>,
}

struct BarrierState {
    keys: Vec<Option<Keys>>,
    /// The decision (or why it failed), once every partition's keys are in.
    keep: Option<std::result::Result<Arc<Vec<Vec<bool>>>, String>>,
    /// Exact dedup decides each partition as soon as it and every partition before it are in (a
    /// row's fate depends only on the rows before it): the masks of partitions `0..prefix.len()`
    /// and every key they hold.
    prefix: Vec<Vec<bool>>,
    seen: Arc<KeySet>,
    /// MinHash's decision so far, built from each partition's keys as they arrive (while they
    /// are held in memory).
    bands: Option<BandUnion>,
    /// What the keys held in memory take of the budget.
    reserved: Option<datafusion::execution::memory_pool::MemoryReservation>,
    /// Past the budget: each undecided partition's keys on disk (`keys` is then empty), and for
    /// exact dedup the keys of the partitions decided before (`seen`'s, as one file).
    spilled: Option<KeysOnDisk>,
}

/// The keys of a barrier that went over its memory budget.
struct KeysOnDisk {
    files: Vec<Option<KeyFile>>,
    before: Option<KeyFile>,
}

impl BarrierState {
    fn new(partitions: usize, keep: Option<Arc<Vec<Vec<bool>>>>) -> Self {
        BarrierState {
            keys: vec![None; partitions],
            keep: keep.map(Ok),
            prefix: Vec::new(),
            seen: Arc::default(),
            bands: None,
            reserved: None,
            spilled: None,
        }
    }
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
        kind: DedupKind,
        partitions: usize,
        dir: Option<PathBuf>,
        concurrency: Option<Arc<Concurrency>>,
    ) -> Arc<Self> {
        Arc::new(DedupBarrier {
            kind,
            partitions,
            dir,
            op_index,
            state: Mutex::new(BarrierState::new(partitions, None)),
            notify: Notify::new(),
            concurrency,
            budget: Default::default(),
            removed_lists: Default::default(),
        })
    }

    /// A barrier whose decision for partition `partition` is already `mask` (decoded from a
    /// plan on a cluster executor: the runner decided it from every partition's keys).
    pub fn decided(
        op_index: usize,
        kind: DedupKind,
        partitions: usize,
        partition: usize,
        mask: Vec<bool>,
    ) -> Arc<Self> {
        let mut masks = vec![Vec::new(); partitions];
        masks[partition] = mask;
        Arc::new(DedupBarrier {
            kind,
            partitions,
            dir: None,
            op_index,
            state: Mutex::new(BarrierState::new(partitions, Some(Arc::new(masks)))),
            notify: Notify::new(),
            concurrency: None,
            budget: Default::default(),
            removed_lists: Default::default(),
        })
    }

    /// Marks the op decided in stages: each partition's removed rows are in `dir` (see
    /// [`super::staged`]), and its plan filters through them (once; later calls are ignored).
    pub fn decide_by_lists(&self, dir: PathBuf) {
        let _ = self.removed_lists.set(dir);
    }

    /// The directory of the removed-row lists, when the op was decided in stages.
    pub fn removed_lists(&self) -> Option<&std::path::Path> {
        self.removed_lists.get().map(PathBuf::as_path)
    }

    pub fn kind(&self) -> DedupKind {
        self.kind
    }

    /// Bounds the memory the keys hold (once; later calls are ignored).
    pub fn set_budget(&self, budget: Arc<MemoryBudget>) {
        let _ = self.budget.set(budget);
    }

    /// What the spilled rows kept in the page cache may take of the memory budget, if there
    /// is one.
    pub(crate) fn spill_cache(&self) -> Option<Arc<SpillCache>> {
        self.budget.get().map(|b| b.spill_cache())
    }

    /// The memory budget's size, if it has one.
    pub fn budget_bytes(&self) -> Option<usize> {
        self.budget.get().map(|b| b.bytes())
    }

    /// Whether the keys went to disk, past the memory budget.
    pub fn spilled(&self) -> bool {
        self.state.lock().unwrap().spilled.is_some()
    }

    pub fn partitions(&self) -> usize {
        self.partitions
    }

    /// Partition `p`'s keep-mask once it is decided (`None` before): when every partition's keys
    /// are in, or for exact dedup those of `p` and every partition before it; the decision's
    /// error if it failed.
    pub fn mask(&self, p: usize) -> Result<Option<Vec<bool>>> {
        let st = self.state.lock().unwrap();
        match &st.keep {
            None => Ok(st.prefix.get(p).cloned()),
            Some(Ok(keep)) => Ok(Some(keep[p].clone())),
            Some(Err(e)) => exec_err!("{e}"),
        }
    }

    /// For exact dedup, once every partition before `p` is decided and `p` is not: their keys.
    /// Partition `p`'s mask is then [`keep_first`] of its keys against these, so it can filter
    /// its rows as they come instead of holding them back.
    pub fn keys_before(&self, p: usize) -> Option<Arc<KeySet>> {
        let st = self.state.lock().unwrap();
        let incremental = self.kind == DedupKind::Exact && st.spilled.is_none();
        (incremental && st.keep.is_none() && st.prefix.len() == p).then(|| st.seen.clone())
    }

    /// Persists and submits partition `p`'s keys without waiting for the others (keys computed
    /// elsewhere, e.g. by a cluster).
    pub fn contribute(&self, p: usize, keys: Keys) -> Result<()> {
        if let Some(path) = self.keys_path(p) {
            write_keys_atomic(&path, &keys).map_err(|e| saving_error(&path, e))?;
        }
        self.submit(p, keys.into())
    }

    /// File holding partition `p`'s keys.
    pub(crate) fn keys_path(&self, p: usize) -> Option<PathBuf> {
        self.dir
            .as_ref()
            .map(|d| d.join(keys_file_name(self.op_index, p)))
    }

    /// Loads the persisted keys of partition `p` (a partition that resumes past this op). Returns
    /// false if there are none.
    pub fn load_persisted(&self, p: usize) -> std::io::Result<bool> {
        let Some(path) = self.keys_path(p) else {
            return Ok(false);
        };
        // Keys a cluster saved in stages, if a run decided this op there.
        let staged = path.with_file_name(keys_parquet_name(self.op_index, p));
        let keys = if path.exists() {
            read_keys(&path)?
        } else if staged.exists() {
            read_keys_file(&staged).map_err(std::io::Error::other)?
        } else {
            return Ok(false);
        };
        self.submit(p, keys.into()).map_err(std::io::Error::other)?;
        Ok(true)
    }

    /// The keys partition `p` persisted, if it did (a run that decided this op in memory).
    pub fn persisted_keys(&self, p: usize) -> std::io::Result<Option<Keys>> {
        match self.keys_path(p) {
            Some(path) if path.exists() => read_keys(&path).map(Some),
            _ => Ok(None),
        }
    }

    fn submit(&self, p: usize, keys: GatheredKeys) -> Result<()> {
        let keys = match keys.0 {
            Gathered::Memory(keys) => keys,
            Gathered::Disk(file) => return self.submit_file(p, file),
        };
        let mut guard = self.state.lock().unwrap();
        let st = &mut *guard;
        if st.spilled.is_none() && !self.fits(st, &keys) {
            self.spill_held(st)?;
        }
        if let Some(disk) = &mut st.spilled {
            disk.files[p] = Some(KeyFile::write(&keys)?);
            drop(keys);
            self.decide_on_disk(st);
            return Ok(());
        }
        if self.kind == DedupKind::MinHashBands && st.keep.is_none() {
            let bands = st
                .bands
                .get_or_insert_with(|| BandUnion::new(self.partitions));
            if !bands.add(p, &keys) {
                // The partition's keys again: they replace the first ones, so decide from all.
                st.bands = None;
            }
        }
        st.keys[p] = Some(keys);
        if self.kind == DedupKind::Exact && st.keep.is_none() {
            let before = st.prefix.len();
            while let Some(keys) = st.keys.get_mut(st.prefix.len()).and_then(Option::take) {
                let mask = keep_first(&keys, Arc::make_mut(&mut st.seen));
                st.prefix.push(mask);
            }
            if st.prefix.len() == self.partitions {
                st.keep = Some(Ok(Arc::new(std::mem::take(&mut st.prefix))));
                st.seen = Arc::default();
                st.reserved = None;
            }
            if st.prefix.len() > before || st.keep.is_some() {
                self.notify.notify_waiters();
            }
            return Ok(());
        }
        if st.keys.iter().all(Option::is_some) && st.keep.is_none() {
            // The keys are not needed after the decision: moved, not copied.
            let parts: Vec<Keys> = st.keys.iter_mut().map(|k| k.take().unwrap()).collect();
            // A union missing a partition (one that arrived twice dropped it) is not used.
            let keep = match st.bands.take().filter(BandUnion::complete) {
                Some(bands) => Ok(bands.decide()),
                None => decide_in_memory(self.kind, &parts),
            };
            st.keep = Some(keep.map(Arc::new).map_err(|e| e.to_string()));
            st.reserved = None;
            self.notify.notify_waiters();
        }
        Ok(())
    }

    /// Submits partition `p`'s keys gathered on disk: the barrier decides from keys on disk.
    fn submit_file(&self, p: usize, file: KeyFile) -> Result<()> {
        let mut guard = self.state.lock().unwrap();
        let st = &mut *guard;
        if st.spilled.is_none() {
            self.spill_held(st)?;
        }
        let disk = st.spilled.as_mut().expect("spilled above");
        disk.files[p] = Some(file);
        self.decide_on_disk(st);
        Ok(())
    }

    /// Whether `keys` can join those held in memory within the budget (reserving what they
    /// and the decision over them will take): 16 bytes a key held, about 48 more a key in the
    /// decision's hash table or exact dedup's set of seen keys, 8 a row for the union-find and
    /// the masks.
    fn fits(&self, st: &mut BarrierState, keys: &Keys) -> bool {
        let Some(budget) = self.budget.get() else {
            return true;
        };
        let bytes = keys.keys.len() * 64 + keys.rows() * 8;
        let reserved = st.reserved.get_or_insert_with(|| {
            budget.reservation(format!("DedupBarrier[op {}]", self.op_index))
        });
        reserved.try_grow(bytes).is_ok()
    }

    /// Moves the keys held in memory to disk, for good: every arrived undecided partition's, and
    /// exact dedup's keys of the partitions already decided.
    fn spill_held(&self, st: &mut BarrierState) -> Result<()> {
        let mut files: Vec<Option<KeyFile>> = (0..self.partitions).map(|_| None).collect();
        for (p, keys) in st.keys.iter_mut().enumerate() {
            if let Some(keys) = keys.take() {
                files[p] = Some(KeyFile::write(&keys)?);
            }
        }
        let before = if st.seen.is_empty() {
            None
        } else {
            let mut seen = Keys::new();
            for key in std::mem::take(&mut st.seen).iter() {
                seen.push_row([*key]);
            }
            Some(KeyFile::write(&seen)?)
        };
        st.reserved = None;
        st.bands = None;
        tracing::info!(
            op = self.op_index,
            budget = self.budget.get().map_or(0, |b| b.bytes()),
            "the dedup keys exceed the memory budget: deciding from keys sorted on disk"
        );
        st.spilled = Some(KeysOnDisk { files, before });
        Ok(())
    }

    /// Once every undecided partition's keys are on disk: decides them from the sorted keys.
    fn decide_on_disk(&self, st: &mut BarrierState) {
        let decided = st.prefix.len();
        let Some(disk) = st.spilled.as_mut() else {
            return;
        };
        if st.keep.is_some() || disk.files[decided..].iter().any(Option::is_none) {
            return;
        }
        let parts: Vec<KeyFile> = disk.files[decided..]
            .iter_mut()
            .filter_map(Option::take)
            .collect();
        let budget = self.budget.get().expect("spilled under a budget");
        let masks = decide_sorted(self.kind, budget, disk.before.take(), parts);
        st.keep = Some(
            masks
                .map(|masks| {
                    let mut keep = std::mem::take(&mut st.prefix);
                    keep.extend(masks);
                    Arc::new(keep)
                })
                .map_err(|e| e.to_string()),
        );
        self.notify.notify_waiters();
    }

    /// Persists and submits partition `p`'s keys, then waits for every partition; returns the
    /// keep-mask of `p`. Gives `p`'s concurrency permit back while it waits.
    pub async fn arrive(&self, p: usize, keys: GatheredKeys) -> Result<Vec<bool>> {
        if let Some(c) = &self.concurrency {
            c.release(p);
        }
        let rows = keys.rows();
        tracing::debug!(
            op = self.op_index,
            partition = p,
            rows,
            "arrived at the dedup barrier"
        );
        self.submit(p, keys)?;
        let keep = loop {
            let notified = self.notify.notified();
            if let Some(keep) = self.mask(p)? {
                tracing::debug!(
                    op = self.op_index,
                    partition = p,
                    "leaves the dedup barrier"
                );
                break keep;
            }
            notified.await;
        };
        // A decision made elsewhere must be about these very rows.
        if rows != keep.len() {
            return exec_err!(
                "dedup op {}: partition {p} produced {rows} rows, but its keep decision covers {}",
                self.op_index,
                keep.len()
            );
        }
        if let Some(c) = &self.concurrency {
            c.acquire(p).await;
        }
        Ok(keep)
    }
}

/// Key file: per row a little-endian u32 key count, then the 16-byte keys.
fn write_keys_atomic(path: &std::path::Path, keys: &Keys) -> std::io::Result<()> {
    let (sealed, file) = crate::seal::SealedFile::create(path)?;
    let mut w = std::io::BufWriter::new(file);
    write_rows(&mut w, keys, 0)?;
    sealed.commit(w.into_inner().map_err(|e| e.into_error())?)?;
    Ok(())
}

pub(crate) fn read_keys(path: &std::path::Path) -> std::io::Result<Keys> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.read_to_end(&mut bytes)?;
    let truncated =
        || std::io::Error::other(format!("{}: truncated dedup key file", path.display()));
    let mut keys = Keys::new();
    let mut rest = bytes.as_slice();
    while !rest.is_empty() {
        let (n, tail) = rest.split_first_chunk::<4>().ok_or_else(truncated)?;
        let n = u32::from_le_bytes(*n) as usize;
        if tail.len() < n * 16 {
            return Err(truncated());
        }
        keys.push_row(
            tail[..n * 16]
                .chunks_exact(16)
                .map(|c| u128::from_le_bytes(c.try_into().unwrap())),
        );
        rest = &tail[n * 16..];
    }
    Ok(keys)
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
    fn fmt_for_explain(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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
    /// `elapsed_compute`: draining the input (the upstream work it polls), the keys, the spill
    /// and the filtering; not the wait at the barrier or for the consumer.
    metrics: ExecutionPlanMetricsSet,
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
            metrics: ExecutionPlanMetricsSet::new(),
        })
    }
}

impl DedupExec {
    pub fn hash_column(&self) -> String {
        self.input.schema().field(self.hash_index).name().clone()
    }
    pub fn index(&self) -> usize {
        self.barrier.op_index
    }
    pub fn partition(&self) -> usize {
        self.partition
    }
    pub fn barrier(&self) -> &Arc<DedupBarrier> {
        &self.barrier
    }
    /// The rows to deduplicate.
    pub fn input(&self) -> &Arc<dyn ExecutionPlan> {
        &self.input
    }
    /// A gatherer of the keys of this node's rows (of [`DedupExec::input`]): what it gives its
    /// barrier, for a caller that drains the input itself.
    pub fn gatherer(&self) -> Result<KeyGatherer> {
        let b = &self.barrier;
        KeyGatherer::new(
            b.kind,
            self.hash_index,
            b.budget.get().map(Arc::as_ref),
            format!("DedupExec[op {}, partition {}]", b.op_index, self.partition),
            b.keys_path(self.partition),
        )
    }
}

impl DisplayAs for DedupExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.input.schema().field(self.hash_index).name().clone();
        write!(
            f,
            "DedupExec: #{} {} keep first per {} (global barrier over {} partitions)",
            self.barrier.op_index, self.op_name, name, self.barrier.partitions
        )
    }
}

/// The keys of every row of `stream`'s hash column `hash_column`.
pub async fn collect_keys(
    mut stream: SendableRecordBatchStream,
    kind: DedupKind,
    hash_column: &str,
) -> Result<Keys> {
    let col = stream.schema().index_of(hash_column)?;
    let mut keys = Keys::new();
    while let Some(batch) = stream.next().await {
        keys_of(kind, &batch?, col, &mut keys)?;
    }
    Ok(keys)
}

/// Drains `input` into a [`Spill`] kept in the page cache within `allowance`, collecting the
/// keys.
async fn spill(
    stream: SendableRecordBatchStream,
    mut keys: KeyGatherer,
    allowance: Option<Arc<SpillCache>>,
    compute: &Time,
) -> Result<(Option<Spilled>, GatheredKeys)> {
    let mut stream = TimedStream::new(stream, compute.clone());
    let mut spill = Spill::caching(allowance);
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        if batch.num_rows() == 0 {
            continue;
        }
        let _timer = compute.timer();
        keys.push(&batch)?;
        spill.write(&batch)?;
    }
    Ok((spill.finish()?, keys.finish()?))
}

impl ExecutionPlan for DedupExec {
    unary_exec_methods!("DedupExec", |this, child| DedupExec::try_new(
        child,
        this.input.schema().field(this.hash_index).name(),
        this.op_name.clone(),
        this.partition,
        this.barrier.clone()
    )?);
    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }
    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let input = self.input.execute(partition, context)?;
        let (barrier, logical) = (self.barrier.clone(), self.partition);
        let compute = MetricBuilder::new(&self.metrics).elapsed_compute(partition);
        let mut builder = RecordBatchReceiverStreamBuilder::new(self.schema(), 2);
        let tx = builder.tx();
        // Decided before this plan ran (a cluster run decides every dedup first): no keys to
        // give and nothing to wait for, so the rows stream through their decision, unspilled.
        let decided = match barrier.removed_lists() {
            Some(dir) => Some(Decided::Removed(read_removed(dir, logical)?, 0)),
            None => barrier.mask(logical)?.map(Decided::Mask),
        };
        if let Some(mut decided) = decided {
            builder.spawn(async move {
                let mut input = input;
                let mut offset = 0;
                while let Some(batch) = input.next().await {
                    let batch = batch?;
                    let n = batch.num_rows();
                    let timer = compute.timer();
                    let keep = decided.keep(offset, n, barrier.op_index)?;
                    let kept = filter_record_batch(&batch, &keep)?;
                    offset += n;
                    timer.done();
                    if kept.num_rows() > 0 && tx.send(Ok(kept)).await.is_err() {
                        return Ok(());
                    }
                }
                decided.finish(offset, barrier.op_index)
            });
            return Ok(builder.build());
        }
        let keys = self.gatherer()?;
        builder.spawn(async move {
            let (spilled, keys) = spill(input, keys, barrier.spill_cache(), &compute).await?;
            let keep = barrier.arrive(logical, keys).await?;
            let Some(spilled) = spilled else {
                return Ok(());
            };
            tokio::task::spawn_blocking(move || -> Result<()> {
                let reader = spilled.read()?;
                let mut offset = 0;
                let mut timer = compute.timer();
                for batch in reader {
                    let batch = batch?;
                    let n = batch.num_rows();
                    let mask = BooleanArray::from(keep[offset..offset + n].to_vec());
                    offset += n;
                    let kept = filter_record_batch(&batch, &mask)?;
                    timer.stop();
                    if kept.num_rows() > 0 && tx.blocking_send(Ok(kept)).is_err() {
                        break;
                    }
                    timer = compute.timer();
                }
                timer.done();
                Ok(())
            })
            .await
            .map_err(|e| DataFusionError::External(Box::new(e)))??;
            Ok(())
        });
        Ok(builder.build())
    }
}

/// A partition's decision made before its plan ran: a keep-mask, or the sorted rows removed
/// (with how many of them the rows so far passed).
enum Decided {
    Mask(Vec<bool>),
    Removed(Vec<u32>, usize),
}

impl Decided {
    /// The keep-mask of the `n` rows from `offset`.
    fn keep(&mut self, offset: usize, n: usize, op: usize) -> Result<BooleanArray> {
        match self {
            Decided::Mask(keep) => match keep.get(offset..offset + n) {
                Some(bits) => Ok(BooleanArray::from(bits.to_vec())),
                None => exec_err!(
                    "dedup op #{op}: the decided mask has {} rows, the partition more",
                    keep.len()
                ),
            },
            Decided::Removed(rows, at) => {
                let mut keep = vec![true; n];
                while let Some(&r) = rows.get(*at).filter(|&&r| (r as usize) < offset + n) {
                    keep[r as usize - offset] = false;
                    *at += 1;
                }
                Ok(BooleanArray::from(keep))
            }
        }
    }

    /// Checks that the decision covered exactly the partition's `rows` rows.
    fn finish(&self, rows: usize, op: usize) -> Result<()> {
        match self {
            Decided::Mask(keep) if keep.len() != rows => exec_err!(
                "dedup op #{op}: the decided mask has {} rows, the partition {rows}",
                keep.len()
            ),
            Decided::Removed(removed, at) if *at != removed.len() => exec_err!(
                "dedup op #{op}: row {} of the partition was decided removed, but it has {rows} rows",
                removed[*at]
            ),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::{RecordBatch, StringArray};
    use datafusion::arrow::datatypes::{DataType, Field, Schema};

    use super::*;

    #[test]
    fn exact_keeps_first_occurrence_across_partitions() {
        let parts = [
            Keys::from_rows(&[&[1], &[2], &[1]]),
            Keys::from_rows(&[&[2], &[], &[3], &[]]),
        ];
        assert_eq!(
            decide_in_memory(DedupKind::Exact, &parts).unwrap(),
            [vec![true, true, false], vec![false, true, true, true]]
        );
    }

    /// Exact dedup decides a partition once it and every partition before it are in, whatever
    /// order they arrive in, and the masks equal the decision over all partitions at once.
    #[test]
    fn exact_decides_each_partition_once_its_prefix_is_in() {
        let parts = [
            Keys::from_rows(&[&[1], &[2], &[1]]),
            Keys::from_rows(&[&[2], &[], &[3], &[]]),
            Keys::from_rows(&[&[3], &[4], &[1], &[4]]),
        ];
        let all = decide_in_memory(DedupKind::Exact, &parts).unwrap();
        let b = DedupBarrier::new(0, DedupKind::Exact, 3, None, None);
        assert!(b.keys_before(0).unwrap().is_empty());
        assert_eq!(b.keys_before(1), None, "partition 0 is not in yet");
        b.submit(2, parts[2].clone().into()).unwrap();
        assert_eq!(b.mask(2).unwrap(), None, "partitions 0 and 1 are not in");
        b.submit(0, parts[0].clone().into()).unwrap();
        assert_eq!(b.mask(0).unwrap().as_ref(), Some(&all[0]));
        assert_eq!(b.mask(2).unwrap(), None);
        assert_eq!(*b.keys_before(1).unwrap(), KeySet::from_iter([1, 2]));
        assert_eq!(b.keys_before(2), None);
        b.submit(1, parts[1].clone().into()).unwrap();
        for (p, mask) in all.iter().enumerate() {
            assert_eq!(b.mask(p).unwrap().as_ref(), Some(mask), "partition {p}");
        }
        assert_eq!(b.keys_before(1), None, "decided");
        // Near-duplicate dedups still wait for every partition.
        let b = DedupBarrier::new(0, DedupKind::MinHashBands, 2, None, None);
        b.submit(0, Keys::from_rows(&[&[10]]).into()).unwrap();
        assert_eq!(b.mask(0).unwrap(), None);
        assert_eq!(b.keys_before(0), None);
    }

    #[test]
    fn bands_keep_the_smallest_index_of_each_component() {
        // 0-1 share band key 10; 1-3 share 11 (so 0,1,3 are one component); 2 and 4 share 12.
        let parts = [
            Keys::from_rows(&[&[10, 20], &[10, 11]]),
            Keys::from_rows(&[&[12], &[11, 30], &[12], &[]]),
        ];
        assert_eq!(
            decide_in_memory(DedupKind::MinHashBands, &parts).unwrap(),
            [vec![true, false], vec![true, false, false, true]]
        );
    }

    /// The barrier decides MinHash as partitions arrive, in any order; a partition whose keys
    /// come again is decided from its latest keys, as before.
    #[test]
    fn bands_decide_at_the_barrier_in_any_arrival_order() {
        let parts = [
            Keys::from_rows(&[&[10, 20], &[10, 11]]),
            Keys::from_rows(&[&[12], &[11, 30], &[12], &[]]),
        ];
        let want = decide_in_memory(DedupKind::MinHashBands, &parts).unwrap();
        let b = DedupBarrier::new(0, DedupKind::MinHashBands, 2, None, None);
        b.submit(1, Keys::from_rows(&[&[10], &[20]]).into())
            .unwrap();
        b.submit(1, parts[1].clone().into()).unwrap();
        assert_eq!(b.mask(1).unwrap(), None);
        b.submit(0, parts[0].clone().into()).unwrap();
        for (p, mask) in want.iter().enumerate() {
            assert_eq!(b.mask(p).unwrap().as_ref(), Some(mask), "partition {p}");
        }
    }

    const SIMHASH: DedupKind = DedupKind::SimHash {
        num_blocks: 6,
        hamming_distance: 4,
    };

    #[test]
    fn simhash_keeps_the_first_row_of_each_cluster() {
        let far = 0xffff_ffff_0000_0000u128;
        // Partition 0: A=0b1, A again, C=far. Partition 1: B=0b11111 (4 bits from A), D = far
        // with 5 bits flipped (not within 4 of C), a null hash, E = B with bit 40 flipped
        // (within 4 of B only: 5 from A, but connected through B), C again.
        let (a, b, c, d, e) = (0b1, 0b11111, far, far ^ 0b11111, 0b11111 | 1 << 40);
        let parts = [
            Keys::from_rows(&[&[a], &[a], &[c]]),
            Keys::from_rows(&[&[b], &[d], &[], &[e], &[c]]),
        ];
        assert_eq!(
            decide_in_memory(SIMHASH, &parts).unwrap(),
            [
                vec![true, false, true],
                vec![false, true, true, false, false]
            ]
        );
        // Within 1 bit, only E joins B. Both decisions are what DocumentSimhashDeduplicator.process
        // of Data-Juicer 1.6.1 keeps of these values (the null row aside, which it never sees).
        let strict = DedupKind::SimHash {
            num_blocks: 6,
            hamming_distance: 1,
        };
        assert_eq!(
            decide_in_memory(strict, &parts).unwrap(),
            [
                vec![true, false, true],
                vec![true, true, true, false, false]
            ]
        );
        let bad = DedupKind::SimHash {
            num_blocks: 4,
            hamming_distance: 4,
        };
        assert!(
            decide_in_memory(bad, &parts)
                .unwrap_err()
                .to_string()
                .contains("num_blocks")
        );
    }

    #[test]
    fn simhash_keys_are_the_values() {
        let col = StringArray::from(vec![
            Some("0"),
            Some("18446744073709551615"),
            None,
            Some("12978185353757714259"),
        ]);
        let schema = Arc::new(Schema::new(vec![Field::new("h", DataType::Utf8, true)]));
        let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(col)]).unwrap();
        let mut k = Keys::new();
        keys_of(SIMHASH, &batch, 0, &mut k).unwrap();
        assert_eq!(
            k,
            Keys::from_rows(&[&[0], &[u64::MAX as u128], &[], &[12978185353757714259]])
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.bin");
        write_keys_atomic(&path, &k).unwrap();
        assert_eq!(read_keys(&path).unwrap(), k);
        let bad = StringArray::from(vec!["18446744073709551616"]);
        let batch = RecordBatch::try_new(schema, vec![Arc::new(bad)]).unwrap();
        let err = keys_of(SIMHASH, &batch, 0, &mut Keys::new()).unwrap_err();
        assert!(err.to_string().contains("decimal 64-bit unsigned integer"));
    }

    #[test]
    fn key_files_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.bin");
        let k = Keys::from_rows(&[&[1, u128::MAX], &[], &[7]]);
        write_keys_atomic(&path, &k).unwrap();
        assert_eq!(read_keys(&path).unwrap(), k);
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        assert!(
            read_keys(&path)
                .unwrap_err()
                .to_string()
                .contains("truncated dedup key file")
        );
    }

    /// Three batches of hashes with repeats and nulls.
    fn batches() -> Vec<RecordBatch> {
        let schema = Arc::new(Schema::new(vec![Field::new("h", DataType::Utf8, true)]));
        (0..3)
            .map(|b| {
                let hashes: StringArray = (0..500)
                    .map(|i| ((b * 500 + i) % 13 != 0).then(|| format!("k{}", (b * 500 + i) % 97)))
                    .collect();
                RecordBatch::try_new(schema.clone(), vec![Arc::new(hashes)]).unwrap()
            })
            .collect()
    }

    /// Over its share of the budget a partition's keys go to disk as they come, and decide as
    /// the keys held in memory do; the persisted key file holds every row either way.
    #[test]
    fn keys_past_the_budget_go_to_disk_and_decide_the_same() {
        let dir = tempfile::tempdir().unwrap();
        for kind in [DedupKind::Exact, DedupKind::MinHashBands] {
            let mut all = Keys::new();
            for batch in batches() {
                keys_of(kind, &batch, 0, &mut all).unwrap();
            }
            let want = decide_in_memory(kind, std::slice::from_ref(&all)).unwrap();
            for (budget, on_disk) in [(None, false), (Some(1024), true)] {
                let budget = budget.map(|b| MemoryBudget::new(b).unwrap());
                let path = dir.path().join(format!("{kind:?}-{on_disk}.bin"));
                let mut gatherer = KeyGatherer::new(
                    kind,
                    0,
                    budget.as_deref(),
                    "test".into(),
                    Some(path.clone()),
                )
                .unwrap();
                for batch in batches() {
                    let (held, first) = gatherer.push(&batch).unwrap();
                    assert_eq!(held.rows() - first, batch.num_rows());
                }
                assert_eq!(gatherer.rows(), 1500);
                let gathered = gatherer.finish().unwrap();
                assert_eq!(gathered.rows(), 1500);
                assert_eq!(read_keys(&path).unwrap(), all, "{kind:?}");
                crate::seal::verify(&path).unwrap();
                match gathered.0 {
                    Gathered::Memory(keys) => {
                        assert!(!on_disk);
                        assert_eq!(keys, all);
                    }
                    Gathered::Disk(file) => {
                        assert!(on_disk);
                        let sort_budget = MemoryBudget::new(1 << 20).unwrap();
                        let got = decide_sorted(kind, &sort_budget, None, vec![file]).unwrap();
                        assert_eq!(got, want, "{kind:?}");
                    }
                }
            }
        }
    }
}
