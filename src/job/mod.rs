//! The job directory `{work_dir}/{job_id}/` of the partitioned executor, one module per thing it
//! holds: here job ids, the directory layout and the small JSON files (config backup, `cli.yaml`,
//! `metadata/`, `dag_execution_plan.json`); [`lock`] the lock that refuses a second run of a
//! running job, [`events`] the event log, [`info`] the saved partitioning and content hashes,
//! [`checkpoints`] which saved work a resume may use and the retention policy, [`summary`]
//! `job_summary.json`, [`mirror`] a job directory on object storage, [`context`] what a run
//! plans and runs with from all of these.

pub(crate) mod checkpoints;
pub(crate) mod context;
pub(crate) mod events;
pub(crate) mod info;
pub(crate) mod lease;
pub(crate) mod lock;
pub(crate) mod mirror;
pub(crate) mod reuse;
pub(crate) mod summary;

pub(crate) use lock::{JobLock, LockInfo, lock_info, lock_pid, process_alive};
pub(crate) use summary::JobSummary;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use dj_plans::Recipe;
use serde_json::{Value, json};

/// A new job id: UTC `YYYYMMDD_HHMMSS_` + 6 hex digits, as Data-Juicer makes them.
pub(crate) fn new_job_id() -> String {
    let hex = uuid::Uuid::new_v4().simple().to_string();
    format!(
        "{}_{}",
        chrono::Utc::now().format("%Y%m%d_%H%M%S"),
        &hex[..6]
    )
}

/// Checks a user-given job id: it names one directory.
pub(crate) fn validate_job_id(id: &str) -> Result<()> {
    if id.is_empty() || id.len() > 200 {
        bail!("invalid job id {id:?}: expected 1 to 200 characters");
    }
    if id == "." || id == ".." || id.contains("..") || id.contains(['/', '\\', '\0']) {
        bail!("invalid job id {id:?}: it must not contain path separators or '..'");
    }
    Ok(())
}

/// Where the job directory is: `work_dir` (default: the export's directory), with a `{job_id}`
/// placeholder substituted, ending in the job id.
pub(crate) fn job_dir(recipe: &Recipe, job_id: &str) -> Result<PathBuf> {
    let base = match &recipe.work_dir {
        Some(w) => w.clone(),
        None => {
            let export = std::path::absolute(&recipe.export_path)?;
            export
                .parent()
                .unwrap_or(Path::new("."))
                .display()
                .to_string()
        }
    };
    if base.contains("{job_id}") && !base.trim_end_matches('/').ends_with("{job_id}") {
        bail!(
            "Invalid work_dir configuration: '{{job_id}}' must be the last part of the path. Current: '{base}'. \
             Expected format: 'path/to/directory/{{job_id}}'"
        );
    }
    let dir = PathBuf::from(base.replace("{job_id}", job_id));
    Ok(if dir.file_name().is_some_and(|n| n == job_id) {
        dir
    } else {
        dir.join(job_id)
    })
}

/// The names inside a job directory, relative to its root. [`JobPaths`] joins them; the names
/// are public for texts that spell them and for files named relative to the job (mirrored ones).
pub(crate) const CHECKPOINTS_DIR: &str = "checkpoints";
const PARTITIONS_DIR: &str = "partitions";
const LOGS_DIR: &str = "logs";
const METADATA_DIR: &str = "metadata";
pub(crate) const PARTITIONING_INFO_FILE: &str = "partitioning_info.json";
pub(crate) const SUMMARY_FILE: &str = "job_summary.json";
pub(crate) const LOCK_FILE: &str = ".lock";
/// The command-line overrides a job was started with (`arguments: [--key, value, ...]`).
pub(crate) const CLI_ARGS_FILE: &str = "cli.yaml";
/// The recipe copy's name when the recipe's own file name is unknown.
const DEFAULT_RECIPE_FILE: &str = "config.yaml";
const DAG_PLAN_FILE: &str = "dag_execution_plan.json";
const DATASET_MAPPING_FILE: &str = "dataset_mapping.json";
const PARTITION_SIZING_FILE: &str = "partition_sizing.json";
const OP_CHAIN_FILE: &str = "op_chain.json";
/// Event files are `events_{UTC stamp}.jsonl`, one per run.
pub(crate) const EVENTS_PREFIX: &str = "events_";
pub(crate) const EVENTS_SUFFIX: &str = ".jsonl";

/// The paths inside a job directory.
#[derive(Debug, Clone)]
pub(crate) struct JobPaths {
    pub root: PathBuf,
    pub checkpoints: PathBuf,
    pub partitions: PathBuf,
    pub logs: PathBuf,
    pub metadata: PathBuf,
}

