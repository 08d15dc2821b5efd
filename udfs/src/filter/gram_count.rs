//! Exact counts of overlapping n-grams of characters (`character_repetition_filter`) or word ids
//! (`word_repetition_filter`). Each code point gets a small id (the byte + 1 for ASCII, the next
//! free number otherwise), so an n-gram packs losslessly into a u128 key; the keys are counted in
//! an open-addressing table that each thread keeps between rows, so a row costs no allocation and
//! no string comparison. On long texts the table outgrows the caches: slots are prefetched. Code
//! points of the Basic Multilingual Plane get their ids from a stamped direct table, not a hash
//! map.

use std::cell::RefCell;

use foldhash::HashMap;

/// Scratch buffers above this many entries (16-24 MB) are not kept for the next row.
const MAX_KEPT: usize = 1 << 20;

#[derive(Clone, Copy, Default)]
struct Slot {
    lo: u64,
    hi: u64,
    /// The slot is taken in the current count only when this is the table's generation.
    generation: u32,
    /// Index of the key's count.
    index: u32,
}

/// An open-addressing table with linear probing, at most half full, emptied in O(1) by starting a
/// new generation.
#[derive(Default)]
struct Table {
    slots: Vec<Slot>,
    generation: u32,
}

#[derive(Default)]
struct GramCounter {
    /// Id of every code point of a non-ASCII text.
    ids: Vec<u32>,
    /// Ids of the text's non-ASCII code points beyond the Basic Multilingual Plane.
    non_ascii: HashMap<char, u32>,
    /// Ids of the text's code points in the Basic Multilingual Plane, each valid only when its
    /// stamp in `bmp_stamps` is the current text's (no clearing between texts).
    bmp_ids: Vec<u32>,
    bmp_stamps: Vec<u32>,
    bmp_stamp: u32,
    table: Table,
    counts: Vec<u32>,
    /// The packed n-grams of the current input.
    keys: Vec<u128>,
}

thread_local! {
    static COUNTER: RefCell<GramCounter> = RefCell::new(GramCounter::default());
}

/// Calls `f` with the count of every distinct n-gram of `text` (in no particular order), or
/// returns `None` without calling it when an n-gram of this text does not pack into 128 bits
/// (`n` times the bits of the text's largest id exceeds 128). The text has at least `n` (> 0)
/// code points.
pub(crate) fn with_gram_counts<R>(
    text: &str,
    n: usize,
    f: impl FnOnce(&mut [u32]) -> R,
) -> Option<R> {
    COUNTER.with(|c| {
        let mut c = c.borrow_mut();
        let counts = c.count(text, n)?;
        let r = f(counts);
        c.release_large();
        Some(r)
    })
}

/// Calls `f` with the count of every distinct n-gram of `ids` (each in `1..=max_id`; at least
/// `n` > 0 of them), or returns `None` when the n-grams do not pack into 128 bits.
pub(crate) fn with_id_gram_counts<R>(
    ids: &[u32],
    max_id: u32,
    n: usize,
    f: impl FnOnce(&mut [u32]) -> R,
) -> Option<R> {
    debug_assert!(ids.iter().all(|&id| id > 0 && id <= max_id));
    let bits = packed_bits(n, max_id)?;
    COUNTER.with(|c| {
        let mut c = c.borrow_mut();
        let r = f(c.count_ids(ids.iter().copied(), n, bits));
        c.release_large();
        Some(r)
    })
}

/// Like [`with_id_gram_counts`] over several sequences of ids at once (an n-gram never spans
/// two): the counts of the distinct n-grams of all sequences at least `n` long.
pub(crate) fn with_id_segment_gram_counts<'a, R>(
    segments: impl Iterator<Item = &'a [u32]>,
    max_id: u32,
    n: usize,
    f: impl FnOnce(&mut [u32]) -> R,
) -> Option<R> {
    let bits = packed_bits(n, max_id)?;
    COUNTER.with(|c| {
        let mut c = c.borrow_mut();
        let c = &mut *c;
        c.counts.clear();
        c.keys.clear();
        for seg in segments.filter(|s| s.len() >= n) {
            debug_assert!(seg.iter().all(|&id| id > 0 && id <= max_id));
            c.keys.extend(packed(seg.iter().copied(), n, bits));
        }
        c.table.count(&c.keys, &mut c.counts);
        let r = f(&mut c.counts);
        c.release_large();
        Some(r)
    })
}

