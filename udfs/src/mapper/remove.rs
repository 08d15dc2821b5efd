//! Removal mappers: `remove_long_words_mapper`, `remove_words_with_incorrect_substrings_mapper`,
//! `remove_repeat_sentences_mapper`, `remove_specific_chars_mapper`, `remove_table_text_mapper`
//! and `remove_non_chinese_character_mapper`.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::{Arc, LazyLock};

use serde_json::Value;

use crate::PY_MAXSIZE;
use crate::mapper::build_mapper;
use crate::models::WordSource;
use crate::operator::Operator;
use crate::params::{ParamError, ParamSpec, ParamType, Params};
use crate::spec::{ModelUse, OpKind, OpSpec};
use crate::text::{is_regex_space, py_lower, py_strip, special_characters, strip_chars};
use crate::udf::TextMapper;

/// Data-Juicer's `split_on_newline_tab_whitespace` + word filter + `merge_on_whitespace_tab_newline`:
/// split on `\n`, then `\t`, then the ASCII space (dropping empty words), keep the words `keep`
/// accepts, and join back with the same separators, dropping tab pieces and lines left without
/// words (so runs of separators collapse and empty lines disappear).
pub(crate) fn filter_words<'a>(text: &'a str, keep: impl Fn(&str) -> bool) -> Cow<'a, str> {
    // Most texts come back unchanged: every word kept and no empty word (no separator at either
    // end or next to another), so nothing collapses. Checked first by jumping between separators.
    let mut start = 0;
    let unchanged = loop {
        let end = memchr::memchr3(b' ', b'\t', b'\n', &text.as_bytes()[start..]).map(|i| start + i);
        let word = &text[start..end.unwrap_or(text.len())];
        if word.is_empty() || !keep(word) {
            break false;
        }
        match end {
            Some(e) => start = e + 1,
            None => break true,
        }
    };
    if unchanged {
        return Cow::Borrowed(text);
    }
    // One pass over the bytes (the three separators are ASCII), written straight into `out`; a
    // piece or line left without words is truncated away again, with the separator before it.
    let mut out = String::with_capacity(text.len());
    let (mut line_start, mut piece_start) = (0, 0);
    let (mut any_line, mut any_piece, mut any_word) = (false, false, false);
    let mut word_start = 0;
    let bytes = text.as_bytes();
    let separators = memchr::memchr3_iter(b' ', b'\t', b'\n', bytes).chain([bytes.len()]);
    for i in separators {
        // The end of the text ends the last line.
        let sep = bytes.get(i).copied().unwrap_or(b'\n');
        let word = &text[word_start..i];
        word_start = i + 1;
        if !word.is_empty() && keep(word) {
            if any_word {
                out.push(' ');
            }
            out.push_str(word);
            any_word = true;
        }
        if sep == b' ' {
            continue;
        }
        // End of a tab piece.
        if any_word {
            any_piece = true;
        } else {
            out.truncate(piece_start);
        }
        any_word = false;
        if sep == b'\t' {
            piece_start = out.len();
            if any_piece {
                out.push('\t');
            }
            continue;
        }
        // End of a line.
        if any_piece {
            any_line = true;
        } else {
            out.truncate(line_start);
        }
        any_piece = false;
        line_start = out.len();
        if any_line && i < bytes.len() {
            out.push('\n');
        }
        piece_start = out.len();
    }
    if out == text {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(out)
    }
}

/// `remove_long_words_mapper`'s word test: the length in characters is in `[min_len, max_len]`,
/// or it is too long but its SPECIAL_CHARACTERS-stripped form is in range (the word is kept
/// unstripped).
fn keep_by_length(word: &str, min_len: i64, max_len: i64) -> bool {
    // A word of b bytes has between ceil(b / 4) and b characters: often enough to decide.
    let b = word.len() as i64;
    if b <= max_len && (b + 3) / 4 >= min_len {
        return true;
    }
    let n = word.chars().count() as i64;
    if min_len <= n && n <= max_len {
        return true;
    }
    if n > max_len {
        let s = strip_chars(word, special_characters()).chars().count() as i64;
        return min_len <= s && s <= max_len;
    }
    false
}

#[derive(Debug)]
struct RemoveLongWords {
    min_len: i64,
    max_len: i64,
}

impl TextMapper for RemoveLongWords {
    fn map<'a>(&self, text: &'a str) -> Cow<'a, str> {
        // A non-empty word has between 1 and `text.len()` characters: with bounds that wide (the
        // defaults) every word is kept, and only empty words (runs of separators) can change
        // the text.
        if self.min_len <= 1
            && u64::try_from(self.max_len).is_ok_and(|max| max >= text.len() as u64)
            && !has_empty_word(text.as_bytes())
        {
            return Cow::Borrowed(text);
        }
        filter_words(text, |w| keep_by_length(w, self.min_len, self.max_len))
    }
}

/// Whether splitting on `\n`, `\t` and spaces gives an empty word: a separator first, last or
/// next to another (or an empty text). Branch-free over blocks, so it vectorizes.
fn has_empty_word(b: &[u8]) -> bool {
    let sep = |x: u8| (x == b' ') | (x == b'\t') | (x == b'\n');
    let (Some(&first), Some(&last)) = (b.first(), b.last()) else {
        return true;
    };
    if sep(first) || sep(last) {
        return true;
    }
    let (left, right) = (&b[..b.len() - 1], &b[1..]);
    left.chunks(64).zip(right.chunks(64)).any(|(l, r)| {
        l.iter()
            .zip(r)
            .fold(false, |acc, (&x, &y)| acc | (sep(x) & sep(y)))
    })
}

pub(crate) fn remove_long_words_spec() -> OpSpec {
    OpSpec {
        name: "remove_long_words_mapper",
        kind: OpKind::Mapper,
        model_use: ModelUse::None,
        params: || {
            vec![
                ParamSpec::new(
                    "min_len",
                    ParamType::Int,
                    Value::from(1),
                    "shortest word kept",
                ),
                ParamSpec::new(
                    "max_len",
                    ParamType::Int,
                    Value::from(PY_MAXSIZE),
                    "longest word kept (also after stripping special characters)",
                ),
            ]
        },
        build: |p| {
            Ok(build_mapper(
                p,
                Arc::new(RemoveLongWords {
                    min_len: p.int("min_len").unwrap_or(1),
                    max_len: p.int("max_len").unwrap_or(PY_MAXSIZE),
                }),
            ))
        },
        doc: "Remove words shorter than min_len or longer than max_len characters.",
    }
}

