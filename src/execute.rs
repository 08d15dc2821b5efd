//! Executing a recipe. The input is indexed and cut into row-range logical partitions; every
//! partition gets its own DataFusion plan (source -> ops -> checkpoint sinks) and the plans run
//! concurrently, at most `max_concurrent_partitions` at a time, in this process or on a Ballista
//! cluster ([`crate::cluster`]), each streamed to a staging file; the export then writes the
//! partitions in input order.
//!
//! `executor_type: ray_partitioned` adds the job directory, the event log, checkpoints and resume
//! on top ([`crate::partitioned`], [`crate::job`]); [`crate::run`] dispatches.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use datafusion::arrow::ipc::reader::StreamReader;
use datafusion::arrow::ipc::writer::StreamWriter;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionContext;
use dj_plans::compile::{Barriers, CompiledRecipe, compile_partition};
use dj_plans::drop_behind::{DropBehindReader, DropBehindWriter};
use dj_plans::nodes::auto::AutoCheckpoints;
use dj_plans::nodes::checkpoint::{AutoSink, checkpoint_file_name};
use dj_plans::nodes::offline::credit_global_nodes;
use dj_plans::nodes::{
    CheckpointListener, CheckpointNode, CheckpointTarget, Concurrency, SavedCheckpoint,
};
use dj_plans::pyjson::Step;
use dj_plans::recipe::{CheckpointStrategy, Engine, ExecutorType, OpConfig, PartitionMode};
use dj_plans::source::{InputIndex, RangeHashSink, RowRange, RowRangeTable};
use dj_plans::{Recipe, planner};
use futures::StreamExt;
use serde_json::json;

use crate::autosize;
use crate::export::{ExportSpec, Exporter, JsonFragmentEncoder};
use crate::job::JobPaths;
use crate::job::events::{Event, EventKind, EventLog};
use crate::placed::PlacedExport;

/// Rows in and out of one op.
#[derive(Debug, Clone, serde::Serialize)]
pub struct OpReport {
    pub index: usize,
    pub name: String,
    pub kind: &'static str,
    pub rows_in: u64,
    pub rows_out: u64,
}

impl OpReport {
    pub fn removed(&self) -> u64 {
        self.rows_in.saturating_sub(self.rows_out)
    }
}

/// What a run did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunReport {
    pub rows_in: u64,
    pub rows_out: u64,
    pub partitions: usize,
    pub ops: Vec<OpReport>,
    pub export_files: Vec<PathBuf>,
    pub elapsed: Duration,
    /// The job id and directory (partitioned executor).
    pub job: Option<JobReport>,
    /// Partitions that resumed from a checkpoint (their earlier ops did not run again).
    pub resumed_partitions: usize,
    /// The `max_concurrent_partitions` limit, and the most partitions that ran at once.
    pub concurrency_limit: usize,
    pub peak_concurrency: usize,
    /// Saved files that failed verification on resume and were moved aside.
    pub quarantined: Vec<crate::job::checkpoints::Quarantined>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct JobReport {
    pub job_id: String,
    pub job_dir: PathBuf,
    /// The job had completed before: nothing was run or exported.
    pub already_complete: bool,
}

/// How to run a recipe: `--job_id` / `--resume` and the engine as given on the command line,
/// and what the caller wants to hear while it runs.
#[derive(Clone, Default)]
pub struct RunOptions {
    pub job_id: Option<String>,
    pub resume: Option<String>,
    /// The command that started the job (for the resume command shown to the user).
    pub command: Vec<String>,
    /// Told about the job as it starts (the CLI prints the resume token); `None`: nobody.
    pub observer: Option<Arc<dyn RunObserver>>,
    /// Test hook: a pause after every event, so kill tests can hit every moment.
    pub event_delay: Option<Duration>,
    /// Show progress (bars on a terminal, else a log line every 10 s) on stderr.
    pub progress: bool,
    /// `--engine`: overrides the recipe's `engine`.
    pub engine: Option<Engine>,
    /// `--scheduler`: overrides the recipe's `scheduler`.
    pub scheduler: Option<String>,
}

/// Where the partitions' plans run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Local,
    /// A Ballista cluster, by its scheduler's `host:port`.
    Ballista {
        scheduler: String,
    },
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("job_id", &self.job_id)
            .field("resume", &self.resume)
            .field("command", &self.command)
            .field("engine", &self.engine)
            .field("scheduler", &self.scheduler)
            .field("event_delay", &self.event_delay)
            .field("progress", &self.progress)
            .finish()
    }
}

/// What a partitioned job tells its caller while it runs; the library itself prints nothing.
pub trait RunObserver: Send + Sync {
    /// A new checkpointed job started: `resume_command` resumes it if it stops.
    fn resume_token(&self, job_id: &str, resume_command: &[String]);
    /// Something the user should know that does not stop the run.
    fn warning(&self, message: &str);
    /// What the run does that is worth a line (checkpoints reused from another job).
    fn note(&self, message: &str);
}

impl RunOptions {
    /// Tells the observer, if any, that `message` is worth a warning.
    pub(crate) fn warn(&self, message: &str) {
        if let Some(o) = &self.observer {
            o.warning(message);
        }
    }

    /// The engine the flags choose, else the recipe's.
    pub fn target(&self, recipe: &Recipe) -> Target {
        match self.engine.unwrap_or(recipe.engine) {
            Engine::Local => Target::Local,
            Engine::Ballista => Target::Ballista {
                scheduler: self
                    .scheduler
                    .clone()
                    .unwrap_or_else(|| recipe.scheduler.clone()),
            },
        }
    }
}

