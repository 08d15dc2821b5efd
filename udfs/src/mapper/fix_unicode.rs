//! `fix_unicode_mapper`: Data-Juicer's `ftfy.fix_text(text, normalization=...)`, a port of
//! ftfy 6.3.1 (the version Data-Juicer 1.6.1's lazy loader installs: the latest release, also the
//! one its `uv.lock` names) with the default `TextFixerConfig` otherwise.
//!
//! The text is cut into lines (at most `max_decode_length` characters each); each line goes
//! through ftfy's fixers, in ftfy's order, until a round changes nothing: `unescape_html` (until
//! a line contains `<`: then never again in this text), `fix_encoding` (undo mojibake layer by
//! layer, guided by ftfy's badness regex), `fix_c1_controls`, `fix_latin_ligatures`,
//! `fix_character_width`, `uncurl_quotes`, `fix_line_breaks`, `remove_terminal_escapes`,
//! `remove_control_chars`, then Unicode normalization.
//!
//! ftfy's regexes and data are generated from the Python package by
//! `udfs/data/gen_ftfy_tables.py` (so the character classes, `\s`, `\w` and `\d` included, are
//! CPython 3.11's), and normalization reproduces CPython 3.11's Unicode 14 `unicodedata` (see
//! [`Normalization::apply`]). Checked against ftfy 6.3.1 on the golden corpus and on half a
//! million strings from `udfs/data/gen_ftfy_cases.py` (mojibake through every code page ftfy
//! knows, entities, escapes, controls, random code points) in all four normalization forms: see
//! the ignored test `matches_python_ftfy_on_generated_cases`.
//!
//! ftfy's `fix_surrogates` is left out: a Rust `str` cannot hold surrogate code points, and none
//! of ftfy's steps makes one out of text without them, so it would never apply. No deliberate
//! deviation remains.

mod tables;

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;
use unicode_normalization::UnicodeNormalization;

use crate::mapper::build_mapper;
use crate::operator::Operator;
use crate::params::{ParamError, ParamSpec, ParamType, Params};
use crate::spec::{ModelUse, OpKind, OpSpec};
use crate::udf::TextMapper;

use tables::{ALTERED_UTF8, ANSI, BADNESS, HTML, HTML_ENTITY, LOSSY_UTF8, TRANSLATE};

/// ftfy's `TextFixerConfig.max_decode_length`, in characters.
const MAX_DECODE_LENGTH: usize = 1_000_000;

/// The Unicode normalization form applied last in every fixing round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Normalization {
    Nfc,
    Nfkc,
    Nfd,
    Nfkd,
}

impl Normalization {
    /// Data-Juicer's reading of the parameter: empty / null is NFC, otherwise upper-cased.
    pub fn parse(name: Option<&str>) -> Option<Normalization> {
        match name.filter(|s| !s.is_empty()) {
            None => Some(Normalization::Nfc),
            Some(s) => match s.to_uppercase().as_str() {
                "NFC" => Some(Normalization::Nfc),
                "NFKC" => Some(Normalization::Nfkc),
                "NFD" => Some(Normalization::Nfd),
                "NFKD" => Some(Normalization::Nfkd),
                _ => None,
            },
        }
    }

    /// `unicodedata.normalize(form, text)` as CPython 3.11 computes it, with Unicode 14 data.
    ///
    /// The crate's tables are newer. A character unassigned in Unicode 14 is inert there (a
    /// starter without decomposition that composes with nothing), so each run between such
    /// characters normalizes on its own; by Unicode's normalization stability policy, characters
    /// assigned by Unicode 14 normalize the same under the newer tables. Normalizing those runs
    /// separately and copying the rest therefore gives exactly the Unicode 14 result.
    fn apply(self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some((i, c)) = rest.char_indices().find(|&(_, c)| tables::is_unassigned(c)) {
            self.extend(&mut out, &rest[..i]);
            out.push(c);
            rest = &rest[i + c.len_utf8()..];
        }
        self.extend(&mut out, rest);
        out
    }

