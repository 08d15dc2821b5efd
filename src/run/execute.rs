//! Executing planned partitions: prepare the export, decide the global ops on the cluster
//! (Ballista only), plan every partition, run the plans concurrently (at most
//! `max_concurrent_partitions` at a time, each staging its rows), then write the export in input
//! order and report.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionContext;
use dj_plans::compile::Barriers;
use dj_plans::nodes::Concurrency;
use dj_plans::nodes::DedupBarrier;
use dj_plans::nodes::MemoryBudget;
use dj_plans::source::{InputIndex, RowRange};
use dj_plans::{Recipe, planner};
use dj_udfs::OpKind;

use super::progress::{self, Watched};
use super::task::PartitionTask;
use crate::cluster;
use crate::cluster::passes::{PassFigures, decide_dedups_on_cluster, decide_selectors_on_cluster};
use crate::export::staged::StagingArea;
use crate::export::target::ExportTarget;
use crate::export::{ExportSpec, Staged, json_types_of};
use crate::job::context::JobCtx;
use crate::options::{RunOptions, Target};
use crate::partition::{Start, concurrency_limit, first_op};
use crate::plan::{PartitionPlan, PlanEngine, plan_partitions};
use crate::report::{OpReport, RunReport};

/// Runs every partition from its start and exports the result.
pub(crate) async fn execute(
    recipe: &Recipe,
    index: &Arc<InputIndex>,
    ranges: &[RowRange],
    starts: &[Start],
    job: Option<&JobCtx>,
    opts: &RunOptions,
    started: Instant,
) -> Result<RunReport> {
    let export_target = ExportTarget::new(&recipe.export_path)?;
    let mut spec = ExportSpec::new(
        &export_target.local,
        recipe.export_shard_size,
        recipe.keep_stats_in_res_ds,
        recipe.keep_hashes_in_res_ds,
    )?;
    spec.json_types = Arc::new(json_types_of(index));
    let mut staging = StagingArea::beside(&spec.path)?;
    let n = ranges.len();
    let concurrency = Concurrency::new(concurrency_limit(recipe, n), n);
    let budget = memory_budget(recipe, opts)?;
    let barriers = barriers(recipe, index, starts, job, &concurrency, (&budget, opts))?;
    let cluster = match opts.target(recipe) {
        Target::Local => OnCluster::local(starts),
        Target::Ballista { scheduler, tls } => {
            let scheduler = cluster::Scheduler::new(&scheduler, tls.as_deref())?;
            on_cluster(recipe, index, ranges, starts, &barriers, job, scheduler).await?
        }
    };
    let engine = PlanEngine {
        session: &cluster.session,
        on_cluster: cluster.scheduler.is_some(),
    };
    let plans = plan_partitions(
        recipe,
        index,
        ranges,
        &cluster.starts,
        &barriers,
        job,
        &engine,
    )
    .await?;
    let mut plans = plans;
    for plan in &mut plans {
        credit_passes(recipe, plan, &cluster.figures, &starts[plan.partition]);
    }
    let physical: Vec<&Arc<dyn ExecutionPlan>> = plans.iter().map(|p| &p.physical).collect();
    staging.choose(&spec, &physical, engine.on_cluster, &budget)?;
    let schema = plans[0].physical.schema();
    let run = RunPartitions {
        index,
        ranges,
        starts: &cluster.starts,
        job,
        opts,
        staging: &staging,
        session: &cluster.session,
        scheduler: cluster.scheduler.clone(),
        concurrency: &concurrency,
    };
    let done = run.run(plans).await?;
    let staged: Vec<&Staged> = done.iter().map(|(s, _)| s).collect();
    let exporter = staging.export(spec, &schema, &staged, &budget).await?;
    let export_files = export_target.publish(exporter.finish()?)?;
    let resumed = (cluster.starts.iter())
        .filter(|s| matches!(s, Start::Checkpoint { .. }))
        .count();
    let mut report = report(recipe, index, &done, export_files, started.elapsed());
    report.resumed_partitions = resumed;
    report.concurrency_limit = concurrency_limit(recipe, n);
    report.peak_concurrency = concurrency.peak();
    Ok(report)
}

