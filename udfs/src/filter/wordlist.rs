//! Word-list filters: `stopwords_filter` (`stopwords_ratio`) and `flagged_words_filter`
//! (`flagged_words_ratio`): the share of a sample's refined words (plus optional joined word
//! groups) found in a per-language word list loaded from Data-Juicer's JSON asset files.
//!
//! Deliberate deviations from Data-Juicer 1.6.1, all about failing early and clearly:
//! * No download: when the directory holds no matching word list, Data-Juicer fetches it from its
//!   aliyun bucket; we fail at recipe build time naming the path looked for, that URL and the
//!   parameter to set.
//! * An unknown `lang` fails at build time; Data-Juicer raises `KeyError` on the first sample that
//!   has a word.
//! * A list file must be a JSON object of lists of strings; Data-Juicer would silently accept
//!   other shapes (and, e.g., treat a string value as its characters).
//! * `tokenization: true` needs a SentencePiece model and is rejected.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};

use serde_json::{Value, json};

use crate::filter::build_filter;
use crate::filter::words::with_refined_words;
use crate::models::WordSource;
use crate::operator::Operator;
use crate::params::{ParamError, ParamSpec, ParamType, Params};
use crate::spec::{ModelUse, OpKind, OpSpec};
use crate::udf::{StatType, StatValue, TextStat};

/// One kind of word-list asset (Data-Juicer's `words_type`) and the op that uses it.
#[derive(Debug)]
struct Asset {
    /// `words_type`: files `*.json` whose name contains it are loaded.
    words_type: &'static str,
    /// The op's parameter naming the directory.
    dir_param: &'static str,
    /// Data-Juicer's `ASSET_LINKS[words_type]`.
    url: &'static str,
}

const STOPWORDS: Asset = Asset {
    words_type: "stopwords",
    dir_param: "stopwords_dir",
    url: "https://dail-wlcb.oss-cn-wulanchabu.aliyuncs.com/data_juicer/stopwords.json",
};

const FLAGGED_WORDS: Asset = Asset {
    words_type: "flagged_words",
    dir_param: "flagged_words_dir",
    url: "https://dail-wlcb.oss-cn-wulanchabu.aliyuncs.com/data_juicer/flagged_words.json",
};

/// Data-Juicer's `ASSET_DIR` (utils/cache_utils.py), from the process environment.
pub(crate) fn default_asset_dir() -> PathBuf {
    crate::cache_dirs::asset_dir(&crate::cache_dirs::process_env)
}

/// Language -> word set of one asset directory, `"all"` included.
type WordLists = HashMap<String, Arc<HashSet<String>>>;

