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
pub const MIN_PARTITIONS_ABOVE: u64 = 10_000;
/// A data skew factor above this shrinks the partition size by 20%.
pub const SKEW_THRESHOLD: f64 = 0.7;
/// Concurrent partitions assumed per node by the memory guard.
pub const ASSUMED_CONCURRENT_PARTITIONS: f64 = 4.0;
/// `max_concurrent_partitions: auto` for a CPU-only pipeline.
pub const AUTO_CPU_PARTITION_CAP: usize = 4;
/// Clamp of the recommended maximum partition size in MB.
pub const MAX_SIZE_MB_BOUNDS: (i64, i64) = (32, 512);

// ------------------------------------------------------------------------------------------------
// Modality

/// Data modality of a sample or of the whole sample (the most frequent one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Modality {
    Text,
    Image,
    Audio,
    Video,
    Multimodal,
}

impl Modality {
    /// In Data-Juicer's enum order, which also breaks ties of the most frequent modality.
    pub const ALL: [Modality; 5] = [
        Modality::Text,
        Modality::Image,
        Modality::Audio,
        Modality::Video,
        Modality::Multimodal,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Modality::Text => "text",
            Modality::Image => "image",
            Modality::Audio => "audio",
            Modality::Video => "video",
            Modality::Multimodal => "multimodal",
        }
    }

    /// Rows per partition when the per-sample size is unknown (0).
    pub fn default_partition_size(self) -> usize {
        match self {
            Modality::Text => 10_000,
            Modality::Image => 2_000,
            Modality::Audio => 1_000,
            Modality::Video => 400,
            Modality::Multimodal => 1_600,
        }
    }

    /// Upper bound of rows per partition.
    pub fn max_partition_size(self) -> usize {
        match self {
            Modality::Text => 50_000,
            Modality::Image => 10_000,
            Modality::Audio => 4_000,
            Modality::Video => 2_000,
            Modality::Multimodal => 6_000,
        }
    }

    /// The tuning document's memory multiplier relative to text. Reported, never applied: neither the
    /// document's formulas nor any Data-Juicer version multiplies by it (the measured P90 memory per
    /// sample already carries the modality's footprint).
    pub fn memory_multiplier(self) -> f64 {
        match self {
            Modality::Text => 1.0,
            Modality::Image => 5.0,
            Modality::Audio => 8.0,
            Modality::Video => 20.0,
            Modality::Multimodal => 10.0,
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Samples

/// What the optimizer needs from one sampled row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SampleStats {
    /// The text key resolves (nested, `a.b`) to a truthy value.
    pub has_text: bool,
    /// Text length in characters (sum over a list of texts).
    pub text_chars: u64,
    /// Number of images / audios / videos (Python `len()` of the field; 0 = absent or falsy).
    pub images: u64,
    pub audios: u64,
    pub videos: u64,
    /// Estimated in-memory size of the row in bytes (see [`py_deep_sizeof`]).
    pub memory_bytes: u64,
}

/// Field names the sample statistics read (Data-Juicer's `text_keys[0]`, `image_key`, ...).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SampleKeys {
    pub text_key: Option<String>,
    pub image_key: String,
    pub audio_key: String,
    pub video_key: String,
}

impl Default for SampleKeys {
    fn default() -> Self {
        SampleKeys {
            text_key: Some("text".into()),
            image_key: "images".into(),
            audio_key: "audios".into(),
            video_key: "videos".into(),
        }
    }
}

impl SampleKeys {
    pub fn with_text_key(text_key: impl Into<String>) -> Self {
        SampleKeys {
            text_key: Some(text_key.into()),
            ..SampleKeys::default()
        }
    }
}

impl SampleStats {
    /// A text-only row of `chars` characters taking `memory_bytes`.
    pub fn text(chars: u64, memory_bytes: u64) -> Self {
        SampleStats {
            has_text: chars > 0,
            text_chars: chars,
            memory_bytes,
            ..SampleStats::default()
        }
    }

    /// Modality of this row: every present-and-truthy field counts; more than one is multimodal,
    /// none is text.
    pub fn modality(&self) -> Modality {
        let present = [
            (self.has_text, Modality::Text),
            (self.images > 0, Modality::Image),
            (self.audios > 0, Modality::Audio),
            (self.videos > 0, Modality::Video),
        ];
        let mut found = present.iter().filter(|(p, _)| *p).map(|(_, m)| *m);
        match (found.next(), found.next()) {
            (Some(_), Some(_)) => Modality::Multimodal,
            (Some(m), None) => m,
            _ => Modality::Text,
        }
    }

    /// Statistics of a row as Data-Juicer reads a sample dict: the text key through `nested_query`,
    /// media keys at the top level, the size by [`py_deep_sizeof`]. Where Data-Juicer would raise
    /// (`len(None)`, `len(5)`) this counts 0 (1 for a truthy scalar media field) instead.
    pub fn from_json(row: &Value, keys: &SampleKeys) -> Self {
        let text = keys
            .text_key
            .as_deref()
            .filter(|k| !k.is_empty())
            .and_then(|k| nested_query(row, k));
        let (has_text, text_chars) = match text.as_deref() {
            None => (false, 0),
            Some(v) => (
                truthy(v),
                match v {
                    Value::String(s) => s.chars().count() as u64,
                    Value::Array(items) => items.iter().map(py_len).sum(),
                    _ => 0,
                },
            ),
        };
        let media = |key: &str| match row.get(key) {
            None => 0,
            Some(v @ (Value::String(_) | Value::Array(_) | Value::Object(_))) => py_len(v),
            Some(v) => u64::from(truthy(v)),
        };
        SampleStats {
            has_text,
            text_chars,
            images: media(&keys.image_key),
            audios: media(&keys.audio_key),
            videos: media(&keys.video_key),
            memory_bytes: py_deep_sizeof(row),
        }
    }
}

/// Python truthiness of a JSON value.
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|x| x != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(m) => !m.is_empty(),
    }
}

/// Python `len()`; 0 where Python raises.
fn py_len(v: &Value) -> u64 {
    match v {
        Value::String(s) => s.chars().count() as u64,
        Value::Array(a) => a.len() as u64,
        Value::Object(m) => m.len() as u64,
        _ => 0,
    }
}

/// Data-Juicer's `nested_query` on a plain dict: try the remaining dotted key flat, else dive one
/// level; a list maps the rest of the query over its items; a `None` value tries the next suffix.
fn nested_query<'a>(root: &'a Value, key: &str) -> Option<Cow<'a, Value>> {
    let subkeys: Vec<&str> = key.split('.').collect();
    let mut tmp = root;
    for i in 0..subkeys.len() {
        let rest = subkeys[i..].join(".");
        match tmp {
            Value::Object(m) => match m.get(&rest) {
                Some(Value::Null) => continue,
                Some(v) => return Some(Cow::Borrowed(v)),
                None => match m.get(subkeys[i]) {
                    Some(v) => tmp = v,
                    None => return None,
                },
            },
            Value::Array(items) => {
                let list = items
                    .iter()
                    .map(|it| nested_query(it, &rest).map_or(Value::Null, Cow::into_owned))
                    .collect();
                return Some(Cow::Owned(Value::Array(list)));
            }
            _ => return None,
        }
    }
    None
}

/// Data-Juicer's `_deep_getsizeof` (recursive `sys.getsizeof`, each object counted once) of the
/// dict `json.loads` would build from `value`, for 64-bit CPython 3.11: strings 49/73/74/76 bytes
/// plus 1/1/2/4 per character (ASCII/Latin-1/UCS-2/UCS-4), ints 24 + 4 per 30-bit digit (at least
/// one), floats 24, bools 28, None 16, lists 56 + 8 per slot of append over-allocation, dicts 64
/// empty else 64 + 32 + index + 16 per usable entry of the split-table size. Shared objects are
/// counted once: None/True/False, ints -5..=256, the empty and one-character Latin-1 strings, and
/// repeated keys (the decoder's key memo). Integers beyond 64 bits are counted as floats.
pub fn py_deep_sizeof(value: &Value) -> u64 {
    let mut shared = HashSet::new();
    deep_sizeof(value, &mut shared)
}

#[derive(Hash, PartialEq, Eq)]
enum Shared<'a> {
    None,
    True,
    False,
    SmallInt(i64),
    /// The empty string (`u32::MAX`) or a one-character Latin-1 string.
    Char(u32),
    Key(&'a str),
}

fn deep_sizeof<'a>(v: &'a Value, shared: &mut HashSet<Shared<'a>>) -> u64 {
    fn once<'a>(shared: &mut HashSet<Shared<'a>>, s: Shared<'a>, size: u64) -> u64 {
        if shared.insert(s) { size } else { 0 }
    }
    match v {
        Value::Null => once(shared, Shared::None, 16),
        Value::Bool(true) => once(shared, Shared::True, 28),
        Value::Bool(false) => once(shared, Shared::False, 28),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                if (-5..=256).contains(&i) {
                    once(shared, Shared::SmallInt(i), 28)
                } else {
                    py_int_size(i.unsigned_abs())
                }
            } else if let Some(u) = n.as_u64() {
                py_int_size(u)
            } else {
                24
            }
        }
        Value::String(s) => match single_char(s) {
            Some(c) => once(shared, Shared::Char(c), py_str_size(s)),
            None => py_str_size(s),
        },
        Value::Array(items) => {
            py_list_size(items.len()) + items.iter().map(|x| deep_sizeof(x, shared)).sum::<u64>()
        }
        Value::Object(m) => {
            let mut size = py_dict_size(m.len());
            for (k, x) in m {
                let key = match single_char(k) {
                    Some(c) => Shared::Char(c),
                    None => Shared::Key(k.as_str()),
                };
                size += once(shared, key, py_str_size(k));
                size += deep_sizeof(x, shared);
            }
            size
        }
    }
}

/// The cached singleton a string is, if any: `""` or one character below U+0100.
fn single_char(s: &str) -> Option<u32> {
    let mut chars = s.chars();
    match (chars.next(), chars.next()) {
        (None, _) => Some(u32::MAX),
        (Some(c), None) if (c as u32) < 256 => Some(c as u32),
        _ => None,
    }
}

fn py_str_size(s: &str) -> u64 {
    let (n, max) = s
        .chars()
        .fold((0u64, 0u32), |(n, m), c| (n + 1, m.max(c as u32)));
    match max {
        0..=0x7F => 49 + n,
        0x80..=0xFF => 73 + n,
        0x100..=0xFFFF => 74 + 2 * n,
        _ => 76 + 4 * n,
    }
}

fn py_int_size(abs: u64) -> u64 {
    let bits = u64::from(64 - abs.leading_zeros());
    24 + 4 * bits.div_ceil(30).max(1)
}

fn py_list_size(n: usize) -> u64 {
    // list_resize on append: new_allocated = (newsize + (newsize >> 3) + 6) & ~3.
    let mut allocated = 0usize;
    let mut k = 1usize;
    while k <= n {
        allocated = (k + (k >> 3) + 6) & !3;
        k = allocated + 1;
    }
    56 + 8 * allocated as u64
}

