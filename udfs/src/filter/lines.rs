//! Line-length filters: `average_line_length_filter` and `maximum_line_length_filter`.
//!
//! Lines are Python's `str.splitlines()` (every Unicode line boundary, `\r\n` as one, no empty
//! last line after a trailing boundary); lengths are in code points.

use std::sync::Arc;

use serde_json::json;

use crate::PY_MAXSIZE;
use crate::filter::build_filter;
use crate::operator::Operator;
use crate::params::{ParamError, ParamSpec, ParamType, Params};
use crate::spec::{ModelUse, OpKind, OpSpec};
use crate::text::py_lines;
use crate::udf::{StatType, StatValue, TextStat};

/// `average_line_length_filter`'s `avg_line_length`: `len(text) / len(text.splitlines())`, where
/// the numerator counts every code point of the text, line breaks included; 0.0 when the text has
/// no lines (it is empty).
pub(crate) fn avg_line_length(text: &str) -> f64 {
    let lines = py_lines(text).count();
    if lines == 0 {
        0.0
    } else {
        text.chars().count() as f64 / lines as f64
    }
}

/// `maximum_line_length_filter`'s `max_line_length`: the longest line of `text.splitlines()` in
/// code points (line breaks excluded); 0 when the text has no lines.
pub(crate) fn max_line_length(text: &str) -> i64 {
    py_lines(text)
        .map(|l| l.chars().count() as i64)
        .max()
        .unwrap_or(0)
}

#[derive(Debug)]
struct AvgLineLength;

impl TextStat for AvgLineLength {
    fn stat_type(&self) -> StatType {
        StatType::Float64
    }
    fn compute(&self, text: &str) -> StatValue {
        StatValue::Float(avg_line_length(text))
    }
}

#[derive(Debug)]
struct MaxLineLength;

impl TextStat for MaxLineLength {
    fn stat_type(&self) -> StatType {
        StatType::Int64
    }
    fn compute(&self, text: &str) -> StatValue {
        StatValue::Int(max_line_length(text))
    }
}

fn len_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::new("min_len", ParamType::Int, json!(10), "minimum line length"),
        ParamSpec::new(
            "max_len",
            ParamType::Int,
            json!(PY_MAXSIZE),
            "maximum line length",
        ),
    ]
}

pub(crate) fn average_line_length_spec() -> OpSpec {
    OpSpec {
        name: "average_line_length_filter",
        kind: OpKind::Filter,
        model_use: ModelUse::None,
        params: len_params,
        build: build_average_line_length,
        doc: "Keep samples whose average line length (code points, line breaks included, over \
              str.splitlines() lines) is within [min_len, max_len].",
    }
}

fn build_average_line_length(p: &Params) -> Result<Operator, ParamError> {
    Ok(build_filter(
        p,
        "avg_line_length",
        Arc::new(AvgLineLength),
        p.int("min_len").map(|v| v as f64),
        p.int("max_len").map(|v| v as f64),
    ))
}

pub(crate) fn maximum_line_length_spec() -> OpSpec {
    OpSpec {
        name: "maximum_line_length_filter",
        kind: OpKind::Filter,
        model_use: ModelUse::None,
        params: len_params,
        build: build_maximum_line_length,
        doc: "Keep samples whose longest line (code points, over str.splitlines() lines) is within \
              [min_len, max_len].",
    }
}