impl JobPaths {
    pub(crate) fn new(root: PathBuf) -> Self {
        JobPaths {
            checkpoints: root.join(CHECKPOINTS_DIR),
            partitions: root.join(PARTITIONS_DIR),
            logs: root.join(LOGS_DIR),
            metadata: root.join(METADATA_DIR),
            root,
        }
    }

    pub(crate) fn create_all(&self) -> Result<()> {
        for d in [
            &self.root,
            &self.checkpoints,
            &self.partitions,
            &self.logs,
            &self.metadata,
        ] {
            std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
        }
        Ok(())
    }

    pub(crate) fn partitioning_info(&self) -> PathBuf {
        self.checkpoints.join(PARTITIONING_INFO_FILE)
    }

    pub(crate) fn summary(&self) -> PathBuf {
        self.root.join(SUMMARY_FILE)
    }

    /// The lock naming the process that runs the job (see [`lock`]).
    pub(crate) fn lock(&self) -> PathBuf {
        self.root.join(LOCK_FILE)
    }

    /// The local snapshot of a job's lease on object storage (see [`lease`]).
    pub(crate) fn lease(&self) -> PathBuf {
        self.root.join(lease::LEASE_FILE)
    }

    /// `cli.yaml`: the command-line overrides the job was started with.
    pub(crate) fn cli_args(&self) -> PathBuf {
        self.root.join(CLI_ARGS_FILE)
    }

    /// The copy of the recipe `recipe_file`, under the recipe's own file name.
    pub(crate) fn recipe_copy(&self, recipe_file: &str) -> PathBuf {
        let name = Path::new(recipe_file)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or(DEFAULT_RECIPE_FILE.into());
        self.root.join(name)
    }

    /// `dag_execution_plan.json` (see [`dag_plan`]).
    pub(crate) fn dag_plan(&self) -> PathBuf {
        self.root.join(DAG_PLAN_FILE)
    }

    /// The manifest of partition `p`: its row range and input.
    pub(crate) fn partition_manifest(&self, p: usize) -> PathBuf {
        self.partitions.join(format!("partition_{p:04}.json"))
    }

    pub(crate) fn dataset_mapping(&self) -> PathBuf {
        self.metadata.join(DATASET_MAPPING_FILE)
    }

    /// The auto partition sizing's recommendation.
    pub(crate) fn partition_sizing(&self) -> PathBuf {
        self.metadata.join(PARTITION_SIZING_FILE)
    }

    /// The ops the job's checkpoints were made by (see [`reuse::OpChain`]).
    pub(crate) fn op_chain(&self) -> PathBuf {
        self.metadata.join(OP_CHAIN_FILE)
    }

    /// The event file of a run started at `stamp` (UTC `YYYYMMDD_HHMMSS`).
    pub(crate) fn events_file(&self, stamp: &str) -> PathBuf {
        self.root
            .join(format!("{EVENTS_PREFIX}{stamp}{EVENTS_SUFFIX}"))
    }

    /// A new event file, stamped with the current UTC time.
    pub(crate) fn new_events_file(&self) -> PathBuf {
        self.events_file(&chrono::Utc::now().format("%Y%m%d_%H%M%S").to_string())
    }

    /// Whether `name` is the name of an event file.
    pub(crate) fn is_events_file(name: &str) -> bool {
        name.starts_with(EVENTS_PREFIX) && name.ends_with(EVENTS_SUFFIX)
    }

    /// A checkpoint directory file `name`, relative to the job directory (as mirrored).
    pub(crate) fn checkpoint_relative(name: &str) -> String {
        format!("{CHECKPOINTS_DIR}/{name}")
    }
}

/// The command that resumes job `job_id`: `command` (how it was run, without its `--job_id` and
/// `--resume`) with `--resume {job_id}`.
pub(crate) fn resume_command(command: &[String], job_id: &str) -> Vec<String> {
    let mut cmd = command.to_vec();
    cmd.extend(["--resume".to_string(), job_id.to_string()]);
    cmd
}

/// A command as shown to copy: its arguments joined by spaces.
pub(crate) fn command_line(command: &[String]) -> String {
    command.join(" ")
}

/// Writes `bytes` to `path` atomically (see [`dj_plans::atomic`]).
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    dj_plans::atomic::write_atomic(path, bytes)
        .with_context(|| format!("cannot write {}", path.display()))
}

pub(crate) fn write_json(path: &Path, v: &Value) -> Result<()> {
    write_atomic(path, (serde_json::to_string_pretty(v)? + "\n").as_bytes())
}