fn py_dict_size(n: usize) -> u64 {
    if n == 0 {
        return 64;
    }
    let usable = |s: usize| (2 * s) / 3;
    let mut slots = 8usize;
    while n > usable(slots) {
        slots = (usable(slots) * 3).max(8).next_power_of_two();
    }
    let index_bytes = match slots {
        0..=128 => slots,
        129..=32_768 => 2 * slots,
        _ if (slots as u64) < 1 << 32 => 4 * slots,
        _ => 8 * slots,
    };
    (64 + 32 + index_bytes + 16 * usable(slots)) as u64
}

/// How many rows to analyze out of `total` (taken from the head of the input): all below 1,000;
/// 1% but at least 1,000 from 1,000 to 100,000 (so 1,000); 0.1% capped at 10,000 above 100,000.
pub fn sample_size(total: u64) -> usize {
    let n = if total < 1_000 {
        total
    } else if total <= 100_000 {
        (total / 100).max(1_000)
    } else {
        (total / 1_000).min(10_000)
    };
    n as usize
}

// ------------------------------------------------------------------------------------------------
// Data characteristics

/// Rows per modality in the sample.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ModalityCounts {
    pub text: usize,
    pub image: usize,
    pub audio: usize,
    pub video: usize,
    pub multimodal: usize,
}

impl ModalityCounts {
    pub fn get(&self, m: Modality) -> usize {
        match m {
            Modality::Text => self.text,
            Modality::Image => self.image,
            Modality::Audio => self.audio,
            Modality::Video => self.video,
            Modality::Multimodal => self.multimodal,
        }
    }

    fn bump(&mut self, m: Modality) {
        match m {
            Modality::Text => self.text += 1,
            Modality::Image => self.image += 1,
            Modality::Audio => self.audio += 1,
            Modality::Video => self.video += 1,
            Modality::Multimodal => self.multimodal += 1,
        }
    }

    /// The most frequent modality; ties go to the first in [`Modality::ALL`].
    pub fn primary(&self) -> Modality {
        let mut best = Modality::Text;
        for m in Modality::ALL {
            if self.get(m) > self.get(best) {
                best = m;
            }
        }
        best
    }
}

/// How the characteristics were obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Sampling {
    /// From sampled rows.
    Analyzed,
    /// Rows could not be read: Data-Juicer's defaults (text, 500 chars, 0.002 MB, skew 0.5).
    Failed,
}

/// The sample's statistics (Data-Juicer's `DataCharacteristics`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DataCharacteristics {
    pub sampling: Sampling,
    pub primary_modality: Modality,
    pub modality_distribution: ModalityCounts,
    pub avg_text_length: f64,
    pub avg_images_per_sample: f64,
    pub avg_audio_per_sample: f64,
    pub avg_video_per_sample: f64,
    pub total_samples: u64,
    pub sample_size_analyzed: usize,
    /// P90 of the per-row sizes (`sorted[int(n * 0.9)]`) in MB; the one size for one row, 0.002
    /// for none.
    pub memory_per_sample_mb: f64,
    /// Index into the sorted sizes used for the P90 (None with fewer than 2 rows).
    pub memory_p90_index: Option<usize>,
    pub mean_memory_per_sample_mb: Option<f64>,
    /// Sample standard deviation (n - 1) of the sizes in MB.
    pub memory_stdev_mb: Option<f64>,
    /// `min(1, stdev / mean)` (0 if the mean is 0); 0.5 with fewer than 2 rows.
    pub data_skew_factor: f64,
}

impl DataCharacteristics {
    /// Data-Juicer's defaults when sampling fails.
    pub fn sampling_failed(total_samples: u64) -> Self {
        DataCharacteristics {
            sampling: Sampling::Failed,
            primary_modality: Modality::Text,
            modality_distribution: ModalityCounts {
                text: 1,
                ..ModalityCounts::default()
            },
            avg_text_length: 500.0,
            avg_images_per_sample: 0.0,
            avg_audio_per_sample: 0.0,
            avg_video_per_sample: 0.0,
            total_samples,
            sample_size_analyzed: 0,
            memory_per_sample_mb: 0.002,
            memory_p90_index: None,
            mean_memory_per_sample_mb: None,
            memory_stdev_mb: None,
            data_skew_factor: 0.5,
        }
    }
}

/// Statistics of `samples` (the head of an input of `total_samples` rows).
pub fn analyze(total_samples: u64, samples: &[SampleStats]) -> DataCharacteristics {
    let n = samples.len();
    let mut counts = ModalityCounts::default();
    for s in samples {
        counts.bump(s.modality());
    }
    let avg = |f: fn(&SampleStats) -> u64| {
        if n == 0 {
            0.0
        } else {
            samples.iter().map(f).sum::<u64>() as f64 / n as f64
        }
    };
    let sizes: Vec<f64> = samples.iter().map(|s| s.memory_bytes as f64 / MB).collect();
    let (memory, p90_index, mean, stdev, skew) = if n > 1 {
        let mut sorted = sizes.clone();
        sorted.sort_by(f64::total_cmp);
        let idx = (n as f64 * 0.9) as usize;
        let mean = sizes.iter().sum::<f64>() / n as f64;
        let variance = sizes.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64;
        let stdev = variance.sqrt();
        let skew = if mean > 0.0 {
            (stdev / mean).min(1.0)
        } else {
            0.0
        };
        (sorted[idx], Some(idx), Some(mean), Some(stdev), skew)
    } else {
        (
            sizes.first().copied().unwrap_or(0.002),
            None,
            None,
            None,
            0.5,
        )
    };
    DataCharacteristics {
        sampling: Sampling::Analyzed,
        primary_modality: counts.primary(),
        modality_distribution: counts,
        avg_text_length: avg(|s| s.text_chars),
        avg_images_per_sample: avg(|s| s.images),
        avg_audio_per_sample: avg(|s| s.audios),
        avg_video_per_sample: avg(|s| s.videos),
        total_samples,
        sample_size_analyzed: n,
        memory_per_sample_mb: memory,
        memory_p90_index: p90_index,
        mean_memory_per_sample_mb: mean,
        memory_stdev_mb: stdev,
        data_skew_factor: skew,
    }
}

// ------------------------------------------------------------------------------------------------
// Complexity

/// Processing cost class of an op, from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OpComplexity {
    High,
    Medium,
    Low,
}

impl OpComplexity {
    pub fn weight(self) -> f64 {
        match self {
            OpComplexity::High => 0.3,
            OpComplexity::Medium => 0.2,
            OpComplexity::Low => 0.1,
        }
    }
}

/// High if the lower-cased name contains embedding, similarity, model, neural, vision or audio;
/// else medium if it contains filter, deduplicator or mapper; else low. Unlike Data-Juicer, ops
/// that run a model on every sample ([`dj_udfs::registry::MODEL_BASED_OPS`]: language ID,
/// perplexity, token counting) are high too, as the seed document's categories put model
/// inference.
pub fn op_complexity(name: &str) -> OpComplexity {
    let lower = name.to_lowercase();
    let has = |kws: &[&str]| kws.iter().any(|k| lower.contains(k));
    let runs_model = dj_udfs::registry::MODEL_BASED_OPS.contains(&name);
    if runs_model
        || has(&[
            "embedding",
            "similarity",
            "model",
            "neural",
            "vision",
            "audio",
        ])
    {
        OpComplexity::High
    } else if has(&["filter", "deduplicator", "mapper"]) {
        OpComplexity::Medium
    } else {
        OpComplexity::Low
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpKind {
    pub name: String,
    pub complexity: OpComplexity,
}

/// The pipeline's complexity multiplier `1 + 0.3 high + 0.2 medium + 0.1 low`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Complexity {
    pub high: usize,
    pub medium: usize,
    pub low: usize,
    pub ops: Vec<OpKind>,
    pub score: f64,
}

pub fn pipeline_complexity<S: AsRef<str>>(op_names: &[S]) -> Complexity {
    let ops: Vec<OpKind> = op_names
        .iter()
        .map(|n| OpKind {
            name: n.as_ref().to_string(),
            complexity: op_complexity(n.as_ref()),
        })
        .collect();
    let count = |c| ops.iter().filter(|o| o.complexity == c).count();
    let (high, medium, low) = (
        count(OpComplexity::High),
        count(OpComplexity::Medium),
        count(OpComplexity::Low),
    );
    let score = 1.0 + (high as f64 * 0.3 + medium as f64 * 0.2 + low as f64 * 0.1);
    Complexity {
        high,
        medium,
        low,
        ops,
        score,
    }
}

// ------------------------------------------------------------------------------------------------
// Resources and target size

/// The machine's memory and cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Resources {
    pub available_memory_bytes: u64,
    pub total_memory_bytes: u64,
    pub cpu_cores: usize,
}

