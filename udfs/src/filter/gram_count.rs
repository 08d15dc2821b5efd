//! Exact counts of overlapping n-grams of characters (`character_repetition_filter`) or word ids
//! (`word_repetition_filter`). Each code point gets a small id (the byte for ASCII, the next free
//! number otherwise), so an n-gram packs losslessly into a u128 key; while the ids fit a byte
//! (ASCII and up to 128 other code points), a key is 16 bytes loaded and masked. Most n-grams of
//! a text occur once: a first pass marks each key's hash in a small table of 2-bit cells, and
//! only the keys whose cell was hit twice or more are counted exactly, in an open-addressing table
//! that each thread keeps between rows (no allocation, no string comparison per row). Code points
//! of the Basic Multilingual Plane get their ids from a stamped direct table, not a hash map.

use std::cell::RefCell;

use foldhash::HashMap;

use super::repeat_filter::{BYTES_PADDING, RepeatFilter};
use crate::py::str_lower::ascii_run;

/// Scratch buffers above this many entries (16-24 MB) are not kept for the next row.
pub(super) const MAX_KEPT: usize = 1 << 20;

/// The counts of a text's n-grams: every n-gram that may occur more than once is counted in
/// `counts` (once per distinct n-gram; some of these counts are 1), and `unique` more n-grams are
/// known to occur exactly once.
#[derive(Debug)]
pub(crate) struct GramCounts<'a> {
    pub(crate) counts: &'a mut [u32],
    pub(crate) unique: usize,
}

impl GramCounts<'_> {
    /// The number of distinct n-grams.
    pub(crate) fn distinct(&self) -> usize {
        self.counts.len() + self.unique
    }

    /// The number of n-grams that occur exactly once.
    pub(crate) fn singletons(&self) -> usize {
        self.unique + self.counts.iter().filter(|&&c| c == 1).count()
    }
}

/// 8 bytes: a slot holds the key's hash tag and where the key is, not the key itself, so that a
/// long text's table is a quarter of the size (less memory to touch, fewer cache misses).
#[derive(Clone, Copy, Default)]
struct Slot {
    /// The high half of the key's hash: a key is compared only when its tag matches.
    tag: u32,
    /// 1 + the index of the key in `distinct` (and of its count); 0 when the slot is empty.
    index: u32,
}

/// An open-addressing table with linear probing, at most half full, emptied per text over the
/// slots that text uses.
#[derive(Default)]
pub(super) struct Table {
    slots: Vec<Slot>,
    /// Each distinct key, in order of first appearance (the order of the counts).
    distinct: Vec<u128>,
}

#[derive(Default)]
struct GramCounter {
    /// Id of every code point of a text whose ids do not fit a byte (more than 128 distinct
    /// non-ASCII code points).
    ids: Vec<u32>,
    /// Ids of the text's non-ASCII code points beyond the Basic Multilingual Plane.
    non_ascii: HashMap<char, u32>,
    /// Ids of the text's code points in the Basic Multilingual Plane, each valid only when its
    /// stamp in `bmp_stamps` is the current text's (no clearing between texts).
    bmp_ids: Vec<u32>,
    bmp_stamps: Vec<u32>,
    bmp_stamp: u32,
    /// A text's one-byte ids (an ASCII text's bytes), zero-padded for 16-byte loads.
    bytes: Vec<u8>,
    filter: RepeatFilter,
    table: Table,
    /// The count of each key of `keys` that is distinct.
    counts: Vec<u32>,
    /// Keys known to occur once, left out of `keys`.
    unique: usize,
    /// The packed n-grams that may repeat.
    keys: Vec<u128>,
}

/// Below this many keys the exact table fits in L1 and the filter would not pay for itself.
const FILTER_MIN_KEYS: usize = 1024;

thread_local! {
    static COUNTER: RefCell<GramCounter> = RefCell::new(GramCounter::default());
}

