//! `document_minhash_deduplicator`, hashing half: the LSH band keys of each sample.
//!
//! Data-Juicer 1.6.1 (`ops/deduplicator/document_minhash_deduplicator.py`), step by step:
//!
//! 1. The text is lower-cased (Python `str.lower()`, if `lowercase`), then every match of
//!    `ignore_pattern` (Python `regex` syntax, no flags) is deleted.
//! 2. Shingles, as a **set** of UTF-8 byte strings, for `window_size` w: `character`: every run of
//!    w code points; `space`: the text split on the ASCII space only (empty pieces dropped; `\n` and
//!    `\t` stay inside tokens), w consecutive tokens joined by one space; `punctuation`: the text
//!    split on every `\p{P}` character (empty pieces kept), w consecutive pieces joined by one
//!    space; `sentencepiece`: the pieces of the `tokenizer_model` SentencePiece model, w
//!    consecutive pieces concatenated.
//! 3. Each shingle hashes to the first 4 bytes of its SHA-1, read as a little-endian u32.
//! 4. `num_permutations` permutations `(a, b)` come from `numpy.random.RandomState(42)`: for each
//!    one, `a = randint(1, P)` then `b = randint(0, P)` with `dtype=uint64`, P = 2^61 - 1
//!    ([`Mt19937`], [`randint_u64`]). Permutation j of hash h is `((h*a + b) mod P) & (2^32 - 1)`
//!    with wrapping u64 arithmetic, as numpy computes it; the signature holds the minimum over the
//!    shingles for every permutation. A text without any shingle (fewer tokens than the window)
//!    gets `2^32 - 1` for every permutation, exactly as Data-Juicer 1.6.1 does (`np.full(...,
//!    MAX_HASH)`; older releases failed there).
//! 5. Band parameters: `num_bands` and `num_rows_per_band` when both are given, otherwise the
//!    `(b, r)` minimising `0.5*FP + 0.5*FN` ([`optimal_param`]), with the integrals computed by a
//!    port of QUADPACK's QAGS as `scipy.integrate.quad` runs it ([`quad`]), so the choice is the
//!    same bit for bit (defaults: 25 bands of 10 rows; only 250 of the 256 values are used).
//! 6. Band i of Data-Juicer's `__dj__minhash` is the big-endian bytes of the **u64** values
//!    `values[i*r..(i+1)*r]` (8 bytes per value, the high 4 always zero; a slice past the end of the
//!    signature is cut short or empty, as Python slicing does): [`MinHasher::dj_band`].
//!
//! The UDF ([`MinHashUdf`]) returns, per row, a `List<Binary>` (field `item`, nullable) of the
//! `num_bands` **band keys**: band key i = `(i as u32).to_be_bytes()` followed by Data-Juicer's band
//! i bytes. Data-Juicer keeps one hash table per band position, so two rows are candidates only when
//! they agree on the same band *at the same position*; the index prefix makes equal keys mean
//! exactly that, so the clustering node can put all keys of all bands in one table. A null text
//! gives a null list. Rows sharing a key are connected; of each connected component the row with
//! the smallest input index is kept (no Jaccard verification), as Data-Juicer does.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, LazyLock};

use arrow::array::{Array, ArrayRef, AsArray, BinaryBuilder, ListBuilder};
use arrow::datatypes::{DataType, Field};
use datafusion_common::{Result, exec_err};
use datafusion_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use serde_json::{Value, json};
use sha1::{Digest, Sha1};

use crate::models::SentencePiece;
use crate::operator::{DedupKind, DedupOp, Operator};
use crate::params::{ParamError, ParamSpec, ParamType, Params};
use crate::py::numpy_legacy::{Mt19937, randint_u64};
use crate::py::regex::{PyRegex, Template};
use crate::py::scipy_quad::quad;
use crate::registry::{OpKind, OpSpec};
use crate::text::{CharSet, py_lower, split_on_whitespace};
use crate::udf::UdfIdentity;

/// Name of the band-key column, as Data-Juicer names its MinHash column (`HashKeys.minhash`).
pub const MINHASH_COLUMN: &str = "__dj__minhash";
/// The Mersenne prime 2^61 - 1 of the permutations.
pub const MERSENNE_PRIME: u64 = (1 << 61) - 1;
/// Largest permuted value, 2^32 - 1; also the value of every permutation for an empty shingle set.
pub const MAX_HASH: u32 = u32::MAX;
/// Seed of `numpy.random.RandomState` for the permutations.
pub const PERMUTATION_SEED: u32 = 42;

// ---------------------------------------------------------------------------------------------
// Permutations
// ---------------------------------------------------------------------------------------------

/// Data-Juicer's permutations `(perm_a, perm_b)` for `n` permutations: `RandomState(42)`, then per
/// permutation `a = randint(1, P)` and `b = randint(0, P)`. The first `k` of `n > k` permutations
/// are the `k` permutations.
pub fn permutations(n: usize) -> (Vec<u64>, Vec<u64>) {
    let mut rng = Mt19937::new(PERMUTATION_SEED);
    let mut a = Vec::with_capacity(n);
    let mut b = Vec::with_capacity(n);
    for _ in 0..n {
        a.push(randint_u64(&mut rng, 1, MERSENNE_PRIME));
        b.push(randint_u64(&mut rng, 0, MERSENNE_PRIME));
    }
    (a, b)
}

// ---------------------------------------------------------------------------------------------
// Hashing
// ---------------------------------------------------------------------------------------------

/// Data-Juicer's `sha1_hash32` (from datasketch): the first 4 bytes of the SHA-1 digest as a
/// little-endian u32.
pub fn sha1_hash32(data: &[u8]) -> u32 {
    let d = Sha1::digest(data);
    u32::from_le_bytes([d[0], d[1], d[2], d[3]])
}

/// `x mod (2^61 - 1)` for any u64.
#[inline]
fn mod_mersenne(x: u64) -> u64 {
    let r = (x & MERSENNE_PRIME) + (x >> 61);
    if r >= MERSENNE_PRIME {
        r - MERSENNE_PRIME
    } else {
        r
    }
}

/// One permutation of a token hash: `((h*a + b) mod P) & (2^32 - 1)`, multiplication and addition
/// wrapping in u64 as numpy's uint64 arrays do.
#[inline]
pub fn permute(h: u32, a: u64, b: u64) -> u32 {
    mod_mersenne((h as u64).wrapping_mul(a).wrapping_add(b)) as u32
}

/// The `regex` module's `\p{P}` (its Unicode 17 tables: U+2E60..U+2E63 and U+10ED0 are newer
/// than the `regex` crate's Unicode 16), as hex ranges; generated from the reference environment.
const REGEX_PUNCTUATION: &str = "\
    21-23 25-2A 2C-2F 3A-3B 3F-40 5B-5D 5F 7B 7D A1 A7 AB B6-B7 BB BF 37E 387 55A-55F \
    589-58A 5BE 5C0 5C3 5C6 5F3-5F4 609-60A 60C-60D 61B 61D-61F 66A-66D 6D4 700-70D 7F7-7F9 \
    830-83E 85E 964-965 970 9FD A76 AF0 C77 C84 DF4 E4F E5A-E5B F04-F12 F14 F3A-F3D F85 \
    FD0-FD4 FD9-FDA 104A-104F 10FB 1360-1368 1400 166E 169B-169C 16EB-16ED 1735-1736 \
    17D4-17D6 17D8-17DA 1800-180A 1944-1945 1A1E-1A1F 1AA0-1AA6 1AA8-1AAD 1B4E-1B4F \
    1B5A-1B60 1B7D-1B7F 1BFC-1BFF 1C3B-1C3F 1C7E-1C7F 1CC0-1CC7 1CD3 2010-2027 2030-2043 \
    2045-2051 2053-205E 207D-207E 208D-208E 2308-230B 2329-232A 2768-2775 27C5-27C6 \
    27E6-27EF 2983-2998 29D8-29DB 29FC-29FD 2CF9-2CFC 2CFE-2CFF 2D70 2E00-2E2E 2E30-2E4F \
    2E52-2E5D 2E60-2E63 3001-3003 3008-3011 3014-301F 3030 303D 30A0 30FB A4FE-A4FF \
    A60D-A60F A673 A67E A6F2-A6F7 A874-A877 A8CE-A8CF A8F8-A8FA A8FC A92E-A92F A95F \
    A9C1-A9CD A9DE-A9DF AA5C-AA5F AADE-AADF AAF0-AAF1 ABEB FD3E-FD3F FE10-FE19 FE30-FE52 \
    FE54-FE61 FE63 FE68 FE6A-FE6B FF01-FF03 FF05-FF0A FF0C-FF0F FF1A-FF1B FF1F-FF20 \
    FF3B-FF3D FF3F FF5B FF5D FF5F-FF65 10100-10102 1039F 103D0 1056F 10857 1091F 1093F \
    10A50-10A58 10A7F 10AF0-10AF6 10B39-10B3F 10B99-10B9C 10D6E 10EAD 10ED0 10F55-10F59 \
    10F86-10F89 11047-1104D 110BB-110BC 110BE-110C1 11140-11143 11174-11175 111C5-111C8 \
    111CD 111DB 111DD-111DF 11238-1123D 112A9 113D4-113D5 113D7-113D8 1144B-1144F \
    1145A-1145B 1145D 114C6 115C1-115D7 11641-11643 11660-1166C 116B9 1173C-1173E 1183B \
    11944-11946 119E2 11A3F-11A46 11A9A-11A9C 11A9E-11AA2 11B00-11B09 11BE1 11C41-11C45 \
    11C70-11C71 11EF7-11EF8 11F43-11F4F 11FFF 12470-12474 12FF1-12FF2 16A6E-16A6F 16AF5 \
    16B37-16B3B 16B44 16D6D-16D6F 16E97-16E9A 16FE2 1BC9F 1DA87-1DA8B 1E5FF 1E95E-1E95F";