    fn extend(self, out: &mut String, run: &str) {
        match self {
            Normalization::Nfc => out.extend(run.nfc()),
            Normalization::Nfkc => out.extend(run.nfkc()),
            Normalization::Nfd => out.extend(run.nfd()),
            Normalization::Nfkd => out.extend(run.nfkd()),
        }
    }

    /// The crate's quick check. A "yes" under the newer tables also holds under Unicode 14:
    /// every run between characters unassigned in Unicode 14 is then normalized too.
    fn is_normalized(self, text: &str) -> bool {
        use unicode_normalization::{IsNormalized, is_nfc_quick, is_nfd_quick};
        use unicode_normalization::{is_nfkc_quick, is_nfkd_quick};
        let quick = match self {
            Normalization::Nfc => is_nfc_quick(text.chars()),
            Normalization::Nfkc => is_nfkc_quick(text.chars()),
            Normalization::Nfd => is_nfd_quick(text.chars()),
            Normalization::Nfkd => is_nfkd_quick(text.chars()),
        };
        quick == IsNormalized::Yes
    }
}

/// `ftfy.fix_text(text, normalization=form)` with every other option at its default.
pub(crate) fn fix_text(text: &str, form: Normalization) -> Cow<'_, str> {
    if is_trivially_clean(text) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    // "auto": unescape HTML entities until a segment contains '<'; from then on, never again.
    let mut unescape = true;
    let mut rest = text;
    while !rest.is_empty() {
        let end = segment_end(rest);
        let (segment, tail) = rest.split_at(end);
        if unescape && segment.contains('<') {
            unescape = false;
        }
        // A clean line of a text that is not clean as a whole (one curly quote elsewhere) is
        // left as it is, as the whole text would be.
        if is_trivially_clean(segment) {
            out.push_str(segment);
        } else {
            out.push_str(&fix_segment(segment, unescape, form));
        }
        rest = tail;
    }
    Cow::Owned(out)
}

