//! On a cluster whose job directory is on a shared disk, every dedup is decided by the executors
//! in stages saved as files (see [`dj_plans::nodes::staged`]): the client only schedules them and never holds a key. Each stage's output is sealed in `checkpoints/`, so a
//! resumed job picks up after the last complete stage: partitions whose key files are saved do
//! not run their pass again, and a whole removed-rows directory skips the decision.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use datafusion::arrow::array::{AsArray, RecordBatch};
use datafusion::arrow::datatypes::UInt64Type;
use datafusion::prelude::SessionContext;
use dj_plans::nodes::DedupBarrier;
use dj_plans::nodes::staged::{KeysWriter, decision_plan, keys_parquet_name, removed_dir_name};
use dj_plans::seal;

use crate::job::context::JobCtx;

/// Where a dedup is decided in stages: the job's `checkpoints/` folder, when the job directory is
/// on a disk the executors share (not object storage). `None`: the client decides, from the keys
/// the passes bring back.
pub(crate) fn staged_dir(job: Option<&JobCtx>) -> Option<PathBuf> {
    let job = job.filter(|j| j.mirror.is_none())?;
    Some(job.paths.checkpoints.clone())
}

/// The removed-rows directory of op `op` if a previous run completed its decision.
pub(crate) fn decided(dir: &Path, op: usize) -> Option<PathBuf> {
    let lists = dir.join(removed_dir_name(op));
    lists.is_dir().then_some(lists)
}

/// Partition `p`'s key file at op `op`.
pub(crate) fn keys_file(dir: &Path, op: usize, p: usize) -> PathBuf {
    dir.join(keys_parquet_name(op, p))
}

/// Whether partition `p`'s key file at op `op` is saved whole. One that fails its seal is moved
/// aside (and the partition's pass runs again).
pub(crate) fn keys_saved(dir: &Path, op: usize, p: usize) -> Result<bool> {
    let path = keys_file(dir, op, p);
    if !path.exists() {
        return Ok(false);
    }
    match seal::verify(&path) {
        Ok(_) => Ok(true),
        Err(e) => {
            let moved = seal::quarantine(&path)
                .with_context(|| format!("moving aside {}", path.display()))?;
            tracing::warn!("{e}; moved to {} and computed again", moved.display());
            Ok(false)
        }
    }
}

/// A partition that resumes past op `op` gives its keys from what it saved: its key file, or
/// the keys a run that decided the op in memory persisted, rewritten as a key file.
pub(crate) fn keys_of_resumed(
    barrier: &DedupBarrier,
    dir: &Path,
    op: usize,
    p: usize,
) -> Result<()> {
    if keys_saved(dir, op, p)? {
        return Ok(());
    }
    let Some(keys) = barrier
        .persisted_keys(p)
        .with_context(|| format!("partition {p}: reading the keys it saved at dedup op #{op}"))?
    else {
        bail!(
            "partition {p} resumes after dedup op #{op} but its saved keys ({}) are missing",
            keys_file(dir, op, p).display()
        );
    };
    let mut writer = KeysWriter::create(&keys_file(dir, op, p), p)?;
    writer.write(&keys)?;
    writer.commit()?;
    Ok(())
}

/// The row count a keys sink returns.
pub(crate) fn sunk_rows(batches: &[RecordBatch]) -> Result<u64> {
    match batches
        .first()
        .map(|b| b.column(0).as_primitive::<UInt64Type>())
    {
        Some(rows) if batches.len() == 1 && rows.len() == 1 => Ok(rows.value(0)),
        _ => bail!("a dedup keys sink returned no row count"),
    }
}

/// Stages 2 and 3 of op `op` on the cluster of `session`: the edges of every partition's key
/// file, then each partition's removed rows. Returns their directory.
pub(crate) async fn decide_on_executors(
    session: &SessionContext,
    dir: &Path,
    (op, op_name): (usize, &str),
    barrier: &DedupBarrier,
    partitions: usize,
) -> Result<PathBuf> {
    let keys: Vec<PathBuf> = (0..partitions).map(|p| keys_file(dir, op, p)).collect();
    let lists = dir.join(removed_dir_name(op));
    let started = Instant::now();
    // A run always sets a budget; the fallback is the smallest default budget.
    let budget = barrier.budget_bytes().unwrap_or(64 << 20);
    let kind = barrier.kind();
    let plan = decision_plan(&keys, (op, op_name), kind, partitions, &lists, budget)?;
    let out = session.execute_logical_plan(plan).await?.collect().await?;
    let removed = out
        .first()
        .map(|b| b.column(0).as_primitive::<UInt64Type>().value(0))
        .unwrap_or(0);
    tracing::info!(
        op,
        removed,
        seconds = started.elapsed().as_secs_f64(),
        "dedup op #{op} decided on the executors"
    );
    if !lists.is_dir() {
        bail!(
            "dedup op #{op}: the executors left no removed-rows lists at {}",
            lists.display()
        );
    }
    Ok(lists)
}