impl Resources {
    /// Available and total RAM and logical CPUs of the host, as Data-Juicer reads them with psutil
    /// (host values, cgroup limits not applied).
    pub fn detect() -> Result<Resources, sysinfo::Error> {
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

    pub fn available_memory_gb(&self) -> f64 {
        self.available_memory_bytes as f64 / GB
    }
}

/// Where the target partition size came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetSource {
    /// `partition.target_size_mb`.
    Recipe,
    /// The available-memory tier.
    AvailableMemory,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TargetSize {
    pub target_mb: i64,
    pub source: TargetSource,
    pub available_memory_gb: f64,
}

/// MB per partition by available memory: < 16 GB 32, < 64 GB 64, < 256 GB 128, else 256.
pub fn memory_tier_mb(available_memory_gb: f64) -> i64 {
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
pub fn target_partition_mb(available_memory_gb: f64, configured: Option<i64>) -> TargetSize {
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

// ------------------------------------------------------------------------------------------------
// Decisions

/// One step of the partition-size calculation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SizeStep {
    /// `modality_target`, `memory_guard`, `parallelism`, `data_skew` or `final_bounds`.
    pub step: &'static str,
    /// Rows per partition before the step (none for the first).
    pub before: Option<usize>,
    pub after: usize,
    /// Whether the step's condition held (for `modality_target`: whether a bound clamped it).
    pub applied: bool,
    pub rule: String,
}

/// Rows per partition and how they were reached.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SizeDecision {
    pub modality: Modality,
    pub modality_default_size: usize,
    pub modality_max_size: usize,
    /// Informational (see [`Modality::memory_multiplier`]).
    pub modality_memory_multiplier: f64,
    /// Text only: `avg_text_length * 2 bytes` in MB.
    pub text_mb_per_sample: Option<f64>,
    /// `int(target_mb / (mb_per_sample * complexity))` before the bounds; None if the default was used.
    pub raw_target_size: Option<i64>,
    /// `available_gb * 1024 * 0.8 / 4`.
    pub max_partition_memory_mb: f64,
    /// 1 up to 10,000 samples, else `max(1, int(cores * 1.5))`.
    pub min_partitions: usize,
    pub steps: Vec<SizeStep>,
    pub size: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MaxSizeDecision {
    pub target_mb: i64,
    /// `int(target_mb / complexity)`.
    pub complexity_adjusted_mb: i64,
    /// `int(available_gb * 1024 * 0.25)`.
    pub max_by_memory_mb: i64,
    /// The smaller of the two, before the 32..=512 clamp.
    pub unclamped_mb: i64,
    pub max_size_mb: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkerRule {
    /// Fewer estimated partitions than base workers: `max(1, int(partitions * 0.8))`.
    FewPartitions,
    /// More than twice the base workers: `min(cores, int(base * 1.2))`.
    ManyPartitions,
    Balanced,
    /// No samples: the base count.
    NoWorkloadInfo,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct WorkerDecision {
    pub cpu_cores: usize,
    /// `max(1, int(cores * 0.75))`.
    pub base_workers: usize,
    pub estimated_partitions: Option<f64>,
    pub rule: WorkerRule,
    pub worker_count: usize,
}

/// Everything behind an optimizer recommendation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Analysis {
    pub data: DataCharacteristics,
    pub complexity: Complexity,
    pub resources: Resources,
    pub target: TargetSize,
    pub size: SizeDecision,
    pub max_size: MaxSizeDecision,
    pub workers: WorkerDecision,
}

/// The optimizer's answer, or the fallback when analysis failed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recommendation {
    /// Rows per partition; for the fallback, `partition.size` if set.
    pub partition_size: Option<usize>,
    /// Recommended maximum partition size in MB (an estimate: nothing enforces it).
    pub max_size_mb: Option<i64>,
    /// Recommended workers (None for the fallback: `np` stands in).
    pub worker_count: Option<usize>,
    /// `total_samples / partition_size`, as the worker rule sees it.
    pub estimated_partitions: Option<f64>,
    /// Why the fallback was used.
    pub fallback_reason: Option<String>,
    pub reasoning: Vec<String>,
    pub analysis: Option<Analysis>,
    /// The partition count once [`Recommendation::count_partitions`] has run.
    pub partitions: Option<PartitionCount>,
}

impl Recommendation {
    /// When analysis fails: the `partition.size` fallback if any, else the configured count.
    pub fn fallback(size: Option<usize>, reason: impl Into<String>) -> Self {
        let reason = reason.into();
        let size = size.filter(|s| *s > 0);
        let then = match size {
            Some(s) => format!("using the partition.size fallback of {s} samples per partition"),
            None => "no partition.size fallback: keeping partition.num_of_partitions".to_string(),
        };
        Recommendation {
            partition_size: size,
            max_size_mb: None,
            worker_count: None,
            estimated_partitions: None,
            reasoning: vec![format!("auto partition analysis failed ({reason}); {then}")],
            fallback_reason: Some(reason),
            analysis: None,
            partitions: None,
        }
    }

    pub fn is_fallback(&self) -> bool {
        self.fallback_reason.is_some()
    }

    /// [`partition_count`] for this recommendation, kept in `partitions` (and its reasoning
    /// appended) so the whole decision can be logged and saved as one value; returns the count.
    pub fn count_partitions(&mut self, total_rows: u64, cfg: &CountConfig) -> usize {
        let count = partition_count(total_rows, self, cfg);
        let n = count.count;
        self.reasoning
            .extend(count.reasoning.iter().map(|r| format!("partitions: {r}")));
        self.partitions = Some(count);
        n
    }
}

/// Analyzes `samples` (the first [`sample_size`] rows of `total_samples`) and recommends.
pub fn recommend<S: AsRef<str>>(
    total_samples: u64,
    samples: &[SampleStats],
    op_names: &[S],
    resources: &Resources,
    target_size_mb: Option<i64>,
) -> Recommendation {
    recommend_for(
        analyze(total_samples, samples),
        op_names,
        resources,
        target_size_mb,
    )
}

/// Recommends from given characteristics (e.g. [`DataCharacteristics::sampling_failed`]).
pub fn recommend_for<S: AsRef<str>>(
    data: DataCharacteristics,
    op_names: &[S],
    resources: &Resources,
    target_size_mb: Option<i64>,
) -> Recommendation {
    let complexity = pipeline_complexity(op_names);
    let available_gb = resources.available_memory_gb();
    let target = target_partition_mb(available_gb, target_size_mb);
    let size = partition_size(
        &data,
        complexity.score,
        target.target_mb,
        available_gb,
        resources.cpu_cores,
    );
    let max_size = max_size_mb(target.target_mb, complexity.score, available_gb);
    let workers = worker_count(resources.cpu_cores, size.size, data.total_samples);
    let estimated = data.total_samples as f64 / size.size as f64;

    let d = &data.modality_distribution;
    let mut reasoning = vec![
        format!(
            "modality: based on {} modality (sample: text {}, image {}, audio {}, video {}, multimodal {})",
            data.primary_modality.as_str(),
            d.text,
            d.image,
            d.audio,
            d.video,
            d.multimodal
        ),
        format!(
            "complexity: processing complexity factor {:.2} ({} high x0.3, {} medium x0.2, {} low x0.1)",
            complexity.score, complexity.high, complexity.medium, complexity.low
        ),
        format!(
            "dataset_size: {} samples, {} analyzed{}",
            data.total_samples,
            data.sample_size_analyzed,
            if data.sampling == Sampling::Failed {
                " (sampling failed: default characteristics)"
            } else {
                ""
            }
        ),
        format!(
            "text_length: average text length {:.0} characters",
            data.avg_text_length
        ),
        format!("data_skew: data skew factor {:.2}", data.data_skew_factor),
        format!(
            "memory_constraints: memory per sample (P90) {:.3} MB",
            data.memory_per_sample_mb
        ),
        match target.source {
            TargetSource::Recipe => format!(
                "target: {} MB per partition from partition.target_size_mb",
                target.target_mb
            ),
            TargetSource::AvailableMemory => format!(
                "target: {} MB per partition from {:.1} GB available memory",
                target.target_mb, available_gb
            ),
        },
    ];
    reasoning.extend(size.steps.iter().map(|s| format!("{}: {}", s.step, s.rule)));
    reasoning.push(format!(
        "max_size: {} MB = clamp(min(int({} / {:.2}) = {}, 25% of memory = {}), 32, 512)",
        max_size.max_size_mb,
        max_size.target_mb,
        complexity.score,
        max_size.complexity_adjusted_mb,
        max_size.max_by_memory_mb
    ));
    reasoning.push(format!(
        "worker_count: optimal workers {} (based on {} available cores, base {})",
        workers.worker_count, workers.cpu_cores, workers.base_workers
    ));

    Recommendation {
        partition_size: Some(size.size),
        max_size_mb: Some(max_size.max_size_mb),
        worker_count: Some(workers.worker_count),
        estimated_partitions: Some(estimated),
        fallback_reason: None,
        reasoning,
        analysis: Some(Analysis {
            data,
            complexity,
            resources: *resources,
            target,
            size,
            max_size,
            workers,
        }),
        partitions: None,
    }
}

/// Rows per partition: modality target, memory guard, parallelism, skew, final bounds.
pub fn partition_size(
    data: &DataCharacteristics,
    complexity: f64,
    target_mb: i64,
    available_memory_gb: f64,
    cpu_cores: usize,
) -> SizeDecision {
    let modality = data.primary_modality;
    let (default, max) = (
        modality.default_partition_size(),
        modality.max_partition_size(),
    );
    let mem = data.memory_per_sample_mb;
    let total = data.total_samples;
    let mut steps = Vec::new();

    // 1. Modality target.
    let (text_mb, basis_mb, floor) = if modality == Modality::Text {
        let mb = data.avg_text_length * 2.0 / MB;
        (Some(mb), mb, 100)
    } else {
        (None, mem, 10)
    };
    let raw = (basis_mb > 0.0).then(|| (target_mb as f64 / (basis_mb * complexity)) as i64);
    let unbounded = raw.unwrap_or(default as i64);
    let mut size = unbounded.clamp(floor as i64, max as i64) as usize;
    let basis = if text_mb.is_some() {
        format!(
            "{:.0} chars x 2 bytes = {basis_mb:.6} MB",
            data.avg_text_length
        )
    } else {
        format!("P90 {basis_mb:.6} MB")
    };
    steps.push(SizeStep {
        step: "modality_target",
        before: None,
        after: size,
        applied: size as i64 != unbounded,
        rule: match raw {
            Some(raw) => format!(
                "int({target_mb} MB / ({basis} per sample x complexity {complexity:.2})) = {raw}, bounded to [{floor}, {max}] = {size}"
            ),
            None => format!(
                "no size per sample ({basis}): {} default {default}, bounded to [{floor}, {max}] = {size}",
                modality.as_str()
            ),
        },
    });

    // 2. Memory guard: 2x safety margin, 80% of memory shared by 4 concurrent partitions.
    let max_partition_memory_mb =
        (available_memory_gb * 1024.0 * 0.8) / ASSUMED_CONCURRENT_PARTITIONS;
    let needed = size as f64 * mem * 2.0;
    let before = size;
    let applied = needed > max_partition_memory_mb;
    let rule = if applied {
        let safe = (max_partition_memory_mb / (mem * 2.0)) as i64;
        size = safe.max(10) as usize;
        format!(
            "{before} x {mem:.6} MB x 2 = {needed:.1} MB > {max_partition_memory_mb:.1} MB (80% of {available_memory_gb:.1} GB / 4): int({max_partition_memory_mb:.1} / ({mem:.6} x 2)) = {safe}, at least 10 = {size}"
        )
    } else {
        format!(
            "{before} x {mem:.6} MB x 2 = {needed:.1} MB fits {max_partition_memory_mb:.1} MB (80% of {available_memory_gb:.1} GB / 4)"
        )
    };
    steps.push(SizeStep {
        step: "memory_guard",
        before: Some(before),
        after: size,
        applied,
        rule,
    });

    // 3. Parallelism: at least cores x 1.5 partitions above 10,000 samples.
    let min_partitions = if total <= MIN_PARTITIONS_ABOVE {
        1
    } else {
        ((cpu_cores as f64 * 1.5) as usize).max(1)
    };
    let before = size;
    let partitions = total as f64 / size as f64;
    let applied = partitions < min_partitions as f64;
    let rule = if applied {
        let par = (total as f64 / min_partitions as f64) as i64;
        size = par.max(10) as usize;
        format!(
            "{total} / {before} = {partitions:.3} partitions < {min_partitions}: int({total} / {min_partitions}) = {par}, at least 10 = {size}"
        )
    } else {
        format!("{total} / {before} = {partitions:.3} partitions >= {min_partitions}")
    };
    steps.push(SizeStep {
        step: "parallelism",
        before: Some(before),
        after: size,
        applied,
        rule,
    });

    // 4. Data skew.
    let before = size;
    let skew = data.data_skew_factor;
    let applied = skew > SKEW_THRESHOLD;
    let rule = if applied {
        size = (size as f64 * 0.8) as usize;
        format!("skew {skew:.3} > 0.7: int({before} x 0.8) = {size}")
    } else {
        format!("skew {skew:.3} <= 0.7: unchanged")
    };
    steps.push(SizeStep {
        step: "data_skew",
        before: Some(before),
        after: size,
        applied,
        rule,
    });

    // 5. Final bounds.
    let before = size;
    size = size.clamp(10, max);
    steps.push(SizeStep {
        step: "final_bounds",
        before: Some(before),
        after: size,
        applied: size != before,
        rule: format!("bounded to [10, {max}] = {size}"),
    });

    SizeDecision {
        modality,
        modality_default_size: default,
        modality_max_size: max,
        modality_memory_multiplier: modality.memory_multiplier(),
        text_mb_per_sample: text_mb,
        raw_target_size: raw,
        max_partition_memory_mb,
        min_partitions,
        steps,
        size,
    }
}

/// `clamp(min(int(target / complexity), int(available_gb * 1024 * 0.25)), 32, 512)`.
pub fn max_size_mb(target_mb: i64, complexity: f64, available_memory_gb: f64) -> MaxSizeDecision {
    let complexity_adjusted_mb = (target_mb as f64 / complexity) as i64;
    let max_by_memory_mb = (available_memory_gb * 1024.0 * 0.25) as i64;
    let unclamped_mb = complexity_adjusted_mb.min(max_by_memory_mb);
    MaxSizeDecision {
        target_mb,
        complexity_adjusted_mb,
        max_by_memory_mb,
        unclamped_mb,
        max_size_mb: unclamped_mb.clamp(MAX_SIZE_MB_BOUNDS.0, MAX_SIZE_MB_BOUNDS.1),
    }
}

/// 75% of the cores, fewer for few partitions, up to 120% of that for many, never above the cores.
pub fn worker_count(cpu_cores: usize, partition_size: usize, total_samples: u64) -> WorkerDecision {
    let base = ((cpu_cores as f64 * 0.75) as usize).max(1);
    let (estimated, rule, workers) = if partition_size > 0 && total_samples > 0 {
        let est = total_samples as f64 / partition_size as f64;
        if est < base as f64 {
            (
                Some(est),
                WorkerRule::FewPartitions,
                ((est * 0.8) as usize).max(1),
            )
        } else if est > (base * 2) as f64 {
            (
                Some(est),
                WorkerRule::ManyPartitions,
                cpu_cores.min((base as f64 * 1.2) as usize),
            )
        } else {
            (Some(est), WorkerRule::Balanced, base)
        }
    } else {
        (None, WorkerRule::NoWorkloadInfo, base)
    };
    WorkerDecision {
        cpu_cores,
        base_workers: base,
        estimated_partitions: estimated,
        rule,
        worker_count: workers.min(cpu_cores).max(1),
    }
}

// ------------------------------------------------------------------------------------------------
// Partition count and concurrency

/// The recipe settings the partition count depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CountConfig {
    /// `np`: the worker count of a fallback recommendation and the auto concurrency bound.
    pub np: usize,
    /// `partition.num_of_partitions` (4 when "auto"): the count when there is no size at all.
    pub num_of_partitions: usize,
    /// `partition.max_concurrent_partitions` (None = auto).
    pub max_concurrent_partitions: Option<usize>,
    /// `partition.partitions_per_node` (None = auto: 2 for a CPU-only pipeline).
    pub partitions_per_node: Option<usize>,
}

/// How many partitions, step by step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartitionCount {
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
    pub reasoning: Vec<String>,
}

