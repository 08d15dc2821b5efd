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
//!    space. `sentencepiece` needs a model and is rejected with a parameter error.
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

use crate::mapper::clean::{PyRegex, Template};
use crate::operator::{DedupKind, DedupOp, Operator};
use crate::params::{ParamError, ParamSpec, ParamType, Params};
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
// numpy's legacy RandomState
// ---------------------------------------------------------------------------------------------

/// The MT19937 generator of numpy's legacy `RandomState(seed)` (seeded with `init_genrand`).
#[derive(Clone)]
pub struct Mt19937 {
    state: [u32; 624],
    pos: usize,
}

impl std::fmt::Debug for Mt19937 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mt19937").field("pos", &self.pos).finish()
    }
}

impl Mt19937 {
    const N: usize = 624;
    const M: usize = 397;

    /// `numpy.random.RandomState(seed)` for an integer seed.
    pub fn new(seed: u32) -> Mt19937 {
        let mut state = [0u32; 624];
        state[0] = seed;
        for i in 1..Self::N {
            let prev = state[i - 1];
            state[i] = 1812433253u32
                .wrapping_mul(prev ^ (prev >> 30))
                .wrapping_add(i as u32);
        }
        Mt19937 {
            state,
            pos: Self::N,
        }
    }

    fn twist(&mut self) {
        const UPPER: u32 = 0x8000_0000;
        const LOWER: u32 = 0x7fff_ffff;
        const MATRIX_A: u32 = 0x9908_b0df;
        let mt = &mut self.state;
        for i in 0..Self::N {
            let y = (mt[i] & UPPER) | (mt[(i + 1) % Self::N] & LOWER);
            let mag = if y & 1 == 1 { MATRIX_A } else { 0 };
            mt[i] = mt[(i + Self::M) % Self::N] ^ (y >> 1) ^ mag;
        }
        self.pos = 0;
    }

