//! Running a recipe end to end on one machine: index the input, cut it into row-range
//! partitions, compile and plan, execute all partitions concurrently (each staged to an Arrow IPC
//! file), and export the partitions in input order.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use datafusion::arrow::ipc::reader::StreamReader;
use datafusion::arrow::ipc::writer::StreamWriter;
use datafusion::physical_plan::ExecutionPlan;
use dj_plans::compile::{CompiledRecipe, compile};
use dj_plans::recipe::{ExecutorType, PartitionMode};
use dj_plans::source::{InputIndex, RowRange, RowRangeTable};
use dj_plans::{Recipe, planner};
use futures::StreamExt;

use crate::export::{ExportSpec, Exporter};

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
}

/// How many logical partitions a recipe asks for over `rows` input rows.
pub fn partition_count(recipe: &Recipe, rows: u64) -> Result<usize> {
    Ok(match recipe.executor_type {
        ExecutorType::Default | ExecutorType::Ray => recipe.np,
        ExecutorType::RayPartitioned => match recipe.partition.mode {
            PartitionMode::Manual => match recipe.partition.size {
                Some(size) => (rows / size as u64).max(1) as usize,
                None => {
                    let n = recipe.partition.num_of_partitions;
                    if n as u64 > rows && rows > 0 {
                        bail!(
                            "partition.num_of_partitions={n} exceeds the {rows} row(s) in the input dataset, so at least one \
                             partition would be empty. Set num_of_partitions to at most {rows}, or use partition.mode: auto \
                             to let the executor size the partitions from the dataset itself."
                        );
                    }
                    n
                }
            },
            // Auto sizing falls back to `size` rows per partition (5000 when unset).
            PartitionMode::Auto => {
                (rows / recipe.partition.size.unwrap_or(5000) as u64).max(1) as usize
            }
        },
    })
}

/// Row ranges for `n` partitions: balanced, or `size`-row partitions with the remainder folded
/// into the last one (Data-Juicer's `partition.size`).
pub fn partition_ranges(recipe: &Recipe, rows: u64, n: usize) -> Vec<RowRange> {
    let size = match (recipe.executor_type, recipe.partition.mode) {
        (ExecutorType::RayPartitioned, PartitionMode::Manual) => recipe.partition.size,
        (ExecutorType::RayPartitioned, PartitionMode::Auto) => {
            Some(recipe.partition.size.unwrap_or(5000))
        }
        _ => None,
    };
    match size {
        Some(size) if n > 1 => {
            let size = size as u64;
            (0..n as u64)
                .map(|i| RowRange {
                    start: i * size,
                    end: if i + 1 == n as u64 {
                        rows
                    } else {
                        (i + 1) * size
                    },
                })
                .collect()
        }
        _ => dj_plans::source::balanced_ranges(rows, n),
    }
}

/// A recipe compiled against its input, ready to explain or execute.
pub struct PreparedJob {
    pub index: Arc<InputIndex>,
    pub ranges: Vec<RowRange>,
    pub compiled: CompiledRecipe,
    pub ctx: datafusion::prelude::SessionContext,
    pub physical: Arc<dyn ExecutionPlan>,
}

/// Indexes the input and plans the recipe.
pub async fn prepare(recipe: &Recipe) -> Result<PreparedJob> {
    let dataset = recipe.dataset_path.clone();
    let index = tokio::task::spawn_blocking(move || InputIndex::build(&dataset)).await??;
    let index = Arc::new(index);
    let n = partition_count(recipe, index.total_rows)?;
    let ranges = partition_ranges(recipe, index.total_rows, n);
    let table = Arc::new(RowRangeTable::new(index.clone(), ranges.clone()));
    let compiled =
        compile(recipe, table).with_context(|| format!("cannot compile recipe {}", recipe.file))?;
    let ctx = planner::session(recipe.np.max(ranges.len()));
    let physical = ctx.state().create_physical_plan(&compiled.plan).await?;
    Ok(PreparedJob {
        index,
        ranges,
        compiled,
        ctx,
        physical,
    })
}

/// Runs `recipe` and writes its export.
pub async fn run(recipe: &Recipe) -> Result<RunReport> {
    let started = Instant::now();
    let spec = ExportSpec::new(
        Path::new(&recipe.export_path),
        recipe.export_shard_size,
        recipe.keep_stats_in_res_ds,
        recipe.keep_hashes_in_res_ds,
    )?;
    let job = prepare(recipe).await?;
    // Staging next to the export: an unwritable export directory fails before any work.
    let staging = staging_dir(&spec.path)?;
    let schema = job.physical.schema();
    let partitions = job.physical.properties().partitioning.partition_count();
    let task_ctx = job.ctx.task_ctx();
    let mut tasks = Vec::with_capacity(partitions);
    for p in 0..partitions {
        let (plan, ctx) = (job.physical.clone(), task_ctx.clone());
        let path = staging.path().join(format!("part-{p:05}.arrow"));
        tasks.push(tokio::spawn(async move {
            stage_partition(plan, p, ctx, path).await
        }));
    }
    let mut staged = Vec::with_capacity(partitions);
    for t in tasks {
        staged.push(t.await.context("partition task panicked")??);
    }
    let total_rows: u64 = staged.iter().map(|s: &Staged| s.rows).sum();
    let total_bytes: u64 = staged.iter().map(|s| s.bytes).sum();
    let mut exporter = Exporter::create(spec, schema, total_rows, total_bytes)?;
    for s in &staged {
        if s.rows == 0 {
            continue;
        }
        let reader =
            StreamReader::try_new(std::io::BufReader::new(std::fs::File::open(&s.path)?), None)?;
        for batch in reader {
            exporter.write(&batch?)?;
        }
    }
    let export_files = exporter.finish()?;
    Ok(report(
        recipe,
        &job,
        total_rows,
        export_files,
        started.elapsed(),
    ))
}

fn report(
    recipe: &Recipe,
    job: &PreparedJob,
    rows_out: u64,
    export_files: Vec<PathBuf>,
    elapsed: Duration,
) -> RunReport {
    let c = &job.compiled.counters;
    let mut rows_in = c.rows_loaded();
    let ops = recipe
        .process
        .iter()
        .map(|op| {
            let r = OpReport {
                index: op.index,
                name: op.name.clone(),
                kind: op.spec.kind.as_str(),
                rows_in,
                rows_out: c.rows_out(op.index),
            };
            rows_in = r.rows_out;
            r
        })
        .collect();
    RunReport {
        rows_in: job.index.total_rows,
        rows_out,
        partitions: job.ranges.len(),
        ops,
        export_files,
        elapsed,
    }
}

struct Staged {
    path: PathBuf,
    rows: u64,
    bytes: u64,
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

async fn stage_partition(
    plan: Arc<dyn ExecutionPlan>,
    partition: usize,
    ctx: Arc<datafusion::execution::TaskContext>,
    path: PathBuf,
) -> Result<Staged> {
    let mut stream = plan.execute(partition, ctx)?;
    let file = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&path)?);
    let mut writer = StreamWriter::try_new(file, &stream.schema())?;
    let (mut rows, mut bytes) = (0u64, 0u64);
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        rows += batch.num_rows() as u64;
        bytes += batch.get_array_memory_size() as u64;
        writer.write(&batch)?;
    }
    writer.finish()?;
    Ok(Staged { path, rows, bytes })
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
