//! Character normalization mappers: `whitespace_normalization_mapper` and
//! `punctuation_normalization_mapper`.

use std::borrow::Cow;
use std::sync::Arc;

use crate::mapper::build_mapper;
use crate::operator::Operator;
use crate::params::{ParamError, Params};
use crate::spec::{ModelUse, OpKind, OpSpec};
use crate::text::{is_various_whitespace, non_ascii_chars, non_ascii_or_chars, py_strip};
use crate::udf::TextMapper;

/// `whitespace_normalization_mapper`: Python `text.strip()`, then every character of
/// `VARIOUS_WHITESPACES` (TAB, the ASCII space, U+0084, NBSP, U+2000..U+200D, U+202F, U+205F,
/// U+2060, U+3000, U+FFFC) becomes an ASCII space. Newlines and other line breaks are kept and
/// runs are not collapsed.
pub fn normalize_whitespace(text: &str) -> Cow<'_, str> {
    // Every VARIOUS_WHITESPACES character but ' ' is TAB or not ASCII: jump between those.
    let stripped = py_strip(text);
    replace_chars(stripped, non_ascii_or_chars(stripped, b'\t'), |c| {
        (c != ' ' && is_various_whitespace(c)).then_some(" ")
    })
}

/// `text` with every character `replacement` maps replaced, looking only at `candidates` (the
/// characters of `text` with their byte offsets, in order; none elsewhere can be replaced);
/// borrowed when none is.
fn replace_chars(
    text: &str,
    candidates: impl Iterator<Item = (usize, char)>,
    replacement: impl Fn(char) -> Option<&'static str>,
) -> Cow<'_, str> {
    let mut out: Option<String> = None;
    let mut copied = 0;
    for (p, c) in candidates {
        if let Some(r) = replacement(c) {
            let o = out.get_or_insert_with(|| String::with_capacity(text.len() + 16));
            o.push_str(&text[copied..p]);
            o.push_str(r);
            copied = p + c.len_utf8();
        }
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut o) => {
            o.push_str(&text[copied..]);
            Cow::Owned(o)
        }
    }
}

#[derive(Debug)]
struct WhitespaceNormalization;

impl TextMapper for WhitespaceNormalization {
    fn map<'a>(&self, text: &'a str) -> Cow<'a, str> {
        normalize_whitespace(text)
    }
}

pub(crate) fn whitespace_normalization_spec() -> OpSpec {
    OpSpec {
        name: "whitespace_normalization_mapper",
        kind: OpKind::Mapper,
        model_use: ModelUse::None,
        params: Vec::new,
        build: build_whitespace_normalization,
        doc: "Strip the text and turn every kind of Unicode space (VARIOUS_WHITESPACES) into ' '.",
    }
}

fn build_whitespace_normalization(p: &Params) -> Result<Operator, ParamError> {
    Ok(build_mapper(p, Arc::new(WhitespaceNormalization)))
}

/// Data-Juicer's `punctuation_unicode` map (note the full-width digit one U+FF11 -> `"`, a quirk
/// of the source kept as is).
#[inline]
fn punctuation_replacement(c: char) -> Option<&'static str> {
    Some(match c {
        '，' | '、' => ",",
        '。' => ".",
        '„' | '”' | '“' | '«' | '»' | '１' | '」' | '「' | '《' | '》' => "\"",
        '´' | '’' => "'",
        '∶' | '：' => ":",
        '？' => "?",
        '！' => "!",
        '（' => "(",
        '）' => ")",
        '；' => ";",
        '–' | '━' | '►' => "-",
        '—' => " - ",
        '．' => ". ",
        '～' => "~",
        '…' => "...",
        '〈' => "<",
        '〉' => ">",
        '【' => "[",
        '】' => "]",
        '％' => "%",
        _ => return None,
    })
}

/// `punctuation_normalization_mapper`: replaces each Unicode punctuation character of Data-Juicer's
/// map by its ASCII equivalent, character by character.
pub fn normalize_punctuation(text: &str) -> Cow<'_, str> {
    // Every mapped character is non-ASCII: jump between those.
    replace_chars(text, non_ascii_chars(text), punctuation_replacement)
}

#[derive(Debug)]
struct PunctuationNormalization;

impl TextMapper for PunctuationNormalization {
    fn map<'a>(&self, text: &'a str) -> Cow<'a, str> {
        normalize_punctuation(text)
    }
}

pub(crate) fn punctuation_normalization_spec() -> OpSpec {
    OpSpec {
        name: "punctuation_normalization_mapper",
        kind: OpKind::Mapper,
        model_use: ModelUse::None,
        params: Vec::new,
        build: build_punctuation_normalization,
        doc: "Replace Unicode punctuation (full-width comma, CJK brackets, curly quotes, ...) by ASCII.",
    }
}