    /// The next 32-bit output (`genrand_int32`).
    pub fn next_u32(&mut self) -> u32 {
        if self.pos >= Self::N {
            self.twist();
        }
        let mut y = self.state[self.pos];
        self.pos += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// numpy's `next_uint64` for MT19937: the first 32-bit output is the high half.
    pub fn next_u64(&mut self) -> u64 {
        let hi = self.next_u32() as u64;
        (hi << 32) | self.next_u32() as u64
    }
}

/// The smallest all-ones mask covering `max` (numpy's `gen_mask`).
fn gen_mask(max: u64) -> u64 {
    let mut m = max;
    m |= m >> 1;
    m |= m >> 2;
    m |= m >> 4;
    m |= m >> 8;
    m |= m >> 16;
    m |= m >> 32;
    m
}

/// `RandomState.randint(low, high, dtype=np.uint64)` for one value, `low < high`.
pub fn randint_u64(rng: &mut Mt19937, low: u64, high: u64) -> u64 {
    assert!(low < high, "randint needs low < high");
    bounded_u64(rng, low, high - 1 - low)
}

/// One uint64 in `off ..= off + range` the way numpy's legacy `RandomState` draws it
/// (`random_bounded_uint64_fill` with `use_masked`): a range of one value draws nothing; a range
/// that fits 32 bits draws 32-bit outputs (all 32 bits when the range is 2^32 - 1, otherwise
/// masked to the range's bit width until one is in range); a wider range draws
/// [`Mt19937::next_u64`] values the same way (all 64 bits for the full range).
pub fn bounded_u64(rng: &mut Mt19937, off: u64, range: u64) -> u64 {
    if range == 0 {
        off
    } else if range <= u32::MAX as u64 {
        if range == u32::MAX as u64 {
            return off.wrapping_add(rng.next_u32() as u64);
        }
        let mask = gen_mask(range) as u32;
        loop {
            let v = rng.next_u32() & mask;
            if v as u64 <= range {
                return off.wrapping_add(v as u64);
            }
        }
    } else if range == u64::MAX {
        off.wrapping_add(rng.next_u64())
    } else {
        let mask = gen_mask(range);
        loop {
            let v = rng.next_u64() & mask;
            if v <= range {
                return off.wrapping_add(v);
            }
        }
    }
}

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
// Band parameters: scipy.integrate.quad (QUADPACK QAGS) and datasketch's optimal_param
// ---------------------------------------------------------------------------------------------

const EPMACH: f64 = f64::EPSILON;
const UFLOW: f64 = f64::MIN_POSITIVE;
const OFLOW: f64 = f64::MAX;

/// `scipy.integrate.quad`'s defaults.
pub const QUAD_EPSABS: f64 = 1.49e-8;
pub const QUAD_EPSREL: f64 = 1.49e-8;
pub const QUAD_LIMIT: usize = 50;

/// The 21-point Gauss-Kronrod rule on `[a, b]` (QUADPACK `dqk21`): `(result, abserr, resabs,
/// resasc)`. The constants are QUADPACK's 33-digit literals, kept verbatim (they round to the
/// same f64s SciPy compiles); loops and comparisons mirror the C code, here and in the other
/// QUADPACK ports, so that every operation happens in the same order.
#[allow(clippy::excessive_precision, clippy::needless_range_loop)]
fn dqk21(f: &impl Fn(f64) -> f64, a: f64, b: f64) -> (f64, f64, f64, f64) {
    const WG: [f64; 5] = [
        0.066671344308688137593568809893332,
        0.149451349150580593145776339657697,
        0.219086362515982043995534934228163,
        0.269266719309996355091226921569469,
        0.295524224714752870173892994651338,
    ];
    const XGK: [f64; 11] = [
        0.995657163025808080735527280689003,
        0.973906528517171720077964012084452,
        0.930157491355708226001207180059508,
        0.865063366688984510732096688423493,
        0.780817726586416897063717578345042,
        0.679409568299024406234327365114874,
        0.562757134668604683339000099272694,
        0.433395394129247190799265943165784,
        0.294392862701460198131126603103866,
        0.148874338981631210884826001129720,
        0.000000000000000000000000000000000,
    ];
    const WGK: [f64; 11] = [
        0.011694638867371874278064396062192,
        0.032558162307964727478818972459390,
        0.054755896574351996031381300244580,
        0.075039674810919952767043140916190,
        0.093125454583697605535065465083366,
        0.109387158802297641899210590325805,
        0.123491976262065851077958109831074,
        0.134709217311473325928054001771707,
        0.142775938577060080797094273138717,
        0.147739104901338491374841515972068,
        0.149445554002916905664936468389821,
    ];
    let centr = 0.5 * (a + b);
    let hlgth = 0.5 * (b - a);
    let dhlgth = hlgth.abs();
    let mut fv1 = [0.0f64; 10];
    let mut fv2 = [0.0f64; 10];

    let fc = f(centr);
    let mut resg = 0.0;
    let mut resk = WGK[10] * fc;
    let mut resabs = resk.abs();
    for j in 0..5 {
        let jtw = 2 * j + 1;
        let absc = hlgth * XGK[jtw];
        let fval1 = f(centr - absc);
        let fval2 = f(centr + absc);
        fv1[jtw] = fval1;
        fv2[jtw] = fval2;
        let fsum = fval1 + fval2;
        resg += WG[j] * fsum;
        resk += WGK[jtw] * fsum;
        resabs += WGK[jtw] * (fval1.abs() + fval2.abs());
    }
    for j in 0..5 {
        let jtwm1 = 2 * j;
        let absc = hlgth * XGK[jtwm1];
        let fval1 = f(centr - absc);
        let fval2 = f(centr + absc);
        fv1[jtwm1] = fval1;
        fv2[jtwm1] = fval2;
        let fsum = fval1 + fval2;
        resk += WGK[jtwm1] * fsum;
        resabs += WGK[jtwm1] * (fval1.abs() + fval2.abs());
    }
    let reskh = resk * 0.5;
    let mut resasc = WGK[10] * (fc - reskh).abs();
    for j in 0..10 {
        resasc += WGK[j] * ((fv1[j] - reskh).abs() + (fv2[j] - reskh).abs());
    }
    let result = resk * hlgth;
    resabs *= dhlgth;
    resasc *= dhlgth;
    let mut abserr = ((resk - resg) * hlgth).abs();
    if resasc != 0.0 && abserr != 0.0 {
        abserr = resasc * 1.0f64.min((200.0 * abserr / resasc).powf(1.5));
    }
    if resabs > UFLOW / (50.0 * EPMACH) {
        abserr = (EPMACH * 50.0 * resabs).max(abserr);
    }
    (result, abserr, resabs, resasc)
}

/// QUADPACK `dqpsrt`: keeps `iord` pointing at the error estimates in descending order and
/// selects the interval with the `nrmax`-th largest error. `last` is a count (1-based).
fn dqpsrt(
    limit: usize,
    last: usize,
    maxerr: &mut usize,
    ermax: &mut f64,
    elist: &[f64],
    iord: &mut [usize],
    nrmax: &mut usize,
) {
    if last <= 2 {
        iord[0] = 0;
        iord[1] = 1;
        *maxerr = iord[*nrmax];
        *ermax = elist[*maxerr];
        return;
    }
    let errmax = elist[*maxerr];
    while *nrmax > 0 && errmax > elist[iord[*nrmax - 1]] {
        iord[*nrmax] = iord[*nrmax - 1];
        *nrmax -= 1;
    }
    let jupbn = if last > limit / 2 + 2 {
        limit + 2 - last
    } else {
        last - 1
    };
    let errmin = elist[last - 1];
    let jbnd = jupbn - 1;
    let ibeg = *nrmax + 1;
    let mut found = None;
    for i in ibeg..=jbnd {
        if errmax >= elist[iord[i]] {
            found = Some(i);
            break;
        }
        iord[i - 1] = iord[i];
    }
    let Some(i) = found else {
        iord[jbnd] = *maxerr;
        iord[jupbn] = last - 1;
        *maxerr = iord[*nrmax];
        *ermax = elist[*maxerr];
        return;
    };
    // Insert errmin by traversing the list bottom-up.
    iord[i - 1] = *maxerr;
    let mut k = jbnd;
    let mut placed = false;
    for _ in i..=jbnd {
        if errmin < elist[iord[k]] {
            iord[k + 1] = last - 1;
            placed = true;
            break;
        }
        iord[k + 1] = iord[k];
        k -= 1;
    }
    if !placed {
        iord[i] = last - 1;
    }
    *maxerr = iord[*nrmax];
    *ermax = elist[*maxerr];
}

/// QUADPACK `dqelg`: Wynn's epsilon algorithm on `epstab[..=n]`; returns `(result, abserr)`.
#[allow(clippy::neg_cmp_op_on_partial_ord, clippy::explicit_counter_loop)]
fn dqelg(
    n: &mut usize,
    epstab: &mut [f64; 52],
    res3la: &mut [f64; 3],
    nres: &mut usize,
) -> (f64, f64) {
    let starting_n = *n;
    *nres += 1;
    let mut abserr = OFLOW;
    let mut result = epstab[*n];
    if *n < 2 {
        abserr = abserr.max(5.0 * EPMACH * result.abs());
        return (result, abserr);
    }
    const LIMEXP: usize = 49;
    epstab[*n + 2] = epstab[*n];
    let newelm = *n / 2;
    epstab[*n] = OFLOW;
    let mut k1 = *n;
    for i in 0..newelm {
        let k2 = k1 - 1;
        let k3 = k1 - 2;
        let mut res = epstab[k1 + 2];
        let e0 = epstab[k3];
        let e1 = epstab[k2];
        let e2 = res;
        let e1abs = e1.abs();
        let delta2 = e2 - e1;
        let err2 = delta2.abs();
        let tol2 = e2.abs().max(e1abs) * EPMACH;
        let delta3 = e1 - e0;
        let err3 = delta3.abs();
        let tol3 = e1abs.max(e0.abs()) * EPMACH;
        if !(err2 > tol2 || err3 > tol3) {
            // e0, e1 and e2 are equal to within machine accuracy: convergence is assumed.
            result = res;
            abserr = err2 + err3;
            abserr = abserr.max(5.0 * EPMACH * result.abs());
            return (result, abserr);
        }
        let e3 = epstab[k1];
        epstab[k1] = e1;
        let delta1 = e1 - e3;
        let err1 = delta1.abs();
        let tol1 = e1abs.max(e3.abs()) * EPMACH;
        // Two elements very close to each other: omit a part of the table.
        if err1 <= tol1 || err2 <= tol2 || err3 <= tol3 {
            *n = i + i;
            break;
        }
        let ss = 1.0 / delta1 + 1.0 / delta2 - 1.0 / delta3;
        let epsinf = (ss * e1).abs();
        // Irregular behaviour in the table: omit a part of it.
        if !(epsinf > 1e-4) {
            *n = i + i;
            break;
        }
        res = e1 + 1.0 / ss;
        epstab[k1] = res;
        k1 -= 2;
        let error = err2 + (res - e2).abs() + err3;
        if !(error > abserr) {
            abserr = error;
            result = res;
        }
    }
    // Shift the table.
    if *n == LIMEXP {
        *n = 2 * (LIMEXP / 2);
    }
    let n2_rem = starting_n % 2;
    for i in 0..=newelm {
        epstab[2 * i + n2_rem] = epstab[2 * i + 2 + n2_rem];
    }
    if *n != starting_n {
        let mut indx = starting_n - *n;
        for i in 0..=*n {
            epstab[i] = epstab[indx];
            indx += 1;
        }
    }
    if *nres < 4 {
        res3la[*nres - 1] = result;
        abserr = OFLOW;
    } else {
        abserr =
            (result - res3la[2]).abs() + (result - res3la[1]).abs() + (result - res3la[0]).abs();
        res3la[0] = res3la[1];
        res3la[1] = res3la[2];
        res3la[2] = result;
    }
    abserr = abserr.max(5.0 * EPMACH * result.abs());
    (result, abserr)
}

/// `scipy.integrate.quad(f, a, b)` for finite `a <= b`: QUADPACK `dqagse` (adaptive
/// Gauss-Kronrod 21 with Wynn-epsilon extrapolation), epsabs = epsrel = 1.49e-8, limit 50, ported
/// from SciPy's C translation operation for operation so that results agree bit for bit (both
/// call the C library's `pow` in the integrands here). Returns `(result, abserr)`.
pub fn quad(f: impl Fn(f64) -> f64, a: f64, b: f64) -> (f64, f64) {
    let (r, e, _) = dqagse(&f, a, b, QUAD_EPSABS, QUAD_EPSREL, QUAD_LIMIT);
    (r, e)
}

/// QUADPACK `dqagse`; returns `(result, abserr, ier)`.
#[allow(clippy::neg_cmp_op_on_partial_ord, clippy::mut_range_bound)]
fn dqagse(
    f: &impl Fn(f64) -> f64,
    a: f64,
    b: f64,
    epsabs: f64,
    epsrel: f64,
    limit: usize,
) -> (f64, f64, i32) {
    let mut alist = vec![0.0f64; limit];
    let mut blist = vec![0.0f64; limit];
    let mut rlist = vec![0.0f64; limit];
    let mut elist = vec![0.0f64; limit];
    let mut iord = vec![0usize; limit];
    let mut rlist2 = [0.0f64; 52];
    let mut res3la = [0.0f64; 3];
    let mut ier = 0i32;
    let mut ierror = 0i32;
    let mut erlarg = 0.0f64;
    let mut correc = 0.0f64;
    let mut small = 0.0f64;
    let mut ertest = 0.0f64;
    alist[0] = a;
    blist[0] = b;

    if epsabs <= 0.0 && epsrel < (50.0 * EPMACH).max(0.5e-28) {
        return (0.0, 0.0, 6);
    }

    // First approximation to the integral.
    let (mut result, mut abserr, defabs, resabs0) = dqk21(f, a, b);
    let dres = result.abs();
    let mut errbnd = epsabs.max(epsrel * dres);
    rlist[0] = result;
    elist[0] = abserr;
    iord[0] = 0;
    if abserr <= 100.0 * EPMACH * defabs && abserr > errbnd {
        ier = 2;
    }
    if limit == 1 {
        ier = 1;
    }
    if ier != 0 || (abserr <= errbnd && abserr != resabs0) || abserr == 0.0 {
        return (result, abserr, ier);
    }

    // Initialization.
    rlist2[0] = result;
    let mut errmax = abserr;
    let mut maxerr = 0usize;
    let mut area = result;
    let mut errsum = abserr;
    abserr = OFLOW;
    let mut nrmax = 0usize;
    let mut nres = 0usize;
    let mut numrl2 = 1usize;
    let mut ktmin = 0u32;
    let mut extrap = false;
    let mut noext = false;
    let mut iroff1 = 0u32;
    let mut iroff2 = 0u32;
    let mut iroff3 = 0u32;
    let ksgn: i32 = if dres >= (1.0 - 50.0 * EPMACH) * defabs {
        1
    } else {
        -1
    };

    // How the main loop ended.
    enum Exit {
        /// `goto 115`: sum the interval results.
        Sum,
        /// `break`: the extrapolated result may be used.
        Break,
    }
    let mut last_l = 0usize;
    let mut exit = Exit::Break;
    for l in 1..limit {
        last_l = l;
        let last = l + 1;
        // Bisect the subinterval with the nrmax-th largest error estimate.
        let a1 = alist[maxerr];
        let b1 = 0.5 * (alist[maxerr] + blist[maxerr]);
        let a2 = b1;
        let b2 = blist[maxerr];
        let erlast = errmax;
        let (area1, error1, _, defab1) = dqk21(f, a1, b1);
        let (area2, error2, _, defab2) = dqk21(f, a2, b2);

        // Improve previous approximations to integral and error and test for accuracy.
        let area12 = area1 + area2;
        let error12 = error1 + error2;
        errsum = errsum + error12 - errmax;
        area = area + area12 - rlist[maxerr];
        if defab1 != error1 && defab2 != error2 {
            if !((rlist[maxerr] - area12).abs() > 1.0e-5 * area12.abs() || error12 < 0.99 * errmax)
            {
                if extrap {
                    iroff2 += 1;
                } else {
                    iroff1 += 1;
                }
            }
            if l > 9 && error12 > errmax {
                iroff3 += 1;
            }
        }
        rlist[maxerr] = area1;
        rlist[l] = area2;
        errbnd = epsabs.max(epsrel * area.abs());

        // Test for roundoff error and eventually set error flag.
        if iroff1 + iroff2 >= 10 || iroff3 >= 20 {
            ier = 2;
        }
        if iroff2 >= 5 {
            ierror = 3;
        }
        // The number of subintervals equals limit.
        if last == limit {
            ier = 1;
        }
        // Bad integrand behaviour at some points of the integration range.
        if a1.abs().max(b2.abs()) <= (1.0 + 100.0 * EPMACH) * (a2.abs() + 1000.0 * UFLOW) {
            ier = 4;
        }

        // Append the newly-created intervals to the list.
        if !(error2 > error1) {
            alist[l] = a2;
            blist[maxerr] = b1;
            blist[l] = b2;
            elist[maxerr] = error1;
            elist[l] = error2;
        } else {
            alist[maxerr] = a2;
            alist[l] = a1;
            blist[l] = b1;
            rlist[maxerr] = area2;
            rlist[l] = area1;
            elist[maxerr] = error2;
            elist[l] = error1;
        }
        dqpsrt(
            limit,
            last,
            &mut maxerr,
            &mut errmax,
            &elist,
            &mut iord,
            &mut nrmax,
        );

        if errsum <= errbnd {
            exit = Exit::Sum;
            break;
        }
        if ier != 0 {
            break;
        }
        if l == 1 {
            small = (b - a).abs() * 0.375;
            erlarg = errsum;
            ertest = errbnd;
            rlist2[1] = area;
            continue;
        }
        if noext {
            continue;
        }
        erlarg -= erlast;
        if (b1 - a1).abs() > small {
            erlarg += error12;
        }
        if !extrap {
            // Is the interval to be bisected next the smallest interval?
            if (blist[maxerr] - alist[maxerr]).abs() > small {
                continue;
            }
            extrap = true;
            nrmax = 1;
        }
        if ierror != 3 && erlarg > ertest {
            // The smallest interval has the largest error. Before bisecting decrease the sum of
            // the errors over the larger intervals (erlarg) and perform extrapolation.
            let jupbnd = if last > 2 + limit / 2 {
                limit + 3 - last
            } else {
                last
            };
            let mut larger = false;
            for _ in nrmax..jupbnd {
                maxerr = iord[nrmax];
                errmax = elist[maxerr];
                if (blist[maxerr] - alist[maxerr]).abs() > small {
                    larger = true;
                    break;
                }
                nrmax += 1;
            }
            if larger {
                continue;
            }
        }
        // Perform extrapolation.
        numrl2 += 1;
        rlist2[numrl2] = area;
        let (reseps, abseps) = dqelg(&mut numrl2, &mut rlist2, &mut res3la, &mut nres);
        ktmin += 1;
        if ktmin > 5 && abserr < 1.0e-3 * errsum {
            ier = 5;
        }
        if abseps < abserr {
            ktmin = 0;
            abserr = abseps;
            result = reseps;
            correc = erlarg;
            ertest = epsabs.max(epsrel * reseps.abs());
            if abserr <= ertest {
                break;
            }
        }
        // Prepare bisection of the smallest interval.
        if numrl2 == 0 {
            noext = true;
        }
        if ier == 5 {
            break;
        }
        maxerr = iord[0];
        errmax = elist[maxerr];
        nrmax = 0;
        extrap = false;
        small *= 0.5;
        erlarg = errsum;
    }

    // Set final result and error estimate.
    #[derive(PartialEq)]
    enum Step {
        L105,
        L110,
        L115,
        L130,
    }
    let mut step = match exit {
        Exit::Sum => Step::L115,
        Exit::Break => {
            if abserr == OFLOW {
                Step::L115
            } else if ier + ierror == 0 {
                Step::L110
            } else {
                if ierror == 3 {
                    abserr += correc;
                }
                if ier == 0 {
                    ier = 3;
                }
                if result != 0.0 && area != 0.0 {
                    Step::L105
                } else if abserr > errsum {
                    Step::L115
                } else if area == 0.0 {
                    Step::L130
                } else {
                    Step::L110
                }
            }
        }
    };
    if step == Step::L105 {
        step = if abserr / result.abs() > errsum / area.abs() {
            Step::L115
        } else {
            Step::L110
        };
    }
    if step == Step::L110 {
        // Test on divergence.
        if !(ksgn == -1 && result.abs().max(area.abs()) <= defabs * 0.01)
            && (0.01 > result / area || result / area > 100.0 || errsum > area.abs())
        {
            ier = 6;
        }
        step = Step::L130;
    }
    if step == Step::L115 {
        result = 0.0;
        for r in &rlist[..=last_l] {
            result += *r;
        }
        abserr = errsum;
    }
    if ier > 2 {
        ier -= 1;
    }
    (result, abserr, ier)
}

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
    #[allow(clippy::type_complexity)]
    const SIGNATURES: &[(usize, &str, usize, bool, bool, [u32; 4], &str)] = &[
        (
            0,
            "space",
            5,
            true,
            false,
            [186966786, 59101012, 64205283, 638598101],
            "bac3b0a04f49ec5c787198194f12a6b1",
        ),
        (
            1,
            "space",
            5,
            true,
            false,
            [340539621, 630220723, 1010868031, 181598948],
            "879be58456e416ac47721861d4a92afd",
        ),
        (
            2,
            "space",
            5,
            true,
            false,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            3,
            "space",
            5,
            true,
            false,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            4,
            "space",
            5,
            true,
            false,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            5,
            "space",
            5,
            true,
            false,
            [1325523712, 3176138254, 1937760049, 3728888456],
            "e948dc2407a74b06a549ea65ffb19a3a",
        ),
        (
            6,
            "space",
            5,
            true,
            false,
            [279126331, 479914450, 501193443, 232311125],
            "f0706852b985b3c5769858ead8076e8d",
        ),
        (
            0,
            "space",
            5,
            true,
            true,
            [186966786, 59101012, 295018702, 638598101],
            "12f880072b364132166609939931c796",
        ),
        (
            1,
            "space",
            5,
            true,
            true,
            [839531796, 175538585, 710465509, 196785016],
            "13880798fff9d1f90e8932fff0b9f7c1",
        ),
        (
            2,
            "space",
            5,
            true,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            3,
            "space",
            5,
            true,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            4,
            "space",
            5,
            true,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            5,
            "space",
            5,
            true,
            true,
            [1325523712, 3176138254, 1937760049, 3728888456],
            "e948dc2407a74b06a549ea65ffb19a3a",
        ),
        (
            6,
            "space",
            5,
            true,
            true,
            [342529282, 2522647800, 769651260, 365203385],
            "08220955c59141118c9297a2af77134c",
        ),
        (
            0,
            "space",
            5,
            false,
            false,
            [282902122, 59101012, 64205283, 301791095],
            "2760e7ebfda4ed567ce475e75925da10",
        ),
        (
            1,
            "space",
            5,
            false,
            false,
            [397533650, 189472251, 271620465, 23990633],
            "24a5c27c6c5928f339bb89b1ab226f2e",
        ),
        (
            2,
            "space",
            5,
            false,
            false,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            3,
            "space",
            5,
            false,
            false,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            4,
            "space",
            5,
            false,
            false,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            5,
            "space",
            5,
            false,
            false,
            [1325523712, 3176138254, 1937760049, 3728888456],
            "e948dc2407a74b06a549ea65ffb19a3a",
        ),
        (
            6,
            "space",
            5,
            false,
            false,
            [279126331, 382659097, 503947962, 232311125],
            "945e27ecbc2a8ea1ad4874c49a021e4e",
        ),
        (
            0,
            "space",
            5,
            false,
            true,
            [644089754, 59101012, 343111293, 70306640],
            "d469d30d6f4c3ac48a346397843976d6",
        ),
        (
            1,
            "space",
            5,
            false,
            true,
            [433428258, 560455867, 271620465, 191846135],
            "7a655e286d0f4a78df3a2f2bce628f90",
        ),
        (
            2,
            "space",
            5,
            false,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            3,
            "space",
            5,
            false,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            4,
            "space",
            5,
            false,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            5,
            "space",
            5,
            false,
            true,
            [1325523712, 3176138254, 1937760049, 3728888456],
            "e948dc2407a74b06a549ea65ffb19a3a",
        ),
        (
            6,
            "space",
            5,
            false,
            true,
            [373365569, 1853162048, 1835393347, 365203385],
            "e6584acd2ef03b92cbdd53bca2507206",
        ),
        (
            0,
            "space",
            2,
            true,
            false,
            [488571965, 443437826, 533051170, 76122948],
            "c897331554edd05149b808319df37313",
        ),
        (
            1,
            "space",
            2,
            true,
            false,
            [78461679, 164789602, 223068096, 690581313],
            "a47ca341133efc74d40057803af5bc47",
        ),
        (
            2,
            "space",
            2,
            true,
            false,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            3,
            "space",
            2,
            true,
            false,
            [1556971811, 3115869624, 497433441, 1414657747],
            "2845c730ec2d553b604645277a660b03",
        ),
        (
            4,
            "space",
            2,
            true,
            false,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            5,
            "space",
            2,
            true,
            false,
            [481794548, 1176948478, 76096025, 645836949],
            "ad8087c41e21cb150869043315346627",
        ),
        (
            6,
            "space",
            2,
            true,
            false,
            [246062471, 184871493, 83604614, 442261309],
            "b4dd5ffbb742c3f65d944cb619a9688d",
        ),
        (
            0,
            "space",
            2,
            true,
            true,
            [579589854, 147331895, 478565440, 76122948],
            "26d0a8b3f7a00315b22533477ec5fcb9",
        ),
        (
            1,
            "space",
            2,
            true,
            true,
            [91326884, 591524017, 223068096, 166695609],
            "bc9b4034285b63ac91f75343a2ce4a0e",
        ),
        (
            2,
            "space",
            2,
            true,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            3,
            "space",
            2,
            true,
            true,
            [1556971811, 3115869624, 497433441, 1414657747],
            "2845c730ec2d553b604645277a660b03",
        ),
        (
            4,
            "space",
            2,
            true,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            5,
            "space",
            2,
            true,
            true,
            [481794548, 1176948478, 76096025, 645836949],
            "ad8087c41e21cb150869043315346627",
        ),
        (
            6,
            "space",
            2,
            true,
            true,
            [484644251, 868143956, 749376264, 442261309],
            "9b075020d0f5ee04c6fa0a6d0a5d8e95",
        ),
        (
            0,
            "space",
            2,
            false,
            false,
            [1722258191, 5366167, 533051170, 76122948],
            "1d8b6ab8f8d2013427ca8808b295957f",
        ),
        (
            1,
            "space",
            2,
            false,
            false,
            [217702558, 97912936, 474474271, 665034109],
            "c574cb6535a307cc264682fe34edfdd7",
        ),
        (
            2,
            "space",
            2,
            false,
            false,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            3,
            "space",
            2,
            false,
            false,
            [1556971811, 3115869624, 497433441, 1414657747],
            "2845c730ec2d553b604645277a660b03",
        ),
        (
            4,
            "space",
            2,
            false,
            false,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            5,
            "space",
            2,
            false,
            false,
            [481794548, 1176948478, 76096025, 645836949],
            "ad8087c41e21cb150869043315346627",
        ),
        (
            6,
            "space",
            2,
            false,
            false,
            [246062471, 24253772, 83604614, 656514981],
            "16ca8d2b6c624a77b8d3e088f115f12d",
        ),
        (
            0,
            "space",
            2,
            false,
            true,
            [932266504, 5366167, 1940363038, 76122948],
            "ec20284a356f6b33ec0890acd55a1638",
        ),
        (
            1,
            "space",
            2,
            false,
            true,
            [779536167, 97912936, 166478060, 166695609],
            "22fa95cde965425a01759c20908d3f8d",
        ),
        (
            2,
            "space",
            2,
            false,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            3,
            "space",
            2,
            false,
            true,
            [1556971811, 3115869624, 497433441, 1414657747],
            "2845c730ec2d553b604645277a660b03",
        ),
        (
            4,
            "space",
            2,
            false,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            5,
            "space",
            2,
            false,
            true,
            [481794548, 1176948478, 76096025, 645836949],
            "ad8087c41e21cb150869043315346627",
        ),
        (
            6,
            "space",
            2,
            false,
            true,
            [484644251, 24253772, 985539823, 505007604],
            "cfd3fb2c702668c4dca9b7c9ef368d06",
        ),
        (
            0,
            "punctuation",
            5,
            true,
            false,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            1,
            "punctuation",
            5,
            true,
            false,
            [1213338592, 2433633588, 3230554815, 3032070584],
            "c6424582baf5066ea42f88cb23b6d955",
        ),
        (
            2,
            "punctuation",
            5,
            true,
            false,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            3,
            "punctuation",
            5,
            true,
            false,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            4,
            "punctuation",
            5,
            true,
            false,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            5,
            "punctuation",
            5,
            true,
            false,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            6,
            "punctuation",
            5,
            true,
            false,
            [381939592, 1148484229, 99089878, 393827665],
            "bcbeb27ecf50c835c25bb3ceba35eb87",
        ),
        (
            0,
            "punctuation",
            5,
            true,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            1,
            "punctuation",
            5,
            true,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            2,
            "punctuation",
            5,
            true,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            3,
            "punctuation",
            5,
            true,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            4,
            "punctuation",
            5,
            true,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            5,
            "punctuation",
            5,
            true,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            6,
            "punctuation",
            5,
            true,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            0,
            "punctuation",
            5,
            false,
            false,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            1,
            "punctuation",
            5,
            false,
            false,
            [1967870167, 1870073345, 4200097738, 414931646],
            "f7ac14538a030b7e5cbabf315ab2efae",
        ),
        (
            2,
            "punctuation",
            5,
            false,
            false,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            3,
            "punctuation",
            5,
            false,
            false,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            4,
            "punctuation",
            5,
            false,
            false,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            5,
            "punctuation",
            5,
            false,
            false,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            6,
            "punctuation",
            5,
            false,
            false,
            [1381627015, 1148484229, 1075770752, 393827665],
            "caf3c095bd1ca09fa76ccbec71e28cfc",
        ),
        (
            0,
            "punctuation",
            5,
            false,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            1,
            "punctuation",
            5,
            false,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            2,
            "punctuation",
            5,
            false,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            3,
            "punctuation",
            5,
            false,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            4,
            "punctuation",
            5,
            false,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            5,
            "punctuation",
            5,
            false,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            6,
            "punctuation",
            5,
            false,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            0,
            "punctuation",
            2,
            true,
            false,
            [1795911900, 780017254, 1520121992, 370961427],
            "fa0591ccafc4b5982119c78f0655fa40",
        ),
        (
            1,
            "punctuation",
            2,
            true,
            false,
            [188703617, 203739641, 1383456399, 524305593],
            "476205edb28d39b699041f46be8c4d4e",
        ),
        (
            2,
            "punctuation",
            2,
            true,
            false,
            [533981390, 1929566003, 1525039256, 1732311476],
            "40c385667d5db70d13b1955ef30b7706",
        ),
        (
            3,
            "punctuation",
            2,
            true,
            false,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            4,
            "punctuation",
            2,
            true,
            false,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            5,
            "punctuation",
            2,
            true,
            false,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            6,
            "punctuation",
            2,
            true,
            false,
            [74287638, 271790076, 429685131, 521850082],
            "086683219c4588d475e4f0e6bb52d4e1",
        ),
        (
            0,
            "punctuation",
            2,
            true,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            1,
            "punctuation",
            2,
            true,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            2,
            "punctuation",
            2,
            true,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            3,
            "punctuation",
            2,
            true,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            4,
            "punctuation",
            2,
            true,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            5,
            "punctuation",
            2,
            true,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            6,
            "punctuation",
            2,
            true,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            0,
            "punctuation",
            2,
            false,
            false,
            [3180807401, 2628337186, 3093116770, 2822540151],
            "df02bb03504fb143223610b0d02fbb5f",
        ),
        (
            1,
            "punctuation",
            2,
            false,
            false,
            [188703617, 885178831, 427298917, 897980486],
            "982d262d534d2ee12aaab6b05f10f1df",
        ),
        (
            2,
            "punctuation",
            2,
            false,
            false,
            [533981390, 1929566003, 1525039256, 1732311476],
            "40c385667d5db70d13b1955ef30b7706",
        ),
        (
            3,
            "punctuation",
            2,
            false,
            false,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            4,
            "punctuation",
            2,
            false,
            false,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            5,
            "punctuation",
            2,
            false,
            false,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            6,
            "punctuation",
            2,
            false,
            false,
            [2320570671, 271790076, 429685131, 521850082],
            "01fa6234832b3d980f38c52c1a0c89e7",
        ),
        (
            0,
            "punctuation",
            2,
            false,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            1,
            "punctuation",
            2,
            false,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            2,
            "punctuation",
            2,
            false,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            3,
            "punctuation",
            2,
            false,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            4,
            "punctuation",
            2,
            false,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            5,
            "punctuation",
            2,
            false,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            6,
            "punctuation",
            2,
            false,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            0,
            "character",
            5,
            true,
            false,
            [7289099, 74520796, 80687685, 126048119],
            "98860199192bc14923bf7a1b261fa7a7",
        ),
        (
            1,
            "character",
            5,
            true,
            false,
            [133335009, 8850527, 17280706, 57605441],
            "6bfec65a857fc60cfb174029bbf270b8",
        ),
        (
            2,
            "character",
            5,
            true,
            false,
            [186869257, 714330805, 7418097, 166582282],
            "22c8ce3d22df8e1a48c08dbdd6ffe706",
        ),
        (
            3,
            "character",
            5,
            true,
            false,
            [783529365, 111637018, 646762251, 569707882],
            "7b04d53a903ac395aca3865b9b3432ab",
        ),
        (
            4,
            "character",
            5,
            true,
            false,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            5,
            "character",
            5,
            true,
            false,
            [166243150, 195862067, 931037807, 146456144],
            "4bdffa1b0438c7364f348795668a3c64",
        ),
        (
            6,
            "character",
            5,
            true,
            false,
            [14134595, 37943126, 26906656, 68020288],
            "aca9c3185b0a24f2c5812aa7b408bde8",
        ),
        (
            0,
            "character",
            5,
            true,
            true,
            [7289099, 74520796, 80687685, 126048119],
            "2d01ab7957bf35d3b7ed2217265da532",
        ),
        (
            1,
            "character",
            5,
            true,
            true,
            [133335009, 8850527, 17280706, 57605441],
            "a8eb65ec78d007c4faa393d0372ec3fc",
        ),
        (
            2,
            "character",
            5,
            true,
            true,
            [186869257, 714330805, 7418097, 1855325],
            "c60ee52476ec8d6bdf1aacccc950991c",
        ),
        (
            3,
            "character",
            5,
            true,
            true,
            [783529365, 111637018, 646762251, 569707882],
            "7b04d53a903ac395aca3865b9b3432ab",
        ),
        (
            4,
            "character",
            5,
            true,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            5,
            "character",
            5,
            true,
            true,
            [166243150, 195862067, 931037807, 146456144],
            "4bdffa1b0438c7364f348795668a3c64",
        ),
        (
            6,
            "character",
            5,
            true,
            true,
            [24446346, 12249604, 299295253, 113760523],
            "859a8611154a973ead9135bea5f0fb9c",
        ),
        (
            0,
            "character",
            5,
            false,
            false,
            [7289099, 74520796, 80687685, 32521708],
            "37686f5e27955ee8b3093eff2e036cd1",
        ),
        (
            1,
            "character",
            5,
            false,
            false,
            [159273735, 12249604, 60499526, 57605441],
            "5f20bd1042b342ea33d73c7417d807c8",
        ),
        (
            2,
            "character",
            5,
            false,
            false,
            [186869257, 714330805, 7418097, 166582282],
            "22c8ce3d22df8e1a48c08dbdd6ffe706",
        ),
        (
            3,
            "character",
            5,
            false,
            false,
            [783529365, 111637018, 646762251, 569707882],
            "7b04d53a903ac395aca3865b9b3432ab",
        ),
        (
            4,
            "character",
            5,
            false,
            false,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            5,
            "character",
            5,
            false,
            false,
            [166243150, 195862067, 931037807, 146456144],
            "4bdffa1b0438c7364f348795668a3c64",
        ),
        (
            6,
            "character",
            5,
            false,
            false,
            [14134595, 7088279, 26906656, 68020288],
            "6570def25326859cf829fa27a4c62e8b",
        ),
        (
            0,
            "character",
            5,
            false,
            true,
            [7289099, 74520796, 80687685, 83223842],
            "9fcbbc57ce94ee1039a6c888415b9401",
        ),
        (
            1,
            "character",
            5,
            false,
            true,
            [75262807, 12249604, 86431505, 57605441],
            "368f33d1707893c8783114c655bff52a",
        ),
        (
            2,
            "character",
            5,
            false,
            true,
            [186869257, 714330805, 7418097, 1855325],
            "c60ee52476ec8d6bdf1aacccc950991c",
        ),
        (
            3,
            "character",
            5,
            false,
            true,
            [783529365, 111637018, 646762251, 569707882],
            "7b04d53a903ac395aca3865b9b3432ab",
        ),
        (
            4,
            "character",
            5,
            false,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            5,
            "character",
            5,
            false,
            true,
            [166243150, 195862067, 931037807, 146456144],
            "4bdffa1b0438c7364f348795668a3c64",
        ),
        (
            6,
            "character",
            5,
            false,
            true,
            [24446346, 7088279, 329916803, 113760523],
            "96136983d42f89e5d105ea4789071839",
        ),
        (
            0,
            "character",
            2,
            true,
            false,
            [204408630, 207474987, 69990520, 259246744],
            "3a9fe9bf9daf7e937c8a027fe91e590b",
        ),
        (
            1,
            "character",
            2,
            true,
            false,
            [45676166, 58588819, 101747156, 52946681],
            "ab62fc60f07058cc04c871cfb1be5c96",
        ),
        (
            2,
            "character",
            2,
            true,
            false,
            [327586953, 337293052, 17568440, 76990135],
            "14542649df4638bda7b8725ec4fc62a8",
        ),
        (
            3,
            "character",
            2,
            true,
            false,
            [45676166, 55679766, 374609872, 218196662],
            "faf46186ade152d9e444c932f73ee866",
        ),
        (
            4,
            "character",
            2,
            true,
            false,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            5,
            "character",
            2,
            true,
            false,
            [197487043, 1543505979, 1596262467, 631261293],
            "8bf73fec459d31efbc6f02896f98835a",
        ),
        (
            6,
            "character",
            2,
            true,
            false,
            [197077353, 55679766, 55583155, 328044408],
            "3abf3d874784d6a60d27508f4ec24edf",
        ),
        (
            0,
            "character",
            2,
            true,
            true,
            [204408630, 207474987, 69990520, 259246744],
            "a60598b8893c4e26ebd6f57b6a924fde",
        ),
        (
            1,
            "character",
            2,
            true,
            true,
            [45676166, 58588819, 101747156, 52946681],
            "a63e9055066f4c9a3ecbe62395ce7e17",
        ),
        (
            2,
            "character",
            2,
            true,
            true,
            [327586953, 337293052, 17568440, 32835263],
            "4292c4182ee988a8fae7381da08f3a26",
        ),
        (
            3,
            "character",
            2,
            true,
            true,
            [45676166, 55679766, 374609872, 218196662],
            "faf46186ade152d9e444c932f73ee866",
        ),
        (
            4,
            "character",
            2,
            true,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            5,
            "character",
            2,
            true,
            true,
            [197487043, 1543505979, 1596262467, 631261293],
            "8bf73fec459d31efbc6f02896f98835a",
        ),
        (
            6,
            "character",
            2,
            true,
            true,
            [197077353, 55679766, 55583155, 328044408],
            "2017424f46776148066297e96f536f0f",
        ),
        (
            0,
            "character",
            2,
            false,
            false,
            [123123688, 207474987, 69990520, 259246744],
            "2392cc67f80414abad74319593f861ee",
        ),
        (
            1,
            "character",
            2,
            false,
            false,
            [45676166, 58588819, 71247717, 52946681],
            "e6413e3835b68a2d686db55226d4f811",
        ),
        (
            2,
            "character",
            2,
            false,
            false,
            [327586953, 337293052, 17568440, 76990135],
            "14542649df4638bda7b8725ec4fc62a8",
        ),
        (
            3,
            "character",
            2,
            false,
            false,
            [45676166, 55679766, 374609872, 218196662],
            "faf46186ade152d9e444c932f73ee866",
        ),
        (
            4,
            "character",
            2,
            false,
            false,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            5,
            "character",
            2,
            false,
            false,
            [197487043, 1543505979, 1596262467, 631261293],
            "8bf73fec459d31efbc6f02896f98835a",
        ),
        (
            6,
            "character",
            2,
            false,
            false,
            [197077353, 55679766, 55583155, 328044408],
            "4626b9f011d695b7dca77d3cf449a8b7",
        ),
        (
            0,
            "character",
            2,
            false,
            true,
            [123123688, 207474987, 69990520, 259246744],
            "dfa969971be301eb69bd6173db06ea25",
        ),
        (
            1,
            "character",
            2,
            false,
            true,
            [45676166, 58588819, 71247717, 52946681],
            "24c139b9dced09652288ee4f0a9bd354",
        ),
        (
            2,
            "character",
            2,
            false,
            true,
            [327586953, 337293052, 17568440, 32835263],
            "4292c4182ee988a8fae7381da08f3a26",
        ),
        (
            3,
            "character",
            2,
            false,
            true,
            [45676166, 55679766, 374609872, 218196662],
            "faf46186ade152d9e444c932f73ee866",
        ),
        (
            4,
            "character",
            2,
            false,
            true,
            [4294967295, 4294967295, 4294967295, 4294967295],
            "02d6bd505ffe24feee800efa4c9f087d",
        ),
        (
            5,
            "character",
            2,
            false,
            true,
            [197487043, 1543505979, 1596262467, 631261293],
            "8bf73fec459d31efbc6f02896f98835a",
        ),
        (
            6,
            "character",
            2,
            false,
            true,
            [197077353, 55679766, 55583155, 328044408],
            "5dc4eeef46651a09ab89b38a5df80f8a",
        ),
    ];

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

