//! Length filters: `text_length_filter` (code points) and `words_num_filter` (words).

use std::sync::Arc;

use serde_json::json;

use crate::PY_MAXSIZE;
use crate::filter::{build_filter, build_filter_deciding};
use crate::models::{SentencePiece, WordSource};
use crate::operator::{Operator, StatRange};
use crate::params::{ParamError, ParamSpec, ParamType, Params};
use crate::spec::{ModelUse, OpKind, OpSpec};
use crate::text::is_special_char;
use crate::udf::{StatType, StatValue, TextStat};

/// `len(text)` in Unicode code points, as Python counts it.
pub fn text_len(text: &str) -> i64 {
    text.chars().count() as i64
}

#[derive(Debug)]
struct TextLen;

impl TextStat for TextLen {
    fn stat_type(&self) -> StatType {
        StatType::Int64
    }
    fn compute(&self, text: &str) -> StatValue {
        StatValue::Int(text_len(text))
    }
}

pub(crate) fn text_length_spec() -> OpSpec {
    OpSpec {
        name: "text_length_filter",
        kind: OpKind::Filter,
        model_use: ModelUse::None,
        params: || {
            vec![
                ParamSpec::new("min_len", ParamType::Int, json!(10), "minimum text length"),
                ParamSpec::new(
                    "max_len",
                    ParamType::Int,
                    json!(PY_MAXSIZE),
                    "maximum text length",
                ),
            ]
        },
        build: build_text_length,
        doc: "Keep samples whose text length (code points) is within [min_len, max_len].",
    }
}

fn build_text_length(p: &Params) -> Result<Operator, ParamError> {
    Ok(build_filter(
        p,
        "text_len",
        Arc::new(TextLen),
        p.int("min_len").map(|v| v as f64),
        p.int("max_len").map(|v| v as f64),
    ))
}

/// `words_num_filter`'s stat without tokenization: split on ASCII space, `\n` and `\t`, strip
/// `SPECIAL_CHARACTERS` from both ends of each word and count the words left non-empty (a word is
/// kept iff it has a character outside the set). No lower-casing, as in Data-Juicer.
#[cfg(test)]
pub(crate) fn num_words(text: &str) -> i64 {
    count_words(&mut crate::text::words_from_document(text))
}

fn count_words(words: &mut dyn Iterator<Item = &str>) -> i64 {
    words
        .filter(|w| w.chars().any(|c| !is_special_char(c)))
        .count() as i64
}

#[derive(Debug)]
struct NumWords {
    words: WordSource,
}

impl TextStat for NumWords {
    fn stat_type(&self) -> StatType {
        StatType::Int64
    }
    fn compute(&self, text: &str) -> StatValue {
        StatValue::Int(self.words.with_words(text, count_words))
    }
}

pub(crate) fn words_num_spec() -> OpSpec {
    OpSpec {
        name: "words_num_filter",
        kind: OpKind::Filter,
        model_use: ModelUse::WithSomeParams,
        params: || {
            vec![
                ParamSpec::new(
                    "lang",
                    ParamType::Str,
                    json!("en"),
                    "sample language (used by tokenization)",
                ),
                ParamSpec::new(
                    "tokenization",
                    ParamType::Bool,
                    json!(false),
                    "split words into the pieces of the {lang}.sp.model SentencePiece model",
                ),
                ParamSpec::new(
                    "min_num",
                    ParamType::Int,
                    json!(10),
                    "minimum number of words",
                ),
                ParamSpec::new(
                    "max_num",
                    ParamType::Int,
                    json!(PY_MAXSIZE),
                    "maximum number of words",
                ),
            ]
        },
        build: build_words_num,
        doc: "Keep samples whose word count (whitespace split, special characters stripped) is within \
              [min_num, max_num]; tokenization=true splits with the {lang}.sp.model SentencePiece model.",
    }
}