/// Loaded lists, keyed by (directory, words type): each directory is read once per process.
type LoadedLists = HashMap<(PathBuf, &'static str), Arc<WordLists>>;
static LOADED: LazyLock<Mutex<LoadedLists>> = LazyLock::new(Default::default);

/// Data-Juicer's `load_words_asset`: every `*.json` file in `dir` whose name contains the words
/// type, each a JSON object language -> list of words, lists of the same language concatenated;
/// then, unless a file has an `"all"` entry itself, `"all"` is the union of every language.
fn load_word_lists(dir: &Path, asset: &Asset) -> Result<Arc<WordLists>, String> {
    let key = (dir.to_path_buf(), asset.words_type);
    if let Some(lists) = LOADED.lock().unwrap().get(&key) {
        return Ok(lists.clone());
    }
    let lists = Arc::new(read_word_lists(dir, asset)?);
    // A concurrent build may have loaded it meanwhile; either copy is identical.
    LOADED.lock().unwrap().insert(key, lists.clone());
    Ok(lists)
}

fn read_word_lists(dir: &Path, asset: &Asset) -> Result<WordLists, String> {
    let missing = || {
        format!(
            "no {t} word list found: looked for {path} (any *.json file in {dir} whose name \
             contains \"{t}\"); Data-Juicer downloads it from {url}, which this engine does not \
             do: put that file there or set `{param}` to a directory holding it",
            t = asset.words_type,
            path = dir.join(format!("{}.json", asset.words_type)).display(),
            dir = dir.display(),
            url = asset.url,
            param = asset.dir_param,
        )
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Err(missing());
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".json") && n.contains(asset.words_type))
        })
        .collect();
    files.sort();
    let mut merged: HashMap<String, HashSet<String>> = HashMap::new();
    for file in &files {
        let text = std::fs::read_to_string(file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let bad = |why: &str| format!("{}: {why}", file.display());
        let Value::Object(map) =
            serde_json::from_str(&text).map_err(|e| bad(&format!("invalid JSON: {e}")))?
        else {
            return Err(bad(
                "must be a JSON object mapping a language to a list of words",
            ));
        };
        for (lang, words) in map {
            let Value::Array(words) = words else {
                return Err(bad(&format!("entry {lang:?} must be a list of words")));
            };
            let set = merged.entry(lang.clone()).or_default();
            for w in words {
                let Value::String(w) = w else {
                    return Err(bad(&format!("entry {lang:?} must contain only strings")));
                };
                set.insert(w);
            }
        }
    }
    // Python tests `not bool(words_dict)`: files holding only `{}` count as missing.
    if merged.is_empty() {
        return Err(missing());
    }
    if !merged.contains_key("all") {
        let all: HashSet<String> = merged.values().flatten().cloned().collect();
        merged.insert("all".to_string(), all);
    }
    Ok(merged.into_iter().map(|(k, v)| (k, Arc::new(v))).collect())
}

/// Word augmentation (`use_words_aug`): besides the words themselves, every run of `n`
/// consecutive words joined by `join` is a candidate, for each `n` in `group_sizes` (duplicates
/// count twice, as in Data-Juicer). Meant for text whose listed words span several tokens, such
/// as space-segmented Chinese.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WordsAug {
    pub group_sizes: Vec<usize>,
    pub join: String,
}

/// The share of candidates in `list`: the refined words (split on space / `\n` / `\t`,
/// lower-cased, special characters stripped from both ends, empties dropped) followed by the
/// augmented word groups; 0.0 when there are none. Data-Juicer clamps to 1.0, which a share
/// never exceeds.
#[cfg(test)]
pub(crate) fn listed_word_ratio(text: &str, list: &HashSet<String>, aug: Option<&WordsAug>) -> f64 {
    with_refined_words(&WordSource::Whitespace, text, |w| {
        listed_ratio_of(w, list, aug)
    })
}

/// [`listed_word_ratio`] over already refined words.
fn listed_ratio_of(words: &[&str], list: &HashSet<String>, aug: Option<&WordsAug>) -> f64 {
    let mut total = words.len();
    let mut hits = words.iter().filter(|w| list.contains(**w)).count();
    if let Some(aug) = aug {
        let mut joined = String::new();
        for &n in &aug.group_sizes {
            if n > words.len() {
                continue;
            }
            total += words.len() - n + 1;
            for group in words.windows(n) {
                joined.clear();
                for (i, w) in group.iter().enumerate() {
                    if i > 0 {
                        joined.push_str(&aug.join);
                    }
                    joined.push_str(w);
                }
                hits += list.contains(joined.as_str()) as usize;
            }
        }
    }
    if total == 0 {
        0.0
    } else {
        hits as f64 / total as f64
    }
}

#[derive(Debug)]
struct ListedWordRatio {
    list: Arc<HashSet<String>>,
    aug: Option<WordsAug>,
    words: WordSource,
}

impl TextStat for ListedWordRatio {
    fn stat_type(&self) -> StatType {
        StatType::Float64
    }
    fn compute(&self, text: &str) -> StatValue {
        StatValue::Float(with_refined_words(&self.words, text, |w| {
            listed_ratio_of(w, &self.list, self.aug.as_ref())
        }))
    }
}

