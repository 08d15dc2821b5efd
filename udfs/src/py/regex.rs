//! Python `regex`-module substitution: a pattern compiled with the `regex` crate (leftmost-first,
//! as a backtracking engine) or with `fancy-regex` when it needs lookaround or backreferences,
//! Python's substitution loop (empty matches, `\b` by the `regex` module's `\w`) and its
//! replacement templates. Used by the regex cleaners and the deduplicators' ignore patterns.

use std::borrow::Cow;
use std::collections::HashMap;

use crate::text::regex_word;

pub(crate) enum Engine {
    Std(regex::Regex),
    Fancy(fancy_regex::Regex),
}

/// See [`PyRegex::windows`]: from a text and an offset, the next stretch to search.
pub(crate) type Windows = fn(&str, usize) -> Option<(usize, usize)>;

/// A compiled pattern with Python `regex.sub` semantics.
pub(crate) struct PyRegex {
    /// The Python pattern, for `Debug` (the compiled default links pattern is ~20 kB of classes).
    source: String,
    pub(crate) engine: Engine,
    /// Matches must start at a Python `\b` (a `\w`/non-`\w` change, by the `regex` module's `\w`).
    word_boundary_start: bool,
    /// Number of capture groups (Python `pattern.groups`).
    pub(crate) groups: usize,
    pub(crate) names: HashMap<String, usize>,
    /// A necessary condition for any match, tested on the bytes first (built-in patterns only):
    /// most texts then skip the regex engine.
    pub(crate) may_match: Option<fn(&[u8]) -> bool>,
    /// For built-in patterns whose matches lie within stretches of the text that are cheap to
    /// find: the next stretch `(start, end)` at or after an offset that can hold a match, so the
    /// engine searches only there. Every match starting at or after the offset and before `end`
    /// must end by `end`, and none may start between the offset and `start`.
    pub(crate) windows: Option<Windows>,
}

impl std::fmt::Debug for PyRegex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let engine = match self.engine {
            Engine::Std(_) => "regex",
            Engine::Fancy(_) => "fancy-regex",
        };
        f.debug_struct("PyRegex")
            .field("pattern", &self.source)
            .field("engine", &engine)
            .finish()
    }
}

/// Per-text buffers of a substitution.
struct Scratch {
    with_groups: bool,
    locs: Option<regex::CaptureLocations>,
    /// Capture spans of the current match, group 0 included (filled only `with_groups`).
    spans: Vec<Option<(usize, usize)>>,
}

/// Error from the backtracking engine at match time (its backtrack limit).
#[derive(Debug)]
struct MatchError;

impl PyRegex {
    /// Compiles a Python pattern (after [`translate_pattern`]) with DOTALL.
    pub fn new(pattern: &str) -> Result<PyRegex, String> {
        let (translated, needs_fancy) = translate_pattern(pattern);
        Self::compile(pattern, &format!("(?s){translated}"), needs_fancy, false)
    }

    pub(crate) fn compile(
        source: &str,
        rust_pattern: &str,
        needs_fancy: bool,
        word_boundary_start: bool,
    ) -> Result<PyRegex, String> {
        let std_err = if needs_fancy {
            None
        } else {
            match regex::RegexBuilder::new(rust_pattern)
                .size_limit(64 << 20)
                .build()
            {
                Ok(re) => {
                    let names = re
                        .capture_names()
                        .enumerate()
                        .filter_map(|(i, n)| n.map(|n| (n.to_string(), i)))
                        .collect();
                    return Ok(PyRegex {
                        source: source.to_string(),
                        groups: re.captures_len() - 1,
                        names,
                        engine: Engine::Std(re),
                        word_boundary_start,
                        may_match: None,
                        windows: None,
                    });
                }
                Err(e) => Some(e.to_string()),
            }
        };
        match fancy_regex::RegexBuilder::new(rust_pattern).build() {
            Ok(re) => {
                let names = re
                    .capture_names()
                    .enumerate()
                    .filter_map(|(i, n)| n.map(|n| (n.to_string(), i)))
                    .collect();
                Ok(PyRegex {
                    source: source.to_string(),
                    groups: re.captures_len() - 1,
                    names,
                    engine: Engine::Fancy(re),
                    word_boundary_start,
                    may_match: None,
                    windows: None,
                })
            }
            Err(e) => Err(std_err.unwrap_or_else(|| e.to_string())),
        }
    }

