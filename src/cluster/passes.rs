//! On a cluster, the global ops are decided before the partitions' plans are sent: for each
//! deduplicator and selector, a pass runs every partition's ops up to it on the cluster. With a
//! job directory on a shared disk, dedup is then decided by the executors in stages
//! ([`super::staged`]); for selectors, and dedup without one, the pass brings back only the keys
//! or values, and the client decides from all of them (within its memory budget), as a local run
//! would. The plans carry each partition's decision.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::logical_expr::{Extension, LogicalPlan, LogicalPlanBuilder};
use datafusion::physical_plan::metrics::MetricsSet;
use datafusion::prelude::SessionContext;
use dj_plans::Recipe;
use dj_plans::compile::{Barriers, CompiledRecipe, compile_partition};
use dj_plans::nodes::checkpoint::SavedCheckpoint;
use dj_plans::nodes::staged::KeysSinkNode;
use dj_plans::nodes::{CheckpointTarget, DedupBarrier, DedupNode, SelectNode};
use dj_plans::recipe::OpConfig;
use dj_plans::source::{InputIndex, RowRange};
use futures::StreamExt;

use super::{executed_operators, staged};
use crate::job::context::JobCtx;
use crate::partition::{Start, concurrency_limit, first_op};
use crate::plan::{checkpoint_target, partition_source};

/// On a cluster, decides every deduplicator before the partitions' plans are sent: for each
/// dedup op in order, each partition that has not yet given its keys runs its ops up to the
/// op's hash column on the cluster. Dedup with a job directory on a shared disk is then decided
/// by the executors in stages (see [`super::staged`]); otherwise the pass
/// returns just the hash column, and the keys are persisted and given to the op's barrier as a
/// local run would. The plans then carry each partition's keep decision. With a job directory,
/// the pass also saves the rows before the dedup as the checkpoint after the op before it
/// (written, and published, by the executor), and the partition continues from there: the ops
/// before a dedup run once, not once per dedup op and again in the final plan. Returns where each
/// partition now starts and what the passes measured.
pub(crate) async fn decide_dedups_on_cluster(
    recipe: &Recipe,
    index: &Arc<InputIndex>,
    ranges: &[RowRange],
    starts: &[Start],
    barriers: &Barriers,
    job: Option<&JobCtx>,
    cluster: (&SessionContext, &super::Scheduler),
) -> Result<DedupPasses> {
    use futures::TryStreamExt;
    let concurrency = concurrency_limit(recipe, ranges.len());
    let mut starts = starts.to_vec();
    let mut figures: Vec<PassFigures> = (0..ranges.len()).map(|_| PassFigures::default()).collect();
    let pass = Pass {
        recipe,
        index,
        ranges,
        barriers,
        job,
        cluster,
    };
    for (&g, barrier) in &barriers.dedup {
        let staged_dir = staged::staged_dir(job);
        if let Some(lists) = staged_dir.as_deref().and_then(|d| staged::decided(d, g)) {
            tracing::info!(
                "dedup op #{g}: decided by a previous run ({})",
                lists.display()
            );
            barrier.decide_by_lists(lists);
            continue;
        }
        let mut todo: Vec<(usize, Start)> = Vec::new();
        for (p, s) in starts.iter().enumerate() {
            match &staged_dir {
                Some(dir) if first_op(s) > g => staged::keys_of_resumed(barrier, dir, g, p)?,
                Some(dir) if staged::keys_saved(dir, g, p)? => {}
                _ if first_op(s) <= g => todo.push((p, s.clone())),
                _ => {}
            }
        }
        let staged = staged_dir.as_deref();
        let done: Vec<(usize, Option<Start>, PassFigures)> = futures::stream::iter(todo)
            .map(|(p, start)| pass.dedup(p, start, (g, barrier), staged))
            .buffer_unordered(concurrency.max(1))
            .try_collect()
            .await
            .with_context(|| format!("dedup op #{g}: computing keys on the cluster"))?;
        for (p, next, f) in done {
            if let Some(next) = next {
                starts[p] = next;
            }
            figures[p].operators.extend(f.operators);
            figures[p].offline.extend(f.offline);
        }
        if let Some(dir) = staged {
            let session = super::client(cluster.1, ranges.len().clamp(2, 64)).await?;
            let op = (g, recipe.process[g].name.as_str());
            let lists = staged::decide_on_executors(&session, dir, op, barrier, ranges.len())
                .await
                .with_context(|| format!("dedup op #{g}: deciding on the executors"))?;
            barrier.decide_by_lists(lists);
        }
    }
    Ok(DedupPasses { starts, figures })
}

/// What every dedup pass shares.
struct Pass<'a> {
    recipe: &'a Recipe,
    index: &'a Arc<InputIndex>,
    ranges: &'a [RowRange],
    barriers: &'a Barriers,
    job: Option<&'a JobCtx>,
    cluster: (&'a SessionContext, &'a super::Scheduler),
}

