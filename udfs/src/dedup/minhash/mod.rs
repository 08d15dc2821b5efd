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
//! The UDF (a [`BandKeys`] body) returns, per row, a `List<Binary>` (field `item`, nullable) of the
//! `num_bands` **band keys**: band key i = `(i as u32).to_be_bytes()` followed by Data-Juicer's band
//! i bytes. Data-Juicer keeps one hash table per band position, so two rows are candidates only when
//! they agree on the same band *at the same position*; the index prefix makes equal keys mean
//! exactly that, so the clustering node can put all keys of all bands in one table. A null text
//! gives a null list. Rows sharing a key are connected; of each connected component the row with
//! the smallest input index is kept (no Jaccard verification), as Data-Juicer does.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use arrow::array::{Array, ArrayRef, AsArray, BinaryBuilder, ListBuilder};
use arrow::datatypes::{DataType, Field};
use datafusion_common::{Result, exec_err};

use serde_json::{Value, json};
use sha1::{Digest, Sha1};

mod permute;
mod sha1x16;

#[cfg(test)]
pub(crate) use permute::permute;
use permute::{MERSENNE_PRIME, Permutations};
use sha1x16::Sha1x16;

use crate::columns::MINHASH_COLUMN;
use crate::models::SentencePiece;
use crate::operator::{DedupKind, DedupOp, Operator};
use crate::params::{ParamError, ParamSpec, ParamType, Params};
use crate::py::numpy_legacy::{Mt19937, randint_u64};
use crate::py::regex::{PyRegex, Template};
use crate::py::scipy_quad::quad;
use crate::spec::{ModelUse, OpKind, OpSpec};
use crate::text::{CharSet, char_boundaries, py_lower, whitespace_spans};
use crate::udf::{OpUdf, UdfBody, UdfIdentity, single_array, split_if_spare, text_signature};

