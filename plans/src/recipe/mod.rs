//! The Data-Juicer recipe model: YAML text + dotted CLI overrides -> a validated [`Recipe`].
//!
//! Errors name the file, the YAML line, the key and what was expected; unknown operators and
//! parameters come with the closest accepted names. Unknown top-level keys are warnings.

use std::path::{Path, PathBuf};

use dj_udfs::registry::resolve;
use dj_udfs::suggest::did_you_mean;
use dj_udfs::{DedupReads, OpSpec, Operator, ParamError, Params};
use serde_json::Value as Json;
use serde_norway::Value as Yaml;

use crate::yaml_lines::YamlLines;
use file::{CheckpointSection, CountOrAuto, PartitionSection, StorageSection, StrategyName};

mod file;
mod order;
mod settings;

pub use order::FilterSample;

use settings::DEFAULT_SCHEDULER;
pub use settings::{
    CheckpointConfig, CheckpointStrategy, Compression, Engine, ExecutorType, IntermediateStorage,
    PartitionConfig, PartitionMode, RetentionPolicy, StorageFormat,
};

/// A recipe problem, with where it is.
#[derive(Debug, thiserror::Error)]
pub enum RecipeError {
    #[error("cannot read recipe {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{file}: invalid YAML: {message}")]
    Yaml { file: String, message: String },
    #[error("{}: {message}", location(.file, *.line))]
    Invalid {
        file: String,
        line: Option<usize>,
        message: String,
    },
    #[error("invalid command-line override `{arg}`: {message}")]
    Override { arg: String, message: String },
}

fn location(file: &str, line: Option<usize>) -> String {
    match line {
        Some(l) => format!("{file}:{l}"),
        None => file.to_string(),
    }
}

/// One `process:` entry, validated and built.
#[derive(Debug, Clone)]
pub struct OpConfig {
    /// 0-based position in [`Recipe::process`]: where the op runs.
    pub index: usize,
    /// 0-based position in the recipe file's `process` list (consecutive filters may run in
    /// another order, see [`Recipe::reordered`]); what messages to the user name.
    pub entry: usize,
    pub name: String,
    pub spec: &'static OpSpec,
    pub params: Params,
    pub operator: Operator,
    /// The model files the op loaded (shared per process), for `dj-plan explain`.
    pub models: Vec<dj_udfs::models::ModelUse>,
    /// YAML line of the entry, when known.
    pub line: Option<usize>,
}

impl OpConfig {
    pub fn text_key(&self) -> &str {
        self.params.str("text_key").unwrap_or("text")
    }
}

/// A validated recipe.
#[derive(Debug, Clone)]
pub struct Recipe {
    /// Path of the YAML file, as given.
    pub file: String,
    /// Exact text of the YAML file (resume compares it).
    pub source_text: String,
    pub project_name: String,
    pub dataset_path: String,
    pub export_path: String,
    pub export_shard_size: u64,
    pub np: usize,
    pub text_keys: Vec<String>,
    /// `image_key`, `audio_key`, `video_key`: columns of media paths, which Data-Juicer's loader
    /// makes relative to the dataset's directory.
    pub media_keys: Vec<String>,
    pub work_dir: Option<String>,
    pub job_id: Option<String>,
    pub executor_type: ExecutorType,
    /// `engine` (default `local`); `dj-run --engine` overrides it without changing the job's
    /// recipe hash, so a job started on a cluster resumes locally and the reverse.
    pub engine: Engine,
    /// `scheduler`: the Ballista scheduler's `host:port` (default [`DEFAULT_SCHEDULER`]).
    pub scheduler: String,
    pub keep_stats_in_res_ds: bool,
    pub keep_hashes_in_res_ds: bool,
    pub event_logging: bool,
    /// `memory_budget_mb`: what the global operators (deduplicators) may hold in memory before
    /// they spill to disk; `None`: the runner's default (a quarter of the available memory).
    pub memory_budget_mb: Option<u64>,
    /// The ops in the order they run: the recipe's, except that consecutive filters run by cost
    /// (and, once the runner has sampled the input, by what they drop) unless
    /// `reorder_filters: false` (see `order`).
    pub process: Vec<OpConfig>,
    /// The ranges of [`Self::process`] whose filters may run in any order (see `order`); empty
    /// with `reorder_filters: false`.
    pub filter_windows: Vec<std::ops::Range<usize>>,
    /// The windows whose filters run in another order than the recipe's. Checkpoints fall only
    /// at their ends, so a partition runs each one whole.
    pub reordered: Vec<std::ops::Range<usize>>,
    pub partition: PartitionConfig,
    pub checkpoint: CheckpointConfig,
    pub intermediate_storage: IntermediateStorage,
    /// Warnings found while loading (unknown keys, ignored settings).
    pub warnings: Vec<String>,
    /// Dotted overrides applied, in order, as `key=value` (resume compares them).
    pub overrides: Vec<(String, String)>,
}

