//! The recipe file as serde reads it: every top-level setting and the `partition`,
//! `checkpoint` and `intermediate_storage` sections, with Data-Juicer's lenient spellings
//! ("auto" counts, comma-separated op names, `event_logging: {enabled: ...}`). Errors carry the
//! path of the offending key (serde_path_to_error) so the caller can name its line.
//! `process:` is not here: its entries are validated against the operator registry.

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, Visitor};
use serde_json::Value as Json;

use super::{Compression, Engine, ExecutorType, PartitionMode, RetentionPolicy, StorageFormat};
use dj_udfs::suggest::{closest_names, format_suggestions};

/// The top-level settings (unknown keys are ignored here and warned about by the caller).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
#[serde(expecting = "a mapping of recipe settings")]
pub(super) struct RecipeFile {
    pub project_name: Option<String>,
    pub dataset_path: Option<String>,
    pub export_path: Option<String>,
    pub export_shard_size: Option<u64>,
    pub np: Option<u64>,
    #[serde(deserialize_with = "text_keys")]
    pub text_keys: Option<Vec<String>>,
    pub image_key: Option<String>,
    pub audio_key: Option<String>,
    pub video_key: Option<String>,
    pub work_dir: Option<String>,
    pub job_id: Option<String>,
    pub executor_type: Option<ExecutorType>,
    pub engine: Option<Engine>,
    pub scheduler: Option<String>,
    pub keep_stats_in_res_ds: Option<bool>,
    pub keep_hashes_in_res_ds: Option<bool>,
    #[serde(deserialize_with = "event_logging")]
    pub event_logging: Option<bool>,
    pub model_dir: Option<String>,
    pub skip_op_error: Option<bool>,
    /// dj-fusion's own: whether consecutive filters run cheapest first (default true).
    pub reorder_filters: Option<bool>,
    #[serde(deserialize_with = "positive")]
    pub memory_budget_mb: Option<u64>,
    pub partition: Option<PartitionSection>,
    pub checkpoint: Option<CheckpointSection>,
    pub intermediate_storage: Option<StorageSection>,
}

/// `partition:`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[serde(expecting = "a mapping of partition settings")]
pub(super) struct PartitionSection {
    pub mode: Option<PartitionMode>,
    pub num_of_partitions: Option<CountOrAuto>,
    #[serde(deserialize_with = "positive")]
    pub size: Option<u64>,
    pub max_concurrent_partitions: Option<CountOrAuto>,
    pub partitions_per_node: Option<CountOrAuto>,
    pub target_size_mb: Option<i64>,
    #[serde(deserialize_with = "positive")]
    pub max_size_mb: Option<u64>,
}

/// `checkpoint:`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[serde(expecting = "a mapping of checkpoint settings")]
pub(super) struct CheckpointSection {
    pub enabled: Option<bool>,
    #[serde(deserialize_with = "strategy")]
    pub strategy: Option<StrategyName>,
    #[serde(deserialize_with = "positive")]
    pub n_ops: Option<u64>,
    #[serde(deserialize_with = "op_names")]
    pub op_names: Option<Vec<String>>,
    pub reuse: Option<bool>,
}

/// `checkpoint.strategy`, with the name Data-Juicer maps to `every_op` with a warning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StrategyName {
    EveryOp,
    EveryNOps,
    Manual,
    Disabled,
    Auto,
    EveryPartition,
}

/// `intermediate_storage:`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[serde(expecting = "a mapping of intermediate storage settings")]
pub(super) struct StorageSection {
    pub format: Option<StorageFormat>,
    pub compression: Option<Compression>,
    pub preserve_intermediate_data: Option<bool>,
    pub retention_policy: Option<RetentionPolicy>,
    pub cleanup_temp_files: Option<bool>,
    pub write_partitions: Option<bool>,
    /// Data-Juicer settings accepted without effect here.
    pub cleanup_on_success: Option<IgnoredAny>,
    pub max_retention_days: Option<IgnoredAny>,
}

/// A positive count or "auto".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CountOrAuto {
    Auto,
    Count(usize),
}

impl CountOrAuto {
    /// `None` for "auto".
    pub fn count(self) -> Option<usize> {
        match self {
            CountOrAuto::Auto => None,
            CountOrAuto::Count(n) => Some(n),
        }
    }
}

impl<'de> Deserialize<'de> for CountOrAuto {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = CountOrAuto;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a positive integer or \"auto\"")
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<CountOrAuto, E> {
                match usize::try_from(n) {
                    Ok(n) if n >= 1 => Ok(CountOrAuto::Count(n)),
                    _ => Err(E::invalid_value(de::Unexpected::Unsigned(n), &self)),
                }
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<CountOrAuto, E> {
                match u64::try_from(n) {
                    Ok(n) => self.visit_u64(n),
                    Err(_) => Err(E::invalid_value(de::Unexpected::Signed(n), &self)),
                }
            }
            // A whole float (`4.0`), as PyYAML-style recipes write counts.
            fn visit_f64<E: de::Error>(self, f: f64) -> Result<CountOrAuto, E> {
                if f >= 1.0 && f.fract() == 0.0 && f <= u32::MAX as f64 {
                    Ok(CountOrAuto::Count(f as usize))
                } else {
                    Err(E::invalid_value(de::Unexpected::Float(f), &self))
                }
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<CountOrAuto, E> {
                if s.trim().eq_ignore_ascii_case("auto") {
                    Ok(CountOrAuto::Auto)
                } else {
                    Err(E::invalid_value(de::Unexpected::Str(s), &self))
                }
            }
        }
        d.deserialize_any(V)
    }
}