/// Calls `f` with the [`GramCounts`] of `text`'s n-grams, or returns `None` without calling it
/// when an n-gram of this text does not pack into 128 bits (`n` times the bits of the text's
/// largest id exceeds 128). The text has at least `n` (> 0) code points.
pub(crate) fn with_gram_counts<R>(
    text: &str,
    n: usize,
    f: impl FnOnce(GramCounts<'_>) -> R,
) -> Option<R> {
    COUNTER.with(|c| {
        let mut c = c.borrow_mut();
        let counts = c.count(text, n)?;
        let r = f(counts);
        c.release_large();
        Some(r)
    })
}

/// Calls `f` with the [`GramCounts`] of the n-grams of `ids` (each in `1..=max_id`; at least
/// `n` > 0 of them), or returns `None` when the n-grams do not pack into 128 bits.
pub(crate) fn with_id_gram_counts<R>(
    ids: &[u32],
    max_id: u32,
    n: usize,
    f: impl FnOnce(GramCounts<'_>) -> R,
) -> Option<R> {
    debug_assert!(ids.iter().all(|&id| id > 0 && id <= max_id));
    let bits = packed_bits(n, max_id)?;
    COUNTER.with(|c| {
        let mut c = c.borrow_mut();
        let keys = || packed(ids.iter().copied(), n, bits);
        let r = f(c.count_keys(ids.len() + 1 - n, keys));
        c.release_large();
        Some(r)
    })
}

/// Calls `f` with the [`GramCounts`] of the n-grams of `ids` that hold no 0 (each id in
/// `0..=max_id`; a 0 marks a word known to occur once, so every n-gram holding it is unique and
/// left out of the counts). Any `max_id` and `n`: n-grams whose ids do not pack into 128 bits
/// are keyed by the classes of two overlapping halves (see [`sparse_gram_keys`]).
pub(crate) fn with_sparse_id_gram_counts<R>(
    ids: &[u32],
    max_id: u32,
    n: usize,
    f: impl FnOnce(GramCounts<'_>) -> R,
) -> R {
    let keys = sparse_gram_keys(ids, max_id, n, &mut Vec::new());
    COUNTER.with(|c| {
        let mut c = c.borrow_mut();
        let r = f(c.count_keys(keys.len(), || keys.iter().copied()));
        c.release_large();
        r
    })
}

/// A key for each n-gram of `ids` holding no 0, in order, equal exactly when the n-grams are;
/// the start of each in `positions`. When `n` ids pack into 128 bits the key is the ids packed;
/// otherwise, with `h = ceil(n / 2)`, it is the pair of the classes (numbers of distinct h-grams,
/// [`gram_classes`]) of the h-grams at `i` and `i + n - h`, which together cover the n-gram.
fn sparse_gram_keys(ids: &[u32], max_id: u32, n: usize, positions: &mut Vec<u32>) -> Vec<u128> {
    let mut keys = Vec::new();
    positions.clear();
    if ids.len() < n || max_id == 0 {
        // No n-gram, or every id is 0.
        return keys;
    }
    if let Some(bits) = packed_bits(n, max_id) {
        // The n-gram at `i` holds no 0 when the run of non-zero ids ending at `i + n - 1` is at
        // least `n` long.
        let runs = ids.iter().scan(0usize, |run, &id| {
            *run = if id == 0 { 0 } else { *run + 1 };
            Some(*run)
        });
        let grams = packed(ids.iter().copied(), n, bits).zip(runs.skip(n - 1));
        for (i, (key, run)) in grams.enumerate() {
            if run >= n {
                keys.push(key);
                positions.push(i as u32);
            }
        }
        return keys;
    }
    let h = n.div_ceil(2);
    let classes = gram_classes(ids, max_id, h);
    for i in 0..=ids.len() - n {
        let (a, b) = (classes[i], classes[i + n - h]);
        if a != 0 && b != 0 {
            keys.push(u128::from(a) << 32 | u128::from(b));
            positions.push(i as u32);
        }
    }
    keys
}

/// For each position of `ids`, the class of the h-gram starting there (1 for the first distinct
/// h-gram, 2 for the next, ...), or 0 when it holds a 0 or runs past the end.
fn gram_classes(ids: &[u32], max_id: u32, h: usize) -> Vec<u32> {
    let mut positions = Vec::new();
    let keys = sparse_gram_keys(ids, max_id, h, &mut positions);
    let mut classes = vec![0u32; ids.len()];
    let mut key_classes = Vec::new();
    Table::default().intern(&keys, keys.len() / 4, &mut key_classes);
    for (&class, &at) in key_classes.iter().zip(&positions) {
        classes[at as usize] = class;
    }
    classes
}

/// The bits per id when `n` ids up to `max_id` pack into 128 bits.
fn packed_bits(n: usize, max_id: u32) -> Option<usize> {
    let bits = (32 - max_id.leading_zeros()) as usize;
    (n * bits <= 128).then_some(bits)
}

/// foldhash's folded multiply of the key's halves: one 64x64->128 multiplication.
#[inline]
pub(super) fn key_hash(key: u128) -> u64 {
    let (lo, hi) = (key as u64, (key >> 64) as u64);
    let m = u128::from(lo ^ 0x243f_6a88_85a3_08d3) * u128::from(hi ^ 0x1319_8a2e_0370_7344);
    (m as u64) ^ ((m >> 64) as u64)
}

impl GramCounter {
    fn release_large(&mut self) {
        self.table.release_large();
        if self.keys.capacity() > MAX_KEPT {
            self.keys = Vec::new();
        }
        self.filter.release_large(MAX_KEPT);
        if self.bytes.capacity() > MAX_KEPT * 16 {
            self.bytes = Vec::new();
        }
    }

    fn count(&mut self, text: &str, n: usize) -> Option<GramCounts<'_>> {
        if n > 16 {
            // Ids take at least 8 bits: the n-grams do not pack.
            return None;
        }
        let mut bytes = std::mem::take(&mut self.bytes);
        bytes.clear();
        let one_byte_ids = if text.is_ascii() {
            bytes.extend_from_slice(text.as_bytes());
            true
        } else {
            self.byte_ids(text, &mut bytes)
        };
        if one_byte_ids {
            // Each n-gram is its n one-byte ids, loaded 16 at a time from a zero-padded copy.
            let len = bytes.len() + 1 - n;
            bytes.extend_from_slice(&[0; BYTES_PADDING]);
            self.keys.clear();
            let filtered = (len >= FILTER_MIN_KEYS)
                .then(|| {
                    self.filter
                        .possible_repeat_bytes(&bytes, n, len, &mut self.keys)
                })
                .flatten();
            if let Some(unique) = filtered {
                self.unique = unique;
                self.counts.clear();
                self.table.count(&self.keys, &mut self.counts);
            } else {
                let mask = u128::MAX >> (128 - 8 * n);
                let keys = || {
                    bytes.windows(16).take(len).map(move |w| {
                        u128::from_le_bytes(w.try_into().expect("16-byte windows")) & mask
                    })
                };
                self.count_keys(len, keys);
            }
            self.bytes = bytes;
            return Some(self.counts());
        }
        self.bytes = bytes;
        self.ids.clear();
        let stamp = self.next_stamp();
        let mut next = 129u32;
        for ch in text.chars() {
            let c = ch as u32;
            let id = if c < 128 {
                c + 1
            } else {
                self.non_ascii_id(ch, stamp, &mut next)
            };
            self.ids.push(id);
        }
        let bits = packed_bits(n, next - 1)?;
        let ids = std::mem::take(&mut self.ids);
        self.count_keys(ids.len() + 1 - n, || packed(ids.iter().copied(), n, bits));
        self.ids = ids;
        Some(self.counts())
    }

    /// One-byte ids of the code points of `text` into `out`: ASCII as itself, the others from
    /// 128 on in order of appearance. False (and `out` partly written) when the text has more
    /// than 128 distinct non-ASCII code points.
    fn byte_ids(&mut self, text: &str, out: &mut Vec<u8>) -> bool {
        let stamp = self.next_stamp();
        let mut next = 128u32;
        let b = text.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let run = ascii_run(&b[i..]);
            out.extend_from_slice(&b[i..i + run]);
            i += run;
            let Some(ch) = text[i..].chars().next() else {
                break;
            };
            i += ch.len_utf8();
            match u8::try_from(self.non_ascii_id(ch, stamp, &mut next)) {
                Ok(id) => out.push(id),
                Err(_) => return false,
            }
        }
        true
    }

    /// Starts a text: the stamp that marks its entries of the direct table of the Basic
    /// Multilingual Plane (no clearing between texts).
    fn next_stamp(&mut self) -> u32 {
        self.non_ascii.clear();
        if self.bmp_ids.is_empty() {
            self.bmp_ids = vec![0; 1 << 16];
            self.bmp_stamps = vec![0; 1 << 16];
        }
        self.bmp_stamp = self.bmp_stamp.wrapping_add(1);
        if self.bmp_stamp == 0 {
            self.bmp_stamps.iter_mut().for_each(|s| *s = 0);
            self.bmp_stamp = 1;
        }
        self.bmp_stamp
    }

    /// The id of non-ASCII `ch` in the current text, `next` (then incremented) if it is new.
    #[inline]
    fn non_ascii_id(&mut self, ch: char, stamp: u32, next: &mut u32) -> u32 {
        let c = ch as usize;
        if c < 1 << 16 {
            if self.bmp_stamps[c] != stamp {
                self.bmp_stamps[c] = stamp;
                self.bmp_ids[c] = *next;
                *next += 1;
            }
            self.bmp_ids[c]
        } else {
            *self.non_ascii.entry(ch).or_insert_with(|| {
                *next += 1;
                *next - 1
            })
        }
    }

    /// Counts the `len` keys that `keys` yields (it is called once per pass): those that may
    /// repeat exactly, the others as known singletons.
    fn count_keys<I: Iterator<Item = u128>>(
        &mut self,
        len: usize,
        keys: impl Fn() -> I,
    ) -> GramCounts<'_> {
        self.keys.clear();
        self.unique = if len >= FILTER_MIN_KEYS {
            self.filter
                .possible_repeats(len, keys(), keys(), &mut self.keys, key_hash)
        } else {
            self.keys.extend(keys());
            0
        };
        self.counts.clear();
        self.table.count(&self.keys, &mut self.counts);
        self.counts()
    }

    fn counts(&mut self) -> GramCounts<'_> {
        GramCounts {
            counts: &mut self.counts,
            unique: self.unique,
        }
    }
}

