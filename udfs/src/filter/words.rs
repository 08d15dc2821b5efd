//! Word-level filters: `word_repetition_filter`.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::json;

use crate::filter::build_filter;
use crate::filter::gram_count::{GramCounts, with_id_gram_counts, with_sparse_id_gram_counts};
use crate::filter::word_ids::{with_refined_word_ids, with_word_ids};
use crate::models::{WordSource, with_piece_view};
use crate::operator::Operator;
use crate::params::{ParamError, ParamSpec, ParamType, Params};
use crate::spec::{ModelUse, OpKind, OpSpec};
use crate::text::{py_lower, special_characters, words_from_document, words_refinement};
use crate::udf::{StatType, StatValue, TextStat};

/// The words Data-Juicer's word filters see without a tokenizer: split on ASCII space, `\n` and
/// `\t`, lower-cased (Python `str.lower()`), `SPECIAL_CHARACTERS` stripped from both ends, empty
/// words dropped.
#[cfg(test)]
pub(crate) fn refined_words(text: &str) -> Vec<Cow<'_, str>> {
    refine(&mut words_from_document(text))
}

/// Calls `f` with the refined words of `text` as `source` splits it (see [`refined_words`]).
/// Split on whitespace, the whole text is lower-cased once and the words borrowed from it: the
/// same words, since the separators are neither cased nor case-ignorable (so `str.lower()`'s
/// Final_Sigma rule sees the same context) and lower-casing never makes a separator.
pub(crate) fn with_refined_words<R>(
    source: &WordSource,
    text: &str,
    f: impl FnOnce(&[&str]) -> R,
) -> R {
    let set = special_characters();
    match source {
        WordSource::Whitespace => {
            let lower = py_lower(text);
            let words: Vec<&str> = words_from_document(&lower)
                .map(|w| set.trim(w))
                .filter(|w| !w.is_empty())
                .collect();
            f(&words)
        }
        WordSource::Pieces(sp) => with_piece_view(sp, text, |pieces| {
            let joined = pieces.joined.as_str();
            if joined.chars().all(|c| c.is_ascii() || c == '\u{2581}') {
                // Pieces of ASCII and ▁ only (most English text): lower-casing them one by one
                // is lower-casing their ASCII letters, so it is done once for all of them and
                // the words are borrowed at the same ends.
                let mut lower = String::new();
                let lower = if joined.bytes().any(|b| b.is_ascii_uppercase()) {
                    lower.push_str(joined);
                    lower.make_ascii_lowercase();
                    lower.as_str()
                } else {
                    joined
                };
                let mut start = 0;
                let words: Vec<&str> = pieces
                    .ends
                    .iter()
                    .filter_map(|&end| {
                        let word = set.trim(&lower[start..end as usize]);
                        start = end as usize;
                        (!word.is_empty()).then_some(word)
                    })
                    .collect();
                return f(&words);
            }
            let refined = refine(&mut pieces.iter());
            let words: Vec<&str> = refined.iter().map(|w| w.as_ref()).collect();
            f(&words)
        }),
    }
}

/// Lower-cased words with `SPECIAL_CHARACTERS` stripped from both ends, empty words dropped
/// (`words_refinement(words, lower_case=True, strip_chars=SPECIAL_CHARACTERS)`).
pub(crate) fn refine<'a>(words: &mut dyn Iterator<Item = &'a str>) -> Vec<Cow<'a, str>> {
    words_refinement(words, true, Some(special_characters())).collect()
}

/// `word_repetition_filter`'s `word_rep_ratio` with n-gram length `n` (> 0): over the refined words
/// (see [`refined_words`]), count every overlapping n-gram of words; return the share of n-gram
/// occurrences whose n-gram occurs more than once, `sum(counts > 1) / sum(counts)`; 0.0 when there
/// are fewer than `n` words.
///
/// Data-Juicer keys the n-grams by `" ".join(words)`; a refined word never contains a space and is
/// never empty, so that join is injective and comparing the word sequences is the same thing.
pub fn word_rep_ratio(text: &str, n: usize) -> f64 {
    with_refined_word_ids(text, |seq, max_id| id_rep_ratio(seq, max_id, n))
}