/// ASCII text with nothing any fixer touches: no entity, escape, `\r` or removable control.
fn is_trivially_clean(text: &str) -> bool {
    let touched = |b: u8| {
        !b.is_ascii()
            || b == b'&'
            || b == b'\r'
            || (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\x0c'))
            || b == 0x7F
    };
    // Whole chunks without an early exit, so that the test is vectorized.
    text.as_bytes()
        .chunks(64)
        .all(|chunk| !chunk.iter().fold(false, |any, &b| any | touched(b)))
}

/// End (byte offset) of ftfy's next segment: through the next `\n`, at most
/// `MAX_DECODE_LENGTH` characters.
fn segment_end(s: &str) -> usize {
    let line = s.find('\n').map_or(s.len(), |i| i + 1);
    if line <= MAX_DECODE_LENGTH {
        return line;
    }
    s[..line]
        .char_indices()
        .nth(MAX_DECODE_LENGTH)
        .map_or(line, |(i, _)| i)
}

/// `ftfy.fix_and_explain(segment)`: apply the fixers in order until a round changes nothing.
fn fix_segment(segment: &str, unescape: bool, form: Normalization) -> String {
    let mut text = segment.to_string();
    loop {
        let orig = text.clone();
        if unescape {
            replace(&mut text, unescape_html);
        }
        text = fix_encoding(&text);
        replace(&mut text, fix_c1_controls);
        replace(&mut text, |t| translate(t, &TRANSLATE.ligatures));
        replace(&mut text, |t| translate(t, &TRANSLATE.width));
        replace(&mut text, uncurl_quotes);
        replace(&mut text, fix_line_breaks);
        replace(&mut text, remove_terminal_escapes);
        replace(&mut text, remove_control_chars);
        if !form.is_normalized(&text) {
            text = form.apply(&text);
        }
        if text == orig {
            return text;
        }
    }
}

fn replace(text: &mut String, fixer: impl Fn(&str) -> Option<String>) {
    if let Some(fixed) = fixer(text) {
        *text = fixed;
    }
}

/// `badness.is_bad`: does the text contain a sequence typical of mojibake?
fn is_bad(text: &str) -> bool {
    BADNESS.is_match(text)
}

/// `ftfy.fix_encoding`: undo mojibake one layer at a time until nothing changes.
pub(crate) fn fix_encoding(text: &str) -> String {
    let mut text = text.to_string();
    while let Some(fixed) = fix_encoding_one_step(&text) {
        if fixed == text {
            break;
        }
        text = fixed;
    }
    text
}

/// `_fix_encoding_one_step_and_explain`; `None` when the text is left as it is.
fn fix_encoding_one_step(text: &str) -> Option<String> {
    if text.is_ascii() || !is_bad(text) {
        return None;
    }
    let mut latin1_possible = false;
    for (i, charmap) in tables::candidate_charmaps().iter().enumerate() {
        let Some(mut bytes) = charmap.encode(text) else {
            continue;
        };
        latin1_possible |= i == 0;
        if charmap.name != "macroman" && ALTERED_UTF8.is_match(&bytes) {
            bytes = restore_byte_a0(&bytes);
        }
        if charmap.is_sloppy()
            && let Cow::Owned(b) = LOSSY_UTF8.replace_all(&bytes, "\u{fffd}".as_bytes())
        {
            bytes = b;
        }
        let decoded = if bytes.contains(&0xED) || bytes.contains(&0xC0) {
            decode_utf8_variants(&bytes)
        } else {
            String::from_utf8(bytes).ok()
        };
        if decoded.is_some() {
            return decoded;
        }
    }
    if let Some(fixed) = decode_inconsistent_utf8(text) {
        return Some(fixed);
    }
    // ftfy tests for "windows-1252" among the possible encodings, a name that list never holds
    // ("sloppy-windows-1252" is), so text that fits latin-1 always gets the cp1252 re-decoding.
    if latin1_possible {
        let cp1252 = tables::windows_1252();
        let fixed: Option<String> = text.chars().map(|c| cp1252.decode[c as usize]).collect();
        if let Some(fixed) = fixed.filter(|f| f != text) {
            return Some(fixed);
        }
    }
    if text.chars().any(is_c1) {
        return Some(fix_c1_controls(text).unwrap_or_else(|| text.to_string()));
    }
    None
}

#[inline]
fn is_c1(c: char) -> bool {
    ('\u{80}'..='\u{9f}').contains(&c)
}

/// `fixes.restore_byte_a0`: spaces that were probably U+00A0 inside UTF-8 mojibake become 0xA0.
fn restore_byte_a0(bytes: &[u8]) -> Vec<u8> {
    // A_GRAVE_WORD_RE = b"\xc3 (?! |quele|quela|quilo|s )" -> b"\xc3\xa0 "
    let mut out = Vec::with_capacity(bytes.len() + 4);
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == 0xC3 && bytes.get(i + 1) == Some(&b' ') {
            let after = &bytes[i + 2..];
            let excluded = [&b" "[..], b"quele", b"quela", b"quilo", b"s "]
                .iter()
                .any(|p| after.starts_with(p));
            if !excluded {
                out.extend_from_slice(b"\xc3\xa0 ");
                i += 2;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    ALTERED_UTF8
        .replace_all(&out, |m: &regex::bytes::Captures<'_>| {
            m[0].iter()
                .map(|&b| if b == b' ' { 0xA0 } else { b })
                .collect::<Vec<u8>>()
        })
        .into_owned()
}

/// ftfy's `utf-8-variants` codec, strict: UTF-8 plus CESU-8 surrogate pairs and the Java
/// "modified UTF-8" null `C0 80`. Mirrors the codec's regex, whose `$` also matches just before a
/// final `\n` (so a trailing `C0 0A` decodes as U+0000, as in Python).
fn decode_utf8_variants(bytes: &[u8]) -> Option<String> {
    let n = bytes.len();
    // Python's `$` in a bytes pattern without MULTILINE.
    let at_end = |i: usize| i == n || (i + 1 == n && bytes[i] == b'\n');
    let special_at = |i: usize| match bytes[i] {
        0xC0 => bytes.get(i + 1) == Some(&0x80) || at_end(i + 1),
        0xED => {
            at_end(i + 1)
                || ((0xA0..=0xBF).contains(&bytes[i + 1])
                    && (at_end(i + 2) || (0x80..=0xBF).contains(&bytes[i + 2])))
        }
        _ => false,
    };
    let mut out = String::with_capacity(n);
    let mut pos = 0;
    while pos < n {
        let Some(cut) = (pos..n).find(|&i| special_at(i)) else {
            out.push_str(std::str::from_utf8(&bytes[pos..]).ok()?);
            break;
        };
        out.push_str(std::str::from_utf8(&bytes[pos..cut]).ok()?);
        let rest = &bytes[cut..];
        if rest[0] == 0xC0 {
            if rest.len() < 2 {
                return None;
            }
            out.push('\0');
            pos = cut + 2;
            continue;
        }
        // An ED sequence: only a full CESU-8 pair decodes; a lone surrogate is an error.
        let in_range = |b: u8, lo: u8, hi: u8| (lo..=hi).contains(&b);
        let cesu = rest.len() >= 6
            && in_range(rest[1], 0xA0, 0xAF)
            && in_range(rest[2], 0x80, 0xBF)
            && rest[3] == 0xED
            && in_range(rest[4], 0xB0, 0xBF)
            && (in_range(rest[5], 0x80, 0xBF) || (rest.len() == 6 && rest[5] == b'\n'));
        if !cesu {
            return None;
        }
        let cp = (((rest[1] & 0x0F) as u32) << 16)
            + (((rest[2] & 0x3F) as u32) << 10)
            + (((rest[4] & 0x0F) as u32) << 6)
            + (rest[5] & 0x3F) as u32
            + 0x10000;
        out.push(char::from_u32(cp)?);
        pos = cut + 6;
    }
    Some(out)
}

/// `fixes.decode_inconsistent_utf8`, run only when `UTF8_DETECTOR_RE` matches: each stretch that
/// looks like UTF-8 mojibake (and is not the whole text) is fixed on its own if it is bad.
fn decode_inconsistent_utf8(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut last = 0;
    let mut from = 0;
    let mut found = false;
    while let Some(m) = tables::UTF8_DETECTOR.find_at(text, from) {
        // The pattern's `(?<![continuation_strict])`.
        let blocked = text[..m.start()].chars().next_back().is_some_and(|c| {
            let mut buf = [0u8; 4];
            tables::UTF8_DETECTOR_LOOKBEHIND.is_match(c.encode_utf8(&mut buf))
        });
        if blocked {
            from = m.start() + text[m.start()..].chars().next().map_or(1, char::len_utf8);
            continue;
        }
        found = true;
        let sub = m.as_str();
        out.push_str(&text[last..m.start()]);
        if sub.len() < text.len() && is_bad(sub) {
            out.push_str(&fix_encoding(sub));
        } else {
            out.push_str(sub);
        }
        last = m.end();
        from = m.end();
    }
    if !found {
        return None;
    }
    out.push_str(&text[last..]);
    (out != text).then_some(out)
}

/// `fixes.unescape_html`: named entities from ftfy's table, numeric ones as `html.unescape`.
fn unescape_html(text: &str) -> Option<String> {
    if !text.contains('&') {
        return None;
    }
    match HTML_ENTITY.replace_all(text, |c: &regex::Captures<'_>| unescape_entity(&c[0])) {
        Cow::Borrowed(_) => None,
        Cow::Owned(s) => Some(s),
    }
}

fn unescape_entity(m: &str) -> String {
    if let Some(s) = HTML.entities.get(m) {
        return s.clone();
    }
    // m is `&#?[0-9A-Za-z]{1,24};`. `html.unescape` decodes `&#digits;` / `&#xhex;` fully; any
    // other `&#...;` keeps a ';' in its result, and ftfy then keeps the original text.
    let Some(body) = m.strip_prefix("&#").and_then(|b| b.strip_suffix(';')) else {
        return m.to_string();
    };
    let num = match body.strip_prefix(['x', 'X']) {
        Some(hex) if !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
            parse_saturating(hex, 16)
        }
        _ if body.bytes().all(|b| b.is_ascii_digit()) => parse_saturating(body, 10),
        _ => return m.to_string(),
    };
    let decoded = if let Some(s) = HTML.invalid_charrefs.get(&num) {
        s.clone()
    } else if (0xD800..=0xDFFF).contains(&num) || num > 0x10FFFF {
        "\u{fffd}".to_string()
    } else if HTML.invalid_codepoints.contains(&num) {
        String::new()
    } else {
        char::from_u32(num).map(String::from).unwrap_or_default()
    };
    if decoded.contains(';') {
        m.to_string()
    } else {
        decoded
    }
}

/// Parses digits, saturating above U+10FFFF (all such numbers decode alike).
fn parse_saturating(digits: &str, radix: u32) -> u32 {
    let mut n: u32 = 0;
    for d in digits.chars() {
        n = n
            .saturating_mul(radix)
            .saturating_add(d.to_digit(radix).unwrap_or(0))
            .min(0x110000);
    }
    n
}

/// `fixes.fix_c1_controls`: U+0080..U+009F read as sloppy windows-1252 bytes.
fn fix_c1_controls(text: &str) -> Option<String> {
    if !text.chars().any(is_c1) {
        return None;
    }
    let sloppy = tables::sloppy_windows_1252();
    Some(
        text.chars()
            .map(|c| {
                if is_c1(c) {
                    sloppy.decode[c as usize].unwrap_or(c)
                } else {
                    c
                }
            })
            .collect(),
    )
}

/// `str.translate` with a char -> string map.
fn translate(text: &str, map: &std::collections::HashMap<char, String>) -> Option<String> {
    if text.is_ascii() || !text.chars().any(|c| map.contains_key(&c)) {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match map.get(&c) {
            Some(s) => out.push_str(s),
            None => out.push(c),
        }
    }
    Some(out)
}

/// `fixes.uncurl_quotes`: `[\u02bc\u2018-\u201b]` -> `'`, `[\u201c-\u201f]` -> `"`.
fn uncurl_quotes(text: &str) -> Option<String> {
    let quote = |c: char| match c {
        '\u{2bc}' | '\u{2018}'..='\u{201b}' => Some('\''),
        '\u{201c}'..='\u{201f}' => Some('"'),
        _ => None,
    };
    if !text.chars().any(|c| quote(c).is_some()) {
        return None;
    }
    Some(text.chars().map(|c| quote(c).unwrap_or(c)).collect())
}

/// `fixes.fix_line_breaks`: `\r\n`, `\r`, U+2028, U+2029 and U+0085 become `\n`.
fn fix_line_breaks(text: &str) -> Option<String> {
    if !text.contains(['\r', '\u{2028}', '\u{2029}', '\u{85}']) {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut it = text.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\r' => {
                if it.peek() == Some(&'\n') {
                    it.next();
                }
                out.push('\n');
            }
            '\u{2028}' | '\u{2029}' | '\u{85}' => out.push('\n'),
            _ => out.push(c),
        }
    }
    Some(out)
}

