//! Character-ratio filters: `alphanumeric_filter` and `special_characters_filter`.

use std::sync::Arc;

use serde_json::json;

use crate::PY_MAXSIZE;
use crate::filter::build_filter;
use crate::models::{self, HfTokenizer};
use crate::operator::Operator;
use crate::params::{ParamError, ParamSpec, ParamType, Params};
use crate::spec::{ModelUse, OpKind, OpSpec};
use crate::text::{CharSet, is_py_alpha, py_alnum, special_characters};
use crate::udf::{StatType, StatValue, TextStat};

/// Share of the code points of `text` in `set`; 0.0 for an empty text.
fn char_ratio(text: &str, set: &CharSet) -> f64 {
    match set.count_in(text) {
        (_, 0) => 0.0,
        (hits, total) => hits as f64 / total as f64,
    }
}

/// `alphanumeric_filter`'s `alnum_ratio`: characters with Python `str.isalnum()` / `len(text)`.
pub fn alnum_ratio(text: &str) -> f64 {
    char_ratio(text, py_alnum())
}

/// `special_characters_filter`'s `special_char_ratio`: characters in Data-Juicer's
/// `SPECIAL_CHARACTERS` / `len(text)`.
pub fn special_char_ratio(text: &str) -> f64 {
    char_ratio(text, special_characters())
}

#[derive(Debug)]
struct AlnumRatio;

impl TextStat for AlnumRatio {
    fn stat_type(&self) -> StatType {
        StatType::Float64
    }
    fn compute(&self, text: &str) -> StatValue {
        StatValue::Float(alnum_ratio(text))
    }
}

/// `alphanumeric_filter`'s `alpha_token_ratio` (tokenization=true): characters with Python
/// `str.isalpha()` / the number of Hugging Face tokens (`tokenizer.tokenize(text)`); 0.0 without
/// tokens.
#[derive(Debug)]
struct AlphaTokenRatio {
    tokenizer: Arc<HfTokenizer>,
}

impl TextStat for AlphaTokenRatio {
    fn stat_type(&self) -> StatType {
        StatType::Float64
    }
    fn compute(&self, text: &str) -> StatValue {
        let alpha = text.chars().filter(|&c| is_py_alpha(c)).count();
        let tokens = self.tokenizer.count_tokens(text);
        StatValue::Float(if tokens == 0 {
            0.0
        } else {
            alpha as f64 / tokens as f64
        })
    }
}

/// The tokenizer Data-Juicer's `alphanumeric_filter` loads for tokenization=true.
const ALPHANUMERIC_TOKENIZER: &str = "EleutherAI/pythia-6.9b-deduped";

#[derive(Debug)]
struct SpecialCharRatio;

impl TextStat for SpecialCharRatio {
    fn stat_type(&self) -> StatType {
        StatType::Float64
    }
    fn compute(&self, text: &str) -> StatValue {
        StatValue::Float(special_char_ratio(text))
    }
}

pub(crate) fn alphanumeric_spec() -> OpSpec {
    OpSpec {
        name: "alphanumeric_filter",
        kind: OpKind::Filter,
        model_use: ModelUse::WithSomeParams,
        params: || {
            vec![
                ParamSpec::new(
                    "tokenization",
                    ParamType::Bool,
                    json!(false),
                    "ratio of alphabetic characters to tokens of the Hugging Face tokenizer \
                     EleutherAI/pythia-6.9b-deduped (stat alpha_token_ratio)",
                ),
                ParamSpec::new(
                    "min_ratio",
                    ParamType::Float,
                    json!(0.25),
                    "minimum alphanumeric ratio",
                ),
                ParamSpec::new(
                    "max_ratio",
                    ParamType::Float,
                    json!(PY_MAXSIZE),
                    "maximum alphanumeric ratio",
                ),
            ]
        },
        build: build_alphanumeric,
        doc: "Keep samples whose share of alphanumeric characters (Python str.isalnum) is within \
              [min_ratio, max_ratio]; tokenization=true uses the ratio of alphabetic characters to \
              EleutherAI/pythia-6.9b-deduped tokens (alpha_token_ratio) instead.",
    }
}

fn build_alphanumeric(p: &Params) -> Result<Operator, ParamError> {
    if p.bool("tokenization") {
        let (tokenizer, _) = models::hf_tokenizer(ALPHANUMERIC_TOKENIZER, models::model_dir_of(p))
            .map_err(|e| p.model_error(e))?;
        return Ok(build_filter(
            p,
            "alpha_token_ratio",
            Arc::new(AlphaTokenRatio { tokenizer }),
            p.float("min_ratio"),
            p.float("max_ratio"),
        ));
    }
    Ok(build_filter(
        p,
        "alnum_ratio",
        Arc::new(AlnumRatio),
        p.float("min_ratio"),
        p.float("max_ratio"),
    ))
}

