//! `DjOp`: the logical node closing one recipe op, and its pass-through exec that counts the
//! rows leaving the op and times the work up to it. It labels plans with the recipe's op names and
//! gives per-op kept/removed counts and compute times. It blocks predicate push-down so each filter
//! stays inside its own op. The counts and times are also the exec's metrics (`output_rows` and
//! [`CHAIN_TIME`]), which is how they come back from a cluster ([`OpCounters::record_executed`]).

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::task::{Context, Poll};

use datafusion::arrow::array::RecordBatch;
use datafusion::common::{DFSchemaRef, Result};
use datafusion::execution::{RecordBatchStream, SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{Expr, LogicalPlan, UserDefinedLogicalNodeCore};
use datafusion::physical_plan::metrics::{
    Count, ExecutionPlanMetricsSet, MetricBuilder, MetricsSet, Time,
};
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan};
use futures::Stream;

/// Rows counted at each boundary, shared by the plan's boundary nodes and the runner. Slot 0
/// counts the rows loaded (after Data-Juicer's drop of null texts); slot `i + 1` the rows
/// leaving op `i`. Each slot also sums the time spent producing its batches, upstream work
/// included (the boundaries of one partition form a chain), so an op's own compute time is the
/// difference between its slot and the previous one; time spent waiting (I/O, other partitions at
/// a barrier) is not counted.
///
/// On a cluster the boundaries run in another process and count into counters of their own;
/// their metrics come back with the job's task results ([`OpCounters::record_executed`]).
#[derive(Debug, Default)]
pub struct OpCounters {
    slots: Vec<AtomicU64>,
    nanos: Vec<AtomicU64>,
    /// Work of global nodes done in a task of their own, by the slot of their op's output:
    /// it precedes that boundary and every later one ([`OpCounters::add_offline`]).
    offline: Vec<AtomicU64>,
}

/// The metric in which a boundary sums the time spent producing its batches, upstream work
/// included (see [`OpCounters`]).
pub const CHAIN_TIME: &str = "chain_time";

