//! `document_simhash_deduplicator`: 64-bit SimHash per sample, and the near-duplicate clusters.
//!
//! Data-Juicer 1.6.1 (`ops/deduplicator/document_simhash_deduplicator.py`, with `simhash-pybind`
//! 0.0.3, the latest release, which its lazy loader installs: no version pin), step by step:
//!
//! 1. The text is lower-cased (Python `str.lower()`, if `lowercase`), then every match of
//!    `ignore_pattern` (Python `regex`, no flags) is deleted, and the text is cut into shingles
//!    exactly as `document_minhash_deduplicator` does ([`Shingler`]: `space`, `punctuation`,
//!    `character`; `window_size` units per shingle, none when the text has fewer units), but
//!    as a **list**: a repeated shingle counts every time.
//! 2. Each shingle's UTF-8 bytes hash to `simhash.unsigned_hash`: the first 8 bytes of their MD5
//!    digest read as a big-endian u64 ([`unsigned_hash`]).
//! 3. `simhash.compute`: bit i of the SimHash is set iff more shingle hashes have bit i set than
//!    clear ([`compute`]); a text without shingles has SimHash 0, so all texts shorter than the
//!    window (and, with `space`, texts without ASCII spaces such as unsegmented Chinese) are one
//!    cluster.
//! 4. `__dj__simhash` is `str(np.uint64(simhash))`: the value as a decimal string.
//! 5. `simhash.find_all(hashes, num_blocks, hamming_distance)` over the **set** of all rows' values:
//!    the 64 bits are cut into `num_blocks` blocks (block i = bits `[i*64/n, (i+1)*64/n)`); for
//!    every choice of `num_blocks - hamming_distance` blocks, the values are permuted so those
//!    blocks lead, sorted, and every two values with the same leading blocks and at most
//!    `hamming_distance` differing bits are a match ([`for_each_match`]). Two distinct values at
//!    Hamming distance `<= hamming_distance` agree on at least `num_blocks - hamming_distance`
//!    blocks, so the matches are exactly the pairs of distinct values within that distance.
//! 6. Values are clustered by breadth-first search over the matches (= connected components,
//!    [`components`]); a value without a match is its own cluster. Of each cluster the first row
//!    in dataset order is kept (rows with equal values are in one cluster, so exact duplicates go
//!    too).
//!
//! Deliberate deviations (recipe-time errors where Data-Juicer fails later or never finishes):
//! * `hamming_distance >= num_blocks` and `num_blocks > 64` are rejected when the recipe is built;
//!   Data-Juicer accepts them and `find_all` raises `ValueError` when the op runs on two or more
//!   rows (a one-row dataset skips the search).
//! * Data-Juicer reuses an input column already named `__dj__simhash` instead of hashing; here the
//!   hash is always computed from the text.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::json;

use super::md5x16::md5_many;
use super::minhash::{Shingler, Tokenization, positive, shingle_param_specs, shingle_params};
use crate::columns::SIMHASH_COLUMN;
use crate::operator::{DedupKind, DedupOp, Operator};
use crate::params::{ParamError, ParamSpec, ParamType, Params};
use crate::spec::{ModelUse, OpKind, OpSpec};
use crate::udf::{OpUdf, TextMapper, UdfIdentity};

/// Bits of a SimHash value.
pub(crate) const BITS: usize = 64;

/// `simhash.unsigned_hash` of a message from its MD5 digest: the digest's first 8 bytes,
/// big-endian.
fn unsigned_hash_of(digest: &[u8; 16]) -> u64 {
    u64::from_be_bytes(digest[..8].try_into().expect("8 of 16 bytes"))
}

/// `simhash.unsigned_hash(data)`.
#[cfg(test)]
pub(crate) fn unsigned_hash(data: &[u8]) -> u64 {
    use md5::{Digest, Md5};
    unsigned_hash_of(&Md5::digest(data).into())
}

/// `simhash.compute(hashes)`: bit i is set iff more of the hashes have bit i set than clear
/// (a tie, and no hashes at all, leave it clear).
pub fn compute(hashes: impl IntoIterator<Item = u64>) -> u64 {
    let mut counts = BitCounts::default();
    hashes.into_iter().for_each(|h| counts.add(h));
    counts.simhash()
}

/// Per bit position, how many hashes have the bit set; and how many hashes there are.
#[derive(Debug, Clone, Copy)]
struct BitCounts {
    ones: [u32; BITS],
    hashes: u64,
}

impl Default for BitCounts {
    fn default() -> Self {
        BitCounts {
            ones: [0; BITS],
            hashes: 0,
        }
    }
}

impl BitCounts {
    /// Counts `h`'s set bits: a branch-free sum per position, which the compiler vectorizes.
    #[inline]
    fn add(&mut self, h: u64) {
        for (i, ones) in self.ones.iter_mut().enumerate() {
            *ones += ((h >> i) & 1) as u32;
        }
        self.hashes += 1;
    }

    /// Bit i set where more hashes have it set than clear.
    fn simhash(&self) -> u64 {
        self.ones
            .iter()
            .enumerate()
            .filter(|&(_, &ones)| 2 * u64::from(ones) > self.hashes)
            .fold(0, |acc, (i, _)| acc | (1u64 << i))
    }
}

/// Text -> SimHash, as `DocumentSimhashDeduplicator.compute_hash` does.
#[derive(Debug)]
pub(crate) struct SimHasher {
    shingler: Shingler,
}

impl SimHasher {
    /// Errors (as text) for a zero window and an ignore pattern that does not compile.
    pub fn new(
        tokenization: Tokenization,
        window_size: usize,
        lowercase: bool,
        ignore_pattern: Option<&str>,
    ) -> Result<SimHasher, String> {
        Ok(SimHasher {
            shingler: Shingler::new(tokenization, window_size, lowercase, ignore_pattern)?,
        })
    }

