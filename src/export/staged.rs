//! How partitions stage their rows for the export, chosen once per run ([`Staging`]), and the
//! export written from what they staged.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::ipc::reader::StreamReader;
use datafusion::arrow::ipc::writer::StreamWriter;
use datafusion::execution::TaskContext;
use datafusion::physical_plan::ExecutionPlan;
use dj_plans::drop_behind::{DropBehindReader, DropBehindWriter};
use dj_plans::nodes::{CacheGrant, MemoryBudget, OpCounters, SpillCache};
use futures::StreamExt;

use super::fragment::{Fragment, cannot_stage};
use super::placed::PlacedExport;
use super::ranked::write_in_rank_order;
use super::{ExportSpec, Exporter, JsonFragmentEncoder, Staged};

/// What each partition writes to its staging file.
#[derive(Clone)]
pub(crate) enum Staging {
    /// Arrow IPC batches, encoded by the exporter afterwards: parquet exports, partitions whose
    /// schemas differ, and a selector's result (exported in its rank order).
    Arrow,
    /// Its own JSON lines (and stats lines), encoded in parallel; the export joins them in
    /// partition order. The fragments appended to the first one stay in the page cache while
    /// the cache (of the run's memory budget) grants them.
    Json(Arc<JsonFragmentEncoder>, Arc<SpillCache>),
    /// A recipe ending in exact dedup, run here: its lines are encoded before the barrier and
    /// the kept ones placed in the one shared export file after it.
    Placed(Arc<JsonFragmentEncoder>, Arc<PlacedExport>),
}

/// The staging directory of a run and how its partitions stage there.
pub(crate) struct StagingArea {
    /// Removed with everything in it when the run ends.
    dir: tempfile::TempDir,
    pub(crate) staging: Staging,
}

impl StagingArea {
    /// A staging directory beside the export (so that an unwritable export directory fails
    /// before any work), staging as `Arrow` until [`StagingArea::choose`].
    pub(crate) fn beside(export: &Path) -> Result<StagingArea> {
        let dir = export
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create export directory {}", dir.display()))?;
        let dir = tempfile::Builder::new()
            .prefix(".dj-staging-")
            .tempdir_in(dir)
            .with_context(|| format!("cannot write to export directory {}", dir.display()))?;
        Ok(StagingArea {
            dir,
            staging: Staging::Arrow,
        })
    }

    /// Chooses how the partitions stage: JSON lines when the export is one JSON lines file and
    /// every plan (`plans[p]` is partition `p`'s) gives the same schema; placed when, besides,
    /// they all end in one exact deduplicator and run here (`on_cluster` false).
    pub(crate) fn choose(
        &mut self,
        spec: &ExportSpec,
        plans: &[&Arc<dyn ExecutionPlan>],
        on_cluster: bool,
        budget: &MemoryBudget,
    ) -> Result<()> {
        let schema = plans[0].schema();
        let encoder = if plans.iter().all(|p| p.schema() == schema) {
            JsonFragmentEncoder::new(spec, &schema)?.map(Arc::new)
        } else {
            None
        };
        self.staging = match encoder {
            None => Staging::Arrow,
            Some(encoder) if on_cluster => Staging::Json(encoder, budget.spill_cache()),
            Some(encoder) => {
                let cache = budget.spill_cache();
                match PlacedExport::new(plans, self.dir.path(), encoder.has_stats(), &cache)? {
                    Some(placed) => Staging::Placed(encoder, placed),
                    None => Staging::Json(encoder, cache),
                }
            }
        };
        Ok(())
    }

    /// Where partition `p` stages its rows.
    pub(crate) fn path_of(&self, p: usize) -> PathBuf {
        let ext = match self.staging {
            Staging::Arrow => "arrow",
            Staging::Json(..) | Staging::Placed(..) => "jsonl",
        };
        self.dir.path().join(format!("part-{p:05}.{ext}"))
    }

    /// The export from the partitions' staged rows, `staged[p]` being partition `p`'s; rows in
    /// a selector's rank order are sorted within `budget`.
    pub(crate) async fn export(
        &self,
        spec: ExportSpec,
        schema: &SchemaRef,
        staged: &[&Staged],
        budget: &MemoryBudget,
    ) -> Result<Exporter> {
        match &self.staging {
            Staging::Placed(_, placed) => {
                let rows = staged.iter().map(|s| s.rows).sum();
                let stats = placed.stats.as_deref();
                Ok(Exporter::from_fragments(
                    spec,
                    schema.clone(),
                    &placed.text,
                    stats,
                    rows,
                )?)
            }
            Staging::Json(..) => {
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
                    exporter.append_fragments(&s.path, s.stats_path.as_deref(), s.rows, s.kept)?;
                }
                Ok(exporter)
            }
            Staging::Arrow => {
                let rows = staged.iter().map(|s| s.rows).sum();
                let bytes = staged.iter().map(|s| s.bytes).sum();
                let mut exporter = Exporter::create(spec, schema.clone(), rows, bytes)?;
                let files: Vec<&Path> = staged
                    .iter()
                    .filter(|s| s.rows > 0)
                    .map(|s| s.path.as_path())
                    .collect();
                let row_bytes = (bytes / rows.max(1)) as usize;
                export_arrow_files(&mut exporter, schema, &files, (budget, row_bytes)).await?;
                Ok(exporter)
            }
        }
    }
}

