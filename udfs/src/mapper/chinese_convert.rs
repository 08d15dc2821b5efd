//! `chinese_convert_mapper`: OpenCC 1.1.9 conversion (the `opencc` wheel Data-Juicer installs) between
//! Simplified, Traditional (Taiwan / Hong Kong) Chinese and Japanese Shinjitai. The mode configs and
//! dictionaries are OpenCC's own, embedded from `udfs/data/opencc/` (made by `gen_opencc_tables.py`).

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::mapper::build_mapper;
use crate::operator::Operator;
use crate::params::{ParamError, ParamSpec, ParamType, Params};
use crate::spec::{ModelUse, OpKind, OpSpec};
use crate::udf::TextMapper;

/// The modes Data-Juicer accepts, in its order.
pub(crate) const MODES: &[&str] = &[
    "s2t", "t2s", "s2tw", "tw2s", "s2hk", "hk2s", "s2twp", "tw2sp", "t2tw", "tw2t", "hk2t", "t2hk",
    "t2jp", "jp2t",
];

macro_rules! embedded {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("../../data/opencc/", $name)))),*]
    };
}

/// OpenCC's per-mode config files, verbatim.
static CONFIGS: &[(&str, &str)] = embedded!(
    "s2t.json",
    "t2s.json",
    "s2tw.json",
    "tw2s.json",
    "s2hk.json",
    "hk2s.json",
    "s2twp.json",
    "tw2sp.json",
    "t2tw.json",
    "tw2t.json",
    "hk2t.json",
    "t2hk.json",
    "t2jp.json",
    "jp2t.json",
);

/// OpenCC's dictionaries as sorted `key<TAB>value[ value...]` text (decoded from the `.ocd2` files).
static DICT_SOURCES: &[(&str, &str)] = embedded!(
    "HKVariants.txt",
    "HKVariantsRev.txt",
    "HKVariantsRevPhrases.txt",
    "JPShinjitaiCharacters.txt",
    "JPShinjitaiPhrases.txt",
    "JPVariants.txt",
    "JPVariantsRev.txt",
    "STCharacters.txt",
    "STPhrases.txt",
    "TSCharacters.txt",
    "TSPhrases.txt",
    "TWPhrases.txt",
    "TWPhrasesRev.txt",
    "TWVariants.txt",
    "TWVariantsRev.txt",
    "TWVariantsRevPhrases.txt",
);

/// One dictionary: `(key, default value)` pairs sorted by key bytes, borrowing the embedded text.
/// OpenCC only ever uses an entry's first value (`DictEntry::GetDefault`).
#[derive(Debug)]
struct Table {
    entries: Vec<(&'static str, &'static str)>,
}

impl Table {
    fn parse(name: &str, text: &'static str) -> Table {
        let entries: Vec<_> = text
            .lines()
            .map(|line| {
                let (key, values) = line
                    .split_once('\t')
                    .unwrap_or_else(|| panic!("{name}: malformed line {line:?}"));
                (key, values.split(' ').next().unwrap_or(values))
            })
            .collect();
        assert!(
            entries.windows(2).all(|w| w[0].0 < w[1].0),
            "{name}: keys must be sorted and unique"
        );
        Table { entries }
    }

    /// The longest key that is a prefix of `s`, as (key length in bytes, value); what OpenCC's marisa
    /// `common_prefix_search` finds. The candidate range narrows one character at a time, so the search
    /// usually ends after a character or two.
    fn longest_prefix(&self, s: &str) -> Option<(usize, &'static str)> {
        let (mut lo, mut hi) = (0, self.entries.len());
        let mut best = None;
        for (i, c) in s.char_indices() {
            let prefix = &s[..i + c.len_utf8()];
            let range = &self.entries[lo..hi];
            let start = range.partition_point(|(k, _)| *k < prefix);
            let len = range[start..].partition_point(|(k, _)| k.starts_with(prefix));
            if len == 0 {
                break;
            }
            lo += start;
            hi = lo + len;
            let (key, value) = self.entries[lo];
            if key.len() == prefix.len() {
                best = Some((key.len(), value));
            }
        }
        best
    }
}

fn table(file: &str) -> Option<&'static Table> {
    static TABLES: [OnceLock<Table>; 16] = [const { OnceLock::new() }; 16];
    let stem = file.strip_suffix(".ocd2")?;
    let i = DICT_SOURCES
        .iter()
        .position(|(n, _)| n.strip_suffix(".txt") == Some(stem))?;
    let (name, text) = DICT_SOURCES[i];
    Some(TABLES[i].get_or_init(|| Table::parse(name, text)))
}