static PUNCTUATION: LazyLock<CharSet> = LazyLock::new(|| {
    CharSet::from_ranges(REGEX_PUNCTUATION.split_whitespace().map(|r| {
        let hex = |s: &str| u32::from_str_radix(s, 16).expect("bad hex in the punctuation table");
        match r.split_once('-') {
            Some((a, b)) => (hex(a), hex(b)),
            None => (hex(r), hex(r)),
        }
    }))
});

/// Whether the `regex` module's `\p{P}` matches `c`.
#[inline]
pub fn is_regex_punctuation(c: char) -> bool {
    PUNCTUATION.contains(c)
}

/// How a text is cut into shingles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tokenization {
    /// Tokens split on the ASCII space, w tokens joined by a space.
    Space,
    /// Pieces split on `\p{P}` (empty pieces kept), w pieces joined by a space.
    Punctuation,
    /// Runs of w code points.
    Character,
    /// SentencePiece pieces (`tokenizer_model`), w pieces concatenated without a separator.
    SentencePiece,
}

impl Tokenization {
    /// From Data-Juicer's name; `sentencepiece` (needs a model) and unknown names are `None`.
    pub fn from_name(name: &str) -> Option<Tokenization> {
        match name {
            "space" => Some(Tokenization::Space),
            "punctuation" => Some(Tokenization::Punctuation),
            "character" => Some(Tokenization::Character),
            _ => None,
        }
    }
}

/// What a [`MinHasher`] is built from; [`Default`] is Data-Juicer's defaults with the band
/// parameters left to [`optimal_param`].
#[derive(Debug, Clone, PartialEq)]
pub struct MinHashConfig {
    pub tokenization: Tokenization,
    pub window_size: usize,
    pub lowercase: bool,
    /// A Python `regex` pattern whose matches are deleted before shingling (`None` or `""`: none).
    pub ignore_pattern: Option<String>,
    pub num_permutations: usize,
    pub jaccard_threshold: f64,
    pub num_bands: Option<usize>,
    pub num_rows_per_band: Option<usize>,
}

impl Default for MinHashConfig {
    fn default() -> Self {
        MinHashConfig {
            tokenization: Tokenization::Space,
            window_size: 5,
            lowercase: true,
            ignore_pattern: None,
            num_permutations: 256,
            jaccard_threshold: 0.7,
            num_bands: None,
            num_rows_per_band: None,
        }
    }
}

/// Text -> shingles: lower-casing, deleting the ignore pattern's matches, and cutting into
/// shingles (steps 1 and 2 of the module docs). Shared by `document_minhash_deduplicator` and
/// `document_simhash_deduplicator`, whose Data-Juicer code does the same up to the shingles
/// (the MinHash side then takes their set, the SimHash side their list).
#[derive(Debug)]
pub struct Shingler {
    tokenization: Tokenization,
    window_size: usize,
    lowercase: bool,
    ignore: Option<(PyRegex, Template)>,
    /// The model of [`Tokenization::SentencePiece`] (set by [`Shingler::with_pieces`]).
    pieces: Option<Arc<SentencePiece>>,
}

impl Shingler {
    /// Errors (as text) for a zero window and an ignore pattern that does not compile.
    pub fn new(
        tokenization: Tokenization,
        window_size: usize,
        lowercase: bool,
        ignore_pattern: Option<&str>,
    ) -> std::result::Result<Shingler, String> {
        if window_size == 0 {
            return Err("window_size must be a positive integer".into());
        }
        let ignore = match ignore_pattern {
            None | Some("") => None,
            // Data-Juicer compiles the pattern without flags, so `.` does not match a newline
            // (PyRegex adds DOTALL, which the scoped group turns off again).
            Some(p) => {
                let p = bracket_unicode_classes(p);
                let re = PyRegex::new(&format!("(?-s:{p})"))?;
                let empty = Template::parse("", 0, &HashMap::new())?;
                Some((re, empty))
            }
        };
        Ok(Shingler {
            tokenization,
            window_size,
            lowercase,
            ignore,
            pieces: None,
        })
    }

    /// Gives [`Tokenization::SentencePiece`] its model.
    pub fn with_pieces(mut self, model: Arc<SentencePiece>) -> Shingler {
        self.pieces = Some(model);
        self
    }

    /// The text that is shingled: optionally lower-cased, then without the ignore pattern's
    /// matches.
    pub fn normalize<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let text = if self.lowercase {
            py_lower(text)
        } else {
            Cow::Borrowed(text)
        };
        match (&self.ignore, text) {
            (None, t) => t,
            (Some((re, empty)), Cow::Borrowed(b)) => re.sub(b, empty),
            (Some((re, empty)), Cow::Owned(o)) => match re.sub(&o, empty) {
                Cow::Borrowed(_) => Cow::Owned(o),
                Cow::Owned(s) => Cow::Owned(s),
            },
        }
    }

    /// Calls `f` with the bytes of every shingle of the (normalized) text, in text order,
    /// duplicates included.
    pub fn for_each_shingle(&self, text: &str, mut f: impl FnMut(&[u8])) {
        let text = self.normalize(text);
        let w = self.window_size;
        match self.tokenization {
            Tokenization::Character => {
                let ends: Vec<usize> = text
                    .char_indices()
                    .map(|(i, _)| i)
                    .chain(std::iter::once(text.len()))
                    .collect();
                let n = ends.len() - 1;
                if n >= w {
                    for i in 0..=n - w {
                        f(&text.as_bytes()[ends[i]..ends[i + w]]);
                    }
                }
            }
            Tokenization::Space => {
                let tokens: Vec<&str> = split_on_whitespace(&text, false, false).collect();
                joined_windows(&tokens, w, f, b" ");
            }
            Tokenization::Punctuation => {
                let tokens: Vec<&str> = text.split(is_regex_punctuation).collect();
                joined_windows(&tokens, w, f, b" ");
            }
            Tokenization::SentencePiece => {
                let model = self
                    .pieces
                    .as_ref()
                    .expect("SentencePiece shingles are only built with their model");
                let pieces = model.encode_as_pieces(&text);
                let tokens: Vec<&str> = pieces.iter().map(String::as_str).collect();
                joined_windows(&tokens, w, f, b"");
            }
        }
    }
}

/// Text -> MinHash signature -> LSH bands, as `DocumentMinhashDeduplicator.compute_hash` does.
#[derive(Debug)]
pub struct MinHasher {
    shingler: Shingler,
    perm_a: Vec<u64>,
    perm_b: Vec<u64>,
    num_bands: usize,
    rows_per_band: usize,
}

impl MinHasher {
    /// Gives [`Tokenization::SentencePiece`] its model.
    pub fn with_pieces(mut self, model: Arc<SentencePiece>) -> MinHasher {
        self.shingler = self.shingler.with_pieces(model);
        self
    }

    /// Builds the hasher. Errors (as text) for a zero window or permutation count, zero band
    /// parameters, and an ignore pattern that does not compile.
    pub fn new(cfg: &MinHashConfig) -> std::result::Result<MinHasher, String> {
        if cfg.window_size == 0 {
            return Err("window_size must be a positive integer".into());
        }
        if cfg.num_permutations == 0 {
            return Err("num_permutations must be a positive integer".into());
        }
        if cfg.num_bands == Some(0) || cfg.num_rows_per_band == Some(0) {
            return Err("num_bands and num_rows_per_band must be positive integers".into());
        }
        let shingler = Shingler::new(
            cfg.tokenization,
            cfg.window_size,
            cfg.lowercase,
            cfg.ignore_pattern.as_deref(),
        )?;
        let (num_bands, rows_per_band) = match (cfg.num_bands, cfg.num_rows_per_band) {
            (Some(b), Some(r)) => (b, r),
            _ => optimal_param(cfg.jaccard_threshold, cfg.num_permutations),
        };
        let (perm_a, perm_b) = permutations(cfg.num_permutations);
        Ok(MinHasher {
            shingler,
            perm_a,
            perm_b,
            num_bands,
            rows_per_band,
        })
    }

