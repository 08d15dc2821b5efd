//! More cleaners: `clean_ip_mapper`, `clean_copyright_mapper` and `replace_content_mapper`.
//!
//! The regex ones reuse the Python-`regex.sub` machinery of [`super::clean`] ([`PyRegex`] and its
//! replacement [`Template`]s), so custom patterns behave exactly as in `clean_email_mapper`.

use std::borrow::Cow;
use std::sync::{Arc, LazyLock};

use serde_json::Value;

use crate::mapper::build_mapper;
use crate::mapper::clean::{regex_cleaner, regex_cleaner_params};
use crate::operator::Operator;
use crate::params::{ParamError, ParamSpec, ParamType, Params};
use crate::py::regex::{PyRegex, Template, strip_raw_wrapper};
use crate::spec::{ModelUse, OpKind, OpSpec};
use crate::text::regex_digit;
use crate::udf::TextMapper;

/// Data-Juicer's default IP pattern, verbatim (Python syntax): dotted-quad IPv4 (octets 0-255
/// without leading zeros, but no boundaries, so `1.2.3.256` loses `1.2.3.25`) or the full
/// eight-group IPv6 form. `\d` is the `regex` module's Unicode `\d`.
pub(crate) const DEFAULT_IP_PATTERN: &str = concat!(
    r"(?:(?:1[0-9][0-9]\.)|(?:2[0-4][0-9]\.)|",
    r"(?:25[0-5]\.)|(?:[1-9][0-9]\.)|(?:[0-9]\.))",
    r"{3}(?:(?:1[0-9][0-9])|(?:2[0-4][0-9])|",
    r"(?:25[0-5])|(?:[1-9][0-9])|(?:[0-9]))|",
    r"([\da-fA-F]{1,4}:){7}[\da-fA-F]{1,4}",
);

static IP_RE: LazyLock<Arc<PyRegex>> = LazyLock::new(|| {
    let rust = DEFAULT_IP_PATTERN.replace(r"\d", &regex_digit().regex_class_body());
    let mut re =
        PyRegex::from_rust_pattern(DEFAULT_IP_PATTERN, &rust).expect("default IP pattern compiles");
    re.may_match = Some(may_be_ip);
    Arc::new(re)
});

/// Every match of the default IP pattern has an ASCII digit followed by `.` (IPv4) or seven
/// colons (IPv6).
fn may_be_ip(b: &[u8]) -> bool {
    memchr::memchr_iter(b'.', b).any(|i| i > 0 && b[i - 1].is_ascii_digit())
        || memchr::memchr_iter(b':', b).nth(6).is_some()
}

pub(crate) fn clean_ip_spec() -> OpSpec {
    OpSpec {
        name: "clean_ip_mapper",
        kind: OpKind::Mapper,
        model_use: ModelUse::None,
        params: regex_cleaner_params,
        build: build_clean_ip,
        doc: "Replace IPv4 / IPv6 addresses (or matches of `pattern`) with `repl`.",
    }
}

fn build_clean_ip(p: &Params) -> Result<Operator, ParamError> {
    Ok(build_mapper(p, Arc::new(regex_cleaner(p, &IP_RE)?)))
}

/// The first C block comment (`/* ... */`), as Data-Juicer's `/\*[^*]*\*+(?:[^/*][^*]*\*+)*/`.
static BLOCK_COMMENT: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"/\*[^*]*\*+(?:[^/*][^*]*\*+)*/").unwrap());

/// `copyright` with the `regex` module's IGNORECASE: ASCII case pairs, and U+0130 for `i`.
static COPYRIGHT: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"[cC][oO][pP][yY][rR][iI\x{130}][gG][hH][tT]").unwrap());

