//! Session setup and the extension planner that maps dj-fusion's logical nodes to their
//! execution plans.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::common::Result;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::execution::context::QueryPlanner;
use datafusion::execution::{SessionState, SessionStateBuilder};
use datafusion::logical_expr::physical_planning_context::PhysicalPlanningContext;
use datafusion::logical_expr::{LogicalPlan, UserDefinedLogicalNode};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::filter::FilterExec;
use datafusion::physical_planner::{DefaultPhysicalPlanner, ExtensionPlanner, PhysicalPlanner};
use datafusion::prelude::{SessionConfig, SessionContext};

use crate::nodes::staged::{KeysSinkExec, KeysSinkNode, RemovedSinkExec, RemovedSinkNode};
use crate::nodes::{
    CheckpointExec, CheckpointNode, DedupExec, DedupNode, OpBoundaryExec, OpBoundaryNode,
};

/// Plans dj-fusion's logical nodes: `DjOp`, `DjDedup`, `DjSelect`, `DjCheckpoint`, and a
/// staged dedup's `DjDedupKeys` and `DjDedupRemoved`.
#[derive(Debug, Default)]
pub(crate) struct DjExtensionPlanner;

#[async_trait]
impl ExtensionPlanner for DjExtensionPlanner {
    async fn plan_extension(
        &self,
        _planner: &dyn PhysicalPlanner,
        node: &dyn UserDefinedLogicalNode,
        _logical_inputs: &[&LogicalPlan],
        physical_inputs: &[Arc<dyn ExecutionPlan>],
        _session: &dyn datafusion::catalog::Session,
        _ctx: &PhysicalPlanningContext,
    ) -> Result<Option<Arc<dyn ExecutionPlan>>> {
        let any = node.as_any();
        if let Some(b) = any.downcast_ref::<OpBoundaryNode>() {
            let exec = OpBoundaryExec::new(
                physical_inputs[0].clone(),
                b.boundary,
                b.op_name.clone(),
                b.counters.clone(),
            );
            return Ok(Some(Arc::new(exec)));
        }
        if let Some(d) = any.downcast_ref::<DedupNode>() {
            let exec = DedupExec::try_new(
                physical_inputs[0].clone(),
                &d.hash_column,
                d.op_name.clone(),
                d.partition,
                d.barrier.clone(),
            )?;
            return Ok(Some(Arc::new(exec)));
        }
        if let Some(s) = any.downcast_ref::<crate::nodes::SelectNode>() {
            let exec = crate::nodes::SelectExec::try_new(
                physical_inputs[0].clone(),
                &s.value_column,
                s.op_name.clone(),
                s.partition,
                s.barrier.clone(),
            )?;
            return Ok(Some(Arc::new(exec)));
        }
        if let Some(k) = any.downcast_ref::<KeysSinkNode>() {
            let exec = KeysSinkExec::try_new(
                physical_inputs[0].clone(),
                &k.hash_column,
                k.index,
                k.op_name.clone(),
                k.kind,
                k.partition,
                k.path.clone(),
            )?;
            return Ok(Some(Arc::new(exec)));
        }
        if let Some(r) = any.downcast_ref::<RemovedSinkNode>() {
            let exec = RemovedSinkExec::try_new(physical_inputs[0].clone(), r.decision.clone())?;
            return Ok(Some(Arc::new(exec)));
        }
        if let Some(c) = any.downcast_ref::<CheckpointNode>() {
            let exec = CheckpointExec::new(physical_inputs[0].clone(), c.target.clone());
            return Ok(Some(Arc::new(exec)));
        }
        Ok(None)
    }
}

#[derive(Debug)]
struct DjQueryPlanner;

#[async_trait]
impl QueryPlanner for DjQueryPlanner {
    async fn create_physical_plan(
        &self,
        logical_plan: &LogicalPlan,
        session_state: &dyn datafusion::catalog::Session,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let plan =
            DefaultPhysicalPlanner::with_extension_planners(vec![Arc::new(DjExtensionPlanner)])
                .create_physical_plan(logical_plan, session_state)
                .await?;
        uncoalesced_filters(plan)
    }
}