pub(crate) fn special_characters_spec() -> OpSpec {
    OpSpec {
        name: "special_characters_filter",
        kind: OpKind::Filter,
        model_use: ModelUse::None,
        params: || {
            vec![
                ParamSpec::new(
                    "min_ratio",
                    ParamType::Float,
                    json!(0.0),
                    "minimum special-character ratio",
                ),
                ParamSpec::new(
                    "max_ratio",
                    ParamType::Float,
                    json!(0.25),
                    "maximum special-character ratio",
                ),
            ]
        },
        build: build_special_characters,
        doc: "Keep samples whose share of special characters (punctuation, digits, whitespace, \
              symbols, emoji) is within [min_ratio, max_ratio].",
    }
}

fn build_special_characters(p: &Params) -> Result<Operator, ParamError> {
    Ok(build_filter(
        p,
        "special_char_ratio",
        Arc::new(SpecialCharRatio),
        p.float("min_ratio"),
        p.float("max_ratio"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::StatRange;
    use crate::test_support::{big_texts, build, float_stats};
    use serde_json::json;

    /// (text, AlphanumericFilter().compute_stats_batched alnum_ratio), Data-Juicer 1.6.1.
    const ALNUM_CASES: &[(&str, f64)] = &[
        ("", 0.0),
        ("   ", 0.0),
        ("\t\n", 0.0),
        ("Hello world!", 0.8333333333333334),
        ("Hello, world! This is a test.", 0.7241379310344828),
        ("a - b -- c ... d", 0.25),
        ("数据处理 是 一个 测试。", 0.6923076923076923),
        ("e\u{301} cafe\u{301} naïve", 0.7142857142857143),
        ("😀 😀😀 hi😀 🇨🇳 👍🏽", 0.14285714285714285),
        ("مرحبا بالعالم، كيف حالك؟", 0.7916666666666666),
        (
            "full\u{3000}width\u{3000}space ｆｕｌｌ",
            0.8571428571428571,
        ),
        ("nbsp\u{a0}inside word\u{2003}em", 0.8421052631578947),
        ("x\u{1c}y\u{1d}z\u{1e}\u{1f}", 0.42857142857142855),
        ("123 456 7.8 9,0", 0.6666666666666666),
        ("__init__ --flag", 0.5333333333333333),
        ("\u{200b}\u{200b}zero\u{200b} width", 0.6923076923076923),
        ("‘quoted’ “double” «guillemets»", 0.7333333333333333),
        ("Ⅷ ² ½ ١٢٣ ３", 0.6363636363636364),
        ("ǅ ǈ ß ǲ", 0.5714285714285714),
        ("\u{301}\u{301}", 0.0),
        ("line1\nline2\rline3\r\nline4", 0.8333333333333334),
        ("①②③ ⑴ ⒈", 0.7142857142857143),
        ("aaaaaaaaa b", 0.9090909090909091),
        (
            "the the the the the the the the the the the the the the",
            0.7636363636363637,
        ),
        ("abcabcabcabcabcabcabcabcabcabcabc", 1.0),
        ("abababababababababababababababababababab", 1.0),
        ("中文中文中文中文中文中文中文", 1.0),
        ("🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂", 0.0),
        ("שלום עולם!", 0.8),
        ("\u{1e030}\u{11bf0} new", 0.5),
        ("\u{11db0}\u{11de0} u17", 0.5),
        ("ก\u{e34}น ข\u{e49}าว", 0.625),
        (
            "#1 (see: [x]) {y} <z> ~w~ |v| ^u^ `t` @s $r %q &p *o +n =m",
            0.3103448275862069,
        ),
        ("tab\tsep\tvalues\t", 0.8),
        ("ａｂｃ！？。、", 0.42857142857142855),
        ("�\u{fffc}\u{ad}\u{feff}", 0.0),
        (
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab",
            1.0,
        ),
    ];

    /// (text, SpecialCharactersFilter() special_char_ratio), Data-Juicer 1.6.1.
    const SPECIAL_CASES: &[(&str, f64)] = &[
        ("", 0.0),
        ("   ", 1.0),
        ("\t\n", 1.0),
        ("Hello world!", 0.16666666666666666),
        ("Hello, world! This is a test.", 0.27586206896551724),
        ("a - b -- c ... d", 0.75),
        ("数据处理 是 一个 测试。", 0.38461538461538464),
        ("e\u{301} cafe\u{301} naïve", 0.14285714285714285),
        ("😀 😀😀 hi😀 🇨🇳 👍🏽", 0.7142857142857143),
        ("مرحبا بالعالم، كيف حالك؟", 0.16666666666666666),
        (
            "full\u{3000}width\u{3000}space ｆｕｌｌ",
            0.14285714285714285,
        ),
        ("nbsp\u{a0}inside word\u{2003}em", 0.10526315789473684),
        ("x\u{1c}y\u{1d}z\u{1e}\u{1f}", 0.0),
        ("123 456 7.8 9,0", 1.0),
        ("__init__ --flag", 0.4666666666666667),
        ("\u{200b}\u{200b}zero\u{200b} width", 0.3076923076923077),
        ("‘quoted’ “double” «guillemets»", 0.26666666666666666),
        ("Ⅷ ² ½ ١٢٣ ３", 0.5454545454545454),
        ("ǅ ǈ ß ǲ", 0.42857142857142855),
        ("\u{301}\u{301}", 0.0),
        ("line1\nline2\rline3\r\nline4", 0.3333333333333333),
        ("①②③ ⑴ ⒈", 0.2857142857142857),
        ("aaaaaaaaa b", 0.09090909090909091),
        (
            "the the the the the the the the the the the the the the",
            0.23636363636363636,
        ),
        ("abcabcabcabcabcabcabcabcabcabcabc", 0.0),
        ("abababababababababababababababababababab", 0.0),
        ("中文中文中文中文中文中文中文", 0.0),
        ("🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂", 1.0),
        ("שלום עולם!", 0.2),
        ("\u{1e030}\u{11bf0} new", 0.16666666666666666),
        ("\u{11db0}\u{11de0} u17", 0.5),
        ("ก\u{e34}น ข\u{e49}าว", 0.125),
        (
            "#1 (see: [x]) {y} <z> ~w~ |v| ^u^ `t` @s $r %q &p *o +n =m",
            0.7068965517241379,
        ),
        ("tab\tsep\tvalues\t", 0.2),
        ("ａｂｃ！？。、", 0.5714285714285714),
        ("�\u{fffc}\u{ad}\u{feff}", 1.0),
        (
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab",
            0.0,
        ),
    ];

    #[test]
    fn alnum_ratio_matches_data_juicer() {
        for (text, want) in ALNUM_CASES {
            assert_eq!(alnum_ratio(text), *want, "text {text:?}");
        }
        let want = [0.78572, 1.0, 1.0];
        for (text, want) in big_texts().iter().zip(want) {
            assert_eq!(alnum_ratio(text), want);
        }
    }

    #[test]
    fn special_char_ratio_matches_data_juicer() {
        for (text, want) in SPECIAL_CASES {
            assert_eq!(special_char_ratio(text), *want, "text {text:?}");
        }
        let want = [0.21428, 0.00015, 0.0];
        for (text, want) in big_texts().iter().zip(want) {
            assert_eq!(special_char_ratio(text), want);
        }
    }

    #[test]
    fn through_udf_wrappers() {
        let op = build("alphanumeric_filter", json!({})).unwrap();
        let Operator::Filter(f) = &op else { panic!() };
        assert_eq!(f.stat_key, "alnum_ratio");
        assert_eq!(
            f.range,
            StatRange {
                min: Some(0.25),
                max: Some(PY_MAXSIZE as f64),
                min_closed: true,
                max_closed: true,
                reversed: false
            }
        );
        assert_eq!(
            float_stats(&op, &[Some("ab!!"), None, Some("")]),
            vec![Some(0.5), None, Some(0.0)]
        );

        let op = build(
            "special_characters_filter",
            json!({"min_ratio": 0, "max_ratio": 0.5, "reversed_range": true}),
        )
        .unwrap();
        let Operator::Filter(f) = &op else { panic!() };
        assert_eq!(f.stat_key, "special_char_ratio");
        assert_eq!(
            f.range,
            StatRange {
                min: Some(0.0),
                max: Some(0.5),
                min_closed: false,
                max_closed: false,
                reversed: true
            }
        );
        // As stored in Data-Juicer's `__dj__stats__` JSON column (`float_stats` applies the round
        // trip, crate::filter::json_stats): 1/3 -> 0.33333333330000003; the ratio itself is exact.
        assert_eq!(special_char_ratio("数据，"), 1.0 / 3.0);
        assert_eq!(
            float_stats(&op, &[Some("a!"), Some("数据，")]),
            vec![Some(0.5), Some(0.33333333330000003)]
        );
        assert_eq!(
            crate::py::pyfloat::ujson_roundtrip(1.0 / 3.0),
            0.33333333330000003
        );
        // Defaults of special_characters_filter.
        let Operator::Filter(f) = build("special_characters_filter", json!({})).unwrap() else {
            panic!()
        };
        assert_eq!((f.range.min, f.range.max), (Some(0.0), Some(0.25)));
    }

    #[test]
    fn param_errors() {
        if models::hf_tokenizer(ALPHANUMERIC_TOKENIZER, None).is_err() {
            let e = build("alphanumeric_filter", json!({"tokenization": true})).unwrap_err();
            assert!(
                e.to_string().starts_with(
                    "operator alphanumeric_filter: Hugging Face tokenizer \
                     EleutherAI/pythia-6.9b-deduped not found (looked for "
                ),
                "{e}"
            );
        }
        let e = build("alphanumeric_filter", json!({"min_ratio": "0.1"})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "parameter `min_ratio` of alphanumeric_filter must be a number, got string \"0.1\""
        );
        let e = build("special_characters_filter", json!({"max_ratio": [1]})).unwrap_err();
        assert!(matches!(e, ParamError::WrongType { .. }));
        // None bounds are skipped, as in get_keep_boolean.
        let Operator::Filter(f) =
            build("special_characters_filter", json!({"max_ratio": null})).unwrap()
        else {
            panic!()
        };
        assert_eq!(f.range.max, None);
    }
}