/// `clean_copyright_mapper`: if the text has a `/* ... */` block comment, the first one is removed
/// when it contains "copyright" (any case) and the text is otherwise unchanged; without a block
/// comment, the leading lines (split on `\n`) that start with `//`, `#` or `--` or are empty are
/// dropped.
pub(crate) fn clean_copyright(text: &str) -> Cow<'_, str> {
    if let Some(m) = BLOCK_COMMENT.find(text) {
        if COPYRIGHT.is_match(m.as_str()) {
            return Cow::Owned(format!("{}{}", &text[..m.start()], &text[m.end()..]));
        }
        return Cow::Borrowed(text);
    }
    let mut rest = text;
    let mut skipped = false;
    loop {
        let (line, after) = match rest.split_once('\n') {
            Some((l, a)) => (l, Some(a)),
            None => (rest, None),
        };
        if !(line.is_empty()
            || line.starts_with("//")
            || line.starts_with('#')
            || line.starts_with("--"))
        {
            break;
        }
        skipped = true;
        match after {
            Some(a) => rest = a,
            None => {
                // Every line was skipped: "\n".join([]) == "".
                rest = "";
                break;
            }
        }
    }
    if skipped {
        Cow::Borrowed(rest)
    } else {
        Cow::Borrowed(text)
    }
}

#[derive(Debug)]
struct CleanCopyright;

impl TextMapper for CleanCopyright {
    fn map<'a>(&self, text: &'a str) -> Cow<'a, str> {
        clean_copyright(text)
    }
}

pub(crate) fn clean_copyright_spec() -> OpSpec {
    OpSpec {
        name: "clean_copyright_mapper",
        kind: OpKind::Mapper,
        model_use: ModelUse::None,
        params: Vec::new,
        build: |p| Ok(build_mapper(p, Arc::new(CleanCopyright))),
        doc: "Remove a leading copyright block comment, or leading //, # and -- comment lines.",
    }
}

/// `replace_content_mapper`: every pattern in turn, `pattern.sub(repl, text)` with DOTALL.
#[derive(Debug)]
pub(crate) struct ReplaceContent {
    steps: Vec<(PyRegex, Template)>,
}

impl ReplaceContent {
    fn from_params(p: &Params) -> Result<ReplaceContent, ParamError> {
        let patterns = match p.raw("pattern") {
            Value::Null => return Ok(ReplaceContent { steps: Vec::new() }),
            _ => p.str_list("pattern").unwrap_or_default(),
        };
        let repls: Vec<String> = match p.raw("repl") {
            Value::String(s) => vec![s.clone(); patterns.len()],
            Value::Array(_) => p.str_list("repl").unwrap_or_default(),
            _ => return Err(p.invalid("repl", "must be a string or a list of strings")),
        };
        if repls.len() < patterns.len() {
            // Python raises this (a ValueError) when processing the first sample.
            return Err(p.invalid(
                "repl",
                format!(
                    "pattern length: {} must be equal to repl length: {}",
                    patterns.len(),
                    repls.len()
                ),
            ));
        }
        let mut steps = Vec::with_capacity(patterns.len());
        for (pattern, repl) in patterns.iter().zip(&repls) {
            let re = PyRegex::new(strip_raw_wrapper(pattern)).map_err(|e| {
                p.invalid(
                    "pattern",
                    format!("invalid regular expression {pattern:?}: {e}"),
                )
            })?;
            let t = re.template(repl).map_err(|e| p.invalid("repl", e))?;
            steps.push((re, t));
        }
        Ok(ReplaceContent { steps })
    }

    pub fn replace<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut cur = Cow::Borrowed(text);
        for (re, t) in &self.steps {
            if let Cow::Owned(s) = re.sub(&cur, t) {
                cur = Cow::Owned(s);
            }
        }
        cur
    }
}

impl TextMapper for ReplaceContent {
    fn map<'a>(&self, text: &'a str) -> Cow<'a, str> {
        self.replace(text)
    }
}

