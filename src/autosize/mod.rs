//! Auto partition sizing after Data-Juicer's `partition_size_optimizer`: from sampled rows, the op
//! names and the machine's memory and cores, recommends rows per partition, a maximum size in MB,
//! workers, the partition count and driver concurrency, keeping every decision with its inputs.

mod characteristics;
mod complexity;
mod constants;
mod count;
mod decisions;
mod resources;
mod samples;
#[cfg(test)]
mod tests;

pub(crate) use count::{CountConfig, max_concurrent_partitions};
pub(crate) use decisions::{Recommendation, recommend};
pub(crate) use resources::Resources;
pub(crate) use samples::{SampleKeys, SampleStats, media_file_bytes, sample_size};