/// `num_words` with tokenization as far as a `max_num` bound needs it. The words of the
/// normalized text (from one ▁ to the next) that hold a character outside `SPECIAL_CHARACTERS`
/// are a lower bound on the pieces that do: with a model whose pieces never span two words
/// ([`SentencePiece::count_words`]), the piece holding that character lies in that word and
/// counts. A text with more such words than `max_num` allows is rejected with that bound, for
/// the cost of normalizing it, without segmenting it; any other gets the exact count.
#[derive(Debug)]
struct NumWordsDecided {
    sp: Arc<SentencePiece>,
    exact: NumWords,
    max: f64,
    max_closed: bool,
}

impl NumWordsDecided {
    fn rejects(&self, count: f64) -> bool {
        if self.max_closed {
            count > self.max
        } else {
            count >= self.max
        }
    }
}

impl TextStat for NumWordsDecided {
    fn stat_type(&self) -> StatType {
        StatType::Int64
    }
    fn compute(&self, text: &str) -> StatValue {
        // Only a text longer (in bytes) than the bound can usually exceed it; the others go
        // straight to the exact count, which is right for every text.
        if self.rejects(text.len() as f64 + 1.0) {
            let bound = self.sp.count_words(text, |c| !is_special_char(c));
            if let Some(bound) = bound.filter(|&b| self.rejects(b as f64)) {
                return StatValue::Int(bound as i64);
            }
        }
        self.exact.compute(text)
    }
}

