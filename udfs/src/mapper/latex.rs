//! LaTeX mappers: `remove_header_mapper`, `remove_bibliography_mapper`, `remove_comments_mapper`
//! and `expand_macro_mapper`.
//!
//! Each Data-Juicer op is one or a few fixed `regex` patterns; their match semantics are
//! implemented directly here (scans, linear in the text) and documented next to each function.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;

use crate::mapper::build_mapper;
use crate::operator::Operator;
use crate::params::{ParamError, ParamSpec, ParamType, Params};
use crate::spec::{ModelUse, OpKind, OpSpec};
use crate::text::regex_word;
use crate::udf::TextMapper;

/// The `regex` module's `\w`.
fn is_word(c: char) -> bool {
    if c.is_ascii() {
        c == '_' || c.is_ascii_alphanumeric()
    } else {
        regex_word().contains(c)
    }
}

/// The heading commands of `remove_header_mapper`, in pattern order.
const HEADINGS: [&str; 7] = [
    "chapter",
    "part",
    "section",
    "subsection",
    "subsubsection",
    "paragraph",
    "subparagraph",
];

/// Byte offset of the first LaTeX heading, as Data-Juicer's pattern
/// `^(.*?)(\\\bchapter\b\*?(?:\[(.*?)\])?\{(.*?)\}|...)` (DOTALL) finds it: a backslash, a heading
/// name not followed by a `\w` character, an optional `*`, then either `{` with a `}` somewhere
/// after it, or `[` with a later `]{` that has a `}` somewhere after it (the lazy `[...]` may
/// span any characters, newlines included).
pub(crate) fn first_heading(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let last_close = text.rfind('}');
    let has_close_after = |i: usize| last_close.is_some_and(|c| c >= i);
    // The last "]{" with a "}" after it: a `[` before it can complete the optional group.
    let last_bracket_open = {
        let mut best = None;
        let mut from = text.len();
        while let Some(k) = text[..from].rfind("]{") {
            if has_close_after(k + 2) {
                best = Some(k);
                break;
            }
            from = k;
        }
        best
    };
    let mut search = 0;
    while let Some(off) = text[search..].find('\\') {
        let i = search + off;
        search = i + 1;
        let rest = &text[i + 1..];
        for name in HEADINGS {
            let Some(after) = rest.strip_prefix(name) else {
                continue;
            };
            if after.chars().next().is_some_and(is_word) {
                continue;
            }
            let mut j = i + 1 + name.len();
            if bytes.get(j) == Some(&b'*') {
                j += 1;
            }
            let ok = match bytes.get(j) {
                Some(b'{') => has_close_after(j + 1),
                Some(b'[') => last_bracket_open.is_some_and(|k| k > j),
                _ => false,
            };
            if ok {
                return Some(i);
            }
        }
    }
    None
}

/// `remove_header_mapper`: drop everything before the first heading. Without a heading the text
/// becomes `""` when `drop_no_head` (Data-Juicer 1.6.1 writes the emptied text back), else it is
/// kept.
pub(crate) fn remove_header(text: &str, drop_no_head: bool) -> Cow<'_, str> {
    match first_heading(text) {
        Some(i) => Cow::Borrowed(&text[i..]),
        None if drop_no_head => Cow::Borrowed(""),
        None => Cow::Borrowed(text),
    }
}

#[derive(Debug)]
struct RemoveHeader {
    drop_no_head: bool,
}

impl TextMapper for RemoveHeader {
    fn map<'a>(&self, text: &'a str) -> Cow<'a, str> {
        remove_header(text, self.drop_no_head)
    }
}

pub(crate) fn remove_header_spec() -> OpSpec {
    OpSpec {
        name: "remove_header_mapper",
        kind: OpKind::Mapper,
        model_use: ModelUse::None,
        params: || {
            vec![ParamSpec::new(
                "drop_no_head",
                ParamType::Bool,
                Value::Bool(true),
                "empty the texts that have no LaTeX heading",
            )]
        },
        build: |p| {
            Ok(build_mapper(
                p,
                Arc::new(RemoveHeader {
                    drop_no_head: p.bool("drop_no_head"),
                }),
            ))
        },
        doc: "Remove everything before the first LaTeX heading (\\chapter, \\section, ...).",
    }
}