fn build_punctuation_normalization(p: &Params) -> Result<Operator, ParamError> {
    Ok(build_mapper(p, Arc::new(PunctuationNormalization)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::md5_hex;
    use crate::test_support::{build, map_texts};
    use serde_json::json;

    /// (input, WhitespaceNormalizationMapper().process_batched output) from Data-Juicer 1.6.1.
    const WHITESPACE_CASES: &[(&str, &str)] = &[
        ("", ""),
        ("   ", ""),
        (" \t\n ", ""),
        ("\u{1c}\u{1d}abc\u{1e}\u{1f}", "abc"),
        (
            "a\u{3000}b\u{a0}c\u{2002}d\u{200b}e\u{2060}f\u{fffc}g\u{84}h",
            "a b c d e f g h",
        ),
        ("  x\ty\n z  ", "x y\n z"),
        ("\u{200b}start\u{200b}", " start "),
        ("no change", "no change"),
        ("数据\u{3000}处理 ", "数据 处理"),
        (
            "a\u{1680}b\u{2028}c\u{2029}d\u{85}e",
            "a\u{1680}b\u{2028}c\u{2029}d\u{85}e",
        ),
        ("\n\n line one\t\ttwo \n", "line one  two"),
        (
            "e\u{301} \u{202f}\u{205f} مرحبا\u{a0}بالعالم",
            "e\u{301}    مرحبا بالعالم",
        ),
        ("\u{3000}\u{3000}全角空格\u{3000}", "全角空格"),
        ("\u{feff}bom\u{180e}", "\u{feff}bom\u{180e}"),
        ("tab\tonly", "tab only"),
        ("\u{84}\u{85}", " "),
    ];

    #[test]
    fn whitespace_matches_data_juicer() {
        for (input, want) in WHITESPACE_CASES {
            assert_eq!(normalize_whitespace(input), *want, "input {input:?}");
        }
    }

    #[test]
    fn whitespace_borrows_when_only_stripping() {
        assert!(matches!(
            normalize_whitespace("  a b  "),
            Cow::Borrowed("a b")
        ));
        assert!(matches!(normalize_whitespace("a\tb"), Cow::Owned(_)));
    }

    #[test]
    fn whitespace_long_text() {
        // ("word\u3000" * 20000) + "\u00a0end\t" + ("x" * 100000) + "  \n": Python output has
        // length 200005 and this MD5.
        let big = format!(
            "{}\u{a0}end\t{}  \n",
            "word\u{3000}".repeat(20000),
            "x".repeat(100000)
        );
        let out = normalize_whitespace(&big);
        assert_eq!(out.chars().count(), 200005);
        assert_eq!(md5_hex(&out), "63a4af755cce41977ca9cb998267cee5");
    }

    /// (input, PunctuationNormalizationMapper().process_batched output) from Data-Juicer 1.6.1.
    const PUNCTUATION_CASES: &[(&str, &str)] = &[
        ("", ""),
        ("plain ascii, nothing to do.", "plain ascii, nothing to do."),
        (
            "，。、„”“«»１」「《》´∶：？！（）；–—．～’…━〈〉【】％►",
            ",.,\"\"\"\"\"\"\"\"\"\"'::?!();- - . ~'...-<>[]%-",
        ),
        (
            "中文，标点。测试！（括号）【方括号】：冒号？",
            "中文,标点.测试!(括号)[方括号]:冒号?",
        ),
        (
            "‘single’ quotes and ２ and ﹐",
            "‘single' quotes and ２ and ﹐",
        ),
        ("a—b．c…d", "a - b. c...d"),
        ("e\u{301}，\u{3000}。", "e\u{301},\u{3000}."),
        ("«Bonjour»", "\"Bonjour\""),
        ("😀，👍🏽。", "😀,👍🏽."),
    ];

    #[test]
    fn punctuation_matches_data_juicer() {
        for (input, want) in PUNCTUATION_CASES {
            assert_eq!(normalize_punctuation(input), *want, "input {input:?}");
        }
        assert!(matches!(
            normalize_punctuation("no “mapped” chars? yes"),
            Cow::Owned(_)
        ));
        // U+2018 is not in the map (only U+2019 is).
        assert!(matches!(
            normalize_punctuation("数据 ‘ok"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn punctuation_long_text() {
        // "标点，" * 50000 + "—" + "a" * 100000 -> length 250003 and this MD5 in Python.
        let big = format!("{}—{}", "标点，".repeat(50000), "a".repeat(100000));
        let out = normalize_punctuation(&big);
        assert_eq!(out.chars().count(), 250003);
        assert_eq!(md5_hex(&out), "c512c2c81f120c87fd1f1476b0c845d6");
    }

    #[test]
    fn through_udf_wrappers() {
        let op = build("whitespace_normalization_mapper", json!({})).unwrap();
        let out = map_texts(&op, &[Some(" a\u{3000}b "), None, Some("")]);
        assert_eq!(
            out,
            vec![Some("a b".to_string()), None, Some(String::new())]
        );
        let op = build(
            "punctuation_normalization_mapper",
            json!({"text_key": "content"}),
        )
        .unwrap();
        let out = map_texts(&op, &[Some("你好，世界。"), None]);
        assert_eq!(out, vec![Some("你好,世界.".to_string()), None]);
    }

    #[test]
    fn no_own_params() {
        let e = build("whitespace_normalization_mapper", json!({"pattern": "x"})).unwrap_err();
        assert_eq!(e.param(), "pattern");
        assert!(matches!(e, ParamError::Unknown { .. }));
    }
}