/// Top-level keys this engine reads.
const READ_KEYS: &[&str] = &[
    "project_name",
    "dataset_path",
    "export_path",
    "export_shard_size",
    "np",
    "text_keys",
    "image_key",
    "audio_key",
    "video_key",
    "work_dir",
    "job_id",
    "executor_type",
    "engine",
    "scheduler",
    "process",
    "partition",
    "checkpoint",
    "intermediate_storage",
    "keep_stats_in_res_ds",
    "keep_hashes_in_res_ds",
    "event_logging",
    "model_dir",
    "memory_budget_mb",
    "skip_op_error",
    "reorder_filters",
];

/// Data-Juicer keys accepted without effect here (tracing, caching, Ray and analysis settings).
const ACCEPTED_KEYS: &[&str] = &[
    "export_type",
    "export_stats",
    "export_in_parallel",
    "export_original_dataset",
    "image_special_token",
    "audio_special_token",
    "video_special_token",
    "eoc_special_token",
    "suffixes",
    "add_suffix",
    "use_cache",
    "ds_cache_dir",
    "cache_compress",
    "open_tracer",
    "op_list_to_trace",
    "trace_num",
    "trace_keys",
    "op_fusion",
    "fusion_strategy",
    "turbo",
    "use_checkpoint",
    "temp_dir",
    "open_insight_mining",
    "op_list_to_mine",
    "ray_address",
    "auto_op_parallelism",
    "strict_preflight",
    "override_num_blocks",
    "debug",
    "percentiles",
    "save_stats_in_one_file",
    "data_probe_algo",
    "data_probe_ratio",
    "hpo_config",
    "adaptive_batch_size",
    "resource_optimization",
    "event_log_dir",
    "checkpoint_dir",
    "partition_dir",
    "max_log_size_mb",
    "backup_count",
    "use_dag",
    "dataset",
    "generated_dataset_config",
    "validators",
    "work_dir_cleanup",
];

impl Recipe {
    /// The media columns (`images`, `audios`, `videos` or their configured keys) that some
    /// operator opens the files of: the files a partition's content hash must cover.
    pub fn media_columns_read(&self) -> Vec<String> {
        self.media_keys
            .iter()
            .filter(|key| {
                self.process.iter().any(|op| match &op.operator {
                    Operator::FieldFilter(f) => &f.field == *key,
                    Operator::MediaMapper(m) => &m.column == *key,
                    Operator::Deduplicator(d) => {
                        matches!(&d.reads, DedupReads::Media { column, .. } if column == *key)
                    }
                    _ => false,
                })
            })
            .cloned()
            .collect()
    }