    /// Leftmost match starting at or after `from`; fills `scratch.spans` (all groups) when
    /// `with_groups`.
    fn search(
        &self,
        text: &str,
        mut from: usize,
        scratch: &mut Scratch,
    ) -> Result<Option<(usize, usize)>, MatchError> {
        let Some(windows) = self.windows else {
            return self.search_in(text, text.len(), from, scratch);
        };
        while let Some((start, end)) = windows(text, from) {
            if let Some(m) = self.search_in(text, end, start.max(from), scratch)? {
                return Ok(Some(m));
            }
            from = end;
        }
        Ok(None)
    }

    /// [`PyRegex::search`] in `text[..end]` (the text before still seen by `\b`).
    fn search_in(
        &self,
        full: &str,
        end: usize,
        mut from: usize,
        scratch: &mut Scratch,
    ) -> Result<Option<(usize, usize)>, MatchError> {
        let text = &full[..end];
        loop {
            let found = match (&self.engine, scratch.with_groups) {
                (Engine::Std(re), false) => re.find_at(text, from).map(|m| (m.start(), m.end())),
                (Engine::Std(re), true) => {
                    let locs = scratch.locs.get_or_insert_with(|| re.capture_locations());
                    let m = re
                        .captures_read_at(locs, text, from)
                        .map(|m| (m.start(), m.end()));
                    if m.is_some() {
                        scratch.spans.clear();
                        scratch.spans.extend((0..locs.len()).map(|i| locs.get(i)));
                    }
                    m
                }
                (Engine::Fancy(re), false) => re
                    .find_from_pos(text, from)
                    .map_err(|_| MatchError)?
                    .map(|m| (m.start(), m.end())),
                (Engine::Fancy(re), true) => {
                    match re.captures_from_pos(text, from).map_err(|_| MatchError)? {
                        None => None,
                        Some(c) => {
                            scratch.spans.clear();
                            scratch.spans.extend(
                                (0..c.len()).map(|i| c.get(i).map(|m| (m.start(), m.end()))),
                            );
                            c.get(0).map(|m| (m.start(), m.end()))
                        }
                    }
                }
            };
            let Some((s, e)) = found else { return Ok(None) };
            if self.word_boundary_start && !python_word_boundary(full, s) {
                // Every alternative consumes the character at `s`, so `\b` fails at `s` whatever
                // the alternative: the next candidate start is the next word boundary.
                match next_word_boundary(text, s) {
                    Some(n) => {
                        from = n;
                        continue;
                    }
                    None => return Ok(None),
                }
            }
            return Ok(Some((s, e)));
        }
    }