fn word_list_params(asset: &Asset, min: f64, max: f64, dir_doc: &'static str) -> Vec<ParamSpec> {
    vec![
        ParamSpec::new(
            "lang",
            ParamType::Str,
            json!("en"),
            "language of the word list; \"all\" merges every language",
        ),
        ParamSpec::new(
            "tokenization",
            ParamType::Bool,
            json!(false),
            "split words into the pieces of the {lang}.sp.model SentencePiece model",
        ),
        ParamSpec::new("min_ratio", ParamType::Float, json!(min), "minimum ratio"),
        ParamSpec::new("max_ratio", ParamType::Float, json!(max), "maximum ratio"),
        ParamSpec::new(asset.dir_param, ParamType::Str, Value::Null, dir_doc),
        ParamSpec::new(
            "use_words_aug",
            ParamType::Bool,
            json!(false),
            "also match groups of consecutive words joined by words_aug_join_char",
        ),
        // A list of positive integers, checked by the constructor (no such ParamType).
        ParamSpec::new(
            "words_aug_group_sizes",
            ParamType::Any,
            json!([2]),
            "sizes of the word groups used by use_words_aug (positive integers)",
        ),
        ParamSpec::new(
            "words_aug_join_char",
            ParamType::Str,
            json!(""),
            "string joining the words of a group",
        ),
    ]
}

fn build_word_list_filter(
    p: &Params,
    asset: &Asset,
    stat_key: &'static str,
) -> Result<Operator, ParamError> {
    let words = WordSource::from_params(p)?;
    let lang = p
        .str("lang")
        .ok_or_else(|| p.invalid("lang", "must be a language name, got null"))?;
    let group_sizes = match p.raw("words_aug_group_sizes") {
        Value::Null => vec![2],
        Value::Array(a) => a
            .iter()
            .map(|v| v.as_u64().filter(|&n| n > 0).map(|n| n as usize))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| {
                p.invalid(
                    "words_aug_group_sizes",
                    format!(
                        "must be a list of positive integers, got {}",
                        Value::Array(a.clone())
                    ),
                )
            })?,
        other => {
            return Err(p.invalid(
                "words_aug_group_sizes",
                format!("must be a list of positive integers, got {other}"),
            ));
        }
    };
    let aug = p.bool("use_words_aug").then(|| WordsAug {
        group_sizes,
        join: p.str("words_aug_join_char").unwrap_or("").to_string(),
    });
    let dir = p
        .str(asset.dir_param)
        .map(PathBuf::from)
        .unwrap_or_else(default_asset_dir);
    let lists = load_word_lists(&dir, asset).map_err(|m| p.invalid(asset.dir_param, m))?;
    let Some(list) = lists.get(lang) else {
        let mut langs: Vec<&str> = lists.keys().map(String::as_str).collect();
        langs.sort_unstable();
        return Err(p.invalid(
            "lang",
            format!(
                "no {} list for language {lang:?} in {}; available: {}",
                asset.words_type,
                dir.display(),
                langs.join(", ")
            ),
        ));
    };
    Ok(build_filter(
        p,
        stat_key,
        Arc::new(ListedWordRatio {
            list: list.clone(),
            aug,
            words,
        }),
        p.float("min_ratio"),
        p.float("max_ratio"),
    ))
}

pub(crate) fn stopwords_spec() -> OpSpec {
    OpSpec {
        name: "stopwords_filter",
        kind: OpKind::Filter,
        model_use: ModelUse::WithSomeParams,
        params: || {
            word_list_params(
                &STOPWORDS,
                0.3,
                1.0,
                "directory of the stopwords*.json lists (default: Data-Juicer's asset dir)",
            )
        },
        build: |p| build_word_list_filter(p, &STOPWORDS, "stopwords_ratio"),
        doc: "Keep samples whose share of stopwords (words lower-cased and stripped of special \
              characters, looked up in the lang list of stopwords_dir/stopwords*.json) is within \
              [min_ratio, max_ratio]; tokenization=true splits with the {lang}.sp.model \
              SentencePiece model.",
    }
}

