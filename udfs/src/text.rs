//! Python-compatible text primitives shared by the text operators.
//!
//! Data-Juicer's rule-based ops are defined by what CPython 3.11 `str` methods, the `regex` module
//! and a few Data-Juicer tables do, which differ from Rust's `char` predicates in small ways (for
//! example Python's `str.isspace()` includes U+001C..U+001F, `str.isalnum()` rejects the vowel
//! signs Rust's `char::is_alphanumeric` accepts, CPython 3.11 is on Unicode 14 while Rust and the
//! `regex` module are newer, and the `regex` module's `\w` is on Unicode 17 while the `regex` crate
//! is on 16). The tables below were generated from the reference
//! environment by `udfs/data/gen_tables.py` (CPython 3.11.7 / Unicode 14.0.0, `emoji` 2.2.0,
//! `regex` 2026.11.19) and are built once on first use.

use std::borrow::Cow;
use std::sync::LazyLock;

use crate::py::str_lower::push_py_lower;

/// A set of code points with O(1) lookup for ASCII and the BMP and a binary search above it.
pub(crate) struct CharSet {
    ascii: u128,
    bmp: Box<[u64; 1024]>,
    /// Sorted, non-overlapping inclusive ranges (the whole set).
    ranges: Vec<(u32, u32)>,
}

impl std::fmt::Debug for CharSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CharSet")
            .field("ranges", &self.ranges.len())
            .finish()
    }
}

impl CharSet {
    /// Builds the set from inclusive ranges (any order; overlaps are merged).
    pub(crate) fn from_ranges(ranges: impl IntoIterator<Item = (u32, u32)>) -> CharSet {
        let mut rs: Vec<(u32, u32)> = ranges.into_iter().collect();
        rs.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(rs.len());
        for (a, b) in rs {
            match merged.last_mut() {
                Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        let mut ascii = 0u128;
        let mut bmp = Box::new([0u64; 1024]);
        for &(a, b) in &merged {
            for c in a..=b.min(0xFFFF) {
                if c < 128 {
                    ascii |= 1 << c;
                }
                bmp[(c >> 6) as usize] |= 1 << (c & 63);
            }
        }
        CharSet {
            ascii,
            bmp,
            ranges: merged,
        }
    }

    /// Parses a table of `START END` hex ranges or single hex code points, one per line.
    fn parse(table: &str) -> CharSet {
        let hex = |s: &str| u32::from_str_radix(s, 16).expect("bad hex in a text table");
        CharSet::from_ranges(table.lines().filter(|l| !l.trim().is_empty()).map(|l| {
            let mut it = l.split_whitespace();
            let a = hex(it.next().unwrap());
            let b = it.next().map_or(a, hex);
            (a, b)
        }))
    }

    /// Whether [`CharSet::trim`] may strip the character that byte `b` starts or ends: an ASCII
    /// member, or any byte of a non-ASCII character (which takes the full lookup).
    #[inline]
    fn may_trim_at(&self, b: u8) -> bool {
        b >= 0x80 || self.ascii & (1 << b) != 0
    }

    #[inline]
    pub fn contains(&self, c: char) -> bool {
        let c = c as u32;
        if c < 128 {
            self.ascii & (1 << c) != 0
        } else if c < 0x10000 {
            self.bmp[(c >> 6) as usize] & (1 << (c & 63)) != 0
        } else {
            self.ranges
                .binary_search_by(|&(a, b)| {
                    if b < c {
                        std::cmp::Ordering::Less
                    } else if a > c {
                        std::cmp::Ordering::Greater
                    } else {
                        std::cmp::Ordering::Equal
                    }
                })
                .is_ok()
        }
    }

    /// How many code points of `text` are in the set, and how many code points it has. ASCII
    /// bytes are tested against the set without decoding, 32 at a time with AVX2.
    pub(crate) fn count_in(&self, text: &str) -> (u64, u64) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            return unsafe { self.count_in_avx2(text) };
        }
        self.count_bytes_in(text, 0)
    }

    /// [`CharSet::count_in`] over the bytes of `text` from `from` on, one at a time: each byte
    /// that starts a code point counts as one; ASCII ones are looked up in the bit mask, the
    /// others decoded.
    fn count_bytes_in(&self, text: &str, from: usize) -> (u64, u64) {
        let (mut hits, mut chars) = (0u64, 0u64);
        for (i, &b) in text.as_bytes().iter().enumerate().skip(from) {
            if b < 0x80 {
                chars += 1;
                hits += ((self.ascii >> b) & 1) as u64;
            } else if b >= 0xC0 {
                chars += 1;
                hits += u64::from(self.contains(char_at(text, i)));
            }
        }
        (hits, chars)
    }

    /// For each low nibble, the bit set of high nibbles (0..8) whose ASCII byte is in the set.
    fn ascii_nibble_table(&self) -> [u8; 16] {
        let mut table = [0u8; 16];
        for b in 0..128u32 {
            if (self.ascii >> b) & 1 == 1 {
                table[(b & 15) as usize] |= 1 << (b >> 4);
            }
        }
        table
    }