/// The logical partitions of a run, and the auto-sizing decision when `partition.mode: auto`.
pub(crate) struct Partitioning {
    pub ranges: Vec<RowRange>,
    pub sizing: Option<autosize::Recommendation>,
}

/// Cuts the input into logical partitions as the recipe asks: `np` balanced ranges for the
/// default executor; for `ray_partitioned`, `manual` (`num_of_partitions` balanced ranges, or
/// `size` rows each with the remainder in the last) or `auto` (partition_size_tuning.md on a
/// sample of the input, balanced ranges; the `size` fallback when analysis fails).
pub(crate) async fn plan_partitioning(
    recipe: &Recipe,
    index: &Arc<InputIndex>,
) -> Result<Partitioning> {
    let rows = index.total_rows;
    let p = &recipe.partition;
    // Equal bytes rather than equal rows, so long documents don't make one partition the
    // straggler; rows when the input's format has no byte marks.
    let balanced = |n: usize| index.byte_balanced_ranges(n);
    if recipe.executor_type != ExecutorType::RayPartitioned {
        return Ok(Partitioning {
            ranges: balanced(recipe.np),
            sizing: None,
        });
    }
    match p.mode {
        PartitionMode::Manual => {
            if let Some(size) = p.size {
                let n = (rows / size as u64).max(1);
                let size = size as u64;
                let ranges = (0..n)
                    .map(|i| RowRange {
                        start: i * size,
                        end: if i + 1 == n { rows } else { (i + 1) * size },
                    })
                    .collect();
                return Ok(Partitioning {
                    ranges,
                    sizing: None,
                });
            }
            let n = p.num_of_partitions;
            if n as u64 > rows && rows > 0 {
                bail!(
                    "partition.num_of_partitions={n} exceeds the {rows} row(s) in the input dataset, so at least one \
                     partition would be empty. Set num_of_partitions to at most {rows}, or use partition.mode: auto \
                     to let the executor size the partitions from the dataset itself."
                );
            }
            Ok(Partitioning {
                ranges: balanced(n),
                sizing: None,
            })
        }
        PartitionMode::Auto => {
            let mut rec = match sample_rows(recipe, index).await {
                Ok(samples) => match autosize::Resources::detect() {
                    Ok(res) => {
                        let names: Vec<&str> =
                            recipe.process.iter().map(|o| o.name.as_str()).collect();
                        autosize::recommend(rows, &samples, &names, &res, p.target_size_mb)
                    }
                    Err(e) => autosize::Recommendation::fallback(
                        p.size.or(Some(5000)),
                        format!("cannot read system resources: {e}"),
                    ),
                },
                Err(e) => autosize::Recommendation::fallback(
                    p.size.or(Some(5000)),
                    format!("cannot sample the input: {e:#}"),
                ),
            };
            let cfg = autosize::CountConfig {
                np: recipe.np,
                num_of_partitions: p.num_of_partitions,
                max_concurrent_partitions: p.max_concurrent_partitions,
                partitions_per_node: p.partitions_per_node,
                max_size_mb: p.max_size_mb,
                input_bytes: index.approx_bytes(RowRange {
                    start: 0,
                    end: rows,
                }),
            };
            let n = rec.count_partitions(rows, &cfg);
            for line in &rec.reasoning {
                tracing::info!("auto partitioning: {line}");
            }
            Ok(Partitioning {
                ranges: balanced(n),
                sizing: Some(rec),
            })
        }
    }
}

/// The first [`autosize::sample_size`] rows of the input, as the optimizer sees them.
async fn sample_rows(
    recipe: &Recipe,
    index: &Arc<InputIndex>,
) -> Result<Vec<autosize::SampleStats>> {
    let k = autosize::sample_size(index.total_rows) as u64;
    let exec = dj_plans::source::RowRangeExec::new(
        index.clone(),
        vec![RowRange {
            start: 0,
            end: k.min(index.total_rows),
        }],
        None,
    )?;
    let mut stream = exec.execute(0, planner::session(1).task_ctx())?;
    let keys = autosize::SampleKeys::with_text_key(recipe.text_keys[0].clone());
    let mut out = Vec::with_capacity(k as usize);
    let mut text = String::new();
    while let Some(batch) = stream.next().await {
        text.clear();
        dj_plans::pyjson::write_rows(&batch?, &mut text, &dj_plans::pyjson::JsonTypes::none());
        for line in text.lines() {
            out.push(autosize::SampleStats::from_json(
                &serde_json::from_str(line)?,
                &keys,
            ));
        }
    }
    Ok(out)
}

/// `max_concurrent_partitions` for `ray_partitioned` (the rule of [`autosize::max_concurrent_partitions`]:
/// an explicit value, or "auto" = at most 4 for CPU-only pipelines, bounded by `np`); `np` for the
/// other executors. Never more than the partitions.
pub(crate) fn concurrency_limit(recipe: &Recipe, partitions: usize) -> usize {
    match recipe.executor_type {
        ExecutorType::RayPartitioned => autosize::max_concurrent_partitions(
            recipe.partition.max_concurrent_partitions,
            partitions,
            recipe.np,
        ),
        _ => recipe.np.clamp(1, partitions.max(1)),
    }
}

/// `checkpoint.strategy: auto`: the run's cost model over `ranges` (`None` for the other
/// strategies). Model ops and deduplicators start from the expensive prior.
pub(crate) fn auto_checkpoints(
    recipe: &Recipe,
    index: &InputIndex,
    ranges: &[RowRange],
) -> Option<Arc<AutoCheckpoints>> {
    let c = &recipe.checkpoint;
    (c.enabled && c.strategy == CheckpointStrategy::Auto).then(|| {
        let expensive: Vec<bool> = recipe
            .process
            .iter()
            .map(|o| {
                o.spec.model_use() == dj_udfs::spec::ModelUse::Always
                    || o.spec.kind == dj_udfs::OpKind::Deduplicator
            })
            .collect();
        let bytes = ranges.iter().map(|r| index.approx_bytes(*r)).collect();
        Arc::new(AutoCheckpoints::new(&expensive, bytes))
    })
}