/// Copies the recipe into the job directory (once) and records the command-line overrides in
/// `cli.yaml`, which a resume compares against.
pub(crate) fn backup_config(paths: &JobPaths, recipe: &Recipe) -> Result<()> {
    let backup = paths.recipe_copy(&recipe.file);
    if !backup.exists() {
        write_atomic(&backup, recipe.source_text.as_bytes())?;
    }
    let args: Vec<String> = comparable_overrides(recipe)
        .iter()
        .flat_map(|(k, v)| [format!("--{k}"), v.clone()])
        .collect();
    let yaml = serde_norway::to_string(&json!({ "arguments": args }))?;
    write_atomic(&paths.cli_args(), yaml.as_bytes())
}

/// The saved command-line overrides of a job (`cli.yaml`), `--key value` in order; none when
/// the file is missing or unreadable.
pub(crate) fn saved_cli_args(paths: &JobPaths) -> Vec<String> {
    let cli = std::fs::read_to_string(paths.cli_args()).unwrap_or_default();
    serde_norway::from_str::<Value>(&cli)
        .ok()
        .and_then(|v| v.get("arguments").cloned())
        .and_then(|a| serde_json::from_value(a).ok())
        .unwrap_or_default()
}

/// Overrides that must match on resume (Data-Juicer excludes job_id, resume and work_dir).
pub(crate) fn comparable_overrides(recipe: &Recipe) -> Vec<(String, String)> {
    recipe
        .overrides
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "job_id" | "resume" | "work_dir"))
        .cloned()
        .collect()
}

/// The saved recipe text and overrides of a job, for resume's config check.
pub(crate) fn saved_config(paths: &JobPaths, recipe: &Recipe) -> Result<(String, Vec<String>)> {
    let backup = paths.recipe_copy(&recipe.file);
    let text = std::fs::read_to_string(&backup).with_context(|| {
        format!(
            "the job directory has no saved recipe {} (was it started with another recipe file?)",
            backup.display()
        )
    })?;
    Ok((text, saved_cli_args(paths)))
}

/// A stable hash of the effective recipe: its text, the overrides that must match on resume, and
/// the content of every model file its ops load (another model gives other results), each file
/// once, in the order the ops first load it, and the order the ops run in when filters were
/// reordered (a job's checkpoints hold the rows after the ops that ran before them). Recipes
/// without models or reordered filters hash as they always did.
pub(crate) fn recipe_hash(recipe: &Recipe) -> Result<String> {
    let mut h = blake3::Hasher::new();
    h.update(recipe.source_text.trim().as_bytes());
    for (k, v) in comparable_overrides(recipe) {
        h.update(b"\0");
        h.update(k.as_bytes());
        h.update(b"=");
        h.update(v.as_bytes());
    }
    if !recipe.reordered.is_empty() {
        h.update(b"\0order\0");
        for op in &recipe.process {
            h.update(&(op.entry as u64).to_le_bytes());
        }
    }
    let mut seen = std::collections::HashSet::new();
    for model in recipe.process.iter().flat_map(|op| &op.models) {
        if !seen.insert(&model.path) {
            continue;
        }
        h.update(b"\0model\0");
        let mut file = std::fs::File::open(&model.path)
            .with_context(|| format!("cannot read model file {}", model.path.display()))?;
        h.update_reader(&mut file)
            .with_context(|| format!("cannot read model file {}", model.path.display()))?;
    }
    Ok(h.finalize().to_hex().to_string())
}

/// `dag_execution_plan.json`: one node per partition and op, in Data-Juicer's shape.
pub(crate) fn dag_plan(recipe: &Recipe, partitions: usize) -> Value {
    let mut nodes = serde_json::Map::new();
    for p in 0..partitions {
        let mut prev: Option<String> = None;
        for op in &recipe.process {
            let id = format!("op_{:03}_{}_partition_{p}", op.index + 1, op.name);
            nodes.insert(
                id.clone(),
                json!({
                    "node_id": id,
                    "operation_name": op.name,
                    "node_type": "partition_operation",
                    "partition_id": p,
                    "config": op.params.to_json(),
                    "dependencies": prev.iter().collect::<Vec<_>>(),
                    "execution_order": op.index + 1,
                    "estimated_duration": 0.0,
                    "metadata": {"op_kind": op.spec.kind.as_str()},
                }),
            );
            prev = Some(id);
        }
    }
    json!({"nodes": nodes, "metadata": {"created_at": chrono::Utc::now().timestamp_millis() as f64 / 1000.0, "total_nodes": partitions * recipe.process.len()}})
}