    /// Loads `path` and applies `overrides` (`("partition.mode", "manual")`, ...).
    pub fn load(path: &Path, overrides: &[(String, String)]) -> Result<Recipe, RecipeError> {
        let text = std::fs::read_to_string(path).map_err(|source| RecipeError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Recipe::from_str(&path.display().to_string(), &text, overrides)
    }

    /// Parses recipe `text` (named `file` in errors) and applies `overrides`.
    pub fn from_str(
        file: &str,
        text: &str,
        overrides: &[(String, String)],
    ) -> Result<Recipe, RecipeError> {
        let mut root: Yaml = serde_norway::from_str(text).map_err(|e| RecipeError::Yaml {
            file: file.to_string(),
            message: e.to_string(),
        })?;
        if root.is_null() {
            root = Yaml::Mapping(Default::default());
        }
        if !root.is_mapping() {
            return Err(RecipeError::Invalid {
                file: file.into(),
                line: Some(1),
                message: "a recipe must be a mapping of keys (dataset_path, process, ...)".into(),
            });
        }
        for (key, value) in overrides {
            apply_override(&mut root, key, value)?;
        }
        let lines = YamlLines::new(text);
        let ctx = Ctx {
            file,
            lines: &lines,
        };
        let root = yaml_to_json(&root);
        let map = root.as_object().expect("checked mapping");

        let mut warnings = Vec::new();
        for key in map.keys() {
            if READ_KEYS.contains(&key.as_str()) || ACCEPTED_KEYS.contains(&key.as_str()) {
                continue;
            }
            // Data-Juicer allows `--<op_name>.<param>` style keys only for ops in the recipe.
            let names: Vec<&str> = READ_KEYS.iter().chain(ACCEPTED_KEYS).copied().collect();
            let line = lines
                .find(&[key])
                .map(|l| format!(" (line {l})"))
                .unwrap_or_default();
            let hint = did_you_mean(key, &names);
            warnings.push(format!(
                "{file}: unknown top-level key `{key}`{line} is ignored{hint}"
            ));
        }

        let settings = file::read(&root).map_err(|e| {
            let path: Vec<&str> = e.path.iter().map(String::as_str).collect();
            ctx.err(&path, &e.message)
        })?;
        let dataset_path = settings.dataset_path.ok_or_else(|| {
            ctx.err(
                &[],
                "missing required key `dataset_path` (the input file, directory or glob)",
            )
        })?;
        let text_keys = settings
            .text_keys
            .unwrap_or_else(|| vec!["text".to_string()]);
        let media_keys = [
            (settings.image_key, "images"),
            (settings.audio_key, "audios"),
            (settings.video_key, "videos"),
        ]
        .into_iter()
        .map(|(key, default)| key.unwrap_or_else(|| default.into()))
        .collect();
        let partition = ctx.partition(settings.partition.unwrap_or_default())?;
        let checkpoint = checkpoint(settings.checkpoint.unwrap_or_default(), file, &mut warnings);
        let intermediate_storage = storage(settings.intermediate_storage.unwrap_or_default());
        // Model-based ops look here first (their own `model_dir` parameter, filled in from it).
        let mut process = ctx.process(
            map.get("process"),
            &text_keys[0],
            settings.model_dir.as_deref(),
            settings.skip_op_error,
        )?;
        let executor_type = settings.executor_type.unwrap_or(ExecutorType::Default);
        let (filter_windows, reordered) = if settings.reorder_filters.unwrap_or(true) {
            order::reorder_filters(&mut process, executor_type, &checkpoint)
        } else {
            (Vec::new(), Vec::new())
        };
        Ok(Recipe {
            file: file.to_string(),
            source_text: text.to_string(),
            project_name: settings
                .project_name
                .unwrap_or_else(|| "hello_world".into()),
            dataset_path,
            export_path: settings
                .export_path
                .unwrap_or_else(|| "./outputs/hello_world/hello_world.jsonl".into()),
            export_shard_size: settings.export_shard_size.unwrap_or(0),
            media_keys,
            np: settings.np.unwrap_or(4).max(1) as usize,
            text_keys,
            work_dir: settings.work_dir,
            job_id: settings.job_id,
            executor_type,
            engine: settings.engine.unwrap_or(Engine::Local),
            scheduler: settings
                .scheduler
                .unwrap_or_else(|| DEFAULT_SCHEDULER.to_string()),
            keep_stats_in_res_ds: settings.keep_stats_in_res_ds.unwrap_or(false),
            keep_hashes_in_res_ds: settings.keep_hashes_in_res_ds.unwrap_or(false),
            event_logging: settings.event_logging.unwrap_or(true),
            memory_budget_mb: settings.memory_budget_mb,
            process,
            filter_windows,
            reordered,
            partition,
            checkpoint,
            intermediate_storage,
            warnings,
            overrides: overrides.to_vec(),
        })
    }
}

/// `checkpoint:` with its defaults; `every_partition` is `every_op` with a warning, as in
/// Data-Juicer, and `disabled` turns checkpoints off.
fn checkpoint(c: CheckpointSection, file: &str, warnings: &mut Vec<String>) -> CheckpointConfig {
    let strategy = match c.strategy {
        None | Some(StrategyName::EveryNOps) => CheckpointStrategy::EveryNOps,
        Some(StrategyName::EveryOp) => CheckpointStrategy::EveryOp,
        Some(StrategyName::Manual) => CheckpointStrategy::Manual,
        Some(StrategyName::Disabled) => CheckpointStrategy::Disabled,
        Some(StrategyName::Auto) => CheckpointStrategy::Auto,
        Some(StrategyName::EveryPartition) => {
            warnings.push(format!(
                "{file}: unknown checkpoint strategy every_partition, defaulting to every_op"
            ));
            CheckpointStrategy::EveryOp
        }
    };
    CheckpointConfig {
        enabled: c.enabled.unwrap_or(true) && strategy != CheckpointStrategy::Disabled,
        strategy,
        n_ops: c.n_ops.unwrap_or(5) as usize,
        op_names: c.op_names.unwrap_or_default(),
        reuse: c.reuse.unwrap_or(true),
    }
}

/// `intermediate_storage:` with its defaults.
fn storage(s: StorageSection) -> IntermediateStorage {
    IntermediateStorage {
        format: s.format.unwrap_or(StorageFormat::Parquet),
        compression: s.compression.unwrap_or(Compression::Snappy),
        preserve_intermediate_data: s.preserve_intermediate_data.unwrap_or(false),
        retention_policy: s.retention_policy.unwrap_or(RetentionPolicy::KeepAll),
        cleanup_temp_files: s.cleanup_temp_files.unwrap_or(true),
        write_partitions: s.write_partitions.unwrap_or(true),
    }
}

/// Applies `a.b.c = value` to the YAML tree. The value is parsed as a YAML scalar
/// (`true`, `4`, `x`); `checkpoint.op_names` also accepts a comma-separated list.
fn apply_override(root: &mut Yaml, key: &str, value: &str) -> Result<(), RecipeError> {
    let err = |message: &str| RecipeError::Override {
        arg: format!("--{key} {value}"),
        message: message.into(),
    };
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(err("empty key segment"));
    }
    let mut parsed: Yaml =
        serde_norway::from_str(value).unwrap_or_else(|_| Yaml::String(value.to_string()));
    if parsed.is_null() && !value.trim().is_empty() && value.trim() != "null" && value.trim() != "~"
    {
        parsed = Yaml::String(value.to_string());
    }
    if key == "checkpoint.op_names"
        && let Yaml::String(s) = &parsed
    {
        parsed = Yaml::Sequence(
            s.split(',')
                .map(|p| Yaml::String(p.trim().to_string()))
                .collect(),
        );
    }
    let mut node = root;
    for (i, part) in parts.iter().enumerate() {
        // `--<op_name>.<param>`: set the parameter on every entry of that op.
        if i == 0 && parts.len() == 2 && dj_udfs::lookup(part).is_some() {
            return override_op_param(node, part, parts[1], parsed).map_err(|m| err(&m));
        }
        let map = match node {
            Yaml::Mapping(m) => m,
            other if other.is_null() => {
                *other = Yaml::Mapping(Default::default());
                other.as_mapping_mut().unwrap()
            }
            _ => return Err(err(&format!("`{}` is not a section", parts[..i].join(".")))),
        };
        let k = Yaml::String(part.to_string());
        if i + 1 == parts.len() {
            map.insert(k, parsed);
            return Ok(());
        }
        node = map.entry(k).or_insert(Yaml::Null);
    }
    Ok(())
}

