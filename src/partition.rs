//! Where each logical partition starts (its input range, or a checkpoint) and how many run at
//! once: the facts every stage of a run shares, so this module depends on nothing of the run.

use std::path::PathBuf;

use dj_plans::Recipe;
use dj_plans::recipe::ExecutorType;

use crate::autosize;

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