/// Data-Juicer's auto-mode partition count on one node: the nearest count for the recommended
/// (or fallback) size capped at `max(32, 2 x workers)`, then at most `max(2 x concurrency,
/// partitions_per_node)` and at most one partition per row.
pub fn partition_count(total_rows: u64, rec: &Recommendation, cfg: &CountConfig) -> PartitionCount {
    let mut reasoning = Vec::new();
    let size = rec.partition_size.filter(|s| *s > 0);
    let worker_count = rec.worker_count.unwrap_or(cfg.np).max(1);
    let size_source = match (size, rec.is_fallback()) {
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
    let count = data_driven.min(row_ceiling).min(cluster_target).max(1);
    reasoning.push(format!(
        "cluster bound: min({data_driven}, {total_rows} rows, max(2 x {concurrency} concurrent, {per_node} per node)) = {count}"
    ));
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
        reasoning,
    }
}

/// The driver concurrency before it meets the partitions: an explicit value (at least 1), or for
/// "auto" the CPU-only pipeline cap of 4, bounded by `np` (the cores the run may use).
pub fn driver_concurrency(explicit: Option<usize>, np: usize) -> usize {
    match explicit {
        Some(n) => n.max(1),
        None => AUTO_CPU_PARTITION_CAP.min(np).max(1),
    }
}

/// Partitions processed at the same time: [`driver_concurrency`], never more than the partitions.
pub fn max_concurrent_partitions(explicit: Option<usize>, partitions: usize, np: usize) -> usize {
    driver_concurrency(explicit, np).min(partitions.max(1))
}

#[cfg(test)]
mod tests {
    //! Expected values marked "DJ" were computed by calling py-data-juicer 1.6.1's own functions
    //! (`partition_size_optimizer.py`, `ray_executor_partitioned.py`) on the same inputs; the others
    //! are worked out by hand in the comments.

    use super::*;
    use serde_json::json;

    const GIB: u64 = 1024 * 1024 * 1024;

    fn res(cores: usize, available_gb: f64) -> Resources {
        let bytes = (available_gb * GB) as u64;
        Resources {
            available_memory_bytes: bytes,
            total_memory_bytes: bytes,
            cpu_cores: cores,
        }
    }