fn override_op_param(root: &mut Yaml, op: &str, param: &str, value: Yaml) -> Result<(), String> {
    let process = root
        .get_mut("process")
        .and_then(Yaml::as_sequence_mut)
        .ok_or_else(|| format!("the recipe has no `process` list containing {op}"))?;
    let mut found = false;
    for entry in process.iter_mut() {
        if let Some(Yaml::Mapping(m)) =
            entry.as_mapping_mut().and_then(|m| m.get_mut(op)).map(|v| {
                if v.is_null() {
                    *v = Yaml::Mapping(Default::default());
                }
                v
            })
        {
            m.insert(Yaml::String(param.to_string()), value.clone());
            found = true;
        }
    }
    if found {
        Ok(())
    } else {
        Err(format!("operator {op} is not in the recipe's process list"))
    }
}

/// YAML -> JSON (keys stringified), so op parameters share one value model with the udfs crate.
fn yaml_to_json(v: &Yaml) -> Json {
    match v {
        Yaml::Null => Json::Null,
        Yaml::Bool(b) => Json::Bool(*b),
        Yaml::Number(n) => {
            if let Some(i) = n.as_i64() {
                Json::from(i)
            } else if let Some(u) = n.as_u64() {
                Json::from(u)
            } else {
                n.as_f64()
                    .and_then(serde_json::Number::from_f64)
                    .map(Json::Number)
                    .unwrap_or(Json::Null)
            }
        }
        Yaml::String(s) => Json::String(s.clone()),
        Yaml::Sequence(s) => Json::Array(s.iter().map(yaml_to_json).collect()),
        Yaml::Mapping(m) => Json::Object(
            m.iter()
                .map(|(k, v)| {
                    let key = match k {
                        Yaml::String(s) => s.clone(),
                        other => serde_norway::to_string(other)
                            .unwrap_or_default()
                            .trim()
                            .to_string(),
                    };
                    (key, yaml_to_json(v))
                })
                .collect(),
        ),
        Yaml::Tagged(t) => yaml_to_json(&t.value),
    }
}