/// `fixes.remove_terminal_escapes`: ANSI `ESC [ digits/; letter` sequences.
fn remove_terminal_escapes(text: &str) -> Option<String> {
    if !text.contains('\x1b') {
        return None;
    }
    match ANSI.replace_all(text, "") {
        Cow::Borrowed(_) => None,
        Cow::Owned(s) => Some(s),
    }
}

/// `chardata.CONTROL_CHARS`, removed by `fixes.remove_control_chars`.
#[inline]
fn is_removed_control(c: char) -> bool {
    matches!(c,
        '\0'..='\x08' | '\x0b' | '\x0e'..='\x1f' | '\x7f'
        | '\u{206a}'..='\u{206f}' | '\u{feff}' | '\u{fff9}'..='\u{fffc}')
}

fn remove_control_chars(text: &str) -> Option<String> {
    if !text.chars().any(is_removed_control) {
        return None;
    }
    Some(text.chars().filter(|&c| !is_removed_control(c)).collect())
}

#[derive(Debug)]
struct FixUnicode(Normalization);

impl TextMapper for FixUnicode {
    fn map<'a>(&self, text: &'a str) -> Cow<'a, str> {
        fix_text(text, self.0)
    }
}

fn fix_unicode_params() -> Vec<ParamSpec> {
    vec![ParamSpec::new(
        "normalization",
        ParamType::Str,
        Value::Null,
        "Unicode normalization form: NFC (default, also for null / empty), NFKC, NFD or NFKD; case-insensitive",
    )]
}