    pub fn num_bands(&self) -> usize {
        self.num_bands
    }

    pub fn rows_per_band(&self) -> usize {
        self.rows_per_band
    }

    pub fn num_permutations(&self) -> usize {
        self.perm_a.len()
    }

    /// The permutations `(perm_a, perm_b)`.
    pub fn permutations(&self) -> (&[u64], &[u64]) {
        (&self.perm_a, &self.perm_b)
    }

    /// The text that is shingled ([`Shingler::normalize`]).
    pub fn normalize<'a>(&self, text: &'a str) -> Cow<'a, str> {
        self.shingler.normalize(text)
    }

    /// Every shingle of the text, in text order, duplicates included
    /// ([`Shingler::for_each_shingle`]).
    pub fn for_each_shingle(&self, text: &str, f: impl FnMut(&[u8])) {
        self.shingler.for_each_shingle(text, f)
    }

    /// The distinct [`sha1_hash32`] values of the text's shingles, sorted.
    pub fn shingle_hashes(&self, text: &str) -> Vec<u32> {
        let mut hashes = Vec::new();
        self.for_each_shingle(text, |s| hashes.push(sha1_hash32(s)));
        hashes.sort_unstable();
        hashes.dedup();
        hashes
    }

    /// The MinHash signature: for every permutation, the minimum permuted value over the shingle
    /// hashes; [`MAX_HASH`] everywhere for a text without shingles.
    pub fn signature(&self, text: &str) -> Vec<u32> {
        let mut sig = vec![MAX_HASH; self.perm_a.len()];
        for h in self.shingle_hashes(text) {
            for ((s, &a), &b) in sig.iter_mut().zip(&self.perm_a).zip(&self.perm_b) {
                let v = permute(h, a, b);
                if v < *s {
                    *s = v;
                }
            }
        }
        sig
    }

    /// The signature values of band `band` (`values[band*r..(band+1)*r]`, cut at the end of the
    /// signature as Python slicing does).
    pub fn band_values<'s>(&self, sig: &'s [u32], band: usize) -> &'s [u32] {
        let start = band.saturating_mul(self.rows_per_band).min(sig.len());
        let end = (band.saturating_add(1))
            .saturating_mul(self.rows_per_band)
            .min(sig.len());
        &sig[start..end]
    }

    /// Appends Data-Juicer's bytes of band `band` to `out`: each value as 8 big-endian bytes.
    pub fn write_dj_band(&self, sig: &[u32], band: usize, out: &mut Vec<u8>) {
        for &v in self.band_values(sig, band) {
            out.extend_from_slice(&(v as u64).to_be_bytes());
        }
    }

    /// Data-Juicer's `__dj__minhash[band]` for a signature.
    pub fn dj_band(&self, sig: &[u32], band: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.rows_per_band.min(sig.len()) * 8);
        self.write_dj_band(sig, band, &mut out);
        out
    }

    /// Data-Juicer's whole `__dj__minhash` value for a text.
    pub fn dj_minhash(&self, text: &str) -> Vec<Vec<u8>> {
        let sig = self.signature(text);
        (0..self.num_bands).map(|i| self.dj_band(&sig, i)).collect()
    }

    /// Appends band key `band`: the band index as a big-endian u32, then [`Self::write_dj_band`].
    pub fn write_band_key(&self, sig: &[u32], band: usize, out: &mut Vec<u8>) {
        out.extend_from_slice(&(band as u32).to_be_bytes());
        self.write_dj_band(sig, band, out);
    }

    /// The band keys of a text (what the UDF returns for it).
    pub fn band_keys(&self, text: &str) -> Vec<Vec<u8>> {
        let sig = self.signature(text);
        (0..self.num_bands)
            .map(|i| {
                let mut k = Vec::new();
                self.write_band_key(&sig, i, &mut k);
                k
            })
            .collect()
    }
}

/// Wraps every `\p{..}` / `\P{..}` outside a character class in brackets (`[\p{P}]`), which
/// means the same. [`PyRegex::new`]'s translation would otherwise read the braces as a literal
/// `{` (not a quantifier) and escape it, breaking the class.
fn bracket_unicode_classes(p: &str) -> Cow<'_, str> {
    if !p.contains("\\p{") && !p.contains("\\P{") {
        return Cow::Borrowed(p);
    }
    let chars: Vec<char> = p.chars().collect();
    let mut out = String::with_capacity(p.len() + 8);
    let (mut i, mut in_class, mut class_first) = (0, false, false);
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' {
            let next = chars.get(i + 1).copied();
            if !in_class
                && matches!(next, Some('p' | 'P'))
                && chars.get(i + 2) == Some(&'{')
                && let Some(close) = chars[i + 2..].iter().position(|&c| c == '}')
            {
                out.push('[');
                out.extend(&chars[i..i + 3 + close]);
                out.push(']');
                i += 3 + close;
                continue;
            }
            out.push(c);
            out.extend(next);
            i += 2;
            class_first = false;
            continue;
        }
        if in_class {
            if c == ']' && !class_first {
                in_class = false;
            }
            class_first = false;
        } else if c == '[' {
            in_class = true;
            class_first = true;
            if chars.get(i + 1) == Some(&'^') {
                out.push_str("[^");
                i += 2;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    Cow::Owned(out)
}

/// Calls `f` with `tokens[i..i+w].join(" ")` for every window (none when fewer than w tokens).
fn joined_windows(tokens: &[&str], w: usize, mut f: impl FnMut(&[u8]), sep: &[u8]) {
    let mut buf = Vec::new();
    for win in tokens.windows(w) {
        buf.clear();
        for (j, t) in win.iter().enumerate() {
            if j > 0 {
                buf.extend_from_slice(sep);
            }
            buf.extend_from_slice(t.as_bytes());
        }
        f(&buf);
    }
}

// ---------------------------------------------------------------------------------------------
// Band parameters: datasketch's optimal_param over scipy.integrate.quad
// ---------------------------------------------------------------------------------------------

/// Probability mass of false positives for `b` bands of `r` rows below threshold `th`:
/// `quad(1 - (1 - s^r)^b, 0, th)` (datasketch, as Data-Juicer copies it).
pub fn false_positive_probability(th: f64, band: usize, rows: usize) -> f64 {
    let (r, b) = (rows as f64, band as f64);
    quad(|s| 1.0 - (1.0 - s.powf(r)).powf(b), 0.0, th).0
}

/// Probability mass of false negatives above threshold `th`:
/// `quad(1 - (1 - (1 - s^r)^b), th, 1)`.
pub fn false_negative_probability(th: f64, band: usize, rows: usize) -> f64 {
    let (r, b) = (rows as f64, band as f64);
    quad(|s| 1.0 - (1.0 - (1.0 - s.powf(r)).powf(b)), th, 1.0).0
}

/// Data-Juicer's `optimal_param(threshold, num_perm)`: the `(b, r)` with `b` in `1..=num_perm`,
/// `r` in `1..=num_perm / b` minimising `0.5*FP + 0.5*FN`; the first minimum (smallest b, then r)
/// wins. About `num_perm * ln(num_perm)` pairs, each two integrals.
pub fn optimal_param(threshold: f64, num_perm: usize) -> (usize, usize) {
    let mut min_error = f64::INFINITY;
    let mut opt = (0, 0);
    for b in 1..=num_perm {
        for r in 1..=num_perm / b {
            let fp = false_positive_probability(threshold, b, r);
            let fn_ = false_negative_probability(threshold, b, r);
            let error = fp * 0.5 + fn_ * 0.5;
            if error < min_error {
                min_error = error;
                opt = (b, r);
            }
        }
    }
    opt
}

// ---------------------------------------------------------------------------------------------
// The UDF and the op
// ---------------------------------------------------------------------------------------------

/// The band-key list type: `List<Binary>` with a nullable `item` field.
pub fn band_keys_type() -> DataType {
    DataType::List(Arc::new(Field::new_list_field(DataType::Binary, true)))
}

/// `text -> List<Binary>` of band keys (see the module docs); null text -> null.
#[derive(Debug)]
pub struct MinHashUdf {
    id: UdfIdentity,
    hasher: Arc<MinHasher>,
    signature: Signature,
}

impl MinHashUdf {
    pub fn new_udf(id: UdfIdentity, hasher: Arc<MinHasher>) -> Arc<ScalarUDF> {
        Arc::new(ScalarUDF::new_from_impl(MinHashUdf {
            id,
            hasher,
            signature: Signature::string(1, Volatility::Immutable),
        }))
    }

    pub fn identity(&self) -> &UdfIdentity {
        &self.id
    }

    pub fn hasher(&self) -> &MinHasher {
        &self.hasher
    }
}

impl PartialEq for MinHashUdf {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}
impl Eq for MinHashUdf {}
impl Hash for MinHashUdf {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.id.hash(state)
    }
}

