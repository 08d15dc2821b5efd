//! The machine's memory and cores, and the target partition size in MB they allow.

use serde::Serialize;

use super::constants::GB;

/// The machine's memory and cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct Resources {
    pub available_memory_bytes: u64,
    pub total_memory_bytes: u64,
    pub cpu_cores: usize,
}

impl Resources {
    /// Available and total RAM and logical CPUs of the host, as Data-Juicer reads them with psutil
    /// (host values, cgroup limits not applied).
    pub(crate) fn detect() -> Result<Resources, sysinfo::Error> {
        let mut sys = sysinfo::System::new()?;
        sys.refresh_memory();
        sys.refresh_cpu_list(sysinfo::CpuRefreshKind::nothing());
        let mut cpu_cores = sys.cpus().len();
        if cpu_cores == 0 {
            cpu_cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        }
        Ok(Resources {
            available_memory_bytes: sys.available_memory(),
            total_memory_bytes: sys.total_memory(),
            cpu_cores,
        })
    }

    pub(crate) fn available_memory_gb(&self) -> f64 {
        self.available_memory_bytes as f64 / GB
    }
}

/// Where the target partition size came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TargetSource {
    /// `partition.target_size_mb`.
    Recipe,
    /// The available-memory tier.
    AvailableMemory,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct TargetSize {
    pub target_mb: i64,
    pub source: TargetSource,
    pub available_memory_gb: f64,
}

/// MB per partition by available memory: < 16 GB 32, < 64 GB 64, < 256 GB 128, else 256.
pub(crate) fn memory_tier_mb(available_memory_gb: f64) -> i64 {
    if available_memory_gb < 16.0 {
        32
    } else if available_memory_gb < 64.0 {
        64
    } else if available_memory_gb < 256.0 {
        128
    } else {
        256
    }
}

/// The configured target (kept as is, even 0 or negative: the bounds clamp later), else the tier.
pub(crate) fn target_partition_mb(available_memory_gb: f64, configured: Option<i64>) -> TargetSize {
    match configured {
        Some(target_mb) => TargetSize {
            target_mb,
            source: TargetSource::Recipe,
            available_memory_gb,
        },
        None => TargetSize {
            target_mb: memory_tier_mb(available_memory_gb),
            source: TargetSource::AvailableMemory,
            available_memory_gb,
        },
    }
}