pub(crate) fn fix_unicode_spec() -> OpSpec {
    OpSpec {
        name: "fix_unicode_mapper",
        kind: OpKind::Mapper,
        model_use: ModelUse::None,
        params: fix_unicode_params,
        build: build_fix_unicode,
        doc: "Fix mojibake and other Unicode glitches with ftfy 6.3.1's fix_text, then normalize (NFC by default).",
    }
}

fn build_fix_unicode(p: &Params) -> Result<Operator, ParamError> {
    let form = Normalization::parse(p.str("normalization")).ok_or_else(|| {
        p.invalid(
            "normalization",
            "is not supported; can only be one of NFC, NFKC, NFD, NFKD",
        )
    })?;
    Ok(build_mapper(p, Arc::new(FixUnicode(form))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{build, map_texts};
    use serde_json::json;

    // Every expected string below is what ftfy 6.3.1 (CPython 3.11.7) returns.

    fn fix(s: &str) -> String {
        fix_text(s, Normalization::Nfc).into_owned()
    }

    fn fix_as(s: &str, form: Normalization) -> String {
        fix_text(s, form).into_owned()
    }

    #[test]
    fn ftfy_docstring_examples() {
        assert_eq!(fix("âœ” No problems"), "✔ No problems");
        assert_eq!(fix("&macr;\\_(ã\u{83}\u{84})_/&macr;"), "¯\\_(ツ)_/¯");
        assert_eq!(
            fix("Broken text&hellip; it&#x2019;s ﬂubberiﬁc!"),
            "Broken text… it's flubberific!"
        );
        assert_eq!(fix("ＬＯＵＤ　ＮＯＩＳＥＳ"), "LOUD NOISES");
        assert_eq!(fix("sÃ³"), "só");
        assert_eq!(fix("voilÃ le travail"), "voilà le travail");
        assert_eq!(fix("schÃ¶n"), "schön");
    }

    /// Lines are fixed one by one: the clean lines of a text with a dirty one come out as they
    /// went in (ftfy 6.3.1 gives the same).
    #[test]
    fn clean_lines_of_a_dirty_text() {
        let text = "plain line <b>\nsÃ³ &amp; voilÃ\nanother plain line\n\nlast";
        assert_eq!(
            fix(text),
            "plain line <b>\nsó &amp; voilÃ\nanother plain line\n\nlast"
        );
        let text = "a clean line\nâœ” No problems\tthe end\nx";
        assert_eq!(fix(text), "a clean line\n✔ No problems\tthe end\nx");
    }

    #[test]
    fn mojibake_layers_and_code_pages() {
        assert_eq!(fix("ÃƒÆ’Ã‚Â©"), "é");
        assert_eq!(fix("РџСЂРёРІРµС‚"), "Привет");
        assert_eq!(fix("Gr√∂√üe: 10 cm √ó 20 cm"), "Größe: 10 cm × 20 cm");
        assert_eq!(fix("DOS box: caf├⌐ ├▒and├║"), "DOS box: café ñandú");
        // Mojibake next to correct text is fixed piece by piece...
        assert_eq!(fix("Correct été, broken Ã©tÃ©"), "Correct été, broken été");
        // ...but not right after a character that could be a UTF-8 continuation byte.
        assert_eq!(fix("©Ã©\n"), "©Ã©\n");
        // Capitals that only look like mojibake stay, and so does what fits no code page.
        assert_eq!(fix("SÃO PAULO, NÃO"), "SÃO PAULO, NÃO");
        assert_eq!(fix("cp437 ΓÇ£quotesΓÇ¥"), "cp437 ΓÇ£quotesΓÇ¥");
        assert_eq!(
            fix("ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖ×ØÙÚÛÜÝÞß"),
            "ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖרÙÚÛÜÝÞß"
        );
    }

    #[test]
    fn lost_bytes_and_spaces() {
        // restore_byte_a0: a space after Ã was probably U+00A0, except before these words.
        assert_eq!(fix("Ã  quele"), "à quele");
        assert_eq!(fix("Ã s vezes"), "às vezes");
        assert_eq!(fix("Ã  la"), "à la");
        assert_eq!(fix("Hidden ðŸ˜  angry face"), "Hidden 😠 angry face");
        // replace_lossy_sequences: bytes lost as '?' or U+FFFD become one U+FFFD.
        assert_eq!(fix("doesnâ€™t â€œitâ€?"), "doesn't \"it\u{fffd}");
        assert_eq!(fix("He said â€œhelloâ€\u{fffd}"), "He said \"hello\u{fffd}");
        assert_eq!(fix("Ã? Ã\x1a"), "Ã? Ã");
    }

    #[test]
    fn utf8_variants() {
        assert_eq!(fix("í\u{a0}½í¸\u{80}"), "😀");
        assert_eq!(fix("aÀ\u{80}b Ã©"), "ab é");
        assert_eq!(
            fix("Lone surrogate: í\u{a0}½ and cafÃ©"),
            "Lone surrogate: í\u{a0}½ and café"
        );
        assert_eq!(
            decode_utf8_variants(b"\xed\xa0\xbd\xed\xb8\x80 ok\xc0\x80").as_deref(),
            Some("\u{1f600} ok\0")
        );
        assert_eq!(decode_utf8_variants(b"\xed\xa0\xbd"), None);
        // The codec's `$` also matches before a final newline, which C0 then swallows.
        assert_eq!(
            decode_utf8_variants(b"\xc3\xa9\xc0\n").as_deref(),
            Some("é\0")
        );
    }

    #[test]
    fn entities_and_html() {
        assert_eq!(
            fix("a &amp; b &AMP; &#59; &#0; &#x41;"),
            "a & b & &#59; \u{fffd} A"
        );
        assert_eq!(
            fix("&#12abc; &#x; &#xD800; &#1114112; &#128; &#x9d; &#13; &#65535; &EACUTE; &Amp;"),
            "&#12abc; &#x; \u{fffd} \u{fffd} € \u{9d} \n  É &Amp;"
        );
        // One entity per round, rounds until nothing changes; entities can make mojibake.
        assert_eq!(fix("&amp;amp;"), "&");
        assert_eq!(fix("&Atilde;&copy;"), "é");
        // A '<' turns entity decoding off for this and every later line.
        assert_eq!(fix("<b>&amp;</b>\n&amp;"), "<b>&amp;</b>\n&amp;");
        assert_eq!(fix("&amp;\n<b>&amp;</b>"), "&\n<b>&amp;</b>");
    }

    #[test]
    fn small_fixers() {
        assert_eq!(fix("a\r\nb\rc\u{2028}d"), "a\nb\nc\nd");
        assert_eq!(fix("\x1b[31mred\x1b[0m\u{feff}x\x07"), "redx");
        assert_eq!(fix("\x1b[١mx"), "x");
        assert_eq!(fix("“quoted” ‘single’"), "\"quoted\" 'single'");
        assert_eq!(fix("\u{94}quoted\u{94}"), "\"quoted\"");
        // U+0085 is a C1 control (an ellipsis in windows-1252) before it is a line break.
        assert_eq!(fix("a\u{85}b"), "a…b");
        // Undefined in windows-1252: kept.
        assert_eq!(fix("\u{80}\u{81}\u{8d}\u{9d}"), "€\u{81}\u{8d}\u{9d}");
        // U+0149 becomes U+02BC + n, then an uncurled apostrophe.
        assert_eq!(fix("ŉ"), "'n");
    }

    #[test]
    fn normalization_forms() {
        assert_eq!(fix("cafe\u{301}"), "café");
        assert_eq!(fix_as("x² ﬁ ﬅ", Normalization::Nfkc), "x2 fi st");
        assert_eq!(
            fix_as("&macr; a\u{85}", Normalization::Nfkc),
            " \u{304} a..."
        );
        assert_eq!(fix_as("é", Normalization::Nfd), "e\u{301}");
        // Unicode 14 (CPython 3.11) does not know U+209D or U+1E08F: no decomposition, and
        // U+1E08F is a starter that blocks reordering and composition around it.
        assert_eq!(fix_as("\u{209d} x²", Normalization::Nfkc), "\u{209d} x2");
        assert_eq!(fix("a\u{301}\u{1e08f}\u{323}"), "\u{e1}\u{1e08f}\u{323}");
        assert_eq!(
            fix_as("a\u{301}\u{1e08f}\u{323}", Normalization::Nfd),
            "a\u{301}\u{1e08f}\u{323}"
        );
        assert!(tables::is_unassigned('\u{378}') && tables::is_unassigned('\u{10ffff}'));
        assert!(!tables::is_unassigned('a') && !tables::is_unassigned('\u{4e00}'));
    }

    #[test]
    fn segments_of_at_most_a_million_characters() {
        let a = "a".repeat(999_999);
        // The cut falls inside the first "Ã©"; its "©" then blocks the next fix on that line.
        let out = fix(&format!("{a}Ã©Ã©\nÃ©"));
        assert_eq!(out, format!("{a}Ã©Ã©\né"));
        let out = fix(&format!("{}Ã©Ã©", &a[1..]));
        assert_eq!(out, format!("{}éé", &a[1..]));
        // The '<' in the first segment turns entities off in the second.
        let out = fix(&format!("<{a}a&amp;"));
        assert_eq!(out, format!("<{a}a&amp;"));
    }

    #[test]
    fn op_normalization_param() {
        let op = build("fix_unicode_mapper", json!({"normalization": "nfkc"})).unwrap();
        let out = map_texts(&op, &[Some("x² ﬁ Ã©"), None]);
        assert_eq!(out, vec![Some("x2 fi é".to_string()), None]);
        for empty in [
            json!({}),
            json!({"normalization": ""}),
            json!({"normalization": null}),
        ] {
            let op = build("fix_unicode_mapper", empty).unwrap();
            assert_eq!(
                map_texts(&op, &[Some("e\u{301}")]),
                vec![Some("é".to_string())]
            );
        }
        assert!(build("fix_unicode_mapper", json!({"normalization": "NFX"})).is_err());
    }

    /// Differential test against Python ftfy on cases made by `udfs/data/gen_ftfy_cases.py`
    /// (needs the reference interpreter, so ignored by default):
    /// `FTFY_CASES=/tmp/ftfy_cases.jsonl cargo test -p dj-udfs fix_unicode -- --ignored`.
    #[test]
    #[ignore]
    fn matches_python_ftfy_on_generated_cases() {
        let path = std::env::var("FTFY_CASES").expect("FTFY_CASES: a gen_ftfy_cases.py output");
        let data = std::fs::read_to_string(path).unwrap();
        let forms = [
            ("NFC", Normalization::Nfc),
            ("NFKC", Normalization::Nfkc),
            ("NFD", Normalization::Nfd),
            ("NFKD", Normalization::Nfkd),
        ];
        let mut mismatches = Vec::new();
        for (i, line) in data.lines().enumerate() {
            let case: Value = serde_json::from_str(line).unwrap();
            let text = case["text"].as_str().unwrap();
            for (key, form) in forms {
                let Some(want) = case[key].as_str() else {
                    continue;
                };
                let got = fix_text(text, form);
                if got != want {
                    mismatches.push(format!(
                        "line {} {key}: {text:?}\n want {want:?}\n got  {got:?}",
                        i + 1
                    ));
                }
            }
        }
        assert!(
            mismatches.is_empty(),
            "{} mismatches:\n{}",
            mismatches.len(),
            mismatches[..mismatches.len().min(20)].join("\n")
        );
    }
}
