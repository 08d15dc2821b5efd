//! Planning a run: the input cut into logical partitions (manual or auto-sized), where each
//! partition starts, where the checkpoint strategy puts sinks, and each partition's DataFusion
//! plan (source -> ops -> checkpoint sinks). `dj-plan explain` shows partition 0's.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionContext;
use dj_plans::compile::{Barriers, CompiledRecipe, compile_partition};
use dj_plans::nodes::CheckpointTarget;
use dj_plans::nodes::auto::AutoCheckpoints;
use dj_plans::nodes::checkpoint::{AutoSink, checkpoint_file_name};
use dj_plans::recipe::{CheckpointStrategy, ExecutorType, OpConfig, PartitionMode};
use dj_plans::source::{InputIndex, RangeHashSink, RowRange, RowRangeTable};
use dj_plans::{Recipe, planner};
use futures::StreamExt;

use crate::autosize;
use crate::job::JobPaths;
use crate::job::context::JobCtx;
use crate::job::events::EventLog;
use crate::job::mirror::JobMirror;
use crate::partition::{Start, first_op};

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
    let media_dir = dj_plans::source::media::dataset_dir(&recipe.dataset_path);
    let mut out = Vec::with_capacity(k as usize);
    let mut text = String::new();
    while let Some(batch) = stream.next().await {
        text.clear();
        dj_plans::pyjson::write_rows(&batch?, &mut text, &dj_plans::pyjson::JsonTypes::none());
        for line in text.lines() {
            let row = serde_json::from_str(line)?;
            out.push(autosize::SampleStats {
                media_bytes: autosize::media_file_bytes(&row, &keys, media_dir.as_deref()),
                ..autosize::SampleStats::from_json(&row, &keys)
            });
        }
    }
    Ok(out)
}

/// `checkpoint.strategy: auto`: the run's cost model over `ranges` (`None` for the other
/// strategies). Model ops, deduplicators and audio/video ops start from the expensive prior.
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
                    || o.spec.reads_audio_or_video()
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
            if !should_checkpoint(recipe, op) {
                return format!(
                    "#{} {}: no checkpoint (inside a reordered run of filters)",
                    op.index, op.name
                );
            }
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
            // Every op gets a sink that decides at run time, but inside a reordered run of
            // filters, which a partition runs whole (the compiler restores its stats' order at
            // its end).
            CheckpointStrategy::Auto => !recipe
                .reordered
                .iter()
                .any(|r| r.contains(&op.index) && op.index + 1 != r.end),
        }
}

/// A partition's plan, ready to execute.
pub(crate) struct PartitionPlan {
    pub(crate) partition: usize,
    /// The ops it reports: its own, after those the cluster's dedup passes ran for it.
    pub(crate) ops: Vec<(usize, String)>,
    pub(crate) compiled: CompiledRecipe,
    pub(crate) physical: Arc<dyn ExecutionPlan>,
    /// Its input's rows were counted by a dedup pass: its own load (a checkpoint) is not.
    pub(crate) loaded_before: bool,
}

/// The session partitions are planned in, and whether it sends them to a Ballista cluster.
#[derive(Clone, Copy)]
pub(crate) struct PlanEngine<'a> {
    pub(crate) session: &'a SessionContext,
    pub(crate) on_cluster: bool,
}

/// Where a partition's plan starts (`start`): its input `range` (hashed into `sink`, if given), or
/// the checkpoint it resumes from (fetched through `mirror` when published there); whether that
/// is the raw input, and the first op still to run.
pub(crate) async fn partition_source(
    recipe: &Recipe,
    index: &Arc<InputIndex>,
    range: RowRange,
    start: &Start,
    sink: Option<Arc<dyn RangeHashSink>>,
    mirror: Option<&JobMirror>,
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

/// Where partition `p` saves its checkpoint after `op`; on a cluster (`on_cluster`) the executor that
/// writes it also publishes it to the job directory's bucket.
pub(crate) fn checkpoint_target(
    recipe: &Recipe,
    job: &JobCtx,
    op: &OpConfig,
    p: usize,
    first: usize,
    on_cluster: bool,
) -> CheckpointTarget {
    let s = &recipe.intermediate_storage;
    let name = checkpoint_file_name(op.index, p, s.format, s.compression);
    let publish = job
        .mirror
        .as_ref()
        .filter(|_| on_cluster)
        .map(|m| format!("{}/{}", m.url(), JobPaths::checkpoint_relative(&name)));
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
pub(crate) async fn plan_partitions(
    recipe: &Recipe,
    index: &Arc<InputIndex>,
    ranges: &[RowRange],
    starts: &[Start],
    barriers: &Barriers,
    job: Option<&JobCtx>,
    engine: &PlanEngine<'_>,
) -> Result<Vec<PartitionPlan>> {
    let PlanEngine {
        session,
        on_cluster,
    } = *engine;
    let mut plans = Vec::with_capacity(ranges.len());
    for (p, (range, start)) in ranges.iter().zip(starts).enumerate() {
        // A cluster plan's input was hashed before it was sent.
        let sink = job
            .filter(|_| !on_cluster)
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
                .then(|| checkpoint_target(recipe, job, op, p, first, on_cluster))
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
    /// The recipe with its filters in the order they run (see `filter_probe`).
    pub recipe: Recipe,
    pub index: Arc<InputIndex>,
    pub ranges: Vec<RowRange>,
    pub sizing: Option<autosize::Recommendation>,
    pub session: SessionContext,
    pub logical: datafusion::logical_expr::LogicalPlan,
    pub physical: Arc<dyn ExecutionPlan>,
}

pub(crate) async fn prepare_explain(recipe: &Recipe) -> Result<Explainable> {
    let index = Arc::new(build_index(recipe).await?);
    let ordered = crate::filter_probe::ordered(recipe, &index).await?;
    let recipe = &ordered;
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
            on_cluster: false,
        },
    )
    .await?;
    let first = plans.remove(0);
    Ok(Explainable {
        recipe: ordered,
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
    let mut index = tokio::task::spawn_blocking(move || InputIndex::build(&dataset)).await??;
    if index.total_rows == 0 && index.schema.fields().is_empty() {
        // An empty input has no columns to infer. It gives an empty export (where Data-Juicer's
        // JSON loader fails with StopIteration), so its ops get the text columns they read.
        let mut names: Vec<&str> = recipe.process.iter().map(|o| o.text_key()).collect();
        names.sort_unstable();
        names.dedup();
        let fields: Vec<Field> = (names.into_iter())
            .map(|n| Field::new(n, DataType::Utf8, true))
            .collect();
        index.schema = Arc::new(Schema::new(fields));
    }
    let columns = recipe.media_columns_read();
    if !columns.is_empty() {
        index.media = Some(dj_plans::source::media::MediaRefs {
            columns,
            dir: dj_plans::source::media::dataset_dir(&recipe.dataset_path),
        });
    }
    Ok(index)
}
