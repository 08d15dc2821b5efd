//! Units and Data-Juicer's thresholds the sizing rules share.

pub(super) const MB: f64 = 1024.0 * 1024.0;
pub(super) const GB: f64 = 1024.0 * 1024.0 * 1024.0;

/// Above this many samples the parallelism rule asks for at least `cores x 1.5` partitions.
pub(crate) const MIN_PARTITIONS_ABOVE: u64 = 10_000;
/// A data skew factor above this shrinks the partition size by 20%.
pub(crate) const SKEW_THRESHOLD: f64 = 0.7;
/// Concurrent partitions assumed per node by the memory guard.
pub(crate) const ASSUMED_CONCURRENT_PARTITIONS: f64 = 4.0;
/// `max_concurrent_partitions: auto` for a CPU-only pipeline.
pub(crate) const AUTO_CPU_PARTITION_CAP: usize = 4;
/// Clamp of the recommended maximum partition size in MB.
pub(crate) const MAX_SIZE_MB_BOUNDS: (i64, i64) = (32, 512);