/// Data-Juicer's default `substrings`.
const DEFAULT_SUBSTRINGS: [&str; 5] = ["http", "www", ".com", "href", "//"];

#[derive(Debug)]
struct RemoveIncorrectSubstrings {
    substrings: Vec<String>,
    words: WordSource,
}

impl RemoveIncorrectSubstrings {
    fn keeps(&self, word: &str) -> bool {
        let w = strip_chars(word, special_characters());
        self.substrings.iter().all(|s| !w.contains(s.as_str()))
    }
}

impl TextMapper for RemoveIncorrectSubstrings {
    fn map<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match &self.words {
            WordSource::Whitespace => filter_words(text, |w| self.keeps(w)),
            // Data-Juicer's tokenized path: each piece without its `▁` marks is tested, and when
            // any piece goes, the text becomes the kept pieces concatenated (spaces included
            // only as the marks were, i.e. not at all).
            pieces => pieces.with_words(text, |words| {
                let mut out = String::new();
                let mut dropped = false;
                for piece in words {
                    let bare = piece.replace('\u{2581}', "");
                    if self.keeps(&bare) {
                        out.push_str(&bare);
                    } else {
                        dropped = true;
                    }
                }
                if dropped {
                    Cow::Owned(out)
                } else {
                    Cow::Borrowed(text)
                }
            }),
        }
    }
}

pub(crate) fn remove_incorrect_substrings_spec() -> OpSpec {
    OpSpec {
        name: "remove_words_with_incorrect_substrings_mapper",
        kind: OpKind::Mapper,
        model_use: ModelUse::WithSomeParams,
        params: || {
            vec![
                ParamSpec::new(
                    "lang",
                    ParamType::Str,
                    Value::String("en".into()),
                    "language (used only with tokenization)",
                ),
                ParamSpec::new(
                    "tokenization",
                    ParamType::Bool,
                    Value::Bool(false),
                    "split words into the pieces of the {lang}.sp.model SentencePiece model",
                ),
                ParamSpec::new(
                    "substrings",
                    ParamType::StrList,
                    Value::Null,
                    "substrings that mark a word for removal; None = http, www, .com, href, //",
                ),
            ]
        },
        build: build_incorrect_substrings,
        doc: "Remove words whose special-character-stripped form contains an incorrect substring.",
    }
}

fn build_incorrect_substrings(p: &Params) -> Result<Operator, ParamError> {
    let words = WordSource::from_params(p)?;
    let substrings = match p.raw("substrings") {
        Value::Null => DEFAULT_SUBSTRINGS.iter().map(|s| s.to_string()).collect(),
        _ => p.str_list("substrings").unwrap_or_default(),
    };
    Ok(build_mapper(
        p,
        Arc::new(RemoveIncorrectSubstrings { substrings, words }),
    ))
}

/// Data-Juicer's `split_sentence` substitutions, in order, each `regex.sub(p, r"\1\n\2", text)`.
/// The last class is Data-Juicer's `[.。!！？\?\.{6}\…{2}]`, which also holds `{`, `}`, `6` and `2`.
static SENTENCE_SPLITS: LazyLock<[regex::Regex; 4]> = LazyLock::new(|| {
    [
        r"([.。！!？?])([^’”])",
        r"(\.{6})([^’”])",
        r"(…{2})([^’”])",
        r"([.。!！？?{}62…][’”])([^’”])",
    ]
    .map(|p| regex::Regex::new(p).unwrap())
});

/// Data-Juicer's `split_sentence(line)`: a newline after sentence-ending punctuation (unless a
/// closing quote follows), then split on `\n`. Each piece keeps its leading whitespace.
pub(crate) fn split_sentences(line: &str) -> Vec<String> {
    let mut t = line.to_string();
    for re in SENTENCE_SPLITS.iter() {
        if let Cow::Owned(s) = re.replace_all(&t, "${1}\n${2}") {
            t = s;
        }
    }
    t.split('\n').map(String::from).collect()
}

#[derive(Debug)]
struct RemoveRepeatSentences {
    lowercase: bool,
    ignore_special_character: bool,
    min_repeat_sentence_length: i64,
}

/// Kept by `ignore_special_character`: `[a-zA-Z0-9\u4e00-\u9fa5\n\t ]`.
fn is_kept_for_key(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || ('\u{4e00}'..='\u{9fa5}').contains(&c)
        || matches!(c, '\n' | '\t' | ' ')
}

impl RemoveRepeatSentences {
    /// `remove_repeat_sentences_mapper`: per `\n`-line, split into sentences; a sentence whose key
    /// (stripped, optionally lower-cased and cleared of special characters) has at least
    /// `min_repeat_sentence_length` characters is kept only the first time its key is seen in the
    /// document. Sentences are re-joined without separators, lines with `\n`.
    fn dedup<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut seen: HashSet<String> = HashSet::new();
        let mut out = String::with_capacity(text.len());
        for (i, line) in text.split('\n').enumerate() {
            if i > 0 {
                out.push('\n');
            }
            if line.is_empty() {
                continue;
            }
            for sentence in split_sentences(line) {
                let mut key: Cow<'_, str> = Cow::Borrowed(py_strip(&sentence));
                if self.lowercase {
                    key = Cow::Owned(py_lower(&key).into_owned());
                }
                if self.ignore_special_character {
                    key = Cow::Owned(key.chars().filter(|&c| is_kept_for_key(c)).collect());
                }
                if (key.chars().count() as i64) < self.min_repeat_sentence_length {
                    out.push_str(&sentence);
                } else if !seen.contains(key.as_ref()) {
                    out.push_str(&sentence);
                    seen.insert(key.into_owned());
                }
            }
        }
        if out == text {
            Cow::Borrowed(text)
        } else {
            Cow::Owned(out)
        }
    }
}

impl TextMapper for RemoveRepeatSentences {
    fn map<'a>(&self, text: &'a str) -> Cow<'a, str> {
        self.dedup(text)
    }
}

pub(crate) fn remove_repeat_sentences_spec() -> OpSpec {
    OpSpec {
        name: "remove_repeat_sentences_mapper",
        kind: OpKind::Mapper,
        model_use: ModelUse::None,
        params: || {
            vec![
                ParamSpec::new(
                    "lowercase",
                    ParamType::Bool,
                    Value::Bool(false),
                    "compare sentences lower-cased",
                ),
                ParamSpec::new(
                    "ignore_special_character",
                    ParamType::Bool,
                    Value::Bool(true),
                    "compare sentences without characters other than a-zA-Z0-9, CJK, \\n \\t and space",
                ),
                ParamSpec::new(
                    "min_repeat_sentence_length",
                    ParamType::Int,
                    Value::from(2),
                    "shorter sentences (by their comparison key) are never removed",
                ),
                ParamSpec::new(
                    "tokenizer",
                    ParamType::Any,
                    Value::Null,
                    "custom sentence tokenizer (a Python callable or lambda string: not supported)",
                ),
            ]
        },
        build: build_repeat_sentences,
        doc: "Remove sentences repeated within a text (first occurrence kept).",
    }
}