/// What `auto` would decide for partition 0 before anything is measured (`dj-plan explain`).
pub(crate) fn auto_checkpoint_plan(
    recipe: &Recipe,
    index: &InputIndex,
    ranges: &[RowRange],
) -> Vec<String> {
    let Some(model) = auto_checkpoints(recipe, index, ranges) else {
        return Vec::new();
    };
    recipe
        .process
        .iter()
        .map(|op| {
            let d = model.decide(0, 0, op.index);
            format!(
                "#{} {}: {} ({})",
                op.index,
                op.name,
                if d.checkpoint {
                    "checkpoint"
                } else {
                    "no checkpoint"
                },
                d.reason
            )
        })
        .collect()
}

/// Whether the checkpoint strategy checkpoints after `op` (Data-Juicer's `should_checkpoint`).
pub(crate) fn should_checkpoint(recipe: &Recipe, op: &OpConfig) -> bool {
    let c = &recipe.checkpoint;
    c.enabled
        && match c.strategy {
            CheckpointStrategy::Disabled => false,
            CheckpointStrategy::EveryOp => true,
            CheckpointStrategy::EveryNOps => (op.index + 1).is_multiple_of(c.n_ops),
            CheckpointStrategy::Manual => c.op_names.contains(&op.name),
            // Every op gets a sink that decides at run time.
            CheckpointStrategy::Auto => true,
        }
}

/// Where a partition starts: from the input, or after op `op` from its checkpoint file.
#[derive(Debug, Clone)]
pub(crate) enum Start {
    Input,
    /// After op `op`, from its checkpoint file. With `refilter`, op `op` runs again on it: the
    /// checkpoint is another job's, written with looser bounds of the same filter, whose stat the
    /// rows keep (`__dj__stats__`), so only the new bounds are applied.
    Checkpoint {
        op: usize,
        path: PathBuf,
        refilter: bool,
    },
}

/// Job-directory context of a partitioned run.
pub(crate) struct JobCtx {
    pub(crate) paths: JobPaths,
    pub(crate) events: Arc<EventLog>,
    /// Per partition: where the content hash goes when the partition reads its input
    /// (`None`: already known, or not needed).
    pub(crate) hash_sinks: Vec<Option<Arc<dyn RangeHashSink>>>,
    /// The job directory is on object storage: this publishes it.
    pub(crate) mirror: Option<Arc<crate::remote::JobMirror>>,
    /// `checkpoint.strategy: auto`: the run's cost model.
    pub(crate) auto: Option<Arc<AutoCheckpoints>>,
}

impl JobCtx {
    /// Told about each durable checkpoint: logs `checkpoint_save`, then publishes the job
    /// directory when it lives on object storage.
    pub(crate) fn checkpoint_listener(&self) -> Arc<dyn CheckpointListener> {
        match &self.mirror {
            None => self.events.clone(),
            Some(m) => Arc::new(crate::remote::Publishing {
                events: self.events.clone(),
                mirror: m.clone(),
            }),
        }
    }
}

/// A partition's plan, ready to execute.
struct PartitionPlan {
    partition: usize,
    /// The ops it reports: its own, after those the cluster's dedup passes ran for it.
    ops: Vec<(usize, String)>,
    compiled: CompiledRecipe,
    physical: Arc<dyn ExecutionPlan>,
    /// Its input's rows were counted by a dedup pass: its own load (a checkpoint) is not.
    loaded_before: bool,
}

/// The session partitions are planned in, and whether it sends them to a cluster.
#[derive(Clone, Copy)]
struct PlanEngine<'a> {
    session: &'a SessionContext,
    remote: bool,
}

/// Where partition `p`'s plan starts: its input range (hashed into `sink`, if given), or the
/// checkpoint it resumes from; whether that is the raw input, and the first op still to run.
pub(crate) async fn partition_source(
    recipe: &Recipe,
    index: &Arc<InputIndex>,
    range: RowRange,
    start: &Start,
    sink: Option<Arc<dyn RangeHashSink>>,
    mirror: Option<&crate::remote::JobMirror>,
) -> Result<(RowRangeTable, bool, usize)> {
    let input = || RowRangeTable::new(index.clone(), vec![range]);
    Ok(match start {
        Start::Input => (input().with_hash_sink(sink), true, 0),
        Start::Checkpoint { op, path, .. } => {
            // A checkpoint an executor published may be missing here, and on other executors.
            let published = match mirror {
                Some(m) => Some(m.fetch(path)?),
                None => None,
            };
            let table = checkpoint_table(recipe, index, *op, path, published).await?;
            (table, false, first_op(start))
        }
    })
}

/// The fields the export writes as generic JSON: those of the input, and the stats and tags
/// columns when Data-Juicer creates them (as JSON columns).
fn export_json_types(index: &InputIndex) -> dj_plans::pyjson::JsonTypes {
    let mut types = index.json_types.clone();
    if dj_plans::compile::json_stats(index) {
        types.mark(&[Step::Key(dj_udfs::STATS_COLUMN.to_string())]);
    }
    if index
        .schema
        .field_with_name(crate::export::META_COLUMN)
        .is_err()
    {
        types.mark(&[Step::Key(crate::export::META_COLUMN.to_string())]);
    }
    types
}