    /// 32 bytes per step: membership of ASCII bytes by two nibble lookups (`vpshufb`), code
    /// points counted as the bytes that are not UTF-8 continuation bytes, and only the non-ASCII
    /// lead bytes decoded.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn count_in_avx2(&self, text: &str) -> (u64, u64) {
        use std::arch::x86_64::*;
        let bytes = text.as_bytes();
        let table = self.ascii_nibble_table();
        // SAFETY: 16 readable bytes; unaligned load.
        let lo_table =
            _mm256_broadcastsi128_si256(unsafe { _mm_loadu_si128(table.as_ptr().cast()) });
        let hi_bits = _mm256_setr_epi8(
            1, 2, 4, 8, 16, 32, 64, -128, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 4, 8, 16, 32, 64, -128, 0,
            0, 0, 0, 0, 0, 0, 0,
        );
        let nibble = _mm256_set1_epi8(0x0F);
        // Continuation bytes 0x80..=0xBF are, as i8, below -64.
        let below_lead = _mm256_set1_epi8(-64);
        let (mut hits, mut chars) = (0u64, 0u64);
        let mut i = 0;
        while i + 32 <= bytes.len() {
            // SAFETY: i + 32 <= bytes.len(); unaligned load.
            let v = unsafe { _mm256_loadu_si256(bytes.as_ptr().add(i).cast()) };
            let lo = _mm256_shuffle_epi8(lo_table, _mm256_and_si256(v, nibble));
            let hi =
                _mm256_shuffle_epi8(hi_bits, _mm256_and_si256(_mm256_srli_epi16::<4>(v), nibble));
            let miss = _mm256_cmpeq_epi8(_mm256_and_si256(lo, hi), _mm256_setzero_si256());
            hits += u64::from((!_mm256_movemask_epi8(miss) as u32).count_ones());
            let non_ascii = _mm256_movemask_epi8(v) as u32;
            if non_ascii == 0 {
                chars += 32;
            } else {
                let continuation = _mm256_movemask_epi8(_mm256_cmpgt_epi8(below_lead, v)) as u32;
                chars += u64::from(32 - continuation.count_ones());
                let mut leads = non_ascii & !continuation;
                while leads != 0 {
                    let at = i + leads.trailing_zeros() as usize;
                    hits += u64::from(self.contains(char_at(text, at)));
                    leads &= leads - 1;
                }
            }
            i += 32;
        }
        let (tail_hits, tail_chars) = self.count_bytes_in(text, i);
        (hits + tail_hits, chars + tail_chars)
    }

    /// `s` without the set's characters at either end (`str.strip(chars)`); ASCII bytes are
    /// tested against a bit mask without decoding. Most words start and end with a byte that
    /// cannot be stripped: they return here, inlined, without the loops.
    #[inline]
    pub fn trim<'a>(&self, s: &'a str) -> &'a str {
        match s.as_bytes() {
            [first, .., last] if !self.may_trim_at(*first) && !self.may_trim_at(*last) => s,
            [only] if !self.may_trim_at(*only) => s,
            [] => s,
            _ => self.trim_ends(s),
        }
    }

    fn trim_ends<'a>(&self, s: &'a str) -> &'a str {
        let b = s.as_bytes();
        let mut start = 0;
        while start < b.len() {
            let len = if b[start] < 0x80 {
                ((self.ascii >> b[start]) & 1 == 1).then_some(1)
            } else {
                let c = char_at(s, start);
                self.contains(c).then(|| c.len_utf8())
            };
            match len {
                Some(len) => start += len,
                None => break,
            }
        }
        let mut end = b.len();
        while end > start {
            let len = if b[end - 1] < 0x80 {
                ((self.ascii >> b[end - 1]) & 1 == 1).then_some(1)
            } else {
                let c = s[start..end]
                    .chars()
                    .next_back()
                    .expect("a code point ends here");
                self.contains(c).then(|| c.len_utf8())
            };
            match len {
                Some(len) => end -= len,
                None => break,
            }
        }
        &s[start..end]
    }

    /// The set as sorted inclusive ranges.
    #[cfg(test)]
    pub fn ranges(&self) -> &[(u32, u32)] {
        &self.ranges
    }

    /// The body of a Rust `regex` character class matching exactly this set (without brackets).
    pub(crate) fn regex_class_body(&self) -> String {
        let mut s = String::with_capacity(self.ranges.len() * 20);
        for &(a, b) in &self.ranges {
            if a == b {
                s.push_str(&format!("\\x{{{a:X}}}"));
            } else {
                s.push_str(&format!("\\x{{{a:X}}}-\\x{{{b:X}}}"));
            }
        }
        s
    }
}

/// The byte offset of every code point of `text`, and `text.len()` last.
pub(crate) fn char_boundaries(text: &str) -> Vec<usize> {
    text.char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(text.len()))
        .collect()
}

/// The code point starting at byte `i` (a char boundary) of `text`.
#[inline]
pub(crate) fn char_at(text: &str, i: usize) -> char {
    text[i..].chars().next().expect("a code point starts here")
}

/// Byte index of the first byte at or after `from` that is `needle` or not ASCII. Tests 8 bytes
/// at a time: ASCII text without the needle is skipped quickly.
#[inline]
fn next_non_ascii_or(bytes: &[u8], needle: u8, mut from: usize) -> Option<usize> {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const ONES: u64 = 0x0101_0101_0101_0101;
    let spread = ONES * u64::from(needle);
    while from + 8 <= bytes.len() {
        let w = u64::from_le_bytes(bytes[from..from + 8].try_into().expect("8 bytes"));
        let x = w ^ spread;
        // Zero bytes of x (needle bytes of w) and high bits of w; the lowest flagged byte is exact.
        let m = (w | (x.wrapping_sub(ONES) & !x)) & HIGH;
        if m != 0 {
            return Some(from + (m.trailing_zeros() / 8) as usize);
        }
        from += 8;
    }
    bytes[from..]
        .iter()
        .position(|&b| b >= 0x80 || b == needle)
        .map(|p| from + p)
}