    /// (threshold, num_perm, b, r): Data-Juicer's `optimal_param` with scipy 1.17.1.
    const OPTIMAL: &[(f64, usize, usize, usize)] = &[
        (0.0, 1, 1, 1),
        (0.0, 2, 2, 1),
        (0.0, 3, 3, 1),
        (0.0, 8, 8, 1),
        (0.0, 16, 16, 1),
        (0.0, 64, 64, 1),
        (0.0, 100, 100, 1),
        (0.0, 128, 128, 1),
        (0.0, 200, 200, 1),
        (0.0, 256, 256, 1),
        (0.1, 1, 1, 1),
        (0.1, 2, 2, 1),
        (0.1, 3, 3, 1),
        (0.1, 8, 8, 1),
        (0.1, 16, 15, 1),
        (0.1, 64, 15, 1),
        (0.1, 100, 50, 2),
        (0.1, 128, 64, 2),
        (0.1, 200, 100, 2),
        (0.1, 256, 117, 2),
        (0.25, 1, 1, 1),
        (0.25, 2, 2, 1),
        (0.25, 3, 3, 1),
        (0.25, 8, 5, 1),
        (0.25, 16, 8, 2),
        (0.25, 64, 18, 2),
        (0.25, 100, 33, 3),
        (0.25, 128, 42, 3),
        (0.25, 200, 64, 3),
        (0.25, 256, 64, 3),
        (0.3, 1, 1, 1),
        (0.3, 2, 2, 1),
        (0.3, 3, 3, 1),
        (0.3, 8, 4, 1),
        (0.3, 16, 8, 2),
        (0.3, 64, 21, 3),
        (0.3, 100, 33, 3),
        (0.3, 128, 37, 3),
        (0.3, 200, 37, 3),
        (0.3, 256, 64, 4),
        (0.5, 1, 1, 1),
        (0.5, 2, 1, 1),
        (0.5, 3, 1, 1),
        (0.5, 8, 3, 2),
        (0.5, 16, 5, 3),
        (0.5, 64, 14, 4),
        (0.5, 100, 20, 5),
        (0.5, 128, 25, 5),
        (0.5, 200, 33, 6),
        (0.5, 256, 42, 6),
        (0.6, 1, 1, 1),
        (0.6, 2, 1, 2),
        (0.6, 3, 1, 2),
        (0.6, 8, 2, 3),
        (0.6, 16, 4, 4),
        (0.6, 64, 10, 6),
        (0.6, 100, 16, 6),
        (0.6, 128, 18, 7),
        (0.6, 200, 28, 7),
        (0.6, 256, 32, 8),
        (0.7, 1, 1, 1),
        (0.7, 2, 1, 2),
        (0.7, 3, 1, 3),
        (0.7, 8, 2, 4),
        (0.7, 16, 3, 5),
        (0.7, 64, 8, 8),
        (0.7, 100, 11, 9),
        (0.7, 128, 14, 9),
        (0.7, 200, 20, 10),
        (0.7, 256, 25, 10),
        (0.75, 1, 1, 1),
        (0.75, 2, 1, 2),
        (0.75, 3, 1, 3),
        (0.75, 8, 2, 4),
        (0.75, 16, 2, 6),
        (0.75, 64, 7, 9),
        (0.75, 100, 10, 10),
        (0.75, 128, 11, 11),
        (0.75, 200, 16, 12),
        (0.75, 256, 21, 12),
        (0.8, 1, 1, 1),
        (0.8, 2, 1, 2),
        (0.8, 3, 1, 3),
        (0.8, 8, 1, 7),
        (0.8, 16, 2, 8),
        (0.8, 64, 5, 11),
        (0.8, 100, 8, 12),
        (0.8, 128, 9, 13),
        (0.8, 200, 14, 14),
        (0.8, 256, 17, 15),
        (0.85, 1, 1, 1),
        (0.85, 2, 1, 2),
        (0.85, 3, 1, 3),
        (0.85, 8, 1, 8),
        (0.85, 16, 2, 8),
        (0.85, 64, 4, 15),
        (0.85, 100, 6, 16),
        (0.85, 128, 8, 16),
        (0.85, 200, 11, 18),
        (0.85, 256, 13, 19),
        (0.9, 1, 1, 1),
        (0.9, 2, 1, 2),
        (0.9, 3, 1, 3),
        (0.9, 8, 1, 8),
        (0.9, 16, 1, 15),
        (0.9, 64, 3, 21),
        (0.9, 100, 4, 23),
        (0.9, 128, 5, 25),
        (0.9, 200, 8, 25),
        (0.9, 256, 9, 28),
        (0.95, 1, 1, 1),
        (0.95, 2, 1, 2),
        (0.95, 3, 1, 3),
        (0.95, 8, 1, 8),
        (0.95, 16, 1, 16),
        (0.95, 64, 2, 32),
        (0.95, 100, 3, 33),
        (0.95, 128, 3, 42),
        (0.95, 200, 4, 48),
        (0.95, 256, 5, 51),
        (0.99, 1, 1, 1),
        (0.99, 2, 1, 2),
        (0.99, 3, 1, 3),
        (0.99, 8, 1, 8),
        (0.99, 16, 1, 16),
        (0.99, 64, 1, 64),
        (0.99, 100, 1, 100),
        (0.99, 128, 1, 128),
        (0.99, 200, 1, 166),
        (0.99, 256, 1, 166),
        (1.0, 1, 1, 1),
        (1.0, 2, 1, 2),
        (1.0, 3, 1, 3),
        (1.0, 8, 1, 8),
        (1.0, 16, 1, 16),
        (1.0, 64, 1, 64),
        (1.0, 100, 1, 100),
        (1.0, 128, 1, 128),
        (1.0, 200, 1, 200),
        (1.0, 256, 1, 256),
        (0.7, 512, 42, 12),
        (0.5, 1000, 125, 8),
        (0.123, 300, 77, 2),
        (0.65, 77, 11, 7),
    ];