fn build_maximum_line_length(p: &Params) -> Result<Operator, ParamError> {
    Ok(build_filter(
        p,
        "max_line_length",
        Arc::new(MaxLineLength),
        p.int("min_len").map(|v| v as f64),
        p.int("max_len").map(|v| v as f64),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{big_texts, build, float_stats, int_stats};
    use serde_json::json;

    /// (text, avg_line_length, max_line_length) from AverageLineLengthFilter /
    /// MaximumLineLengthFilter in Data-Juicer 1.6.1.
    const CASES: &[(&str, f64, i64)] = &[
        ("", 0.0, 0),
        ("   ", 3.0, 3),
        ("\t\n", 2.0, 1),
        ("Hello world!", 12.0, 12),
        ("Hello, world! This is a test.", 29.0, 29),
        ("a - b -- c ... d", 16.0, 16),
        ("数据处理 是 一个 测试。", 13.0, 13),
        ("e\u{301} cafe\u{301} naïve", 14.0, 14),
        ("😀 😀😀 hi😀 🇨🇳 👍🏽", 14.0, 14),
        ("مرحبا بالعالم، كيف حالك؟", 24.0, 24),
        ("full\u{3000}width\u{3000}space ｆｕｌｌ", 21.0, 21),
        ("nbsp\u{a0}inside word\u{2003}em", 19.0, 19),
        ("x\u{1c}y\u{1d}z\u{1e}\u{1f}", 1.75, 1),
        ("123 456 7.8 9,0", 15.0, 15),
        ("__init__ --flag", 15.0, 15),
        ("\u{200b}\u{200b}zero\u{200b} width", 13.0, 13),
        ("‘quoted’ “double” «guillemets»", 30.0, 30),
        ("Ⅷ ² ½ ١٢٣ ３", 11.0, 11),
        ("ǅ ǈ ß ǲ", 7.0, 7),
        ("\u{301}\u{301}", 2.0, 2),
        ("line1\nline2\rline3\r\nline4", 6.0, 5),
        ("①②③ ⑴ ⒈", 7.0, 7),
        ("aaaaaaaaa b", 11.0, 11),
        (
            "the the the the the the the the the the the the the the",
            55.0,
            55,
        ),
        ("abcabcabcabcabcabcabcabcabcabcabc", 33.0, 33),
        ("abababababababababababababababababababab", 40.0, 40),
        ("中文中文中文中文中文中文中文", 14.0, 14),
        ("🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂", 13.0, 13),
        ("שלום עולם!", 10.0, 10),
        ("\u{1e030}\u{11bf0} new", 6.0, 6),
        ("\u{11db0}\u{11de0} u17", 6.0, 6),
        ("ก\u{e34}น ข\u{e49}าว", 8.0, 8),
        (
            "#1 (see: [x]) {y} <z> ~w~ |v| ^u^ `t` @s $r %q &p *o +n =m",
            58.0,
            58,
        ),
        ("tab\tsep\tvalues\t", 15.0, 15),
        ("ａｂｃ！？。、", 7.0, 7),
        ("�\u{fffc}\u{ad}\u{feff}", 4.0, 4),
        (
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab",
            84.0,
            84,
        ),
        ("a\nbb\n", 2.5, 2),
        ("\n", 1.0, 0),
        ("\n\n", 1.0, 0),
        ("\r\n", 2.0, 0),
        ("\r\r\n", 1.5, 0),
        ("a\r\nb", 2.0, 1),
        ("abc\n\ndef\n\n\n", 2.2, 3),
        ("x\u{b}y\u{c}z", 1.6666666666666667, 1),
        ("p\u{1c}q\u{1d}r\u{1e}s\u{1f}t", 2.25, 3),
        ("one\u{85}two\u{2028}three\u{2029}four", 4.5, 5),
        ("no line break at all here", 25.0, 25),
        ("\u{2028}", 1.0, 0),
        ("line\nline\nline\nline\nline\n", 5.0, 4),
        ("短\n长长长长\n中中", 3.0, 4),
        ("😀\n😀😀😀", 2.5, 3),
        ("e\u{301}\ne\u{301}e\u{301}", 3.5, 4),
        ("trailing\n\n\n\n", 3.0, 8),
        ("\t\n\t\n", 2.0, 1),
        (
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\nbbbbbbb",
            29.0,
            50,
        ),
    ];

    /// (avg_line_length, max_line_length) of `big_texts()` and [`lines_big`].
    const BIG: [(f64, i64); 4] = [
        (100000.0, 100000),
        (100000.0, 100000),
        (100000.0, 100000),
        (50.85011631771353, 98),
    ];

    /// `"\r\n".join("ab" * (i % 50) for i in range(3000)) + "\u2028" * 10`
    fn lines_big() -> String {
        let lines: Vec<String> = (0..3000).map(|i| "ab".repeat(i % 50)).collect();
        lines.join("\r\n") + &"\u{2028}".repeat(10)
    }

    #[test]
    fn line_lengths_match_data_juicer() {
        assert!(CASES.len() > 50);
        for (text, avg, max) in CASES {
            assert_eq!(avg_line_length(text), *avg, "text {text:?}");
            assert_eq!(max_line_length(text), *max, "text {text:?}");
        }
        let [l, c, x] = big_texts();
        for (text, (avg, max)) in [l, c, x, lines_big()].iter().zip(BIG) {
            assert_eq!(avg_line_length(text), avg);
            assert_eq!(max_line_length(text), max);
        }
    }

    #[test]
    fn through_udf_and_params() {
        let op = build(
            "average_line_length_filter",
            json!({"min_len": 2, "max_len": 50}),
        )
        .unwrap();
        let Operator::Filter(f) = &op else { panic!() };
        assert_eq!(f.stat_key, "avg_line_length");
        assert_eq!((f.range.min, f.range.max), (Some(2.0), Some(50.0)));
        // "ab\nc": 4 / 2; "abcd\ne\nf": 8 / 3 = 2.6666666666666665, 2.6666666667000003 after the
        // ujson round trip (pandas ujson_loads(ujson_dumps(8 / 3, double_precision=10))).
        assert_eq!(avg_line_length("abcd\ne\nf"), 2.6666666666666665);
        assert_eq!(
            float_stats(
                &op,
                &[
                    Some("ab\nc"),
                    Some("abcd\ne\nf"),
                    Some(""),
                    None,
                    Some("\u{2028}")
                ]
            ),
            vec![
                Some(2.0),
                Some(2.6666666667000003),
                Some(0.0),
                None,
                Some(1.0)
            ]
        );

        let op = build("maximum_line_length_filter", json!({"max_len": 80})).unwrap();
        let Operator::Filter(f) = &op else { panic!() };
        assert_eq!(f.stat_key, "max_line_length");
        assert_eq!((f.range.min, f.range.max), (Some(10.0), Some(80.0)));
        assert_eq!(
            int_stats(
                &op,
                &[Some("ab\r\nabc\u{85}d"), Some(""), None, Some("数据😀")]
            ),
            vec![Some(3), Some(0), None, Some(3)]
        );

        for name in ["average_line_length_filter", "maximum_line_length_filter"] {
            let Operator::Filter(f) = build(name, json!({})).unwrap() else {
                panic!()
            };
            assert_eq!(
                (f.range.min, f.range.max),
                (Some(10.0), Some(PY_MAXSIZE as f64))
            );
            let e = build(name, json!({"min_len": 1.5})).unwrap_err();
            assert!(matches!(e, ParamError::WrongType { .. }), "{e:?}");
            let e = build(name, json!({"rep_len": 3})).unwrap_err();
            assert!(matches!(e, ParamError::Unknown { .. }), "{e:?}");
        }
    }
}