/// Byte index of the first non-ASCII byte at or after `from`.
#[inline]
fn next_non_ascii(bytes: &[u8], from: usize) -> Option<usize> {
    // 0x80 is not ASCII itself, so looking for it as well changes nothing.
    next_non_ascii_or(bytes, 0x80, from)
}

/// The characters of `s` that start at the bytes `next(bytes, from)` finds, with their byte
/// offsets, in order.
fn chars_found<'a>(
    s: &'a str,
    next: impl Fn(&[u8], usize) -> Option<usize> + 'a,
) -> impl Iterator<Item = (usize, char)> + 'a {
    let mut at = 0;
    std::iter::from_fn(move || {
        let p = next(s.as_bytes(), at)?;
        let c = char_at(s, p);
        at = p + c.len_utf8();
        Some((p, c))
    })
}

/// The characters of `s` that are `needle` (ASCII) or not ASCII, with their byte offsets, in
/// order; the ASCII text between them is skipped 8 bytes at a time.
pub(crate) fn non_ascii_or_chars(s: &str, needle: u8) -> impl Iterator<Item = (usize, char)> + '_ {
    chars_found(s, move |bytes, from| next_non_ascii_or(bytes, needle, from))
}

/// The non-ASCII characters of `s` with their byte offsets, in order.
pub(crate) fn non_ascii_chars(s: &str) -> impl Iterator<Item = (usize, char)> + '_ {
    chars_found(s, next_non_ascii)
}

/// Python `str.isspace()` for one character (bidi class WS/B/S or category Zs): includes
/// U+001C..U+001F, which Rust's `char::is_whitespace` does not.
#[inline]
pub(crate) fn is_py_space(c: char) -> bool {
    matches!(
        c,
        '\t'..='\r'
            | '\u{1c}'..='\u{20}'
            | '\u{85}'
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
    )
}

/// Python `str.strip()` with no argument.
#[inline]
pub(crate) fn py_strip(s: &str) -> &str {
    s.trim_matches(is_py_space)
}

/// The `regex` module's `\s` in a str pattern (Unicode White_Space; unlike `str.isspace()` it
/// excludes U+001C..U+001F).
#[inline]
pub(crate) fn is_regex_space(c: char) -> bool {
    matches!(
        c,
        '\t'..='\r'
            | ' '
            | '\u{85}'
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
    )
}

/// Python `str.splitlines()` (no `keepends`): splits on every Unicode line boundary, `\r\n` as one;
/// a trailing boundary does not produce an empty last line.
#[cfg(test)]
pub(crate) fn py_splitlines(s: &str) -> Vec<&str> {
    py_lines(s).collect()
}

/// The lines of [`py_splitlines`], without collecting them.
pub(crate) fn py_lines(s: &str) -> PyLines<'_> {
    PyLines { s, start: 0, i: 0 }
}

/// Iterator of [`py_lines`]. A byte scan: the boundaries are ASCII controls, U+0085 (C2 85) and
/// U+2028/9 (E2 80 A8/A9), so only those bytes need a look.
pub(crate) struct PyLines<'a> {
    s: &'a str,
    start: usize,
    i: usize,
}

impl<'a> Iterator for PyLines<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let b = self.s.as_bytes();
        while self.i < b.len() {
            self.i = next_boundary_candidate(b, self.i);
            if self.i >= b.len() {
                break;
            }
            let i = self.i;
            let len = match b[i] {
                b'\r' if b.get(i + 1) == Some(&b'\n') => 2,
                b'\n' | b'\r' | 0x0b | 0x0c | 0x1c..=0x1e => 1,
                0xC2 if b.get(i + 1) == Some(&0x85) => 2,
                0xE2 if b.get(i + 1) == Some(&0x80)
                    && matches!(b.get(i + 2), Some(0xA8 | 0xA9)) =>
                {
                    3
                }
                _ => {
                    self.i += 1;
                    continue;
                }
            };
            let line = &self.s[self.start..i];
            self.i += len;
            self.start = self.i;
            return Some(line);
        }
        if self.start < b.len() {
            let line = &self.s[self.start..];
            self.start = b.len();
            return Some(line);
        }
        None
    }
}

/// Whether a line boundary may start at byte `b`: `\n`, `\r`, VT, FF, the separators 1C-1E,
/// and the lead bytes of U+0085 (C2) and U+2028/9 (E2).
#[inline]
fn may_start_boundary(b: u8) -> bool {
    matches!(b, 0x0a..=0x0d | 0x1c..=0x1e | 0xC2 | 0xE2)
}