/// All rows of the checkpoint at `path`, saved after op `op`, read with the schema the plan has
/// after that op.
pub(crate) async fn checkpoint_table(
    recipe: &Recipe,
    index: &Arc<InputIndex>,
    op: usize,
    path: &Path,
    published: Option<dj_plans::store::RemoteObject>,
) -> Result<RowRangeTable> {
    let all_input = RowRange {
        start: 0,
        end: index.total_rows,
    };
    let input = RowRangeTable::new(index.clone(), vec![all_input]);
    let barriers = Barriers::new(&recipe.process, 1, None, None);
    let no_checkpoints = |_: &OpConfig| None;
    let upto = compile_partition(
        recipe,
        Arc::new(input),
        true,
        &recipe.process[..=op],
        &barriers.context(0, &no_checkpoints),
    )?;
    let schema = Arc::new(upto.plan.schema().as_arrow().clone());
    let path_s = path.display().to_string();
    let mut ckpt =
        tokio::task::spawn_blocking(move || InputIndex::build_with_schema(&path_s, schema))
            .await??;
    // Executors without the file fetch it from where it was published.
    if let Some(file) = ckpt.files.first_mut() {
        file.remote = published;
    }
    let all = RowRange {
        start: 0,
        end: ckpt.total_rows,
    };
    Ok(RowRangeTable::new(Arc::new(ckpt), vec![all]))
}

/// The first op a partition starting at `start` runs.
pub(crate) fn first_op(start: &Start) -> usize {
    match start {
        Start::Input => 0,
        Start::Checkpoint { op, refilter, .. } => {
            if *refilter {
                *op
            } else {
                op + 1
            }
        }
    }
}

/// Where partition `p` saves its checkpoint after `op`; on a cluster (`remote`) the executor that
/// writes it also publishes it to the job directory's bucket.
pub(crate) fn checkpoint_target(
    recipe: &Recipe,
    job: &JobCtx,
    op: &OpConfig,
    p: usize,
    first: usize,
    remote: bool,
) -> CheckpointTarget {
    let s = &recipe.intermediate_storage;
    let name = checkpoint_file_name(op.index, p, s.format, s.compression);
    let publish = job
        .mirror
        .as_ref()
        .filter(|_| remote)
        .map(|m| format!("{}/checkpoints/{name}", m.url()));
    CheckpointTarget {
        op_index: op.index,
        op_name: op.name.clone(),
        partition: p,
        path: job.paths.checkpoints.join(name),
        format: s.format,
        compression: s.compression,
        listener: job.checkpoint_listener(),
        publish,
        auto: job.auto.as_ref().map(|model| AutoSink {
            model: model.clone(),
            first_op: first,
        }),
    }
}

/// Plans every partition. Also used by `dj-plan explain` (partition 0's plan is shown).
async fn plan_partitions(
    recipe: &Recipe,
    index: &Arc<InputIndex>,
    ranges: &[RowRange],
    starts: &[Start],
    barriers: &Barriers,
    job: Option<&JobCtx>,
    engine: &PlanEngine<'_>,
) -> Result<Vec<PartitionPlan>> {
    let PlanEngine { session, remote } = *engine;
    let mut plans = Vec::with_capacity(ranges.len());
    for (p, (range, start)) in ranges.iter().zip(starts).enumerate() {
        // A remote plan's input was hashed before it was sent.
        let sink = job
            .filter(|_| !remote)
            .and_then(|j| j.hash_sinks.get(p).cloned().flatten());
        let (table, from_input, first) = partition_source(
            recipe,
            index,
            *range,
            start,
            sink,
            job.and_then(|j| j.mirror.as_deref()),
        )
        .await?;
        let ops = &recipe.process[first.min(recipe.process.len())..];
        let checkpoint = |op: &OpConfig| -> Option<CheckpointTarget> {
            let job = job?;
            should_checkpoint(recipe, op)
                .then(|| checkpoint_target(recipe, job, op, p, first, remote))
        };
        let ctx = barriers.context(p, &checkpoint);
        let compiled = compile_partition(recipe, Arc::new(table), from_input, ops, &ctx)
            .with_context(|| format!("cannot compile recipe {}", recipe.file))?;
        let physical = session.state().create_physical_plan(&compiled.plan).await?;
        let ops = ops.iter().map(|o| (o.index, o.name.clone())).collect();
        plans.push(PartitionPlan {
            partition: p,
            ops,
            compiled,
            physical,
            loaded_before: false,
        });
    }
    Ok(plans)
}

/// Indexes the input, then plans partition 0 of a fresh run (what `dj-plan explain` shows).
pub(crate) struct Explainable {
    pub index: Arc<InputIndex>,
    pub ranges: Vec<RowRange>,
    pub sizing: Option<autosize::Recommendation>,
    pub session: SessionContext,
    pub logical: datafusion::logical_expr::LogicalPlan,
    pub physical: Arc<dyn ExecutionPlan>,
}

pub(crate) async fn prepare_explain(recipe: &Recipe) -> Result<Explainable> {
    let index = Arc::new(build_index(recipe).await?);
    let Partitioning { ranges, sizing } = plan_partitioning(recipe, &index).await?;
    let session = planner::session(1);
    let barriers = Barriers::new(&recipe.process, ranges.len(), None, None).with_input(&index);
    let starts = vec![Start::Input; ranges.len()];
    // Checkpoint sinks are shown where the strategy puts them, under an illustrative job dir.
    let job = if recipe.executor_type == ExecutorType::RayPartitioned {
        let paths = JobPaths::new(PathBuf::from("{work_dir}/{job_id}"));
        Some(JobCtx {
            events: Arc::new(EventLog::disabled()),
            paths,
            hash_sinks: Vec::new(),
            mirror: None,
            auto: auto_checkpoints(recipe, &index, &ranges),
        })
    } else {
        None
    };
    let mut plans = plan_partitions(
        recipe,
        &index,
        &ranges[..1],
        &starts[..1],
        &barriers,
        job.as_ref(),
        &PlanEngine {
            session: &session,
            remote: false,
        },
    )
    .await?;
    let first = plans.remove(0);
    Ok(Explainable {
        index,
        ranges,
        sizing,
        logical: first.compiled.plan,
        physical: first.physical,
        session,
    })
}