/// The n-grams of `ids`, each packed as `bits`-bit digits into a u128.
fn packed(mut ids: impl Iterator<Item = u32>, n: usize, bits: usize) -> impl Iterator<Item = u128> {
    let key_mask = if n * bits == 128 {
        u128::MAX
    } else {
        (1u128 << (n * bits)) - 1
    };
    let mut key = 0u128;
    for id in ids.by_ref().take(n - 1) {
        key = (key << bits) | u128::from(id);
    }
    ids.map(move |id| {
        key = ((key << bits) | u128::from(id)) & key_mask;
        key
    })
}

impl Table {
    /// Drops buffers a long text grew past [`MAX_KEPT`] entries.
    pub(super) fn release_large(&mut self) {
        if self.slots.capacity() > MAX_KEPT {
            self.slots = Vec::new();
        }
        if self.distinct.capacity() > MAX_KEPT {
            self.distinct = Vec::new();
        }
    }

    /// Empties the table with room for `keys` distinct keys at most half full; returns the
    /// slot mask.
    pub(super) fn start(&mut self, keys: usize) -> usize {
        let cap = (keys * 2).next_power_of_two().max(16);
        self.slots.clear();
        self.slots.resize(cap, Slot::default());
        self.distinct.clear();
        cap - 1
    }