/// Seed of `numpy.random.RandomState` for the permutations.
pub(crate) const PERMUTATION_SEED: u32 = 42;

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
pub(crate) fn sha1_hash32(data: &[u8]) -> u32 {
    // Most shingles fit one padded block: compress it directly, without the hasher's buffering.
    if data.len() <= 55 {
        let mut block = [0u8; 64];
        block[..data.len()].copy_from_slice(data);
        block[data.len()] = 0x80;
        block[56..].copy_from_slice(&(data.len() as u64 * 8).to_be_bytes());
        let mut state = [
            0x6745_2301,
            0xEFCD_AB89,
            0x98BA_DCFE,
            0x1032_5476,
            0xC3D2_E1F0,
        ];
        sha1::block_api::compress(&mut state, &[block]);
        // The digest's first 4 bytes are state[0] big-endian; read little-endian.
        return state[0].swap_bytes();
    }
    let d = Sha1::digest(data);
    u32::from_le_bytes([d[0], d[1], d[2], d[3]])
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
pub(crate) fn is_regex_punctuation(c: char) -> bool {
    PUNCTUATION.contains(c)
}

/// How a text is cut into shingles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Tokenization {
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
    pub(crate) fn from_name(name: &str) -> Option<Tokenization> {
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
pub(crate) struct MinHashConfig {
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
pub(crate) struct Shingler {
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
    pub(crate) fn with_pieces(mut self, model: Arc<SentencePiece>) -> Shingler {
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
    pub(crate) fn for_each_shingle(&self, text: &str, mut f: impl FnMut(&[u8])) {
        let text = self.normalize(text);
        let w = self.window_size;
        match self.tokenization {
            Tokenization::Character => {
                let ends = char_boundaries(&text);
                let n = ends.len() - 1;
                if n >= w {
                    for i in 0..=n - w {
                        f(&text.as_bytes()[ends[i]..ends[i + w]]);
                    }
                }
            }
            Tokenization::Space => space_windows(&text, w, f),
            Tokenization::Punctuation => {
                let tokens: Vec<&str> = text.split(is_regex_punctuation).collect();
                joined_windows(&tokens, w, f, b" ");
            }
            Tokenization::SentencePiece => {
                let model = self
                    .pieces
                    .as_ref()
                    .expect("SentencePiece shingles are only built with their model");
                let mut pieces = dj_sentencepiece::Pieces::default();
                model.encode_joined(&text, &mut pieces);
                let tokens: Vec<&str> = pieces.iter().collect();
                joined_windows(&tokens, w, f, b"");
            }
        }
    }
}

/// Text -> MinHash signature -> LSH bands, as `DocumentMinhashDeduplicator.compute_hash` does.
#[derive(Debug)]
pub(crate) struct MinHasher {
    shingler: Shingler,
    perms: Permutations,
    num_bands: usize,
    rows_per_band: usize,
}

impl MinHasher {
    /// Gives [`Tokenization::SentencePiece`] its model.
    pub(crate) fn with_pieces(mut self, model: Arc<SentencePiece>) -> MinHasher {
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
            perms: Permutations::new(perm_a, perm_b),
            num_bands,
            rows_per_band,
        })
    }

    pub(crate) fn num_bands(&self) -> usize {
        self.num_bands
    }

    pub(crate) fn rows_per_band(&self) -> usize {
        self.rows_per_band
    }

    pub(crate) fn num_permutations(&self) -> usize {
        self.perms.len()
    }

    /// The text that is shingled ([`Shingler::normalize`]).
    #[cfg(test)]
    pub fn normalize<'a>(&self, text: &'a str) -> Cow<'a, str> {
        self.shingler.normalize(text)
    }

    /// Every shingle of the text, in text order, duplicates included
    /// ([`Shingler::for_each_shingle`]).
    pub(crate) fn for_each_shingle(&self, text: &str, f: impl FnMut(&[u8])) {
        self.shingler.for_each_shingle(text, f)
    }

    /// The distinct [`sha1_hash32`] values of the text's shingles, sorted.
    #[cfg(test)]
    pub(crate) fn shingle_hashes(&self, text: &str) -> Vec<u32> {
        let mut hashes = Vec::new();
        self.collect_hashes(text, &mut hashes);
        hashes.sort_unstable();
        hashes.dedup();
        hashes
    }

    /// The [`sha1_hash32`] values of the text's shingles into `hashes` (cleared first), in no
    /// particular order and with repeats: a minimum does not need them distinct, and sorting
    /// costs more than screening the few repeats.
    fn collect_hashes(&self, text: &str, hashes: &mut Vec<u32>) {
        hashes.clear();
        match Sha1x16::new() {
            Some(mut lanes) => {
                self.for_each_shingle(text, |s| {
                    if s.len() <= sha1x16::MAX_LEN {
                        lanes.push(s, hashes);
                    } else {
                        hashes.push(sha1_hash32(s));
                    }
                });
                lanes.flush(hashes);
            }
            None => self.for_each_shingle(text, |s| hashes.push(sha1_hash32(s))),
        }
    }

    /// The MinHash signature: for every permutation, the minimum permuted value over the shingle
    /// hashes; [`permute::MAX_HASH`] everywhere for a text without shingles.
    pub(crate) fn signature(&self, text: &str) -> Vec<u32> {
        thread_local! {
            /// Shingle hashes, kept between rows (a long text has hundreds of KB of them).
            static HASHES: std::cell::Cell<Vec<u32>> = const { std::cell::Cell::new(Vec::new()) };
        }
        let mut hashes = HASHES.take();
        self.collect_hashes(text, &mut hashes);
        let sig = self.perms.signature(&hashes);
        HASHES.set(hashes);
        sig
    }

    /// The signature values of band `band` (`values[band*r..(band+1)*r]`, cut at the end of the
    /// signature as Python slicing does).
    pub(crate) fn band_values<'s>(&self, sig: &'s [u32], band: usize) -> &'s [u32] {
        let start = band.saturating_mul(self.rows_per_band).min(sig.len());
        let end = (band.saturating_add(1))
            .saturating_mul(self.rows_per_band)
            .min(sig.len());
        &sig[start..end]
    }

    /// Appends Data-Juicer's bytes of band `band` to `out`: each value as 8 big-endian bytes.
    pub(crate) fn write_dj_band(&self, sig: &[u32], band: usize, out: &mut Vec<u8>) {
        for &v in self.band_values(sig, band) {
            out.extend_from_slice(&(v as u64).to_be_bytes());
        }
    }

    /// Data-Juicer's `__dj__minhash[band]` for a signature.
    #[cfg(test)]
    pub(crate) fn dj_band(&self, sig: &[u32], band: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.rows_per_band.min(sig.len()) * 8);
        self.write_dj_band(sig, band, &mut out);
        out
    }

    /// Data-Juicer's whole `__dj__minhash` value for a text.
    #[cfg(test)]
    pub(crate) fn dj_minhash(&self, text: &str) -> Vec<Vec<u8>> {
        let sig = self.signature(text);
        (0..self.num_bands).map(|i| self.dj_band(&sig, i)).collect()
    }

    /// Appends band key `band`: the band index as a big-endian u32, then [`Self::write_dj_band`].
    pub(crate) fn write_band_key(&self, sig: &[u32], band: usize, out: &mut Vec<u8>) {
        out.extend_from_slice(&(band as u32).to_be_bytes());
        self.write_dj_band(sig, band, out);
    }

    /// The band keys of a text (what the UDF returns for it).
    #[cfg(test)]
    pub(crate) fn band_keys(&self, text: &str) -> Vec<Vec<u8>> {
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

thread_local! {
    /// Token spans of the text [`space_windows`] works on, kept between rows.
    static TOKEN_SPANS: std::cell::Cell<Vec<(usize, usize)>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Space tokenization's shingles: the tokens are the text's non-empty runs between ASCII
/// spaces, and every w consecutive tokens joined by one space are a shingle. A window whose
/// tokens are one space apart in the text is that slice of the text, passed without a copy;
/// the others are joined in a buffer.
fn space_windows(text: &str, w: usize, mut f: impl FnMut(&[u8])) {
    let bytes = text.as_bytes();
    let mut spans = TOKEN_SPANS.take();
    spans.clear();
    spans.extend(whitespace_spans(text, false, false));
    if spans.len() >= w {
        let mut buf = Vec::new();
        let mut token_bytes: usize = spans[..w - 1].iter().map(|(s, e)| e - s).sum();
        for i in 0..=spans.len() - w {
            let (first, last) = (spans[i], spans[i + w - 1]);
            token_bytes += last.1 - last.0;
            if last.1 - first.0 == token_bytes + (w - 1) {
                f(&bytes[first.0..last.1]);
            } else {
                buf.clear();
                for (j, &(s, e)) in spans[i..i + w].iter().enumerate() {
                    if j > 0 {
                        buf.push(b' ');
                    }
                    buf.extend_from_slice(&bytes[s..e]);
                }
                f(&buf);
            }
            token_bytes -= first.1 - first.0;
        }
    }
    TOKEN_SPANS.set(spans);
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
pub(crate) fn false_positive_probability(th: f64, band: usize, rows: usize) -> f64 {
    let (r, b) = (rows as f64, band as f64);
    quad(|s| 1.0 - (1.0 - s.powf(r)).powf(b), 0.0, th).0
}

/// Probability mass of false negatives above threshold `th`:
/// `quad(1 - (1 - (1 - s^r)^b), th, 1)`.
pub(crate) fn false_negative_probability(th: f64, band: usize, rows: usize) -> f64 {
    let (r, b) = (rows as f64, band as f64);
    quad(|s| 1.0 - (1.0 - (1.0 - s.powf(r)).powf(b)), th, 1.0).0
}

/// Data-Juicer's `optimal_param(threshold, num_perm)`: the `(b, r)` with `b` in `1..=num_perm`,
/// `r` in `1..=num_perm / b` minimising `0.5*FP + 0.5*FN`; the first minimum (smallest b, then r)
/// wins. About `num_perm * ln(num_perm)` pairs, each two integrals.
pub(crate) fn optimal_param(threshold: f64, num_perm: usize) -> (usize, usize) {
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
pub(crate) fn band_keys_type() -> DataType {
    DataType::List(Arc::new(Field::new_list_field(DataType::Binary, true)))
}

/// `text -> List<Binary>` of band keys (see the module docs); null text -> null.
#[derive(Debug)]
struct BandKeys(Arc<MinHasher>);

impl UdfBody for BandKeys {
    fn invoke(&self, args: &[ArrayRef]) -> Result<ArrayRef> {
        let hasher = self.0.clone();
        split_if_spare(single_array(args)?, move |a| band_keys_array(a, &hasher))
    }
}

/// The band keys of every row of a Utf8 / LargeUtf8 / Utf8View array.
pub(crate) fn band_keys_array(array: &ArrayRef, hasher: &MinHasher) -> Result<ArrayRef> {
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

pub(crate) fn document_minhash_deduplicator_spec() -> OpSpec {
    OpSpec {
        name: "document_minhash_deduplicator",
        kind: OpKind::Deduplicator,
        model_use: ModelUse::WithSomeParams,
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
pub(crate) fn config_from_params(p: &Params) -> std::result::Result<MinHashConfig, ParamError> {
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
    let id = UdfIdentity::of(p, "");
    Ok(Operator::Deduplicator(DedupOp {
        hash_column: MINHASH_COLUMN,
        hash_udf: OpUdf::new_udf(
            id,
            text_signature(),
            Some(band_keys_type()),
            Arc::new(BandKeys(Arc::new(hasher))),
        ),
        kind: DedupKind::MinHashBands,
        reads: crate::DedupReads::Text,
    }))
}

#[cfg(test)]
mod tests;