    /// The [`unsigned_hash`] of every shingle, in text order, duplicates included.
    #[cfg(test)]
    pub(crate) fn shingle_hashes(&self, text: &str) -> Vec<u64> {
        let mut hashes = Vec::new();
        self.shingler
            .for_each_shingle(text, |s| hashes.push(unsigned_hash(s)));
        hashes
    }

    /// The 64-bit SimHash of the text ([`compute`] over [`Self::shingle_hashes`]). The shingles
    /// are gathered and their MD5s computed sixteen at a time ([`md5_many`]): one MD5 at a time
    /// was a quarter of the dedup's work.
    pub fn simhash(&self, text: &str) -> u64 {
        let mut bytes = Vec::new();
        let mut ends = Vec::new();
        self.shingler.for_each_shingle(text, |s| {
            bytes.extend_from_slice(s);
            ends.push(bytes.len());
        });
        let mut start = 0;
        let shingles: Vec<&[u8]> = ends
            .iter()
            .map(|&end| &bytes[std::mem::replace(&mut start, end)..end])
            .collect();
        let mut counts = BitCounts::default();
        for digest in md5_many(&shingles) {
            counts.add(unsigned_hash_of(&digest));
        }
        counts.simhash()
    }
}

// ---------------------------------------------------------------------------------------------
// Near-duplicate search: simhash-cpp's block permutations
// ---------------------------------------------------------------------------------------------

/// Checks `find_all`'s constraints on its parameters (it throws `std::invalid_argument`).
pub(crate) fn check_blocks(num_blocks: usize, hamming_distance: usize) -> Result<(), String> {
    if num_blocks > BITS {
        return Err(format!(
            "num_blocks must not exceed {BITS}, got {num_blocks}"
        ));
    }
    if num_blocks <= hamming_distance {
        return Err(format!(
            "num_blocks ({num_blocks}) must be greater than hamming_distance ({hamming_distance})"
        ));
    }
    Ok(())
}

/// One of simhash-cpp's permutations: the chosen `num_blocks - hamming_distance` blocks moved to
/// the top bits (in block order), then the other blocks (in block order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Permutation {
    /// `(mask, offset)` per block in permuted order: `apply` moves `h & mask` left by `offset`
    /// (right when negative).
    blocks: Vec<(u64, i32)>,
    search_mask: u64,
}

/// The mask of block `i` of `n`: bits `[i*64/n, (i+1)*64/n)`.
fn block_mask(i: usize, n: usize) -> u64 {
    let (start, end) = (i * BITS / n, (i + 1) * BITS / n);
    (start..end).fold(0, |m, b| m | (1u64 << b))
}

impl Permutation {
    /// The permutation leading with blocks `chosen` (ascending block indices) of `num_blocks`.
    pub fn new(num_blocks: usize, chosen: &[usize]) -> Permutation {
        let order = chosen
            .iter()
            .copied()
            .chain((0..num_blocks).filter(|b| !chosen.contains(b)));
        let mut width = 0i32;
        let mut lead = 0u32;
        let mut blocks = Vec::with_capacity(num_blocks);
        for (k, b) in order.enumerate() {
            let mask = block_mask(b, num_blocks);
            let low = mask.trailing_zeros() as i32;
            width += mask.count_ones() as i32;
            if k < chosen.len() {
                lead += mask.count_ones();
            }
            blocks.push((mask, 64 - width - low));
        }
        let search_mask = if lead == 0 {
            0
        } else {
            u64::MAX << (64 - lead)
        };
        Permutation {
            blocks,
            search_mask,
        }
    }

    pub fn apply(&self, h: u64) -> u64 {
        self.blocks.iter().fold(0, |acc, &(mask, off)| {
            acc | if off >= 0 {
                (h & mask) << off
            } else {
                (h & mask) >> -off
            }
        })
    }

    pub fn reverse(&self, p: u64) -> u64 {
        self.blocks.iter().fold(0, |acc, &(mask, off)| {
            acc | if off >= 0 {
                (p & (mask << off)) >> off
            } else {
                (p & (mask >> -off)) << -off
            }
        })
    }

    /// The leading bits (the chosen blocks) that must be equal for a match.
    pub fn search_mask(&self) -> u64 {
        self.search_mask
    }
}

/// Calls `f` with every combination of `k` of `0..n`, in lexicographic order (Python's
/// `itertools.combinations`, as simhash-cpp's `choose`).
fn for_each_combination(n: usize, k: usize, mut f: impl FnMut(&[usize])) {
    let mut combos = Combinations::new(n, k);
    while let Some(c) = combos.next_combination() {
        f(c);
    }
}

/// The combinations of `k` of `0..n` in lexicographic order, one at a time.
struct Combinations {
    n: usize,
    idx: Vec<usize>,
    started: bool,
    done: bool,
}

impl Combinations {
    fn new(n: usize, k: usize) -> Combinations {
        Combinations {
            n,
            idx: (0..k).collect(),
            started: false,
            done: k > n,
        }
    }

    fn next_combination(&mut self) -> Option<&[usize]> {
        if self.done {
            return None;
        }
        if self.started {
            let (n, k) = (self.n, self.idx.len());
            let Some(i) = (0..k).rev().find(|&i| self.idx[i] != i + n - k) else {
                self.done = true;
                return None;
            };
            self.idx[i] += 1;
            for j in i + 1..k {
                self.idx[j] = self.idx[j - 1] + 1;
            }
        }
        self.started = true;
        Some(&self.idx)
    }
}