/// The run's memory budget: what the global ops and the export in a selector's rank order may
/// hold together (see [`MemoryBudget`]).
fn memory_budget(recipe: &Recipe, opts: &RunOptions) -> Result<Arc<MemoryBudget>> {
    let bytes = opts.memory_budget_bytes(recipe);
    let global = (recipe.process.iter())
        .any(|o| matches!(o.spec.kind, OpKind::Deduplicator | OpKind::Selector));
    if global {
        tracing::info!("the global operators' memory budget: {} MB", bytes >> 20);
    }
    Ok(MemoryBudget::new(bytes as usize)?)
}

/// The global ops' barriers, within the run's memory budget, with the keys that partitions
/// resuming from a checkpoint saved before it.
fn barriers(
    recipe: &Recipe,
    index: &InputIndex,
    starts: &[Start],
    job: Option<&JobCtx>,
    concurrency: &Arc<Concurrency>,
    (budget, opts): (&Arc<MemoryBudget>, &RunOptions),
) -> Result<Barriers> {
    let keys_dir = job.map(|j| j.paths.checkpoints.as_path());
    let barriers = Barriers::new(&recipe.process, starts.len(), keys_dir, Some(concurrency))
        .with_input(index)
        .with_budget(budget);
    // A dedup the cluster decides in stages reads its saved keys there, not here.
    let on_cluster = matches!(opts.target(recipe), Target::Ballista { .. });
    let staged = |_: &DedupBarrier| on_cluster && cluster::staged::staged_dir(job).is_some();
    for (p, start) in starts.iter().enumerate() {
        if let Start::Checkpoint { op, .. } = start
            && let Err(d) = barriers.load_persisted(p, *op, &staged)?
        {
            bail!(
                "partition {p} resumes after op {op} but the saved keys of global op {d} are missing"
            );
        }
    }
    Ok(barriers)
}

/// Where the plans run, and what the cluster's passes changed: on a cluster, the dedup passes
/// may move where partitions start (see [`decide_dedups_on_cluster`]) and measure ops the
/// final plans do not run again.
struct OnCluster {
    session: SessionContext,
    /// The Ballista scheduler; `None`: here.
    scheduler: Option<cluster::Scheduler>,
    starts: Vec<Start>,
    figures: Vec<PassFigures>,
}

impl OnCluster {
    fn local(starts: &[Start]) -> OnCluster {
        OnCluster {
            session: planner::session(1),
            scheduler: None,
            starts: starts.to_vec(),
            figures: Vec::new(),
        }
    }
}

/// Prepares a run on the Ballista cluster at `scheduler`: hashes the input the executors will
/// read, then decides the deduplicators and selectors there.
async fn on_cluster(
    recipe: &Recipe,
    index: &Arc<InputIndex>,
    ranges: &[RowRange],
    starts: &[Start],
    barriers: &Barriers,
    job: Option<&JobCtx>,
    scheduler: cluster::Scheduler,
) -> Result<OnCluster> {
    // Executors cannot report content hashes back: hash here before they read.
    if let Some(job) = job {
        let limit = concurrency_limit(recipe, ranges.len());
        cluster::hash_before_cluster_reads(index, ranges, starts, job, limit).await?;
    }
    let session = cluster::client(&scheduler, 1).await?;
    let passes = decide_dedups_on_cluster(
        recipe,
        index,
        ranges,
        starts,
        barriers,
        job,
        (&session, &scheduler),
    )
    .await?;
    decide_selectors_on_cluster(
        recipe,
        index,
        ranges,
        &passes.starts,
        barriers,
        job,
        &session,
    )
    .await?;
    if let Some(m) = job.and_then(|j| j.mirror.as_ref()) {
        // Executors publish their checkpoints; the hashes and dedup keys they depend on are
        // published first, from here.
        m.checkpoints_published_by_sinks();
        m.sync()?;
    }
    Ok(OnCluster {
        session,
        scheduler: Some(scheduler),
        starts: passes.starts,
        figures: passes.figures,
    })
}

