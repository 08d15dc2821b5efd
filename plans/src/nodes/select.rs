//! `DjSelect`: a global selector (Data-Juicer's `*_selector` ops). Every partition's `SelectExec`
//! spills its rows, hands each row's (dataset-order key, selector value) to the op's shared
//! [`SelectBarrier`] and waits for all partitions; the decision over all rows in dataset order
//! gives each surviving row its output rank, written to the `__dj__order` column, by which the
//! export is sorted. Values are persisted like dedup keys, so resumed partitions take part.

use std::cmp::Ordering;
use std::fmt;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use datafusion::arrow::array::{Array, ArrayRef, AsArray, BooleanArray, RecordBatch, UInt64Array};
use datafusion::arrow::compute::filter_record_batch;
use datafusion::arrow::datatypes::{DataType, Float64Type, UInt64Type};
use datafusion::common::{DFSchemaRef, DataFusionError, Result, exec_err};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{Expr, LogicalPlan, UserDefinedLogicalNodeCore};
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder, MetricsSet};
use datafusion::physical_plan::stream::RecordBatchReceiverStreamBuilder;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan};
use dj_udfs::SelectorKind;
use dj_udfs::columns::ORDER_COLUMN;
use dj_udfs::selector::SelectValue;
use futures::StreamExt;
use tokio::sync::Notify;

use super::concurrency::Concurrency;
use super::external::MemoryBudget;
use super::sorted_values::{ValueFile, decide_sorted, sortable};
use super::spill::{Spill, SpillCache};
use super::timed::TimedStream;
use super::values::DROPPED;
pub use super::values::SelectRows;

/// Output ranks per partition and row.
type Ranks = Arc<Vec<Vec<u64>>>;

/// Output ranks per partition and row (`DROPPED` for rows not selected).
pub(crate) fn decide(kind: &SelectorKind, parts: &[SelectRows]) -> Vec<Vec<u64>> {
    let mut rows: Vec<(u64, usize, usize)> = Vec::new();
    for (p, part) in parts.iter().enumerate() {
        rows.extend(part.order.iter().enumerate().map(|(i, o)| (*o, p, i)));
    }
    rows.sort_unstable();
    let values: Vec<SelectValue> = rows.iter().map(|&(_, p, i)| parts[p].values[i]).collect();
    let mut ranks: Vec<Vec<u64>> = parts.iter().map(|p| vec![DROPPED; p.order.len()]).collect();
    match kind.select(&values) {
        None => {
            for (r, &(_, p, i)) in rows.iter().enumerate() {
                ranks[p][i] = r as u64;
            }
        }
        Some(picked) => {
            for (r, j) in picked.into_iter().enumerate() {
                let (_, p, i) = rows[j];
                ranks[p][i] = r as u64;
            }
        }
    }
    ranks
}

/// The meeting point of all partitions at one selector op.
pub struct SelectBarrier {
    /// `None` for a barrier decided before it was sent ([`SelectBarrier::decided`]).
    kind: Option<SelectorKind>,
    partitions: usize,
    dir: Option<PathBuf>,
    op_index: usize,
    state: Mutex<SelectState>,
    notify: Notify,
    concurrency: Option<Arc<Concurrency>>,
    /// The memory the values may hold; past it those of any selector but the random one go to
    /// disk. Unset: no limit.
    budget: std::sync::OnceLock<Arc<MemoryBudget>>,
}

/// Each partition's rows once submitted (in memory, or past the budget on disk), and the ranks
/// once all are.
struct SelectState {
    rows: Vec<Option<SelectRows>>,
    ranks: Option<Ranks>,
    reserved: Option<datafusion::execution::memory_pool::MemoryReservation>,
    /// Past the budget: each arrived partition's rows on disk (`rows` is then empty).
    files: Option<Vec<Option<ValueFile>>>,
    /// A partition on disk has a value no sort orders as memory does: decide in memory.
    unsortable: bool,
}

impl SelectState {
    fn new(partitions: usize, ranks: Option<Ranks>) -> Self {
        SelectState {
            rows: vec![None; partitions],
            ranks,
            reserved: None,
            files: None,
            unsortable: false,
        }
    }
}

impl fmt::Debug for SelectBarrier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SelectBarrier")
            .field("op_index", &self.op_index)
            .field("partitions", &self.partitions)
            .finish()
    }
}

impl SelectBarrier {
    pub fn new(
        op_index: usize,
        kind: SelectorKind,
        partitions: usize,
        dir: Option<PathBuf>,
        concurrency: Option<Arc<Concurrency>>,
    ) -> Arc<Self> {
        Arc::new(SelectBarrier {
            kind: Some(kind),
            partitions,
            dir,
            op_index,
            state: Mutex::new(SelectState::new(partitions, None)),
            notify: Notify::new(),
            concurrency,
            budget: Default::default(),
        })
    }