    /// Python `regex.sub(pattern, repl, text)`: every non-overlapping match, leftmost first; an
    /// empty match is allowed right after a non-empty one, and after an empty match at `p` the next
    /// match must not be empty at `p`. Python would then try a lower-priority non-empty match at
    /// `p`; this searches from the next character instead (differs only for patterns whose
    /// preferred match at a position is empty while a non-empty one also exists there, such as
    /// `x*?` or `(|a)`). Returns the text borrowed when nothing
    /// matched; also when the backtracking engine gives up (its limit), as no replacement is then
    /// well defined.
    pub fn sub<'a>(&self, text: &'a str, repl: &Template) -> Cow<'a, str> {
        if self.may_match.is_some_and(|may| !may(text.as_bytes())) {
            return Cow::Borrowed(text);
        }
        match self.try_sub(text, repl) {
            Ok(Some(s)) => Cow::Owned(s),
            Ok(None) | Err(MatchError) => Cow::Borrowed(text),
        }
    }

    fn try_sub(&self, text: &str, repl: &Template) -> Result<Option<String>, MatchError> {
        let mut scratch = Scratch {
            with_groups: repl.uses_groups(),
            locs: None,
            spans: Vec::new(),
        };
        let mut out: Option<String> = None;
        let mut last = 0;
        let mut pos = 0;
        let mut must_advance = false;
        loop {
            let mut from = pos;
            let found = loop {
                let Some((s, e)) = self.search(text, from, &mut scratch)? else {
                    break None;
                };
                if must_advance && s == pos && e == pos {
                    match next_char_boundary(text, pos) {
                        Some(n) => {
                            from = n;
                            continue;
                        }
                        None => break None,
                    }
                }
                break Some((s, e));
            };
            let Some((s, e)) = found else { break };
            let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
            o.push_str(&text[last..s]);
            repl.expand(text, (s, e), &scratch.spans, o);
            last = e;
            must_advance = s == e;
            pos = e;
        }
        Ok(out.map(|mut o| {
            o.push_str(&text[last..]);
            o
        }))
    }
}

/// The `regex` module's `\w`.
#[inline]
fn is_python_word(c: char) -> bool {
    if c.is_ascii() {
        c == '_' || c.is_ascii_alphanumeric()
    } else {
        regex_word().contains(c)
    }
}

/// Whether Python's `\b` holds at byte offset `i` (by the `regex` module's `\w`).
fn python_word_boundary(text: &str, i: usize) -> bool {
    let is_word = |c: Option<char>| c.is_some_and(is_python_word);
    is_word(text[..i].chars().next_back()) != is_word(text[i..].chars().next())
}

/// The first word boundary after byte offset `i` that has a character after it (a match
/// position), if any.
fn next_word_boundary(text: &str, i: usize) -> Option<usize> {
    let mut chars = text[i..].char_indices();
    let mut prev = is_python_word(chars.next()?.1);
    for (j, c) in chars {
        let w = is_python_word(c);
        if w != prev {
            return Some(i + j);
        }
        prev = w;
    }
    None
}

fn next_char_boundary(text: &str, i: usize) -> Option<usize> {
    text[i..].chars().next().map(|c| i + c.len_utf8())
}

/// Translates a Python `regex`-module pattern to `regex`/`fancy-regex` syntax where the same text
/// would otherwise mean something different or fail to compile. Returns the pattern and whether it
/// needs `fancy-regex` (for the `$` rewrite's lookahead).
///
/// * `$` outside a class: Python matches at the end *or before a final newline* ->
///   `(?:$|(?=\n\z))` (also right under `(?m)`).
/// * `\Z`: Python's absolute end -> `\z` (fancy-regex's `\Z` would allow trailing newlines).
/// * In a class, `[`, `&` and `~` are literal in Python but start nested classes / set operations
///   in Rust -> escaped; a `]` right after `[` or `[^` is literal in Python -> `\]`.
/// * `{` that does not start a valid quantifier is a literal in Python -> `\{`; `{,n}` -> `{0,n}`.
/// * `(?#...)` comments outside a class are removed, up to the first `)` (an unclosed one is
///   passed through).
///
/// Everything else is passed through; Python-only syntax the engines reject (e.g. `\N{...}`)
/// gives a parameter error.
pub(crate) fn translate_pattern(p: &str) -> (String, bool) {
    let chars: Vec<char> = p.chars().collect();
    let mut out = String::with_capacity(p.len() + 8);
    let mut needs_fancy = false;
    let mut i = 0;
    let mut in_class = false;
    let mut class_first = false;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' {
            match chars.get(i + 1) {
                Some('Z') if !in_class => out.push_str(r"\z"),
                Some(&n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => out.push('\\'),
            }
            i += 2;
            class_first = false;
            continue;
        }
        if in_class {
            match c {
                ']' if !class_first => {
                    in_class = false;
                    out.push(']');
                }
                ']' | '[' | '&' | '~' => {
                    out.push('\\');
                    out.push(c);
                }
                _ => out.push(c),
            }
            class_first = false;
            i += 1;
            continue;
        }
        if c == '('
            && chars.get(i + 1) == Some(&'?')
            && chars.get(i + 2) == Some(&'#')
            && let Some(close) = chars[i..].iter().position(|&c| c == ')')
        {
            i += close + 1;
            continue;
        }
        match c {
            '[' => {
                in_class = true;
                class_first = true;
                out.push('[');
                if chars.get(i + 1) == Some(&'^') {
                    out.push('^');
                    i += 1;
                }
            }
            '$' => {
                out.push_str(r"(?:$|(?=\n\z))");
                needs_fancy = true;
            }
            '{' => match quantifier_at(&chars, i) {
                Some((len, text)) => {
                    out.push_str(&text);
                    i += len;
                    continue;
                }
                None => out.push_str(r"\{"),
            },
            _ => out.push(c),
        }
        i += 1;
    }
    (out, needs_fancy)
}