/// `remove_bibliography_mapper`: Data-Juicer's
/// `(\\appendix|\\begin\{references\}|\\begin\{REFERENCES\}|\\begin\{thebibliography\}|\\bibliography\{.*\}).*$`
/// (DOTALL) always runs to the end of the text, so the text is cut at the first of those commands
/// (`\bibliography{` counts only if a `}` follows somewhere).
pub(crate) fn remove_bibliography(text: &str) -> Cow<'_, str> {
    let last_close = text.rfind('}');
    let mut search = 0;
    while let Some(off) = text[search..].find('\\') {
        let i = search + off;
        search = i + 1;
        let rest = &text[i + 1..];
        let hit = rest.starts_with("appendix")
            || rest.starts_with("begin{references}")
            || rest.starts_with("begin{REFERENCES}")
            || rest.starts_with("begin{thebibliography}")
            || (rest.starts_with("bibliography{")
                && last_close.is_some_and(|c| c > i + "\\bibliography{".len() - 1));
        if hit {
            return Cow::Borrowed(&text[..i]);
        }
    }
    Cow::Borrowed(text)
}

#[derive(Debug)]
struct RemoveBibliography;

impl TextMapper for RemoveBibliography {
    fn map<'a>(&self, text: &'a str) -> Cow<'a, str> {
        remove_bibliography(text)
    }
}

pub(crate) fn remove_bibliography_spec() -> OpSpec {
    OpSpec {
        name: "remove_bibliography_mapper",
        kind: OpKind::Mapper,
        model_use: ModelUse::None,
        params: Vec::new,
        build: |p| Ok(build_mapper(p, Arc::new(RemoveBibliography))),
        doc: "Cut a LaTeX text at its bibliography / appendix (\\appendix, \\bibliography{...}, ...).",
    }
}

/// Data-Juicer's inline-comment pass, `regex.sub(r"[^\\]%.+$", "", text, flags=MULTILINE)`: a
/// character other than a backslash (a newline included), then `%`, then at least one character
/// before the end of the line: all of that, up to the end of the line, is removed.
fn remove_inline_comments(text: &str) -> Cow<'_, str> {
    let mut out: Option<String> = None;
    // End of the previous match: the next match may start there (at its newline).
    let mut last = 0;
    let mut i = 0;
    while let Some(off) = text[i..].find('%') {
        let p = i + off;
        i = p + 1;
        let Some(prev) = text[..p].chars().next_back() else {
            continue;
        };
        let start = p - prev.len_utf8();
        if start < last || prev == '\\' || matches!(text[p + 1..].chars().next(), None | Some('\n'))
        {
            continue;
        }
        let end = text[p..].find('\n').map_or(text.len(), |e| p + e);
        let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
        o.push_str(&text[last..start]);
        last = end;
        i = end;
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut o) => {
            o.push_str(&text[last..]);
            Cow::Owned(o)
        }
    }
}

/// Data-Juicer's whole-line pass, `regex.sub(r"(?m)^%.*\n?", "", text)`: every line that starts
/// with `%` is removed with its newline.
fn remove_comment_lines(text: &str) -> Cow<'_, str> {
    if !text.starts_with('%') && !text.contains("\n%") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        if !line.starts_with('%') {
            out.push_str(line);
        }
    }
    Cow::Owned(out)
}

/// `remove_comments_mapper` (`doc_type` is accepted and unused, as in Data-Juicer).
pub(crate) fn remove_comments(text: &str, inline: bool, multiline: bool) -> Cow<'_, str> {
    let t = if inline {
        remove_inline_comments(text)
    } else {
        Cow::Borrowed(text)
    };
    if !multiline {
        return t;
    }
    match t {
        Cow::Borrowed(b) => remove_comment_lines(b),
        Cow::Owned(o) => Cow::Owned(remove_comment_lines(&o).into_owned()),
    }
}

#[derive(Debug)]
struct RemoveComments {
    inline: bool,
    multiline: bool,
}

impl TextMapper for RemoveComments {
    fn map<'a>(&self, text: &'a str) -> Cow<'a, str> {
        remove_comments(text, self.inline, self.multiline)
    }
}

