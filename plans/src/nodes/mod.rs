//! Custom plan nodes: [`op_boundary`] marks where each recipe op ends (and counts its rows);
//! [`checkpoint`] writes a partition's rows after an op ([`auto`] decides where when the strategy
//! is `auto`); [`dedup`] keeps the first row per hash (or per near-duplicate component) across all
//! partitions, holding its rows back in a spill until then, and decides from [`keys`] in memory
//! or, past its memory budget, from keys sorted on disk ([`sorted_keys`]), each partition's
//! keys gathered within its share of the budget ([`gather`]); [`select`] ranks rows
//! across partitions; [`offline`] books the global nodes' compute time; [`concurrency`] is the
//! runner's partition limit, which a partition waiting at a barrier gives back; [`staged`]
//! decides exact and MinHash dedup on a cluster's executors, in stages saved as files.

/// The `ExecutionPlan` methods shared by the single-input nodes that keep their input's
/// properties and row order; `$rebuild` builds the node again over the new child `$child`.
macro_rules! unary_exec_methods {
    ($name:literal, |$this:ident, $child:ident| $rebuild:expr) => {
        fn name(&self) -> &str {
            $name
        }
        fn properties(&self) -> &std::sync::Arc<datafusion::physical_plan::PlanProperties> {
            self.input.properties()
        }
        fn children(&self) -> Vec<&std::sync::Arc<dyn datafusion::physical_plan::ExecutionPlan>> {
            vec![&self.input]
        }
        fn maintains_input_order(&self) -> Vec<bool> {
            vec![true]
        }
        fn apply_expressions(
            &self,
            _f: &mut dyn FnMut(
                &std::sync::Arc<dyn datafusion::physical_expr::PhysicalExpr>,
            ) -> datafusion::common::Result<datafusion::common::tree_node::TreeNodeRecursion>,
        ) -> datafusion::common::Result<datafusion::common::tree_node::TreeNodeRecursion> {
            Ok(datafusion::common::tree_node::TreeNodeRecursion::Continue)
        }
        fn replace_children(
            self: std::sync::Arc<Self>,
            mut children: Vec<std::sync::Arc<dyn datafusion::physical_plan::ExecutionPlan>>,
            _options: datafusion::physical_plan::ReplaceChildrenOptions,
        ) -> datafusion::common::Result<std::sync::Arc<dyn datafusion::physical_plan::ExecutionPlan>> {
            let $this = self;
            let $child = children.swap_remove(0);
            Ok(std::sync::Arc::new($rebuild))
        }
        #[allow(deprecated)]
        fn with_new_children(
            self: std::sync::Arc<Self>,
            children: Vec<std::sync::Arc<dyn datafusion::physical_plan::ExecutionPlan>>,
        ) -> datafusion::common::Result<std::sync::Arc<dyn datafusion::physical_plan::ExecutionPlan>> {
            self.replace_children(
                children,
                datafusion::physical_plan::ReplaceChildrenOptions::new(
                    datafusion::physical_plan::ChildrenPropertiesMode::Recompute,
                ),
            )
        }
    };
}

pub mod auto;
mod band_union;
mod blake3_lanes;
pub mod checkpoint;
pub mod concurrency;
pub mod dedup;
pub mod external;
pub mod gather;
pub mod keys;
pub mod offline;
pub mod op_boundary;
pub mod select;
mod sorted_groups;
pub mod sorted_keys;
mod sorted_simhash;
mod sorted_values;
mod spill;
pub mod staged;
mod timed;
mod values;

pub use checkpoint::{
    CheckpointExec, CheckpointListener, CheckpointNode, CheckpointTarget, SavedCheckpoint,
};
pub use concurrency::Concurrency;
pub use dedup::{DedupBarrier, DedupExec, DedupNode};
pub use external::MemoryBudget;
pub use gather::{GatheredKeys, KeyGatherer};
pub use keys::{KeySet, Keys, keep_first};
pub use op_boundary::{Boundary, OpBoundaryExec, OpBoundaryNode, OpCounters};
pub use select::{SelectBarrier, SelectExec, SelectNode};
pub use spill::{CacheGrant, SpillCache};