    /// The index of `key`, whose [`key_hash`] is `hash`, if the table has it, else `None` after
    /// inserting it as the next distinct key.
    #[inline(always)]
    fn find_or_insert_hashed(&mut self, mask: usize, key: u128, hash: u64) -> Option<u32> {
        let tag = (hash >> 32) as u32;
        let mut i = hash as usize & mask;
        loop {
            let s = self.slots[i];
            if s.index == 0 {
                self.distinct.push(key);
                self.slots[i] = Slot {
                    tag,
                    index: self.distinct.len() as u32,
                };
                return None;
            }
            if s.tag == tag && self.distinct[s.index as usize - 1] == key {
                return Some(s.index - 1);
            }
            i = (i + 1) & mask;
        }
    }

    /// Re-slots the distinct keys into `cap` (a power of two) slots; returns the slot mask.
    #[cold]
    fn rehash(&mut self, cap: usize) -> usize {
        self.slots.clear();
        self.slots.resize(cap, Slot::default());
        let mask = cap - 1;
        for (index, &key) in self.distinct.iter().enumerate() {
            let hash = key_hash(key);
            let mut i = hash as usize & mask;
            while self.slots[i].index != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = Slot {
                tag: (hash >> 32) as u32,
                index: index as u32 + 1,
            };
        }
        mask
    }

    /// Appends the count of each distinct key of `keys` to `counts`.
    fn count(&mut self, keys: &[u128], counts: &mut Vec<u32>) {
        let mut mask = self.start(keys.len());
        counts.reserve(keys.len());
        self.find_or_insert_all(keys, &mut mask, false, |found, _| match found {
            Some(index) => counts[index as usize] += 1,
            None => counts.push(1),
        });
    }