pub(crate) async fn build_index(recipe: &Recipe) -> Result<InputIndex> {
    let dataset = recipe.dataset_path.clone();
    Ok(tokio::task::spawn_blocking(move || InputIndex::build(&dataset)).await??)
}

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
    let target = &opts.target(recipe);
    let export_target = crate::remote::ExportTarget::new(&recipe.export_path)?;
    let mut spec = ExportSpec::new(
        &export_target.local,
        recipe.export_shard_size,
        recipe.keep_stats_in_res_ds,
        recipe.keep_hashes_in_res_ds,
    )?;
    spec.json_types = Arc::new(export_json_types(index));
    // Staging next to the export: an unwritable export directory fails before any work.
    let staging = staging_dir(&spec.path)?;
    let n = ranges.len();
    let concurrency = Concurrency::new(concurrency_limit(recipe, n), n);
    let keys_dir = job.map(|j| j.paths.checkpoints.as_path());
    let barriers =
        Barriers::new(&recipe.process, n, keys_dir, Some(&concurrency)).with_input(index);
    for (p, start) in starts.iter().enumerate() {
        if let Start::Checkpoint { op, .. } = start
            && let Err(d) = barriers.load_persisted(p, *op)?
        {
            bail!(
                "partition {p} resumes after op {op} but the saved keys of global op {d} are missing"
            );
        }
    }
    // On a cluster, dedups may move where partitions start (see decide_dedups_on_cluster).
    let original_starts = starts;
    let mut starts = starts.to_vec();
    let mut pass_figures: Vec<crate::passes::PassFigures> = Vec::new();
    let (session, scheduler) = match target {
        Target::Local => (planner::session(1), None),
        Target::Ballista { scheduler } => {
            // Executors cannot report content hashes back: hash here before they read.
            if let Some(job) = job {
                hash_before_remote_read(index, ranges, &starts, job, concurrency_limit(recipe, n))
                    .await?;
            }
            let session = crate::cluster::client(scheduler).await?;
            let passes = crate::passes::decide_dedups_on_cluster(
                recipe,
                index,
                ranges,
                &starts,
                &barriers,
                job,
                (&session, scheduler),
            )
            .await?;
            starts = passes.starts;
            pass_figures = passes.figures;
            crate::passes::decide_selectors_on_cluster(
                recipe, index, ranges, &starts, &barriers, job, &session,
            )
            .await?;
            if let Some(m) = job.and_then(|j| j.mirror.as_ref()) {
                // Executors publish their checkpoints; the hashes and dedup keys they depend on
                // are published first, from here.
                m.checkpoints_published_by_sinks();
                m.sync()?;
            }
            (session, Some(scheduler.clone()))
        }
    };
    let plans = plan_partitions(
        recipe,
        index,
        ranges,
        &starts,
        &barriers,
        job,
        &PlanEngine {
            session: &session,
            remote: scheduler.is_some(),
        },
    )
    .await?;
    let mut plans = plans;
    for plan in &mut plans {
        let Some(f) = pass_figures.get(plan.partition) else {
            continue;
        };
        for (op, nanos) in &f.offline {
            plan.compiled.counters.add_offline(*op, *nanos);
        }
        if f.operators.is_empty() {
            continue;
        }
        for (operator, metrics) in &f.operators {
            plan.compiled.counters.record_executed(operator, metrics);
        }
        plan.loaded_before = true;
        // The ops the passes ran are reported with the plan's own.
        let before = first_op(&original_starts[plan.partition]);
        let upto = plan.ops.first().map_or(recipe.process.len(), |(i, _)| *i);
        let mut ops: Vec<(usize, String)> = recipe.process[before..upto]
            .iter()
            .map(|o| (o.index, o.name.clone()))
            .collect();
        ops.append(&mut plan.ops);
        plan.ops = ops;
    }
    // A single JSON lines export: each partition encodes its own rows, in parallel.
    let schema = plans[0].physical.schema();
    let encoder = if plans.iter().all(|p| p.physical.schema() == schema) {
        JsonFragmentEncoder::new(&spec, &schema)?.map(Arc::new)
    } else {
        None
    };
    // A recipe ending in a deduplicator: partitions encode before its barrier and place their
    // kept lines in one shared export file after it.
    let placed = match (&encoder, &scheduler) {
        (Some(e), None) => {
            let mut by_partition: Vec<&Arc<dyn ExecutionPlan>> = Vec::with_capacity(n);
            for p in 0..n {
                match plans.iter().find(|plan| plan.partition == p) {
                    Some(plan) => by_partition.push(&plan.physical),
                    None => break,
                }
            }
            PlacedExport::new(&by_partition, staging.path(), e.has_stats())?
        }
        _ => None,
    };
    let events = job.map(|j| j.events.clone());
    let listener = job.map(|j| j.checkpoint_listener());
    let watched = plans
        .iter()
        .map(|p| crate::progress::Watched {
            partition: p.partition,
            counters: p.compiled.counters.clone(),
            // Rows a partition reads: its range, or its checkpoint's rows (unknown here: 0 = not shown).
            rows: if matches!(starts[p.partition], Start::Input) {
                ranges[p.partition].len()
            } else {
                0
            },
        })
        .collect();
    let progress = opts.progress.then(|| crate::progress::start(watched));
    let mut tasks = tokio::task::JoinSet::new();
    // The costliest partitions first (they ask for a permit in this order, and the semaphore is
    // fair), so that the cheap ones fill in at the end instead of a long one starting last.
    let mut plans = plans;
    plans.sort_by_key(|p| std::cmp::Reverse(index.approx_bytes(ranges[p.partition])));
    for plan in plans {
        let path = staging.path().join(format!(
            "part-{:05}.{}",
            plan.partition,
            if encoder.is_some() { "jsonl" } else { "arrow" }
        ));
        let task = PartitionTask {
            plan,
            ctx: session.task_ctx(),
            path,
            encoder: encoder.clone(),
            placed: placed.clone(),
            scheduler: scheduler.clone(),
            events: events.clone(),
            listener: listener.clone(),
            concurrency: concurrency.clone(),
            partitions: n,
            auto: job.and_then(|j| j.auto.clone()),
        };
        tasks.spawn(task.run());
    }
    let mut done: Vec<Option<(Staged, PartitionPlan)>> = (0..n).map(|_| None).collect();
    while let Some(joined) = tasks.join_next().await {
        let (p, staged, plan) = joined.context("partition task failed")??;
        done[p] = Some((staged, plan));
    }
    drop(progress);
    let done: Vec<(Staged, PartitionPlan)> = done
        .into_iter()
        .map(|d| d.expect("every partition ran"))
        .collect();
    let total_rows: u64 = done.iter().map(|(s, _)| s.rows).sum();
    let staged: Vec<&Staged> = done.iter().map(|(s, _)| s).collect();
    let exporter = match &placed {
        Some(placed) => Exporter::from_fragments(
            spec,
            schema.clone(),
            &placed.text,
            placed.stats.as_deref(),
            total_rows,
        )?,
        None => export_staged(spec, &schema, encoder.is_some(), &staged).await?,
    };
    let export_files = export_target.publish(exporter.finish()?)?;
    let resumed = starts
        .iter()
        .filter(|s| matches!(s, Start::Checkpoint { .. }))
        .count();
    let mut report = report(
        recipe,
        index,
        &done,
        total_rows,
        export_files,
        started.elapsed(),
        resumed,
    );
    report.concurrency_limit = concurrency_limit(recipe, n);
    report.peak_concurrency = concurrency.peak();
    Ok(report)
}

