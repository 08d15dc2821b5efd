//! The recipe's settings sections and the values they take: executor, engine, partitioning,
//! checkpoints and intermediate storage, as [`super::Recipe`] holds them.

/// How the recipe is executed (`executor_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecutorType {
    /// One process; DataFusion runs `np` contiguous row-range partitions in parallel.
    Default,
    /// Accepted for Data-Juicer compatibility; runs like `default` (DataFusion is the engine).
    Ray,
    /// The partitioned executor: row-boundary partitions from `partition`, checkpoints, resume.
    RayPartitioned,
}

/// Where the partitions' plans run (`engine`, or `dj-run --engine`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Engine {
    /// In this process.
    Local,
    /// On an Apache Ballista cluster: the scheduler at `scheduler` and its executors.
    Ballista,
}

/// Ballista's default scheduler address.
pub(crate) const DEFAULT_SCHEDULER: &str = "127.0.0.1:50050";

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PartitionMode {
    Auto,
    Manual,
}

/// `partition:` section.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PartitionConfig {
    pub mode: PartitionMode,
    pub num_of_partitions: usize,
    /// Rows per partition, the fallback of auto mode (Data-Juicer's executor fallback 5000).
    pub size: Option<usize>,
    /// `None` = "auto".
    pub max_concurrent_partitions: Option<usize>,
    /// Auto mode's cluster bound: partitions per node (`None` = "auto": 2 for CPU-only pipelines).
    pub partitions_per_node: Option<usize>,
    /// `None` when the recipe does not set it: auto sizing then picks it from available memory.
    pub target_size_mb: Option<i64>,
    pub max_size_mb: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckpointStrategy {
    EveryOp,
    EveryNOps,
    Manual,
    Disabled,
    /// Placed at run time by measured cost (`dj_plans::nodes::auto`).
    Auto,
}

/// `checkpoint:` section.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CheckpointConfig {
    pub enabled: bool,
    pub strategy: CheckpointStrategy,
    pub n_ops: usize,
    pub op_names: Vec<String>,
    /// `checkpoint.reuse` (default true): a new job starts from the checkpoints an earlier job in
    /// the same `work_dir` wrote after the same input and leading ops.
    pub reuse: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StorageFormat {
    Parquet,
    Arrow,
    Jsonl,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Compression {
    Snappy,
    Gzip,
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RetentionPolicy {
    KeepAll,
    KeepFailedOnly,
    CleanupAll,
}

/// `intermediate_storage:` section.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct IntermediateStorage {
    pub format: StorageFormat,
    pub compression: Compression,
    pub preserve_intermediate_data: bool,
    pub retention_policy: RetentionPolicy,
    pub cleanup_temp_files: bool,
    pub write_partitions: bool,
}
