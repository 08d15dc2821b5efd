//! The partition count and how many partitions run at once.

use serde::Serialize;

use super::constants::AUTO_CPU_PARTITION_CAP;

/// What the partition count depends on besides the recommendation: the recipe's settings and
/// the input's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct CountConfig {
    /// `np`: the worker count of a fallback recommendation and the auto concurrency bound.
    pub np: usize,
    /// `partition.num_of_partitions` (4 when "auto"): the count when there is no size at all.
    pub num_of_partitions: usize,
    /// `partition.max_concurrent_partitions` (None = auto).
    pub max_concurrent_partitions: Option<usize>,
    /// `partition.partitions_per_node` (None = auto: 2 for a CPU-only pipeline).
    pub partitions_per_node: Option<usize>,
    /// `partition.max_size_mb`: with the fallback (analysis failed), no partition holds more.
    pub max_size_mb: i64,
    /// The input's size in bytes (estimated from the index where it has no byte marks).
    pub input_bytes: u64,
}

/// How many partitions, step by step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct PartitionCount {
    pub count: usize,
    pub total_rows: u64,
    /// Rows per partition the count was derived from (None: the configured count was kept).
    pub size: Option<usize>,
    /// `optimizer`, `partition.size fallback` or `num_of_partitions`.
    pub size_source: &'static str,
    /// Nearest count for the size: `q + (2r >= size)` of `divmod(total_rows, size)`, at least 1.
    pub from_size: Option<usize>,
    /// Recommended workers, or `np` for a fallback.
    pub worker_count: usize,
    /// `max(32, 2 x workers)` (applies to a size-derived count only).
    pub submission_cap: Option<usize>,
    /// The count before the cluster bound.
    pub data_driven: usize,
    /// Driver concurrency the cluster bound uses ([`driver_concurrency`]).
    pub concurrency: usize,
    pub partitions_per_node: usize,
    /// `max(2 x concurrency, max(1 node x partitions_per_node, 1))`.
    pub cluster_target: usize,
    /// With the fallback: the fewest partitions that keep each within `max_size_mb`.
    pub max_size_floor: Option<usize>,
    pub reasoning: Vec<String>,
}

/// What the partition count takes from a recommendation (see
/// [`Recommendation::count_partitions`](super::decisions::Recommendation::count_partitions)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Advice {
    /// Rows per partition.
    pub partition_size: Option<usize>,
    /// Recommended workers (None: `np` stands in).
    pub worker_count: Option<usize>,
    /// The recommendation is the fallback (analysis failed).
    pub fallback: bool,
}

/// Data-Juicer's auto-mode partition count on one node: the nearest count for the recommended
/// (or fallback) size capped at `max(32, 2 x workers)`, then at most `max(2 x concurrency,
/// partitions_per_node)` and at most one partition per row.
pub(crate) fn partition_count(total_rows: u64, rec: &Advice, cfg: &CountConfig) -> PartitionCount {
    let mut reasoning = Vec::new();
    let size = rec.partition_size.filter(|s| *s > 0);
    let worker_count = rec.worker_count.unwrap_or(cfg.np).max(1);
    let size_source = match (size, rec.fallback) {
        (None, _) => "num_of_partitions",
        (Some(_), false) => "optimizer",
        (Some(_), true) => "partition.size fallback",
    };
    let (from_size, submission_cap, data_driven) = match size {
        Some(size) => {
            let (q, r) = (total_rows / size as u64, total_rows % size as u64);
            let n = ((q + u64::from(2 * r >= size as u64)) as usize).max(1);
            let cap = 32.max(worker_count.saturating_mul(2));
            reasoning.push(format!(
                "{total_rows} rows / {size} ({size_source}) rounds to {n} partitions; submission cap max(32, 2 x {worker_count} workers) = {cap}"
            ));
            (Some(n), Some(cap), n.min(cap))
        }
        None => {
            let n = cfg.num_of_partitions.max(1);
            reasoning.push(format!(
                "no partition size: keeping num_of_partitions = {n}"
            ));
            (None, None, n)
        }
    };
    let concurrency = driver_concurrency(cfg.max_concurrent_partitions, cfg.np);
    let per_node = cfg.partitions_per_node.filter(|n| *n > 0).unwrap_or(2);
    let capacity = per_node.max(1);
    let cluster_target = concurrency.saturating_mul(2).max(capacity);
    let row_ceiling = usize::try_from(total_rows.max(1)).unwrap_or(usize::MAX);
    let mut count = data_driven.min(row_ceiling).min(cluster_target).max(1);
    reasoning.push(format!(
        "cluster bound: min({data_driven}, {total_rows} rows, max(2 x {concurrency} concurrent, {per_node} per node)) = {count}"
    ));
    // The documented meaning of `max_size_mb` ("fallback max size"): when the optimizer could
    // not size the partitions, the fallback still keeps each partition within it.
    let max_size_floor = (rec.fallback && cfg.max_size_mb > 0 && cfg.input_bytes > 0).then(|| {
        let max_bytes = cfg.max_size_mb as u64 * 1024 * 1024;
        usize::try_from(cfg.input_bytes.div_ceil(max_bytes)).unwrap_or(usize::MAX)
    });
    if let Some(floor) = max_size_floor
        && floor > count
    {
        let raised = floor.min(row_ceiling);
        reasoning.push(format!(
            "fallback max size: {} input bytes in partitions of at most {} MB need {floor}: {count} -> {raised}",
            cfg.input_bytes, cfg.max_size_mb
        ));
        count = raised;
    }
    PartitionCount {
        count,
        total_rows,
        size,
        size_source,
        from_size,
        worker_count,
        submission_cap,
        data_driven,
        concurrency,
        partitions_per_node: per_node,
        cluster_target,
        max_size_floor,
        reasoning,
    }
}

/// The driver concurrency before it meets the partitions: an explicit value (at least 1), or for
/// "auto" the CPU-only pipeline cap of 4, bounded by `np` (the cores the run may use).
pub(crate) fn driver_concurrency(explicit: Option<usize>, np: usize) -> usize {
    match explicit {
        Some(n) => n.max(1),
        None => AUTO_CPU_PARTITION_CAP.min(np).max(1),
    }
}

/// Partitions processed at the same time: [`driver_concurrency`], never more than the partitions.
pub(crate) fn max_concurrent_partitions(
    explicit: Option<usize>,
    partitions: usize,
    np: usize,
) -> usize {
    driver_concurrency(explicit, np).min(partitions.max(1))
}
