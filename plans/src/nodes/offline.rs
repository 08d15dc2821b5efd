//! Compute time of the global nodes (deduplicators, selectors). They drain their input in a task
//! of their own, off the chain of op boundaries that times everything else, so they keep their
//! work as DataFusion's `elapsed_compute` metric and [`credit_global_nodes`] books it to their op.

use std::sync::Arc;

use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::physical_plan::ExecutionPlan;

use super::{DedupExec, OpCounters, SelectExec};

/// Books the `elapsed_compute` of every deduplicator and selector in `plan` (an executed
/// partition plan) to its op in `counters`.
pub fn credit_global_nodes(plan: &Arc<dyn ExecutionPlan>, counters: &OpCounters) {
    let _ = plan.apply(|node| {
        let op = if let Some(d) = node.downcast_ref::<DedupExec>() {
            Some(d.index())
        } else {
            node.downcast_ref::<SelectExec>().map(SelectExec::index)
        };
        if let Some(op) = op
            && let Some(nanos) = node.metrics().and_then(|m| m.elapsed_compute())
        {
            counters.add_offline(op, nanos as u64);
        }
        Ok(TreeNodeRecursion::Continue)
    });
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::{ArrayRef, RecordBatch, StringArray};
    use datafusion::datasource::memory::MemorySourceConfig;
    use datafusion::physical_plan::collect;
    use dj_udfs::DedupKind;
    use dj_udfs::columns::HASH_COLUMN;

    use super::*;
    use crate::nodes::DedupBarrier;

    /// A deduplicator's work (here: draining and keying 50,000 rows) reaches its op's time.
    #[tokio::test]
    async fn a_deduplicators_work_is_credited_to_its_op() {
        let values: ArrayRef = Arc::new(StringArray::from_iter_values(
            (0..50_000).map(|i| format!("{:032x}", i % 40_000)),
        ));
        let batch = RecordBatch::try_from_iter([(HASH_COLUMN, values)]).unwrap();
        let source =
            MemorySourceConfig::try_new_exec(&[vec![batch.clone()]], batch.schema(), None).unwrap();
        let barrier = DedupBarrier::new(1, DedupKind::Exact, 1, None, None);
        let dedup: Arc<dyn ExecutionPlan> =
            Arc::new(DedupExec::try_new(source, HASH_COLUMN, "dedup".into(), 0, barrier).unwrap());
        let kept = collect(dedup.clone(), Arc::new(Default::default()))
            .await
            .unwrap();
        assert_eq!(kept.iter().map(|b| b.num_rows()).sum::<usize>(), 40_000);
        let counters = OpCounters::new(2);
        assert_eq!(counters.op_seconds(1), 0.0);
        credit_global_nodes(&dedup, &counters);
        assert!(counters.op_seconds(1) > 0.0);
        assert_eq!(
            counters.op_seconds(0),
            0.0,
            "only the dedup's op is credited"
        );
        assert_eq!(
            dedup.metrics().unwrap().elapsed_compute(),
            Some((counters.op_seconds(1) * 1e9).round() as usize)
        );
    }
}