impl Pass<'_> {
    /// Partition `p`'s pass for dedup op `g`: its ops from `start` to the op's hash column, on
    /// the cluster; the keys go to the key file in `staged` (decided in stages) or to the
    /// barrier. Returns where the partition starts next (the checkpoint the pass saved, if
    /// any) and what the pass measured.
    async fn dedup(
        &self,
        p: usize,
        start: Start,
        (g, barrier): (usize, &DedupBarrier),
        staged: Option<&Path>,
    ) -> Result<(usize, Option<Start>, PassFigures)> {
        let (recipe, job) = (self.recipe, self.job);
        let (session, scheduler) = self.cluster;
        // The rows before the dedup, saved for what follows (when there are ops to save).
        let (compiled, first, from_input, target) = compile_through(
            recipe,
            self.index,
            self.ranges[p],
            &start,
            self.barriers,
            job,
            (p, g),
            |first| {
                job.filter(|_| g > first)
                    .map(|j| checkpoint_target(recipe, j, &recipe.process[g - 1], p, first, true))
            },
        )
        .await?;
        let (input, column) = global_input(&compiled.plan, g);
        let keys_plan = match staged {
            Some(dir) => LogicalPlan::Extension(Extension {
                node: Arc::new(KeysSinkNode::try_new(
                    input,
                    g,
                    recipe.process[g].name.clone(),
                    column.clone(),
                    barrier.kind(),
                    p,
                    staged::keys_file(dir, g, p),
                )?),
            }),
            None => LogicalPlanBuilder::from(input)
                .project(vec![datafusion::prelude::col(&column)])?
                .build()?,
        };
        let started = Instant::now();
        let physical = session.state().create_physical_plan(&keys_plan).await?;
        let stream =
            datafusion::physical_plan::execute_stream(physical.clone(), session.task_ctx())?;
        let rows = if staged.is_some() {
            let batches: Vec<_> = futures::TryStreamExt::try_collect(stream).await?;
            staged::sunk_rows(&batches)?
        } else {
            let keys =
                dj_plans::nodes::dedup::collect_keys(stream, barrier.kind(), &column).await?;
            let rows = keys.rows() as u64;
            barrier.contribute(p, keys)?;
            rows
        };
        let pass_time = started.elapsed();
        let figures =
            pass_figures(scheduler, &physical, (p, g, first), from_input, pass_time).await;
        let Some(t) = target else {
            return Ok((p, None, figures));
        };
        if let Some(j) = job {
            j.checkpoint_listener().saved(&SavedCheckpoint {
                op_index: t.op_index,
                op_name: t.op_name.clone(),
                partition: p,
                path: t.path.clone(),
                rows,
                seconds: pass_time.as_secs_f64(),
                seal: dj_plans::seal::read_seal(&t.path),
                reason: Some(format!(
                    "rows before deduplicator #{g}, kept for what follows"
                )),
            });
        }
        let next = Start::Checkpoint {
            op: t.op_index,
            path: t.path,
            refilter: false,
        };
        Ok((p, Some(next), figures))
    }
}

/// What partition `p`'s pass for dedup op `g` (whose plan starts at op `first`) ran, with the
/// per-op figures of the ops it ran (the final plan runs the rest; the rows a pass from a
/// checkpoint loads were counted by the pass before) and the dedup's own work in it (hashing,
/// keys): the pass's time after its input was produced (the last boundary's chain time).
async fn pass_figures(
    scheduler: &super::Scheduler,
    physical: &Arc<dyn datafusion::physical_plan::ExecutionPlan>,
    (p, g, first): (usize, usize, usize),
    from_input: bool,
    pass_time: std::time::Duration,
) -> PassFigures {
    let ran: Vec<(String, MetricsSet)> = match executed_operators(scheduler, physical).await {
        Ok(ops) => ops
            .into_iter()
            .filter(|(o, _)| from_input || !o.starts_with("OpBoundaryExec: load"))
            .collect(),
        Err(e) => {
            tracing::warn!("partition {p}: per-op figures of dedup #{g}'s pass unavailable: {e:#}");
            Vec::new()
        }
    };
    let input_label = if g > first {
        format!("OpBoundaryExec: #{} ", g - 1)
    } else {
        "OpBoundaryExec: load".to_string()
    };
    let upstream = ran
        .iter()
        .filter(|(o, _)| o.starts_with(&input_label))
        .filter_map(|(_, m)| m.sum_by_name(dj_plans::nodes::op_boundary::CHAIN_TIME))
        .map(|v| v.as_usize() as u64)
        .max()
        .unwrap_or(0);
    let own = (pass_time.as_nanos() as u64).saturating_sub(upstream);
    PassFigures {
        operators: ran,
        offline: vec![(g, own)],
    }
}