/// [`word_rep_ratio`] over already refined words.
fn word_rep_ratio_of(words: &[&str], n: usize) -> f64 {
    with_word_ids(words, |seq, max_id| id_rep_ratio(seq, max_id, n))
}

/// [`word_rep_ratio`] over word ids (each in `1..=max_id`, numbered from 1 so that packed
/// n-grams are never 0).
fn id_rep_ratio(seq: &[u32], max_id: u32, n: usize) -> f64 {
    assert!(n > 0, "rep_len must be positive");
    if seq.len() < n {
        return 0.0;
    }
    let total = seq.len() - n + 1;
    let repeated_share = |grams: GramCounts<'_>| {
        let repeated: u64 = grams
            .counts
            .iter()
            .filter(|&&c| c > 1)
            .map(|&c| c as u64)
            .sum();
        repeated as f64 / total as f64
    };
    if let Some(share) = with_id_gram_counts(seq, max_id, n, repeated_share) {
        return share;
    }
    // Too many distinct words to pack n of them. An n-gram holding a word that occurs once is
    // itself unique, so only the runs of repeated words matter: renumber those (usually far
    // fewer, so their n-grams pack; else they are keyed by classes of their halves) and count
    // the n-grams inside the runs.
    let mut occurrences = vec![0u32; max_id as usize + 1];
    for &id in seq {
        occurrences[id as usize] += 1;
    }
    let mut renumbered = vec![0u32; max_id as usize + 1];
    let mut repeated_words = 0u32;
    for (id, &count) in occurrences.iter().enumerate().skip(1) {
        if count > 1 {
            repeated_words += 1;
            renumbered[id] = repeated_words;
        }
    }
    let runs: Vec<u32> = seq.iter().map(|&id| renumbered[id as usize]).collect();
    with_sparse_id_gram_counts(&runs, repeated_words, n, repeated_share)
}

#[derive(Debug)]
struct WordRepRatio {
    n: usize,
    words: WordSource,
}

impl TextStat for WordRepRatio {
    fn stat_type(&self) -> StatType {
        StatType::Float64
    }
    fn compute(&self, text: &str) -> StatValue {
        StatValue::Float(match self.words {
            WordSource::Whitespace => word_rep_ratio(text, self.n),
            WordSource::Pieces(_) => {
                with_refined_words(&self.words, text, |w| word_rep_ratio_of(w, self.n))
            }
        })
    }
}

pub(crate) fn word_repetition_spec() -> OpSpec {
    OpSpec {
        name: "word_repetition_filter",
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
                    "rep_len",
                    ParamType::Int,
                    json!(10),
                    "word n-gram length (positive)",
                ),
                ParamSpec::new(
                    "min_ratio",
                    ParamType::Float,
                    json!(0.0),
                    "minimum repetition ratio",
                ),
                ParamSpec::new(
                    "max_ratio",
                    ParamType::Float,
                    json!(0.5),
                    "maximum repetition ratio",
                ),
            ]
        },
        build: build_word_repetition,
        doc: "Keep samples whose word n-gram repetition ratio (words lower-cased and stripped of \
              special characters) is within [min_ratio, max_ratio]; tokenization=true splits with \
              the {lang}.sp.model SentencePiece model.",
    }
}