    /// Appends to `ids` the number of each key of `keys` in order of first appearance (1 for
    /// the first distinct key, 2 for the next, ...); returns the number of distinct keys. The
    /// table starts with room for `expected_distinct` keys and doubles as needed.
    pub(super) fn intern(
        &mut self,
        keys: &[u128],
        expected_distinct: usize,
        ids: &mut Vec<u32>,
    ) -> u32 {
        let mut mask = self.start(expected_distinct);
        ids.reserve(keys.len());
        // A new key's id is the number of distinct keys once it is in.
        self.find_or_insert_all(keys, &mut mask, true, |found, distinct| {
            ids.push(found.map_or(distinct, |index| index + 1))
        });
        self.distinct.len() as u32
    }

    /// Finds or inserts each key of `keys` in turn, calling `on` with what
    /// [`Table::find_or_insert_hashed`] returns and the number of distinct keys; with `grow`,
    /// the table doubles once it is half full. The slot of the key [`PREFETCH`] places ahead is
    /// prefetched, so that several cache misses are in flight.
    #[inline(always)]
    fn find_or_insert_all(
        &mut self,
        keys: &[u128],
        mask: &mut usize,
        grow: bool,
        mut on: impl FnMut(Option<u32>, u32),
    ) {
        // Each key is hashed once, when its slot is prefetched; the hashes wait in a ring.
        let mut hashes = [0u64; PREFETCH_RING];
        let hash_ahead = |i: usize, hashes: &mut [u64; PREFETCH_RING], slots: &[Slot], mask| {
            if let Some(&key) = keys.get(i) {
                let hash = key_hash(key);
                hashes[i % PREFETCH_RING] = hash;
                prefetch(&slots[hash as usize & mask]);
            }
        };
        for i in 0..PREFETCH {
            hash_ahead(i, &mut hashes, &self.slots, *mask);
        }
        for (i, &key) in keys.iter().enumerate() {
            hash_ahead(i + PREFETCH, &mut hashes, &self.slots, *mask);
            let found = self.find_or_insert_hashed(*mask, key, hashes[i % PREFETCH_RING]);
            if grow && found.is_none() && self.distinct.len() * 2 > *mask + 1 {
                *mask = self.rehash((*mask + 1) * 2);
            }
            on(found, self.distinct.len() as u32);
        }
    }
}

/// How many keys ahead [`Table::count`] prefetches.
const PREFETCH: usize = 12;
/// The hashes [`Table::count`] keeps: a power of two above [`PREFETCH`].
const PREFETCH_RING: usize = 16;