impl ScalarUDFImpl for MinHashUdf {
    fn name(&self) -> &str {
        &self.id.name
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(band_keys_type())
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let array = match args.args.as_slice() {
            [arg] => arg.to_array(args.number_rows)?,
            _ => return exec_err!("expected exactly one argument, got {}", args.args.len()),
        };
        Ok(ColumnarValue::Array(band_keys_array(&array, &self.hasher)?))
    }
}

/// The band keys of every row of a Utf8 / LargeUtf8 / Utf8View array.
pub fn band_keys_array(array: &ArrayRef, hasher: &MinHasher) -> Result<ArrayRef> {
    let values: Box<dyn Iterator<Item = Option<&str>>> = match array.data_type() {
        DataType::Utf8 => Box::new(array.as_string::<i32>().iter()),
        DataType::LargeUtf8 => Box::new(array.as_string::<i64>().iter()),
        DataType::Utf8View => Box::new(array.as_string_view().iter()),
        other => return exec_err!("expected a string column, got {other}"),
    };
    let bands = hasher.num_bands();
    let key_len = 4 + 8 * hasher.rows_per_band().min(hasher.num_permutations());
    let rows = array.len() - array.null_count();
    let mut builder = ListBuilder::with_capacity(
        BinaryBuilder::with_capacity(rows * bands, rows * bands * key_len),
        array.len(),
    );
    let mut key = Vec::with_capacity(key_len);
    for v in values {
        match v {
            None => builder.append_null(),
            Some(text) => {
                let sig = hasher.signature(text);
                for band in 0..bands {
                    key.clear();
                    hasher.write_band_key(&sig, band, &mut key);
                    builder.values().append_value(&key);
                }
                builder.append(true);
            }
        }
    }
    Ok(Arc::new(builder.finish()))
}

const TOKENIZATIONS: &[&str] = &["space", "punctuation", "character", "sentencepiece"];

pub fn document_minhash_deduplicator_spec() -> OpSpec {
    OpSpec {
        name: "document_minhash_deduplicator",
        kind: OpKind::Deduplicator,
        params: || {
            use ParamType::*;
            let mut params = shingle_param_specs(
                TOKENIZATIONS,
                "shingle units: space, punctuation, character or sentencepiece (pieces of tokenizer_model)",
                5,
            );
            params.extend([
                ParamSpec::new("num_permutations", Int, json!(256), "MinHash permutations"),
                ParamSpec::new(
                    "jaccard_threshold",
                    Float,
                    json!(0.7),
                    "Jaccard similarity from which samples count as near duplicates (in [0, 1])",
                ),
                ParamSpec::new(
                    "num_bands",
                    Int,
                    Value::Null,
                    "LSH bands; None (or no num_rows_per_band) = optimal for the threshold",
                ),
                ParamSpec::new(
                    "num_rows_per_band",
                    Int,
                    Value::Null,
                    "rows per LSH band; None (or no num_bands) = optimal for the threshold",
                ),
                ParamSpec::new(
                    "tokenizer_model",
                    Str,
                    Value::Null,
                    "SentencePiece model file (a path or a file name in the model directories) for tokenization sentencepiece",
                ),
            ]);
            params
        },
        build: build_document_minhash_deduplicator,
        doc: "Near-duplicate dedup with MinHash LSH: samples sharing a band with an earlier sample \
              (transitively) are removed; the first sample of each cluster is kept.",
    }
}

/// The shingling parameters both near-duplicate deduplicators take, in Data-Juicer's order:
/// `tokenization` (one of `tokenizations`), `window_size`, `lowercase`, `ignore_pattern`.
pub(crate) fn shingle_param_specs(
    tokenizations: &'static [&'static str],
    tokenization_doc: &'static str,
    window_size: i64,
) -> Vec<ParamSpec> {
    use ParamType::*;
    vec![
        ParamSpec::new(
            "tokenization",
            Choice(tokenizations),
            json!("space"),
            tokenization_doc,
        ),
        ParamSpec::new("window_size", Int, json!(window_size), "tokens per shingle"),
        ParamSpec::new("lowercase", Bool, json!(true), "lower-case the text first"),
        ParamSpec::new(
            "ignore_pattern",
            Str,
            Value::Null,
            "regular expression (Python syntax) whose matches are removed before shingling",
        ),
    ]
}

/// `tokenization`, `window_size` and `lowercase` of [`shingle_param_specs`], validated.
pub(crate) fn shingle_params(
    p: &Params,
) -> std::result::Result<(Tokenization, usize, bool), ParamError> {
    let tokenization = match p.str("tokenization") {
        Some("sentencepiece") => Tokenization::SentencePiece,
        Some(name) => Tokenization::from_name(name).ok_or_else(|| {
            p.invalid(
                "tokenization",
                format!("unimplemented tokenization method [{name}]"),
            )
        })?,
        None => return Err(p.invalid("tokenization", "must be a string, got null")),
    };
    let window_size = positive(p, "window_size", false)?.unwrap_or(1);
    let Some(lowercase) = p.raw("lowercase").as_bool() else {
        return Err(p.invalid("lowercase", "must be a boolean, got null"));
    };
    Ok((tokenization, window_size, lowercase))
}

/// A positive integer parameter (`None` when null and `optional`).
pub(crate) fn positive(
    p: &Params,
    name: &str,
    optional: bool,
) -> std::result::Result<Option<usize>, ParamError> {
    match p.raw(name) {
        Value::Null if optional => Ok(None),
        Value::Null => Err(p.invalid(name, "must be a positive integer, got null")),
        v => match v.as_u64() {
            Some(n) if n >= 1 => Ok(Some(usize::try_from(n).unwrap_or(usize::MAX))),
            _ => Err(p.invalid(name, format!("must be a positive integer, got {v}"))),
        },
    }
}

/// The [`MinHashConfig`] of validated op parameters.
pub fn config_from_params(p: &Params) -> std::result::Result<MinHashConfig, ParamError> {
    let (tokenization, window_size, lowercase) = shingle_params(p)?;
    let num_permutations = positive(p, "num_permutations", false)?.unwrap_or(1);
    let num_bands = positive(p, "num_bands", true)?;
    let num_rows_per_band = positive(p, "num_rows_per_band", true)?;
    let jaccard_threshold = match p.float("jaccard_threshold") {
        Some(t) if (0.0..=1.0).contains(&t) => t,
        Some(t) => {
            return Err(p.invalid("jaccard_threshold", format!("must be in [0, 1], got {t}")));
        }
        None => return Err(p.invalid("jaccard_threshold", "must be a number, got null")),
    };
    Ok(MinHashConfig {
        tokenization,
        window_size,
        lowercase,
        ignore_pattern: p.str("ignore_pattern").map(String::from),
        num_permutations,
        jaccard_threshold,
        num_bands,
        num_rows_per_band,
    })
}