fn build_repeat_sentences(p: &Params) -> Result<Operator, ParamError> {
    if !p.raw("tokenizer").is_null() {
        return Err(p.invalid(
            "tokenizer",
            "custom tokenizers (Python callables or lambda strings) are not supported; use the built-in splitter (null)",
        ));
    }
    Ok(build_mapper(
        p,
        Arc::new(RemoveRepeatSentences {
            lowercase: p.bool("lowercase"),
            ignore_special_character: p.bool("ignore_special_character"),
            min_repeat_sentence_length: p.int("min_repeat_sentence_length").unwrap_or(2),
        }),
    ))
}

/// Data-Juicer's default `chars_to_remove`.
pub(crate) const DEFAULT_CHARS_TO_REMOVE: &str = "◆●■►▼▲▴∆▻▷❖♡□";

/// `remove_specific_chars_mapper`: every character of the set is removed (Data-Juicer 1.6.1
/// escapes each character into one regex class, so `|` and other regex syntax are literal).
#[derive(Debug)]
struct RemoveSpecificChars {
    chars: HashSet<char>,
}

impl TextMapper for RemoveSpecificChars {
    fn map<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if self.chars.is_empty() || !text.chars().any(|c| self.chars.contains(&c)) {
            return Cow::Borrowed(text);
        }
        Cow::Owned(text.chars().filter(|c| !self.chars.contains(c)).collect())
    }
}

pub(crate) fn remove_specific_chars_spec() -> OpSpec {
    OpSpec {
        name: "remove_specific_chars_mapper",
        kind: OpKind::Mapper,
        model_use: ModelUse::None,
        params: || {
            vec![ParamSpec::new(
                "chars_to_remove",
                ParamType::StrList,
                Value::String(DEFAULT_CHARS_TO_REMOVE.into()),
                "characters to remove: a string, or a list of strings (all their characters)",
            )]
        },
        build: build_specific_chars,
        doc: "Remove the given characters (default: ◆●■►▼▲▴∆▻▷❖♡□).",
    }
}

fn build_specific_chars(p: &Params) -> Result<Operator, ParamError> {
    let chars: HashSet<char> = match p.raw("chars_to_remove") {
        // Falsy in Python ("" / [] / None): the op does nothing.
        Value::Null => HashSet::new(),
        Value::String(s) => s.chars().collect(),
        Value::Array(a) if a.is_empty() => HashSet::new(),
        _ => {
            let set: HashSet<char> = p
                .str_list("chars_to_remove")
                .unwrap_or_default()
                .iter()
                .flat_map(|s| s.chars().collect::<Vec<_>>())
                .collect();
            if set.is_empty() {
                // Python builds the pattern "[]": regex error "unterminated character set".
                return Err(p.invalid(
                    "chars_to_remove",
                    "a list of only empty strings gives an empty character class",
                ));
            }
            set
        }
    };
    Ok(build_mapper(p, Arc::new(RemoveSpecificChars { chars })))
}

/// The numbers of columns a line can be read as by Data-Juicer's table row
/// `(\S+?)([ |\t](\S+?)){i}\n+`: tokens of non-whitespace characters separated by single spaces,
/// tabs or `|` (a `|` may also be part of a token). `None` if the line cannot be a row (empty, or
/// other whitespace, or separators next to each other or at an end).
fn row_columns(line: &str) -> Option<(usize, usize)> {
    let mut fields = 0;
    let mut extra = 0;
    for field in line.split([' ', '\t']) {
        let chars: Vec<char> = field.chars().collect();
        if chars.is_empty() || chars.iter().any(|&c| is_regex_space(c)) {
            return None;
        }
        fields += 1;
        // At most ceil(run / 2) non-adjacent interior `|` of each run can separate tokens.
        let mut run: usize = 0;
        for (k, &c) in chars.iter().enumerate() {
            let interior = k > 0 && k + 1 < chars.len();
            if c == '|' && interior {
                run += 1;
            } else {
                extra += run.div_ceil(2);
                run = 0;
            }
        }
        extra += run.div_ceil(2);
    }
    Some((fields, fields + extra))
}

/// One pass of `regex.sub(r"(?<=\n)((\S+?)([ |\t](\S+?)){%d}\n+){2,}", "", text)` for rows of
/// `columns` tokens: every run of at least two consecutive lines that are rows of that many
/// columns, each followed by its newlines, and that starts right after a newline, is removed.
fn remove_tables_pass(text: &str, columns: usize) -> Cow<'_, str> {
    let mut out: Option<String> = None;
    let mut last = 0;
    // (start of the run, end of its last row's newlines, rows in the run)
    let mut run: Option<(usize, usize, usize)> = None;
    let flush =
        |run: &mut Option<(usize, usize, usize)>, out: &mut Option<String>, last: &mut usize| {
            if let Some((s, e, n)) = run.take()
                && n >= 2
            {
                let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
                o.push_str(&text[*last..s]);
                *last = e;
            }
        };
    let mut pos = 0;
    while pos < text.len() {
        let content_end = text[pos..].find('\n').map_or(text.len(), |e| pos + e);
        let nl_end = content_end
            + text[content_end..]
                .bytes()
                .take_while(|&b| b == b'\n')
                .count();
        let is_row = pos > 0
            && nl_end > content_end
            && row_columns(&text[pos..content_end])
                .is_some_and(|(lo, hi)| lo <= columns && columns <= hi);
        if is_row {
            match &mut run {
                Some((_, e, n)) => {
                    *e = nl_end;
                    *n += 1;
                }
                None => run = Some((pos, nl_end, 1)),
            }
        } else {
            flush(&mut run, &mut out, &mut last);
        }
        pos = nl_end;
    }
    flush(&mut run, &mut out, &mut last);
    match out {
        None => Cow::Borrowed(text),
        Some(mut o) => {
            o.push_str(&text[last..]);
            Cow::Owned(o)
        }
    }
}

#[derive(Debug)]
struct RemoveTableText {
    min_col: usize,
    max_col: usize,
}