fn build_words_num(p: &Params) -> Result<Operator, ParamError> {
    let words = WordSource::from_params(p)?;
    let decide = |range: &StatRange| -> Option<Arc<dyn TextStat>> {
        let WordSource::Pieces(sp) = &words else {
            return None;
        };
        let max = range
            .max
            .filter(|m| !range.reversed && *m < PY_MAXSIZE as f64)?;
        Some(Arc::new(NumWordsDecided {
            sp: sp.clone(),
            exact: NumWords {
                words: words.clone(),
            },
            max,
            max_closed: range.max_closed,
        }))
    };
    Ok(build_filter_deciding(
        p,
        "num_words",
        Arc::new(NumWords {
            words: words.clone(),
        }),
        p.int("min_num").map(|v| v as f64),
        p.int("max_num").map(|v| v as f64),
        decide,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_code_points_not_bytes() {
        assert_eq!(text_len(""), 0);
        assert_eq!(text_len("abc"), 3);
        assert_eq!(text_len("数据处理"), 4);
        assert_eq!(text_len("e\u{301}"), 2); // combining accent is its own code point
        assert_eq!(text_len("🙂"), 1);
    }

    /// (text, WordsNumFilter().compute_stats_batched num_words), Data-Juicer 1.6.1.
    const NUM_WORDS_CASES: &[(&str, i64)] = &[
        ("", 0),
        ("   ", 0),
        ("\t\n", 0),
        ("Hello world!", 2),
        ("Hello, world! This is a test.", 6),
        ("a - b -- c ... d", 4),
        ("数据处理 是 一个 测试。", 4),
        ("e\u{301} cafe\u{301} naïve", 3),
        ("😀 😀😀 hi😀 🇨🇳 👍🏽", 2),
        ("مرحبا بالعالم، كيف حالك؟", 4),
        ("full\u{3000}width\u{3000}space ｆｕｌｌ", 2),
        ("nbsp\u{a0}inside word\u{2003}em", 2),
        ("x\u{1c}y\u{1d}z\u{1e}\u{1f}", 1),
        ("123 456 7.8 9,0", 0),
        ("__init__ --flag", 2),
        ("\u{200b}\u{200b}zero\u{200b} width", 2),
        ("‘quoted’ “double” «guillemets»", 3),
        ("Ⅷ ² ½ ١٢٣ ３", 3),
        ("ǅ ǈ ß ǲ", 4),
        ("\u{301}\u{301}", 1),
        ("line1\nline2\rline3\r\nline4", 3),
        ("①②③ ⑴ ⒈", 3),
        ("aaaaaaaaa b", 2),
        (
            "the the the the the the the the the the the the the the",
            14,
        ),
        ("abcabcabcabcabcabcabcabcabcabcabc", 1),
        ("abababababababababababababababababababab", 1),
        ("中文中文中文中文中文中文中文", 1),
        ("🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂", 0),
        ("שלום עולם!", 2),
        ("\u{1e030}\u{11bf0} new", 2),
        ("\u{11db0}\u{11de0} u17", 2),
        ("ก\u{e34}น ข\u{e49}าว", 2),
        (
            "#1 (see: [x]) {y} <z> ~w~ |v| ^u^ `t` @s $r %q &p *o +n =m",
            15,
        ),
        ("tab\tsep\tvalues\t", 3),
        ("ａｂｃ！？。、", 1),
        ("�\u{fffc}\u{ad}\u{feff}", 0),
        (
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab",
            1,
        ),
    ];

    #[test]
    fn num_words_matches_data_juicer() {
        for (text, want) in NUM_WORDS_CASES {
            assert_eq!(num_words(text), *want, "text {text:?}");
        }
        let want: [i64; 3] = [17857, 1, 1];
        for (text, want) in crate::test_support::big_texts().iter().zip(want) {
            assert_eq!(num_words(text), want);
        }
    }

    #[test]
    fn words_num_through_udf_and_params() {
        use crate::test_support::{build, int_stats};
        use serde_json::json;
        let op = build("words_num_filter", json!({"min_num": 2, "lang": "zh"})).unwrap();
        let Operator::Filter(f) = &op else { panic!() };
        assert_eq!(f.stat_key, "num_words");
        assert_eq!(
            (f.range.min, f.range.max),
            (Some(2.0), Some(PY_MAXSIZE as f64))
        );
        assert_eq!(
            int_stats(&op, &[Some("a b, c"), Some("..."), None]),
            vec![Some(3), Some(0), None]
        );
        let Operator::Filter(f) = build("words_num_filter", json!({})).unwrap() else {
            panic!()
        };
        assert_eq!(f.range.min, Some(10.0));

        let e = build(
            "words_num_filter",
            json!({"tokenization": true, "lang": "qq"}),
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("operator words_num_filter: model file qq.sp.model not found"),
            "{e}"
        );
        let e = build("words_num_filter", json!({"min_num": 1.5})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "parameter `min_num` of words_num_filter must be an integer, got number 1.5"
        );
        let e = build("words_num_filter", json!({"lang": 1})).unwrap_err();
        assert!(matches!(e, ParamError::WrongType { .. }));
    }

    /// The stat a run decides with equals the exact one wherever the range may keep the row,
    /// and is rejected wherever the exact one is; long texts are rejected from the words alone.
    #[test]
    fn decided_num_words_keep_and_reject_as_the_exact_count() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/models");
        let (sp, _) = crate::models::sentencepiece("en", Some(&dir)).unwrap();
        let words = WordSource::Pieces(sp.clone());
        let exact = NumWords {
            words: words.clone(),
        };
        let mut texts: Vec<String> = NUM_WORDS_CASES.iter().map(|(t, _)| t.to_string()).collect();
        let sentence = "Hello, world! Can't stop: 42 x-ray (ok) naïve ... \u{2581}odd 中文 ";
        for n in [1, 3, 10, 40, 200] {
            texts.push(sentence.repeat(n));
        }
        let (mut shortcuts, mut checked) = (0, 0);
        for text in &texts {
            let StatValue::Int(want) = exact.compute(text) else {
                panic!("int stat")
            };
            for max in [0.0, 1.0, 5.0, 30.0, 100.0, 500.0, 2000.0] {
                for max_closed in [true, false] {
                    let decided = NumWordsDecided {
                        sp: sp.clone(),
                        exact: NumWords {
                            words: words.clone(),
                        },
                        max,
                        max_closed,
                    };
                    let StatValue::Int(got) = decided.compute(text) else {
                        panic!("int stat")
                    };
                    checked += 1;
                    if decided.rejects(want as f64) {
                        assert!(decided.rejects(got as f64), "{text:?} max {max}: {got}");
                        assert!(got <= want, "{text:?}: a bound, {got} > {want}");
                        shortcuts += usize::from(got != want);
                    } else {
                        assert_eq!(got, want, "{text:?} max {max} closed {max_closed}");
                    }
                }
            }
        }
        assert!(
            shortcuts > 10,
            "{shortcuts} of {checked} decided from the words"
        );
    }
}