/// The first index from `i` on whose byte may start a line boundary (`b.len()` if none): 16
/// bytes at a time with SSE2, which x86-64 always has.
#[inline]
fn next_boundary_candidate(b: &[u8], mut i: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        while i + 16 <= b.len() {
            // SAFETY: SSE2 is part of x86-64; the load reads b[i..i + 16], in bounds.
            let mask = unsafe {
                let x = _mm_loadu_si128(b.as_ptr().add(i).cast());
                let in_range = |lo: i8, span: i8| {
                    let y = _mm_sub_epi8(x, _mm_set1_epi8(lo));
                    _mm_cmpeq_epi8(_mm_min_epu8(y, _mm_set1_epi8(span)), y)
                };
                let hit = _mm_or_si128(
                    _mm_or_si128(in_range(0x0a, 3), in_range(0x1c, 2)),
                    _mm_or_si128(
                        _mm_cmpeq_epi8(x, _mm_set1_epi8(0xC2u8 as i8)),
                        _mm_cmpeq_epi8(x, _mm_set1_epi8(0xE2u8 as i8)),
                    ),
                );
                _mm_movemask_epi8(hit)
            };
            if mask != 0 {
                return i + mask.trailing_zeros() as usize;
            }
            i += 16;
        }
    }
    while i < b.len() && !may_start_boundary(b[i]) {
        i += 1;
    }
    i
}

static PY_ALNUM: LazyLock<CharSet> =
    LazyLock::new(|| CharSet::parse(include_str!("../data/py_isalnum.txt")));

/// Python `str.isalnum()` for one character (CPython 3.11, Unicode 14.0): `isalpha()` (categories
/// Lu Ll Lt Lm Lo) or `isdecimal()`/`isdigit()`/`isnumeric()` (Numeric_Type set). Generated from
/// the reference interpreter, so Unicode-version differences with Rust do not leak in.
#[inline]
#[cfg(test)]
pub(crate) fn is_py_alnum(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphanumeric()
    } else {
        PY_ALNUM.contains(c)
    }
}

/// The set behind [`is_py_alnum`] (ASCII included).
pub(crate) fn py_alnum() -> &'static CharSet {
    &PY_ALNUM
}

static PY_ALPHA: LazyLock<CharSet> =
    LazyLock::new(|| CharSet::parse(include_str!("../data/py_isalpha.txt")));

/// Python `str.isalpha()` for one character (CPython 3.11, Unicode 14.0: categories Lu Ll Lt Lm
/// Lo), from the reference interpreter's table.
#[inline]
pub(crate) fn is_py_alpha(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphabetic()
    } else {
        PY_ALPHA.contains(c)
    }
}

static SPECIAL_CHARACTERS: LazyLock<CharSet> =
    LazyLock::new(|| CharSet::parse(include_str!("../data/special_characters.txt")));

/// Data-Juicer's `SPECIAL_CHARACTERS` (ops/common/special_characters.py) tested against one
/// character: `string.punctuation + string.digits + string.whitespace`, the extra literal set, and
/// every single-code-point key of `emoji.EMOJI_DATA` (emoji 2.2.0). Multi-code-point emoji keys are
/// in the Python set too, but a single character can never equal them.
#[inline]
pub(crate) fn is_special_char(c: char) -> bool {
    SPECIAL_CHARACTERS.contains(c)
}

/// The set behind [`is_special_char`].
pub(crate) fn special_characters() -> &'static CharSet {
    &SPECIAL_CHARACTERS
}

/// Data-Juicer's `VARIOUS_WHITESPACES` (23 code points, TAB included, newlines not).
#[inline]
pub(crate) fn is_various_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | ' ' | '\u{84}' | '\u{a0}' | '\u{2000}'
            ..='\u{200d}' | '\u{202f}' | '\u{205f}' | '\u{2060}' | '\u{3000}' | '\u{fffc}'
    )
}

static REGEX_WORD: LazyLock<CharSet> =
    LazyLock::new(|| CharSet::parse(include_str!("../data/regex_word.txt")));
static REGEX_DIGIT: LazyLock<CharSet> =
    LazyLock::new(|| CharSet::parse(include_str!("../data/regex_digit.txt")));

/// The `regex` module's `\w` in a str pattern (its Unicode tables, currently 17.0).
pub(crate) fn regex_word() -> &'static CharSet {
    &REGEX_WORD
}

/// The `regex` module's `\d` in a str pattern (Unicode Nd, its Unicode version).
pub(crate) fn regex_digit() -> &'static CharSet {
    &REGEX_DIGIT
}

/// Data-Juicer's `split_on_whitespace(document, new_line, tab)`: split on the ASCII space (and
/// `\n` / `\t` when enabled) only, dropping empty pieces. Other Unicode whitespace stays inside
/// words.
pub(crate) fn split_on_whitespace(
    doc: &str,
    new_line: bool,
    tab: bool,
) -> impl Iterator<Item = &str> {
    whitespace_spans(doc, new_line, tab).map(|(start, end)| &doc[start..end])
}

/// The byte ranges of [`split_on_whitespace`]'s pieces.
pub(crate) fn whitespace_spans(doc: &str, new_line: bool, tab: bool) -> WhitespaceSpans<'_> {
    // A disabled separator searches for the space again.
    let (nl, tb) = (
        if new_line { b'\n' } else { b' ' },
        if tab { b'\t' } else { b' ' },
    );
    WhitespaceSpans {
        bytes: doc.as_bytes(),
        separators: [b' ', nl, tb],
        block: 0,
        next_block: 0,
        mask: 0,
        start: 0,
    }
}

/// The iterator of [`whitespace_spans`]. Separators are found 64 bytes at a time as a bit mask:
/// words are a few bytes apart, and a `memchr` call per word cost more than the search.
pub(crate) struct WhitespaceSpans<'a> {
    bytes: &'a [u8],
    separators: [u8; 3],
    /// Where the block of `mask` starts, and where the next one does.
    block: usize,
    next_block: usize,
    /// The block's separators not yet consumed, one bit per byte.
    mask: u64,
    /// Where the next piece starts; past the end once the last piece is out.
    start: usize,
}