/// Books in `plan` what the cluster's passes measured for its partition, and reports the ops
/// the passes ran (from `original`, where the partition started before them) with its own.
fn credit_passes(
    recipe: &Recipe,
    plan: &mut PartitionPlan,
    figures: &[PassFigures],
    original: &Start,
) {
    let Some(f) = figures.get(plan.partition) else {
        return;
    };
    for (op, nanos) in &f.offline {
        plan.compiled.counters.add_offline(*op, *nanos);
    }
    if f.operators.is_empty() {
        return;
    }
    for (operator, metrics) in &f.operators {
        plan.compiled.counters.record_executed(operator, metrics);
    }
    plan.loaded_before = true;
    let before = first_op(original);
    let upto = plan.ops.first().map_or(recipe.process.len(), |(i, _)| *i);
    let mut ops: Vec<(usize, String)> = recipe.process[before..upto]
        .iter()
        .map(|o| (o.index, o.name.clone()))
        .collect();
    ops.append(&mut plan.ops);
    plan.ops = ops;
}

/// Runs the partitions' plans, each as a [`PartitionTask`], with progress shown when asked.
struct RunPartitions<'a> {
    index: &'a InputIndex,
    ranges: &'a [RowRange],
    starts: &'a [Start],
    job: Option<&'a JobCtx>,
    opts: &'a RunOptions,
    staging: &'a StagingArea,
    session: &'a SessionContext,
    scheduler: Option<cluster::Scheduler>,
    concurrency: &'a Arc<Concurrency>,
}

impl RunPartitions<'_> {
    /// Every partition's staged rows and plan, in partition order.
    async fn run(&self, mut plans: Vec<PartitionPlan>) -> Result<Vec<(Staged, PartitionPlan)>> {
        let n = plans.len();
        let watched = plans
            .iter()
            .map(|p| Watched {
                partition: p.partition,
                counters: p.compiled.counters.clone(),
                // Rows a partition reads: its range, or its checkpoint's (unknown here: 0 = not
                // shown).
                rows: match self.starts[p.partition] {
                    Start::Input => self.ranges[p.partition].len(),
                    Start::Checkpoint { .. } => 0,
                },
            })
            .collect();
        let progress = self.opts.progress.then(|| progress::start(watched));
        // The costliest partitions first (they ask for a permit in this order, and the semaphore
        // is fair), so that the cheap ones fill in at the end instead of a long one starting last.
        plans.sort_by_key(|p| std::cmp::Reverse(self.index.approx_bytes(self.ranges[p.partition])));
        let mut tasks = tokio::task::JoinSet::new();
        for plan in plans {
            let task = PartitionTask {
                path: self.staging.path_of(plan.partition),
                plan,
                ctx: self.session.task_ctx(),
                staging: self.staging.staging.clone(),
                scheduler: self.scheduler.clone(),
                events: self.job.map(|j| j.events.clone()),
                listener: self.job.map(|j| j.checkpoint_listener()),
                concurrency: self.concurrency.clone(),
                partitions: n,
                auto: self.job.and_then(|j| j.auto.clone()),
            };
            tasks.spawn(task.run());
        }
        let mut done: Vec<Option<(Staged, PartitionPlan)>> = (0..n).map(|_| None).collect();
        while let Some(joined) = tasks.join_next().await {
            let (p, staged, plan) = joined.context("partition task failed")??;
            done[p] = Some((staged, plan));
        }
        drop(progress);
        Ok(done
            .into_iter()
            .map(|d| d.expect("every partition ran"))
            .collect())
    }
}

/// The run's report: rows in and out of every op, summed over the partitions that ran it.
fn report(
    recipe: &Recipe,
    index: &InputIndex,
    done: &[(Staged, PartitionPlan)],
    export_files: Vec<PathBuf>,
    elapsed: Duration,
) -> RunReport {
    let mut ops: Vec<OpReport> = recipe
        .process
        .iter()
        .map(|op| OpReport {
            index: op.index,
            name: op.name.clone(),
            kind: op.spec.kind.as_str(),
            rows_in: 0,
            rows_out: 0,
        })
        .collect();
    for (_, plan) in done {
        let c = &plan.compiled.counters;
        let mut rows_in = c.rows_loaded();
        for (i, _) in &plan.ops {
            ops[*i].rows_in += rows_in;
            ops[*i].rows_out += c.rows_out(*i);
            rows_in = c.rows_out(*i);
        }
    }
    RunReport {
        rows_in: index.total_rows,
        rows_out: done.iter().map(|(s, _)| s.rows).sum(),
        partitions: done.len(),
        ops,
        export_files,
        elapsed,
        job: None,
        resumed_partitions: 0,
        concurrency_limit: 0,
        peak_concurrency: 0,
        quarantined: Vec::new(),
    }
}