/// A config's `dict`: one table, or a group whose first member with any match wins (`DictGroup`).
#[derive(Debug)]
enum Dict {
    Table(&'static Table),
    Group(Vec<Dict>),
}

impl Dict {
    fn from_config(v: &Value) -> Result<Dict, String> {
        match v["type"].as_str() {
            Some("ocd2") => {
                let file = v["file"].as_str().unwrap_or_default();
                table(file)
                    .map(Dict::Table)
                    .ok_or_else(|| format!("unknown dictionary {file:?}"))
            }
            Some("group") => v["dicts"]
                .as_array()
                .ok_or("group without dicts")?
                .iter()
                .map(Dict::from_config)
                .collect::<Result<_, _>>()
                .map(Dict::Group),
            other => Err(format!("unsupported dictionary type {other:?}")),
        }
    }

    fn has_ascii_key(&self) -> bool {
        match self {
            Dict::Table(t) => t.entries.iter().any(|(k, _)| k.is_ascii()),
            Dict::Group(dicts) => dicts.iter().any(Dict::has_ascii_key),
        }
    }

    fn longest_prefix(&self, s: &str) -> Option<(usize, &'static str)> {
        match self {
            Dict::Table(t) => t.longest_prefix(s),
            Dict::Group(dicts) => dicts.iter().find_map(|d| d.longest_prefix(s)),
        }
    }
}

/// One OpenCC mode: maximum-match segmentation, then each conversion of the chain applied to every
/// segment in turn. A phrase therefore never converts across a segment boundary.
#[derive(Debug)]
struct Converter {
    segmentation: Dict,
    chain: Vec<Dict>,
    /// No dictionary of this mode has an all-ASCII key, so ASCII text passes through unchanged.
    ascii_inert: bool,
}

impl Converter {
    fn from_config(json: &str) -> Result<Converter, String> {
        let v: Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
        let seg = &v["segmentation"];
        if seg["type"].as_str() != Some("mmseg") {
            return Err(format!("unsupported segmentation {:?}", seg["type"]));
        }
        let chain: Vec<Dict> = v["conversion_chain"]
            .as_array()
            .ok_or("no conversion_chain")?
            .iter()
            .map(|c| Dict::from_config(&c["dict"]))
            .collect::<Result<_, _>>()?;
        let segmentation = Dict::from_config(&seg["dict"])?;
        let ascii_inert = !segmentation.has_ascii_key() && !chain.iter().any(Dict::has_ascii_key);
        Ok(Converter {
            segmentation,
            chain,
            ascii_inert,
        })
    }

    fn for_mode(mode: &str) -> Option<&'static Converter> {
        static CONVERTERS: [OnceLock<Converter>; 14] = [const { OnceLock::new() }; 14];
        let i = MODES.iter().position(|m| *m == mode)?;
        let (name, json) = CONFIGS[i];
        Some(CONVERTERS[i].get_or_init(|| {
            Converter::from_config(json).unwrap_or_else(|e| panic!("OpenCC config {name}: {e}"))
        }))
    }

    /// Calls `f` with each segment of `text`: every longest segmentation-dictionary match on its
    /// own, and each run of unmatched characters between them as one segment.
    fn segments<'t>(&self, text: &'t str, mut f: impl FnMut(&'t str)) {
        let (mut run_start, mut pos) = (0, 0);
        while pos < text.len() {
            let rest = &text[pos..];
            match self.segmentation.longest_prefix(rest) {
                Some((len, _)) => {
                    if run_start < pos {
                        f(&text[run_start..pos]);
                    }
                    f(&rest[..len]);
                    pos += len;
                    run_start = pos;
                }
                None => pos += rest.chars().next().map_or(1, char::len_utf8),
            }
        }
        if run_start < pos {
            f(&text[run_start..pos]);
        }
    }

    /// OpenCC's `Converter::Convert`. The C++ side reads the text as a C string, so it ends at the
    /// first NUL: `"a\0b"` converts to `"a"`.
    fn convert<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let text = text.find('\0').map_or(text, |i| &text[..i]);
        if self.ascii_inert && text.is_ascii() {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let (mut cur, mut next) = (String::new(), String::new());
        self.segments(text, |segment| match self.chain.as_slice() {
            [only] => convert_segment(only, segment, &mut out),
            chain => {
                cur.clear();
                cur.push_str(segment);
                for dict in chain {
                    next.clear();
                    convert_segment(dict, &cur, &mut next);
                    std::mem::swap(&mut cur, &mut next);
                }
                out.push_str(&cur);
            }
        });
        if out == text {
            Cow::Borrowed(text)
        } else {
            Cow::Owned(out)
        }
    }
}

/// `Conversion::Convert` of one segment: longest dictionary match at each position, else the
/// character itself.
fn convert_segment(dict: &Dict, segment: &str, out: &mut String) {
    let mut pos = 0;
    while pos < segment.len() {
        let rest = &segment[pos..];
        match dict.longest_prefix(rest) {
            Some((len, value)) => {
                out.push_str(value);
                pos += len;
            }
            None => {
                let len = rest.chars().next().map_or(1, char::len_utf8);
                out.push_str(&rest[..len]);
                pos += len;
            }
        }
    }
}