/// The bits per id when `n` ids up to `max_id` pack into 128 bits.
fn packed_bits(n: usize, max_id: u32) -> Option<usize> {
    let bits = (32 - max_id.leading_zeros()) as usize;
    (n * bits <= 128).then_some(bits)
}

/// foldhash's folded multiply of the key's halves: one 64x64->128 multiplication.
#[inline]
fn key_hash(key: u128) -> u64 {
    let (lo, hi) = (key as u64, (key >> 64) as u64);
    let m = u128::from(lo ^ 0x243f_6a88_85a3_08d3) * u128::from(hi ^ 0x1319_8a2e_0370_7344);
    (m as u64) ^ ((m >> 64) as u64)
}

impl GramCounter {
    fn release_large(&mut self) {
        if self.table.slots.len() > MAX_KEPT {
            self.table.slots = Vec::new();
        }
        if self.keys.capacity() > MAX_KEPT {
            self.keys = Vec::new();
        }
    }

    fn count(&mut self, text: &str, n: usize) -> Option<&mut [u32]> {
        if text.is_ascii() {
            let bits = packed_bits(n, 128)?;
            let ids = text.bytes().map(|b| u32::from(b) + 1);
            Some(self.count_ids(ids, n, bits))
        } else {
            self.ids.clear();
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
            let stamp = self.bmp_stamp;
            let mut next = 129u32;
            for ch in text.chars() {
                let c = ch as u32;
                let id = if c < 128 {
                    c + 1
                } else if c < 1 << 16 {
                    let c = c as usize;
                    if self.bmp_stamps[c] != stamp {
                        self.bmp_stamps[c] = stamp;
                        self.bmp_ids[c] = next;
                        next += 1;
                    }
                    self.bmp_ids[c]
                } else {
                    *self.non_ascii.entry(ch).or_insert_with(|| {
                        next += 1;
                        next - 1
                    })
                };
                self.ids.push(id);
            }
            let bits = packed_bits(n, next - 1)?;
            let ids = std::mem::take(&mut self.ids);
            self.count_ids(ids.iter().copied(), n, bits);
            self.ids = ids;
            Some(&mut self.counts)
        }
    }

    /// Counts the packed n-grams of ids (at least `n`) of at most `bits` bits each.
    fn count_ids(&mut self, ids: impl Iterator<Item = u32>, n: usize, bits: usize) -> &mut [u32] {
        self.counts.clear();
        self.keys.clear();
        self.keys.extend(packed(ids, n, bits));
        self.table.count(&self.keys, &mut self.counts);
        &mut self.counts
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
    /// Appends the count of each distinct key of `keys` to `counts`. The slot of the key
    /// [`PREFETCH`] places ahead is prefetched, so that several cache misses are in flight.
    fn count(&mut self, keys: &[u128], counts: &mut Vec<u32>) {
        let cap = (keys.len() * 2).next_power_of_two().max(16);
        if self.slots.len() < cap {
            self.slots.resize(cap, Slot::default());
        }
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.slots.iter_mut().for_each(|s| s.generation = 0);
            self.generation = 1;
        }
        let generation = self.generation;
        let mask = cap - 1;
        let slots = &mut self.slots[..cap];
        counts.reserve(keys.len());
        for (i, &key) in keys.iter().enumerate() {
            if let Some(&ahead) = keys.get(i + PREFETCH) {
                prefetch(&slots[key_hash(ahead) as usize & mask]);
            }
            let (lo, hi) = (key as u64, (key >> 64) as u64);
            let mut i = key_hash(key) as usize & mask;
            loop {
                let s = &mut slots[i];
                if s.generation != generation {
                    *s = Slot {
                        lo,
                        hi,
                        generation,
                        index: counts.len() as u32,
                    };
                    counts.push(1);
                    break;
                }
                if s.lo == lo && s.hi == hi {
                    counts[s.index as usize] += 1;
                    break;
                }
                i = (i + 1) & mask;
            }
        }
    }
}

/// How many keys ahead [`Table::count`] prefetches.
const PREFETCH: usize = 12;

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
            let got = with_gram_counts(&text, 2, |c| {
                let mut c = c.to_vec();
                c.sort_unstable();
                c
            });
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
                let got = with_gram_counts(text, n, |c| {
                    let mut c = c.to_vec();
                    c.sort_unstable();
                    c
                });
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
}