    /// A barrier whose ranks for partition `partition` are already `ranks` (decoded from a
    /// plan on a cluster executor: the runner decided it from every partition's values).
    pub fn decided(
        op_index: usize,
        partitions: usize,
        partition: usize,
        ranks: Vec<u64>,
    ) -> Arc<Self> {
        let mut all = vec![Vec::new(); partitions];
        all[partition] = ranks;
        Arc::new(SelectBarrier {
            kind: None,
            partitions,
            dir: None,
            op_index,
            state: Mutex::new(SelectState::new(partitions, Some(Arc::new(all)))),
            notify: Notify::new(),
            concurrency: None,
            budget: Default::default(),
        })
    }

    pub fn partitions(&self) -> usize {
        self.partitions
    }

    /// Partition `p`'s output ranks (`u64::MAX`: dropped) once every partition's values are in.
    pub fn ranks(&self, p: usize) -> Option<Vec<u64>> {
        self.state
            .lock()
            .unwrap()
            .ranks
            .as_ref()
            .map(|r| r[p].clone())
    }

    /// Bounds the memory the values hold (once; later calls are ignored).
    pub fn set_budget(&self, budget: Arc<MemoryBudget>) {
        let _ = self.budget.set(budget);
    }

    /// What the spilled rows kept in the page cache may take of the memory budget, if there
    /// is one.
    pub(crate) fn spill_cache(&self) -> Option<Arc<SpillCache>> {
        self.budget.get().map(|b| b.spill_cache())
    }

    /// Whether the values went to disk, past the memory budget.
    pub fn spilled(&self) -> bool {
        self.state.lock().unwrap().files.is_some()
    }

    /// Persists and submits partition `p`'s values without waiting for the others (values
    /// computed elsewhere, e.g. by a cluster).
    pub fn contribute(&self, p: usize, rows: SelectRows) -> Result<()> {
        if let Some(path) = self.values_path(p) {
            write_rows_atomic(&path, &rows).map_err(|e| super::spill::saving_error(&path, e))?;
        }
        self.submit(p, rows)
    }

    /// File holding partition `p`'s selector values.
    pub(crate) fn values_path(&self, p: usize) -> Option<PathBuf> {
        self.dir
            .as_ref()
            .map(|d| d.join(values_file_name(self.op_index, p)))
    }

    /// Loads the persisted values of partition `p` (one resuming past this op); false if none.
    pub fn load_persisted(&self, p: usize) -> std::io::Result<bool> {
        let Some(path) = self.values_path(p) else {
            return Ok(false);
        };
        if !path.exists() {
            return Ok(false);
        }
        let rows = read_rows(&path)?;
        self.submit(p, rows).map_err(std::io::Error::other)?;
        Ok(true)
    }

    fn submit(&self, p: usize, rows: SelectRows) -> Result<()> {
        let mut guard = self.state.lock().unwrap();
        let st = &mut *guard;
        if st.files.is_none() && !self.fits(st, &rows) {
            self.spill_held(st)?;
        }
        match &mut st.files {
            Some(files) => {
                let kind = self
                    .kind
                    .as_ref()
                    .expect("a decided barrier is given no values");
                st.unsortable |= !sortable(kind, &rows);
                files[p] = Some(ValueFile::write(kind, &rows)?);
            }
            None => st.rows[p] = Some(rows),
        }
        let all_in = match &st.files {
            Some(files) => files.iter().all(Option::is_some),
            None => st.rows.iter().all(Option::is_some),
        };
        if all_in && st.ranks.is_none() {
            st.ranks = Some(Arc::new(self.decide_all(st)?));
            st.reserved = None;
            self.notify.notify_waiters();
        }
        Ok(())
    }

    /// Whether `rows` can join those held in memory within the budget: about 112 bytes a row
    /// held and sorted or grouped in the decision. A random selector does not go to disk.
    fn fits(&self, st: &mut SelectState, rows: &SelectRows) -> bool {
        let sorts = !matches!(self.kind, Some(SelectorKind::Random { .. }));
        let Some(budget) = self.budget.get().filter(|_| sorts) else {
            return true;
        };
        let reserved = st.reserved.get_or_insert_with(|| {
            budget.reservation(format!("SelectBarrier[op {}]", self.op_index))
        });
        reserved.try_grow(rows.order.len() * 112).is_ok()
    }