impl RemoveTableText {
    /// `remove_table_text_mapper`: one pass per column count, `min_col` to `max_col`, in order.
    fn remove<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut cur = Cow::Borrowed(text);
        for columns in self.min_col..=self.max_col {
            if let Cow::Owned(s) = remove_tables_pass(&cur, columns) {
                cur = Cow::Owned(s);
            }
        }
        cur
    }
}

impl TextMapper for RemoveTableText {
    fn map<'a>(&self, text: &'a str) -> Cow<'a, str> {
        self.remove(text)
    }
}

pub(crate) fn remove_table_text_spec() -> OpSpec {
    OpSpec {
        name: "remove_table_text_mapper",
        kind: OpKind::Mapper,
        model_use: ModelUse::None,
        params: || {
            vec![
                ParamSpec::new(
                    "min_col",
                    ParamType::Int,
                    Value::from(2),
                    "fewest columns of a table to remove (2..20)",
                ),
                ParamSpec::new(
                    "max_col",
                    ParamType::Int,
                    Value::from(20),
                    "most columns of a table to remove (2..20)",
                ),
            ]
        },
        build: build_table_text,
        doc: "Remove plain-text tables: runs of 2+ lines of min_col..max_col space/tab/|-separated columns.",
    }
}

fn build_table_text(p: &Params) -> Result<Operator, ParamError> {
    let mut cols = [0usize; 2];
    for (slot, name) in cols.iter_mut().zip(["min_col", "max_col"]) {
        let v = p
            .int(name)
            .unwrap_or(if name == "min_col" { 2 } else { 20 });
        if !(2..=20).contains(&v) {
            // pydantic: "Input should be greater than or equal to 2" / "less than or equal to 20"
            return Err(p.invalid(name, format!("must be between 2 and 20, got {v}")));
        }
        *slot = v as usize;
    }
    Ok(build_mapper(
        p,
        Arc::new(RemoveTableText {
            min_col: cols[0],
            max_col: cols[1],
        }),
    ))
}

/// The punctuation kept by `remove_non_chinese_character_mapper` with `keep_punc`.
const KEPT_PUNCTUATION: &str = ".， ,-。%《*》/•、&＆(—)（+）：？!！“”·";

#[derive(Debug)]
struct RemoveNonChinese {
    keep_alphabet: bool,
    keep_number: bool,
    keep_punc: bool,
}

impl RemoveNonChinese {
    fn keeps(&self, c: char) -> bool {
        ('\u{4e00}'..='\u{9fa5}').contains(&c)
            || (self.keep_alphabet && c.is_ascii_alphabetic())
            || (self.keep_number && c.is_ascii_digit())
            || (self.keep_punc && KEPT_PUNCTUATION.contains(c))
    }
}

impl TextMapper for RemoveNonChinese {
    fn map<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if text.chars().all(|c| self.keeps(c)) {
            return Cow::Borrowed(text);
        }
        Cow::Owned(text.chars().filter(|&c| self.keeps(c)).collect())
    }
}