    /// (threshold, b, r, FP, FP abserr, FN, FN abserr) from `scipy.integrate.quad`, as hex floats.
    const INTEGRALS: &[(f64, usize, usize, &str, &str, &str, &str)] = &[
        (
            0.7,
            25,
            10,
            "0x1.3756c877d0a48p-5",
            "0x1.1e971166073f2p-28",
            "0x1.aa57089ce396ep-6",
            "0x1.c281bbb6901e3p-28",
        ),
        (
            0.7,
            1,
            1,
            "0x1.f5c28f5c28f5bp-3",
            "0x1.87fffffffffffp-49",
            "0x1.70a3d70a3d70cp-5",
            "0x1.2000000000001p-51",
        ),
        (
            0.5,
            2,
            1,
            "0x1.aaaaaaaaaaaabp-3",
            "0x1.4d55555555556p-49",
            "0x1.5555555555555p-5",
            "0x1.0aaaaaaaaaaaap-51",
        ),
        (
            0.3,
            117,
            2,
            "0x1.bf23c30be47c1p-3",
            "0x1.47d5589fc5e4dp-36",
            "0x1.ac81e0961380cp-23",
            "0x1.79b0796b50000p-42",
        ),
        (
            0.9,
            1,
            256,
            "0x1.e7be7dba9899cp-48",
            "0x1.cf31851c16227p-47",
            "0x1.89a989a989c7ep-4",
            "0x1.a26228e600000p-46",
        ),
        (
            0.99,
            3,
            85,
            "0x1.844c58f5ea51ep-7",
            "0x1.c57a070d00000p-45",
            "0x1.3c920e17e6c73p-11",
            "0x1.eea4360558974p-58",
        ),
        (
            0.5,
            256,
            1,
            "0x1.fc03fc03fc040p-2",
            "0x1.ffaefcdc00000p-39",
            "0x0.0p+0",
            "0x0.0p+0",
        ),
        (
            0.7,
            5,
            51,
            "0x1.d1d6701fd783ap-31",
            "0x1.21711c6676f18p-33",
            "0x1.06a356ae552c0p-2",
            "0x1.f7f73c1940000p-35",
        ),
        (
            0.0,
            3,
            3,
            "0x0.0p+0",
            "0x0.0p+0",
            "0x1.283a83a83a83bp-1",
            "0x1.cedb6db6db6dcp-48",
        ),
        (
            1.0,
            3,
            3,
            "0x1.af8af8af8af8bp-2",
            "0x1.5124924924925p-48",
            "0x0.0p+0",
            "0x0.0p+0",
        ),
    ];