/// What the dedup passes measured for one partition: the operators they ran with their metrics,
/// and each dedup op's own time in its pass.
#[derive(Default)]
pub(crate) struct PassFigures {
    pub(crate) operators: Vec<(String, MetricsSet)>,
    pub(crate) offline: Vec<(usize, u64)>,
}

/// What [`decide_dedups_on_cluster`] leaves: where each partition starts now, and per partition
/// the operators its passes ran with their metrics (booked with the final plan's figures).
pub(crate) struct DedupPasses {
    pub(crate) starts: Vec<Start>,
    pub(crate) figures: Vec<PassFigures>,
}

/// On a cluster, decides every selector before the partitions' plans are sent, as
/// [`decide_dedups_on_cluster`] does deduplicators: each partition that has not yet given its
/// values runs its ops up to the selector on the cluster and returns just the value and order
/// columns; the values are persisted and given to the op's barrier, which ranks all rows as a
/// local run would. The plans then carry each partition's ranks.
pub(crate) async fn decide_selectors_on_cluster(
    recipe: &Recipe,
    index: &Arc<InputIndex>,
    ranges: &[RowRange],
    starts: &[Start],
    barriers: &Barriers,
    job: Option<&JobCtx>,
    session: &SessionContext,
) -> Result<()> {
    use futures::TryStreamExt;
    let concurrency = concurrency_limit(recipe, ranges.len());
    for (&s, barrier) in &barriers.select {
        let todo = starts
            .iter()
            .enumerate()
            .filter(|(_, st)| first_op(st) <= s);
        futures::stream::iter(todo)
            .map(|(p, start)| async move {
                let (compiled, ..) = compile_through(
                    recipe,
                    index,
                    ranges[p],
                    start,
                    barriers,
                    job,
                    (p, s),
                    |_| None,
                )
                .await?;
                let (input, value) = global_input(&compiled.plan, s);
                let values_plan = LogicalPlanBuilder::from(input)
                    .project(vec![
                        datafusion::prelude::col(&value),
                        datafusion::prelude::col(dj_udfs::columns::ORDER_COLUMN),
                    ])?
                    .build()?;
                let stream = session
                    .execute_logical_plan(values_plan)
                    .await?
                    .execute_stream()
                    .await?;
                let rows = dj_plans::nodes::select::collect_rows(stream, &value, p).await?;
                barrier.contribute(p, rows)?;
                anyhow::Ok(())
            })
            .buffer_unordered(concurrency.max(1))
            .try_collect::<Vec<()>>()
            .await
            .with_context(|| format!("selector op #{s}: computing values on the cluster"))?;
    }
    Ok(())
}

/// The input of op `op`'s global node in `plan` (a [`DedupNode`] or [`SelectNode`]: its rows with
/// the hash or value column) and that column's name.
fn global_input(plan: &LogicalPlan, op: usize) -> (LogicalPlan, String) {
    let mut found = None;
    plan.apply(|node| {
        if let LogicalPlan::Extension(e) = node {
            let any = e.node.as_any();
            if let Some(d) = any.downcast_ref::<DedupNode>().filter(|d| d.index == op) {
                found = Some((d.input.clone(), d.hash_column.clone()));
            } else if let Some(s) = any.downcast_ref::<SelectNode>().filter(|s| s.index == op) {
                found = Some((s.input.clone(), s.value_column.clone()));
            }
            if found.is_some() {
                return Ok(TreeNodeRecursion::Stop);
            }
        }
        Ok(TreeNodeRecursion::Continue)
    })
    .expect("visiting a plan cannot fail");
    found.expect("the compiled ops end with the global op")
}

/// Partition `p`'s ops from where it starts through op `upto`, compiled for a pass, with the
/// checkpoint `checkpoint` asks for given the first op the partition runs. Returns the plan, that
/// first op, whether it reads the input, and the checkpoint.
#[allow(clippy::too_many_arguments)]
async fn compile_through(
    recipe: &Recipe,
    index: &Arc<InputIndex>,
    range: RowRange,
    start: &Start,
    barriers: &Barriers,
    job: Option<&JobCtx>,
    (p, upto): (usize, usize),
    checkpoint: impl FnOnce(usize) -> Option<CheckpointTarget>,
) -> Result<(CompiledRecipe, usize, bool, Option<CheckpointTarget>)> {
    let mirror = job.and_then(|j| j.mirror.as_deref());
    let (table, from_input, first) =
        partition_source(recipe, index, range, start, None, mirror).await?;
    let target = checkpoint(first);
    let only = |op: &OpConfig| target.clone().filter(|t| t.op_index == op.index);
    let compiled = compile_partition(
        recipe,
        Arc::new(table),
        from_input,
        &recipe.process[first..=upto],
        &barriers.context(p, &only),
    )?;
    Ok((compiled, first, from_input, target))
}