#[derive(Debug)]
struct ChineseConvert(&'static Converter);

impl TextMapper for ChineseConvert {
    fn map<'a>(&self, text: &'a str) -> Cow<'a, str> {
        self.0.convert(text)
    }
}

/// Converts `text` with OpenCC mode `mode` (one of [`MODES`]); `None` for an unknown mode.
#[cfg(test)]
pub(crate) fn convert_chinese<'a>(mode: &str, text: &'a str) -> Option<Cow<'a, str>> {
    Converter::for_mode(mode).map(|c| c.convert(text))
}

fn chinese_convert_params() -> Vec<ParamSpec> {
    vec![ParamSpec::new(
        "mode",
        ParamType::Choice(MODES),
        Value::String("s2t".into()),
        "OpenCC config: s2t, t2s, s2tw, tw2s, s2hk, hk2s, s2twp, tw2sp, t2tw, tw2t, hk2t, t2hk, t2jp, jp2t",
    )]
}

pub(crate) fn chinese_convert_spec() -> OpSpec {
    OpSpec {
        name: "chinese_convert_mapper",
        kind: OpKind::Mapper,
        model_use: ModelUse::None,
        params: chinese_convert_params,
        build: build_chinese_convert,
        doc: "Convert between Simplified / Traditional (Taiwan, Hong Kong) Chinese and Japanese kanji with OpenCC.",
    }
}

fn build_chinese_convert(p: &Params) -> Result<Operator, ParamError> {
    let mode = p.str("mode").unwrap_or("s2t");
    let converter = Converter::for_mode(mode)
        .ok_or_else(|| p.invalid("mode", format!("must be one of {}", MODES.join(", "))))?;
    Ok(build_mapper(p, Arc::new(ChineseConvert(converter))))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::test_support::{build, map_texts};

    fn conv(mode: &str, text: &str) -> String {
        convert_chinese(mode, text).unwrap().into_owned()
    }

    #[test]
    fn every_mode_loads_and_tables_are_sorted() {
        for mode in MODES {
            assert!(Converter::for_mode(mode).is_some(), "{mode}");
        }
        assert!(Converter::for_mode("s2j").is_none());
        assert!(
            MODES
                .iter()
                .all(|m| Converter::for_mode(m).unwrap().ascii_inert)
        );
        assert_eq!(table("STPhrases.ocd2").unwrap().entries.len(), 49096);
    }

    #[test]
    fn simplified_to_traditional_uses_phrases() {
        // Expected strings are opencc 1.1.9's output.
        assert_eq!(conv("s2t", "头发\u{0}头发"), "頭髮");
        assert_eq!(conv("s2t", "干部 干燥 干活"), "幹部 乾燥 幹活");
        assert_eq!(conv("s2t", "后来\r\n皇后"), "後來\r\n皇后");
        assert_eq!(conv("s2t", "我干什么不干你事。"), "我幹什麼不干你事。");
        assert_eq!(conv("s2t", ""), "");
    }

    #[test]
    fn regional_and_japanese_modes() {
        assert_eq!(conv("s2tw", "软件里的鼠标"), "軟件裡的鼠標");
        assert_eq!(conv("s2twp", "软件里的鼠标"), "軟體裡的滑鼠");
        assert_eq!(conv("tw2sp", "軟體裡的滑鼠"), "软件里的鼠标");
        assert_eq!(conv("s2hk", "着眼于"), "着眼於");
        assert_eq!(conv("t2s", "頭髮乾燥"), "头发干燥");
        assert_eq!(conv("t2jp", "藝術與國際"), "芸術与国際");
        assert_eq!(conv("jp2t", "芸術と国際"), "藝術と國際");
    }

    #[test]
    fn unchanged_text_is_borrowed() {
        assert!(matches!(
            convert_chinese("s2twp", "plain ASCII\0 cut"),
            Some(Cow::Borrowed("plain ASCII"))
        ));
        let text = "plain ASCII text, 頭髮 already traditional";
        assert!(matches!(
            convert_chinese("s2t", text),
            Some(Cow::Borrowed(_))
        ));
    }

    #[test]
    fn op_from_registry() {
        let op = build("chinese_convert_mapper", json!({})).unwrap();
        assert_eq!(
            map_texts(&op, &[Some("简体中文"), None]),
            vec![Some("簡體中文".to_string()), None]
        );
        let op = build("chinese_convert_mapper", json!({"mode": "t2s"})).unwrap();
        assert_eq!(
            map_texts(&op, &[Some("繁體中文")]),
            vec![Some("繁体中文".to_string())]
        );
        assert!(build("chinese_convert_mapper", json!({"mode": "x2y"})).is_err());
    }
}