/// simhash-cpp's permutations for `num_blocks` and `hamming_distance`, in its order: one per
/// choice of `num_blocks - hamming_distance` leading blocks. Every pair of distinct values within
/// the distance shares the leading blocks ([`Permutation::search_mask`]) of at least one. For a
/// search that cannot hold all values in memory (the dedup node sorts each permutation on disk).
pub fn permutations(
    num_blocks: usize,
    hamming_distance: usize,
) -> Result<impl Iterator<Item = Permutation>, String> {
    check_blocks(num_blocks, hamming_distance)?;
    let mut combos = Combinations::new(num_blocks, num_blocks - hamming_distance);
    Ok(std::iter::from_fn(move || {
        combos
            .next_combination()
            .map(|chosen| Permutation::new(num_blocks, chosen))
    }))
}

/// Whether two SimHash values are within `hamming_distance` bits.
pub fn within(a: u64, b: u64, hamming_distance: usize) -> bool {
    (a ^ b).count_ones() as usize <= hamming_distance
}

/// `n choose k`, saturating.
fn binomial(n: usize, k: usize) -> u128 {
    let k = k.min(n - k.min(n));
    (0..k).fold(1u128, |acc, i| {
        acc.saturating_mul((n - i) as u128) / (i as u128 + 1)
    })
}

/// How [`for_each_match`] finds the pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Search {
    /// simhash-cpp's block permutations.
    Permutations,
    /// Every pair compared.
    AllPairs,
}

/// Calls `f(i, j)` (`i < j`) for every pair of `hashes` (sorted, distinct) at Hamming distance
/// `<= hamming_distance`: the pairs `simhash.find_all(hashes, num_blocks, hamming_distance)`
/// returns (possibly several times each). Uses simhash-cpp's block permutations: per
/// permutation, one sort of the permuted values and a pairwise check inside each run of equal
/// leading blocks, about `C(num_blocks, hamming_distance) * n log n` work for spread-out values
/// (runs are short). Only when there are more permutations than values (e.g. `num_blocks` 20,
/// `hamming_distance` 10: 184756 permutations), all `n (n - 1) / 2` pairs are compared instead,
/// which is then cheaper; both find exactly the pairs within the distance.
pub(crate) fn for_each_match(
    hashes: &[u64],
    num_blocks: usize,
    hamming_distance: usize,
    f: impl FnMut(usize, usize),
) -> Result<(), String> {
    check_blocks(num_blocks, hamming_distance)?;
    let search = if binomial(num_blocks, hamming_distance) > hashes.len() as u128 {
        Search::AllPairs
    } else {
        Search::Permutations
    };
    search_matches(hashes, num_blocks, hamming_distance, search, f);
    Ok(())
}

fn search_matches(
    hashes: &[u64],
    num_blocks: usize,
    hamming_distance: usize,
    search: Search,
    mut f: impl FnMut(usize, usize),
) {
    debug_assert!(hashes.windows(2).all(|w| w[0] < w[1]));
    let n = hashes.len();
    let d = hamming_distance as u32;
    let within = |a: u64, b: u64| (a ^ b).count_ones() <= d;
    if search == Search::AllPairs {
        for i in 0..n {
            for j in i + 1..n {
                if within(hashes[i], hashes[j]) {
                    f(i, j);
                }
            }
        }
        return;
    }
    let index = |h: u64| {
        hashes
            .binary_search(&h)
            .expect("a permuted value reverses to an input value")
    };
    let mut permuted = vec![0u64; n];
    for_each_combination(num_blocks, num_blocks - hamming_distance, |chosen| {
        let p = Permutation::new(num_blocks, chosen);
        for (dst, &h) in permuted.iter_mut().zip(hashes) {
            *dst = p.apply(h);
        }
        permuted.sort_unstable();
        let mask = p.search_mask();
        let mut start = 0;
        while start < n {
            let prefix = permuted[start] & mask;
            let end = start
                + permuted[start..]
                    .iter()
                    .take_while(|&&v| v & mask == prefix)
                    .count();
            for a in start..end {
                for b in a + 1..end {
                    if within(permuted[a], permuted[b]) {
                        let (x, y) = (index(p.reverse(permuted[a])), index(p.reverse(permuted[b])));
                        f(x.min(y), x.max(y));
                    }
                }
            }
            start = end;
        }
    });
}

/// `simhash.find_all` as a sorted list of `(smaller, larger)` value pairs (for tests and tools;
/// the dedup node uses [`components`]).
pub fn find_all(
    hashes: &[u64],
    num_blocks: usize,
    hamming_distance: usize,
) -> Result<Vec<(u64, u64)>, String> {
    let mut uniq = hashes.to_vec();
    uniq.sort_unstable();
    uniq.dedup();
    let mut pairs = Vec::new();
    for_each_match(&uniq, num_blocks, hamming_distance, |i, j| {
        pairs.push((uniq[i], uniq[j]))
    })?;
    pairs.sort_unstable();
    pairs.dedup();
    Ok(pairs)
}

/// The cluster of every value of `hashes` (sorted, distinct): `out[i]` is the smallest index of
/// the connected component of `hashes[i]` in the graph of [`for_each_match`] pairs. Memory: 4
/// bytes per value plus one permuted copy (8 bytes per value).
pub fn components(
    hashes: &[u64],
    num_blocks: usize,
    hamming_distance: usize,
) -> Result<Vec<u32>, String> {
    let n = u32::try_from(hashes.len())
        .map_err(|_| format!("too many distinct SimHash values ({})", hashes.len()))?;
    let mut parent: Vec<u32> = (0..n).collect();
    fn find(parent: &mut [u32], mut x: u32) -> u32 {
        while parent[x as usize] != x {
            parent[x as usize] = parent[parent[x as usize] as usize];
            x = parent[x as usize];
        }
        x
    }
    for_each_match(hashes, num_blocks, hamming_distance, |i, j| {
        let (a, b) = (find(&mut parent, i as u32), find(&mut parent, j as u32));
        if a != b {
            parent[a.max(b) as usize] = a.min(b);
        }
    })?;
    Ok((0..n).map(|i| find(&mut parent, i)).collect())
}