fn build_document_minhash_deduplicator(p: &Params) -> std::result::Result<Operator, ParamError> {
    let cfg = config_from_params(p)?;
    let mut hasher = MinHasher::new(&cfg)
        .map_err(|e| p.invalid("ignore_pattern", format!("invalid regular expression: {e}")))?;
    if cfg.tokenization == Tokenization::SentencePiece {
        // Data-Juicer's `prepare_sentencepiece_model(tokenizer_model)`: a path, or a file name in
        // the model directories.
        let Some(file) = p.str("tokenizer_model") else {
            return Err(p.invalid(
                "tokenizer_model",
                "To use 'sentencepiece' tokenization, 'tokenizer_model' is required.",
            ));
        };
        let (model, _) = crate::models::sentencepiece_file(file, crate::models::model_dir_of(p))
            .map_err(|e| p.model_error(e))?;
        hasher = hasher.with_pieces(model);
    }
    let id = UdfIdentity {
        name: p.op().to_string(),
        config: p.to_json().to_string(),
    };
    Ok(Operator::Deduplicator(DedupOp {
        hash_column: MINHASH_COLUMN,
        hash_udf: MinHashUdf::new_udf(id, Arc::new(hasher)),
        kind: DedupKind::MinHashBands,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mapper::test_support::{big_texts, build, invoke, udf};
    use arrow::array::{LargeStringArray, ListArray, StringArray, StringViewArray};
    use md5::Md5;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn md5_hex(bytes: &[u8]) -> String {
        hex(&Md5::digest(bytes))
    }

    /// MD5 of the values as big-endian u64 bytes (numpy's `hash_values.byteswap().tobytes()`).
    fn sig_md5(sig: &[u32]) -> String {
        let bytes: Vec<u8> = sig.iter().flat_map(|&v| (v as u64).to_be_bytes()).collect();
        md5_hex(&bytes)
    }

    /// Python's `float.hex()` text back to a float.
    fn from_py_hex(s: &str) -> f64 {
        let (neg, s) = match s.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, s),
        };
        let s = s.strip_prefix("0x").unwrap();
        let (mant, exp) = s.split_once('p').unwrap();
        let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
        let mut m = u64::from_str_radix(int, 16).unwrap() as f64;
        for (i, c) in frac.chars().enumerate() {
            m += c.to_digit(16).unwrap() as f64 * 16f64.powi(-(i as i32 + 1));
        }
        let v = m * 2f64.powi(exp.parse().unwrap());
        if neg { -v } else { v }
    }

    fn hasher(
        tok: &str,
        window_size: usize,
        lowercase: bool,
        ignore: Option<&str>,
        bands: (usize, usize),
    ) -> MinHasher {
        MinHasher::new(&MinHashConfig {
            tokenization: Tokenization::from_name(tok).unwrap(),
            window_size,
            lowercase,
            ignore_pattern: ignore.map(String::from),
            num_bands: Some(bands.0),
            num_rows_per_band: Some(bands.1),
            ..MinHashConfig::default()
        })
        .unwrap()
    }

    /// Every value as its own band, so the signature is checked whole.
    fn all_values(
        tok: &str,
        window_size: usize,
        lowercase: bool,
        ignore: Option<&str>,
    ) -> MinHasher {
        hasher(tok, window_size, lowercase, ignore, (256, 1))
    }

    /// The texts of the signature cases (the same strings as the Python generator).
    const TEXTS: [&str; 7] = [
        "The quick brown fox jumps over the lazy dog. The quick brown fox jumps again!",
        "Hello,  World!\tThis is a  TEST of the MinHash deduplicator;\nnew line here, ok?",
        "数据处理是一个很重要的步骤，数据清洗和去重都很常见。",
        "short text",
        "",
        "a b c d e",
        "İstanbul ΣΑΣ straße ﬁ — “quotes” … end, of: the; text!",
    ];

    /// (text index, tokenization, window_size, lowercase, ignore_pattern `\p{P}`, first four
    /// values, MD5 of all 256 values as big-endian u64 bytes), from Data-Juicer 1.6.1 run with
    /// 256 bands of 1 row (so its `__dj__minhash` holds every value).
    type SignatureCase = (usize, String, usize, bool, bool, [u32; 4], String);

    fn signature_cases() -> Vec<SignatureCase> {
        serde_json::from_str(include_str!("../../data/golden/minhash_signatures.json"))
            .expect("minhash_signatures.json")
    }

    /// All 256 values (hex u32s) under the defaults for text 1 and each tokenization.
    const FULL_SIGNATURES: &[(&str, &str)] = &[
        (
            "space",
            "144c38e5259067b33c409f3f0ad2fae41e6cac8022d933670d2d4ca70ae7bbb837894aee0f621b32347fc200\
             0a4680fe2fa9ca3a0d06bda61fe0bc1c22a8ad2203a35b240539258661f731d0292e942d0c5e64ba2b39750e\
             2ecf5ad003ad7526037b4d0a182a89d90b8701970cf6d91504b80a0312df14d705620a63017dd07102c20e7e\
             12e4f8e12011a6b80ba357b122d986ae3a600cab0b4556e3378ea667174148e440f44b7a0660e9062973c086\
             16b7899620fac7f20b70fc8922021a8b06d90c010104eba81b8dfb7100b50a34282bb0bc470cb1c752869455\
             0de0dfdd2392afd4293e41290b985e6d2b6b5386205ad8fa0cf966490efa314316c0755402b132334006395b\
             25a2bb2a0ad3f63202981d0f250ce087503f2da108b90c3b09219d58328a48224dd32a0224137f8b2e92f398\
             35a3c29e111692bf1fca00fb312762531cf12dea33e673fe27c01e8b0d04d7c73a2d5b8d3edb127e15a44de8\
             040680892347d3021a00a1ee003bdb6c165703571aaaf1c9076ade272ed6898e34c148d6167c891921831e07\
             12d406311e2662b81f8b50781217b65f0152b8ca161c7e631295c66e19b45a9b3d7cc8fd2035b227084a525e\
             08a4f6311f1d96ed15c3de9400291f4c1fef1a36346056b22a35f4054f2c92251dad40ec047e1aab298a7177\
             06217b5021e27a1a0aafac3e2c03a9044963adc81e8610e42c2ef1651382faf50d575ccb1ade1d053b838a67\
             73dcd924098bfca6134c23c72bf7322b066b17e1033771cd300f6ade1ea7da340f23f80105d6c52b28187fcf\
             0446132f06e285280c44b60a00aa5f801bf900ae741a97ea1051ee6719ac260106f8608025cd9fb54fcc1c16\
             53c2583a13787a7b0eaa4ca10839c56928f7fcc2106a7027519f9f80370b2784288e0cf3382279391d2bb069\
             0b4801ed065f496b37c1788f3e0672c61a9e506c0bb130fc0e2e2f4f3badae54004c4fa5540faf3d0155967e\
             1198511114389ef72ef7a8d40c65320c011b50645ccfb6d712bd5cb9154a56914a834acb0d7a4ee20c084994\
             109bbc1f31a0b39f0db819c9287b16932e9bbb116242223b142be0cc00a772ff4bce84170cc04c112251760b\
             14d3532b1a6245d40d31f99d3d878a563272a17f1fb9e5d9105c7e890df8ee5513a9c50325ebb5b504ebadaa\
             151edb850d055bda000d0c2b7731e2400b37710f31acd2e006273b7614553daa161dc1721359545a22337da3\
             03c68fb0021accbe09f6abd00a89a6961af6aaa2439010572e14cab713bc8f2816fba2d21cb09f64431fa121\
             041b20ee0f10ee8707dcb25f338519ba1a086e14053a98d2052a71c62b8ce5e327159ba318636e86027e4b50\
             111747c4076ad7384407b8b93b41788211825c6e059244223420205839a1dc2c02261bad03679bd809dbb6a2\
             03b322d512f371ce0f4ed82c",
        ),
        (
            "punctuation",
            "485213e0910e4d34c08e5abfb4b9b9b83ab35e259590902f454912e88cb26b970ff9d1e66182e93fa33245fc\
             05d5ea001f71a6ba8b1cdaa45e0209de869925d8146b3ae215e994317ca9ba33ac74d32c92dcf0852413cae2\
             fb96deb17e8d662f57b209f283a4313a48488a49a244ee131ff9a8341809c0da2717da0d72209492d105ec3d\
             3cb39ebb9bbca16e6023d1e484122459156e6411a38401da442fc005a5dad49636675e7a3882c821cb209154\
             045287202008d097005c640a960fed593b05960d2bc608c5060a06d1de95297c13df17996cbf07963f15c980\
             5b36e8e9d21f34e67c3729a37ae8d0921164ad8b13a87bb417fdf98662979ce61f6fc10125601cb5a314b768\
             94683a437854609386bb7a30ecb1e2b5918e0b5c01e6dc81199fa19de659cce4115aa4fb12872edc0b7ce09c\
             d89ce9e41cabefb95f1e21709a766d7c9bfc6dc11b67211c0ce0f740503414933260bdf3014855bc8b8de309\
             3fe656313d11c4b172e790977ce359a943dee79b3f40faa445dad34764039d0f9ee32e7c59c16fbd7b7554d5\
             0dbb237bc5d8249988c0cefb61251c689efafa027d57f87c04cdb220dfc54e1001515a46944412b7b127aae5\
             79e134b52cd28648164c72f6895878c28b07fa03a4f2e4ba2f4bb9a391968bbf1ba86e3318a042ac07690c9a\
             cb297ead59b2255405251f14a3db70c36696b199d8be403f5244ff79987b6de6056f02ac777a3b5559538992\
             5525839c53db211c3d2bed45d4b29fa33eb223760f194fb11fad805092f79307604b205b20a5e0a89cbb2c15\
             beb1abac01116bb891c625fb0838ee2827fb163a3cf4e038584d1bf7229cccdf9ae147370a753fc416b59c3c\
             16509ead0d42236c0ae5d2a529bd6f896e8083d72544e61b8a70f038691509386e96ddeb8fe13672412557f5\
             46b1b1266a919b4fc2ba2f1b33726cbc9e34281b6123bdb84e90f0ab1fe096e41a6c9f0e163d50ba0e2544dc\
             4a583fa8e60d1e4585e470112046bce2d857deb360b3be9f014599a2284659353e85ba1537713dbba09daa9f\
             326ea00e74353f250cbdaf5499446788a07d16395c9601619bbb09f80c58e9432c8beb9a1ab1622379cfdf3d\
             5a4102e6443f304012a27c5a1e0e542cd17fa6cd0fd83b52321dad5477aaff5065196eccb5a5489644109190\
             35311788b63c347a0b24819115e7ba15ac58536b759b92b002c8ade22041e52f7faea35fbe63a662659e3b98\
             378996db9142bd1003f9018c0b4c030023a6fca4477b4e586f0ebe782b8ceea91580d169b01104192663d84f\
             780bdb7685c74df07b91a4b5566e0c10bb2a8567dcc16be58a08d04f02913923299d291962418bdb54b03914\
             2c44f97106c842775fe0adab147237d82bbe708c4efa275c1da633d5b29436720fa994b130fe7ba44bdc4cc3\
             256ae818bc665e941d31c322",
        ),
        (
            "character",
            "07f287e100870c5f0107aec2036efd4103d9ab12036d5cc800f73167023e41bb0021407b004ed312055a18d7\
             02053383014bd95200f0dfdc009f4c0002a3eb7b007203c903281cfe0118ced20228d81300fcd94e0169e0df\
             02b83a5e0005bd9f000ebf590b7fc35c00e5baf804e0e00102d4362d003ed74e02d06bc1076e18ae05809bb5\
             06dab46b006b5adc03c51bd80047b74b0160b11b05e0656208545ccc01d74fdf012312c2066aaf4100760db0\
             00dc039a0500ad3e00b532480147daa005e81d8505c9791b079ece9400cd4d77058cd85a073b0e4f03434e9e\
             00fa7eb70146f79801cfce7a02dc78c30047303f03208ef7005ec100043f577d022f22ed012948b3019e67eb\
             01909d4e00d25e48011b225004b58a25069bf4ce01d307fa083b4f4903cd1f4f0074eaa40123146605376343\
             0072315e089b52c502ba32f7035bb67403e658e4017f6a8f03aa246d06a9727f01c7c3cb03156b0501cfe87a\
             03a41b8401ae8c47011a3e120efa2e9f003b638c03dbf8270245380e03a12d48012f5d3c01dc79ec03546915\
             05260664048265d702c17f5410418afb0917069a002003df02b6419007d56adb012c37f90bc90b9701032fc2\
             01ccf72f01df9b7e01523a4c0103a91201cf2a4603305f750772bfb600f03fa40334361607c30ab208c25edc\
             033e047d01eb01e90596f9cb02fc9e9303298423037580c201c4fdb3009e446a0212e9eb00c051360282b377\
             0d1b2297042d450b02f98a6000eae0dc0403286b00db58bf008c96b205e4609801292b8101008b1809c6541b\
             03f60dd50081b8e502aa950c01cf8cc006af3dd20098244301330d1600ee189e00835876023bd42203cd8e04\
             000e993e0312e5cc0092dd1f07435c3600e239c805a65c1a03cd77d90043e0f1015aebbe0454bd56022fe445\
             1226f80a00ea69a903de6e6a01eb1faf0200ddbc005082270689821e15d8e23d0083fa5f0042132700134b98\
             00073bee004325b80124efec0c2535ea001d16ac03542d4300092f650a10ba7909b7af0904083fc0013920ca\
             0267be2002531af6052b332605bcb8af01f2941600b0ebde044182d800bee8390049ffd3043f914d02ee518a\
             005264b90283b52d01b445af00b8368200a9c9640066943901d9460601eb5873081911d100d6fefb01fd8ff2\
             0c9af4be00fd1f0603036b57001e82e001c507a8066019e101a812a000460578029b473a0277139710f55ed0\
             037579d70104f7e903e9700202bc5bec0206ddbe02e05bad0335f69e0423332d0407e7040084302e030cf7f1\
             04d7d34b02b9901c06dbd0c007d2d5370088c0900615c589060c53c4050acd7e085495c801a5a115008151b7\
             0521574304c5037300fd16b60a48ac2402bef9f5062b6ab10304e45b003849170019e89004fbc3e800f8a8e0\
             0473120601c877d014b3b304",
        ),
    ];

    /// (threshold, num_perm, b, r): Data-Juicer's `optimal_param` with scipy 1.17.1. Thresholds
    /// are Python reprs, parsed here (exactly) rather than by the JSON reader.
    fn optimal_cases() -> Vec<(f64, usize, usize, usize)> {
        let rows: Vec<(String, usize, usize, usize)> = serde_json::from_str(include_str!(
            "../../data/golden/minhash_optimal_params.json"
        ))
        .expect("minhash_optimal_params.json");
        rows.into_iter()
            .map(|(t, n, b, r)| (t.parse().expect("a float"), n, b, r))
            .collect()
    }

    /// (threshold, b, r, FP, FP abserr, FN, FN abserr) from `scipy.integrate.quad`, as hex floats.
    /// Thresholds are Python reprs, parsed here (exactly) rather than by the JSON reader.
    type IntegralCase = (String, usize, usize, String, String, String, String);

    fn integral_cases() -> Vec<IntegralCase> {
        serde_json::from_str(include_str!("../../data/golden/minhash_integrals.json"))
            .expect("minhash_integrals.json")
    }

    #[test]
    fn permutations_match_data_juicer() {
        let (a, b) = permutations(256);
        assert_eq!(
            a[..5],
            [
                2297359619001564596,
                1973689801170867272,
                572192888165898362,
                1071453510346823115,
                1865242737500154728
            ]
        );
        assert_eq!(
            b[..5],
            [
                1396682528897996046,
                1819927849474927636,
                571748048327668950,
                2143071682933157236,
                1532418594269339778
            ]
        );
        assert_eq!((a[255], b[255]), (2092141031243851673, 797693216700694537));
        let sum = |v: &[u64]| v.iter().fold(0u64, |s, &x| s.wrapping_add(x));
        assert_eq!(sum(&a), 10096008028169204450);
        assert_eq!(sum(&b), 76026049901293307);
        let (a1k, b1k) = permutations(1000);
        assert_eq!(a1k[..256], a[..]);
        assert_eq!(b1k[..256], b[..]);
        assert_eq!(
            (a1k[999], b1k[999]),
            (1052473880581149290, 593746849069409621)
        );
    }

    #[test]
    fn token_hashes_match_data_juicer() {
        for (s, want) in [
            ("", 4003674586u32),
            ("a", 937752454),
            ("hello world", 896314922),
            ("数据处理", 369308349),
            ("the quick brown fox jumps", 1208285777),
            ("😀 x", 787239091),
        ] {
            assert_eq!(sha1_hash32(s.as_bytes()), want, "{s:?}");
        }
        // Reduction modulo 2^61 - 1 agrees with `%` everywhere, including the wrap-around.
        for x in [
            0,
            1,
            MERSENNE_PRIME - 1,
            MERSENNE_PRIME,
            MERSENNE_PRIME + 1,
            u64::MAX,
            1 << 63,
        ] {
            assert_eq!(mod_mersenne(x), x % MERSENNE_PRIME, "{x}");
        }
        let (h, a, b) = (u32::MAX, u64::MAX - 5, u64::MAX - 1);
        let want = (((h as u64).wrapping_mul(a).wrapping_add(b)) % MERSENNE_PRIME) & 0xffff_ffff;
        assert_eq!(permute(h, a, b) as u64, want);
    }

    #[test]
    fn signatures_match_data_juicer() {
        let mut hashers: HashMap<(&str, usize, bool, bool), MinHasher> = HashMap::new();
        let cases = signature_cases();
        for (t, tok, w, lower, ignore, first, md5) in &cases {
            let (t, tok, w, lower, ignore) = (*t, tok.as_str(), *w, *lower, *ignore);
            let h = hashers
                .entry((tok, w, lower, ignore))
                .or_insert_with(|| all_values(tok, w, lower, ignore.then_some(r"\p{P}")));
            let sig = h.signature(TEXTS[t]);
            let case = format!("text {t} {tok} w={w} lower={lower} ignore={ignore}");
            assert_eq!(sig.len(), 256, "{case}");
            assert_eq!(sig[..4], first[..], "{case}");
            assert_eq!(sig_md5(&sig), *md5, "{case}");
            // Data-Juicer's band bytes of one-row bands are the values' 8 big-endian bytes.
            assert_eq!(h.dj_band(&sig, 3), (sig[3] as u64).to_be_bytes(), "{case}");
        }
        for &(tok, want) in FULL_SIGNATURES {
            let sig = all_values(tok, 5, true, None).signature(TEXTS[1]);
            let got: String = sig.iter().map(|v| format!("{v:08x}")).collect();
            assert_eq!(got, want, "{tok}");
        }
    }

    #[test]
    fn long_texts_match_data_juicer() {
        // MD5 of the concatenated default `__dj__minhash` bands of big_texts() per tokenization.
        let want = [
            (
                "space",
                [
                    "dd76d7b03bbd3c623914e93ca193605e",
                    "039ac8a784ac0eaddd405714e01d2ff2",
                    "039ac8a784ac0eaddd405714e01d2ff2",
                ],
            ),
            (
                "punctuation",
                [
                    "46517f7224f374ff26f71e31a3f583fe",
                    "039ac8a784ac0eaddd405714e01d2ff2",
                    "039ac8a784ac0eaddd405714e01d2ff2",
                ],
            ),
            (
                "character",
                [
                    "9306d06a5650218b74ce40d33caf7911",
                    "3f8128b956a74520795b4dfd1373754d",
                    "064795f0d964f081a3b4fa675052ac49",
                ],
            ),
        ];
        let texts = big_texts();
        for (tok, want) in want {
            let h = hasher(tok, 5, true, None, (25, 10));
            for (text, want) in texts.iter().zip(want) {
                assert_eq!(md5_hex(&h.dj_minhash(text).concat()), want, "{tok}");
            }
        }
    }

    #[test]
    fn band_bytes_match_data_juicer() {
        let h = MinHasher::new(&MinHashConfig::default()).unwrap();
        assert_eq!((h.num_bands(), h.rows_per_band()), (25, 10));
        let bands = h.dj_minhash(TEXTS[0]);
        assert_eq!(bands.len(), 25);
        assert!(bands.iter().all(|b| b.len() == 80));
        assert_eq!(
            hex(&bands[0]),
            "000000000b24e302000000000385cf540000000003d3b1e30000000026103bd5000000001116c0c5\
             0000000033b29c5f00000000473aea27000000001cc5dc6c000000000756678d0000000005ccf36f"
        );
        assert_eq!(
            hex(&bands[24]),
            "0000000001cc8d260000000002bbc287000000001940ac5500000000048948bd0000000022d28be8\
             0000000067c22a4b000000000650ec3a00000000326505e2000000000935b12f000000000a6933fc"
        );
        assert_eq!(md5_hex(&bands.concat()), "12f5a1004cea121480c1905b43ac9505");
        // Keys: the band index as a big-endian u32, then the band bytes.
        let keys = h.band_keys(TEXTS[0]);
        for (i, (k, b)) in keys.iter().zip(&bands).enumerate() {
            assert_eq!(k[..4], (i as u32).to_be_bytes());
            assert_eq!(k[4..], b[..]);
        }

        // Bands reaching past the signature are cut (Python slicing), here 16 permutations.
        let cfg = |b, r| MinHashConfig {
            num_permutations: 16,
            num_bands: Some(b),
            num_rows_per_band: Some(r),
            ..MinHashConfig::default()
        };
        let h = MinHasher::new(&cfg(5, 4)).unwrap();
        let got: Vec<String> = h.dj_minhash(TEXTS[0]).iter().map(|b| hex(b)).collect();
        assert_eq!(
            got,
            [
                "000000000b24e302000000000385cf540000000003d3b1e30000000026103bd5",
                "000000001116c0c50000000033b29c5f00000000473aea27000000001cc5dc6c",
                "000000000756678d0000000005ccf36f0000000000eee0db00000000096ae228",
                "00000000084d569b00000000055fd6240000000007f00c180000000009d94e2d",
                "",
            ]
        );
        // ...so every text shares the key of the empty band 4, as all of Data-Juicer's rows do.
        assert_eq!(h.band_keys("anything at all")[4], [0, 0, 0, 4]);
        let h = MinHasher::new(&cfg(3, 7)).unwrap();
        let got: Vec<String> = h.dj_minhash(TEXTS[0]).iter().map(|b| hex(b)).collect();
        assert_eq!(
            got,
            [
                "000000000b24e302000000000385cf540000000003d3b1e30000000026103bd5000000001116c0c5\
                 0000000033b29c5f00000000473aea27",
                "000000001cc5dc6c000000000756678d0000000005ccf36f0000000000eee0db00000000096ae228\
                 00000000084d569b00000000055fd624",
                "0000000007f00c180000000009d94e2d",
            ]
        );
    }

    #[test]
    fn empty_shingle_sets_are_all_max_hash() {
        // Fewer tokens than the window: Data-Juicer 1.6.1 stores MAX_HASH for every permutation
        // (see the all-0xffffffff rows of minhash_signatures.json: "", "short text", one CJK "word").
        let h = MinHasher::new(&MinHashConfig::default()).unwrap();
        for text in ["", "   ", "short text", "a b c d", TEXTS[2]] {
            assert!(h.shingle_hashes(text).is_empty(), "{text:?}");
            assert!(h.signature(text).iter().all(|&v| v == MAX_HASH), "{text:?}");
            let bands = h.dj_minhash(text);
            assert_eq!(hex(&bands[0]), "00000000ffffffff".repeat(10));
        }
        let c = hasher("character", 5, true, None, (25, 10));
        assert!(c.shingle_hashes("abcd").is_empty());
        assert_eq!(c.shingle_hashes("abcde").len(), 1);
        // One window exactly.
        assert_eq!(h.shingle_hashes("a b c d e"), [sha1_hash32(b"a b c d e")]);
        let p = hasher("punctuation", 5, true, None, (25, 10));
        assert!(p.shingle_hashes("a,b,c,d").is_empty());
        assert_eq!(p.shingle_hashes("a,b,,d"), Vec::<u32>::new());
        assert_eq!(p.shingle_hashes(",b,,d,"), [sha1_hash32(b" b  d ")]);
    }

    #[test]
    fn shingles() {
        let collect = |h: &MinHasher, text: &str| {
            let mut out = Vec::new();
            h.for_each_shingle(text, |s| out.push(String::from_utf8(s.to_vec()).unwrap()));
            out
        };
        // Space: only ' ' separates; "\n" and "\t" stay inside tokens; runs of spaces collapse.
        let s = hasher("space", 2, false, None, (1, 1));
        assert_eq!(collect(&s, " a  b\tc\nd "), ["a b\tc\nd"]);
        assert_eq!(collect(&s, "x y x y"), ["x y", "y x", "x y"]);
        assert_eq!(s.shingle_hashes("x y x y").len(), 2);
        // Punctuation: split on each `\p{P}` character (the regex module's tables), empties kept.
        let p = hasher("punctuation", 2, false, None, (1, 1));
        assert_eq!(
            collect(&p, ",a,,b\u{2e60}c,"),
            [" a", "a ", " b", "b c", "c "]
        );
        assert!(is_regex_punctuation('\u{2e60}') && is_regex_punctuation('\u{10ed0}'));
        assert!(is_regex_punctuation('_') && is_regex_punctuation('。'));
        assert!(!is_regex_punctuation('$') && !is_regex_punctuation('+'));
        // Character: code points, not bytes.
        let c = hasher("character", 2, false, None, (1, 1));
        assert_eq!(collect(&c, "数据a😀"), ["数据", "据a", "a😀"]);
    }

    #[test]
    fn lowercase_and_ignore_pattern() {
        let lower = hasher("space", 2, true, None, (4, 2));
        let keep_case = hasher("space", 2, false, None, (4, 2));
        assert_eq!(lower.normalize("İstanbul ΣΑΣ"), "i\u{307}stanbul σας");
        assert_eq!(
            lower.signature("HELLO World foo"),
            lower.signature("hello world foo")
        );
        assert_ne!(
            keep_case.signature("HELLO World foo"),
            keep_case.signature("hello world foo")
        );
        assert!(matches!(keep_case.normalize("ABC"), Cow::Borrowed("ABC")));

        // The pattern is deleted after lower-casing, without DOTALL.
        let h = hasher("character", 1, true, Some("."), (1, 1));
        assert_eq!(h.normalize("A.b\nC"), "\n");
        let h = hasher("space", 2, true, Some("[0-9]+"), (4, 2));
        assert_eq!(h.signature("a1 b22 c3"), h.signature("a b c"));
        let h = hasher("space", 2, false, Some("(?i)x"), (4, 2));
        assert_eq!(h.normalize("aXbx c"), "ab c");
        let h = hasher("space", 2, true, Some(r"\p{P}"), (4, 2));
        assert_eq!(h.normalize("Hello, World! “Quote”…"), "hello world quote");
        // `\p{..}` outside a class survives the pattern translation; inside one it is left alone.
        assert_eq!(
            bracket_unicode_classes(r"a\p{P}+[\p{L}\]]\\p{x}"),
            r"a[\p{P}]+[\p{L}\]]\\p{x}"
        );
        assert_eq!(
            bracket_unicode_classes(r"[]\p{P}]\P{Han}"),
            r"[]\p{P}][\P{Han}]"
        );
        let h = hasher("space", 1, false, Some(r"\p{Han}|\P{L}"), (4, 2));
        assert_eq!(h.normalize("ab数 c-d"), "abcd");
        // An empty pattern is no pattern (Python's `if self.ignore_pattern:`).
        let h = hasher("space", 2, true, Some(""), (4, 2));
        assert_eq!(h.normalize("a.b"), "a.b");
        assert!(
            MinHasher::new(&MinHashConfig {
                ignore_pattern: Some("(".into()),
                num_bands: Some(1),
                num_rows_per_band: Some(1),
                ..MinHashConfig::default()
            })
            .is_err()
        );
    }

    #[test]
    fn integrals_match_scipy_bit_for_bit() {
        for (th, b, r, fp, fpe, fn_, fne) in integral_cases() {
            let th: f64 = th.parse().expect("a float");
            let (fp, fpe, fn_, fne) = (fp.as_str(), fpe.as_str(), fn_.as_str(), fne.as_str());
            let (rf, bf) = (r as f64, b as f64);
            let got_fp = quad(|s| 1.0 - (1.0 - s.powf(rf)).powf(bf), 0.0, th);
            let got_fn = quad(|s| 1.0 - (1.0 - (1.0 - s.powf(rf)).powf(bf)), th, 1.0);
            let case = format!("t={th} b={b} r={r}");
            assert_eq!(got_fp.0.to_bits(), from_py_hex(fp).to_bits(), "FP {case}");
            assert_eq!(
                got_fp.1.to_bits(),
                from_py_hex(fpe).to_bits(),
                "FP err {case}"
            );
            assert_eq!(got_fn.0.to_bits(), from_py_hex(fn_).to_bits(), "FN {case}");
            assert_eq!(
                got_fn.1.to_bits(),
                from_py_hex(fne).to_bits(),
                "FN err {case}"
            );
            assert_eq!(false_positive_probability(th, b, r), got_fp.0);
            assert_eq!(false_negative_probability(th, b, r), got_fn.0);
        }
        // A smooth integrand that needs subdivision and extrapolation: scipy gives 2/3 +- 1e-14.
        let (v, e) = quad(f64::sqrt, 0.0, 1.0);
        assert!((v - 2.0 / 3.0).abs() < 1e-12 && e < 1e-8, "{v} {e}");
    }

    #[test]
    fn optimal_params_match_data_juicer() {
        assert_eq!(optimal_param(0.7, 256), (25, 10));
        for (th, n, b, r) in optimal_cases() {
            assert_eq!(
                optimal_param(th, n),
                (b, r),
                "threshold {th}, {n} permutations"
            );
        }
    }

    #[test]
    fn udf_over_arrow_arrays() {
        let op = build("document_minhash_deduplicator", json!({})).unwrap();
        let Operator::Deduplicator(d) = &op else {
            panic!()
        };
        assert_eq!(d.hash_column, "__dj__minhash");
        assert_eq!(d.kind, DedupKind::MinHashBands);
        let h = MinHasher::new(&MinHashConfig::default()).unwrap();
        let texts = [
            Some(TEXTS[0]),
            None,
            Some(TEXTS[1]),
            Some(""),
            Some(TEXTS[0]),
        ];
        let inputs: [ArrayRef; 3] = [
            Arc::new(StringArray::from(texts.to_vec())),
            Arc::new(LargeStringArray::from(texts.to_vec())),
            Arc::new(StringViewArray::from(texts.to_vec())),
        ];
        for input in inputs {
            let out = invoke(udf(&op), input);
            assert_eq!(out.data_type(), &band_keys_type());
            let DataType::List(f) = out.data_type() else {
                panic!()
            };
            assert_eq!((f.name().as_str(), f.is_nullable()), ("item", true));
            let list = out.as_any().downcast_ref::<ListArray>().unwrap();
            assert_eq!(list.len(), 5);
            for (i, text) in texts.iter().enumerate() {
                match text {
                    None => assert!(list.is_null(i)),
                    Some(t) => {
                        let row = list.value(i);
                        let row = row.as_binary::<i32>();
                        let got: Vec<&[u8]> = row.iter().map(|v| v.unwrap()).collect();
                        let want = h.band_keys(t);
                        assert_eq!(got.len(), 25);
                        assert!(got.iter().all(|k| k.len() == 84));
                        assert_eq!(got, want.iter().map(Vec::as_slice).collect::<Vec<_>>());
                    }
                }
            }
        }
        // UDF identity: name + canonical parameters.
        let again = build("document_minhash_deduplicator", json!({"window_size": 5})).unwrap();
        let other = build("document_minhash_deduplicator", json!({"window_size": 4})).unwrap();
        assert_eq!(udf(&op), udf(&again));
        assert_ne!(udf(&op), udf(&other));
        assert_eq!(udf(&op).name(), "document_minhash_deduplicator");
    }

    #[test]
    fn params() {
        let err = |params: Value| {
            build("document_minhash_deduplicator", params)
                .unwrap_err()
                .to_string()
        };
        assert!(
            err(json!({"tokenization": "sentencepiece", "tokenizer_model": "no-such.model"}))
                .starts_with(
                    "operator document_minhash_deduplicator: model file no-such.model not found"
                )
        );
        assert_eq!(
            err(json!({"tokenization": "sentencepiece"})),
            "parameter `tokenizer_model` of document_minhash_deduplicator: To use \
             'sentencepiece' tokenization, 'tokenizer_model' is required."
        );
        assert!(
            err(json!({"tokenization": "words"})).contains("must be one of space, punctuation")
        );
        assert!(err(json!({"jaccard_threshold": 1.5})).contains("must be in [0, 1], got 1.5"));
        assert!(err(json!({"jaccard_threshold": -0.1})).contains("must be in [0, 1]"));
        assert!(err(json!({"window_size": 0})).contains("must be a positive integer, got 0"));
        assert!(err(json!({"num_permutations": -3})).contains("must be a positive integer"));
        assert!(err(json!({"num_bands": 0, "num_rows_per_band": 2})).contains("num_bands"));
        assert!(err(json!({"ignore_pattern": "(unclosed"})).contains("invalid regular expression"));
        assert!(err(json!({"window": 3})).contains("did you mean window_size"));
        // Integers are accepted for the threshold, as Python accepts them.
        let ok = |params: Value| build("document_minhash_deduplicator", params).is_ok();
        assert!(ok(json!({"jaccard_threshold": 1})));
        assert!(ok(json!({"jaccard_threshold": 0, "num_permutations": 8})));
        assert!(ok(json!({"ignore_pattern": null, "num_bands": null})));
        // Only one band parameter given: both come from optimal_param, as in Data-Juicer.
        let p = |v: Value| {
            let spec = crate::registry::lookup("document_minhash_deduplicator").unwrap();
            spec.instantiate(v.as_object().unwrap()).unwrap().0
        };
        let cfg = config_from_params(&p(json!({"num_bands": 3}))).unwrap();
        let h = MinHasher::new(&cfg).unwrap();
        assert_eq!((h.num_bands(), h.rows_per_band()), (25, 10));
        let cfg = config_from_params(&p(json!({"num_bands": 3, "num_rows_per_band": 7}))).unwrap();
        let h = MinHasher::new(&cfg).unwrap();
        assert_eq!((h.num_bands(), h.rows_per_band()), (3, 7));
    }

    /// Data-Juicer's clustering over band keys: rows sharing a key are united to the smallest
    /// index of the bucket; row i is kept iff it is its own root.
    fn kept_rows(keys: &ListArray) -> Vec<usize> {
        fn find(parent: &mut [usize], x: usize) -> usize {
            let mut r = x;
            while parent[r] != r {
                r = parent[r];
            }
            parent[x] = r;
            r
        }
        let n = keys.len();
        let mut parent: Vec<usize> = (0..n).collect();
        let mut first: HashMap<Vec<u8>, usize> = HashMap::new();
        for i in 0..n {
            let row = keys.value(i);
            for k in row.as_binary::<i32>().iter() {
                let k = k.unwrap().to_vec();
                let j = *first.entry(k).or_insert(i);
                let (pi, pj) = (find(&mut parent, i), find(&mut parent, j));
                let m = pi.min(pj);
                parent[pi] = m;
                parent[pj] = m;
            }
        }
        (0..n).filter(|&i| find(&mut parent, i) == i).collect()
    }

    #[test]
    fn keeps_what_data_juicer_keeps_on_the_golden_corpus() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let expected: Value = serde_json::from_str(
            &std::fs::read_to_string(root.join("data/minhash_expected_keep.json")).unwrap(),
        )
        .unwrap();
        let corpus = std::fs::read_to_string(root.join("../tests/golden/corpus.jsonl")).unwrap();
        let texts: Vec<Option<String>> = corpus
            .lines()
            .map(|l| {
                let row: Value = serde_json::from_str(l).unwrap();
                row["text"].as_str().map(String::from)
            })
            .collect();
        assert_eq!(texts.len(), expected["rows"].as_u64().unwrap() as usize);
        let input: ArrayRef = Arc::new(StringArray::from(texts));
        let cases = expected["cases"].as_array().unwrap();
        assert_eq!(cases.len(), 5);
        for case in cases {
            let op = build("document_minhash_deduplicator", case["params"].clone()).unwrap();
            let out = invoke(udf(&op), input.clone());
            let got = kept_rows(out.as_any().downcast_ref::<ListArray>().unwrap());
            let want: Vec<usize> = case["keep"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap() as usize)
                .collect();
            assert_eq!(got, want, "{}", case["name"]);
        }
    }
}