    #[test]
    fn mt19937_and_bounded_integers_match_numpy() {
        // numpy 2.4.6: g = RandomState(42); g.randint(lo, hi, dtype=np.uint64) in this order.
        let mut g = Mt19937::new(42);
        let mut draw = |lo: u64, range: u64| bounded_u64(&mut g, lo, range);
        let got: Vec<u64> = [
            (0, 9),
            (0, 9),
            (0, 9),
            (0, 9),
            (0, 9),
            (5, (1 << 40) - 6),
            (5, (1 << 40) - 6),
            (5, (1 << 40) - 6),
            (0, u64::MAX),
            (0, u64::MAX),
            (7, 0),
            (0, u32::MAX as u64),
            (0, u32::MAX as u64),
            (3, (1 << 33) + 1),
            (3, (1 << 33) + 1),
            (1, MERSENNE_PRIME - 2),
            (1, MERSENNE_PRIME - 2),
        ]
        .iter()
        .map(|&(lo, range)| draw(lo, range))
        .collect();
        assert_eq!(
            got,
            [
                6,
                3,
                7,
                4,
                6,
                520361034199,
                919372468559,
                871303592028,
                6155837350739094627,
                2635427562620468887,
                7,
                2795544706,
                88409749,
                4165731076,
                5206956840,
                14365674248606912,
                2162171728270432533
            ]
        );
        let mut g = Mt19937::new(42);
        assert_eq!(randint_u64(&mut g, 0, 1 << 32), 1608637542);
        assert_eq!(randint_u64(&mut g, 0, 1 << 32), 3421126067);
        let firsts = |seed| {
            let mut g = Mt19937::new(seed);
            [g.next_u32(), g.next_u32(), g.next_u32()]
        };
        assert_eq!(firsts(0), [2357136044, 2546248239, 3071714933]);
        assert_eq!(firsts(u32::MAX), [419326371, 479346978, 3918654476]);
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
        for &(t, tok, w, lower, ignore, first, md5) in SIGNATURES {
            let h = hashers
                .entry((tok, w, lower, ignore))
                .or_insert_with(|| all_values(tok, w, lower, ignore.then_some(r"\p{P}")));
            let sig = h.signature(TEXTS[t]);
            let case = format!("text {t} {tok} w={w} lower={lower} ignore={ignore}");
            assert_eq!(sig.len(), 256, "{case}");
            assert_eq!(sig[..4], first, "{case}");
            assert_eq!(sig_md5(&sig), md5, "{case}");
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
        // (see the all-0xffffffff SIGNATURES rows: "", "short text", one CJK "word").
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
        for &(th, b, r, fp, fpe, fn_, fne) in INTEGRALS {
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
        for &(th, n, b, r) in OPTIMAL {
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