// ---------------------------------------------------------------------------------------------
// The UDF and the op
// ---------------------------------------------------------------------------------------------

impl TextMapper for SimHasher {
    /// `str(np.uint64(simhash))`.
    fn map<'a>(&self, text: &'a str) -> Cow<'a, str> {
        Cow::Owned(self.simhash(text).to_string())
    }
}

const TOKENIZATIONS: &[&str] = &["space", "punctuation", "character"];

pub(crate) fn document_simhash_deduplicator_spec() -> OpSpec {
    OpSpec {
        name: "document_simhash_deduplicator",
        kind: OpKind::Deduplicator,
        model_use: ModelUse::None,
        params: || {
            use ParamType::*;
            let mut params = shingle_param_specs(
                TOKENIZATIONS,
                "shingle units: space, punctuation or character",
                6,
            );
            params.extend([
                ParamSpec::new(
                    "num_blocks",
                    Int,
                    json!(6),
                    "blocks the 64 SimHash bits are cut into for the near-duplicate search (at most 64)",
                ),
                ParamSpec::new(
                    "hamming_distance",
                    Int,
                    json!(4),
                    "samples whose SimHashes differ in at most this many bits are near duplicates (less than num_blocks)",
                ),
            ]);
            params
        },
        build: build_document_simhash_deduplicator,
        doc: "Near-duplicate dedup with SimHash: samples whose 64-bit SimHashes are within \
              hamming_distance bits are connected; the first sample of each cluster is kept.",
    }
}