impl OpCounters {
    pub fn new(ops: usize) -> Arc<OpCounters> {
        Arc::new(OpCounters {
            slots: (0..=ops).map(|_| AtomicU64::new(0)).collect(),
            nanos: (0..=ops).map(|_| AtomicU64::new(0)).collect(),
            offline: (0..=ops).map(|_| AtomicU64::new(0)).collect(),
        })
    }
    pub fn slot_count(&self) -> usize {
        self.slots.len()
    }
    /// Books what one operator of this partition's plan reported after running elsewhere:
    /// `operator` is its display line (as [`OpBoundaryExec`], `DedupExec` and `SelectExec`
    /// print it: `load`, or `#i` for op `i`), `metrics` its metrics. A boundary gives its slot's
    /// rows and [`CHAIN_TIME`]; a deduplicator or selector its `elapsed_compute` (see
    /// [`OpCounters::add_offline`]). Other operators are ignored.
    pub fn record_executed(&self, operator: &str, metrics: &MetricsSet) {
        let op_index = |rest: &str| -> Option<usize> {
            rest.strip_prefix('#')?.split(' ').next()?.parse().ok()
        };
        if let Some(rest) = operator.strip_prefix("OpBoundaryExec: ") {
            let slot = if rest.starts_with("load") {
                Some(0)
            } else {
                op_index(rest).map(|i| i + 1)
            };
            let nanos = metrics.sum_by_name(CHAIN_TIME).map(|v| v.as_usize());
            if let (Some(slot), Some(rows), Some(nanos)) = (slot, metrics.output_rows(), nanos)
                && slot < self.slots.len()
            {
                self.add(slot, rows as u64, nanos as u64);
            }
        } else if let Some(rest) = operator
            .strip_prefix("DedupExec: ")
            .or_else(|| operator.strip_prefix("SelectExec: "))
            && let (Some(op), Some(nanos)) = (op_index(rest), metrics.elapsed_compute())
            && op + 1 < self.slots.len()
        {
            self.add_offline(op, nanos as u64);
        }
    }
    /// Rows that entered the first op.
    pub fn rows_loaded(&self) -> u64 {
        self.slots[0].load(AtomicOrdering::Relaxed)
    }
    /// Rows that left op `op` (its index in the recipe).
    pub fn rows_out(&self, op: usize) -> u64 {
        self.slots[op + 1].load(AtomicOrdering::Relaxed)
    }
    /// Compute time of op `op` in seconds: the time to produce its output minus the time to
    /// produce its input (0 if the work was done elsewhere, e.g. by a node that ran its input in
    /// another task).
    pub fn op_seconds(&self, op: usize) -> f64 {
        let upto = |slot: usize| {
            let offline: u64 = self.offline[..=slot]
                .iter()
                .map(|n| n.load(AtomicOrdering::Relaxed))
                .sum();
            self.nanos[slot].load(AtomicOrdering::Relaxed) + offline
        };
        upto(op + 1).saturating_sub(upto(op)) as f64 / 1e9
    }
    /// Credits op `op` with `nanos` of work done in a task of its own (a deduplicator or
    /// selector draining its input, the upstream work it polled included): the boundaries that
    /// time the chain never saw it, yet it happened before op `op`'s output and every later op.
    pub fn add_offline(&self, op: usize, nanos: u64) {
        self.offline[op + 1].fetch_add(nanos, AtomicOrdering::Relaxed);
    }
    /// Counts `rows` leaving op `op` whose boundary did not run (a caller that did the op's
    /// work itself; its time goes to [`OpCounters::add_offline`]).
    pub fn add_rows_out(&self, op: usize, rows: u64) {
        self.add(op + 1, rows, 0);
    }
    fn add(&self, slot: usize, n: u64, nanos: u64) {
        self.slots[slot].fetch_add(n, AtomicOrdering::Relaxed);
        self.nanos[slot].fetch_add(nanos, AtomicOrdering::Relaxed);
    }
}

/// Which boundary a node is: the load step, the end of a recipe op, or the point inside filter
/// op `i` where its stat is computed and its range test not yet applied (a barrier that keeps
/// DataFusion from inlining the stat into the filter, which would compute it twice).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, serde::Serialize, serde::Deserialize,
)]
pub enum Boundary {
    Load,
    Op(usize),
    Stats(usize),
}

impl Boundary {
    /// The counter slot, if this boundary counts rows.
    fn slot(self) -> Option<usize> {
        match self {
            Boundary::Load => Some(0),
            Boundary::Op(i) => Some(i + 1),
            Boundary::Stats(_) => None,
        }
    }
}

/// Logical marker after the load step or op `index` of the recipe.
#[derive(Debug, Clone)]
pub struct OpBoundaryNode {
    pub input: LogicalPlan,
    pub boundary: Boundary,
    pub op_name: String,
    pub kind: &'static str,
    pub counters: Arc<OpCounters>,
}

impl PartialEq for OpBoundaryNode {
    fn eq(&self, o: &Self) -> bool {
        self.boundary == o.boundary && self.op_name == o.op_name && self.input == o.input
    }
}
impl Eq for OpBoundaryNode {}
impl Hash for OpBoundaryNode {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.boundary.hash(state);
        self.op_name.hash(state);
        self.input.hash(state);
    }
}
impl PartialOrd for OpBoundaryNode {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        (self.boundary, &self.op_name).partial_cmp(&(o.boundary, &o.op_name))
    }
}

impl UserDefinedLogicalNodeCore for OpBoundaryNode {
    fn name(&self) -> &str {
        "DjOp"
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
        match self.boundary {
            Boundary::Load => write!(f, "DjOp: load ({})", self.op_name),
            Boundary::Op(i) => write!(f, "DjOp: #{i} {} ({})", self.op_name, self.kind),
            Boundary::Stats(i) => write!(f, "DjStats: #{i} {} stat computed", self.op_name),
        }
    }
    fn with_exprs_and_inputs(
        &self,
        _exprs: Vec<Expr>,
        mut inputs: Vec<LogicalPlan>,
    ) -> Result<Self> {
        Ok(OpBoundaryNode {
            input: inputs.swap_remove(0),
            ..self.clone()
        })
    }
}