impl Staging {
    /// Runs partition `p`'s `plan` and stages its rows at `path`. Placed staging books the
    /// deduplicator's rows and compute time in `counters` itself.
    pub(crate) async fn stage(
        &self,
        (p, plan): (usize, &Arc<dyn ExecutionPlan>),
        ctx: Arc<TaskContext>,
        path: PathBuf,
        counters: &OpCounters,
    ) -> Result<Staged> {
        match self {
            Staging::Placed(encoder, placed) => {
                placed.stage(plan, ctx, &path, encoder, counters).await
            }
            Staging::Json(encoder, cache) => {
                // The first partition's fragment becomes the export file: it goes to the disk.
                let cache = (p > 0).then(|| cache.clone());
                stage_json(plan, ctx, path, encoder, cache).await
            }
            Staging::Arrow => stage_arrow(plan, ctx, path).await,
        }
    }
}

/// Writes Arrow IPC staging files to the export: in the selector's rank order when the result
/// has one, else in partition order.
async fn export_arrow_files(
    exporter: &mut Exporter,
    schema: &SchemaRef,
    files: &[&Path],
    sort_in: (&MemoryBudget, usize),
) -> Result<()> {
    match schema.index_of(dj_udfs::columns::ORDER_COLUMN) {
        Ok(order) => {
            write_in_rank_order(files, order, sort_in, |b| {
                exporter.write(b).map_err(anyhow::Error::from)
            })
            .await
        }
        Err(_) => {
            for path in files {
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

fn create(path: &Path) -> Result<std::io::BufWriter<DropBehindWriter>> {
    let file = std::fs::File::create(path).and_then(DropBehindWriter::new);
    Ok(std::io::BufWriter::with_capacity(
        1 << 20,
        file.with_context(|| cannot_stage(path))?,
    ))
}

async fn stage_arrow(
    plan: &Arc<dyn ExecutionPlan>,
    ctx: Arc<TaskContext>,
    path: PathBuf,
) -> Result<Staged> {
    let mut stream = plan.execute(0, ctx)?;
    let (mut rows, mut bytes) = (0u64, 0u64);
    // Created once the first batch is out: a partition waiting at a barrier holds no buffer.
    let mut next = stream.next().await;
    let mut writer = StreamWriter::try_new(create(&path)?, &stream.schema())?;
    while let Some(batch) = next {
        let batch = batch?;
        rows += batch.num_rows() as u64;
        bytes += batch.get_array_memory_size() as u64;
        writer.write(&batch).with_context(|| cannot_stage(&path))?;
        next = stream.next().await;
    }
    writer.finish().with_context(|| cannot_stage(&path))?;
    Ok(Staged {
        path,
        stats_path: None,
        rows,
        bytes,
        kept: [0, 0],
        _cached: Vec::new(),
    })
}

async fn stage_json(
    plan: &Arc<dyn ExecutionPlan>,
    ctx: Arc<TaskContext>,
    path: PathBuf,
    encoder: &JsonFragmentEncoder,
    cache: Option<Arc<SpillCache>>,
) -> Result<Staged> {
    let mut stream = plan.execute(0, ctx)?;
    let (mut rows, mut bytes) = (0u64, 0u64);
    let stats_path = encoder
        .has_stats()
        .then(|| path.with_extension("stats.jsonl"));
    // Created once the first batch is out: a partition waiting at a barrier holds no buffer.
    let mut next = stream.next().await;
    let mut out = Fragment::create(&path, cache.clone())?;
    let mut stats_out = (stats_path.as_deref())
        .map(|p| Fragment::create(p, cache.clone()))
        .transpose()?;
    let (mut text, mut stats) = (String::new(), String::new());
    while let Some(batch) = next {
        let batch = batch?;
        rows += batch.num_rows() as u64;
        text.clear();
        stats.clear();
        encoder.encode(&batch, &mut text, &mut stats)?;
        bytes += text.len() as u64;
        out.write_all(text.as_bytes())
            .with_context(|| cannot_stage(&path))?;
        if let (Some(s), Some(p)) = (&mut stats_out, &stats_path) {
            s.write_all(stats.as_bytes())
                .with_context(|| cannot_stage(p))?;
        }
        next = stream.next().await;
    }
    let written = out.finish().with_context(|| cannot_stage(&path))?;
    let kept = written.kept;
    let mut cached: Vec<CacheGrant> = written.grant.into_iter().collect();
    let mut stats_kept = 0;
    if let (Some(s), Some(p)) = (stats_out, &stats_path) {
        let written = s.finish().with_context(|| cannot_stage(p))?;
        stats_kept = written.kept;
        cached.extend(written.grant);
    }
    Ok(Staged {
        path,
        stats_path,
        rows,
        bytes,
        kept: [kept, stats_kept],
        _cached: cached,
    })
}
