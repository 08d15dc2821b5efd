//! The `probing` search structure: unigram array plus one linear-probing hash table per
//! higher order, keyed by `combine_word_hash` of the n-gram read right to left. The
//! same byte layout serves memory-mapped binaries and ARPA files built in memory.

use crate::bytes::{f32_at, u32_at, u64_at};
use crate::hash::combine_word_hash;
use crate::search::{SIGN_BIT, Search, Weights, prefetch_at};

/// Bytes per unigram (`prob`, `backoff`).
pub(crate) const UNIGRAM_ENTRY: usize = 8;
/// Bytes per middle-order entry: `u64` key, `prob`, `backoff`.
pub(crate) const MIDDLE_ENTRY: usize = 16;
/// Bytes per highest-order entry: `u64` key, `prob` (packed to 4 bytes).
pub(crate) const LONGEST_ENTRY: usize = 12;

/// Number of buckets kenlm allocates for `entries` keys (`ProbingHashTable::Size`).
/// The product is deliberately computed in `f32`, as kenlm does.
pub(crate) fn buckets_for(entries: u64, multiplier: f32) -> u64 {
    let scaled = (multiplier * entries as f32) as u64;
    entries.saturating_add(1).max(scaled)
}

/// Linear probing lookup: byte offset of the bucket holding `key`, or `None` on reaching
/// an empty (key 0) bucket. Bounded by the bucket count so corrupt full tables end.
#[inline]
pub(crate) fn find_slot(
    data: &[u8],
    table: usize,
    buckets: u64,
    stride: usize,
    key: u64,
) -> Option<usize> {
    if buckets == 0 {
        return None;
    }
    let mut i = key % buckets;
    for _ in 0..buckets {
        let slot = table.wrapping_add((i as usize).wrapping_mul(stride));
        let got = u64_at(data, slot);
        if got == key {
            return Some(slot);
        }
        if got == 0 {
            return None;
        }
        i += 1;
        if i == buckets {
            i = 0;
        }
    }
    None
}

/// One probing hash table inside the model bytes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Table {
    pub offset: usize,
    pub buckets: u64,
}

#[derive(Debug, Clone)]
pub(crate) struct ProbingSearch {
    pub unigrams: usize,
    pub unigram_count: u64,
    pub middles: Vec<Table>,
    pub longest: Table,
}

/// Probing stores "nothing extends this n-gram to the left" in the sign bit of `prob`
/// (probabilities are never positive), and reports `prob` with the sign forced on.
#[inline]
fn decode(prob_bits: u32, backoff: f32) -> (Weights, bool) {
    let weights = Weights {
        prob: f32::from_bits(prob_bits | SIGN_BIT),
        backoff,
    };
    (weights, prob_bits & SIGN_BIT != 0)
}

impl Search for ProbingSearch {
    type Node = u64;

    /// The unigram and the first bucket of every longer n-gram the context could match:
    /// the keys depend on the words only, so all the lookups' cache misses overlap.
    #[inline]
    fn prefetch(&self, data: &[u8], word: u32, context: &[u32]) {
        if u64::from(word) < self.unigram_count {
            prefetch_at(data, self.unigrams + word as usize * UNIGRAM_ENTRY);
        }
        let mut key = u64::from(word);
        for (i, &ctx) in context.iter().enumerate() {
            key = combine_word_hash(key, ctx);
            let (table, stride, last) = match self.middles.get(i) {
                Some(t) => (t, MIDDLE_ENTRY, false),
                None => (&self.longest, LONGEST_ENTRY, true),
            };
            if table.buckets == 0 {
                return;
            }
            let bucket = (key % table.buckets) as usize;
            prefetch_at(data, table.offset.wrapping_add(bucket.wrapping_mul(stride)));
            if last {
                return;
            }
        }
    }

    #[inline]
    fn unigram(&self, data: &[u8], word: u32) -> (Weights, u64, bool) {
        let off = if u64::from(word) < self.unigram_count {
            self.unigrams + word as usize * UNIGRAM_ENTRY
        } else {
            usize::MAX // corrupt id: reads as zeros
        };
        let (weights, independent) = decode(u32_at(data, off), f32_at(data, off.wrapping_add(4)));
        (weights, u64::from(word), independent)
    }

    #[inline]
    fn middle(
        &self,
        data: &[u8],
        order_minus_2: usize,
        word: u32,
        node: &mut u64,
    ) -> Option<(Weights, bool)> {
        *node = combine_word_hash(*node, word);
        let table = self.middles.get(order_minus_2)?;
        let slot = find_slot(data, table.offset, table.buckets, MIDDLE_ENTRY, *node)?;
        Some(decode(u32_at(data, slot + 8), f32_at(data, slot + 12)))
    }

    #[inline]
    fn longest(&self, data: &[u8], word: u32, node: &u64) -> Option<f32> {
        let key = combine_word_hash(*node, word);
        let slot = find_slot(
            data,
            self.longest.offset,
            self.longest.buckets,
            LONGEST_ENTRY,
            key,
        )?;
        // The highest order keeps the stored value as is (kenlm's LongestPointer).
        Some(f32_at(data, slot + 8))
    }
}