fn positive<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    match Option::<u64>::deserialize(d)? {
        Some(0) => Err(de::Error::invalid_value(
            de::Unexpected::Unsigned(0),
            &"a positive integer",
        )),
        n => Ok(n),
    }
}

/// `text_keys`: one key or a non-empty list of keys.
fn text_keys<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    match Option::<Json>::deserialize(d)? {
        None => Ok(None),
        Some(Json::String(s)) => Ok(Some(vec![s])),
        Some(Json::Array(a)) if !a.is_empty() && a.iter().all(Json::is_string) => Ok(Some(
            a.into_iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect(),
        )),
        Some(other) => Err(de::Error::custom(format!(
            "expected a string or a non-empty list of strings, got {other}"
        ))),
    }
}

/// `event_logging`: a bool, or `{enabled: bool}` as Data-Juicer's config writes it.
fn event_logging<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Setting {
        Flag(bool),
        Section {
            #[serde(default)]
            enabled: Option<bool>,
        },
    }
    match Option::<Json>::deserialize(d)? {
        None => Ok(None),
        Some(v) => match Setting::deserialize(&v) {
            Ok(Setting::Flag(b)) => Ok(Some(b)),
            Ok(Setting::Section { enabled }) => Ok(enabled),
            Err(_) => Err(de::Error::custom(format!(
                "expected true, false or {{enabled: true|false}}, got {v}"
            ))),
        },
    }
}

fn strategy<'de, D: Deserializer<'de>>(d: D) -> Result<Option<StrategyName>, D::Error> {
    const NAMES: &[&str] = &["every_op", "every_n_ops", "manual", "disabled", "auto"];
    let Some(s) = Option::<String>::deserialize(d)? else {
        return Ok(None);
    };
    Ok(Some(match s.as_str() {
        "every_op" => StrategyName::EveryOp,
        "every_n_ops" => StrategyName::EveryNOps,
        "manual" => StrategyName::Manual,
        "disabled" => StrategyName::Disabled,
        "auto" => StrategyName::Auto,
        "every_partition" => StrategyName::EveryPartition,
        other => return Err(de::Error::unknown_variant(other, NAMES)),
    }))
}

/// `checkpoint.op_names`: a list, or one comma-separated string (as a CLI override gives it).
fn op_names<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Names {
        List(Vec<String>),
        Joined(String),
    }
    Ok(match Option::<Json>::deserialize(d)? {
        None => None,
        Some(v) => Some(match Names::deserialize(&v) {
            Ok(Names::List(names)) => names,
            Ok(Names::Joined(s)) => s
                .split(',')
                .map(|p| p.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect(),
            Err(_) => {
                return Err(de::Error::custom(format!(
                    "expected a list of op names, got {v}"
                )));
            }
        }),
    })
}

/// Why the recipe's settings don't deserialize: the key path and the message.
#[derive(Debug)]
pub(super) struct FileError {
    pub path: Vec<String>,
    pub message: String,
}

/// Reads the settings of the recipe's root mapping.
pub(super) fn read(root: &Json) -> Result<RecipeFile, FileError> {
    serde_path_to_error::deserialize(root).map_err(|e| {
        let mut path: Vec<String> = e
            .path()
            .iter()
            .filter_map(|s| match s {
                serde_path_to_error::Segment::Map { key } => Some(key.clone()),
                serde_path_to_error::Segment::Seq { index } => Some(index.to_string()),
                _ => None,
            })
            .collect();
        let inner = e.into_inner().to_string();
        let message = match unknown_field(&inner) {
            Some((key, expected)) => {
                // The path ends at the section or at the unknown key itself.
                if path.last() != Some(&key) {
                    path.push(key.clone());
                }
                let expected: Vec<&str> = expected.iter().map(String::as_str).collect();
                let hint = closest_names(&key, &expected);
                let hint = if hint.is_empty() {
                    format!("; expected one of {}", expected.join(", "))
                } else {
                    format_suggestions(&hint)
                };
                format!("unknown key `{}`{hint}", path.join("."))
            }
            None => format!("`{}`: {inner}", path.join(".")),
        };
        FileError { path, message }
    })
}

/// `unknown field `x`, expected one of `a`, `b`` (serde's wording) -> (x, [a, b]).
fn unknown_field(message: &str) -> Option<(String, Vec<String>)> {
    let rest = message.strip_prefix("unknown field `")?;
    let (key, rest) = rest.split_once('`')?;
    let expected = rest
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    Some((key.to_string(), expected))
}