pub(crate) fn remove_comments_spec() -> OpSpec {
    OpSpec {
        name: "remove_comments_mapper",
        kind: OpKind::Mapper,
        model_use: ModelUse::None,
        params: || {
            vec![
                ParamSpec::new(
                    "doc_type",
                    ParamType::StrList,
                    Value::String("tex".into()),
                    "document type(s) (only 'tex'; accepted, unused)",
                ),
                ParamSpec::new(
                    "inline",
                    ParamType::Bool,
                    Value::Bool(true),
                    "remove inline comments (the character before '%' goes too)",
                ),
                ParamSpec::new(
                    "multiline",
                    ParamType::Bool,
                    Value::Bool(true),
                    "remove lines that start with '%'",
                ),
            ]
        },
        build: |p| {
            Ok(build_mapper(
                p,
                Arc::new(RemoveComments {
                    inline: p.bool("inline"),
                    multiline: p.bool("multiline"),
                }),
            ))
        },
        doc: "Remove LaTeX comments: inline `x% ...` and whole `%` lines.",
    }
}

/// The byte length of the ASCII alphanumerics `s` starts with (0 if none): the length of a macro
/// name when `s` is the text right after its `\`.
fn alnum_run(s: &str) -> usize {
    s.bytes().take_while(u8::is_ascii_alphanumeric).count()
}

/// The value of a definition whose `{` is at byte `open` of `line`: Data-Juicer's `\{(.*?)\}$`
/// with MULTILINE needs the line to end with `}`; the value is everything in between.
fn value_to_line_end(line: &str, open: usize) -> Option<&str> {
    if line.len() >= open + 2 && line.ends_with('}') {
        Some(&line[open + 1..line.len() - 1])
    } else {
        None
    }
}

/// The no-argument macros of a document, in Python dict order (first definition's position, last
/// definition's value): `\newcommand{\name}{value}` / `\newcommand*{...}{...}` lines (regex
/// `\\\bnewcommand\b\*?\{(\\[a-zA-Z0-9]+?)\}\{(.*?)\}$`, MULTILINE) first, then
/// `\def\name{value}` (`\\def\s*(\\[a-zA-Z0-9]+?)\s*\{(.*?)\}$`, whose `\s*` may span newlines).
/// The value runs to a `}` that ends its line. Names are `\` + ASCII letters and digits.
pub(crate) fn no_arg_macros(text: &str) -> Vec<(String, String)> {
    let mut macros: Vec<(String, String)> = Vec::new();
    let mut define = |name: &str, value: &str| match macros.iter_mut().find(|(n, _)| n == name) {
        Some(m) => m.1 = value.to_string(),
        None => macros.push((name.to_string(), value.to_string())),
    };
    // The end of the line containing byte `i`.
    let line_end = |i: usize| text[i..].find('\n').map_or(text.len(), |e| i + e);

    let mut pos = 0;
    while let Some(off) = text[pos..].find("\\newcommand") {
        let start = pos + off;
        pos = start + 1;
        let mut j = start + "\\newcommand".len();
        let eol = line_end(start);
        let line = &text[..eol];
        if line[j..].starts_with('*') {
            j += 1;
        }
        if !line[j..].starts_with("{\\") {
            continue;
        }
        let name_start = j + 1;
        let n = alnum_run(&line[name_start + 1..]);
        let name_end = name_start + 1 + n;
        if n == 0 || !line[name_end..].starts_with("}{") {
            continue;
        }
        let Some(value) = value_to_line_end(line, name_end + 1) else {
            continue;
        };
        define(&line[name_start..name_end], value);
        // finditer resumes after the match, at the end of the line.
        pos = eol;
    }

    let mut pos = 0;
    while let Some(off) = text[pos..].find("\\def") {
        let start = pos + off;
        pos = start + 1;
        let mut j = start + "\\def".len();
        j += text[j..]
            .char_indices()
            .find(|&(_, c)| !crate::text::is_regex_space(c))
            .map_or(text.len() - j, |(k, _)| k);
        if !text[j..].starts_with('\\') {
            continue;
        }
        let name_start = j;
        let n = alnum_run(&text[name_start + 1..]);
        let name_end = name_start + 1 + n;
        if n == 0 {
            continue;
        }
        let mut k = name_end;
        k += text[k..]
            .char_indices()
            .find(|&(_, c)| !crate::text::is_regex_space(c))
            .map_or(text.len() - k, |(o, _)| o);
        if !text[k..].starts_with('{') {
            continue;
        }
        let eol = line_end(k);
        let Some(value) = value_to_line_end(&text[..eol], k) else {
            continue;
        };
        define(&text[name_start..name_end], value);
        pos = eol;
    }
    macros
}