pub(crate) fn flagged_words_spec() -> OpSpec {
    OpSpec {
        name: "flagged_words_filter",
        kind: OpKind::Filter,
        model_use: ModelUse::WithSomeParams,
        params: || {
            word_list_params(
                &FLAGGED_WORDS,
                0.0,
                0.045,
                "directory of the flagged_words*.json lists (default: Data-Juicer's asset dir)",
            )
        },
        build: |p| build_word_list_filter(p, &FLAGGED_WORDS, "flagged_words_ratio"),
        doc: "Keep samples whose share of flagged words (words lower-cased and stripped of \
              special characters, looked up in the lang list of \
              flagged_words_dir/flagged_words*.json) is within [min_ratio, max_ratio]; \
              tokenization=true splits with the {lang}.sp.model SentencePiece model.",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{build, float_stats};

    fn golden_assets() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/golden/assets")
    }

    /// A fresh, empty scratch directory for one test.
    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("dj-wordlist-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// (text, ratio for the CONFIGS below), computed by Data-Juicer 1.6.1's
    /// get_words_from_document / words_refinement with tests/golden/assets.
    const CASES: &[(&str, [f64; 6])] = &[
        ("", [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
        ("   ", [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
        ("\t\n", [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
        (
            "The quick brown fox jumps over the lazy dog.",
            [0.2222222222222222, 0.2222222222222222, 0.0, 0.0, 0.0, 0.0],
        ),
        ("THE AND OF TO IN IS", [1.0, 1.0, 0.0, 0.0, 0.0, 0.0]),
        (
            "(The) [and] {of} \"to\" 'in' ...is!!! cat",
            [0.8571428571428571, 0.8571428571428571, 0.0, 0.0, 0.0, 0.0],
        ),
        ("!!! ... ???", [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
        (
            "the cat and a dog ran far away quickly today",
            [0.3, 0.3, 0.0, 0.0, 0.0, 0.0],
        ),
        (
            "don't stop, DON'T",
            [0.6666666666666666, 0.6666666666666666, 0.0, 0.0, 0.0, 0.0],
        ),
        ("don\u{2019}t stop", [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
        (
            "the\tcat\nsat on\r\nthe mat",
            [0.5, 0.5, 0.0, 0.0, 0.0, 0.0],
        ),
        (
            "the\u{a0}cat and\u{a0}the dog",
            [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        ),
        (
            "😀the😀 cat 👍 and",
            [0.6666666666666666, 0.6666666666666666, 0.0, 0.0, 0.0, 0.0],
        ),
        (
            "\u{130}t Is it",
            [0.6666666666666666, 0.6666666666666666, 0.0, 0.0, 0.0, 0.0],
        ),
        ("1 2 3 the 42", [1.0, 1.0, 0.0, 0.0, 0.0, 0.0]),
        ("Der Hund und die Katze", [0.0, 0.6, 0.0, 0.0, 0.0, 0.0]),
        ("Le chat est là", [0.0, 0.5, 0.0, 0.0, 0.0, 0.0]),
        (
            "我们 今天 去 公园 玩 了",
            [0.0, 0.3333333333333333, 0.13333333333333333, 0.0, 0.0, 0.0],
        ),
        ("但 是 我们 没有 去", [0.0, 0.4, 0.25, 0.0, 0.0, 0.0]),
        ("我们今天去公园玩了。", [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
        (
            "这 是 垃圾 邮件",
            [0.0, 0.25, 0.1111111111111111, 0.0, 0.0, 0.14285714285714285],
        ),
        ("真 糟糕 ！", [0.0, 0.0, 0.0, 0.0, 0.0, 0.3333333333333333]),
        ("垃 圾 邮 件", [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
        ("的", [0.0, 1.0, 1.0, 0.0, 0.0, 0.0]),
        ("的 的", [0.0, 1.0, 0.6666666666666666, 0.0, 0.0, 0.0]),
        ("zorblax", [0.0, 0.0, 0.0, 1.0, 1.0, 0.0]),
        ("ZORBLAX!", [0.0, 0.0, 0.0, 1.0, 1.0, 0.0]),
        (
            "zorblaxes are not zorblax",
            [0.5, 0.5, 0.0, 0.25, 0.1111111111111111, 0.0],
        ),
        (
            "what mumbo jumbo this is",
            [0.4, 0.4, 0.0, 0.0, 0.08333333333333333, 0.0],
        ),
        (
            "pure mumbo-jumbo",
            [0.0, 0.0, 0.0, 0.5, 0.3333333333333333, 0.0],
        ),
        (
            "hocus pocus dominocus",
            [0.0, 0.0, 0.0, 0.0, 0.16666666666666666, 0.0],
        ),
        (
            "Gadzooks! What a snollygoster.",
            [0.25, 0.25, 0.0, 0.5, 0.2222222222222222, 0.0],
        ),
        ("ΣΑΣ the", [0.5, 0.5, 0.0, 0.0, 0.0, 0.0]),
        ("the\rcat", [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
    ];

    /// (asset, lang, words augmentation: group sizes and join string).
    type Config = (
        &'static Asset,
        &'static str,
        Option<(&'static [usize], &'static str)>,
    );
    const CONFIGS: [Config; 6] = [
        (&STOPWORDS, "en", None),
        (&STOPWORDS, "all", None),
        (&STOPWORDS, "zh", Some((&[2, 3], ""))),
        (&FLAGGED_WORDS, "en", None),
        (&FLAGGED_WORDS, "en", Some((&[2, 3], "-"))),
        (&FLAGGED_WORDS, "zh", Some((&[2], ""))),
    ];

    #[test]
    fn ratios_match_data_juicer() {
        for (i, (asset, lang, aug)) in CONFIGS.iter().enumerate() {
            let lists = load_word_lists(&golden_assets(), asset).unwrap();
            let aug = aug.map(|(g, j)| WordsAug {
                group_sizes: g.to_vec(),
                join: j.to_string(),
            });
            for (text, want) in CASES {
                let got = listed_word_ratio(text, &lists[*lang], aug.as_ref());
                assert_eq!(got, want[i], "config {i} text {text:?}");
            }
        }
    }

    #[test]
    fn augmentation_counts_every_group() {
        let list: HashSet<String> = ["a_b", "b"].iter().map(|s| s.to_string()).collect();
        let aug = |g: &[usize]| WordsAug {
            group_sizes: g.to_vec(),
            join: "_".into(),
        };
        // words a b a b: 1 hit of 4; bigrams a_b b_a a_b: 2 of 3; duplicate sizes count twice.
        assert_eq!(listed_word_ratio("a b a b", &list, None), 0.5);
        assert_eq!(
            listed_word_ratio("a b a b", &list, Some(&aug(&[2]))),
            4.0 / 7.0
        );
        assert_eq!(
            listed_word_ratio("a b a b", &list, Some(&aug(&[2, 2]))),
            6.0 / 10.0
        );
        // Groups longer than the text add nothing.
        assert_eq!(listed_word_ratio("b", &list, Some(&aug(&[5]))), 1.0);
        assert_eq!(listed_word_ratio("", &list, Some(&aug(&[1]))), 0.0);
    }

    fn sorted(set: &HashSet<String>) -> Vec<&str> {
        let mut v: Vec<&str> = set.iter().map(String::as_str).collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn loads_every_matching_file_and_keeps_an_own_all() {
        let d = scratch("merge");
        std::fs::write(d.join("stopwords.json"), r#"{"en": ["the"], "xx": ["q"]}"#).unwrap();
        std::fs::write(d.join("my_stopwords_extra.json"), r#"{"en": ["of"]}"#).unwrap();
        std::fs::write(d.join("stopwords.txt"), r#"{"en": ["txt"]}"#).unwrap();
        std::fs::write(
            d.join("flagged_words.json"),
            r#"{"en": ["zorblax"], "all": ["z"]}"#,
        )
        .unwrap();
        let s = read_word_lists(&d, &STOPWORDS).unwrap();
        assert_eq!(sorted(&s["en"]), ["of", "the"]);
        assert_eq!(sorted(&s["all"]), ["of", "q", "the"]);
        let f = read_word_lists(&d, &FLAGGED_WORDS).unwrap();
        assert_eq!(sorted(&f["en"]), ["zorblax"]);
        assert_eq!(sorted(&f["all"]), ["z"]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn missing_or_malformed_lists_fail_clearly() {
        let d = scratch("missing");
        let e = read_word_lists(&d.join("nope"), &STOPWORDS).unwrap_err();
        assert!(
            e.contains(&d.join("nope/stopwords.json").display().to_string()),
            "{e}"
        );
        assert!(
            e.contains(STOPWORDS.url) && e.contains("`stopwords_dir`"),
            "{e}"
        );
        // Empty objects count as no list, as in Data-Juicer.
        std::fs::write(d.join("flagged_words.json"), "{}").unwrap();
        let e = read_word_lists(&d, &FLAGGED_WORDS).unwrap_err();
        assert!(
            e.contains(FLAGGED_WORDS.url) && e.contains("`flagged_words_dir`"),
            "{e}"
        );
        for (bad, why) in [
            ("[1]", "must be a JSON object"),
            (r#"{"en": "the"}"#, "must be a list"),
            (r#"{"en": [1]}"#, "only strings"),
            ("{", "invalid JSON"),
        ] {
            std::fs::write(d.join("stopwords.json"), bad).unwrap();
            let e = read_word_lists(&d, &STOPWORDS).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn through_udf_and_params() {
        let dir = golden_assets().display().to_string();
        let op = build(
            "stopwords_filter",
            json!({"stopwords_dir": dir, "min_ratio": 0.2}),
        )
        .unwrap();
        let Operator::Filter(f) = &op else { panic!() };
        assert_eq!(f.stat_key, "stopwords_ratio");
        assert_eq!((f.range.min, f.range.max), (Some(0.2), Some(1.0)));
        // 2/9 = 0.2222222222222222, 0.2222222222 after the ujson round trip.
        assert_eq!(
            float_stats(
                &op,
                &[
                    Some("The quick brown fox jumps over the lazy dog."),
                    Some(""),
                    None
                ]
            ),
            vec![Some(0.2222222222), Some(0.0), None]
        );

        let op = build(
            "flagged_words_filter",
            json!({"flagged_words_dir": dir, "lang": "zh", "use_words_aug": true}),
        )
        .unwrap();
        let Operator::Filter(f) = &op else { panic!() };
        assert_eq!(f.stat_key, "flagged_words_ratio");
        assert_eq!((f.range.min, f.range.max), (Some(0.0), Some(0.045)));
        assert_eq!(
            float_stats(&op, &[Some("这 是 垃圾 邮件"), Some("垃圾邮件")]),
            vec![Some(0.1428571429), Some(1.0)]
        );

        for op in ["stopwords_filter", "flagged_words_filter"] {
            let dir_param = if op == "stopwords_filter" {
                "stopwords_dir"
            } else {
                "flagged_words_dir"
            };
            let e = build(
                op,
                json!({dir_param: dir, "tokenization": true, "lang": "qq"}),
            )
            .unwrap_err();
            assert!(
                e.to_string().starts_with(&format!(
                    "operator {op}: model file qq.sp.model not found (looked for "
                )),
                "{e}"
            );
            let e = build(op, json!({dir_param: dir, "lang": "xx"})).unwrap_err();
            assert_eq!(e.param(), "lang");
            assert!(e.to_string().contains("available: all, de, en"), "{e}");
            let e = build(op, json!({dir_param: "/nonexistent/dj"})).unwrap_err();
            assert_eq!(e.param(), dir_param);
            for bad in [
                json!([0]),
                json!([2, -1]),
                json!(2),
                json!(["2"]),
                json!([1.5]),
            ] {
                let e =
                    build(op, json!({dir_param: dir, "words_aug_group_sizes": bad})).unwrap_err();
                assert_eq!(e.param(), "words_aug_group_sizes", "{bad}");
            }
            let e = build(op, json!({dir_param: dir, "words_aug_join_char": 1})).unwrap_err();
            assert!(matches!(e, ParamError::WrongType { .. }), "{e:?}");
        }
    }
}