    /// Moves the rows held in memory to disk, for good.
    fn spill_held(&self, st: &mut SelectState) -> Result<()> {
        let kind = self
            .kind
            .as_ref()
            .expect("a decided barrier is given no values");
        let mut files: Vec<Option<ValueFile>> = (0..self.partitions).map(|_| None).collect();
        for (p, rows) in st.rows.iter_mut().enumerate() {
            if let Some(rows) = rows.take() {
                st.unsortable |= !sortable(kind, &rows);
                files[p] = Some(ValueFile::write(kind, &rows)?);
            }
        }
        st.reserved = None;
        tracing::info!(
            op = self.op_index,
            budget = self.budget.get().map_or(0, |b| b.bytes()),
            "the selector values exceed the memory budget: deciding from values sorted on disk"
        );
        st.files = Some(files);
        Ok(())
    }

    /// The ranks once every partition's rows are in: from the sorted files, or in memory (the
    /// files read back when one holds a value no sort orders as memory does).
    fn decide_all(&self, st: &mut SelectState) -> Result<Vec<Vec<u64>>> {
        let kind = self
            .kind
            .as_ref()
            .expect("a decided barrier is given no values");
        let parts: Vec<SelectRows> = match st.files.as_mut() {
            None => st.rows.iter_mut().map(|r| r.take().unwrap()).collect(),
            Some(files) => {
                let files: Vec<ValueFile> = files.iter_mut().map(|f| f.take().unwrap()).collect();
                if !st.unsortable {
                    let budget = self.budget.get().expect("spilled under a budget");
                    return decide_sorted(kind, budget, files);
                }
                files
                    .into_iter()
                    .map(ValueFile::read)
                    .collect::<Result<_>>()?
            }
        };
        Ok(decide(kind, &parts))
    }

    async fn arrive(&self, p: usize, rows: SelectRows) -> Result<Vec<u64>> {
        if let Some(path) = self.values_path(p) {
            write_rows_atomic(&path, &rows).map_err(|e| super::spill::saving_error(&path, e))?;
        }
        if let Some(c) = &self.concurrency {
            c.release(p);
        }
        self.submit(p, rows)?;
        let ranks = loop {
            let notified = self.notify.notified();
            if let Some(r) = self.state.lock().unwrap().ranks.clone() {
                break r[p].clone();
            }
            notified.await;
        };
        if let Some(c) = &self.concurrency {
            c.acquire(p).await;
        }
        Ok(ranks)
    }
}

/// File name of partition `partition`'s values at selector op `op`.
pub fn values_file_name(op: usize, partition: usize) -> String {
    format!("select_values_op_{op:04}_partition_{partition:04}.bin")
}

/// Values file: per row the u64 order key, a tag byte (0 none, 1 number, 2 group) and 16 bytes.
fn write_rows_atomic(path: &std::path::Path, rows: &SelectRows) -> std::io::Result<()> {
    let (sealed, file) = crate::seal::SealedFile::create(path)?;
    let mut w = std::io::BufWriter::new(file);
    for (o, v) in rows.order.iter().zip(&rows.values) {
        w.write_all(&o.to_le_bytes())?;
        let (tag, bits) = match v {
            SelectValue::None => (0u8, 0u128),
            SelectValue::Number(x) => (1, x.to_bits() as u128),
            SelectValue::Group(g) => (2, *g),
        };
        w.write_all(&[tag])?;
        w.write_all(&bits.to_le_bytes())?;
    }
    sealed.commit(w.into_inner().map_err(|e| e.into_error())?)?;
    Ok(())
}

fn read_rows(path: &std::path::Path) -> std::io::Result<SelectRows> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.read_to_end(&mut bytes)?;
    if bytes.len() % 25 != 0 {
        return Err(std::io::Error::other(format!(
            "{}: truncated selector value file",
            path.display()
        )));
    }
    let mut rows = SelectRows::default();
    for rec in bytes.chunks_exact(25) {
        rows.order
            .push(u64::from_le_bytes(rec[..8].try_into().unwrap()));
        let bits = u128::from_le_bytes(rec[9..].try_into().unwrap());
        rows.values.push(match rec[8] {
            1 => SelectValue::Number(f64::from_bits(bits as u64)),
            2 => SelectValue::Group(bits),
            _ => SelectValue::None,
        });
    }
    Ok(rows)
}

/// Logical selector after op `index`, for logical partition `partition`. Its input carries the
/// value column and the order column; the node keeps the schema.
#[derive(Debug, Clone)]
pub struct SelectNode {
    pub input: LogicalPlan,
    pub index: usize,
    pub op_name: String,
    pub value_column: String,
    pub partition: usize,
    pub barrier: Arc<SelectBarrier>,
}

