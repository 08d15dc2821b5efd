//! `character_repetition_filter`: character n-gram repetition ratio.

use std::sync::Arc;

use foldhash::{HashMap, HashMapExt};
use serde_json::json;

use crate::filter::build_filter;
use crate::filter::gram_count::{GramCounts, with_gram_counts};
use crate::operator::Operator;
use crate::params::{ParamError, ParamSpec, ParamType, Params};
use crate::spec::{ModelUse, OpKind, OpSpec};
use crate::text::char_boundaries;
use crate::udf::{StatType, StatValue, TextStat};

/// `char_rep_ratio` with n-gram length `n` (> 0), as Data-Juicer computes it: count every
/// overlapping n-code-point substring; with the counts sorted descending, take
/// `k = min(int(sqrt(#distinct)), #distinct - #singletons)` and return
/// `sum(top k counts) / sum(all counts)`; 0.0 when the text is shorter than `n`.
pub fn char_rep_ratio(text: &str, n: usize) -> f64 {
    assert!(n > 0, "rep_len must be positive");
    let len = if text.is_ascii() {
        text.len()
    } else {
        text.chars().count()
    };
    if len < n {
        return 0.0;
    }
    let total = len - n + 1;
    with_gram_counts(text, n, |counts| top_counts_ratio(counts, total))
        .unwrap_or_else(|| char_rep_ratio_by_hash(text, n, total))
}

/// The ratio for texts whose `total` n-grams do not pack into 128 bits (many distinct code points
/// and a large `n`): rolling hashes, checked against the text.
fn char_rep_ratio_by_hash(text: &str, n: usize, total: usize) -> f64 {
    let offsets = if text.is_ascii() {
        Vec::new()
    } else {
        char_boundaries(text)
    };
    let at = |i: usize| if offsets.is_empty() { i } else { offsets[i] };
    let gram = |i: usize| &text[at(i)..at(i + n)];
    let mut counts = gram_counts_by_rolling_hash(text, n, total, &gram)
        .unwrap_or_else(|| gram_counts_by_text(total, &gram));
    top_counts_ratio(
        GramCounts {
            counts: &mut counts,
            unique: 0,
        },
        total,
    )
}

/// Sum of the top `k = min(int(sqrt(#distinct)), #distinct - #singletons)` counts over `total`.
/// Those k n-grams all repeat, so they are among `grams.counts`.
fn top_counts_ratio(grams: GramCounts<'_>, total: usize) -> f64 {
    let distinct = grams.distinct();
    // int(np.sqrt(len)) on a float, as in Python.
    let k = ((distinct as f64).sqrt() as usize).min(distinct - grams.singletons());
    if k == 0 {
        return 0.0;
    }
    let counts = grams.counts;
    counts.select_nth_unstable_by(k - 1, |a, b| b.cmp(a));
    let top: u64 = counts[..k].iter().map(|&c| c as u64).sum();
    top as f64 / total as f64
}

/// The count of each distinct n-gram, keyed by the n-grams themselves.
fn gram_counts_by_text<'a>(total: usize, gram: &impl Fn(usize) -> &'a str) -> Vec<u32> {
    let mut freq: HashMap<&str, u32> = HashMap::with_capacity(total.min(1 << 20));
    for i in 0..total {
        *freq.entry(gram(i)).or_insert(0) += 1;
    }
    freq.into_values().collect()
}

/// The count of each distinct n-gram, keyed by a polynomial rolling hash of its code points
/// (hashing a 64-bit key instead of a string at every position). A hash already seen is checked
/// against the n-gram that first had it: on a collision this gives up (`None`) and the caller
/// counts by text, so the result is always exact.
fn gram_counts_by_rolling_hash<'a>(
    text: &'a str,
    n: usize,
    total: usize,
    gram: &impl Fn(usize) -> &'a str,
) -> Option<Vec<u32>> {
    const BASE: u64 = 0x100_0000_01b3;
    let top = (1..n).fold(1u64, |p, _| p.wrapping_mul(BASE)); // BASE^(n-1)
    let chars: Vec<u32> = text.chars().map(u32::from).collect();
    let mut h = chars[..n].iter().fold(0u64, |h, &c| {
        h.wrapping_mul(BASE).wrapping_add(u64::from(c))
    });
    // hash -> (index of the first n-gram with it, count)
    let mut freq: HashMap<u64, (u32, u32)> = HashMap::with_capacity(total.min(1 << 20));
    for i in 0..total {
        if i > 0 {
            h = h
                .wrapping_sub(u64::from(chars[i - 1]).wrapping_mul(top))
                .wrapping_mul(BASE)
                .wrapping_add(u64::from(chars[i + n - 1]));
        }
        let slot = freq.entry(h).or_insert((i as u32, 0));
        if slot.1 > 0 && slot.0 as usize != i && gram(slot.0 as usize) != gram(i) {
            return None;
        }
        slot.1 += 1;
    }
    Some(freq.into_values().map(|(_, c)| c).collect())
}

#[derive(Debug)]
struct CharRepRatio {
    n: usize,
}