/// Sets every `FilterExec`'s batch size to 2, which turns off its batch coalescing (batches of
/// more than `batch_size / 2` rows pass through). Coalescing would hold up to 8192 rows in every
/// filter and copy them all: with long documents, hundreds of MB per filter and a copy of the
/// text per filter. A recipe's batches are already sized by the source (rows and bytes), and
/// every op is per row, so smaller batches after a filter cost nothing worth the copy.
fn uncoalesced_filters(plan: Arc<dyn ExecutionPlan>) -> Result<Arc<dyn ExecutionPlan>> {
    plan.transform_up(|node| {
        Ok(match node.as_ref().downcast_ref::<FilterExec>() {
            Some(filter) if filter.batch_size() != 2 => {
                Transformed::yes(Arc::new(filter.with_batch_size(2)?) as Arc<dyn ExecutionPlan>)
            }
            _ => Transformed::no(node),
        })
    })
    .map(|t| t.data)
}

/// A session for running recipes: `target_partitions` threads of work, no round-robin
/// repartitioning (it would reorder rows between logical partitions), and the dj planner.
pub fn session(target_partitions: usize) -> SessionContext {
    crate::store::install_media_fetcher();
    SessionContext::new_with_state(state(config(target_partitions)))
}

/// The session settings recipes need (see [`session`]).
pub fn config(target_partitions: usize) -> SessionConfig {
    let mut config = SessionConfig::new()
        .with_target_partitions(target_partitions.max(1))
        .with_information_schema(true);
    enforce(&mut config);
    config
}

/// Settings a recipe's plan is only correct with, applied over any other configuration (a
/// Ballista scheduler builds its sessions from the client's settings).
fn enforce(config: &mut SessionConfig) {
    let options = config.options_mut();
    options.optimizer.enable_round_robin_repartition = false;
    options.optimizer.repartition_file_scans = false;
    options.execution.coalesce_batches = true;
    options.execution.parquet.schema_force_view_types = false;
}

/// A session state with dj-fusion's planner over `config`: the extension planner for the custom
/// nodes, and the optimizer without the two leaf-expression rules, which move
/// `get_field(__dj__stats__, ..)` below op boundaries and so would evaluate later filters' stats
/// before earlier filters ran.
pub fn state(mut config: SessionConfig) -> SessionState {
    enforce(&mut config);
    let rules = datafusion::optimizer::Optimizer::new()
        .rules
        .into_iter()
        .filter(|r| {
            !matches!(
                r.name(),
                "extract_leaf_expressions" | "push_down_leaf_projections"
            )
        })
        .collect();
    SessionStateBuilder::new()
        .with_config(config)
        .with_default_features()
        .with_optimizer_rules(rules)
        .with_query_planner(Arc::new(DjQueryPlanner))
        .build()
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::{Array, Int64Array};
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use datafusion::arrow::record_batch::RecordBatch;
    use datafusion::datasource::memory::MemorySourceConfig;
    use datafusion::physical_expr::PhysicalExpr;
    use datafusion::physical_expr::expressions::{col, lit};
    use datafusion::physical_plan::collect;
    use datafusion::prelude::SessionContext;

    use super::*;

    /// Filters keep the batches they are given (no coalescing into 8192-row batches), and a
    /// one-row batch that waits for a second row still leaves in input order.
    #[tokio::test]
    async fn filters_pass_batches_on_in_order() {
        let schema = Arc::new(Schema::new(vec![Field::new("v", DataType::Int64, false)]));
        let batch = |values: Vec<i64>| {
            RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from(values))]).unwrap()
        };
        let batches = vec![
            batch(vec![1]),
            batch(vec![2, 3, 4]),
            batch(vec![5]),
            batch(vec![6, 7]),
        ];
        let source = MemorySourceConfig::try_new_exec(&[batches], schema.clone(), None).unwrap();
        let keep_all: Arc<dyn PhysicalExpr> =
            Arc::new(datafusion::physical_expr::expressions::BinaryExpr::new(
                col("v", &schema).unwrap(),
                datafusion::logical_expr::Operator::GtEq,
                lit(0i64),
            ));
        let filter: Arc<dyn ExecutionPlan> =
            Arc::new(FilterExec::try_new(keep_all, source).unwrap());
        assert_eq!(
            filter
                .as_ref()
                .downcast_ref::<FilterExec>()
                .unwrap()
                .batch_size(),
            8192
        );
        let plan = uncoalesced_filters(filter).unwrap();
        assert_eq!(
            plan.as_ref()
                .downcast_ref::<FilterExec>()
                .unwrap()
                .batch_size(),
            2
        );
        let out = collect(plan, SessionContext::new().task_ctx())
            .await
            .unwrap();
        let values: Vec<i64> = out
            .iter()
            .flat_map(|b| {
                let a = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
                (0..a.len()).map(|i| a.value(i)).collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(values, [1, 2, 3, 4, 5, 6, 7]);
        assert!(out.len() >= 3, "batches were coalesced: {}", out.len());
    }
}