fn build_document_simhash_deduplicator(p: &Params) -> Result<Operator, ParamError> {
    let (tokenization, window_size, lowercase) = shingle_params(p)?;
    let num_blocks = positive(p, "num_blocks", false)?.unwrap_or(1);
    let hamming_distance = positive(p, "hamming_distance", false)?.unwrap_or(1);
    check_blocks(num_blocks, hamming_distance).map_err(|e| p.invalid("hamming_distance", e))?;
    let hasher = SimHasher::new(
        tokenization,
        window_size,
        lowercase,
        p.str("ignore_pattern"),
    )
    .map_err(|e| p.invalid("ignore_pattern", format!("invalid regular expression: {e}")))?;
    let id = UdfIdentity::of(p, "");
    Ok(Operator::Deduplicator(DedupOp {
        hash_column: SIMHASH_COLUMN,
        hash_udf: OpUdf::mapper(id, Arc::new(hasher)),
        kind: DedupKind::SimHash {
            num_blocks,
            hamming_distance,
        },
        reads: crate::DedupReads::Text,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{build, map_texts};
    use serde_json::json;

    /// Texts hashed by Data-Juicer 1.6.1's `DocumentSimhashDeduplicator(**config).compute_hash`.
    const TEXTS: &[&str] = &[
        "",
        "hello",
        "The quick brown fox jumps over the lazy dog near the river bank today.",
        "The quick brown fox jumps over the lazy dog near the river bank today!",
        "THE QUICK BROWN FOX jumps over the lazy dog near the river bank today.",
        "The quick brown fox leaps over the lazy dog near the river bank today.",
        "a b c d e f",
        "a  b\tc d\ne f g",
        "Hello, World! 2024 is here; costs $12.50 (approx.) — “quoted” text…",
        "数据处理是机器学习的重要步骤，高质量的数据带来更好的模型。",
        "数据处理是机器学习的关键步骤，高质量的数据带来更好的模型。",
        "İstanbul ΣΑΣ straße ﬁ",
        "x y z x y z x y z x y z x y z",
    ];

    /// (op parameters, `__dj__simhash` of every text of TEXTS), from Data-Juicer 1.6.1 with
    /// simhash-pybind 0.0.3.
    fn cases() -> Vec<(serde_json::Value, [&'static str; 13])> {
        vec![
            (
                json!({}),
                [
                    "0",
                    "0",
                    "17065830946702231527",
                    "17210016193194100679",
                    "17065830946702231527",
                    "14687662096167831328",
                    "7744601435989463703",
                    "0",
                    "5370394911740033",
                    "0",
                    "0",
                    "0",
                    "12978185353757714259",
                ],
            ),
            (
                json!({"tokenization": "punctuation", "ignore_pattern": "\\d"}),
                [
                    "0",
                    "0",
                    "0",
                    "0",
                    "0",
                    "0",
                    "0",
                    "0",
                    "12490797355855563029",
                    "0",
                    "0",
                    "0",
                    "0",
                ],
            ),
            (
                json!({"tokenization": "character", "window_size": 3}),
                [
                    "0",
                    "8080384611582502008",
                    "1207568480256378409",
                    "1207564082209875497",
                    "1207568480256378409",
                    "1207586072574543401",
                    "2703816041955070838",
                    "14247281804246843540",
                    "10901315166925345172",
                    "14654315286358384017",
                    "14924513671810243715",
                    "5055194376946893387",
                    "16862469007546145356",
                ],
            ),
            (
                json!({"lowercase": false, "window_size": 2}),
                [
                    "0",
                    "0",
                    "666911520979435531",
                    "11045492048774316035",
                    "5298287308105937587",
                    "11034796478548164759",
                    "387837735762531127",
                    "4943316354621575298",
                    "18348342280949121080",
                    "0",
                    "0",
                    "6382298579765417975",
                    "16776373960363364876",
                ],
            ),
            (
                json!({"tokenization": "character", "ignore_pattern": "\\p{P}", "window_size": 4}),
                [
                    "0",
                    "146650666990829600",
                    "2686220870319588248",
                    "2686220870319588248",
                    "2686220870319588248",
                    "3297855961734300568",
                    "2384368553785868323",
                    "12884180415561955363",
                    "5460678868379121952",
                    "16163721515776099615",
                    "14418585494884320533",
                    "12909704976504032889",
                    "7593645430878273820",
                ],
            ),
        ]
    }

    #[test]
    fn simhash_values_match_data_juicer() {
        for (params, want) in cases() {
            let op = build("document_simhash_deduplicator", params.clone()).unwrap();
            let texts: Vec<Option<&str>> = TEXTS.iter().map(|t| Some(*t)).collect();
            let got = map_texts(&op, &texts);
            for ((text, got), want) in TEXTS.iter().zip(got).zip(want) {
                assert_eq!(got.as_deref(), Some(want), "{params} {text:?}");
            }
        }
    }

    #[test]
    fn unsigned_hash_and_compute_match_the_library() {
        assert_eq!(unsigned_hash("".as_bytes()), 15284527576400310788);
        assert_eq!(unsigned_hash("a".as_bytes()), 919145239626757800);
        assert_eq!(unsigned_hash("hello world".as_bytes()), 6824707963431612112);
        assert_eq!(unsigned_hash("数据".as_bytes()), 973630225519355711);
        assert_eq!(compute([] as [u64; 0]), 0);
        assert_eq!(compute([1u64] as [u64; 1]), 1);
        assert_eq!(compute([1u64, 2u64] as [u64; 2]), 0);
        assert_eq!(compute([1u64, 3u64, 2u64] as [u64; 3]), 3);
        assert_eq!(
            compute([18446744073709551615u64, 0u64, 9223372036854775808u64] as [u64; 3]),
            9223372036854775808
        );
    }

    /// 40 random values and 60 near copies (1 to 7 flipped bits) of the first 20, plus one
    /// repeat; `simhash.find_all(VALUES, num_blocks, hamming_distance)` of simhash-pybind 0.0.3.
    const VALUES: &[u64] = &[
        17485029721327973432,
        7283207964119141687,
        890727360438182992,
        15149836622520594227,
        1736392818365009963,
        10750541312280087032,
        16781078052021535861,
        3960482443532127989,
        1585446675937841368,
        7713914763314685786,
        4439448776366754703,
        10165027665383847897,
        1090396360377453094,
        10430779633273967791,
        17477362246067780643,
        11632994891556335705,
        10754394637803157173,
        1141153371300629929,
        10801332806156616911,
        914761360679426580,
        4078239883182463692,
        10268654918125279152,
        2456641775679608523,
        7731750658069747094,
        9973894190648387236,
        10531498782278263232,
        10334922596725336632,
        12580729232405932079,
        1901042282212365707,
        10536861175493410705,
        3465608723044488519,
        1797276903956378115,
        13136125050165459753,
        10410757471710933047,
        11418711589407294900,
        9157231070389319135,
        9808507260218814804,
        14337340360533389438,
        8588838448975835887,
        17034486841352872401,
        17484959079844983864,
        8117533427573895224,
        17476022522073200184,
        7283216760211639607,
        7292214063862255383,
        16218367217008250167,
        890727360438185040,
        2043648865045030352,
        1035387287806125140,
        5926499770040020787,
        15149836622654811955,
        5926464656532712243,
        1878256206627180587,
        1781428814638583851,
        1736674293878067243,
        10750541312284281336,
        10750541312280087032,
        15362227330707474936,
        16772211530117481588,
        17070433228568396853,
        14478612742528377973,
        4034791837434072949,
        3960491239625133813,
        3960482443532664500,
        1585446676004950736,
        1585816116139217112,
        6773593446668669144,
        5408071204345439066,
        7713923559407707994,
        5408001376700819294,
        4439449051244661639,
        4439554337802421135,
        4437192579295087503,
        941620444660299737,
        11462064315100100569,
        10165027665115403225,
        2243317865017854502,
        3396239369524038183,
        1090941718144863782,
        12701724143392693423,
        10433031433086603439,
        10430779633273443495,
        16900883901579099171,
        17477362246067837989,
        17477362241621818411,
        11632994755191124057,
        11912180693647962329,
        11551930098272645213,
        9601473133199718068,
        13060239846040131125,
        10754394670032188949,
        924982788176551073,
        3302881233207102889,
        932862988046536105,
        10801332807230358735,
        10801332531412960975,
        11377863922640159951,
        5527573279282088468,
        871950775973894676,
        914690991935246864,
        17485029721327973432,
    ];

    /// `((num_blocks, hamming_distance), pairs)`.
    type FindAllCase = ((usize, usize), Vec<(u64, u64)>);

    fn find_all_reference() -> Vec<FindAllCase> {
        vec![
            (
                (6, 4),
                vec![
                    (890727360438182992, 890727360438185040),
                    (890727360438182992, 2043648865045030352),
                    (890727360438185040, 2043648865045030352),
                    (914690991935246864, 914761360679426580),
                    (914761360679426580, 5527573279282088468),
                    (941620444660299737, 10165027665383847897),
                    (1090396360377453094, 1090941718144863782),
                    (1090396360377453094, 2243317865017854502),
                    (1090396360377453094, 3396239369524038183),
                    (1585446675937841368, 1585446676004950736),
                    (1585446675937841368, 6773593446668669144),
                    (1736392818365009963, 1736674293878067243),
                    (1736392818365009963, 1781428814638583851),
                    (1736392818365009963, 1878256206627180587),
                    (3960482443532127989, 3960491239625133813),
                    (4439448776366754703, 4439449051244661639),
                    (5408071204345439066, 7713914763314685786),
                    (5926499770040020787, 15149836622520594227),
                    (7283207964119141687, 7283216760211639607),
                    (7283207964119141687, 7292214063862255383),
                    (7283207964119141687, 16218367217008250167),
                    (7713914763314685786, 7713923559407707994),
                    (10165027665115403225, 10165027665383847897),
                    (10430779633273443495, 10430779633273967791),
                    (10430779633273967791, 10433031433086603439),
                    (10750541312280087032, 10750541312284281336),
                    (10750541312280087032, 15362227330707474936),
                    (10750541312284281336, 15362227330707474936),
                    (10801332531412960975, 10801332806156616911),
                    (10801332806156616911, 10801332807230358735),
                    (11632994755191124057, 11632994891556335705),
                    (14478612742528377973, 16781078052021535861),
                    (15149836622520594227, 15149836622654811955),
                    (17476022522073200184, 17485029721327973432),
                    (17477362241621818411, 17477362246067780643),
                    (17484959079844983864, 17485029721327973432),
                ],
            ),
            (
                (6, 1),
                vec![
                    (890727360438182992, 890727360438185040),
                    (7713914763314685786, 7713923559407707994),
                    (10750541312280087032, 10750541312284281336),
                    (10750541312280087032, 15362227330707474936),
                    (10801332806156616911, 10801332807230358735),
                    (15149836622520594227, 15149836622654811955),
                ],
            ),
            (
                (3, 2),
                vec![
                    (890727360438182992, 890727360438185040),
                    (1090396360377453094, 2243317865017854502),
                    (1736392818365009963, 1878256206627180587),
                    (3960482443532127989, 3960491239625133813),
                    (4439448776366754703, 4439449051244661639),
                    (7283207964119141687, 7283216760211639607),
                    (7713914763314685786, 7713923559407707994),
                    (10430779633273443495, 10430779633273967791),
                    (10750541312280087032, 10750541312284281336),
                    (10750541312280087032, 15362227330707474936),
                    (10750541312284281336, 15362227330707474936),
                    (10801332806156616911, 10801332807230358735),
                    (11632994755191124057, 11632994891556335705),
                    (15149836622520594227, 15149836622654811955),
                ],
            ),
            (
                (10, 3),
                vec![
                    (890727360438182992, 890727360438185040),
                    (890727360438182992, 2043648865045030352),
                    (914690991935246864, 914761360679426580),
                    (1090396360377453094, 2243317865017854502),
                    (1090396360377453094, 3396239369524038183),
                    (1585446675937841368, 1585446676004950736),
                    (1736392818365009963, 1736674293878067243),
                    (1736392818365009963, 1781428814638583851),
                    (1736392818365009963, 1878256206627180587),
                    (3960482443532127989, 3960491239625133813),
                    (4439448776366754703, 4439449051244661639),
                    (7283207964119141687, 7283216760211639607),
                    (7283207964119141687, 16218367217008250167),
                    (7713914763314685786, 7713923559407707994),
                    (10165027665115403225, 10165027665383847897),
                    (10430779633273443495, 10430779633273967791),
                    (10750541312280087032, 10750541312284281336),
                    (10750541312280087032, 15362227330707474936),
                    (10750541312284281336, 15362227330707474936),
                    (10801332806156616911, 10801332807230358735),
                    (11632994755191124057, 11632994891556335705),
                    (15149836622520594227, 15149836622654811955),
                    (17476022522073200184, 17485029721327973432),
                ],
            ),
            (
                (64, 5),
                vec![
                    (890727360438182992, 890727360438185040),
                    (890727360438182992, 2043648865045030352),
                    (890727360438185040, 2043648865045030352),
                    (914690991935246864, 914761360679426580),
                    (914761360679426580, 5527573279282088468),
                    (941620444660299737, 10165027665383847897),
                    (1090396360377453094, 1090941718144863782),
                    (1090396360377453094, 2243317865017854502),
                    (1090396360377453094, 3396239369524038183),
                    (1585446675937841368, 1585446676004950736),
                    (1585446675937841368, 1585816116139217112),
                    (1585446675937841368, 6773593446668669144),
                    (1736392818365009963, 1736674293878067243),
                    (1736392818365009963, 1781428814638583851),
                    (1736392818365009963, 1878256206627180587),
                    (1736674293878067243, 1878256206627180587),
                    (1781428814638583851, 1878256206627180587),
                    (2243317865017854502, 3396239369524038183),
                    (3960482443532127989, 3960482443532664500),
                    (3960482443532127989, 3960491239625133813),
                    (4437192579295087503, 4439448776366754703),
                    (4439448776366754703, 4439449051244661639),
                    (5408071204345439066, 7713914763314685786),
                    (5408071204345439066, 7713923559407707994),
                    (5926464656532712243, 15149836622520594227),
                    (5926499770040020787, 15149836622520594227),
                    (5926499770040020787, 15149836622654811955),
                    (7283207964119141687, 7283216760211639607),
                    (7283207964119141687, 7292214063862255383),
                    (7283207964119141687, 16218367217008250167),
                    (7283216760211639607, 16218367217008250167),
                    (7713914763314685786, 7713923559407707994),
                    (9601473133199718068, 10754394637803157173),
                    (10165027665115403225, 10165027665383847897),
                    (10165027665383847897, 11462064315100100569),
                    (10430779633273443495, 10430779633273967791),
                    (10430779633273967791, 10433031433086603439),
                    (10750541312280087032, 10750541312284281336),
                    (10750541312280087032, 15362227330707474936),
                    (10750541312284281336, 15362227330707474936),
                    (10754394637803157173, 10754394670032188949),
                    (10754394637803157173, 13060239846040131125),
                    (10801332531412960975, 10801332806156616911),
                    (10801332531412960975, 10801332807230358735),
                    (10801332806156616911, 10801332807230358735),
                    (11632994755191124057, 11632994891556335705),
                    (14478612742528377973, 16781078052021535861),
                    (15149836622520594227, 15149836622654811955),
                    (16781078052021535861, 17070433228568396853),
                    (16900883901579099171, 17477362246067780643),
                    (17476022522073200184, 17485029721327973432),
                    (17477362241621818411, 17477362246067780643),
                    (17477362246067780643, 17477362246067837989),
                    (17484959079844983864, 17485029721327973432),
                ],
            ),
            (
                (7, 6),
                vec![
                    (871950775973894676, 914761360679426580),
                    (890727360438182992, 890727360438185040),
                    (890727360438182992, 1035387287806125140),
                    (890727360438182992, 2043648865045030352),
                    (890727360438185040, 2043648865045030352),
                    (914690991935246864, 914761360679426580),
                    (914761360679426580, 5527573279282088468),
                    (941620444660299737, 10165027665383847897),
                    (1090396360377453094, 1090941718144863782),
                    (1090396360377453094, 2243317865017854502),
                    (1090396360377453094, 3396239369524038183),
                    (1090941718144863782, 2243317865017854502),
                    (1141153371300629929, 3302881233207102889),
                    (1585446675937841368, 1585446676004950736),
                    (1585446675937841368, 1585816116139217112),
                    (1585446675937841368, 6773593446668669144),
                    (1736392818365009963, 1736674293878067243),
                    (1736392818365009963, 1781428814638583851),
                    (1736392818365009963, 1878256206627180587),
                    (1736674293878067243, 1781428814638583851),
                    (1736674293878067243, 1878256206627180587),
                    (1781428814638583851, 1878256206627180587),
                    (2243317865017854502, 3396239369524038183),
                    (3960482443532127989, 3960482443532664500),
                    (3960482443532127989, 3960491239625133813),
                    (3960482443532127989, 4034791837434072949),
                    (4437192579295087503, 4439448776366754703),
                    (4439448776366754703, 4439449051244661639),
                    (4439448776366754703, 4439554337802421135),
                    (5408001376700819294, 7713914763314685786),
                    (5408071204345439066, 7713914763314685786),
                    (5408071204345439066, 7713923559407707994),
                    (5926464656532712243, 15149836622520594227),
                    (5926464656532712243, 15149836622654811955),
                    (5926499770040020787, 15149836622520594227),
                    (5926499770040020787, 15149836622654811955),
                    (7283207964119141687, 7283216760211639607),
                    (7283207964119141687, 7292214063862255383),
                    (7283207964119141687, 16218367217008250167),
                    (7283216760211639607, 7292214063862255383),
                    (7283216760211639607, 16218367217008250167),
                    (7713914763314685786, 7713923559407707994),
                    (8117533427573895224, 17484959079844983864),
                    (8117533427573895224, 17485029721327973432),
                    (9601473133199718068, 10754394637803157173),
                    (10165027665115403225, 10165027665383847897),
                    (10165027665383847897, 11462064315100100569),
                    (10430779633273443495, 10430779633273967791),
                    (10430779633273443495, 10433031433086603439),
                    (10430779633273967791, 10433031433086603439),
                    (10750541312280087032, 10750541312284281336),
                    (10750541312280087032, 15362227330707474936),
                    (10750541312284281336, 15362227330707474936),
                    (10754394637803157173, 10754394670032188949),
                    (10754394637803157173, 13060239846040131125),
                    (10801332531412960975, 10801332806156616911),
                    (10801332531412960975, 10801332807230358735),
                    (10801332806156616911, 10801332807230358735),
                    (11551930098272645213, 11632994891556335705),
                    (11632994755191124057, 11632994891556335705),
                    (14478612742528377973, 16781078052021535861),
                    (15149836622520594227, 15149836622654811955),
                    (16781078052021535861, 17070433228568396853),
                    (16900883901579099171, 17477362246067780643),
                    (17476022522073200184, 17485029721327973432),
                    (17477362241621818411, 17477362246067780643),
                    (17477362246067780643, 17477362246067837989),
                    (17484959079844983864, 17485029721327973432),
                ],
            ),
        ]
    }
    #[test]
    fn find_all_matches_the_library() {
        for ((nb, d), want) in find_all_reference() {
            assert_eq!(
                find_all(VALUES, nb, d).unwrap(),
                want,
                "num_blocks {nb}, distance {d}"
            );
        }
    }

    /// A small xorshift generator for the property tests.
    fn values(seed: u64, n: usize) -> Vec<u64> {
        let mut x = seed;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut out: Vec<u64> = (0..n / 2).map(|_| next()).collect();
        // Near copies: a few bits flipped, in the low and high blocks alike.
        for i in 0..n - n / 2 {
            let mut v = out[i % (n / 2)];
            for _ in 0..=(next() % 6) {
                v ^= 1 << (next() % 64);
            }
            out.push(v);
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    #[test]
    fn permutation_search_finds_exactly_the_pairs_within_the_distance() {
        for (nb, d) in [(6, 4), (6, 1), (3, 2), (10, 3), (64, 2), (7, 6), (1, 0)] {
            let v = values(nb as u64 * 1000 + d as u64 + 1, 400);
            let collect = |search| {
                let mut pairs = Vec::new();
                search_matches(&v, nb, d, search, |i, j| pairs.push((i, j)));
                pairs.sort_unstable();
                pairs.dedup();
                pairs
            };
            let perm = collect(Search::Permutations);
            assert_eq!(
                perm,
                collect(Search::AllPairs),
                "num_blocks {nb}, distance {d}"
            );
            assert!(perm.iter().all(|&(i, j)| i < j));
            if d > 0 {
                assert!(!perm.is_empty());
            }
        }
    }

    #[test]
    fn permutations_move_the_chosen_blocks_to_the_top() {
        // 6 blocks of 10/11 bits: [0,10) [10,21) [21,32) [32,42) [42,53) [53,64).
        let p = Permutation::new(6, &[2, 4]);
        let block = |i| block_mask(i, 6);
        assert_eq!(block(2), 0x0000_0000_ffe0_0000);
        assert_eq!(p.apply(block(2)), 0xffe0_0000_0000_0000);
        assert_eq!(p.apply(block(4)), 0x001f_fc00_0000_0000);
        assert_eq!(p.search_mask(), 0xffff_fc00_0000_0000);
        // The other blocks follow in order; every bit is kept.
        assert_eq!(p.apply(block(0)).count_ones(), 10);
        assert_eq!(p.apply(u64::MAX), u64::MAX);
        for v in values(5, 200) {
            assert_eq!(p.reverse(p.apply(v)), v);
            assert_eq!(p.apply(v).count_ones(), v.count_ones());
        }
        let mut combos = Vec::new();
        for_each_combination(4, 2, |c| combos.push(c.to_vec()));
        assert_eq!(
            combos,
            [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]].map(|c| c.to_vec())
        );
        assert_eq!(binomial(6, 2), 15);
        assert_eq!(binomial(64, 32), 1_832_624_140_942_590_534);
        let mut none = Vec::new();
        for_each_combination(2, 3, |c| none.push(c.to_vec()));
        assert!(none.is_empty());
        // The public permutations lead with the same blocks, in the same order.
        let v = 0x0123_4567_89ab_cdef;
        let leading: Vec<u64> = permutations(4, 2).unwrap().map(|p| p.apply(v)).collect();
        let expected: Vec<u64> = (combos.iter())
            .map(|c| Permutation::new(4, &c[..]).apply(v))
            .collect();
        assert_eq!(leading, expected);
        assert_eq!(permutations(6, 4).unwrap().count(), 15);
        assert!(permutations(4, 4).is_err());
        assert!(within(0b1011, 0b0000, 3) && !within(0b1011, 0b0000, 2));
    }

    #[test]
    fn components_are_the_connected_values() {
        // 0b0000 - 0b0011 (2 bits) - 0b1111 (2 bits): one chain at distance 2; 0xff.. far away.
        let v = [0, 0b11, 0b1111, u64::MAX >> 1, u64::MAX];
        assert_eq!(components(&v, 6, 2).unwrap(), [0, 0, 0, 3, 3]);
        assert_eq!(components(&v, 6, 1).unwrap(), [0, 1, 2, 3, 3]);
        assert_eq!(components(&[], 6, 4).unwrap(), Vec::<u32>::new());
        assert!(components(&v, 4, 4).is_err());
    }

    #[test]
    fn shingles_are_a_list() {
        let h = SimHasher::new(Tokenization::Space, 2, true, None).unwrap();
        // "a b" three times: repeated shingles all vote.
        let hashes = h.shingle_hashes("A b a b a b");
        assert_eq!(hashes.len(), 5);
        assert_eq!(hashes[0], unsigned_hash(b"a b"));
        assert_eq!(h.simhash("A b a b a b"), compute(hashes));
        assert_eq!(h.simhash("a"), 0);
    }

    /// The SimHash from MD5s sixteen at a time is the one from each shingle's own MD5: many
    /// shingles (full and partial groups of lanes), shingles of one and two MD5 blocks, and
    /// fewer shingles than lanes.
    #[test]
    fn lanes_give_the_scalar_simhash() {
        let words: Vec<String> = (0..500)
            .map(|i| "w".repeat(1 + i * 7 % 40) + &i.to_string())
            .collect();
        for n in [3, 17, 33, 500] {
            let text = words[..n].join(" ");
            for window in [1, 2, 6] {
                let h = SimHasher::new(Tokenization::Space, window, true, None).unwrap();
                let hashes = h.shingle_hashes(&text);
                assert_eq!(h.simhash(&text), compute(hashes), "{n} {window}");
            }
        }
    }

    #[test]
    fn params_and_udf() {
        let op = build("document_simhash_deduplicator", json!({})).unwrap();
        let Operator::Deduplicator(d) = &op else {
            panic!()
        };
        assert_eq!(d.hash_column, "__dj__simhash");
        assert_eq!(
            d.kind,
            DedupKind::SimHash {
                num_blocks: 6,
                hamming_distance: 4
            }
        );
        assert_eq!(map_texts(&op, &[None, Some("")]), [None, Some("0".into())]);
        let err = |params| {
            build("document_simhash_deduplicator", params)
                .unwrap_err()
                .to_string()
        };
        assert!(
            err(json!({"hamming_distance": 6})).contains("must be greater than hamming_distance")
        );
        assert!(
            err(json!({"num_blocks": 65, "hamming_distance": 4})).contains("must not exceed 64")
        );
        assert!(err(json!({"window_size": 0})).contains("positive integer"));
        assert!(err(json!({"hamming_distance": 0})).contains("positive integer"));
        assert!(err(json!({"tokenization": "sentencepiece"})).contains("tokenization"));
        assert!(err(json!({"ignore_pattern": "("})).contains("invalid regular expression"));
        assert!(err(json!({"hamming_distanse": 3})).contains("did you mean hamming_distance"));
        assert!(
            build(
                "document_simhash_deduplicator",
                json!({"num_blocks": 64, "hamming_distance": 63, "ignore_pattern": ""})
            )
            .is_ok()
        );
    }
}
