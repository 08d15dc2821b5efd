//! Rows as the optimizer samples them: each row's modality, text length and Python deep size
//! (`sys.getsizeof` of the parsed row, nested), and the sample size for a dataset.

use std::borrow::Cow;
use std::collections::HashSet;

use serde::Serialize;
use serde_json::Value;

/// Data modality of a sample or of the whole sample (the most frequent one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Modality {
    Text,
    Image,
    Audio,
    Video,
    Multimodal,
}

impl Modality {
    /// In Data-Juicer's enum order, which also breaks ties of the most frequent modality.
    pub(crate) const ALL: [Modality; 5] = [
        Modality::Text,
        Modality::Image,
        Modality::Audio,
        Modality::Video,
        Modality::Multimodal,
    ];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Modality::Text => "text",
            Modality::Image => "image",
            Modality::Audio => "audio",
            Modality::Video => "video",
            Modality::Multimodal => "multimodal",
        }
    }

    /// Rows per partition when the per-sample size is unknown (0).
    pub(crate) fn default_partition_size(self) -> usize {
        match self {
            Modality::Text => 10_000,
            Modality::Image => 2_000,
            Modality::Audio => 1_000,
            Modality::Video => 400,
            Modality::Multimodal => 1_600,
        }
    }

    /// Upper bound of rows per partition.
    pub(crate) fn max_partition_size(self) -> usize {
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
    pub(crate) fn memory_multiplier(self) -> f64 {
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
pub(crate) struct SampleStats {
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
    /// Bytes of the media files the row references ([`media_file_bytes`]).
    pub media_bytes: u64,
}

/// Field names the sample statistics read (Data-Juicer's `text_keys[0]`, `image_key`, ...).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct SampleKeys {
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
    pub(crate) fn with_text_key(text_key: impl Into<String>) -> Self {
        SampleKeys {
            text_key: Some(text_key.into()),
            ..SampleKeys::default()
        }
    }
}

impl SampleStats {
    /// Modality of this row: every present-and-truthy field counts; more than one is multimodal,
    /// none is text.
    pub(crate) fn modality(&self) -> Modality {
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
    pub(crate) fn from_json(row: &Value, keys: &SampleKeys) -> Self {
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
            media_bytes: 0,
        }
    }
}

/// Total size of the local files the row's image, audio and video lists reference, resolved
/// against `dir` as Data-Juicer's loader does; URLs and unreadable files count 0. Data-Juicer's
/// optimizer sizes only the row's Python object (a few hundred bytes for a 50 MB clip), so its
/// partitions of media rows always hit the modality's maximum; the tuning document's per-sample
/// memory of media rows is what the files bring in, and this adds it.
pub(crate) fn media_file_bytes(row: &Value, keys: &SampleKeys, dir: Option<&str>) -> u64 {
    [&keys.image_key, &keys.audio_key, &keys.video_key]
        .into_iter()
        .filter_map(|key| row.get(key.as_str())?.as_array())
        .flatten()
        .filter_map(Value::as_str)
        .filter(|path| !path.contains("://"))
        .map(|path| {
            let path = match dir {
                Some(dir) => dj_plans::source::media::resolve(dir, path),
                None => path.to_string(),
            };
            std::fs::metadata(path).map_or(0, |m| m.len())
        })
        .sum()
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
pub(crate) fn py_deep_sizeof(value: &Value) -> u64 {
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

pub(super) fn py_str_size(s: &str) -> u64 {
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

pub(super) fn py_int_size(abs: u64) -> u64 {
    let bits = u64::from(64 - abs.leading_zeros());
    24 + 4 * bits.div_ceil(30).max(1)
}

pub(super) fn py_list_size(n: usize) -> u64 {
    // list_resize on append: new_allocated = (newsize + (newsize >> 3) + 6) & ~3.
    let mut allocated = 0usize;
    let mut k = 1usize;
    while k <= n {
        allocated = (k + (k >> 3) + 6) & !3;
        k = allocated + 1;
    }
    56 + 8 * allocated as u64
}

pub(super) fn py_dict_size(n: usize) -> u64 {
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
pub(crate) fn sample_size(total: u64) -> usize {
    let n = if total < 1_000 {
        total
    } else if total <= 100_000 {
        (total / 100).max(1_000)
    } else {
        (total / 1_000).min(10_000)
    };
    n as usize
}