#[inline(always)]
fn prefetch<T>(slot: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint; the address is a valid reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            (slot as *const T).cast(),
        )
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = slot;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every distinct n-gram's count, sorted.
    fn all_counts(c: GramCounts<'_>) -> Vec<u32> {
        let mut all = c.counts.to_vec();
        all.extend(std::iter::repeat_n(1, c.unique));
        all.sort_unstable();
        all
    }

    fn counts_by_text(text: &str, n: usize) -> Vec<u32> {
        let chars: Vec<char> = text.chars().collect();
        let mut m: std::collections::HashMap<String, u32> = Default::default();
        for w in chars.windows(n) {
            *m.entry(w.iter().collect()).or_default() += 1;
        }
        let mut v: Vec<u32> = m.into_values().collect();
        v.sort_unstable();
        v
    }

    /// Ids of non-ASCII characters are per text: a character seen in an earlier text does not
    /// keep its id (the stamps), and counts stay right from text to text.
    #[test]
    fn ids_are_per_text() {
        for i in 0..2_000u32 {
            let c = char::from_u32(0x4e00 + i % 300).unwrap();
            let text = format!("a{c}b{c}é{c}a{c}b");
            let got = with_gram_counts(&text, 2, all_counts);
            assert_eq!(got, Some(counts_by_text(&text, 2)), "{i}");
        }
    }

    #[test]
    fn packed_counts_equal_text_counts() {
        let mut many_chars: String = (0x4e00u32..0x4e00 + 5000)
            .map(|c| char::from_u32(c).unwrap())
            .collect();
        many_chars.push_str(&many_chars.clone());
        let texts = [
            "abcdefghij".repeat(30),
            "ha".repeat(100),
            "\0\0\0\0\0\0\0\0\0\0\0\0 a".to_string(),
            "Straße ünïcödé 中文字符 🙂🙂🙂 straße ünïcödé".to_string(),
            "the quick brown fox jumps over the lazy dog; the quick brown fox".to_string(),
            many_chars,
            // Long: repetitive, and mostly distinct.
            (0..20_000usize)
                .map(|i| ["alpha ", "beta ", "gamma ", "delta "][(i * 7919 % 13) % 4])
                .collect(),
            (0..10_000).map(|i| format!("{i} ")).collect(),
        ];
        for text in &texts {
            for n in [1, 2, 5, 9, 10, 16, 17] {
                if text.chars().count() < n {
                    continue;
                }
                let got = with_gram_counts(text, n, all_counts);
                let max_id_bits = if text.is_ascii() {
                    8
                } else {
                    let distinct_non_ascii = text
                        .chars()
                        .filter(|c| !c.is_ascii())
                        .collect::<std::collections::HashSet<_>>()
                        .len() as u32;
                    32 - (128 + distinct_non_ascii).leading_zeros() as usize
                };
                if n * max_id_bits > 128 {
                    assert_eq!(got, None, "{n} {max_id_bits}");
                } else {
                    assert_eq!(got, Some(counts_by_text(text, n)), "{text:?} n={n}");
                }
            }
        }
    }

    /// On long texts the filter sets most unique n-grams aside, and what it keeps holds every
    /// repeated one.
    #[test]
    fn filter_keeps_every_repeat() {
        let text: String = (0..50_000u64)
            .map(|i| {
                let x = (i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                let x = (x ^ (x >> 31)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                char::from(b'a' + ((x >> 40) % 26) as u8)
            })
            .collect::<String>()
            + &"repeated block of text ".repeat(40);
        let (unique, distinct, singletons) =
            with_gram_counts(&text, 10, |c| (c.unique, c.distinct(), c.singletons())).unwrap();
        let want = counts_by_text(&text, 10);
        assert_eq!(distinct, want.len());
        assert_eq!(singletons, want.iter().filter(|&&c| c == 1).count());
        assert!(unique > want.len() / 2, "{unique} of {}", want.len());
        let ids: Vec<u32> = text.bytes().map(|b| u32::from(b) + 1).collect();
        let got = with_id_gram_counts(&ids, 128, 10, all_counts).unwrap();
        assert_eq!(got, want);
    }

    /// 128 distinct non-ASCII code points still take one-byte ids, 129 do not: both count as the
    /// text does, up to the n-gram length that packs.
    #[test]
    fn byte_ids_up_to_128_non_ascii_code_points() {
        for distinct in [127u32, 128, 129] {
            let text: String = (0..distinct * 3)
                .map(|i| {
                    let c = char::from_u32(0x100 + (i * 7) % distinct).unwrap();
                    if i % 5 == 0 {
                        format!("{c}ab ")
                    } else {
                        c.to_string()
                    }
                })
                .collect();
            for n in [2, 10, 14, 16] {
                let got = with_gram_counts(&text, n, all_counts);
                if distinct > 128 && n > 14 {
                    assert_eq!(got, None, "{distinct} {n}");
                } else {
                    assert_eq!(got, Some(counts_by_text(&text, n)), "{distinct} {n}");
                }
            }
        }
    }

    /// N-grams of ids with zeros, counted exactly whether they pack or take one or several
    /// levels of half classes (n = 30 over 20-bit ids: 15-grams, 8-grams, then packed 4-grams).
    #[test]
    fn sparse_id_counts_equal_window_counts() {
        let mut x = 7u64;
        let mut next = move |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for (max_id, n) in [
            (50u32, 3usize),
            (3000, 10),
            (1 << 20, 10),
            (1 << 20, 30),
            (9, 1),
        ] {
            // Repeated phrases of a small vocabulary, ids up to max_id, and zeros.
            let phrase: Vec<u32> = (0..40).map(|_| 1 + next(max_id as u64) as u32).collect();
            let mut ids = Vec::new();
            for _ in 0..200 {
                match next(4) {
                    0 => ids.extend_from_slice(&phrase[..20 + next(20) as usize]),
                    1 => ids.push(0),
                    _ => ids.extend((0..next(30)).map(|_| 1 + next(max_id as u64) as u32)),
                }
            }
            ids.push(max_id);
            let mut want: std::collections::HashMap<&[u32], u32> = Default::default();
            for w in ids.windows(n).filter(|w| !w.contains(&0)) {
                *want.entry(w).or_default() += 1;
            }
            let mut want: Vec<u32> = want.into_values().collect();
            want.sort_unstable();
            let got = with_sparse_id_gram_counts(&ids, max_id, n, all_counts);
            assert_eq!(got, want, "max_id={max_id} n={n}");
        }
        // Every word occurs once: no id but 0.
        let none = with_sparse_id_gram_counts(&[0; 50], 0, 10, all_counts);
        assert_eq!(none, Vec::<u32>::new());
    }
}