fn replace_content_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::new(
            "pattern",
            ParamType::StrList,
            Value::Null,
            "regular expression(s) (Python syntax; an r'...' wrapper is removed); None = no-op",
        ),
        ParamSpec::new(
            "repl",
            ParamType::StrList,
            Value::String(String::new()),
            "replacement(s): one string for every pattern, or one per pattern",
        ),
    ]
}

pub(crate) fn replace_content_spec() -> OpSpec {
    OpSpec {
        name: "replace_content_mapper",
        kind: OpKind::Mapper,
        model_use: ModelUse::None,
        params: replace_content_params,
        build: |p| Ok(build_mapper(p, Arc::new(ReplaceContent::from_params(p)?))),
        doc: "Replace the matches of each `pattern` with its `repl` (DOTALL), pattern by pattern.",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{build, map_texts};
    use serde_json::json;

    /// The IP prefilter never skips a text the built-in pattern would change.
    #[test]
    fn ip_prefilter_only_skips_texts_without_matches() {
        let rust = DEFAULT_IP_PATTERN.replace(r"\d", &regex_digit().regex_class_body());
        let plain = PyRegex::from_rust_pattern(DEFAULT_IP_PATTERN, &rust).unwrap();
        let repl = plain.template("<IP>").unwrap();
        let pieces = [
            "1",
            "25",
            "255",
            ".",
            ":",
            "a",
            "f",
            "0",
            " ",
            "٣",
            "9.",
            "::",
            "abcd:",
            "1.2.3.",
            "0:0:0:0:0:",
        ];
        let mut changed = 0;
        for text in crate::test_support::random_texts(&pieces, 3, 30_000, 12) {
            let want = plain.sub(&text, &repl);
            changed += usize::from(matches!(want, Cow::Owned(_)));
            assert_eq!(IP_RE.sub(&text, &repl), want, "{text:?}");
        }
        assert!(changed > 1000, "{changed}");
    }

    fn run(op: &str, params: Value, texts: &[&str]) -> Vec<String> {
        let op = build(op, params).unwrap();
        let input: Vec<Option<&str>> = texts.iter().map(|t| Some(*t)).collect();
        map_texts(&op, &input)
            .into_iter()
            .map(|o| o.unwrap())
            .collect()
    }

    fn check(op: &str, params: Value, cases: &[(&str, &str)]) {
        let texts: Vec<&str> = cases.iter().map(|c| c.0).collect();
        let got = run(op, params.clone(), &texts);
        for ((input, want), got) in cases.iter().zip(got) {
            assert_eq!(got, *want, "{op} {params} input {input:?}");
        }
    }

    /// (input, CleanIpMapper().process_batched output), Data-Juicer 1.6.1.
    const IP_CASES: &[(&str, &str)] = &[
        ("", ""),
        ("no ip here", "no ip here"),
        ("server at 192.168.1.1 is down", "server at  is down"),
        ("255.255.255.255", ""),
        ("0.0.0.0", ""),
        ("256.1.1.1", "2"),
        ("1.2.3.256", "6"),
        ("1.2.3.4.5.6", ".5.6"),
        ("01.02.03.04", "01.02.03.04"),
        ("10.0.0.1/24", "/24"),
        ("version 1.2.3", "version 1.2.3"),
        ("a1.1.1.1b", "ab"),
        ("999.999.999.999", "999.999.999.999"),
        ("2001:0db8:85a3:0000:0000:8a2e:0370:7334", ""),
        ("2001:db8::1", "2001:db8::1"),
        ("FE80:0:0:0:0:0:0:1 ok", " ok"),
        ("fe80:0:0:0:0:0:0:1:2:3", ":2:3"),
        ("12345:1:1:1:1:1:1:1", "1"),
        ("g001:1:1:1:1:1:1:1", "g"),
        ("١.٢.٣.٤", "١.٢.٣.٤"),
        ("١٢:٣٤:1:1:1:1:1:1", ""),
        ("０.１.２.３", "０.１.２.３"),
        ("1.1.1.1\n2.2.2.2\n", "\n\n"),
        ("ip=172.16.254.1;port=80", "ip=;port=80"),
        ("数据192.168.0.1处理", "数据处理"),
        ("249.250.251.252", ""),
        ("199.200.201.202", ""),
        ("1.1.1", "1.1.1"),
        ("1..1.1.1", "1..1.1.1"),
    ];

    /// Same inputs, `repl="<IP>"`.
    const IP_REPL_CASES: &[(&str, &str)] = &[
        ("", ""),
        ("no ip here", "no ip here"),
        ("server at 192.168.1.1 is down", "server at <IP> is down"),
        ("255.255.255.255", "<IP>"),
        ("0.0.0.0", "<IP>"),
        ("256.1.1.1", "2<IP>"),
        ("1.2.3.256", "<IP>6"),
        ("1.2.3.4.5.6", "<IP>.5.6"),
        ("01.02.03.04", "01.02.03.04"),
        ("10.0.0.1/24", "<IP>/24"),
        ("version 1.2.3", "version 1.2.3"),
        ("a1.1.1.1b", "a<IP>b"),
        ("999.999.999.999", "999.999.999.999"),
        ("2001:0db8:85a3:0000:0000:8a2e:0370:7334", "<IP>"),
        ("2001:db8::1", "2001:db8::1"),
        ("FE80:0:0:0:0:0:0:1 ok", "<IP> ok"),
        ("fe80:0:0:0:0:0:0:1:2:3", "<IP>:2:3"),
        ("12345:1:1:1:1:1:1:1", "1<IP>"),
        ("g001:1:1:1:1:1:1:1", "g<IP>"),
        ("١.٢.٣.٤", "١.٢.٣.٤"),
        ("١٢:٣٤:1:1:1:1:1:1", "<IP>"),
        ("０.１.２.３", "０.１.２.３"),
        ("1.1.1.1\n2.2.2.2\n", "<IP>\n<IP>\n"),
        ("ip=172.16.254.1;port=80", "ip=<IP>;port=80"),
        ("数据192.168.0.1处理", "数据<IP>处理"),
        ("249.250.251.252", "<IP>"),
        ("199.200.201.202", "<IP>"),
        ("1.1.1", "1.1.1"),
        ("1..1.1.1", "1..1.1.1"),
    ];

    /// `pattern=r"r'\d+\.\d+'"`, `repl="#"`.
    const IP_PATTERN_CASES: &[(&str, &str)] = &[
        ("", ""),
        ("no ip here", "no ip here"),
        ("server at 192.168.1.1 is down", "server at #.# is down"),
        ("255.255.255.255", "#.#"),
        ("0.0.0.0", "#.#"),
        ("256.1.1.1", "#.#"),
        ("1.2.3.256", "#.#"),
        ("1.2.3.4.5.6", "#.#.#"),
        ("01.02.03.04", "#.#"),
        ("10.0.0.1/24", "#.#/24"),
        ("version 1.2.3", "version #.3"),
        ("a1.1.1.1b", "a#.#b"),
        ("999.999.999.999", "#.#"),
        (
            "2001:0db8:85a3:0000:0000:8a2e:0370:7334",
            "2001:0db8:85a3:0000:0000:8a2e:0370:7334",
        ),
        ("2001:db8::1", "2001:db8::1"),
        ("FE80:0:0:0:0:0:0:1 ok", "FE80:0:0:0:0:0:0:1 ok"),
        ("fe80:0:0:0:0:0:0:1:2:3", "fe80:0:0:0:0:0:0:1:2:3"),
        ("12345:1:1:1:1:1:1:1", "12345:1:1:1:1:1:1:1"),
        ("g001:1:1:1:1:1:1:1", "g001:1:1:1:1:1:1:1"),
        ("١.٢.٣.٤", "#.#"),
        ("١٢:٣٤:1:1:1:1:1:1", "١٢:٣٤:1:1:1:1:1:1"),
        ("０.１.２.３", "#.#"),
        ("1.1.1.1\n2.2.2.2\n", "#.#\n#.#\n"),
        ("ip=172.16.254.1;port=80", "ip=#.#;port=80"),
        ("数据192.168.0.1处理", "数据#.#处理"),
        ("249.250.251.252", "#.#"),
        ("199.200.201.202", "#.#"),
        ("1.1.1", "#.1"),
        ("1..1.1.1", "1..#.1"),
    ];

    /// (input, CleanCopyrightMapper().process_batched output), Data-Juicer 1.6.1.
    const COPYRIGHT_CASES: &[(&str, &str)] = &[
        ("", ""),
        ("int x;", "int x;"),
        ("/* Copyright 2024 Foo */\nint x;", "\nint x;"),
        ("/* copyright */", ""),
        ("/* COPYRIGHT */ a /* copyright */", " a /* copyright */"),
        (
            "/* plain comment */\n// Copyright line\nint x;",
            "/* plain comment */\n// Copyright line\nint x;",
        ),
        (
            "// Copyright 2020\n// All rights reserved\n\nint main() {}",
            "int main() {}",
        ),
        (
            "# Copyright\n# License MIT\nimport os\n# not removed",
            "import os\n# not removed",
        ),
        ("-- sql comment\nSELECT 1;", "SELECT 1;"),
        ("\n\n\ncode", "code"),
        ("//\n#\n--\n", ""),
        ("a\n// b", "a\n// b"),
        (" // indented\ncode", " // indented\ncode"),
        (
            "/* multi\n * line\n * Copyright (c) 2019\n */\ncode /* second copyright */",
            "\ncode /* second copyright */",
        ),
        ("/** doc ** copyright **/x", "x"),
        ("/* a */ /* copyright */", "/* a */ /* copyright */"),
        ("/*/ copyright */", ""),
        ("/* unterminated copyright", "/* unterminated copyright"),
        ("x /* CoPyRiGhT */ y", "x  y"),
        ("/* copyr\u{130}ght */z", "z"),
        ("/* copyr\u{131}ght */z", "/* copyr\u{131}ght */z"),
        ("/* copy right */z", "/* copy right */z"),
        ("#!/bin/sh\necho", "echo"),
        ("-\n--x\n", "-\n--x\n"),
        ("\r\n# a\r\nb", "\r\n# a\r\nb"),
        ("// 版权所有\n代码", "代码"),
    ];

    /// `pattern=[r"\d+", "(?i)foo", r"r'(\w+)@(\w+)'"]`, `repl=["<N>", "bar", r"\2 at \1"]`.
    const REPLACE_LIST_CASES: &[(&str, &str)] = &[
        ("", ""),
        (
            "abc 123 foo FOO bar@baz x@y",
            "abc <N> bar bar baz at bar y at x",
        ),
        ("no match", "no match"),
        ("foo42foo", "bar<N>bar"),
        ("a\nc abc", "a\nc abc"),
        ("数字123和foo", "数字<N>和bar"),
    ];

    /// `pattern="a.c"`, `repl="X"` (DOTALL: `.` matches a newline).
    const REPLACE_ONE_CASES: &[(&str, &str)] = &[
        ("", ""),
        ("abc 123 foo FOO bar@baz x@y", "X 123 foo FOO bar@baz x@y"),
        ("no match", "no mXh"),
        ("foo42foo", "foo42foo"),
        ("a\nc abc", "X X"),
        ("数字123和foo", "数字123和foo"),
    ];

    /// `pattern=["x", "y"]`, `repl="-"` (one repl for every pattern).
    const REPLACE_SHARED_CASES: &[(&str, &str)] = &[
        ("", ""),
        ("xyzzy", "--zz-"),
        ("nothing", "nothing"),
        ("x\ny", "-\n-"),
    ];

    #[test]
    fn clean_ip_matches_data_juicer() {
        check("clean_ip_mapper", json!({}), IP_CASES);
        check("clean_ip_mapper", json!({"repl": "<IP>"}), IP_REPL_CASES);
        check(
            "clean_ip_mapper",
            json!({"pattern": r"r'\d+\.\d+'", "repl": "#"}),
            IP_PATTERN_CASES,
        );
    }

    #[test]
    fn clean_copyright_matches_data_juicer() {
        check("clean_copyright_mapper", json!({}), COPYRIGHT_CASES);
        for c in ["copyright", "COPYRIGHT", "CoPyR\u{130}ghT"] {
            assert!(COPYRIGHT.is_match(c), "{c}");
        }
        assert!(!COPYRIGHT.is_match("copyr\u{131}ght"));
        assert!(!COPYRIGHT.is_match("copy right"));
    }

    #[test]
    fn replace_content_matches_data_juicer() {
        check(
            "replace_content_mapper",
            json!({"pattern": [r"\d+", "(?i)foo", r"r'(\w+)@(\w+)'"], "repl": ["<N>", "bar", r"\2 at \1"]}),
            REPLACE_LIST_CASES,
        );
        check(
            "replace_content_mapper",
            json!({"pattern": "a.c", "repl": "X"}),
            REPLACE_ONE_CASES,
        );
        check(
            "replace_content_mapper",
            json!({"pattern": ["x", "y"], "repl": "-"}),
            REPLACE_SHARED_CASES,
        );
        // pattern None (default): no-op, borrowed.
        let rc = ReplaceContent { steps: Vec::new() };
        assert!(matches!(rc.replace("a1"), Cow::Borrowed("a1")));
        assert_eq!(
            run("replace_content_mapper", json!({"repl": "x"}), &["a1b"]),
            vec!["a1b"]
        );
    }

    #[test]
    fn replace_content_param_errors() {
        // Python: ValueError "pattern length: 2 must be equal to repl length: 1" (raised on the
        // first sample); here when the op is built.
        let e = build(
            "replace_content_mapper",
            json!({"pattern": ["a", "b"], "repl": ["x"]}),
        )
        .unwrap_err();
        assert_eq!(e.param(), "repl");
        assert!(e.to_string().contains("pattern length: 2"), "{e}");
        // A longer repl list is fine (extra entries unused).
        assert_eq!(
            run(
                "replace_content_mapper",
                json!({"pattern": ["a"], "repl": ["x", "y"]}),
                &["aba"]
            ),
            vec!["xbx"]
        );
        let e = build("replace_content_mapper", json!({"pattern": "("})).unwrap_err();
        assert_eq!(e.param(), "pattern");
        let e = build(
            "replace_content_mapper",
            json!({"pattern": "(a)", "repl": r"\2"}),
        )
        .unwrap_err();
        assert_eq!(e.param(), "repl");
        let e = build("replace_content_mapper", json!({"pattern": 3})).unwrap_err();
        assert!(matches!(e, ParamError::WrongType { .. }), "{e:?}");
    }

    #[test]
    fn long_texts() {
        let big = format!("{}10.0.0.1{}", "x ".repeat(50000), " 数".repeat(50000));
        let out = run("clean_ip_mapper", json!({}), &[&big]).remove(0);
        assert_eq!(
            out,
            format!("{}{}", "x ".repeat(50000), " 数".repeat(50000))
        );
        let big = format!("/* Copyright {} */\nint x;", "y".repeat(100000));
        assert_eq!(
            run("clean_copyright_mapper", json!({}), &[&big]),
            vec!["\nint x;"]
        );
        let big = "# c\n".repeat(50000) + "code";
        assert_eq!(clean_copyright(&big), "code");
    }

    #[test]
    fn unchanged_texts_are_borrowed() {
        assert!(matches!(clean_copyright("int x;"), Cow::Borrowed(_)));
        assert!(matches!(
            clean_copyright("/* no notice */ x"),
            Cow::Borrowed(_)
        ));
    }
}