/// One partition's run: waits for a concurrency permit, stages its rows, books its per-op
/// figures (the global nodes' work here; a cluster's from the scheduler) and logs its events.
struct PartitionTask {
    plan: PartitionPlan,
    ctx: Arc<datafusion::execution::TaskContext>,
    /// Where its rows are staged.
    path: PathBuf,
    encoder: Option<Arc<JsonFragmentEncoder>>,
    /// Where it places its kept lines, when the recipe ends in a deduplicator.
    placed: Option<Arc<PlacedExport>>,
    /// The Ballista scheduler when it runs on a cluster.
    scheduler: Option<String>,
    events: Option<Arc<EventLog>>,
    listener: Option<Arc<dyn CheckpointListener>>,
    concurrency: Arc<Concurrency>,
    partitions: usize,
    /// `checkpoint.strategy: auto`: told what this partition's ops cost.
    auto: Option<Arc<AutoCheckpoints>>,
}

impl PartitionTask {
    async fn run(self) -> Result<(usize, Staged, PartitionPlan)> {
        let PartitionTask {
            plan,
            ctx,
            path,
            encoder,
            placed,
            scheduler,
            events,
            listener,
            concurrency,
            partitions: n,
            auto,
        } = self;
        concurrency.acquire(plan.partition).await;
        let p = plan.partition;
        let t0 = Instant::now();
        if let Some(ev) = &events {
            ev.log(
                Event::new(
                    EventKind::PartitionStart,
                    format!("Starting processing of partition {}/{n}", p + 1),
                )
                .partition(p),
            );
            for (i, name) in &plan.ops {
                ev.log(
                    Event::new(
                        EventKind::OpStart,
                        format!("Operation {name} (idx {i}) started on partition {p}"),
                    )
                    .partition(p)
                    .op(*i, name),
                );
            }
        }
        let mut staged = match (&placed, &encoder) {
            (Some(placed), Some(encoder)) => {
                let counters = &plan.compiled.counters;
                placed
                    .stage(&plan.physical, ctx, &path, encoder, counters)
                    .await
            }
            _ => stage_partition(plan.physical.clone(), ctx, path, encoder).await,
        };
        match &scheduler {
            None => {
                credit_global_nodes(&plan.physical, &plan.compiled.counters);
                if let Some(model) = auto.filter(|_| staged.is_ok()) {
                    let c = &plan.compiled.counters;
                    let costs: Vec<(usize, u64)> = plan
                        .ops
                        .iter()
                        .map(|(i, _)| (*i, (c.op_seconds(*i) * 1e9) as u64))
                        .collect();
                    model.record_partition(p, &costs);
                }
            }
            Some(scheduler) if staged.is_ok() => {
                let reported =
                    report_remote_partition(&plan, scheduler, listener.as_deref(), t0.elapsed());
                if let Err(e) = reported.await {
                    staged = Err(e);
                }
            }
            Some(_) => {}
        }
        concurrency.release(p);
        if let Some(ev) = &events {
            log_partition_end(ev, &plan, &staged, t0.elapsed(), n);
        }
        staged.map(|s| (p, s, plan))
    }
}