pub(crate) fn remove_non_chinese_spec() -> OpSpec {
    OpSpec {
        name: "remove_non_chinese_character_mapper",
        kind: OpKind::Mapper,
        model_use: ModelUse::None,
        params: || {
            vec![
                ParamSpec::new(
                    "keep_alphabet",
                    ParamType::Bool,
                    Value::Bool(true),
                    "keep A-Z a-z",
                ),
                ParamSpec::new(
                    "keep_number",
                    ParamType::Bool,
                    Value::Bool(true),
                    "keep 0-9",
                ),
                ParamSpec::new(
                    "keep_punc",
                    ParamType::Bool,
                    Value::Bool(true),
                    "keep the punctuation .， ,-。%《*》/•、&＆(—)（+）：？!！“”·",
                ),
            ]
        },
        build: |p| {
            Ok(build_mapper(
                p,
                Arc::new(RemoveNonChinese {
                    keep_alphabet: p.bool("keep_alphabet"),
                    keep_number: p.bool("keep_number"),
                    keep_punc: p.bool("keep_punc"),
                }),
            ))
        },
        doc: "Remove characters outside U+4E00..U+9FA5 (optionally keeping ASCII letters, digits, punctuation).",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The straightforward split/filter/join that `filter_words` does in one pass.
    fn filter_words_by_splitting(text: &str, keep: impl Fn(&str) -> bool) -> String {
        let lines: Vec<String> = text
            .split('\n')
            .map(|line| {
                let pieces: Vec<String> = line
                    .split('\t')
                    .map(|p| {
                        let words: Vec<&str> =
                            p.split(' ').filter(|w| !w.is_empty() && keep(w)).collect();
                        words.join(" ")
                    })
                    .filter(|p| !p.is_empty())
                    .collect();
                pieces.join("\t")
            })
            .filter(|l| !l.is_empty())
            .collect();
        lines.join("\n")
    }

    #[test]
    fn empty_words_are_found_exactly() {
        let splits = |t: &str| t.split(['\n', '\t', ' ']).any(str::is_empty);
        let mut state = 11u64;
        for _ in 0..5000 {
            let mut t = String::new();
            for _ in 0..(state % 150) {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                t.push(['a', ' ', '\t', '\n', 'é', 'b', 'c', 'd'][(state >> 40) as usize % 8]);
            }
            assert_eq!(has_empty_word(t.as_bytes()), splits(&t), "{t:?}");
        }
    }

    #[test]
    fn filter_words_matches_split_filter_join() {
        let texts = [
            "",
            " ",
            "\n",
            "\t",
            "a",
            "a b",
            " a  b ",
            "a\n\nb",
            "\n\nx",
            "x\n",
            "\tx\t\ty",
            "a\t\n\tb",
            "ab cd\te\n\n fg h\t\t ij\n",
            "long word\tw\nlonger words here\n",
            "é  ü\tß\nçà",
            "a\tbb\nccc dd\te",
        ];
        let keeps: [&dyn Fn(&str) -> bool; 3] =
            [&|_| true, &|_| false, &|w: &str| w.chars().count() <= 2];
        for t in texts {
            for (k, keep) in keeps.iter().enumerate() {
                assert_eq!(
                    filter_words(t, keep),
                    filter_words_by_splitting(t, keep),
                    "text {t:?}, keep #{k}"
                );
            }
        }
    }
    use crate::test_support::md5_hex;
    use crate::test_support::{build, map_texts};
    use serde_json::json;

    fn run(op: &str, params: &Value, texts: &[&str]) -> Vec<String> {
        let op = build(op, params.clone()).unwrap();
        let input: Vec<Option<&str>> = texts.iter().map(|t| Some(*t)).collect();
        map_texts(&op, &input)
            .into_iter()
            .map(|o| o.unwrap())
            .collect()
    }

    fn check(op: &str, params: Value, cases: &[(&str, &str)]) {
        let texts: Vec<&str> = cases.iter().map(|c| c.0).collect();
        let got = run(op, &params, &texts);
        for ((input, want), got) in cases.iter().zip(got) {
            assert_eq!(got, *want, "{op} {params} input {input:?}");
        }
    }

    /// (input, RemoveLongWordsMapper().process_batched output), Data-Juicer 1.6.1.
    const LONG_WORDS_CASES: &[(&str, &str)] = &[
        ("", ""),
        ("   ", ""),
        ("\n\n", ""),
        ("a", "a"),
        ("short words only", "short words only"),
        ("a  b   c", "a b c"),
        ("tab\tseparated\twords", "tab\tseparated\twords"),
        ("line one\n\nline three\n", "line one\nline three"),
        (
            "supercalifragilisticexpialidocious is long",
            "supercalifragilisticexpialidocious is long",
        ),
        ("(((((parenthesized)))))", "(((((parenthesized)))))"),
        ("!!!!!!!!!!!", "!!!!!!!!!!!"),
        ("ab!!!!!!!!", "ab!!!!!!!!"),
        (
            "数据处理是一个很长的中文词组",
            "数据处理是一个很长的中文词组",
        ),
        (
            "e\u{301}e\u{301}e\u{301} combining",
            "e\u{301}e\u{301}e\u{301} combining",
        ),
        ("😀😀😀😀😀😀😀 emoji", "😀😀😀😀😀😀😀 emoji"),
        (
            "http://example.com/very/long/path ok",
            "http://example.com/very/long/path ok",
        ),
        ("visit www.site.org today", "visit www.site.org today"),
        (
            "mail@x.com //comment href= test",
            "mail@x.com //comment href= test",
        ),
        ("HTTP upper", "HTTP upper"),
        (".com alone", ".com alone"),
        ("x\u{a0}y nbsp\u{3000}ideo", "x\u{a0}y nbsp\u{3000}ideo"),
        (" \t \n \t ", ""),
        ("end \n", "end"),
        ("ab cab abc a-b", "ab cab abc a-b"),
        ("数 数据 据", "数 数据 据"),
        ("a\r\nb c\r\n", "a\r\nb c\r"),
        ("ＡＢＣＤＥＦＧ full", "ＡＢＣＤＥＦＧ full"),
        ("--http--", "--http--"),
        ("http", "http"),
        ("a  \t  b", "a\tb"),
    ];

    /// Same inputs, `min_len=3, max_len=6`.
    const LONG_WORDS_PARAMS_CASES: &[(&str, &str)] = &[
        ("", ""),
        ("   ", ""),
        ("\n\n", ""),
        ("a", ""),
        ("short words only", "short words only"),
        ("a  b   c", ""),
        ("tab\tseparated\twords", "tab\twords"),
        ("line one\n\nline three\n", "line one\nline three"),
        ("supercalifragilisticexpialidocious is long", "long"),
        ("(((((parenthesized)))))", ""),
        ("!!!!!!!!!!!", ""),
        ("ab!!!!!!!!", ""),
        ("数据处理是一个很长的中文词组", ""),
        (
            "e\u{301}e\u{301}e\u{301} combining",
            "e\u{301}e\u{301}e\u{301}",
        ),
        ("😀😀😀😀😀😀😀 emoji", "emoji"),
        ("http://example.com/very/long/path ok", ""),
        ("visit www.site.org today", "visit today"),
        ("mail@x.com //comment href= test", "href= test"),
        ("HTTP upper", "HTTP upper"),
        (".com alone", ".com alone"),
        ("x\u{a0}y nbsp\u{3000}ideo", "x\u{a0}y"),
        (" \t \n \t ", ""),
        ("end \n", "end"),
        ("ab cab abc a-b", "cab abc a-b"),
        ("数 数据 据", ""),
        ("a\r\nb c\r\n", ""),
        ("ＡＢＣＤＥＦＧ full", "full"),
        ("--http--", "--http--"),
        ("http", "http"),
        ("a  \t  b", ""),
    ];

    /// (input, RemoveWordsWithIncorrectSubstringsMapper().process_batched output), 1.6.1.
    const SUBSTRINGS_CASES: &[(&str, &str)] = &[
        ("", ""),
        ("   ", ""),
        ("\n\n", ""),
        ("a", "a"),
        ("short words only", "short words only"),
        ("a  b   c", "a b c"),
        ("tab\tseparated\twords", "tab\tseparated\twords"),
        ("line one\n\nline three\n", "line one\nline three"),
        (
            "supercalifragilisticexpialidocious is long",
            "supercalifragilisticexpialidocious is long",
        ),
        ("(((((parenthesized)))))", "(((((parenthesized)))))"),
        ("!!!!!!!!!!!", "!!!!!!!!!!!"),
        ("ab!!!!!!!!", "ab!!!!!!!!"),
        (
            "数据处理是一个很长的中文词组",
            "数据处理是一个很长的中文词组",
        ),
        (
            "e\u{301}e\u{301}e\u{301} combining",
            "e\u{301}e\u{301}e\u{301} combining",
        ),
        ("😀😀😀😀😀😀😀 emoji", "😀😀😀😀😀😀😀 emoji"),
        ("http://example.com/very/long/path ok", "ok"),
        ("visit www.site.org today", "visit today"),
        ("mail@x.com //comment href= test", "//comment test"),
        ("HTTP upper", "HTTP upper"),
        (".com alone", ".com alone"),
        ("x\u{a0}y nbsp\u{3000}ideo", "x\u{a0}y nbsp\u{3000}ideo"),
        (" \t \n \t ", ""),
        ("end \n", "end"),
        ("ab cab abc a-b", "ab cab abc a-b"),
        ("数 数据 据", "数 数据 据"),
        ("a\r\nb c\r\n", "a\r\nb c\r"),
        ("ＡＢＣＤＥＦＧ full", "ＡＢＣＤＥＦＧ full"),
        ("--http--", ""),
        ("http", ""),
        ("a  \t  b", "a\tb"),
    ];

    /// Same inputs, `substrings=["ab", "数"]`.
    const SUBSTRINGS_PARAMS_CASES: &[(&str, &str)] = &[
        ("", ""),
        ("   ", ""),
        ("\n\n", ""),
        ("a", "a"),
        ("short words only", "short words only"),
        ("a  b   c", "a b c"),
        ("tab\tseparated\twords", "separated\twords"),
        ("line one\n\nline three\n", "line one\nline three"),
        (
            "supercalifragilisticexpialidocious is long",
            "supercalifragilisticexpialidocious is long",
        ),
        ("(((((parenthesized)))))", "(((((parenthesized)))))"),
        ("!!!!!!!!!!!", "!!!!!!!!!!!"),
        ("ab!!!!!!!!", ""),
        ("数据处理是一个很长的中文词组", ""),
        (
            "e\u{301}e\u{301}e\u{301} combining",
            "e\u{301}e\u{301}e\u{301} combining",
        ),
        ("😀😀😀😀😀😀😀 emoji", "😀😀😀😀😀😀😀 emoji"),
        (
            "http://example.com/very/long/path ok",
            "http://example.com/very/long/path ok",
        ),
        ("visit www.site.org today", "visit www.site.org today"),
        (
            "mail@x.com //comment href= test",
            "mail@x.com //comment href= test",
        ),
        ("HTTP upper", "HTTP upper"),
        (".com alone", ".com alone"),
        ("x\u{a0}y nbsp\u{3000}ideo", "x\u{a0}y nbsp\u{3000}ideo"),
        (" \t \n \t ", ""),
        ("end \n", "end"),
        ("ab cab abc a-b", "a-b"),
        ("数 数据 据", "据"),
        ("a\r\nb c\r\n", "a\r\nb c\r"),
        ("ＡＢＣＤＥＦＧ full", "ＡＢＣＤＥＦＧ full"),
        ("--http--", "--http--"),
        ("http", "http"),
        ("a  \t  b", "a\tb"),
    ];

    /// (input, RemoveRepeatSentencesMapper().process_batched output), Data-Juicer 1.6.1.
    const REPEAT_CASES: &[(&str, &str)] = &[
        ("", ""),
        ("One. Two. One.", "One. Two."),
        ("Hello world! Hello world! Bye.", "Hello world! Bye."),
        ("a. a. a.", "a. a. a."),
        ("重复。重复。不同。", "重复。不同。"),
        ("他说：“你好。”你好。", "他说：“你好。”你好。"),
        ("Wait...... Wait...... ok", "Wait...... Wait...... ok"),
        ("嗯……嗯……好", "嗯……嗯……好"),
        (
            "Line one.\nLine one.\n\nLine two.",
            "Line one.\n\n\nLine two.",
        ),
        ("Same, same. same! SAME?", "Same, same. same! SAME?"),
        ("x\ny\nx", "x\ny\nx"),
        ("  Spaces. Spaces.  ", "  Spaces.  "),
        ("6” quote 6”x", "6” quote 6”x"),
        ("{”x}”y", "{”x}”y"),
        ("2’ 2’", "2’ 2’"),
        ("Q? Q? A.", "Q? Q? A."),
        ("Ünïcödé. Ünïcödé.", "Ünïcödé."),
        ("\u{130}stanbul. istanbul.", "\u{130}stanbul. istanbul."),
        ("ab. ab. ab", "ab."),
        ("no punctuation here", "no punctuation here"),
        ("1.2.3.4", "1.2.3.4"),
        ("End.", "End."),
        ("😀. 😀. ok", "😀. 😀. ok"),
        ("Tab\tand. Tab\tand.", "Tab\tand."),
        (
            "中文句子。中文句子！English. English.",
            "中文句子。English.",
        ),
    ];

    /// Same inputs, `lowercase=True, ignore_special_character=False, min_repeat_sentence_length=5`.
    const REPEAT_PARAMS_CASES: &[(&str, &str)] = &[
        ("", ""),
        ("One. Two. One.", "One. Two. One."),
        ("Hello world! Hello world! Bye.", "Hello world! Bye."),
        ("a. a. a.", "a. a. a."),
        ("重复。重复。不同。", "重复。重复。不同。"),
        ("他说：“你好。”你好。", "他说：“你好。”你好。"),
        ("Wait...... Wait...... ok", "Wait...... Wait...... ok"),
        ("嗯……嗯……好", "嗯……嗯……好"),
        (
            "Line one.\nLine one.\n\nLine two.",
            "Line one.\n\n\nLine two.",
        ),
        ("Same, same. same! SAME?", "Same, same. same! SAME?"),
        ("x\ny\nx", "x\ny\nx"),
        ("  Spaces. Spaces.  ", "  Spaces.  "),
        ("6” quote 6”x", "6” quote 6”x"),
        ("{”x}”y", "{”x}”y"),
        ("2’ 2’", "2’ 2’"),
        ("Q? Q? A.", "Q? Q? A."),
        ("Ünïcödé. Ünïcödé.", "Ünïcödé."),
        ("\u{130}stanbul. istanbul.", "\u{130}stanbul. istanbul."),
        ("ab. ab. ab", "ab. ab. ab"),
        ("no punctuation here", "no punctuation here"),
        ("1.2.3.4", "1.2.3.4"),
        ("End.", "End."),
        ("😀. 😀. ok", "😀. 😀. ok"),
        ("Tab\tand. Tab\tand.", "Tab\tand."),
        (
            "中文句子。中文句子！English. English.",
            "中文句子。中文句子！English.",
        ),
    ];

    /// (input, RemoveSpecificCharsMapper().process_batched output), Data-Juicer 1.6.1.
    const SPECIFIC_CHARS_CASES: &[(&str, &str)] = &[
        ("", ""),
        ("no special", "no special"),
        ("◆ bullet ● points ■", " bullet  points "),
        ("►▼▲▴∆▻▷❖♡□ all", " all"),
        ("a|b|c", "a|b|c"),
        ("x-y]z\\w^v", "x-y]z\\w^v"),
        ("abc", "abc"),
        ("◆\n●", "\n"),
        ("数据◆处理", "数据处理"),
    ];

    /// Same inputs, `chars_to_remove=["|a", "-", "]", "\\", "^"]`.
    const SPECIFIC_CHARS_LIST_CASES: &[(&str, &str)] = &[
        ("", ""),
        ("no special", "no specil"),
        ("◆ bullet ● points ■", "◆ bullet ● points ■"),
        ("►▼▲▴∆▻▷❖♡□ all", "►▼▲▴∆▻▷❖♡□ ll"),
        ("a|b|c", "bc"),
        ("x-y]z\\w^v", "xyzwv"),
        ("abc", "bc"),
        ("◆\n●", "◆\n●"),
        ("数据◆处理", "数据◆处理"),
    ];

    /// (input, RemoveTableTextMapper().process_batched output), Data-Juicer 1.6.1.
    const TABLE_CASES: &[(&str, &str)] = &[
        ("", ""),
        ("no table", "no table"),
        ("intro\na b\nc d\nend", "intro\nend"),
        ("a b\nc d\ne f\n", "a b\n"),
        ("x\na b\nc d\n", "x\n"),
        ("x\na b\nc d\n\ne f\n", "x\n"),
        ("x\na|b\nc|d\n", "x\n"),
        ("x\na b c\nd e f\ng h\n", "x\ng h\n"),
        ("x\na b c\nd e f\n", "x\n"),
        ("x\none row only\n", "x\none row only\n"),
        ("x\na  b\nc d\n", "x\na  b\nc d\n"),
        ("x\na\tb\nc\td\n", "x\n"),
        ("x\na | b\nc | d\n", "x\n"),
        ("x\na|b c\nd e\n", "x\n"),
        (
            "x\n1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n",
            "x\n1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n",
        ),
        ("x\na b\nc d", "x\na b\nc d"),
        ("x\na b\r\nc d\r\n", "x\na b\r\nc d\r\n"),
        ("x\n数 据\n处 理\n", "x\n"),
        ("x\na b\nc d e\nf g h\nk l\n", "x\na b\nk l\n"),
        ("\na b\nc d\n", "\n"),
        ("x\n\na b\nc d\n", "x\n\n"),
        ("x\na||b\nc||d\n", "x\n"),
        ("x\na|||b\nc|||d\n", "x\n"),
        ("x\n|a b\nc d|\n", "x\n"),
        ("x\na\u{3000}b\nc d\n", "x\na\u{3000}b\nc d\n"),
        ("x\na b\nc d\n\n\ny\n", "x\ny\n"),
        ("x\na b \nc d\n", "x\na b \nc d\n"),
        (
            "Name Age\nBob 30\nAmy 25\nText after.",
            "Name Age\nText after.",
        ),
        ("x\na,b c\nd e\nmore text here\n", "x\nmore text here\n"),
    ];

    /// Same inputs, `min_col=3, max_col=3`.
    const TABLE_THREE_CASES: &[(&str, &str)] = &[
        ("", ""),
        ("no table", "no table"),
        ("intro\na b\nc d\nend", "intro\na b\nc d\nend"),
        ("a b\nc d\ne f\n", "a b\nc d\ne f\n"),
        ("x\na b\nc d\n", "x\na b\nc d\n"),
        ("x\na b\nc d\n\ne f\n", "x\na b\nc d\n\ne f\n"),
        ("x\na|b\nc|d\n", "x\na|b\nc|d\n"),
        ("x\na b c\nd e f\ng h\n", "x\ng h\n"),
        ("x\na b c\nd e f\n", "x\n"),
        ("x\none row only\n", "x\none row only\n"),
        ("x\na  b\nc d\n", "x\na  b\nc d\n"),
        ("x\na\tb\nc\td\n", "x\na\tb\nc\td\n"),
        ("x\na | b\nc | d\n", "x\n"),
        ("x\na|b c\nd e\n", "x\na|b c\nd e\n"),
        (
            "x\n1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n",
            "x\n1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n",
        ),
        ("x\na b\nc d", "x\na b\nc d"),
        ("x\na b\r\nc d\r\n", "x\na b\r\nc d\r\n"),
        ("x\n数 据\n处 理\n", "x\n数 据\n处 理\n"),
        ("x\na b\nc d e\nf g h\nk l\n", "x\na b\nk l\n"),
        ("\na b\nc d\n", "\na b\nc d\n"),
        ("x\n\na b\nc d\n", "x\n\na b\nc d\n"),
        ("x\na||b\nc||d\n", "x\na||b\nc||d\n"),
        ("x\na|||b\nc|||d\n", "x\n"),
        ("x\n|a b\nc d|\n", "x\n|a b\nc d|\n"),
        ("x\na\u{3000}b\nc d\n", "x\na\u{3000}b\nc d\n"),
        ("x\na b\nc d\n\n\ny\n", "x\na b\nc d\n\n\ny\n"),
        ("x\na b \nc d\n", "x\na b \nc d\n"),
        (
            "Name Age\nBob 30\nAmy 25\nText after.",
            "Name Age\nBob 30\nAmy 25\nText after.",
        ),
        (
            "x\na,b c\nd e\nmore text here\n",
            "x\na,b c\nd e\nmore text here\n",
        ),
    ];

    /// (input, RemoveNonChineseCharacterlMapper().process_batched output), Data-Juicer 1.6.1.
    const NON_CHINESE_CASES: &[(&str, &str)] = &[
        ("", ""),
        ("中文", "中文"),
        ("中文abc123", "中文abc123"),
        ("中文，标点。测试！", "中文，标点。测试！"),
        ("English only.", "English only."),
        ("数据 处理 2024年", "数据 处理 2024年"),
        ("Ｆｕｌｌ\u{3000}ｗｉｄｔｈ", ""),
        ("日本語のテキスト", "日本語"),
        ("한국어 텍스트", " "),
        ("emoji 😀 中", "emoji  中"),
        ("mixed: a-b_c/d*e+f(g)h&i", "mixed a-bc/d*e+f(g)h&i"),
        ("“引号”·点", "“引号”·点"),
        ("tab\tnewline\n中", "tabnewline中"),
        ("繁體中文", "繁體中文"),
        ("龥龦一䷿", "龥一"),
        ("١٢٣ ٣", " "),
    ];

    /// Same inputs, `keep_alphabet=False, keep_number=False, keep_punc=False`.
    const NON_CHINESE_NONE_CASES: &[(&str, &str)] = &[
        ("", ""),
        ("中文", "中文"),
        ("中文abc123", "中文"),
        ("中文，标点。测试！", "中文标点测试"),
        ("English only.", ""),
        ("数据 处理 2024年", "数据处理年"),
        ("Ｆｕｌｌ\u{3000}ｗｉｄｔｈ", ""),
        ("日本語のテキスト", "日本語"),
        ("한국어 텍스트", ""),
        ("emoji 😀 中", "中"),
        ("mixed: a-b_c/d*e+f(g)h&i", ""),
        ("“引号”·点", "引号点"),
        ("tab\tnewline\n中", "中"),
        ("繁體中文", "繁體中文"),
        ("龥龦一䷿", "龥一"),
        ("١٢٣ ٣", ""),
    ];

    /// (output length in chars, output MD5) of remove_long_words (max_len 10),
    /// remove_words_with_incorrect_substrings, remove_repeat_sentences, remove_table_text and
    /// remove_non_chinese_character on `long_text()`.
    const REMOVE_BIG: &[(usize, &str)] = &[
        (107003, "4f4fc3caa1501669e13eed3c001f7af4"),
        (182005, "159387c72ecc75a32435e6ee2e6905b1"),
        (53076, "3d4e20c47f94bd048e032bf40dcbd364"),
        (203006, "5ae5de86a2edc492538b110d07daeb2b"),
        (212004, "5a1c1401b7f1d3aade7e9b2dda08d235"),
    ];

    /// Python: ("Hello world. " * 5000 + "\n" + "a|b c\n" * 3000 + "see http://x.com now " * 3000
    /// + "数据处理。" * 5000 + "\n" + "x" * 50000 + " end")
    fn long_text() -> String {
        format!(
            "{}\n{}{}{}\n{} end",
            "Hello world. ".repeat(5000),
            "a|b c\n".repeat(3000),
            "see http://x.com now ".repeat(3000),
            "数据处理。".repeat(5000),
            "x".repeat(50000)
        )
    }

    #[test]
    fn remove_long_words_matches_data_juicer() {
        check("remove_long_words_mapper", json!({}), LONG_WORDS_CASES);
        check(
            "remove_long_words_mapper",
            json!({"min_len": 3, "max_len": 6}),
            LONG_WORDS_PARAMS_CASES,
        );
    }

    #[test]
    fn remove_incorrect_substrings_matches_data_juicer() {
        let op = "remove_words_with_incorrect_substrings_mapper";
        check(op, json!({}), SUBSTRINGS_CASES);
        check(
            op,
            json!({"substrings": ["ab", "数"]}),
            SUBSTRINGS_PARAMS_CASES,
        );
        // An empty list keeps every word (all() of nothing); "" removes every word.
        assert_eq!(
            run(op, &json!({"substrings": []}), &["a  b\n\nc"]),
            vec!["a b\nc"]
        );
        assert_eq!(run(op, &json!({"substrings": [""]}), &["a b"]), vec![""]);
        let e = build(op, json!({"tokenization": true, "lang": "qq"})).unwrap_err();
        assert!(matches!(e, ParamError::Model { .. }), "{e}");
        assert!(
            e.to_string().contains("model file qq.sp.model not found"),
            "{e}"
        );
    }

    #[test]
    fn remove_repeat_sentences_matches_data_juicer() {
        check("remove_repeat_sentences_mapper", json!({}), REPEAT_CASES);
        check(
            "remove_repeat_sentences_mapper",
            json!({"lowercase": true, "ignore_special_character": false, "min_repeat_sentence_length": 5}),
            REPEAT_PARAMS_CASES,
        );
        let e = build(
            "remove_repeat_sentences_mapper",
            json!({"tokenizer": "lambda t: t.split('.')"}),
        )
        .unwrap_err();
        assert_eq!(e.param(), "tokenizer");
    }

    #[test]
    fn remove_specific_chars_matches_data_juicer() {
        check(
            "remove_specific_chars_mapper",
            json!({}),
            SPECIFIC_CHARS_CASES,
        );
        check(
            "remove_specific_chars_mapper",
            json!({"chars_to_remove": ["|a", "-", "]", "\\", "^"]}),
            SPECIFIC_CHARS_LIST_CASES,
        );
        // "" and [] are falsy in Python: no-op.
        for p in [
            json!({"chars_to_remove": ""}),
            json!({"chars_to_remove": []}),
        ] {
            assert_eq!(run("remove_specific_chars_mapper", &p, &["◆a"]), vec!["◆a"]);
        }
        // [""] makes Python build the invalid pattern "[]".
        let e = build(
            "remove_specific_chars_mapper",
            json!({"chars_to_remove": [""]}),
        )
        .unwrap_err();
        assert_eq!(e.param(), "chars_to_remove");
    }

    #[test]
    fn remove_table_text_matches_data_juicer() {
        check("remove_table_text_mapper", json!({}), TABLE_CASES);
        check(
            "remove_table_text_mapper",
            json!({"min_col": 3, "max_col": 3}),
            TABLE_THREE_CASES,
        );
        assert_eq!(row_columns("a|b c"), Some((2, 3)));
        assert_eq!(row_columns("a|||b"), Some((1, 3)));
        assert_eq!(row_columns("|a|"), Some((1, 1)));
        assert_eq!(row_columns("a  b"), None);
        assert_eq!(row_columns("a\u{3000}b"), None);
        for (p, v) in [("min_col", 1), ("max_col", 21)] {
            let e = build("remove_table_text_mapper", json!({p: v})).unwrap_err();
            assert_eq!(e.param(), p);
        }
        // min_col > max_col: no pass at all.
        assert_eq!(
            run(
                "remove_table_text_mapper",
                &json!({"min_col": 5, "max_col": 3}),
                &["x\na b\nc d\n"]
            ),
            vec!["x\na b\nc d\n"]
        );
    }

    #[test]
    fn remove_non_chinese_matches_data_juicer() {
        check(
            "remove_non_chinese_character_mapper",
            json!({}),
            NON_CHINESE_CASES,
        );
        check(
            "remove_non_chinese_character_mapper",
            json!({"keep_alphabet": false, "keep_number": false, "keep_punc": false}),
            NON_CHINESE_NONE_CASES,
        );
    }

    #[test]
    fn long_texts() {
        let big = long_text();
        let ops: [(&str, Value); 5] = [
            ("remove_long_words_mapper", json!({"max_len": 10})),
            ("remove_words_with_incorrect_substrings_mapper", json!({})),
            ("remove_repeat_sentences_mapper", json!({})),
            ("remove_table_text_mapper", json!({})),
            ("remove_non_chinese_character_mapper", json!({})),
        ];
        assert_eq!(ops.len(), REMOVE_BIG.len());
        for ((op, params), (len, md5)) in ops.iter().zip(REMOVE_BIG) {
            let out = run(op, params, &[&big]).remove(0);
            assert_eq!(out.chars().count(), *len, "{op}");
            assert_eq!(md5_hex(&out), *md5, "{op}");
        }
    }

    #[test]
    fn unchanged_texts_are_borrowed() {
        let m = RemoveLongWords {
            min_len: 1,
            max_len: 10,
        };
        assert!(matches!(m.map("a b\tc\nd"), Cow::Borrowed(_)));
        let m = RemoveNonChinese {
            keep_alphabet: true,
            keep_number: true,
            keep_punc: true,
        };
        assert!(matches!(m.map("中文abc"), Cow::Borrowed(_)));
    }
}