fn build_word_repetition(p: &Params) -> Result<Operator, ParamError> {
    let words = WordSource::from_params(p)?;
    // pydantic PositiveInt in Data-Juicer.
    let n = match p.int("rep_len") {
        Some(n) if n > 0 => n as usize,
        Some(n) => return Err(p.invalid("rep_len", format!("must be a positive integer, got {n}"))),
        None => return Err(p.invalid("rep_len", "must be a positive integer, got null")),
    };
    Ok(build_filter(
        p,
        "word_rep_ratio",
        Arc::new(WordRepRatio { n, words }),
        p.float("min_ratio"),
        p.float("max_ratio"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{big_texts, build, float_stats};
    use serde_json::json;

    const REP_LENS: [usize; 4] = [10, 1, 2, 3];

    /// (text, word_rep_ratio for rep_len 10, 1, 2, 3), WordRepetitionFilter in Data-Juicer 1.6.1.
    const CASES: &[(&str, [f64; 4])] = &[
        ("", [0.0, 0.0, 0.0, 0.0]),
        ("   ", [0.0, 0.0, 0.0, 0.0]),
        ("\t\n", [0.0, 0.0, 0.0, 0.0]),
        ("Hello world!", [0.0, 0.0, 0.0, 0.0]),
        ("Hello, world! This is a test.", [0.0, 0.0, 0.0, 0.0]),
        ("a - b -- c ... d", [0.0, 0.0, 0.0, 0.0]),
        ("数据处理 是 一个 测试。", [0.0, 0.0, 0.0, 0.0]),
        ("e\u{301} cafe\u{301} naïve", [0.0, 0.0, 0.0, 0.0]),
        ("😀 😀😀 hi😀 🇨🇳 👍🏽", [0.0, 0.0, 0.0, 0.0]),
        ("مرحبا بالعالم، كيف حالك؟", [0.0, 0.0, 0.0, 0.0]),
        (
            "full\u{3000}width\u{3000}space ｆｕｌｌ",
            [0.0, 0.0, 0.0, 0.0],
        ),
        ("nbsp\u{a0}inside word\u{2003}em", [0.0, 0.0, 0.0, 0.0]),
        ("x\u{1c}y\u{1d}z\u{1e}\u{1f}", [0.0, 0.0, 0.0, 0.0]),
        ("123 456 7.8 9,0", [0.0, 0.0, 0.0, 0.0]),
        ("__init__ --flag", [0.0, 0.0, 0.0, 0.0]),
        ("\u{200b}\u{200b}zero\u{200b} width", [0.0, 0.0, 0.0, 0.0]),
        ("‘quoted’ “double” «guillemets»", [0.0, 0.0, 0.0, 0.0]),
        ("Ⅷ ² ½ ١٢٣ ３", [0.0, 0.0, 0.0, 0.0]),
        ("ǅ ǈ ß ǲ", [0.0, 0.0, 0.0, 0.0]),
        ("\u{301}\u{301}", [0.0, 0.0, 0.0, 0.0]),
        (
            "line1\nline2\rline3\r\nline4",
            [0.0, 0.6666666666666666, 0.0, 0.0],
        ),
        ("①②③ ⑴ ⒈", [0.0, 0.0, 0.0, 0.0]),
        ("aaaaaaaaa b", [0.0, 0.0, 0.0, 0.0]),
        (
            "the the the the the the the the the the the the the the",
            [1.0, 1.0, 1.0, 1.0],
        ),
        ("abcabcabcabcabcabcabcabcabcabcabc", [0.0, 0.0, 0.0, 0.0]),
        (
            "abababababababababababababababababababab",
            [0.0, 0.0, 0.0, 0.0],
        ),
        ("中文中文中文中文中文中文中文", [0.0, 0.0, 0.0, 0.0]),
        ("🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂", [0.0, 0.0, 0.0, 0.0]),
        ("שלום עולם!", [0.0, 0.0, 0.0, 0.0]),
        ("\u{1e030}\u{11bf0} new", [0.0, 0.0, 0.0, 0.0]),
        ("\u{11db0}\u{11de0} u17", [0.0, 0.0, 0.0, 0.0]),
        ("ก\u{e34}น ข\u{e49}าว", [0.0, 0.0, 0.0, 0.0]),
        (
            "#1 (see: [x]) {y} <z> ~w~ |v| ^u^ `t` @s $r %q &p *o +n =m",
            [0.0, 0.0, 0.0, 0.0],
        ),
        ("tab\tsep\tvalues\t", [0.0, 0.0, 0.0, 0.0]),
        ("ａｂｃ！？。、", [0.0, 0.0, 0.0, 0.0]),
        ("�\u{fffc}\u{ad}\u{feff}", [0.0, 0.0, 0.0, 0.0]),
        (
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab",
            [0.0, 0.0, 0.0, 0.0],
        ),
        ("The the THE tHe", [0.0, 1.0, 1.0, 1.0]),
        ("Hello, hello! HELLO. (hello)", [0.0, 1.0, 1.0, 1.0]),
        (
            "\u{130}stanbul istanbul \u{130}STANBUL",
            [0.0, 0.6666666666666666, 0.0, 0.0],
        ),
        ("ΣΑΣ σας Σας", [0.0, 1.0, 1.0, 0.0]),
        ("a\u{a0}b a\u{a0}b a b", [0.0, 0.5, 0.0, 0.0]),
        ("... --- ... !!!", [0.0, 0.0, 0.0, 0.0]),
        ("x\ry x\ry x y", [0.0, 0.5, 0.0, 0.0]),
        (
            "one two three one two three one two three",
            [0.0, 1.0, 1.0, 1.0],
        ),
        (
            "a b c d e f g h i j a b c d e f g h i j k",
            [
                0.16666666666666666,
                0.9523809523809523,
                0.9,
                0.8421052631578947,
            ],
        ),
        (
            "a b c d e f g h i j k l m n o p q r s t u v w x y z",
            [0.0, 0.0, 0.0, 0.0],
        ),
        ("中文 中文 中文", [0.0, 1.0, 1.0, 0.0]),
        ("😀word 😀word word😀 word", [0.0, 1.0, 1.0, 1.0]),
        ("ﬁne FINE ﬁne", [0.0, 0.6666666666666666, 0.0, 0.0]),
        ("ß SS ss ẞ", [0.0, 1.0, 0.0, 0.0]),
        ("\u{2028}a\u{2028} a", [0.0, 0.0, 0.0, 0.0]),
        ("a\u{3000}b a\u{3000}b", [0.0, 1.0, 0.0, 0.0]),
        ("1 2 3 1 2 3", [0.0, 0.0, 0.0, 0.0]),
        ("a1 a1 a1 b2", [0.0, 0.75, 0.6666666666666666, 0.0]),
        ("the\tcat\nthe\tcat\nthe cat", [0.0, 1.0, 1.0, 1.0]),
        (
            "spam spam spam spam spam spam spam spam spam spam spam spam spam spam spam spam spam spam spam spam spam spam spam spam spam spam spam spam spam spam",
            [1.0, 1.0, 1.0, 1.0],
        ),
        (
            "w0 w1 w2 w3 w4 w5 w6 w0 w1 w2 w3 w4 w5 w6 w0 w1 w2 w3 w4 w5 w6 w0 w1 w2 w3 w4 w5 w6 w0 w1 w2 w3 w4 w5 w6 w0 w1 w2 w3 w4 w5 w6 w0 w1 w2 w3 w4 w5 w6 w0 w1 w2 w3 w4 w5 w6 w0 w1 w2 w3 w4 w5 w6 w0 w1 w2 w3 w4 w5 w6 w0 w1 w2 w3 w4 w5 w6 w0 w1 w2 w3 w4 w5 w6 w0 w1 w2 w3 w4 w5 w6 w0 w1 w2 w3 w4 w5 w6 w0 w1",
            [1.0, 1.0, 1.0, 1.0],
        ),
    ];

    /// word_rep_ratio of `big_texts()` and the two [`words_big`] texts (rows) for rep_len 10, 1,
    /// 2, 3 (columns).
    const BIG: [[f64; 4]; 5] = [
        [1.0, 1.0, 1.0, 1.0],
        [0.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, 0.0],
        [0.0, 1.0, 0.27914263808793627, 0.0007333822254816988],
        [0.0, 1.0, 0.27914263808793627, 0.0007333822254816988],
    ];

    /// 30000 words `w{(x >> 16) % 300}x` from the LCG `x = (x * 1103515245 + 12345) % 2**31` (x0 = 1),
    /// joined by spaces, and its upper-cased copy with the spaces replaced by newlines.
    fn words_big() -> [String; 2] {
        let mut x = 1u64;
        let a: Vec<String> = (0..30000)
            .map(|_| {
                x = (x * 1103515245 + 12345) % (1 << 31);
                format!("w{}x", (x >> 16) % 300)
            })
            .collect();
        let a = a.join(" ");
        let b = a.to_uppercase().replace(' ', "\n");
        [a, b]
    }

    #[test]
    fn word_rep_ratio_matches_data_juicer() {
        assert!(CASES.len() > 50);
        for (text, want) in CASES {
            for (n, want) in REP_LENS.iter().zip(want) {
                assert_eq!(word_rep_ratio(text, *n), *want, "rep_len {n} text {text:?}");
            }
        }
    }

    #[test]
    fn long_texts() {
        let [l, c, x] = big_texts();
        let [a, b] = words_big();
        for (text, want) in [l, c, x, a, b].iter().zip(BIG) {
            for (n, want) in REP_LENS.iter().zip(want) {
                assert_eq!(word_rep_ratio(text, *n), want, "rep_len {n}");
            }
        }
    }

    /// Packed n-gram keys (few distinct words or small n) and the slice-keyed fallback (many
    /// distinct words and a large n) both equal a direct count.
    #[test]
    fn packed_and_fallback_counts_equal_direct_counts() {
        let direct = |text: &str, n: usize| {
            let words = refined_words(text);
            let mut freq: std::collections::HashMap<Vec<&str>, u64> = Default::default();
            for w in words.windows(n) {
                *freq
                    .entry(w.iter().map(|w| w.as_ref()).collect())
                    .or_default() += 1;
            }
            let repeated: u64 = freq.values().filter(|&&c| c > 1).sum();
            repeated as f64 / (words.len() - n + 1) as f64
        };
        let few = "a b c d a b c d e a b c d a b c d e f ".repeat(40);
        let many: String = (0..6000).map(|i| format!("w{} ", i % 5000)).collect();
        // Runs of repeated words between words that occur once (renumbered runs), and more
        // repeated words than pack (the slice-keyed fallback).
        let runs: String = (0..12000)
            .map(|i| {
                if i % 7 == 0 {
                    format!("u{i} ")
                } else {
                    format!("w{} ", i % 3000)
                }
            })
            .collect();
        let wide: String = (0..20000).map(|i| format!("w{} ", i % 9000)).collect();
        // More distinct words than pack, none repeated (digits refine away: letters only).
        let distinct: String = (0..5000)
            .map(|i: u32| {
                let letter = |d: u32| char::from(b'a' + (d % 26) as u8);
                format!("k{}{}{} ", letter(i / 676), letter(i / 26), letter(i))
            })
            .collect();
        for text in [&few, &many, &runs, &wide, &distinct] {
            for n in [1, 2, 10, 30] {
                assert_eq!(word_rep_ratio(text, n), direct(text, n), "n={n}");
            }
        }
    }

    /// Lower-casing the whole text first gives the words that lower-casing each word gives.
    #[test]
    fn whole_text_refinement_equals_per_word_refinement() {
        let bigs = big_texts();
        let extra = [
            "ΟΔΟΣ ΟΔΟΣ. ΣΑΣ\tΣ Σ\nAΣ'Σ",
            "İSTANBUL ǅ ß ﬃ Straße",
            "(THE) «QUICK» fox!",
        ];
        let texts = CASES
            .iter()
            .map(|(t, _)| *t)
            .chain(extra)
            .chain(bigs.iter().map(String::as_str));
        for text in texts {
            let per_word = refined_words(text);
            let per_word: Vec<&str> = per_word.iter().map(|w| w.as_ref()).collect();
            with_refined_words(&WordSource::Whitespace, text, |w| {
                assert_eq!(w, per_word, "{text:?}")
            });
        }
    }

    /// The pieces of a text lower-cased at once give the words that lower-casing each piece
    /// gives, for pieces of ASCII and ▁ and for others.
    #[test]
    fn pieces_refined_at_once_equal_per_piece_refinement() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/models");
        let (sp, _) = crate::models::sentencepiece("en", Some(&dir)).unwrap();
        let texts = [
            "The QUICK brown Fox, (jumps) over... THE lazy dog! 42 x-Ray",
            "ALL CAPS TEXT.\nWith Lines\tand TABS --- \"quoted\" 'single'",
            "lower only text here",
            "Straße ΟΔΟΣ İSTANBUL naïve CAFÉ",
            "",
        ];
        let mut fast = 0;
        for text in texts {
            let per_piece = with_piece_view(&sp, text, |pieces| {
                fast += usize::from(
                    pieces
                        .joined
                        .chars()
                        .all(|c| c.is_ascii() || c == '\u{2581}'),
                );
                let refined = refine(&mut pieces.iter());
                refined.iter().map(|w| w.to_string()).collect::<Vec<_>>()
            });
            with_refined_words(&WordSource::Pieces(sp.clone()), text, |w| {
                assert_eq!(w, per_piece, "{text:?}")
            });
        }
        assert!(fast >= 3, "{fast} texts took the ASCII path");
    }

    #[test]
    fn refined_words_lower_and_strip() {
        assert_eq!(
            refined_words("  The, (QUICK) brown\tfox!\n... 42 ΣΑΣ"),
            vec!["the", "quick", "brown", "fox", "σας"]
        );
        assert!(refined_words("").is_empty());
        assert!(refined_words(" \t\n ").is_empty());
    }

    #[test]
    fn through_udf_and_params() {
        let op = build(
            "word_repetition_filter",
            json!({"rep_len": 2, "max_ratio": 0.9, "lang": "zh"}),
        )
        .unwrap();
        let Operator::Filter(f) = &op else { panic!() };
        assert_eq!(f.stat_key, "word_rep_ratio");
        assert_eq!((f.range.min, f.range.max), (Some(0.0), Some(0.9)));
        // "a b a b c": bigrams ab ba ab bc -> "a b" x2 repeated -> 2/4. "x y x y x y z": bigrams
        // xy yx xy yx xy yz -> 5/6 = 0.8333333333333334, 0.8333333333 after the ujson round trip.
        assert_eq!(word_rep_ratio("x y x y x y z", 2), 0.8333333333333334);
        assert_eq!(
            float_stats(
                &op,
                &[Some("a b a b c"), Some("x y x y x y z"), Some("a"), None]
            ),
            vec![Some(0.5), Some(0.8333333333), Some(0.0), None]
        );
        let Operator::Filter(f) = build("word_repetition_filter", json!({})).unwrap() else {
            panic!()
        };
        assert_eq!((f.range.min, f.range.max), (Some(0.0), Some(0.5)));

        let e = build(
            "word_repetition_filter",
            json!({"tokenization": true, "lang": "qq"}),
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("operator word_repetition_filter: model file qq.sp.model not found"),
            "{e}"
        );
        for bad in [json!(0), json!(-3), json!(null)] {
            let e = build("word_repetition_filter", json!({"rep_len": bad})).unwrap_err();
            assert_eq!(e.param(), "rep_len");
            assert!(matches!(e, ParamError::Invalid { .. }), "{e:?}");
        }
        let e = build("word_repetition_filter", json!({"rep_len": 2.5})).unwrap_err();
        assert!(matches!(e, ParamError::WrongType { .. }), "{e:?}");
        let e = build("word_repetition_filter", json!({"lang": 1})).unwrap_err();
        assert!(matches!(e, ParamError::WrongType { .. }), "{e:?}");
    }
}