impl Iterator for WhitespaceSpans<'_> {
    type Item = (usize, usize);

    #[inline]
    fn next(&mut self) -> Option<(usize, usize)> {
        loop {
            while self.mask != 0 {
                let end = self.block + self.mask.trailing_zeros() as usize;
                self.mask &= self.mask - 1;
                let start = std::mem::replace(&mut self.start, end + 1);
                if end > start {
                    return Some((start, end));
                }
            }
            let len = self.bytes.len();
            if self.next_block >= len {
                let start = std::mem::replace(&mut self.start, usize::MAX);
                return (start < len).then_some((start, len));
            }
            self.block = self.next_block;
            self.next_block = (self.block + 64).min(len);
            self.mask = separator_mask(&self.bytes[self.block..self.next_block], self.separators);
        }
    }
}

/// Bit `i` set where `chunk[i]` (at most 64 bytes) is one of `separators`.
#[inline]
fn separator_mask(chunk: &[u8], [a, b, c]: [u8; 3]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if chunk.len() == 64 {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of x86-64; the four loads read the chunk's 64 bytes.
        unsafe {
            let (a, b, c) = (
                _mm_set1_epi8(a as i8),
                _mm_set1_epi8(b as i8),
                _mm_set1_epi8(c as i8),
            );
            let mut mask = 0u64;
            for k in 0..4 {
                let v = _mm_loadu_si128(chunk.as_ptr().add(16 * k).cast());
                let hit = _mm_or_si128(
                    _mm_cmpeq_epi8(v, a),
                    _mm_or_si128(_mm_cmpeq_epi8(v, b), _mm_cmpeq_epi8(v, c)),
                );
                mask |= u64::from(_mm_movemask_epi8(hit) as u16) << (16 * k);
            }
            return mask;
        }
    }
    chunk
        .iter()
        .enumerate()
        .filter(|&(_, &x)| x == a || x == b || x == c)
        .fold(0, |mask, (i, _)| mask | 1 << i)
}

/// `get_words_from_document(doc)` without a tokenizer: [`split_on_whitespace`] on space, newline
/// and tab.
pub(crate) fn words_from_document(doc: &str) -> impl Iterator<Item = &str> {
    split_on_whitespace(doc, true, true)
}

/// Data-Juicer's `strip(document, strip_characters)`: drop leading and trailing characters of the
/// set.
#[inline]
pub(crate) fn strip_chars<'a>(s: &'a str, set: &CharSet) -> &'a str {
    set.trim(s)
}

/// Data-Juicer's `words_refinement(words, lower_case, strip_chars)` without word augmentation
/// (none of the ops here use it): optionally lower-case (Python `str.lower()`), then strip the set
/// from both ends and drop words that become empty.
pub(crate) fn words_refinement<'a>(
    words: impl IntoIterator<Item = &'a str>,
    lower_case: bool,
    strip: Option<&'a CharSet>,
) -> impl Iterator<Item = Cow<'a, str>> {
    words.into_iter().filter_map(move |w| {
        let w: Cow<'a, str> = if lower_case {
            py_lower(w)
        } else {
            Cow::Borrowed(w)
        };
        let Some(set) = strip else { return Some(w) };
        let refined = match w {
            Cow::Borrowed(b) => Cow::Borrowed(strip_chars(b, set)),
            Cow::Owned(o) => Cow::Owned(strip_chars(&o, set).to_string()),
        };
        (!refined.is_empty()).then_some(refined)
    })
}

