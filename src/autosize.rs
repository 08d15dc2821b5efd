//! Auto partition sizing, after Data-Juicer's `partition_size_optimizer`: from a sample of rows, the
//! op names and the machine's memory and cores it recommends rows per partition, a maximum partition
//! size, a worker count, the partition count and the driver concurrency, keeping every decision with its inputs.

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
        _ if slots < 1 << 32 => 4 * slots,
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
    let sizes: Vec<f64> = samples
        .iter()
        .map(|s| s.memory_bytes as f64 / MB)
        .collect();
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
        (sizes.first().copied().unwrap_or(0.002), None, None, None, 0.5)
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
/// else medium if it contains filter, deduplicator or mapper; else low.
pub fn op_complexity(name: &str) -> OpComplexity {
    let name = name.to_lowercase();
    let has = |kws: &[&str]| kws.iter().any(|k| name.contains(k));
    if has(&[
        "embedding",
        "similarity",
        "model",
        "neural",
        "vision",
        "audio",
    ]) {
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
        }
    }

    pub fn is_fallback(&self) -> bool {
        self.fallback_reason.is_some()
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
    let size = partition_size(&data, complexity.score, target.target_mb, available_gb, resources.cpu_cores);
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
        format!("{:.0} chars x 2 bytes = {basis_mb:.6} MB", data.avg_text_length)
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
    let max_partition_memory_mb = (available_memory_gb * 1024.0 * 0.8) / ASSUMED_CONCURRENT_PARTITIONS;
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
            "{total} / {before} = {partitions:.2} partitions < {min_partitions}: int({total} / {min_partitions}) = {par}, at least 10 = {size}"
        )
    } else {
        format!("{total} / {before} = {partitions:.2} partitions >= {min_partitions}")
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
            let cap = 32.max(2 * worker_count);
            reasoning.push(format!(
                "{total_rows} rows / {size} ({size_source}) rounds to {n} partitions; submission cap max(32, 2 x {worker_count} workers) = {cap}"
            ));
            (Some(n), Some(cap), n.min(cap))
        }
        None => {
            let n = cfg.num_of_partitions.max(1);
            reasoning.push(format!("no partition size: keeping num_of_partitions = {n}"));
            (None, None, n)
        }
    };
    let concurrency = driver_concurrency(cfg.max_concurrent_partitions, cfg.np);
    let per_node = cfg.partitions_per_node.filter(|n| *n > 0).unwrap_or(2);
    let capacity = per_node.max(1);
    let cluster_target = (2 * concurrency).max(capacity);
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