/// The export from the partitions' staged rows, in partition order: JSON lines fragments are
/// joined as they are; Arrow staging files are written through the exporter (in the selector's
/// rank order when there is one).
async fn export_staged(
    spec: ExportSpec,
    schema: &datafusion::arrow::datatypes::SchemaRef,
    fragments: bool,
    staged: &[&Staged],
) -> Result<Exporter> {
    if fragments {
        // The first partition's lines become the export; the others are appended.
        let first = staged[0];
        let mut exporter = Exporter::from_fragments(
            spec,
            schema.clone(),
            &first.path,
            first.stats_path.as_deref(),
            first.rows,
        )?;
        for s in &staged[1..] {
            exporter.append_fragments(&s.path, s.stats_path.as_deref(), s.rows)?;
        }
        return Ok(exporter);
    }
    let total_rows: u64 = staged.iter().map(|s| s.rows).sum();
    let total_bytes: u64 = staged.iter().map(|s| s.bytes).sum();
    let mut exporter = Exporter::create(spec, schema.clone(), total_rows, total_bytes)?;
    let staged: Vec<&Path> = staged
        .iter()
        .filter(|s| s.rows > 0)
        .map(|s| s.path.as_path())
        .collect();
    export_staged_batches(&mut exporter, schema, &staged).await?;
    Ok(exporter)
}

/// Content-hashes, here, every partition that will read its input on the cluster and has no
/// saved hash yet, and records the hashes before any executor can write a checkpoint.
async fn hash_before_remote_read(
    index: &Arc<InputIndex>,
    ranges: &[RowRange],
    starts: &[Start],
    job: &JobCtx,
    concurrency: usize,
) -> Result<()> {
    let todo: Vec<(usize, Arc<dyn RangeHashSink>)> = starts
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(s, Start::Input))
        .filter_map(|(p, _)| Some((p, job.hash_sinks.get(p).cloned().flatten()?)))
        .collect();
    let todo_ranges: Vec<RowRange> = todo.iter().map(|(p, _)| ranges[*p]).collect();
    let ctx = planner::session(1).task_ctx();
    let digests = crate::job::info::hash_partitions(index, &todo_ranges, ctx, concurrency).await?;
    for ((_, sink), (rows, hash)) in todo.iter().zip(digests) {
        sink.range_hashed(0, dj_plans::source::RangeDigest { rows, hash })
            .map_err(anyhow::Error::msg)?;
    }
    Ok(())
}