/// `expand_macro_mapper`: for each macro in turn, `regex.sub("(" + name + ")([^a-zA-Z0-9])",
/// value + r"\2", text)`: every `\name` followed by a character that is not an ASCII letter or
/// digit becomes the value (the following character is kept, and consumed: `\a\a.` only expands
/// the first). A `\name` at the very end of the text is not expanded. The value is inserted
/// literally (Data-Juicer unicode-escapes it, which the template parser undoes).
pub(crate) fn expand_macros(text: &str) -> Cow<'_, str> {
    let macros = no_arg_macros(text);
    if macros.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut cur = Cow::Borrowed(text);
    for (name, value) in &macros {
        let t: &str = &cur;
        let mut out: Option<String> = None;
        let mut last = 0;
        let mut pos = 0;
        while let Some(off) = t[pos..].find(name.as_str()) {
            let s = pos + off;
            let e = s + name.len();
            match t[e..].chars().next() {
                Some(c) if !c.is_ascii_alphanumeric() => {
                    let o = out.get_or_insert_with(|| String::with_capacity(t.len()));
                    o.push_str(&t[last..s]);
                    o.push_str(value);
                    o.push(c);
                    last = e + c.len_utf8();
                    pos = last;
                }
                _ => pos = s + 1,
            }
        }
        if let Some(mut o) = out {
            o.push_str(&t[last..]);
            cur = Cow::Owned(o);
        }
    }
    cur
}

#[derive(Debug)]
struct ExpandMacro;

impl TextMapper for ExpandMacro {
    fn map<'a>(&self, text: &'a str) -> Cow<'a, str> {
        expand_macros(text)
    }
}

pub(crate) fn expand_macro_spec() -> OpSpec {
    OpSpec {
        name: "expand_macro_mapper",
        kind: OpKind::Mapper,
        model_use: ModelUse::None,
        params: Vec::new,
        build: build_expand_macro,
        doc: "Expand the document's own no-argument LaTeX macros (\\newcommand, \\def).",
    }
}