impl TextStat for CharRepRatio {
    fn stat_type(&self) -> StatType {
        StatType::Float64
    }
    fn compute(&self, text: &str) -> StatValue {
        StatValue::Float(char_rep_ratio(text, self.n))
    }
}

pub(crate) fn character_repetition_spec() -> OpSpec {
    OpSpec {
        name: "character_repetition_filter",
        kind: OpKind::Filter,
        model_use: ModelUse::None,
        params: || {
            vec![
                ParamSpec::new(
                    "rep_len",
                    ParamType::Int,
                    json!(10),
                    "character n-gram length (positive)",
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
        build: build_character_repetition,
        doc: "Keep samples whose character n-gram repetition ratio is within [min_ratio, max_ratio].",
    }
}

fn build_character_repetition(p: &Params) -> Result<Operator, ParamError> {
    // pydantic PositiveInt in Data-Juicer.
    let n = match p.int("rep_len") {
        Some(n) if n > 0 => n as usize,
        Some(n) => return Err(p.invalid("rep_len", format!("must be a positive integer, got {n}"))),
        None => return Err(p.invalid("rep_len", "must be a positive integer, got null")),
    };
    Ok(build_filter(
        p,
        "char_rep_ratio",
        Arc::new(CharRepRatio { n }),
        p.float("min_ratio"),
        p.float("max_ratio"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{build, float_stats};
    use serde_json::json;

    #[test]
    fn rolling_hash_counts_equal_text_counts() {
        let texts = [
            "abcdefghij".repeat(30),
            "ha".repeat(100),
            "Straße ünïcödé 中文字符 🙂🙂🙂 straße ünïcödé".to_string(),
            "the quick brown fox jumps over the lazy dog; the quick brown fox".to_string(),
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab".to_string(),
        ];
        for text in &texts {
            for n in [1, 2, 5, 10] {
                let offsets = char_boundaries(text);
                let len = offsets.len() - 1;
                if len < n {
                    continue;
                }
                let gram = |i: usize| &text[offsets[i]..offsets[i + n]];
                let total = len - n + 1;
                let mut rolling = gram_counts_by_rolling_hash(text, n, total, &gram).unwrap();
                let mut exact = gram_counts_by_text(total, &gram);
                rolling.sort_unstable();
                exact.sort_unstable();
                assert_eq!(rolling, exact, "{text:?} n={n}");
            }
        }
    }

    const REP_LENS: [usize; 4] = [10, 1, 3, 50];

    /// (text, char_rep_ratio for rep_len 10, 1, 3, 50), CharacterRepetitionFilter in
    /// Data-Juicer 1.6.1.
    const CASES: &[(&str, [f64; 4])] = &[
        ("", [0.0, 0.0, 0.0, 0.0]),
        ("   ", [0.0, 1.0, 0.0, 0.0]),
        ("\t\n", [0.0, 0.0, 0.0, 0.0]),
        ("Hello world!", [0.0, 0.4166666666666667, 0.0, 0.0]),
        (
            "Hello, world! This is a test.",
            [0.0, 0.4482758620689655, 0.07407407407407407, 0.0],
        ),
        ("a - b -- c ... d", [0.0, 0.5625, 0.0, 0.0]),
        (
            "数据处理 是 一个 测试。",
            [0.0, 0.23076923076923078, 0.0, 0.0],
        ),
        (
            "e\u{301} cafe\u{301} naïve",
            [0.0, 0.5, 0.16666666666666666, 0.0],
        ),
        ("😀 😀😀 hi😀 🇨🇳 👍🏽", [0.0, 0.5714285714285714, 0.0, 0.0]),
        (
            "مرحبا بالعالم، كيف حالك؟",
            [0.0, 0.4166666666666667, 0.0, 0.0],
        ),
        (
            "full\u{3000}width\u{3000}space ｆｕｌｌ",
            [0.0, 0.2857142857142857, 0.0, 0.0],
        ),
        (
            "nbsp\u{a0}inside word\u{2003}em",
            [0.0, 0.3157894736842105, 0.0, 0.0],
        ),
        ("x\u{1c}y\u{1d}z\u{1e}\u{1f}", [0.0, 0.0, 0.0, 0.0]),
        ("123 456 7.8 9,0", [0.0, 0.2, 0.0, 0.0]),
        ("__init__ --flag", [0.0, 0.5333333333333333, 0.0, 0.0]),
        (
            "\u{200b}\u{200b}zero\u{200b} width",
            [0.0, 0.23076923076923078, 0.0, 0.0],
        ),
        ("‘quoted’ “double” «guillemets»", [0.0, 0.4, 0.0, 0.0]),
        ("Ⅷ ² ½ ١٢٣ ３", [0.0, 0.36363636363636365, 0.0, 0.0]),
        ("ǅ ǈ ß ǲ", [0.0, 0.42857142857142855, 0.0, 0.0]),
        ("\u{301}\u{301}", [0.0, 1.0, 0.0, 0.0]),
        (
            "line1\nline2\rline3\r\nline4",
            [0.0, 0.5, 0.45454545454545453, 0.0],
        ),
        ("①②③ ⑴ ⒈", [0.0, 0.2857142857142857, 0.0, 0.0]),
        (
            "aaaaaaaaa b",
            [0.0, 0.8181818181818182, 0.7777777777777778, 0.0],
        ),
        (
            "the the the the the the the the the the the the the the",
            [
                0.5217391304347826,
                0.509090909090909,
                0.5094339622641509,
                0.6666666666666666,
            ],
        ),
        (
            "abcabcabcabcabcabcabcabcabcabcabc",
            [
                0.3333333333333333,
                0.3333333333333333,
                0.3548387096774194,
                0.0,
            ],
        ),
        (
            "abababababababababababababababababababab",
            [0.5161290322580645, 0.5, 0.5, 0.0],
        ),
        ("中文中文中文中文中文中文中文", [0.6, 0.5, 0.5, 0.0]),
        ("🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂", [1.0, 1.0, 1.0, 0.0]),
        ("שלום עולם!", [0.0, 0.4, 0.0, 0.0]),
        ("\u{1e030}\u{11bf0} new", [0.0, 0.0, 0.0, 0.0]),
        ("\u{11db0}\u{11de0} u17", [0.0, 0.0, 0.0, 0.0]),
        ("ก\u{e34}น ข\u{e49}าว", [0.0, 0.0, 0.0, 0.0]),
        (
            "#1 (see: [x]) {y} <z> ~w~ |v| ^u^ `t` @s $r %q &p *o +n =m",
            [0.0, 0.43103448275862066, 0.0, 0.0],
        ),
        ("tab\tsep\tvalues\t", [0.0, 0.4666666666666667, 0.0, 0.0]),
        ("ａｂｃ！？。、", [0.0, 0.0, 0.0, 0.0]),
        ("�\u{fffc}\u{ad}\u{feff}", [0.0, 0.0, 0.0, 0.0]),
        (
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab",
            [
                0.9866666666666667,
                0.9880952380952381,
                0.9878048780487805,
                0.9714285714285714,
            ],
        ),
    ];

    #[test]
    fn char_rep_ratio_matches_data_juicer() {
        for (text, want) in CASES {
            for (n, want) in REP_LENS.iter().zip(want) {
                assert_eq!(char_rep_ratio(text, *n), *want, "rep_len {n} text {text:?}");
            }
        }
    }

    /// The packed-key counts and the checked rolling hashes (the fallback) agree.
    #[test]
    fn packed_and_hashed_counts_agree() {
        let bigs = crate::test_support::big_texts();
        let texts = CASES
            .iter()
            .map(|(t, _)| *t)
            .chain(bigs.iter().map(String::as_str));
        for text in texts {
            let len = text.chars().count();
            for n in [1, 3, 10, 16] {
                if len >= n {
                    let hashed = char_rep_ratio_by_hash(text, n, len - n + 1);
                    assert_eq!(char_rep_ratio(text, n), hashed, "rep_len {n} text {text:?}");
                }
            }
        }
    }

    #[test]
    fn long_texts() {
        let want: [[f64; 3]; 4] = [
            [0.1785960736466282, 0.00705063455711014, 1.0],
            [0.39286, 0.00705, 1.0],
            [0.2143142862857257, 0.007050141002820056, 1.0],
            [0.17858750787886063, 0.007053456193534832, 1.0],
        ];
        let bigs = crate::test_support::big_texts();
        for (n, want) in REP_LENS.iter().zip(want) {
            for (text, want) in bigs.iter().zip(want) {
                assert_eq!(char_rep_ratio(text, *n), want, "rep_len {n}");
            }
        }
    }

    #[test]
    fn through_udf_and_params() {
        let op = build(
            "character_repetition_filter",
            json!({"rep_len": 2, "max_ratio": 0.9}),
        )
        .unwrap();
        let Operator::Filter(f) = &op else { panic!() };
        assert_eq!(f.stat_key, "char_rep_ratio");
        assert_eq!((f.range.min, f.range.max), (Some(0.0), Some(0.9)));
        // "aaaa": bigram "aa" x3 -> k = min(1, 1) = 1 -> 3/3
        assert_eq!(
            float_stats(&op, &[Some("aaaa"), Some("a"), None]),
            vec![Some(1.0), Some(0.0), None]
        );
        let Operator::Filter(f) = build("character_repetition_filter", json!({})).unwrap() else {
            panic!()
        };
        assert_eq!((f.range.min, f.range.max), (Some(0.0), Some(0.5)));

        for bad in [json!(0), json!(-3), json!(null)] {
            let e = build("character_repetition_filter", json!({"rep_len": bad})).unwrap_err();
            assert_eq!(e.param(), "rep_len");
            assert!(matches!(e, ParamError::Invalid { .. }), "{e:?}");
        }
        let e = build("character_repetition_filter", json!({"rep_len": 2.5})).unwrap_err();
        assert!(matches!(e, ParamError::WrongType { .. }), "{e:?}");
    }
}