/// A `{n}`, `{n,}`, `{n,m}` or `{,m}` quantifier at `chars[i]` (`{`): its length in chars and its
/// Rust spelling.
fn quantifier_at(chars: &[char], i: usize) -> Option<(usize, String)> {
    let close = chars[i..].iter().position(|&c| c == '}')? + i;
    let body: String = chars[i + 1..close].iter().collect();
    let (lo, hi) = match body.split_once(',') {
        Some((lo, hi)) => (lo, Some(hi)),
        None => (body.as_str(), None),
    };
    let digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
    if !digits(lo) || !hi.is_none_or(digits) || (lo.is_empty() && hi.is_none_or(str::is_empty)) {
        return None;
    }
    let lo = if lo.is_empty() { "0" } else { lo };
    let text = match hi {
        None => format!("{{{lo}}}"),
        Some(hi) => format!("{{{lo},{hi}}}"),
    };
    Some((close - i + 1, text))
}

/// A Python replacement template, parsed by the `regex` module's rules: `\1`..`\99` and `\g<n>` /
/// `\g<name>` are groups (an unmatched group gives ""), `\0` / three-digit octal escapes, `\n \t \r
/// \f \v \a \b`, `\xhh`, `\uhhhh`, `\Uhhhhhhhh`, `\\`; an unknown escape of an ASCII letter is an
/// error, any other unknown escape is kept with its backslash. `$` has no special meaning.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Template {
    pub(crate) pieces: Vec<Piece>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Piece {
    Lit(String),
    Group(usize),
}