fn build_expand_macro(p: &Params) -> Result<Operator, ParamError> {
    Ok(build_mapper(p, Arc::new(ExpandMacro)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::md5_hex;
    use crate::test_support::{build, map_texts};
    use serde_json::json;

    fn check(op: &str, params: Value, cases: &[(&str, &str)]) {
        let op_b = build(op, params.clone()).unwrap();
        let texts: Vec<Option<&str>> = cases.iter().map(|c| Some(c.0)).collect();
        let got = map_texts(&op_b, &texts);
        for ((input, want), got) in cases.iter().zip(got) {
            assert_eq!(got.as_deref(), Some(*want), "{op} {params} input {input:?}");
        }
    }

    /// (input, RemoveHeaderMapper().process_batched output), Data-Juicer 1.6.1.
    const HEADER_CASES: &[(&str, &str)] = &[
        ("", ""),
        ("no heading here", ""),
        ("intro\n\\section{Intro}\ntext", "\\section{Intro}\ntext"),
        ("\\section{A}", "\\section{A}"),
        ("pre \\section*{Star} post", "\\section*{Star} post"),
        (
            "pre \\section[short]{Long title} body",
            "\\section[short]{Long title} body",
        ),
        ("pre \\section[a]b]{x} body", "\\section[a]b]{x} body"),
        ("pre \\section[a] {x}", ""),
        ("pre \\section[a]", ""),
        ("pre \\section{unclosed", ""),
        ("pre \\sections{x}", ""),
        ("pre \\sectionx{x} \\part{P}", "\\part{P}"),
        ("pre \\subsection{S}", "\\subsection{S}"),
        ("a \\subsubsection{SS} b", "\\subsubsection{SS} b"),
        ("a \\paragraph{P} b", "\\paragraph{P} b"),
        ("a \\subparagraph{SP} b", "\\subparagraph{SP} b"),
        (
            "a \\chapter{C} b \\section{S}",
            "\\chapter{C} b \\section{S}",
        ),
        ("a \\part*[x]{y}", "\\part*[x]{y}"),
        ("a \\section\n{x}", ""),
        ("a \\section_{x}", ""),
        ("a \\section é{x}", ""),
        ("a \\sectioné{x}", ""),
        ("a \\section\u{301}{x}", ""),
        ("x \\\\section{y}", "\\section{y}"),
        ("\\section", ""),
        ("a \\section{\n}", "\\section{\n}"),
        ("a \\section[\n]{\n}", "\\section[\n]{\n}"),
        ("a \\section[x]{", ""),
        ("a \\section[x]]{y}", "\\section[x]]{y}"),
        ("a \\section*[x]{y}", "\\section*[x]{y}"),
        ("a \\section**{y}", ""),
        ("a \\section{x} \\section{y}", "\\section{x} \\section{y}"),
        ("數學 \\section{標題} 內容", "\\section{標題} 內容"),
        ("a \\Section{x}", ""),
        ("a \\section}{x}", ""),
        ("a \\section[}]{x", ""),
    ];

    /// Same inputs, `drop_no_head=False`.
    const HEADER_KEEP_CASES: &[(&str, &str)] = &[
        ("", ""),
        ("no heading here", "no heading here"),
        ("intro\n\\section{Intro}\ntext", "\\section{Intro}\ntext"),
        ("\\section{A}", "\\section{A}"),
        ("pre \\section*{Star} post", "\\section*{Star} post"),
        (
            "pre \\section[short]{Long title} body",
            "\\section[short]{Long title} body",
        ),
        ("pre \\section[a]b]{x} body", "\\section[a]b]{x} body"),
        ("pre \\section[a] {x}", "pre \\section[a] {x}"),
        ("pre \\section[a]", "pre \\section[a]"),
        ("pre \\section{unclosed", "pre \\section{unclosed"),
        ("pre \\sections{x}", "pre \\sections{x}"),
        ("pre \\sectionx{x} \\part{P}", "\\part{P}"),
        ("pre \\subsection{S}", "\\subsection{S}"),
        ("a \\subsubsection{SS} b", "\\subsubsection{SS} b"),
        ("a \\paragraph{P} b", "\\paragraph{P} b"),
        ("a \\subparagraph{SP} b", "\\subparagraph{SP} b"),
        (
            "a \\chapter{C} b \\section{S}",
            "\\chapter{C} b \\section{S}",
        ),
        ("a \\part*[x]{y}", "\\part*[x]{y}"),
        ("a \\section\n{x}", "a \\section\n{x}"),
        ("a \\section_{x}", "a \\section_{x}"),
        ("a \\section é{x}", "a \\section é{x}"),
        ("a \\sectioné{x}", "a \\sectioné{x}"),
        ("a \\section\u{301}{x}", "a \\section\u{301}{x}"),
        ("x \\\\section{y}", "\\section{y}"),
        ("\\section", "\\section"),
        ("a \\section{\n}", "\\section{\n}"),
        ("a \\section[\n]{\n}", "\\section[\n]{\n}"),
        ("a \\section[x]{", "a \\section[x]{"),
        ("a \\section[x]]{y}", "\\section[x]]{y}"),
        ("a \\section*[x]{y}", "\\section*[x]{y}"),
        ("a \\section**{y}", "a \\section**{y}"),
        ("a \\section{x} \\section{y}", "\\section{x} \\section{y}"),
        ("數學 \\section{標題} 內容", "\\section{標題} 內容"),
        ("a \\Section{x}", "a \\Section{x}"),
        ("a \\section}{x}", "a \\section}{x}"),
        ("a \\section[}]{x", "a \\section[}]{x"),
    ];

    /// (input, RemoveBibliographyMapper().process_batched output), Data-Juicer 1.6.1.
    const BIBLIOGRAPHY_CASES: &[(&str, &str)] = &[
        ("", ""),
        ("no bib", "no bib"),
        ("text\n\\bibliography{refs}\nmore", "text\n"),
        ("text \\bibliography{", "text \\bibliography{"),
        ("text \\bibliography{refs", "text \\bibliography{refs"),
        ("a \\bibliography{} b", "a "),
        ("a \\appendix b", "a "),
        ("a \\begin{references} b", "a "),
        ("a \\begin{REFERENCES} b", "a "),
        ("a \\begin{References} b", "a \\begin{References} b"),
        ("a \\begin{thebibliography}{9} b", "a "),
        ("a } \\bibliography{x", "a } \\bibliography{x"),
        ("x\\appendixy", "x"),
        ("a \\begin{thebibliography} \\appendix", "a "),
        (
            "a \\bibliographystyle{plain} b",
            "a \\bibliographystyle{plain} b",
        ),
        ("\\appendix", ""),
        ("数 \\appendix 学", "数 "),
        ("a \\\\appendix", "a \\"),
    ];

    /// (input, RemoveCommentsMapper().process_batched output), Data-Juicer 1.6.1.
    const COMMENTS_CASES: &[(&str, &str)] = &[
        ("", ""),
        ("no comment", "no comment"),
        ("a % comment", "a"),
        ("a %", "a %"),
        ("a %\nb", "a %\nb"),
        ("a\\% not a comment", "a\\% not a comment"),
        ("50\\% and 10% real", "50\\% and 1"),
        ("% full line\nnext", "next"),
        ("%a\n%b\nc", "c"),
        ("x\n% line\ny", "x\ny"),
        ("x%y\n%z\nw", "\nw"),
        ("%%x", ""),
        ("a%%b", ""),
        ("\n%x", ""),
        ("a\n%\nb", "a\nb"),
        ("line % c1\nline2 % c2\n", "line\nline2\n"),
        ("é%x", ""),
        ("数%注释", ""),
        ("a\\\\% c", "a\\\\% c"),
        ("%", ""),
        ("%\n", ""),
        ("text\r\n% c\r\nmore", "text\r\nmore"),
        ("a %b\n\n%c", "a\n"),
        ("  % indented", " "),
        ("x%\ny%z", "x%\n"),
    ];

    /// Same inputs, `inline=False`.
    const COMMENTS_NO_INLINE_CASES: &[(&str, &str)] = &[
        ("", ""),
        ("no comment", "no comment"),
        ("a % comment", "a % comment"),
        ("a %", "a %"),
        ("a %\nb", "a %\nb"),
        ("a\\% not a comment", "a\\% not a comment"),
        ("50\\% and 10% real", "50\\% and 10% real"),
        ("% full line\nnext", "next"),
        ("%a\n%b\nc", "c"),
        ("x\n% line\ny", "x\ny"),
        ("x%y\n%z\nw", "x%y\nw"),
        ("%%x", ""),
        ("a%%b", "a%%b"),
        ("\n%x", "\n"),
        ("a\n%\nb", "a\nb"),
        ("line % c1\nline2 % c2\n", "line % c1\nline2 % c2\n"),
        ("é%x", "é%x"),
        ("数%注释", "数%注释"),
        ("a\\\\% c", "a\\\\% c"),
        ("%", ""),
        ("%\n", ""),
        ("text\r\n% c\r\nmore", "text\r\nmore"),
        ("a %b\n\n%c", "a %b\n\n"),
        ("  % indented", "  % indented"),
        ("x%\ny%z", "x%\ny%z"),
    ];

    /// Same inputs, `multiline=False`.
    const COMMENTS_NO_MULTILINE_CASES: &[(&str, &str)] = &[
        ("", ""),
        ("no comment", "no comment"),
        ("a % comment", "a"),
        ("a %", "a %"),
        ("a %\nb", "a %\nb"),
        ("a\\% not a comment", "a\\% not a comment"),
        ("50\\% and 10% real", "50\\% and 1"),
        ("% full line\nnext", "% full line\nnext"),
        ("%a\n%b\nc", "%a\nc"),
        ("x\n% line\ny", "x\ny"),
        ("x%y\n%z\nw", "\nw"),
        ("%%x", ""),
        ("a%%b", ""),
        ("\n%x", ""),
        ("a\n%\nb", "a\n%\nb"),
        ("line % c1\nline2 % c2\n", "line\nline2\n"),
        ("é%x", ""),
        ("数%注释", ""),
        ("a\\\\% c", "a\\\\% c"),
        ("%", "%"),
        ("%\n", "%\n"),
        ("text\r\n% c\r\nmore", "text\r\nmore"),
        ("a %b\n\n%c", "a\n"),
        ("  % indented", " "),
        ("x%\ny%z", "x%\n"),
    ];

    /// (input, ExpandMacroMapper().process_batched output), Data-Juicer 1.6.1.
    const MACRO_CASES: &[(&str, &str)] = &[
        ("", ""),
        ("no macros", "no macros"),
        (
            "\\newcommand{\\R}{\\mathbb{R}}\nLet $x \\in \\R$.",
            "\\newcommand{\\mathbb{R}}{\\mathbb{R}}\nLet $x \\in \\mathbb{R}$.",
        ),
        (
            "\\newcommand*{\\eps}{\\varepsilon}\n$\\eps>0$ \\eps",
            "\\newcommand*{\\varepsilon}{\\varepsilon}\n$\\varepsilon>0$ \\eps",
        ),
        (
            "\\def\\foo{bar}\n\\foo baz \\foo.",
            "\\defbar{bar}\nbar baz bar.",
        ),
        ("\\def \\foo {bar}\n\\foo!", "\\def bar {bar}\nbar!"),
        ("\\def\n\\foo\n{bar}\n\\foo!", "\\def\nbar\n{bar}\nbar!"),
        (
            "\\newcommand{\\a}{1}\n\\a\\a\\a.",
            "\\newcommand{1}{1}\n1\\a1.",
        ),
        (
            "\\newcommand{\\a}{1}\n\\ab \\a1 \\a_ \\a",
            "\\newcommand{1}{1}\n\\ab \\a1 1_ \\a",
        ),
        (
            "\\newcommand{\\x}{X}\n\\newcommand{\\x}{Y}\n\\x.",
            "\\newcommand{Y}{X}\n\\newcommand{Y}{Y}\nY.",
        ),
        (
            "\\def\\x{D}\n\\newcommand{\\x}{N}\n\\x.",
            "\\defD{D}\n\\newcommand{D}{N}\nD.",
        ),
        (
            "\\newcommand{\\x}{a}{b}\n\\x.",
            "\\newcommand{a}{b}{a}{b}\na}{b.",
        ),
        (
            "\\newcommand{\\x}{a} trailing\n\\x.",
            "\\newcommand{\\x}{a} trailing\n\\x.",
        ),
        ("\\newcommand{\\x}{}\n[\\x]", "\\newcommand{}{}\n[]"),
        (
            "\\newcommand{\\x_y}{v}\n\\x_y.",
            "\\newcommand{\\x_y}{v}\n\\x_y.",
        ),
        (
            "\\newcommand{\\v}{é数😀\\\\ \\1 \\g<0>}\n\\v.",
            "\\newcommand{é数😀\\\\ \\1 \\g<0>}{é数😀\\\\ \\1 \\g<0>}\né数😀\\\\ \\1 \\g<0>.",
        ),
        (
            "\\newcommand{\\v}{a\tb}\n\\v.",
            "\\newcommand{a\tb}{a\tb}\na\tb.",
        ),
        (
            "\\newcommand{\\x}[1]{#1}\n\\x{a}.",
            "\\newcommand{\\x}[1]{#1}\n\\x{a}.",
        ),
        (
            "\\renewcommand{\\x}{y}\n\\x.",
            "\\renewcommand{\\x}{y}\n\\x.",
        ),
        (
            "\\newcommand{\\A}{\\B}\n\\newcommand{\\B}{b}\n\\A.",
            "\\newcommand{b}{b}\n\\newcommand{b}{b}\nb.",
        ),
        (
            "\\newcommand{\\B}{b}\n\\newcommand{\\A}{\\B}\n\\A.",
            "\\newcommand{b}{b}\n\\newcommand{\\B}{b}\n\\B.",
        ),
        (
            "\\newcommand{\\x}{v}\r\n\\x.",
            "\\newcommand{\\x}{v}\r\n\\x.",
        ),
        ("\\newcommand{\\x}{v}\n\\x\n", "\\newcommand{v}{v}\nv\n"),
        ("\\def\\x{v}", "\\defv{v}"),
        ("\\defx\\y{v}\n\\y.", "\\defx\\y{v}\n\\y."),
        ("\\def\\x1{v}\n\\x1.", "\\defv{v}\nv."),
        ("\\newcommand {\\x}{v}\n\\x.", "\\newcommand {\\x}{v}\n\\x."),
        (
            "\\newcommand{\\x}{v}\\newcommand{\\y}{w}\n\\x.\\y.",
            "\\newcommand{v}\\newcommand{\\y}{w}{v}\\newcommand{\\y}{w}\nv}\\newcommand{\\y}{w.\\y.",
        ),
        (
            "\\newcommand{\\x}{v}\n\\newcommand{\\y}{\\x}\n\\y.",
            "\\newcommand{v}{v}\n\\newcommand{\\x}{v}\n\\x.",
        ),
    ];

    /// (output length in chars, output MD5) of each op on the long LaTeX document of
    /// `long_latex()`: header, bibliography, comments, macros.
    const LATEX_BIG: &[(usize, &str)] = &[
        (200064, "bea960d46b2ad5dd7693de3360cbff76"),
        (280106, "e43ec2005e2282ea6d2c84c05f49d302"),
        (320101, "0bed44ac5676bb1495c13f289c3b2633"),
        (480156, "5cff6856ecd553cddcb57457ee7e0e32"),
    ];

    /// Python: ("\\newcommand{\\R}{\\mathbb{R}}\n\\def\\eps{\\varepsilon}\n% preamble\n" +
    /// "intro " * 20000 + "\n\\section{Main} x \\R, \\eps. 50% done % note\n" + "body \\R " * 20000
    /// + "\n\\bibliography{refs}\n" + "ref " * 10000)
    fn long_latex() -> String {
        format!(
            "\\newcommand{{\\R}}{{\\mathbb{{R}}}}\n\\def\\eps{{\\varepsilon}}\n% preamble\n{}\n\\section{{Main}} x \\R, \\eps. 50% done % note\n{}\n\\bibliography{{refs}}\n{}",
            "intro ".repeat(20000),
            "body \\R ".repeat(20000),
            "ref ".repeat(10000)
        )
    }

    #[test]
    fn remove_header_matches_data_juicer() {
        check("remove_header_mapper", json!({}), HEADER_CASES);
        check(
            "remove_header_mapper",
            json!({"drop_no_head": false}),
            HEADER_KEEP_CASES,
        );
    }

    #[test]
    fn remove_bibliography_matches_data_juicer() {
        check("remove_bibliography_mapper", json!({}), BIBLIOGRAPHY_CASES);
    }

    #[test]
    fn remove_comments_matches_data_juicer() {
        check("remove_comments_mapper", json!({}), COMMENTS_CASES);
        check(
            "remove_comments_mapper",
            json!({"inline": false}),
            COMMENTS_NO_INLINE_CASES,
        );
        check(
            "remove_comments_mapper",
            json!({"multiline": false, "doc_type": ["tex", "md"]}),
            COMMENTS_NO_MULTILINE_CASES,
        );
        let t = "a % b\n% c\n";
        assert!(matches!(remove_comments(t, false, false), Cow::Borrowed(_)));
    }

    #[test]
    fn expand_macro_matches_data_juicer() {
        check("expand_macro_mapper", json!({}), MACRO_CASES);
    }

    #[test]
    fn long_texts() {
        let big = long_latex();
        let outs = [
            remove_header(&big, true).into_owned(),
            remove_bibliography(&big).into_owned(),
            remove_comments(&big, true, true).into_owned(),
            expand_macros(&big).into_owned(),
        ];
        assert_eq!(outs.len(), LATEX_BIG.len());
        for (out, (len, md5)) in outs.iter().zip(LATEX_BIG) {
            assert_eq!(out.chars().count(), *len);
            assert_eq!(md5_hex(out), *md5);
        }
        // Many candidate headings that never complete stay linear (Python, with 2000 repeats:
        // unchanged, unchanged, from 0, from the \\part).
        let t = "\\section[".repeat(50000);
        assert_eq!(first_heading(&t), None);
        let t = format!("{}]{{", "\\section[".repeat(50000));
        assert_eq!(first_heading(&t), None);
        let t = format!("{}]{{}}", "\\section[".repeat(50000));
        assert_eq!(first_heading(&t), Some(0));
        let t = format!("{}\\part{{x}}", "\\section[".repeat(50000));
        assert_eq!(remove_header(&t, false), "\\part{x}");
    }

    #[test]
    fn params() {
        let e = build("remove_header_mapper", json!({"drop_no_head": "yes"})).unwrap_err();
        assert!(matches!(e, ParamError::WrongType { .. }), "{e:?}");
        let e = build("expand_macro_mapper", json!({"macros": 1})).unwrap_err();
        assert!(matches!(e, ParamError::Unknown { .. }), "{e:?}");
        build("remove_comments_mapper", json!({"doc_type": "md"})).unwrap();
    }
}