/// Lookup context: the file name and line index for error messages.
struct Ctx<'a> {
    file: &'a str,
    lines: &'a YamlLines,
}

type JsonMap = serde_json::Map<String, Json>;

impl Ctx<'_> {
    fn err(&self, path: &[&str], message: &str) -> RecipeError {
        RecipeError::Invalid {
            file: self.file.into(),
            line: self.lines.find(path),
            message: message.into(),
        }
    }

    /// `partition:` with its defaults; a count of "auto" selects auto mode.
    fn partition(&self, p: PartitionSection) -> Result<PartitionConfig, RecipeError> {
        let mut mode = p.mode.unwrap_or(PartitionMode::Auto);
        let mut num_of_partitions = 4;
        match p.num_of_partitions {
            Some(CountOrAuto::Count(n)) => num_of_partitions = n,
            Some(CountOrAuto::Auto) => mode = PartitionMode::Auto,
            None => {}
        }
        if p.size.is_some()
            && mode == PartitionMode::Manual
            && matches!(p.num_of_partitions, Some(CountOrAuto::Count(_)))
        {
            return Err(self.err(
                &["partition", "size"],
                "`partition.size` and `partition.num_of_partitions` are mutually exclusive in manual mode",
            ));
        }
        Ok(PartitionConfig {
            mode,
            num_of_partitions,
            size: p.size.map(|s| s as usize),
            max_concurrent_partitions: p.max_concurrent_partitions.and_then(CountOrAuto::count),
            partitions_per_node: p.partitions_per_node.and_then(CountOrAuto::count),
            target_size_mb: p.target_size_mb,
            max_size_mb: p.max_size_mb.map_or(64, |m| m as i64),
        })
    }

    fn process(
        &self,
        v: Option<&Json>,
        default_text_key: &str,
        model_dir: Option<&str>,
        skip_op_error: Option<bool>,
    ) -> Result<Vec<OpConfig>, RecipeError> {
        let entries = match v {
            None | Some(Json::Null) => return Ok(vec![]),
            Some(Json::Array(a)) => a,
            Some(_) => {
                return Err(self.err(
                    &["process"],
                    "`process` must be a list of `- op_name: {params}` entries",
                ));
            }
        };
        let mut ops = Vec::with_capacity(entries.len());
        for (index, entry) in entries.iter().enumerate() {
            let idx = index.to_string();
            let (name, given) = match entry {
                Json::String(name) => (name.clone(), JsonMap::new()),
                Json::Object(m) if m.len() == 1 => {
                    let (name, params) = m.iter().next().unwrap();
                    let params = match params {
                        Json::Null => JsonMap::new(),
                        Json::Object(p) => p.clone(),
                        other => {
                            return Err(self.err(
                                &["process", &idx, name],
                                &format!("parameters of {name} must be a mapping, got {other}"),
                            ));
                        }
                    };
                    (name.clone(), params)
                }
                other => {
                    return Err(self.err(
                        &["process", &idx],
                        &format!(
                            "process entry {} must be `- op_name: {{params}}`, got {other}",
                            index + 1
                        ),
                    ));
                }
            };
            let line = self.lines.find(&["process", &idx, &name]);
            let spec = resolve(&name).map_err(|e| RecipeError::Invalid {
                file: self.file.into(),
                line,
                message: format!("process entry {}: {e}", index + 1),
            })?;
            let mut given = given;
            if let Some(dir) = model_dir
                && !given.contains_key("model_dir")
                && spec.all_params().iter().any(|p| p.name == "model_dir")
            {
                given.insert("model_dir".into(), Json::String(dir.to_string()));
            }
            // Data-Juicer hands the top-level `skip_op_error` (default true) to every op that does
            // not set its own; left unset, ops read the default themselves, so recipes without
            // the key keep their op configs (and checkpoint hashes) unchanged.
            if let Some(skip) = skip_op_error
                && !given.contains_key("skip_op_error")
            {
                given.insert("skip_op_error".into(), Json::Bool(skip));
            }
            if !given.contains_key("text_key") {
                given.insert(
                    "text_key".into(),
                    Json::String(default_text_key.to_string()),
                );
            }
            let (built, models) = dj_udfs::models::collect_uses(|| spec.instantiate(&given));
            let (params, operator) = built.map_err(|e: ParamError| RecipeError::Invalid {
                file: self.file.into(),
                line: self
                    .lines
                    .find(&["process", &idx, &name, e.param()])
                    .or(line),
                message: e.to_string(),
            })?;
            ops.push(OpConfig {
                index,
                entry: index,
                name,
                spec,
                params,
                operator,
                models,
                line,
            });
        }
        Ok(ops)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RECIPE: &str = "project_name: demo
dataset_path: data/in.jsonl
export_path: out/out.jsonl
np: 2
process:
  - whitespace_normalization_mapper:
  - text_length_filter:
      min_len: 5
      max_len: 100
";

    fn load(text: &str, overrides: &[(&str, &str)]) -> Result<Recipe, RecipeError> {
        let o: Vec<(String, String)> = overrides
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        Recipe::from_str("r.yaml", text, &o)
    }

    #[test]
    fn loads_ops_with_defaults_and_params() {
        let r = load(RECIPE, &[]).unwrap();
        assert_eq!(r.np, 2);
        assert_eq!(r.process.len(), 2);
        assert_eq!(r.process[1].params.int("min_len"), Some(5));
        assert_eq!(r.process[1].line, Some(7));
        assert_eq!(r.checkpoint.strategy, CheckpointStrategy::EveryNOps);
        assert_eq!(r.checkpoint.n_ops, 5);
        assert_eq!(r.executor_type, ExecutorType::Default);
    }

    #[test]
    fn unknown_param_names_op_line_and_suggestion() {
        let text = RECIPE.replace("max_len: 100", "max_lenght: 100");
        let e = load(&text, &[]).unwrap_err().to_string();
        assert_eq!(
            e,
            "r.yaml:9: unknown parameter `max_lenght` of text_length_filter; did you mean max_len?"
        );
    }

    #[test]
    fn ill_typed_param_is_an_error_with_line() {
        let text = RECIPE.replace("min_len: 5", "min_len: five");
        let e = load(&text, &[]).unwrap_err().to_string();
        assert_eq!(
            e,
            "r.yaml:8: parameter `min_len` of text_length_filter must be an integer, got string \"five\""
        );
    }

    #[test]
    fn unknown_op_is_an_error_with_suggestion() {
        let text = RECIPE.replace("text_length_filter", "text_lenght_filter");
        let e = load(&text, &[]).unwrap_err().to_string();
        assert_eq!(
            e,
            "r.yaml:7: process entry 2: unknown operator `text_lenght_filter`; did you mean text_length_filter?"
        );
    }

    #[test]
    fn unknown_top_level_key_warns() {
        let r = load(&format!("{RECIPE}export_pth: x\n"), &[]).unwrap();
        assert_eq!(
            r.warnings,
            vec![
                "r.yaml: unknown top-level key `export_pth` (line 10) is ignored; did you mean export_path?"
            ]
        );
    }

    #[test]
    fn dotted_overrides_apply() {
        let r = load(
            RECIPE,
            &[
                ("partition.mode", "manual"),
                ("partition.num_of_partitions", "4"),
                ("checkpoint.strategy", "manual"),
                ("checkpoint.op_names", "a,b"),
                ("text_length_filter.min_len", "7"),
            ],
        )
        .unwrap();
        assert_eq!(r.partition.mode, PartitionMode::Manual);
        assert_eq!(r.partition.num_of_partitions, 4);
        assert_eq!(r.checkpoint.strategy, CheckpointStrategy::Manual);
        assert_eq!(r.checkpoint.op_names, vec!["a", "b"]);
        assert_eq!(r.process[1].params.int("min_len"), Some(7));
    }

    #[test]
    fn bad_section_values_are_specific() {
        let e = load(RECIPE, &[("checkpoint.strategy", "sometimes")])
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "r.yaml: `checkpoint.strategy`: unknown variant `sometimes`, expected one of `every_op`, `every_n_ops`, `manual`, `disabled`, `auto`"
        );
        let e = load(&format!("{RECIPE}partition:\n  num_partitions: 3\n"), &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(
                "r.yaml:11: unknown key `partition.num_partitions`; did you mean num_of_partitions"
            ),
            "{e}"
        );
    }

    #[test]
    fn partitions_per_node_is_a_positive_integer_or_auto() {
        let per_node = |v: &str| {
            load(RECIPE, &[("partition.partitions_per_node", v)])
                .map(|r| r.partition.partitions_per_node)
        };
        assert_eq!(
            load(RECIPE, &[]).unwrap().partition.partitions_per_node,
            None
        );
        assert_eq!(per_node("6").unwrap(), Some(6));
        assert_eq!(per_node("auto").unwrap(), None);
        assert_eq!(
            per_node("0").unwrap_err().to_string(),
            "r.yaml: `partition.partitions_per_node`: invalid value: integer `0`, expected a positive integer or \"auto\""
        );
    }

    #[test]
    fn missing_dataset_path_is_an_error() {
        let e = load("process: []\n", &[]).unwrap_err().to_string();
        assert_eq!(
            e,
            "r.yaml: missing required key `dataset_path` (the input file, directory or glob)"
        );
    }

    /// Settings read through serde: their lines, lenient spellings and accepted-only keys.
    #[test]
    fn settings_errors_name_the_line_and_key() {
        let e = load(&format!("{RECIPE}checkpoint:\n  n_ops: 0\n"), &[])
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "r.yaml:11: `checkpoint.n_ops`: invalid value: integer `0`, expected a positive integer"
        );
        let e = load(&RECIPE.replace("np: 2", "np: two"), &[])
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "r.yaml:4: `np`: invalid type: string \"two\", expected u64"
        );
        let e = load(&format!("{RECIPE}text_keys: []\n"), &[])
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "r.yaml:10: `text_keys`: expected a string or a non-empty list of strings, got []"
        );
        let e = load(
            &format!("{RECIPE}intermediate_storage:\n  format: csv\n"),
            &[],
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "r.yaml:11: `intermediate_storage.format`: unknown variant `csv`, expected one of `parquet`, `arrow`, `jsonl`"
        );
        let e = load(&format!("{RECIPE}partition:\n  max_size_mb: 0\n"), &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("r.yaml:11: `partition.max_size_mb`: invalid value"),
            "{e}"
        );
    }

    #[test]
    fn lenient_spellings_are_read() {
        let text = format!(
            "{RECIPE}text_keys: [content, title]
event_logging:
  enabled: false
partition:
  mode: manual
  num_of_partitions: 3.0
  max_size_mb: 128
checkpoint:
  strategy: every_partition
  op_names: [a, b]
intermediate_storage:
  cleanup_on_success: true
  max_retention_days: 7
executor_type: ray_partitioned
engine: ballista
"
        );
        let r = load(&text, &[]).unwrap();
        assert_eq!(r.text_keys, ["content", "title"]);
        assert!(!r.event_logging);
        assert_eq!(
            (
                r.partition.mode,
                r.partition.num_of_partitions,
                r.partition.max_size_mb
            ),
            (PartitionMode::Manual, 3, 128)
        );
        assert_eq!(r.checkpoint.strategy, CheckpointStrategy::EveryOp);
        assert_eq!(r.checkpoint.op_names, ["a", "b"]);
        assert_eq!(
            r.warnings,
            ["r.yaml: unknown checkpoint strategy every_partition, defaulting to every_op"]
        );
        assert_eq!(r.executor_type, ExecutorType::RayPartitioned);
        assert_eq!(r.engine, Engine::Ballista);
        // "auto" as the count selects auto mode.
        let r = load(
            RECIPE,
            &[
                ("partition.mode", "manual"),
                ("partition.num_of_partitions", "auto"),
            ],
        )
        .unwrap();
        assert_eq!(r.partition.mode, PartitionMode::Auto);
    }
}