impl Template {
    /// Parses `repl` for a pattern with `groups` groups and the given group names. Unlike Python,
    /// which parses the template lazily at the first matching text, errors are reported up front.
    pub fn parse(
        repl: &str,
        groups: usize,
        names: &HashMap<String, usize>,
    ) -> Result<Template, String> {
        let mut pieces = Vec::new();
        let mut lit = String::new();
        let chars: Vec<char> = repl.chars().collect();
        let mut i = 0;
        let group_ref =
            |n: usize, pieces: &mut Vec<Piece>, lit: &mut String| -> Result<(), String> {
                if n > groups {
                    return Err("invalid group reference".to_string());
                }
                if !lit.is_empty() {
                    pieces.push(Piece::Lit(std::mem::take(lit)));
                }
                pieces.push(Piece::Group(n));
                Ok(())
            };
        while i < chars.len() {
            let c = chars[i];
            i += 1;
            if c != '\\' {
                lit.push(c);
                continue;
            }
            let Some(&e) = chars.get(i) else {
                return Err("bad escape (end of pattern)".to_string());
            };
            i += 1;
            match e {
                'a' => lit.push('\u{7}'),
                'b' => lit.push('\u{8}'),
                'f' => lit.push('\u{c}'),
                'n' => lit.push('\n'),
                'r' => lit.push('\r'),
                't' => lit.push('\t'),
                'v' => lit.push('\u{b}'),
                'x' | 'u' | 'U' => {
                    let len = match e {
                        'x' => 2,
                        'u' => 4,
                        _ => 8,
                    };
                    let digits: String = chars.iter().skip(i).take(len).collect();
                    if digits.chars().count() < len
                        || !digits.chars().all(|d| d.is_ascii_hexdigit())
                    {
                        return Err(format!("incomplete escape \\{e}{digits}"));
                    }
                    i += len;
                    let v = u32::from_str_radix(&digits, 16).unwrap();
                    lit.push(char::from_u32(v).ok_or_else(|| format!("bad escape \\{e}{digits}"))?);
                }
                'g' => {
                    if chars.get(i) != Some(&'<') {
                        return Err("missing <".to_string());
                    }
                    let start = i + 1;
                    let end = chars[start..]
                        .iter()
                        .position(|&c| c == ')' || c == '>')
                        .map(|p| p + start);
                    let Some(end) = end.filter(|&e| chars[e] == '>') else {
                        return Err("missing >".to_string());
                    };
                    let name: String = chars[start..end].iter().collect();
                    i = end + 1;
                    if name.is_empty() {
                        return Err("missing group name".to_string());
                    }
                    if name.chars().all(|c| c.is_ascii_digit()) {
                        let n = name
                            .parse::<usize>()
                            .map_err(|_| "invalid group reference".to_string())?;
                        group_ref(n, &mut pieces, &mut lit)?;
                    } else {
                        let n = *names
                            .get(&name)
                            .ok_or_else(|| format!("unknown group {name}"))?;
                        group_ref(n, &mut pieces, &mut lit)?;
                    }
                }
                'N' => {
                    return Err("named characters (\\N{...}) are not supported in repl".to_string());
                }
                e if e.is_ascii_alphabetic() => return Err(format!("bad escape \\{e}")),
                '0' => {
                    let mut v = 0u32;
                    let mut n = 0;
                    while n < 2 && chars.get(i).is_some_and(|d| ('0'..='7').contains(d)) {
                        v = v * 8 + chars[i].to_digit(8).unwrap();
                        i += 1;
                        n += 1;
                    }
                    lit.push(char::from_u32(v & 0x1FF).unwrap());
                }
                '1'..='9' => {
                    let mut digits = e.to_string();
                    if let Some(&d2) = chars.get(i).filter(|d| d.is_ascii_digit()) {
                        digits.push(d2);
                        i += 1;
                        if let Some(&d3) = chars.get(i)
                            && is_octal(&format!("{digits}{d3}"))
                        {
                            i += 1;
                            let v = u32::from_str_radix(&format!("{digits}{d3}"), 8).unwrap();
                            lit.push(char::from_u32(v & 0x1FF).unwrap());
                            continue;
                        }
                    }
                    group_ref(digits.parse().unwrap(), &mut pieces, &mut lit)?;
                }
                '\\' => lit.push('\\'),
                other => {
                    lit.push('\\');
                    lit.push(other);
                }
            }
        }
        if !lit.is_empty() {
            pieces.push(Piece::Lit(lit));
        }
        Ok(Template { pieces })
    }

    fn uses_groups(&self) -> bool {
        self.pieces.iter().any(|p| matches!(p, Piece::Group(_)))
    }

    fn expand(
        &self,
        text: &str,
        whole: (usize, usize),
        spans: &[Option<(usize, usize)>],
        out: &mut String,
    ) {
        for p in &self.pieces {
            match p {
                Piece::Lit(s) => out.push_str(s),
                Piece::Group(0) => out.push_str(&text[whole.0..whole.1]),
                Piece::Group(n) => {
                    if let Some(Some((s, e))) = spans.get(*n) {
                        out.push_str(&text[*s..*e]);
                    }
                }
            }
        }
    }
}

fn is_octal(s: &str) -> bool {
    s.chars().all(|c| ('0'..='7').contains(&c))
}

