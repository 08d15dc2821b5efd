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
            checkpoints: root.join("checkpoints"),
            partitions: root.join("partitions"),
            logs: root.join("logs"),
            metadata: root.join("metadata"),
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
        self.checkpoints.join("partitioning_info.json")
    }

    pub(crate) fn summary(&self) -> PathBuf {
        self.root.join("job_summary.json")
    }
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
    let name = Path::new(&recipe.file)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or("config.yaml".into());
    let backup = paths.root.join(name);
    if !backup.exists() {
        write_atomic(&backup, recipe.source_text.as_bytes())?;
    }
    let args: Vec<String> = comparable_overrides(recipe)
        .iter()
        .flat_map(|(k, v)| [format!("--{k}"), v.clone()])
        .collect();
    let yaml = serde_norway::to_string(&json!({ "arguments": args }))?;
    write_atomic(&paths.root.join("cli.yaml"), yaml.as_bytes())
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
    let name = Path::new(&recipe.file)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or("config.yaml".into());
    let backup = paths.root.join(&name);
    let text = std::fs::read_to_string(&backup).with_context(|| {
        format!(
            "the job directory has no saved recipe {} (was it started with another recipe file?)",
            backup.display()
        )
    })?;
    let cli = std::fs::read_to_string(paths.root.join("cli.yaml")).unwrap_or_default();
    let args: Vec<String> = serde_norway::from_str::<Value>(&cli)
        .ok()
        .and_then(|v| v.get("arguments").cloned())
        .and_then(|a| serde_json::from_value(a).ok())
        .unwrap_or_default();
    Ok((text, args))
}

/// A stable hash of the effective recipe: its text, the overrides that must match on resume, and
/// the content of every model file its ops load (another model gives other results), each file
/// once, in the order the ops first load it. Recipes without models hash as they always did.
pub(crate) fn recipe_hash(recipe: &Recipe) -> Result<String> {
    let mut h = blake3::Hasher::new();
    h.update(recipe.source_text.trim().as_bytes());
    for (k, v) in comparable_overrides(recipe) {
        h.update(b"\0");
        h.update(k.as_bytes());
        h.update(b"=");
        h.update(v.as_bytes());
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
