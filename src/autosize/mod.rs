//! Auto partition sizing after Data-Juicer's `partition_size_optimizer`: from sampled rows, the op
//! names and the machine's memory and cores, recommends rows per partition, a maximum size in MB,
//! workers, the partition count and driver concurrency, keeping every decision with its inputs.

use std::borrow::Cow;
use std::collections::HashSet;

use serde::Serialize;
use serde_json::Value;

const MB: f64 = 1024.0 * 1024.0;
const GB: f64 = 1024.0 * 1024.0 * 1024.0;

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

mod characteristics;
mod complexity;
mod count;
mod decisions;
mod resources;
mod samples;
#[cfg(test)]
mod tests;

pub(crate) use characteristics::*;
pub(crate) use complexity::*;
pub(crate) use count::*;
pub(crate) use decisions::*;
pub(crate) use resources::*;
pub(crate) use samples::*;