    fn stats(row: &str) -> SampleStats {
        SampleStats::from_json(&serde_json::from_str(row).unwrap(), &SampleKeys::default())
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    /// Characteristics as Data-Juicer's tests build them (only the fields the sizing reads).
    fn dc(
        modality: Modality,
        avg_text: f64,
        mem_mb: f64,
        total: u64,
        skew: f64,
    ) -> DataCharacteristics {
        DataCharacteristics {
            primary_modality: modality,
            avg_text_length: avg_text,
            memory_per_sample_mb: mem_mb,
            total_samples: total,
            data_skew_factor: skew,
            ..DataCharacteristics::sampling_failed(total)
        }
    }

    // -- sampling ---------------------------------------------------------------------------------

    #[test]
    fn sample_size_follows_the_document() {
        assert_eq!(sample_size(0), 0);
        assert_eq!(sample_size(999), 999); // < 1,000: all
        assert_eq!(sample_size(1_000), 1_000);
        // 1,000..=100,000: 1% but at least 1,000. DJ's code: min(1000, total // 100) = 500 and 999.
        assert_eq!(sample_size(50_000), 1_000);
        assert_eq!(sample_size(99_999), 1_000);
        assert_eq!(sample_size(100_000), 1_000); // the document puts 100,000 in the 1% range
        // > 100,000: 0.1% capped at 10,000 (same as DJ's code).
        assert_eq!(sample_size(100_001), 100);
        assert_eq!(sample_size(2_000_000), 2_000);
        assert_eq!(sample_size(9_999_999), 9_999);
        assert_eq!(sample_size(10_000_000), 10_000);
        assert_eq!(sample_size(50_000_000), 10_000);
    }

    // -- target size --------------------------------------------------------------------------------

    #[test]
    fn memory_tier_boundaries() {
        // DJ: calculate_target_partition_mb without partition.target_size_mb.
        for (gb, mb) in [
            (0.0, 32),
            (15.999, 32),
            (16.0, 64),
            (63.99, 64),
            (64.0, 128),
            (255.99, 128),
            (256.0, 256),
            (1000.0, 256),
        ] {
            assert_eq!(memory_tier_mb(gb), mb, "{gb} GB");
        }
        // DJ, from bytes: one byte under each boundary stays in the lower tier.
        for (bytes, mb) in [
            (16 * GIB - 1, 32),
            (16 * GIB, 64),
            (64 * GIB - 1, 64),
            (64 * GIB, 128),
            (256 * GIB - 1, 128),
            (256 * GIB, 256),
        ] {
            let r = Resources {
                available_memory_bytes: bytes,
                total_memory_bytes: bytes,
                cpu_cores: 1,
            };
            let t = target_partition_mb(r.available_memory_gb(), None);
            assert_eq!((t.target_mb, t.source), (mb, TargetSource::AvailableMemory));
        }
    }

    #[test]
    fn configured_target_wins_and_is_kept_as_is() {
        // DJ: 256 with 1 GB, 0 with 1 GB, -5 with 300 GB.
        for (gb, cfg) in [(1.0, 256), (1.0, 0), (300.0, -5)] {
            let t = target_partition_mb(gb, Some(cfg));
            assert_eq!((t.target_mb, t.source), (cfg, TargetSource::Recipe));
        }
    }

    // -- complexity ---------------------------------------------------------------------------------

    #[test]
    fn op_complexity_from_names() {
        use OpComplexity::*;
        for (name, kind) in [
            ("image_text_similarity_filter", High), // similarity before filter
            ("video_captioning_from_audio_mapper", High),
            ("text_embedding_similarity_filter", High),
            ("neural_x", High),
            ("vision_y", High),
            ("Model_Z", High), // lower-cased
            ("audio_duration_filter", High),
            ("Text_Length_FILTER", Medium),
            ("language_id_score_filter", High),
            ("perplexity_filter", High),
            ("token_num_filter", High),
            ("document_minhash_deduplicator", Medium),
            ("clean_email_mapper", Medium),
            ("random_selector", Low),
            ("naive_grouper", Low),
            ("entity_attribute_aggregator", Low),
            ("topk_specified_field_selector", Low),
        ] {
            assert_eq!(op_complexity(name), kind, "{name}");
        }
        assert_eq!(
            (High.weight(), Medium.weight(), Low.weight()),
            (0.3, 0.2, 0.1)
        );
    }

    #[test]
    fn pipeline_complexity_scores() {
        // DJ: analyze_processing_complexity with the ops as dicts.
        let none: [&str; 0] = [];
        assert_eq!(pipeline_complexity(&none).score, 1.0);
        let demo = [
            "whitespace_normalization_mapper",
            "clean_email_mapper",
            "clean_links_mapper",
            "fix_unicode_mapper",
            "text_length_filter",
            "words_num_filter",
            "character_repetition_filter",
            "special_characters_filter",
            "language_id_score_filter",
            "document_deduplicator",
        ];
        let c = pipeline_complexity(&demo);
        // Data-Juicer rates language_id_score_filter medium (0, 10, 0, 3.0); it runs a model on
        // every sample, so here it is high.
        assert_eq!((c.high, c.medium, c.low, c.score), (1, 9, 0, 3.1));
        let kinds: Vec<String> = [
            "image_text_similarity_filter",
            "video_captioning_from_audio_mapper",
            "text_embedding_similarity_filter",
            "neural_x",
            "vision_y",
            "Model_Z",
            "audio_duration_filter",
            "Text_Length_FILTER",
            "document_minhash_deduplicator",
            "random_selector",
            "naive_grouper",
            "entity_attribute_aggregator",
            "topk_specified_field_selector",
        ]
        .map(String::from)
        .to_vec();
        let c = pipeline_complexity(&kinds);
        assert_eq!((c.high, c.medium, c.low), (7, 2, 4));
        assert_eq!(c.score, 3.9); // 1 + (7 x 0.3 + 2 x 0.2 + 4 x 0.1), DJ 3.9
        assert_eq!(c.ops[0].complexity, OpComplexity::High);
        // Data-Juicer's executor passes op objects, which it skips: always 1.0 there. Here the
        // names count.
        assert_eq!(pipeline_complexity(&["text_length_filter"]).score, 1.2);
    }

    // -- samples ------------------------------------------------------------------------------------

    #[test]
    fn modality_detection_per_sample() {
        use Modality::*;
        // DJ: detect_modality on the same dicts.
        for (row, m) in [
            (r#"{"text": "hi"}"#, Text),
            (r#"{"images": ["a"]}"#, Image),
            (r#"{"text": "hi", "images": ["a"]}"#, Multimodal),
            (r#"{}"#, Text),
            (
                r#"{"text": "hi", "audios": ["x"], "videos": ["v"]}"#,
                Multimodal,
            ),
            (r#"{"text": "", "images": []}"#, Text),
            (r#"{"audios": ["a", "b"]}"#, Audio),
            (r#"{"videos": ["v"]}"#, Video),
            (r#"{"text": null}"#, Text),
            (r#"{"text": ["ab", "cde"]}"#, Text),
            (r#"{"text": 0}"#, Text),
            (r#"{"images": "abc"}"#, Image),
        ] {
            assert_eq!(stats(row).modality(), m, "{row}");
        }
        let s = stats(r#"{"text": ["ab", "cde"], "images": "abc", "videos": [1, 2]}"#);
        assert_eq!(
            (s.has_text, s.text_chars, s.images, s.audios, s.videos),
            (true, 5, 3, 0, 2)
        );
        assert!(!stats(r#"{"text": 0}"#).has_text);
        assert_eq!(stats(r#"{"images": null, "audios": true}"#).images, 0);
        assert_eq!(stats(r#"{"images": null, "audios": true}"#).audios, 1);
    }

    #[test]
    fn modality_distribution_and_averages() {
        let rows = [
            r#"{"text": "hi"}"#,
            r#"{"images": ["a"]}"#,
            r#"{"text": "hi", "images": ["a"]}"#,
            r#"{}"#,
            r#"{"text": "hi", "audios": ["x"], "videos": ["v"]}"#,
            r#"{"text": "", "images": []}"#,
            r#"{"audios": ["a", "b"]}"#,
            r#"{"videos": ["v"]}"#,
            r#"{"text": null}"#,
            r#"{"text": ["ab", "cde"]}"#,
            r#"{"text": 0}"#,
            r#"{"images": "abc"}"#,
        ];
        let samples: Vec<_> = rows.iter().map(|r| stats(r)).collect();
        let d = analyze(12, &samples);
        // DJ: analyze_dataset_characteristics on the same rows.
        assert_eq!(
            d.modality_distribution,
            ModalityCounts {
                text: 6,
                image: 2,
                audio: 1,
                video: 1,
                multimodal: 2
            }
        );
        assert_eq!(d.primary_modality, Modality::Text);
        assert_eq!(d.avg_text_length, 0.9166666666666666);
        assert_eq!(d.avg_images_per_sample, 0.4166666666666667);
        assert_eq!(d.avg_audio_per_sample, 0.25);
        assert_eq!(d.avg_video_per_sample, 0.16666666666666666);
        // (json.loads rows: `["a"]` is a list appended to, 88 bytes, not a 64-byte literal.)
        assert_eq!(d.memory_per_sample_mb, 0.00045871734619140625);
        assert!(close(d.data_skew_factor, 0.4121024775863373));
        assert_eq!(d.sample_size_analyzed, 12);
    }

    #[test]
    fn primary_modality_majority_and_ties() {
        let img = SampleStats {
            images: 1,
            ..SampleStats::default()
        };
        let vid = SampleStats {
            videos: 1,
            ..SampleStats::default()
        };
        let txt = SampleStats::text(5, 100);
        assert_eq!(
            analyze(3, &[img, img, txt]).primary_modality,
            Modality::Image
        );
        // Ties go to the first in Data-Juicer's enum order.
        assert_eq!(analyze(2, &[vid, txt]).primary_modality, Modality::Text);
        assert_eq!(analyze(2, &[vid, img]).primary_modality, Modality::Image);
        assert_eq!(analyze(0, &[]).primary_modality, Modality::Text);
    }

    #[test]
    fn nested_text_key() {
        let keys = SampleKeys::with_text_key("meta.content");
        // DJ: nested_query(row, "meta.content") and detect_modality(row + images) == multimodal.
        for (row, has_text, chars) in [
            (json!({"meta": {"content": "hello"}}), true, 5),
            (json!({"meta.content": "flat wins"}), true, 9),
            (json!({"meta": {"content": null}}), false, 0),
            (json!({"meta": "str"}), false, 0),
            (
                json!({"meta": [{"content": "a"}, {"content": "bb"}]}),
                true,
                3,
            ),
            (
                json!({"meta.content": null, "meta": {"content": "xyz"}}),
                false,
                0,
            ),
            (json!({"meta": [{"content": null}]}), true, 0), // [None]: DJ raises on len(None)
            (json!({"meta": []}), false, 0),
            (json!({"meta": {"content": ""}}), false, 0),
        ] {
            let s = SampleStats::from_json(&row, &keys);
            assert_eq!((s.has_text, s.text_chars), (has_text, chars), "{row}");
        }
        let none = SampleKeys {
            text_key: None,
            ..SampleKeys::default()
        };
        assert!(!SampleStats::from_json(&json!({"text": "x"}), &none).has_text);
    }

    #[test]
    fn deep_sizeof_matches_cpython() {
        // DJ: _deep_getsizeof(json.loads(row)) under CPython 3.11.7.
        let big = format!(
            r#"{{"t": "{}", "n": [{}]}}"#,
            "a".repeat(1000),
            (0..300)
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(",")
        );
        let strs = format!(
            r#"{{"k": [{}]}}"#,
            (0..100)
                .map(|i| format!("\"s{i}\""))
                .collect::<Vec<_>>()
                .join(",")
        );
        for (row, size) in [
            ("{}", 64),
            (r#"{"text": ""}"#, 286),
            (r#"{"text": "a"}"#, 287),
            (r#"{"text": "hello world"}"#, 297),
            ("{\"text\": \"caf\u{e9} au lait\"}", 322),
            ("{\"text\": \"\u{4e2d}\u{6587}\u{6587}\u{672c}\"}", 319),
            (r#"{"text": "emoji \ud83d\ude00 here"}"#, 361),
            ("{\"text\": \"emoji \u{1F600} here\"}", 361),
            (r#"{"text": "line\nbreak \u00e9 \"q\""}"#, 326),
            (r#"{"text": "\u00e9"}"#, 311),
            (r#"{"x": "\u0100"}"#, 310),
            (
                r#"{"text": "x", "meta": {"a": 1, "b": 1, "c": null, "d": true, "e": false, "f": 1.5, "g": 300, "h": -7, "i": 1073741824, "j": 18446744073709551615, "k": -9223372036854775808}}"#,
                1638,
            ),
            (
                r#"{"text": "abc", "images": ["a.jpg", "b.jpg"], "list": [1, 2, 3, 4, 5], "empty": [], "edict": {}}"#,
                1081,
            ),
            (
                r#"{"rows": [{"name": "n1", "value": "v"}, {"name": "n2", "value": "v"}, {"name": "n3", "value": "\u00e9"}]}"#,
                1261,
            ),
            (r#"{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6}"#, 825),
            (r#"{"text": "same", "other": "same", "same": "text"}"#, 503),
            (r#"{"a": {"a": {"a": "a"}}, "": ""}"#, 651),
            (r#"{"x": [1.0, -0.0, 1e5, 257, -6, -5, 256, 0]}"#, 566),
            (
                r#"{"x": [[], {}, [[]], [null, null], [true, false, true]]}"#,
                866,
            ),
            (big.as_str(), 12253),
            (strs.as_str(), 6344),
        ] {
            let v: Value = serde_json::from_str(row).unwrap();
            assert_eq!(py_deep_sizeof(&v), size, "{row:.80}");
        }
    }

    #[test]
    fn cpython_container_sizes() {
        // sys.getsizeof of a dict built by n insertions / a list built by n appends (CPython 3.11).
        for (n, size) in [
            (0, 64),
            (1, 184),
            (5, 184),
            (6, 272),
            (10, 272),
            (11, 464),
            (21, 464),
            (22, 832),
            (42, 832),
            (43, 1584),
            (85, 1584),
            (86, 3328), // 256 slots: 2-byte indices
            (170, 3328),
            (171, 6576),
            (10_922, 207_616),
            (10_923, 415_152),
            (21_845, 415_152),
            (21_846, 961_280), // 65,536 slots: 4-byte indices
            (50_000, 1_922_480),
        ] {
            assert_eq!(py_dict_size(n), size, "dict of {n}");
        }
        for (n, size) in [
            (0, 56),
            (1, 88),
            (4, 88),
            (5, 120),
            (8, 120),
            (9, 184),
            (16, 184),
            (17, 248),
            (76, 664),
            (77, 792),
            (92, 792),
            (93, 920),
            (1_000, 8_856),
            (100_000, 800_984),
        ] {
            assert_eq!(py_list_size(n), size, "list of {n}");
        }
        for (s, size) in [
            ("", 49),
            ("ab", 51),
            ("\u{e9}a", 75),
            ("\u{4e2d}a", 78),
            ("\u{1F600}a", 84),
        ] {
            assert_eq!(py_str_size(s), size, "{s}");
        }
        // 0 and 2^30 - 1: one digit; 2^30: two; 2^60 and 2^64 - 1: three.
        for (abs, size) in [
            (0, 28),
            ((1 << 30) - 1, 28),
            (1 << 30, 32),
            (1 << 60, 36),
            (u64::MAX, 36),
        ] {
            assert_eq!(py_int_size(abs), size, "{abs}");
        }
    }

    fn text_rows(lens: &[usize]) -> Vec<SampleStats> {
        lens.iter()
            .map(|l| {
                SampleStats::from_json(&json!({ "text": "a".repeat(*l) }), &SampleKeys::default())
            })
            .collect()
    }

    #[test]
    fn p90_index_and_sample_stdev_skew() {
        // DJ: analyze_dataset_characteristics on {"text": "a" * len} rows; sizes 286 + len bytes.
        // P90 = sorted[int(n * 0.9)]: n=2 -> 1 (the max), n=10 -> 9 (the max), n=11 -> 9 (not the
        // max 1386), n=20 -> 18.
        let lens = |n: usize, step: usize| (1..=n).map(|i| i * step).collect::<Vec<_>>();
        let cases = [
            ("two", vec![10, 1000], Some(1), 1286, 0.8850009018643262),
            ("ten", lens(10, 100), Some(9), 1286, 0.36215913326525023),
            ("eleven", lens(11, 100), Some(9), 1286, 0.3743368837872912),
            ("twenty", lens(20, 50), Some(18), 1236, 0.36473981400120936),
        ];
        for (name, lens, idx, p90_bytes, skew) in cases {
            let samples = text_rows(&lens);
            let d = analyze(lens.len() as u64, &samples);
            assert_eq!(d.memory_p90_index, idx, "{name}");
            assert_eq!(d.memory_per_sample_mb, p90_bytes as f64 / MB, "{name}");
            assert!(
                close(d.data_skew_factor, skew),
                "{name}: {}",
                d.data_skew_factor
            );
        }
        // Hand check of "two": sizes 296 and 1286 bytes; mean 791, sample variance
        // (495^2 + 495^2) / 1, stdev 700.0357, / 791 = 0.88500.
        let d = analyze(2, &text_rows(&[10, 1000]));
        assert!(close(d.mean_memory_per_sample_mb.unwrap(), 791.0 / MB));
        assert!(close(
            d.memory_stdev_mb.unwrap(),
            (2.0f64 * 495.0 * 495.0).sqrt() / MB
        ));
        // Skew is capped at 1: sizes 296, 296, 296, 100286 (DJ 1.0, P90 = the outlier).
        let d = analyze(4, &text_rows(&[10, 10, 10, 100_000]));
        assert_eq!(d.data_skew_factor, 1.0);
        assert_eq!(d.memory_per_sample_mb, 0.09564018249511719);
        assert_eq!(d.avg_text_length, 25007.5);
    }

    #[test]
    fn fewer_than_two_samples() {
        // DJ: one row -> its size and skew 0.5; none -> 0.002 MB and skew 0.5.
        let d = analyze(1, &text_rows(&[500]));
        assert_eq!(
            (
                d.memory_per_sample_mb,
                d.data_skew_factor,
                d.memory_p90_index
            ),
            (0.0007495880126953125, 0.5, None)
        );
        let d = analyze(0, &[]);
        assert_eq!(
            (
                d.memory_per_sample_mb,
                d.data_skew_factor,
                d.avg_text_length
            ),
            (0.002, 0.5, 0.0)
        );
        // All sizes 0: the mean is 0, so skew 0.
        let zero = SampleStats::default();
        assert_eq!(analyze(2, &[zero, zero]).data_skew_factor, 0.0);
    }

    // -- partition size -----------------------------------------------------------------------------

    #[test]
    fn text_target_size() {
        // DJ: calculate_text_partition_size_simple(avg_len, complexity, target_mb).
        // 500 chars -> 1000 bytes = 0.00095367 MB; 256 / that = 268435 -> capped at 50,000.
        // 10,000 chars -> 0.019073 MB: 13421; with complexity 1.5: 8947.
        // 2,000,000 chars -> 3.8147 MB: 67 -> raised to the 100 floor. Target 0 or negative -> 100.
        // Length 0 -> the default 10,000.
        for (avg, cx, target, size) in [
            (500.0, 1.0, 256, 50_000),
            (10_000.0, 1.0, 256, 13_421),
            (10_000.0, 1.5, 256, 8_947),
            (2_000_000.0, 1.0, 256, 100),
            (0.0, 1.0, 256, 10_000),
            (10_000.0, 1.0, 0, 100),
            (10_000.0, 1.0, -64, 100),
            (1_000.0, 2.1, 64, 15_978),
            (131_072.0, 1.0, 32, 128),
        ] {
            let d = dc(Modality::Text, avg, 0.0, 1_000_000_000, 0.0);
            let s = partition_size(&d, cx, target, 1000.0, 1);
            assert_eq!(s.steps[0].after, size, "{avg}/{cx}/{target}");
        }
        let d = dc(Modality::Text, 2_000_000.0, 0.0, 1_000_000_000, 0.0);
        let s = partition_size(&d, 1.0, 256, 1000.0, 1);
        assert_eq!((s.raw_target_size, s.steps[0].applied), (Some(67), true));
        assert_eq!(s.text_mb_per_sample, Some(4_000_000.0 / MB));
        let d = dc(Modality::Text, 0.0, 0.0, 1_000_000_000, 0.0);
        assert_eq!(
            partition_size(&d, 1.0, 256, 1000.0, 1).raw_target_size,
            None
        );
    }

    /// One call of DJ's `calculate_resource_aware_partition_size`.
    #[derive(Clone, Copy)]
    struct Case {
        m: Modality,
        avg_text: f64,
        mem_mb: f64,
        total: u64,
        skew: f64,
        cores: usize,
        gb: f64,
        cx: f64,
        /// `partition.target_size_mb` (None: the memory tier).
        target: Option<i64>,
    }

    impl Case {
        fn size(self) -> usize {
            let d = dc(self.m, self.avg_text, self.mem_mb, self.total, self.skew);
            let target = target_partition_mb(self.gb, self.target).target_mb;
            let s = partition_size(&d, self.cx, target, self.gb, self.cores);
            assert_eq!(s.steps.last().unwrap().after, s.size);
            s.size
        }
    }

    #[test]
    fn resource_aware_size_matches_data_juicer() {
        use Modality::*;
        // DJ: calculate_resource_aware_partition_size(DataCharacteristics, LocalResources(cores,
        // GB), None, complexity) for each case.
        let text = Case {
            m: Text,
            avg_text: 500.0,
            mem_mb: 0.001,
            total: 5_000,
            skew: 0.3,
            cores: 4,
            gb: 32.0,
            cx: 1.0,
            target: None,
        };
        // 32 GB: 64 MB; int(64 / 0.00095) -> 50,000; 5,000 <= 10,000 rows need 1 partition:
        // 5000 / 50000 < 1 -> int(5000 / 1).
        assert_eq!(text.size(), 5_000);
        assert_eq!(
            Case {
                total: 10_000,
                ..text
            }
            .size(),
            10_000
        );
        // Above 10,000: 6 partitions for 4 cores: int(10001 / 6) = 1666.
        assert_eq!(
            Case {
                total: 10_001,
                ..text
            }
            .size(),
            1_666
        );
        // Skew 0.71 > 0.7: int(1666 x 0.8) = 1332; exactly 0.7 is not above.
        assert_eq!(
            Case {
                total: 10_001,
                skew: 0.71,
                ..text
            }
            .size(),
            1_332
        );
        assert_eq!(
            Case {
                total: 10_001,
                skew: 0.7,
                ..text
            }
            .size(),
            1_666
        );
        // No rows (length 0: default 10,000): int(0 / 1) = 0 -> at least 10.
        let empty = Case {
            avg_text: 0.0,
            mem_mb: 0.002,
            total: 0,
            skew: 0.5,
            ..text
        };
        assert_eq!(empty.size(), 10);
        // Memory guard: 1 GB -> 32 MB, 204.8 MB per partition; 33,554 x 0.01 x 2 = 671 > 204.8:
        // int(204.8 / 0.02) = 10240; with 100 MB rows int(204.8 / 200) = 1 -> 10.
        let guard = Case {
            mem_mb: 0.01,
            total: 1_000_000,
            cores: 2,
            gb: 1.0,
            ..text
        };
        assert_eq!(guard.size(), 10_240);
        assert_eq!(
            Case {
                mem_mb: 100.0,
                ..guard
            }
            .size(),
            10
        );
        let big = Case {
            total: 100_000_000,
            skew: 0.0,
            cores: 8,
            gb: 512.0,
            ..text
        };
        assert_eq!(big.size(), 50_000);
        // 1 core: int(1.5) = 1 partition; 3 cores: int(4.5) = 4 -> int(20000 / 4) = 5000.
        let cores = Case {
            total: 20_000,
            skew: 0.0,
            ..text
        };
        assert_eq!(Case { cores: 1, ..cores }.size(), 20_000);
        assert_eq!(Case { cores: 3, ..cores }.size(), 5_000);
        // Media (32 GB: 64 MB): int(64 / 0.5) = 128; 50 MB -> 1 -> floor 10; tiny -> capped at
        // 10,000 then 5,000 rows; 0 MB -> the image default 2,000.
        let image = Case {
            m: Image,
            avg_text: 0.0,
            mem_mb: 0.5,
            skew: 0.2,
            ..text
        };
        assert_eq!(image.size(), 128);
        assert_eq!(
            Case {
                mem_mb: 50.0,
                ..image
            }
            .size(),
            10
        );
        assert_eq!(
            Case {
                mem_mb: 0.0001,
                ..image
            }
            .size(),
            5_000
        );
        assert_eq!(
            Case {
                mem_mb: 0.0,
                ..image
            }
            .size(),
            2_000
        );
        // 300 GB: 256 MB; int(256 / (2 x 1.3)) = 98, skew 0.9 -> int(78.4) = 78.
        let video = Case {
            m: Video,
            avg_text: 0.0,
            mem_mb: 2.0,
            total: 1_000_000,
            skew: 0.9,
            cores: 16,
            gb: 300.0,
            cx: 1.3,
            target: None,
        };
        assert_eq!(video.size(), 78);
        // Configured 128 MB: int(128 / (0.3 x 1.7)) = 250.
        let audio = Case {
            m: Audio,
            mem_mb: 0.3,
            total: 3_000,
            skew: 0.1,
            cores: 2,
            gb: 8.0,
            cx: 1.7,
            target: Some(128),
            ..video
        };
        assert_eq!(audio.size(), 250);
        // 20 GB: 64 MB; int(64 / (0.05 x 1.2)) = 1066, skew 0.8 -> 852.
        let multi = Case {
            m: Multimodal,
            avg_text: 50.0,
            mem_mb: 0.05,
            total: 50_000,
            skew: 0.8,
            cores: 4,
            gb: 20.0,
            cx: 1.2,
            target: None,
        };
        assert_eq!(multi.size(), 852);
        // int(64 / 100) = 0 -> floor 10; 10 x 100 x 2 = 2000 MB fits 6553.6; 100 / 10 >= 1;
        // skew: int(10 x 0.8) = 8 -> final bounds 10.
        let floor = Case {
            mem_mb: 100.0,
            total: 100,
            cores: 4,
            gb: 32.0,
            cx: 1.0,
            ..video
        };
        assert_eq!(floor.size(), 10);
    }

    #[test]
    fn size_steps_record_before_and_after() {
        // text_skew: 50,000 -> guard fits -> parallelism 1666 -> skew 1332 -> bounds 1332.
        let d = dc(Modality::Text, 500.0, 0.001, 10_001, 0.71);
        let s = partition_size(&d, 1.0, 64, 32.0, 4);
        let got: Vec<_> = s
            .steps
            .iter()
            .map(|st| (st.step, st.before, st.after, st.applied))
            .collect();
        assert_eq!(
            got,
            [
                ("modality_target", None, 50_000, true),
                ("memory_guard", Some(50_000), 50_000, false),
                ("parallelism", Some(50_000), 1_666, true),
                ("data_skew", Some(1_666), 1_332, true),
                ("final_bounds", Some(1_332), 1_332, false),
            ]
        );
        assert_eq!(s.min_partitions, 6);
        assert_eq!(s.max_partition_memory_mb, 32.0 * 1024.0 * 0.8 / 4.0);
        assert_eq!(s.raw_target_size, Some(67_108)); // int(64 / (1000 / 2^20))
        // Guard (1 GB: 32 MB): 33,554 x 0.01 x 2 = 671 MB > 204.8: int(204.8 / (0.01 x 2)) = 10,240.
        let d = dc(Modality::Text, 500.0, 0.01, 1_000_000, 0.3);
        let s = partition_size(&d, 1.0, 32, 1.0, 2);
        assert_eq!(
            (s.steps[1].before, s.steps[1].after, s.steps[1].applied),
            (Some(33_554), 10_240, true)
        );
    }

    #[test]
    fn max_size_mb_clamps() {
        // DJ: calculate_optimal_max_size_mb. (target, complexity, GB, MB)
        for (name, target, cx, gb, mb) in [
            ("tier 32 GB", 64, 1.0, 32.0, 64),
            ("25% of 0.5 GB = 128", 256, 1.0, 0.5, 128),
            ("25% of 0.1 GB = 25 -> 32", 256, 1.0, 0.1, 32),
            ("1024 -> 512", 1024, 1.0, 100.0, 512),
            ("complexity 2", 256, 2.0, 32.0, 128),
            ("negative -> 32", -10, 1.0, 32.0, 32),
            ("zero -> 32", 0, 1.0, 32.0, 32),
            ("int(128 / 1.7) = 75", 128, 1.7, 3.0, 75),
            ("tier 8 GB", 32, 1.0, 8.0, 32),
            ("int(256 / 1.3) = 196", 256, 1.3, 300.0, 196),
        ] {
            assert_eq!(max_size_mb(target, cx, gb).max_size_mb, mb, "{name}");
        }
        let m = max_size_mb(256, 1.0, 0.1);
        assert_eq!(
            (m.complexity_adjusted_mb, m.max_by_memory_mb, m.unclamped_mb),
            (256, 25, 25)
        );
    }

    #[test]
    fn worker_rules() {
        use WorkerRule::*;
        // DJ: calculate_optimal_worker_count(cores, partition_size, total). 8 cores: base 6.
        for (cores, size, total, workers, rule) in [
            (8, 100, 200, 1, FewPartitions),       // 2 < 6: int(1.6)
            (8, 100, 590, 4, FewPartitions),       // 5.9 < 6: int(4.72)
            (8, 100, 600, 6, Balanced),            // 6
            (8, 100, 1_200, 6, Balanced),          // 12 is not > 12
            (8, 100, 1_250, 7, ManyPartitions),    // 12.5 > 12: min(8, int(7.2))
            (1, 100, 50, 1, FewPartitions),        // base max(1, int(0.75)) = 1; int(0.4) -> 1
            (2, 100, 300, 1, ManyPartitions),      // base 1; 3 > 2: int(1.2)
            (8, 100, 0, 6, NoWorkloadInfo),        // no rows
            (0, 100, 100, 1, Balanced),            // at least 1
            (16, 10, 100_000, 14, ManyPartitions), // base 12: int(14.4)
            (3, 10, 45, 2, ManyPartitions),        // base int(2.25) = 2; 4.5 > 4: int(2.4)
            (4, 1_000, 1_001, 1, FewPartitions),   // base 3; 1.001: int(0.8)
        ] {
            let w = worker_count(cores, size, total);
            assert_eq!(
                (w.worker_count, w.rule),
                (workers, rule),
                "{cores}/{size}/{total}"
            );
        }
        assert_eq!(worker_count(8, 100, 200).base_workers, 6);
    }

    // -- end to end ---------------------------------------------------------------------------------

    /// Rows DJ's end-to-end run read through `json.loads`.
    fn row(i: usize, kind: &str) -> String {
        if kind == "skew" && i == 5 {
            return format!(r#"{{"text": "{}"}}"#, "z".repeat(400_000));
        }
        let mut t = "w".repeat((i * 37) % 1000 + 1);
        if i.is_multiple_of(7) {
            t.push('\u{e9}');
        }
        if i.is_multiple_of(11) {
            t.push('\u{4e2d}');
        }
        let mut s = format!(r#"{{"text": "{t}", "meta": {{"id": {i}, "score": {i}.5}}"#);
        if kind == "mixed" && i.is_multiple_of(3) {
            s += &format!(r#", "images": ["img{i}.jpg"]"#);
        }
        if kind == "video" && !i.is_multiple_of(4) {
            s += &format!(r#", "videos": ["v{i}.mp4", "w{i}.mp4"]"#);
        }
        if kind == "video" && i.is_multiple_of(4) {
            s += r#", "text": """#;
        }
        s + "}"
    }

    fn sample(kind: &str, total: u64) -> Vec<SampleStats> {
        (0..sample_size(total))
            .map(|i| stats(&row(i, kind)))
            .collect()
    }

    #[test]
    fn row_sizes_match_cpython() {
        // DJ: _deep_getsizeof(json.loads(row(i))) for i in 0..12.
        #[rustfmt::skip]
        let cases = [
            ("text",  [711, 718, 755, 792, 829, 866, 903, 965, 977, 1014, 1051, 1523]),
            ("mixed", [911, 718, 755, 992, 829, 866, 1103, 965, 977, 1214, 1051, 1523]),
            ("video", [680, 971, 1008, 1045, 680, 1119, 1156, 1218, 680, 1267, 1306, 1778]),
            ("skew",  [711, 718, 755, 792, 829, 400_286, 903, 965, 977, 1014, 1051, 1523]),
        ];
        for (kind, sizes) in cases {
            let got: Vec<u64> = (0..12).map(|i| stats(&row(i, kind)).memory_bytes).collect();
            assert_eq!(got, sizes, "{kind}");
        }
    }

    /// What DJ's `get_partition_recommendations` returned.
    struct Expected {
        size: usize,
        max_mb: i64,
        workers: usize,
        modality: Modality,
        avg_text: f64,
        avg_images: f64,
        avg_videos: f64,
        p90_mb: f64,
        skew: f64,
    }

    fn check_end_to_end(
        (kind, total): (&str, u64),
        (cores, gb, target): (usize, u64, Option<i64>),
        ops: &[&str],
        e: Expected,
    ) {
        let r = Resources {
            available_memory_bytes: gb * GIB,
            total_memory_bytes: gb * GIB,
            cpu_cores: cores,
        };
        let rec = recommend(total, &sample(kind, total), ops, &r, target);
        let what = format!("{kind}/{total}");
        assert_eq!(rec.partition_size, Some(e.size), "{what}");
        assert_eq!(rec.max_size_mb, Some(e.max_mb), "{what}");
        assert_eq!(rec.worker_count, Some(e.workers), "{what}");
        let d = &rec.analysis.as_ref().unwrap().data;
        assert_eq!(d.primary_modality, e.modality, "{what}");
        assert!(close(d.avg_text_length, e.avg_text), "{what}");
        assert!(close(d.avg_images_per_sample, e.avg_images), "{what}");
        assert!(close(d.avg_video_per_sample, e.avg_videos), "{what}");
        assert_eq!(d.memory_per_sample_mb, e.p90_mb, "{what}");
        assert!(close(d.data_skew_factor, e.skew), "{what}");
        assert_eq!(d.total_samples, total);
        assert_eq!(rec.estimated_partitions, Some(total as f64 / e.size as f64));
    }

    #[test]
    fn recommend_matches_data_juicer_end_to_end() {
        // DJ: get_partition_recommendations(dataset, ops as dicts) with these local resources
        // (cores, GB available, partition.target_size_mb).
        let demo = [
            "whitespace_normalization_mapper",
            "clean_email_mapper",
            "text_length_filter",
            "document_deduplicator",
        ];
        // 8 GB: 32 MB tier; complexity 1.8; 800 rows <= 10,000: one partition of all 800 rows.
        let e = Expected {
            size: 800,
            max_mb: 32,
            workers: 1,
            modality: Modality::Text,
            avg_text: 500.235,
            avg_images: 0.0,
            avg_videos: 0.0,
            p90_mb: 0.0015535354614257812,
            skew: 0.2897976111484416,
        };
        check_end_to_end(("text", 800), (4, 8, None), &demo, e);
        // A third of the rows carry an image: still text-majority; complexity 2.1.
        let mut with_sim = demo.to_vec();
        with_sim.push("image_text_similarity_filter");
        let e = Expected {
            size: 50_000,
            max_mb: 121,
            workers: 14,
            modality: Modality::Text,
            avg_text: 500.734,
            avg_images: 0.3335,
            avg_videos: 0.0,
            p90_mb: 0.001651763916015625,
            skew: 0.28753789736516877,
        };
        check_end_to_end(("mixed", 2_000_000), (16, 100, Some(256)), &with_sim, e);
        // Text + 2 videos in 3 of 4 rows: multimodal, sized by memory per sample.
        let e = Expected {
            size: 500,
            max_mb: 106,
            workers: 1,
            modality: Modality::Multimodal,
            avg_text: 378.426,
            avg_images: 0.0,
            avg_videos: 1.5,
            p90_mb: 0.00177001953125,
            skew: 0.3633660004702545,
        };
        check_end_to_end(
            ("video", 500),
            (2, 3, Some(128)),
            &["video_motion_score_filter"],
            e,
        );
        // One 400,000-character row: skew 1.0 -> int(300 x 0.8) = 240.
        let e = Expected {
            size: 240,
            max_mb: 64,
            workers: 1,
            modality: Modality::Text,
            avg_text: 1842.1166666666666,
            avg_images: 0.0,
            avg_videos: 0.0,
            p90_mb: 0.0015649795532226562,
            skew: 1.0,
        };
        check_end_to_end(("skew", 300), (4, 40, None), &[], e);
        let e = Expected {
            size: 50_000,
            max_mb: 142,
            workers: 1,
            modality: Modality::Text,
            avg_text: 500.734,
            avg_images: 0.0,
            avg_videos: 0.0,
            p90_mb: 0.001552581787109375,
            skew: 0.29139083120053766,
        };
        check_end_to_end(("text", 5_000_000), (2, 2, Some(256)), &demo, e);
    }

    #[test]
    fn sampling_failure_uses_data_juicer_defaults() {
        // DJ: take() raising -> text, 500 chars, 0.002 MB, skew 0.5; 100,000 rows, 4 cores, 8 GB:
        // int(32 / 0.00095367) = 33554 -> 6 partitions: int(100000 / 6) = 16666; max 32 MB;
        // 100000 / 16666 = 6.0002 > 2 x 3 -> min(4, int(3.6)) = 3 workers.
        let none: [&str; 0] = [];
        let rec = recommend_for(
            DataCharacteristics::sampling_failed(100_000),
            &none,
            &res(4, 8.0),
            None,
        );
        assert_eq!(
            (rec.partition_size, rec.max_size_mb, rec.worker_count),
            (Some(16_666), Some(32), Some(3))
        );
        assert!(!rec.is_fallback());
        assert_eq!(
            rec.analysis.as_ref().unwrap().data.sampling,
            Sampling::Failed
        );
    }

    #[test]
    fn recommendation_records_its_inputs() {
        let samples = text_rows(&[10, 10, 10, 100_000]);
        let ops = ["text_embedding_similarity_filter", "clean_links_mapper"];
        let rec = recommend(20_000, &samples, &ops, &res(4, 8.0), Some(256));
        let a = rec.analysis.as_ref().unwrap();
        assert_eq!(a.complexity.score, 1.5);
        assert_eq!(a.target.source, TargetSource::Recipe);
        assert_eq!(a.target.target_mb, 256);
        assert_eq!(a.resources.cpu_cores, 4);
        assert_eq!(a.data.data_skew_factor, 1.0);
        // avg 25007.5 chars -> 0.047699 MB; int(256 / (0.047699 x 1.5)) = 3578; memory guard
        // fits (3578 x 0.0956 x 2 = 684 < 1638.4); 20000 / 3578 = 5.6 < 6 -> 3333; skew -> 2666.
        let after: Vec<usize> = a.size.steps.iter().map(|s| s.after).collect();
        assert_eq!(after, [3_578, 3_578, 3_333, 2_666, 2_666]);
        assert_eq!(rec.partition_size, Some(2_666));
        // max: min(int(256 / 1.5) = 170, int(8 x 1024 x 0.25) = 2048) = 170.
        assert_eq!(rec.max_size_mb, Some(170));
        // DJ: 2666, 170 MB, 3 workers (20000 / 2666 = 7.5 > 2 x 3: min(4, int(3.6))).
        assert_eq!((a.workers.base_workers, a.workers.worker_count), (3, 3));
        assert!(
            rec.reasoning
                .iter()
                .any(|r| r.starts_with("data_skew: skew 1.000 > 0.7"))
        );
        assert!(
            rec.reasoning
                .iter()
                .any(|r| r.contains("complexity factor 1.50"))
        );

        let v = serde_json::to_value(&rec).unwrap();
        assert_eq!(v["partition_size"], 2_666);
        assert_eq!(v["fallback_reason"], Value::Null);
        assert_eq!(v["analysis"]["data"]["primary_modality"], "text");
        assert_eq!(v["analysis"]["target"]["source"], "recipe");
        assert_eq!(v["analysis"]["size"]["steps"][3]["step"], "data_skew");
        assert_eq!(v["analysis"]["complexity"]["ops"][0]["complexity"], "high");
        assert_eq!(v["analysis"]["workers"]["rule"], "many_partitions");
        assert_eq!(v["partitions"], Value::Null);
        // 20,000 / 2666 = 7.5 rounds to 8 partitions, within max(32, 6) and 2 x 4 concurrent.
        let mut rec = rec;
        assert_eq!(rec.count_partitions(20_000, &cfg(4, None, None)), 8);
    }

    #[test]
    fn fallback_recommendation() {
        let rec = Recommendation::fallback(Some(5_000), "could not read the input");
        assert!(rec.is_fallback());
        assert_eq!(
            (rec.partition_size, rec.max_size_mb, rec.worker_count),
            (Some(5_000), None, None)
        );
        assert!(rec.reasoning[0].contains("could not read the input"));
        assert!(rec.reasoning[0].contains("5000 samples per partition"));
        let v = serde_json::to_value(&rec).unwrap();
        assert_eq!(v["analysis"], Value::Null);
        assert_eq!(v["fallback_reason"], "could not read the input");
        let mut rec = rec;
        let n = rec.count_partitions(100_000, &cfg(4, Some(16), None));
        assert_eq!(n, 20);
        assert_eq!(
            rec.partitions.as_ref().unwrap().size_source,
            "partition.size fallback"
        );
        assert!(
            rec.reasoning
                .last()
                .unwrap()
                .starts_with("partitions: cluster bound")
        );
        let v = serde_json::to_value(&rec).unwrap();
        assert_eq!(v["partitions"]["count"], 20);
        let none = Recommendation::fallback(None, "x");
        assert_eq!(none.partition_size, None);
        assert_eq!(Recommendation::fallback(Some(0), "x").partition_size, None);
    }

    // -- partition count and concurrency -------------------------------------------------------------

    fn rec_with(size: usize, workers: usize) -> Recommendation {
        Recommendation {
            partition_size: Some(size),
            max_size_mb: Some(64),
            worker_count: Some(workers),
            estimated_partitions: None,
            fallback_reason: None,
            reasoning: vec![],
            analysis: None,
            partitions: None,
        }
    }

    fn cfg(np: usize, mcp: Option<usize>, ppn: Option<usize>) -> CountConfig {
        CountConfig {
            np,
            num_of_partitions: 4,
            max_concurrent_partitions: mcp,
            partitions_per_node: ppn,
        }
    }

    #[test]
    fn partition_count_matches_data_juicer() {
        // DJ: _configure_auto_partitioning + _apply_cluster_partition_bounds on one CPU node with
        // `np` CPUs, the optimizer returning (size, workers). (name, rows, size, workers, np,
        // max_concurrent, per_node, count, data_driven, cluster_target)
        #[rustfmt::skip]
        let cases = [
            // nearest 60, cap max(32, 14) = 32, concurrency 4 -> max(8, 2) = 8.
            ("a",              100_000,   1_666, 7,  4, None,      None,     8,  32, 8),
            ("round_up",       25,        10,    3,  8, None,      None,     3,  3,  8),
            ("round_down",     24,        10,    3,  8, None,      None,     2,  2,  8),
            ("half_rounds_up", 15,        10,    3,  8, None,      None,     2,  2,  8),
            ("zero_rows",      0,         10,    1,  4, None,      None,     1,  1,  8),
            ("few_rows",       3,         10,    1,  4, None,      None,     1,  1,  8),
            ("np2",            100_000,   1_000, 1,  2, None,      None,     4,  32, 4),
            ("np1",            100_000,   1_000, 1,  1, None,      None,     2,  32, 2),
            ("explicit16",     100_000,   5_000, 6,  4, Some(16),  None,     20, 20, 32),
            ("explicit1",      100_000,   5_000, 6,  4, Some(1),   None,     2,  20, 2),
            ("ppn50",          100_000,   1_000, 6,  4, None,      Some(50), 32, 32, 50),
            ("ppn50_mcp32",    1_000_000, 1_000, 6,  4, Some(32),  Some(50), 32, 32, 64),
            ("cap32",          1_000_000, 1_000, 6,  4, Some(100), None,     32, 32, 200),
            ("cap_workers",    1_000_000, 1_000, 20, 4, Some(100), None,     40, 40, 200),
        ];
        for (name, rows, size, workers, np, mcp, ppn, count, data_driven, target) in cases {
            let c = partition_count(rows, &rec_with(size, workers), &cfg(np, mcp, ppn));
            assert_eq!(
                (c.count, c.data_driven, c.cluster_target),
                (count, data_driven, target),
                "{name}: {:?}",
                c.reasoning
            );
            assert_eq!(c.size_source, "optimizer");
        }
        let c = partition_count(100_000, &rec_with(1_666, 7), &cfg(4, None, None));
        assert_eq!(
            (
                c.from_size,
                c.submission_cap,
                c.concurrency,
                c.partitions_per_node
            ),
            (Some(60), Some(32), 4, 2)
        );
    }

    #[test]
    fn partition_count_after_a_fallback() {
        // DJ: the optimizer raising; partition.size used if set (workers = np), else the
        // configured num_of_partitions; then the same cluster bound.
        let with_size = Recommendation::fallback(Some(5_000), "boom");
        let c = partition_count(100_000, &with_size, &cfg(4, Some(16), None));
        assert_eq!(
            (c.count, c.size_source, c.worker_count),
            (20, "partition.size fallback", 4)
        );
        // 1,000,000 / 5000 = 200, cap max(32, 2 x np 20) = 40.
        let c = partition_count(1_000_000, &with_size, &cfg(20, Some(100), None));
        assert_eq!((c.count, c.submission_cap), (40, Some(40)));
        let no_size = Recommendation::fallback(None, "boom");
        let c = partition_count(100_000, &no_size, &cfg(4, None, None));
        assert_eq!(
            (c.count, c.size_source, c.submission_cap),
            (4, "num_of_partitions", None)
        );
        let two = CountConfig {
            num_of_partitions: 2,
            ..cfg(4, None, None)
        };
        assert_eq!(partition_count(100_000, &no_size, &two).count, 2);
        // Never more partitions than rows (DJ: 3 from 4).
        let c = partition_count(3, &no_size, &cfg(4, None, None));
        assert_eq!((c.count, c.data_driven), (3, 4));
    }

    #[test]
    fn concurrency_rules() {
        // DJ: _resolve_max_concurrent_partitions: auto on 8 CPUs -> 4, on 2 -> 2; explicit 0 -> 1,
        // 10 -> 10. Here `np` stands for the CPUs.
        assert_eq!(driver_concurrency(None, 8), 4);
        assert_eq!(driver_concurrency(None, 2), 2);
        assert_eq!(driver_concurrency(None, 0), 1);
        assert_eq!(driver_concurrency(Some(0), 4), 1);
        assert_eq!(driver_concurrency(Some(10), 4), 10);
        // Bounded by the partitions.
        assert_eq!(max_concurrent_partitions(None, 10, 8), 4);
        assert_eq!(max_concurrent_partitions(None, 3, 8), 3);
        assert_eq!(max_concurrent_partitions(None, 10, 2), 2);
        assert_eq!(max_concurrent_partitions(Some(10), 3, 4), 3);
        assert_eq!(max_concurrent_partitions(Some(10), 20, 4), 10);
        assert_eq!(max_concurrent_partitions(None, 1, 8), 1);
        assert_eq!(max_concurrent_partitions(None, 0, 8), 1);
    }

    // -- resources and constants -------------------------------------------------------------------

    #[test]
    fn detect_reads_this_machine() {
        let r = Resources::detect().expect("sysinfo");
        assert!(r.cpu_cores >= 1);
        assert!(r.total_memory_bytes > 0);
        assert!(r.available_memory_bytes <= r.total_memory_bytes);
    }

    #[test]
    fn modality_table() {
        let t: Vec<_> = Modality::ALL
            .iter()
            .map(|m| {
                (
                    m.as_str(),
                    m.default_partition_size(),
                    m.max_partition_size(),
                    m.memory_multiplier(),
                )
            })
            .collect();
        assert_eq!(
            t,
            [
                ("text", 10_000, 50_000, 1.0),
                ("image", 2_000, 10_000, 5.0),
                ("audio", 1_000, 4_000, 8.0),
                ("video", 400, 2_000, 20.0),
                ("multimodal", 1_600, 6_000, 10.0),
            ]
        );
    }
}