/// Pass-through exec counting the rows crossing a boundary.
#[derive(Debug)]
pub struct OpBoundaryExec {
    input: Arc<dyn ExecutionPlan>,
    pub boundary: Boundary,
    pub op_name: String,
    pub counters: Arc<OpCounters>,
    metrics: ExecutionPlanMetricsSet,
}

impl OpBoundaryExec {
    pub fn new(
        input: Arc<dyn ExecutionPlan>,
        boundary: Boundary,
        op_name: String,
        counters: Arc<OpCounters>,
    ) -> Self {
        OpBoundaryExec {
            input,
            boundary,
            op_name,
            counters,
            metrics: ExecutionPlanMetricsSet::new(),
        }
    }
}

impl DisplayAs for OpBoundaryExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.boundary {
            Boundary::Load => write!(f, "OpBoundaryExec: load ({})", self.op_name),
            Boundary::Op(i) => write!(f, "OpBoundaryExec: #{i} {}", self.op_name),
            Boundary::Stats(i) => write!(f, "OpBoundaryExec: #{i} {} stats", self.op_name),
        }
    }
}

impl ExecutionPlan for OpBoundaryExec {
    unary_exec_methods!("OpBoundaryExec", |this, child| OpBoundaryExec::new(
        child,
        this.boundary,
        this.op_name.clone(),
        this.counters.clone()
    ));
    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }
    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let inner = self.input.execute(partition, context)?;
        match self.boundary.slot() {
            Some(slot) => Ok(Box::pin(CountingStream {
                inner,
                slot,
                counters: self.counters.clone(),
                rows: MetricBuilder::new(&self.metrics).output_rows(partition),
                time: MetricBuilder::new(&self.metrics).subset_time(CHAIN_TIME, partition),
            })),
            None => Ok(inner),
        }
    }
}

struct CountingStream {
    inner: SendableRecordBatchStream,
    slot: usize,
    counters: Arc<OpCounters>,
    rows: Count,
    time: Time,
}

impl Stream for CountingStream {
    type Item = Result<RecordBatch>;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let started = std::time::Instant::now();
        let polled = self.inner.as_mut().poll_next(cx);
        let elapsed = started.elapsed();
        let nanos = elapsed.as_nanos() as u64;
        self.time.add_duration(elapsed);
        let rows = match &polled {
            Poll::Ready(Some(Ok(b))) => b.num_rows(),
            _ => 0,
        };
        self.rows.add(rows);
        self.counters.add(self.slot, rows as u64, nanos);
        polled
    }
}

impl RecordBatchStream for CountingStream {
    fn schema(&self) -> datafusion::arrow::datatypes::SchemaRef {
        self.inner.schema()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Work booked offline at op 1 (a dedup that drained ops 0-1 in its own task) counts for op 1
    /// and shifts every later boundary, so op 2 keeps its own time.
    #[test]
    fn offline_work_counts_for_its_op_and_shifts_later_ones() {
        let c = OpCounters::new(3);
        c.add(0, 10, 1_000_000_000); // load: 1 s
        c.add(1, 10, 3_000_000_000); // op 0: 2 s of its own
        c.add(2, 5, 10_000_000); // op 1's output polls: a drained buffer
        c.add(3, 5, 510_000_000); // op 2: 0.5 s of its own
        assert_eq!(c.op_seconds(1), 0.0);
        // The dedup polled its input for 3.5 s (ops up to 0 and its hashing) and worked 0.5 s.
        c.add_offline(1, 4_000_000_000);
        let secs: Vec<f64> = (0..3)
            .map(|op| (c.op_seconds(op) * 1e3).round() / 1e3)
            .collect();
        assert_eq!(secs, [2.0, 1.01, 0.5]);
    }
}