/// After a partition ran on the cluster: books the row counts and times its operators reported
/// with their task results (through the scheduler), and reports its checkpoints (their sinks ran
/// on executors, which cannot log events here).
async fn report_remote_partition(
    plan: &PartitionPlan,
    scheduler: &str,
    listener: Option<&dyn CheckpointListener>,
    elapsed: Duration,
) -> Result<()> {
    use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
    let counters = &plan.compiled.counters;
    // The figures are the report's, not the data's: a scheduler that cannot give them (a
    // restart, a job already evicted) leaves them at 0 rather than failing the partition.
    match crate::cluster::executed_operators(scheduler, &plan.physical).await {
        Ok(operators) => {
            for (operator, metrics) in operators {
                if plan.loaded_before && operator.starts_with("OpBoundaryExec: load") {
                    continue;
                }
                counters.record_executed(&operator, &metrics);
            }
        }
        Err(e) => tracing::warn!(
            "partition {}: per-op figures unavailable from the scheduler: {e:#}",
            plan.partition
        ),
    }
    let Some(listener) = listener else {
        return Ok(());
    };
    let mut targets = Vec::new();
    plan.compiled.plan.apply(|node| {
        if let datafusion::logical_expr::LogicalPlan::Extension(e) = node
            && let Some(c) = e.node.as_any().downcast_ref::<CheckpointNode>()
        {
            targets.push(c.target.clone());
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    targets.sort_by_key(|t| t.op_index);
    // A successful partition wrote every checkpoint of its plan (on an executor's disk, or
    // published to the job directory's bucket).
    for t in targets
        .into_iter()
        .filter(|t| t.path.is_file() || t.publish.is_some())
    {
        listener.saved(&SavedCheckpoint {
            op_index: t.op_index,
            op_name: t.op_name.clone(),
            partition: t.partition,
            path: t.path.clone(),
            rows: counters.rows_out(t.op_index),
            seconds: elapsed.as_secs_f64(),
            seal: dj_plans::seal::read_seal(&t.path),
            reason: None,
        });
    }
    Ok(())
}

/// Writes Arrow IPC staging files to the export: in the selector's rank order when the result
/// has one, else in partition order.
async fn export_staged_batches(
    exporter: &mut Exporter,
    schema: &datafusion::arrow::datatypes::SchemaRef,
    staged: &[&Path],
) -> Result<()> {
    match schema.index_of(dj_plans::nodes::ORDER_COLUMN) {
        Ok(order) => {
            crate::ranked::write_in_rank_order(staged, order, |b| {
                exporter.write(b).map_err(anyhow::Error::from)
            })
            .await
        }
        Err(_) => {
            for path in staged {
                let file = DropBehindReader::new(std::fs::File::open(path)?)?;
                let reader = StreamReader::try_new(std::io::BufReader::new(file), None)?;
                for batch in reader {
                    exporter.write(&batch?)?;
                }
            }
            Ok(())
        }
    }
}

fn log_partition_end(
    ev: &EventLog,
    plan: &PartitionPlan,
    staged: &Result<Staged>,
    elapsed: Duration,
    n: usize,
) {
    let p = plan.partition;
    let c = &plan.compiled.counters;
    let mut rows_in = c.rows_loaded();
    for (i, name) in &plan.ops {
        let rows_out = c.rows_out(*i);
        let seconds = c.op_seconds(*i);
        let mut e = match staged {
            Ok(_) => Event::new(
                EventKind::OpComplete,
                format!("Operation {name} (idx {i}) completed on partition {p} - {rows_in}→{rows_out} rows in {seconds:.3}s"),
            ),
            Err(err) => {
                let mut e = Event::new(EventKind::OpFailed, format!("Operation {name} (idx {i}) failed on partition {p}: {err:#}"));
                e.error_message = Some(format!("{err:#}"));
                e
            }
        }
        .partition(p)
        .op(*i, name);
        e.duration = Some(seconds);
        e.input_rows = Some(rows_in);
        e.output_rows = Some(rows_out);
        e.status = Some(if staged.is_ok() { "success" } else { "failed" });
        ev.log(e);
        rows_in = rows_out;
    }
    let mut e = match staged {
        Ok(s) => {
            let mut e = Event::new(
                EventKind::PartitionComplete,
                format!("Completed processing of partition {}/{n}", p + 1),
            );
            e.output_rows = Some(s.rows);
            e
        }
        Err(err) => {
            let mut e = Event::new(
                EventKind::PartitionFailed,
                format!("Partition {p} failed after 0 retries: {err:#}"),
            );
            e.error_message = Some(format!("{err:#}"));
            e.status = Some("failed");
            // Partitions are not retried: a failed one fails the job, which resumes.
            e.meta(json!({"retry_count": 0}))
        }
    };
    e.partition_id = Some(p);
    e.duration = Some(elapsed.as_secs_f64());
    ev.log(e);
}

fn report(
    recipe: &Recipe,
    index: &InputIndex,
    done: &[(Staged, PartitionPlan)],
    rows_out: u64,
    export_files: Vec<PathBuf>,
    elapsed: Duration,
    resumed_partitions: usize,
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
        rows_out,
        partitions: done.len(),
        ops,
        export_files,
        elapsed,
        job: None,
        resumed_partitions,
        concurrency_limit: 0,
        peak_concurrency: 0,
        quarantined: Vec::new(),
    }
}

/// A partition's result on disk: Arrow IPC, or with a [`JsonFragmentEncoder`] its export
/// lines (and stats lines); with a [`PlacedExport`], its kept lines' share of the shared files.
pub(crate) struct Staged {
    pub(crate) path: PathBuf,
    pub(crate) stats_path: Option<PathBuf>,
    pub(crate) rows: u64,
    pub(crate) bytes: u64,
}

fn staging_dir(export: &Path) -> Result<tempfile::TempDir> {
    let dir = export
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create export directory {}", dir.display()))?;
    tempfile::Builder::new()
        .prefix(".dj-staging-")
        .tempdir_in(dir)
        .with_context(|| format!("cannot write to export directory {}", dir.display()))
}

fn staging(path: &Path) -> String {
    format!("cannot stage {}", path.display())
}

async fn stage_partition(
    plan: Arc<dyn ExecutionPlan>,
    ctx: Arc<datafusion::execution::TaskContext>,
    path: PathBuf,
    encoder: Option<Arc<JsonFragmentEncoder>>,
) -> Result<Staged> {
    let mut stream = plan.execute(0, ctx)?;
    let create = |p: &Path| -> Result<_> {
        let file = std::fs::File::create(p).and_then(DropBehindWriter::new);
        Ok(std::io::BufWriter::with_capacity(
            1 << 20,
            file.with_context(|| format!("cannot stage {}", p.display()))?,
        ))
    };
    let (mut rows, mut bytes) = (0u64, 0u64);
    let Some(encoder) = encoder else {
        let mut writer = StreamWriter::try_new(create(&path)?, &stream.schema())?;
        while let Some(batch) = stream.next().await {
            let batch = batch?;
            rows += batch.num_rows() as u64;
            bytes += batch.get_array_memory_size() as u64;
            writer.write(&batch).with_context(|| staging(&path))?;
        }
        writer.finish().with_context(|| staging(&path))?;
        return Ok(Staged {
            path,
            stats_path: None,
            rows,
            bytes,
        });
    };
    let stats_path = encoder
        .has_stats()
        .then(|| path.with_extension("stats.jsonl"));
    let mut out = create(&path)?;
    let mut stats_out = stats_path.as_deref().map(create).transpose()?;
    let (mut text, mut stats) = (String::new(), String::new());
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        rows += batch.num_rows() as u64;
        text.clear();
        stats.clear();
        encoder.encode(&batch, &mut text, &mut stats)?;
        bytes += text.len() as u64;
        out.write_all(text.as_bytes())
            .with_context(|| staging(&path))?;
        if let (Some(s), Some(p)) = (&mut stats_out, &stats_path) {
            s.write_all(stats.as_bytes()).with_context(|| staging(p))?;
        }
    }
    out.flush().with_context(|| staging(&path))?;
    if let (Some(s), Some(p)) = (&mut stats_out, &stats_path) {
        s.flush().with_context(|| staging(p))?;
    }
    Ok(Staged {
        path,
        stats_path,
        rows,
        bytes,
    })
}

impl RunReport {
    /// The human summary `dj-run` prints.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let w = self
            .ops
            .iter()
            .map(|o| o.name.len())
            .max()
            .unwrap_or(0)
            .max(10);
        s.push_str(&format!(
            "rows in: {}  rows out: {}  partitions: {}\n",
            self.rows_in, self.rows_out, self.partitions
        ));
        for op in &self.ops {
            s.push_str(&format!(
                "  #{:<2} {:<w$}  in {:>10}  kept {:>10}  removed {:>10}\n",
                op.index,
                op.name,
                op.rows_in,
                op.rows_out,
                op.removed()
            ));
        }
        for f in &self.export_files {
            s.push_str(&format!("wrote {}\n", f.display()));
        }
        s.push_str(&format!("elapsed: {:.3}s\n", self.elapsed.as_secs_f64()));
        s
    }
}
