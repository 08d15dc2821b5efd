//! Python 3.11's `str.lower()` appended to a reused buffer, in one pass: ASCII runs are copied
//! lower-cased in bulk, runs of non-ASCII characters that CPython leaves unchanged are copied as
//! they are, and only the characters CPython maps go through `char::to_lowercase`.

use std::sync::LazyLock;

/// The code points CPython 3.11's `str.lower()` changes (the keys of `data/py_lower.txt`): a bit
/// per code point of the Basic Multilingual Plane, a sorted list beyond it.
struct Mapped {
    bmp: Box<[u64; 1024]>,
    astral: Vec<u32>,
}

impl Mapped {
    #[inline]
    fn contains(&self, c: char) -> bool {
        let c = c as u32;
        if c < 0x10000 {
            self.bmp[(c >> 6) as usize] & (1 << (c & 63)) != 0
        } else {
            self.astral.binary_search(&c).is_ok()
        }
    }
}

static MAPPED: LazyLock<Mapped> = LazyLock::new(|| {
    let mut bmp = Box::new([0u64; 1024]);
    let mut astral = Vec::new();
    for line in include_str!("../../data/py_lower.txt").lines() {
        let code = line.split(':').next().unwrap_or("");
        let c = u32::from_str_radix(code.trim(), 16).expect("bad hex in py_lower.txt");
        if c < 0x10000 {
            bmp[(c >> 6) as usize] |= 1 << (c & 63);
        } else {
            astral.push(c);
        }
    }
    astral.sort_unstable();
    Mapped { bmp, astral }
});

/// Appends Python's `str.lower()` of `s` to `out`: CPython's full lower-case mappings (those of
/// Rust's `char::to_lowercase` for the characters CPython 3.11 maps; the ones Unicode mapped after
/// version 14 stay unchanged) and the Final_Sigma rule for U+03A3.
pub(crate) fn push_py_lower(s: &str, out: &mut String) {
    let mapped = &*MAPPED;
    let out_start = out.len();
    let b = s.as_bytes();
    out.reserve(s.len());
    let mut at = 0;
    while at < b.len() {
        let ascii_end = at + ascii_run(&b[at..]);
        // SAFETY: lower-casing ASCII bytes gives ASCII bytes, so `out` stays UTF-8.
        unsafe { out.as_mut_vec() }.extend(b[at..ascii_end].iter().map(u8::to_ascii_lowercase));
        // Then the non-ASCII characters up to the next ASCII byte: runs CPython leaves alone are
        // copied whole.
        let mut copy_from = ascii_end;
        at = ascii_end;
        while let Some(c) = s[at..].chars().next().filter(|c| !c.is_ascii()) {
            if mapped.contains(c) {
                if c == 'Σ' {
                    // Its lower case depends on its context: start over on the Final_Sigma path.
                    out.truncate(out_start);
                    push_with_final_sigma(s, out);
                    return;
                }
                out.push_str(&s[copy_from..at]);
                out.extend(c.to_lowercase());
                copy_from = at + c.len_utf8();
            }
            at += c.len_utf8();
        }
        out.push_str(&s[copy_from..at]);
    }
}

/// [`push_py_lower`] of a text with U+03A3, whose lower case depends on its context: the standard
/// library's `str::to_lowercase` applies Final_Sigma, over the runs between the characters it maps
/// and CPython 3.11 does not.
fn push_with_final_sigma(s: &str, out: &mut String) {
    let mapped = &*MAPPED;
    let newer = |c: char| !c.is_ascii() && !mapped.contains(c) && !c.to_lowercase().eq([c]);
    let mut run_start = 0;
    for (i, c) in s.char_indices() {
        if newer(c) {
            out.push_str(&s[run_start..i].to_lowercase());
            out.push(c);
            run_start = i + c.len_utf8();
        }
    }
    out.push_str(&s[run_start..].to_lowercase());
}

/// The length of the run of ASCII bytes that starts `b`, 8 bytes at a time.
#[inline]
pub(crate) fn ascii_run(b: &[u8]) -> usize {
    let mut i = 0;
    while let Some(chunk) = b.get(i..i + 8) {
        let high = u64::from_le_bytes(chunk.try_into().expect("8 bytes")) & 0x8080_8080_8080_8080;
        if high != 0 {
            return i + high.trailing_zeros() as usize / 8;
        }
        i += 8;
    }
    i + b[i..].iter().take_while(|x| x.is_ascii()).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lower(s: &str) -> String {
        let mut out = "kept: ".to_string();
        push_py_lower(s, &mut out);
        out.strip_prefix("kept: ").expect("appended").to_string()
    }

    /// CPython 3.11: 'ABC Ü'.lower(), 'İ'.lower() == 'i̇', 'ΟΔΟΣ ΣΑ'.lower() == 'οδος σα', and
    /// U+1C89 / U+A7CB, mapped after Unicode 14, unchanged.
    #[test]
    fn python_examples() {
        assert_eq!(lower("ABC Ü"), "abc ü");
        assert_eq!(lower("İstanbul"), "i\u{307}stanbul");
        assert_eq!(lower("ΟΔΟΣ ΣΑ"), "οδος σα");
        assert_eq!(lower("Σ"), "σ");
        assert_eq!(lower("ＡＢＣ 漢字 Привет"), "ａｂｃ 漢字 привет");
        assert_eq!(lower("ABC\u{1c89}D\u{a7cb}"), "abc\u{1c89}d\u{a7cb}");
        assert_eq!(lower("ΑΣ\u{1c89}ΒΣ"), "ας\u{1c89}βς");
        assert_eq!(lower("\u{10400}X\u{1e900}"), "\u{10428}x\u{1e922}");
        assert_eq!(lower(""), "");
    }

    #[test]
    fn ascii_runs() {
        let text = "abcdefghijklmnopé0123456789abcdefghijklmnopqrstuvwxyz🙂";
        let b = text.as_bytes();
        for i in 0..b.len() {
            let want = b[i..]
                .iter()
                .position(|&x| x >= 0x80)
                .unwrap_or(b.len() - i);
            assert_eq!(ascii_run(&b[i..]), want, "{i}");
        }
    }

    /// Every code point between ASCII letters, in runs of unchanged characters and alone, gives
    /// what lower-casing it by itself gives (the table test of `text::py_lower` covers those).
    #[test]
    fn every_code_point_in_context() {
        let mut text = String::new();
        let mut want = String::new();
        for cp in 0x80..=0x10FFFFu32 {
            let Some(c) = char::from_u32(cp) else {
                continue;
            };
            if c == 'Σ' {
                continue;
            }
            text.push('Q');
            text.push(c);
            want.push('q');
            if MAPPED.contains(c) {
                want.extend(c.to_lowercase());
            } else {
                want.push(c);
            }
        }
        assert_eq!(lower(&text), want);
    }
}