/// Python `str.lower()`: full lower-case mapping (e.g. U+0130 -> "i\u{307}") with the Final_Sigma
/// rule for U+03A3. This is Rust's `str::to_lowercase`, which implements the same algorithm, except
/// for the characters whose lower-case mapping arrived after Unicode 14: CPython 3.11 leaves them
/// unchanged, and so does this (a unit test checks every code point against CPython's table).
pub(crate) fn py_lower(s: &str) -> Cow<'_, str> {
    if s.is_ascii() {
        return if s.bytes().any(|b| b.is_ascii_uppercase()) {
            Cow::Owned(s.to_ascii_lowercase())
        } else {
            Cow::Borrowed(s)
        };
    }
    let mut lowered = String::new();
    push_py_lower(s, &mut lowered);
    if lowered == s {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(lowered)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_non_ascii_or_finds_the_first_flagged_byte() {
        let texts = [
            "",
            "plain ascii text without it",
            "tab\there",
            "\t",
            "ab\u{a0}cd\tef",
            "\u{1}\u{0}\u{9}\u{8}\u{a} ünïcödé\t",
            "0123456\t89abcdef\u{3000}",
            "\u{9}\u{9}\u{9}\u{9}\u{9}\u{9}\u{9}\u{9}\u{9}",
        ];
        for text in texts {
            let b = text.as_bytes();
            for from in 0..=b.len() {
                let want = (from..b.len()).find(|&i| b[i] >= 0x80 || b[i] == b'\t');
                assert_eq!(
                    next_non_ascii_or(b, b'\t', from),
                    want,
                    "{text:?} from {from}"
                );
                let want = (from..b.len()).find(|&i| b[i] >= 0x80);
                assert_eq!(next_non_ascii(b, from), want, "{text:?} from {from}");
            }
        }
        // Every byte value before and after a needle, at every position in a word.
        for v in 0..=255u8 {
            for pos in 0..8 {
                let mut b = [b'a'; 16];
                b[pos] = v;
                b[pos + 1] = b'\t';
                let want = if v >= 0x80 || v == b'\t' {
                    pos
                } else {
                    pos + 1
                };
                assert_eq!(
                    next_non_ascii_or(&b, b'\t', 0),
                    Some(want),
                    "{v:#x} at {pos}"
                );
            }
        }
    }

    #[test]
    fn py_alnum_set_agrees_on_ascii() {
        for c in (0..128u8).map(char::from) {
            assert_eq!(py_alnum().contains(c), is_py_alnum(c), "{c:?}");
        }
    }

    #[test]
    fn trim_equals_trim_matches() {
        let set = special_characters();
        for s in [
            "",
            "...",
            "(quick)",
            "«ünï»",
            "a",
            "!a!",
            "😀x😀",
            "—dash—",
            "x\u{301}",
            "  \t",
        ] {
            assert_eq!(set.trim(s), s.trim_matches(|c| set.contains(c)), "{s:?}");
        }
    }

    #[test]
    fn words_from_document_splits_on_space_newline_tab_only() {
        let doc = " a  b\tc\n\nd\u{a0}e\r\nf \t";
        let want: Vec<&str> = doc
            .split([' ', '\n', '\t'])
            .filter(|w| !w.is_empty())
            .collect();
        assert_eq!(words_from_document(doc).collect::<Vec<_>>(), want);
        assert_eq!(want, ["a", "b", "c", "d\u{a0}e\r", "f"]);
    }

    #[test]
    fn count_in_counts_code_points() {
        let set = special_characters();
        let long_mixed = "Ünïcödé, 😀 text! 123 — «quoted» 中文字符 x\ty\u{7f}\u{0}".repeat(7);
        let long_ascii = "plain ASCII text, with digits 0123 and punctuation!?".repeat(5);
        for text in [
            "",
            "a,b!",
            "ünï 😀 中文, x\ty",
            "abc",
            &long_mixed,
            &long_ascii,
        ] {
            let want = (
                text.chars().filter(|&c| set.contains(c)).count() as u64,
                text.chars().count() as u64,
            );
            assert_eq!(set.count_in(text), want, "{text:?}");
            assert_eq!(set.count_bytes_in(text, 0), want, "{text:?}");
            assert_eq!(py_alnum().count_in(text).1, want.1, "{text:?}");
            let alnum = text.chars().filter(|&c| is_py_alnum(c)).count() as u64;
            assert_eq!(py_alnum().count_in(text).0, alnum, "{text:?}");
        }
    }

    #[test]
    fn py_space_matches_cpython() {
        // [c for c in range(0x110000) if chr(c).isspace()] in CPython 3.11.7
        let expected: Vec<u32> = vec![
            0x9, 0xa, 0xb, 0xc, 0xd, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000,
            0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028,
            0x2029, 0x202f, 0x205f, 0x3000,
        ];
        let got: Vec<u32> = (0..=0x10FFFFu32)
            .filter_map(char::from_u32)
            .filter(|&c| is_py_space(c))
            .map(|c| c as u32)
            .collect();
        assert_eq!(got, expected);
        // Rust's notion differs exactly by U+001C..U+001F.
        let rust: Vec<u32> = (0..=0x10FFFFu32)
            .filter_map(char::from_u32)
            .filter(|c| c.is_whitespace())
            .map(|c| c as u32)
            .collect();
        let py_minus_fs: Vec<u32> = expected
            .iter()
            .copied()
            .filter(|c| !(0x1c..=0x1f).contains(c))
            .collect();
        assert_eq!(rust, py_minus_fs);
    }

    #[test]
    fn regex_space_matches_regex_module() {
        // [c for c in range(0x110000) if regex.match(r'\s', chr(c))]
        let expected: Vec<u32> = vec![
            0x9, 0xa, 0xb, 0xc, 0xd, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003,
            0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f,
            0x3000,
        ];
        let got: Vec<u32> = (0..=0x10FFFFu32)
            .filter_map(char::from_u32)
            .filter(|&c| is_regex_space(c))
            .map(|c| c as u32)
            .collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn py_strip_uses_python_whitespace() {
        assert_eq!(py_strip(""), "");
        assert_eq!(py_strip(" \t\n "), "");
        assert_eq!(py_strip("\u{1c}\u{1f}a b\u{3000}\u{a0}"), "a b");
        // Zero-width space and BOM are not whitespace to Python.
        assert_eq!(py_strip("\u{200b}a\u{feff}"), "\u{200b}a\u{feff}");
        assert_eq!(py_strip("\u{85}x\u{2029}"), "x");
    }

    #[test]
    fn splitlines_matches_cpython() {
        // 'a\nb\r\nc\rd\x0be\x0cf\x1cg\x1dh\x1ei\x85j\u2028k\u2029l\n'.splitlines()
        let s = "a\nb\r\nc\rd\u{b}e\u{c}f\u{1c}g\u{1d}h\u{1e}i\u{85}j\u{2028}k\u{2029}l\n";
        assert_eq!(
            py_splitlines(s),
            vec!["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"]
        );
        // '\n\nx\r\r\n'.splitlines() == ['', '', 'x', '']
        assert_eq!(py_splitlines("\n\nx\r\r\n"), vec!["", "", "x", ""]);
        assert!(py_splitlines("").is_empty());
        // U+001F is whitespace but not a line break.
        assert_eq!(py_splitlines("a\u{1f}b"), vec!["a\u{1f}b"]);
    }

    /// The 16-byte scan finds every boundary, wherever it falls in a chunk, and skips the
    /// lookalike lead bytes (C2 and E2 of other characters).
    #[test]
    fn splitlines_scan_finds_boundaries_at_any_offset() {
        fn reference(s: &str) -> Vec<&str> {
            let (mut out, mut start, mut chars) = (Vec::new(), 0, s.char_indices().peekable());
            while let Some((i, c)) = chars.next() {
                let breaks = matches!(
                    c,
                    '\n' | '\r' | '\u{b}' | '\u{c}' | '\u{1c}'
                        ..='\u{1e}' | '\u{85}' | '\u{2028}' | '\u{2029}'
                );
                if breaks {
                    out.push(&s[start..i]);
                    let mut end = i + c.len_utf8();
                    if c == '\r' && chars.peek().is_some_and(|&(_, n)| n == '\n') {
                        chars.next();
                        end += 1;
                    }
                    start = end;
                }
            }
            if start < s.len() {
                out.push(&s[start..]);
            }
            out
        }
        let pieces = [
            "word",
            " ",
            "\n",
            "\r\n",
            "\r",
            "\u{85}",
            "\u{2028}",
            "\u{2029}",
            "\u{1c}",
            "\u{b}",
            "«é»",
            "\u{201c}quoted\u{201d}",
            "\u{2014}",
            "\u{a0}",
            "longer text here",
            "\t",
        ];
        let mut state = 12345u64;
        for _ in 0..2000 {
            let mut text = String::new();
            for _ in 0..(state % 40) {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                text.push_str(pieces[(state % pieces.len() as u64) as usize]);
            }
            assert_eq!(py_splitlines(&text), reference(&text), "{text:?}");
        }
    }

    #[test]
    fn alnum_follows_cpython_not_rust() {
        assert!(is_py_alnum('a') && is_py_alnum('Z') && is_py_alnum('7'));
        assert!(!is_py_alnum('_') && !is_py_alnum(' ') && !is_py_alnum('-'));
        assert!(is_py_alnum('数') && is_py_alnum('é') && is_py_alnum('ß'));
        assert!(!is_py_alnum('\u{301}')); // combining acute (Mn)
        // DEVANAGARI VOWEL SIGN AA (Mc, Other_Alphabetic): Rust's is_alphanumeric says yes,
        // Python's isalnum says no.
        assert!('\u{93e}'.is_alphanumeric());
        assert!(!is_py_alnum('\u{93e}'));
        assert!(is_py_alnum('\u{b2}')); // SUPERSCRIPT TWO (No)
        assert!(is_py_alnum('\u{2167}')); // ROMAN NUMERAL EIGHT (Nl)
        assert!(is_py_alnum('\u{ff11}')); // FULLWIDTH DIGIT ONE
        assert!(is_py_alnum('\u{663}')); // ARABIC-INDIC DIGIT THREE
        assert!(!is_py_alnum('🙂'));
        // U+1E030 (Unicode 15) is Lm in newer Unicode but unassigned for CPython 3.11.
        assert!(!is_py_alnum('\u{1e030}'));
        assert!(is_py_alnum('\u{20000}')); // CJK Ext B
    }

    #[test]
    fn alnum_table_matches_python_categories() {
        // CPython 3.11: str.isalnum() is exactly categories L*, Nd, Nl, No (Unicode 14): 134,000+
        // code points (Counter printed by the generator: Lo 127333, Ll 2227, Lu 1831, No 895,
        // Nd 660, Lm 334, Nl 236, Lt 31).
        let n: u32 = PY_ALNUM.ranges().iter().map(|(a, b)| b - a + 1).sum();
        assert_eq!(n, 127333 + 2227 + 1831 + 895 + 660 + 334 + 236 + 31);
        assert_eq!(PY_ALNUM.ranges().len(), 733);
    }

    #[test]
    fn special_characters_table() {
        let set = special_characters();
        let n: u32 = set.ranges().iter().map(|(a, b)| b - a + 1).sum();
        assert_eq!(n, 1618); // single code points in the 4965-entry Python set
        for c in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~0123456789 \t\n\r\u{b}\u{c}".chars() {
            assert!(is_special_char(c), "{c:?}");
        }
        for c in [
            '\u{3000}', '\u{fffd}', '一', '上', '士', 'ー', '？', '１', '™', '©', '\u{feff}',
            '\u{200b}', '\u{ad}',
        ] {
            assert!(is_special_char(c), "{c:?}");
        }
        // single-code-point emoji keys
        for c in ['😀', '🙂', '❤', '☺', '#'] {
            assert!(is_special_char(c), "{c:?}");
        }
        for c in [
            'a', 'Z', '数', 'é', '\u{a0}', '\u{1c}', '_', /* in punctuation */
        ] {
            assert_eq!(is_special_char(c), c == '_', "{c:?}");
        }
        // U+00A0 is not in the set (only the listed spaces are), nor is ZWJ U+200D, nor a lone
        // regional indicator (only flag pairs are emoji keys).
        assert!(!is_special_char('\u{200d}'));
        assert!(!is_special_char('🇦'));
    }

    #[test]
    fn various_whitespaces_has_23_members() {
        let got: Vec<u32> = (0..=0x10FFFFu32)
            .filter_map(char::from_u32)
            .filter(|&c| is_various_whitespace(c))
            .map(|c| c as u32)
            .collect();
        // sorted(ord(c) for c in VARIOUS_WHITESPACES)
        assert_eq!(
            got,
            vec![
                0x9, 0x20, 0x84, 0xa0, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006,
                0x2007, 0x2008, 0x2009, 0x200a, 0x200b, 0x200c, 0x200d, 0x202f, 0x205f, 0x2060,
                0x3000, 0xfffc
            ]
        );
    }

    #[test]
    fn whitespace_spans_match_splitting_byte_by_byte() {
        let alphabet = [" ", "\n", "\t", "a", "bc", "é", "\u{3000}", "  "];
        let mut state = 11u64;
        for len in [0, 1, 5, 63, 64, 65, 127, 128, 129, 300] {
            for _ in 0..20 {
                let doc: String = (0..len)
                    .map(|_| {
                        state = state
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        alphabet[(state >> 33) as usize % alphabet.len()]
                    })
                    .collect();
                for (new_line, tab) in [(false, false), (true, true), (true, false)] {
                    let is_sep =
                        |b: u8| b == b' ' || (new_line && b == b'\n') || (tab && b == b'\t');
                    let mut want = Vec::new();
                    let mut start = 0;
                    for (i, &b) in doc.as_bytes().iter().enumerate() {
                        if is_sep(b) {
                            if i > start {
                                want.push((start, i));
                            }
                            start = i + 1;
                        }
                    }
                    if doc.len() > start {
                        want.push((start, doc.len()));
                    }
                    let got: Vec<_> = whitespace_spans(&doc, new_line, tab).collect();
                    assert_eq!(got, want, "{doc:?} {new_line} {tab}");
                }
            }
        }
    }

    #[test]
    fn split_on_whitespace_only_ascii_separators() {
        let w: Vec<&str> =
            split_on_whitespace("  a\tb\nc  d\u{a0}e\u{3000}f\r", true, true).collect();
        assert_eq!(w, vec!["a", "b", "c", "d\u{a0}e\u{3000}f\r"]);
        let w: Vec<&str> = split_on_whitespace("a\tb\nc", false, false).collect();
        assert_eq!(w, vec!["a\tb\nc"]);
        assert_eq!(split_on_whitespace("", true, true).count(), 0);
        assert_eq!(split_on_whitespace(" \n\t ", true, true).count(), 0);
    }

    #[test]
    fn refinement_strips_special_and_drops_empty() {
        let words = ["--Hello!", "...", "wörld’s", "(", "ÀB", "😀x😀"];
        let r: Vec<Cow<'_, str>> =
            words_refinement(words, false, Some(special_characters())).collect();
        assert_eq!(r, vec!["Hello", "wörld’s", "ÀB", "x"]);
        let r: Vec<Cow<'_, str>> =
            words_refinement(words, true, Some(special_characters())).collect();
        assert_eq!(r, vec!["hello", "wörld’s", "àb", "x"]);
        let r: Vec<Cow<'_, str>> = words_refinement(["A", ""], true, None).collect();
        assert_eq!(r, vec!["a", ""]);
    }

    #[test]
    fn py_lower_examples() {
        assert_eq!(py_lower("abc"), Cow::Borrowed("abc"));
        assert!(matches!(py_lower("already lower ü"), Cow::Borrowed(_)));
        assert_eq!(py_lower("ABC Ü"), "abc ü");
        // 'İ'.lower() == 'i̇'; 'ΟΔΟΣ ΣΑ'.lower() == 'οδος σα'; 'Σ'.lower() == 'σ'
        assert_eq!(py_lower("İ"), "i\u{307}");
        assert_eq!(py_lower("ΟΔΟΣ ΣΑ"), "οδος σα");
        assert_eq!(py_lower("Σ"), "σ");
        assert_eq!(py_lower("ＡＢＣ"), "ａｂｃ");
        // U+1C89 / U+A7CB got lower-case mappings after Unicode 14: 'ABC\u1c89D\ua7cb'.lower()
        assert_eq!(py_lower("ABC\u{1c89}D\u{a7cb}"), "abc\u{1c89}d\u{a7cb}");
    }

    #[test]
    fn py_lower_matches_cpython() {
        // Every code point whose CPython 3.11 str.lower() differs from itself.
        let table = include_str!("../data/py_lower.txt");
        let hex = |s: &str| u32::from_str_radix(s, 16).unwrap();
        let mut expected = std::collections::BTreeMap::new();
        for line in table.lines() {
            let (cp, mapped) = line.split_once(':').unwrap();
            let mapped: String = mapped
                .split_whitespace()
                .map(|h| char::from_u32(hex(h)).unwrap())
                .collect();
            expected.insert(hex(cp), mapped);
        }
        let mut mismatches = Vec::new();
        for cp in 0..=0x10FFFFu32 {
            let Some(c) = char::from_u32(cp) else {
                continue;
            };
            let s = c.to_string();
            let want = expected.get(&cp).cloned().unwrap_or_else(|| s.clone());
            let got = py_lower(&s).into_owned();
            if got != want {
                mismatches.push(format!("{cp:X}: got {got:?} want {want:?}"));
            }
        }
        assert!(
            mismatches.is_empty(),
            "{} mismatches: {:?}",
            mismatches.len(),
            mismatches
        );
    }
}