/// Data-Juicer's custom-pattern handling: a pattern written as `r'...'` or `r"..."` (longer than
/// two characters) loses the wrapper.
pub(crate) fn strip_raw_wrapper(pattern: &str) -> &str {
    if pattern.chars().count() > 2
        && ((pattern.starts_with("r'") && pattern.ends_with('\''))
            || (pattern.starts_with("r\"") && pattern.ends_with('"')))
    {
        &pattern[2..pattern.len() - 1]
    } else {
        pattern
    }
}

impl PyRegex {
    /// A pattern already written for the `regex` crate with the `regex` module's semantics spelled
    /// out (`source` is the Python pattern, for `Debug`).
    pub(crate) fn from_rust_pattern(source: &str, rust_pattern: &str) -> Result<PyRegex, String> {
        Self::compile(source, rust_pattern, false, false)
    }

    /// Parses a Python replacement template against this pattern's groups.
    pub(crate) fn template(&self, repl: &str) -> Result<Template, String> {
        Template::parse(repl, self.groups, &self.names)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_wrapper_is_stripped() {
        assert_eq!(strip_raw_wrapper(r"r'\d+'"), r"\d+");
        assert_eq!(strip_raw_wrapper(r#"r"\d+""#), r"\d+");
        assert_eq!(strip_raw_wrapper("r''"), "");
        assert_eq!(strip_raw_wrapper("r'"), "r'");
        assert_eq!(strip_raw_wrapper("r'x\""), "r'x\"");
        assert_eq!(strip_raw_wrapper("'x'"), "'x'");
    }

    #[test]
    fn pattern_translation() {
        assert_eq!(
            translate_pattern(r"a$"),
            (r"a(?:$|(?=\n\z))".to_string(), true)
        );
        assert_eq!(translate_pattern(r"[$]\$"), (r"[$]\$".to_string(), false));
        assert_eq!(translate_pattern(r"x\Z"), (r"x\z".to_string(), false));
        assert_eq!(
            translate_pattern(r"[[&~]"),
            (r"[\[\&\~]".to_string(), false)
        );
        assert_eq!(
            translate_pattern(r"[]a][^]b]"),
            (r"[\]a][^\]b]".to_string(), false)
        );
        assert_eq!(
            translate_pattern(r"a{2}b{,3}c{d{1,}e{"),
            (r"a{2}b{0,3}c\{d{1,}e\{".to_string(), false)
        );
        assert_eq!(translate_pattern(r"(?#note)x"), ("x".to_string(), false));
    }

    #[test]
    fn template_parsing() {
        let names = HashMap::from([("n".to_string(), 1)]);
        let t = Template::parse(r"a\1\g<n>\g<0>\101\0\x41$1\\\&", 1, &names).unwrap();
        assert_eq!(
            t.pieces,
            vec![
                Piece::Lit("a".into()),
                Piece::Group(1),
                Piece::Group(1),
                Piece::Group(0),
                Piece::Lit("A\0A$1\\\\&".into())
            ]
        );
        assert!(Template::parse(r"\1", 0, &HashMap::new()).is_err());
        assert_eq!(
            Template::parse("plain", 0, &HashMap::new()).unwrap().pieces,
            vec![Piece::Lit("plain".into())]
        );
    }
}

/// Fuzzing: any pattern (and replacement template) is compiled, or refused with an error, and
/// substituted, without a panic. `PROPTEST_CASES` runs more than the default 256 by hand.
#[cfg(test)]
mod fuzz {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn any_pattern_compiles_or_is_refused(
            pattern in "(\\PC|[()\\[\\]{}?*+|^$\\\\.]){0,40}",
            repl in "(\\PC|\\\\[0-9gn<>]){0,10}",
        ) {
            if let Ok(re) = PyRegex::new(&pattern)
                && let Ok(t) = Template::parse(&repl, re.groups, &re.names)
            {
                let _ = re.sub("some text, with 123 digits and ünïcode\n\tend", &t);
            }
        }
    }
}