impl PartialEq for SelectNode {
    fn eq(&self, o: &Self) -> bool {
        (self.index, &self.op_name, self.partition) == (o.index, &o.op_name, o.partition)
            && self.input == o.input
    }
}
impl Eq for SelectNode {}
impl std::hash::Hash for SelectNode {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (self.index, &self.op_name, self.partition).hash(state);
        self.input.hash(state);
    }
}
impl PartialOrd for SelectNode {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        (self.index, &self.op_name, self.partition).partial_cmp(&(o.index, &o.op_name, o.partition))
    }
}

impl UserDefinedLogicalNodeCore for SelectNode {
    fn name(&self) -> &str {
        "DjSelect"
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
            "DjSelect: #{} {} rank rows by {} across {} partitions",
            self.index, self.op_name, self.value_column, self.barrier.partitions
        )
    }
    fn with_exprs_and_inputs(&self, _e: Vec<Expr>, mut inputs: Vec<LogicalPlan>) -> Result<Self> {
        Ok(SelectNode {
            input: inputs.swap_remove(0),
            ..self.clone()
        })
    }
}

/// Physical side of [`SelectNode`].
pub struct SelectExec {
    input: Arc<dyn ExecutionPlan>,
    value_index: usize,
    order_index: usize,
    pub op_name: String,
    partition: usize,
    barrier: Arc<SelectBarrier>,
    /// `elapsed_compute`: draining the input (the upstream work it polls), the values, the spill
    /// and the ranking of the rows read back; not the wait at the barrier or for the consumer.
    metrics: ExecutionPlanMetricsSet,
}

impl fmt::Debug for SelectExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SelectExec")
            .field("op_name", &self.op_name)
            .field("partition", &self.partition)
            .finish()
    }
}

impl SelectExec {
    pub fn try_new(
        input: Arc<dyn ExecutionPlan>,
        value_column: &str,
        op_name: String,
        partition: usize,
        barrier: Arc<SelectBarrier>,
    ) -> Result<Self> {
        let value_index = input.schema().index_of(value_column)?;
        let order_index = input.schema().index_of(ORDER_COLUMN)?;
        Ok(SelectExec {
            input,
            value_index,
            order_index,
            op_name,
            partition,
            barrier,
            metrics: ExecutionPlanMetricsSet::new(),
        })
    }

    /// The selector's op index in the recipe.
    pub fn index(&self) -> usize {
        self.barrier.op_index
    }
    pub fn value_column(&self) -> String {
        self.input.schema().field(self.value_index).name().clone()
    }
    pub fn partition(&self) -> usize {
        self.partition
    }
    pub fn barrier(&self) -> &Arc<SelectBarrier> {
        &self.barrier
    }
}

impl DisplayAs for SelectExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "SelectExec: #{} {} (global barrier over {} partitions)",
            self.barrier.op_index, self.op_name, self.barrier.partitions
        )
    }
}

fn group_key(s: &str) -> u128 {
    super::blake3_lanes::key_of_bytes(s.as_bytes())
}

/// Appends each row's order key (its `__dj__order`, or partition and row index before any
/// selector) and value.
fn rows_of(
    batch: &RecordBatch,
    value_index: usize,
    order_index: usize,
    partition: usize,
    out: &mut SelectRows,
) -> Result<()> {
    // A JSON checkpoint reads the order column back as Int64.
    let order = datafusion::arrow::compute::cast(batch.column(order_index), &DataType::UInt64)?;
    let order = order.as_primitive::<UInt64Type>();
    let value = batch.column(value_index);
    for row in 0..batch.num_rows() {
        let key = if order.is_valid(row) {
            order.value(row)
        } else {
            ((partition as u64) << 40) | out.order.len() as u64
        };
        out.order.push(key);
        let v = if value.is_null(row) {
            SelectValue::None
        } else {
            match value.data_type() {
                DataType::Float64 => {
                    SelectValue::Number(value.as_primitive::<Float64Type>().value(row))
                }
                DataType::Utf8 => {
                    SelectValue::Group(group_key(value.as_string::<i32>().value(row)))
                }
                DataType::Null => SelectValue::None,
                other => {
                    return exec_err!("selector value column must be Float64 or Utf8, got {other}");
                }
            }
        };
        out.values.push(v);
    }
    Ok(())
}

/// Partition `partition`'s rows at a selector from `stream`, which carries the value column
/// `value_column` and the order column.
pub async fn collect_rows(
    mut stream: SendableRecordBatchStream,
    value_column: &str,
    partition: usize,
) -> Result<SelectRows> {
    let value_index = stream.schema().index_of(value_column)?;
    let order_index = stream.schema().index_of(ORDER_COLUMN)?;
    let mut rows = SelectRows::default();
    while let Some(batch) = stream.next().await {
        rows_of(&batch?, value_index, order_index, partition, &mut rows)?;
    }
    Ok(rows)
}

/// A batch with its order column set to `ranks`, without the dropped rows.
fn ranked(
    batch: &RecordBatch,
    ranks: &[u64],
    order_index: usize,
    schema: &datafusion::arrow::datatypes::SchemaRef,
) -> Result<RecordBatch> {
    let order: ArrayRef = Arc::new(UInt64Array::from(ranks.to_vec()));
    let mut cols = batch.columns().to_vec();
    cols[order_index] = order;
    let ranked = RecordBatch::try_new(schema.clone(), cols)?;
    let mask: BooleanArray = ranks.iter().map(|r| Some(*r != DROPPED)).collect();
    Ok(filter_record_batch(&ranked, &mask)?)
}

impl ExecutionPlan for SelectExec {
    unary_exec_methods!("SelectExec", |this, child| SelectExec::try_new(
        child,
        this.input.schema().field(this.value_index).name(),
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
        let compute = MetricBuilder::new(&self.metrics).elapsed_compute(partition);
        let mut input = TimedStream::new(self.input.execute(partition, context)?, compute.clone());
        let (barrier, value_index, order_index, logical) = (
            self.barrier.clone(),
            self.value_index,
            self.order_index,
            self.partition,
        );
        let schema = self.schema();
        let mut builder = RecordBatchReceiverStreamBuilder::new(schema.clone(), 2);
        let tx = builder.tx();
        // Decided before this plan ran (a cluster run decides selectors first): the rows
        // stream through their ranks, unspilled.
        if let Some(ranks) = barrier.ranks(logical) {
            builder.spawn(async move {
                let mut offset = 0;
                while let Some(batch) = input.next().await {
                    let batch = batch?;
                    let n = batch.num_rows();
                    let Some(part) = ranks.get(offset..offset + n) else {
                        return exec_err!(
                            "selector op #{}: the decided ranks cover {} rows, the partition more",
                            barrier.op_index,
                            ranks.len()
                        );
                    };
                    offset += n;
                    let kept = ranked(&batch, part, order_index, &schema)?;
                    if kept.num_rows() > 0 && tx.send(Ok(kept)).await.is_err() {
                        break;
                    }
                }
                Ok(())
            });
            return Ok(builder.build());
        }
        builder.spawn(async move {
            let mut rows = SelectRows::default();
            let mut spill = Spill::caching(barrier.spill_cache());
            while let Some(batch) = input.next().await {
                let batch = batch?;
                if batch.num_rows() == 0 {
                    continue;
                }
                let _timer = compute.timer();
                rows_of(&batch, value_index, order_index, logical, &mut rows)?;
                spill.write(&batch)?;
            }
            let ranks = barrier.arrive(logical, rows).await?;
            let Some(spilled) = spill.finish()? else {
                return Ok(());
            };
            tokio::task::spawn_blocking(move || -> Result<()> {
                let reader = spilled.read()?;
                let mut offset = 0;
                let mut timer = compute.timer();
                for batch in reader {
                    let batch = batch?;
                    let n = batch.num_rows();
                    let part = &ranks[offset..offset + n];
                    offset += n;
                    let kept = ranked(&batch, part, order_index, &schema)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_follow_dataset_order_across_partitions() {
        let kind = SelectorKind::TopK {
            top_ratio: None,
            topk: Some(3),
            reverse: true,
        };
        let part = |p: u64, v: &[f64]| SelectRows {
            order: (0..v.len() as u64).map(|i| (p << 40) | i).collect(),
            values: v.iter().map(|x| SelectValue::Number(*x)).collect(),
        };
        // Dataset: [1, 5, 3 | 5, 0]: top 3 = rows 1, 3 (tie: earlier first), 2.
        let ranks = decide(&kind, &[part(0, &[1.0, 5.0, 3.0]), part(1, &[5.0, 0.0])]);
        assert_eq!(ranks, vec![vec![DROPPED, 0, 2], vec![1, DROPPED]]);
    }

    #[test]
    fn values_survive_a_round_trip_through_their_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.bin");
        let rows = SelectRows {
            order: vec![7, 1 << 40],
            values: vec![SelectValue::Number(-2.5), SelectValue::Group(99)],
        };
        write_rows_atomic(&path, &rows).unwrap();
        assert_eq!(read_rows(&path).unwrap(), rows);
    }
}
