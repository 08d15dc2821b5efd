//! The `trie` search structure: unigram array with child pointers, then one bit-packed
//! array per higher order (word id, value bits, pointer to the children's range),
//! optionally with array-compressed ("bhiksha", `-a`) pointers.

use super::quantize::Quant;
use crate::bytes::{align8, bounded_uniform_find, f32_at, int_at, mask_of, required_bits, u64_at};
use crate::search::{Search, Weights};

/// Bytes per unigram: `prob`, `backoff`, `u64` index of its first bigram.
pub(crate) const UNIGRAM_ENTRY: usize = 16;
/// Version byte kenlm writes in front of a compressed-pointer array.
pub(crate) const BHIKSHA_VERSION: u8 = 0;

/// Range of entries `[begin, end)` in the next order's array.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct NodeRange {
    begin: u64,
    end: u64,
}

/// One bit-packed array: fixed-width records sorted by word id within each parent.
#[derive(Debug, Clone)]
pub(crate) struct Packed {
    /// Absolute bit offset of record 0.
    base_bit: u64,
    word_bits: u8,
    total_bits: u8,
    max_vocab: u64,
}

impl Packed {
    /// Size in bytes of `entries` records with `value_bits` after the word id
    /// (kenlm's `BitPacked::BaseSize`, including its 8 bytes of read slack).
    pub(crate) fn size(entries: u64, max_vocab: u64, value_bits: u8) -> Option<u64> {
        let total = u64::from(required_bits(max_vocab)) + u64::from(value_bits);
        Some((entries.checked_add(1)?.checked_mul(total)?.checked_add(7)?) / 8 + 8)
    }

    pub(crate) fn new(base: usize, max_vocab: u64, value_bits: u8) -> Packed {
        let word_bits = required_bits(max_vocab);
        Packed {
            base_bit: base as u64 * 8,
            word_bits,
            total_bits: word_bits + value_bits,
            max_vocab,
        }
    }

    /// Absolute bit offset of the value bits of the record for `word` under `range`.
    #[inline]
    fn find(&self, data: &[u8], word: u32, range: NodeRange) -> Option<(u64, u64)> {
        if range.begin >= range.end {
            return None;
        }
        let total = u64::from(self.total_bits);
        let mask = mask_of(self.word_bits);
        let at = |i: u64| {
            int_at(
                data,
                self.base_bit.wrapping_add(i.wrapping_mul(total)),
                mask,
            )
        };
        // kenlm's Pivot32 interpolation guess.
        let pivot = |off: u64, span: u64, width: u64| {
            off.wrapping_mul(width)
                .checked_div(span.wrapping_add(1))
                .unwrap_or(0)
        };
        let index = bounded_uniform_find(
            range.begin.wrapping_sub(1),
            0,
            range.end,
            self.max_vocab,
            u64::from(word),
            pivot,
            at,
        )?;
        Some((
            index,
            self.base_bit
                .wrapping_add(index.wrapping_mul(total))
                .wrapping_add(u64::from(self.word_bits)),
        ))
    }
}

/// How a middle order stores the pointer to its children.
#[derive(Debug, Clone)]
pub(crate) enum Next {
    /// The whole pointer inline.
    Plain { bits: u8 },
    /// Low `bits` inline; high bits recovered from a sorted array of record indices
    /// at which each high value starts (Raj & Whittaker 2003).
    Array {
        bits: u8,
        offsets: usize,
        count: u64,
    },
}

/// kenlm's `ChopBits`: how many high pointer bits the array replaces.
fn chop_bits(max_offset: u64, max_next: u64, max_bits: u8) -> u8 {
    let required = required_bits(max_next);
    let mut best = 0;
    let mut lowest = i64::MAX;
    for chop in 0..=required.min(max_bits) {
        // Same unsigned wrap-around as the C++ expression.
        let change = ((max_next >> (required - chop)).wrapping_mul(64))
            .wrapping_sub(max_offset.wrapping_mul(u64::from(chop))) as i64;
        if change < lowest {
            lowest = change;
            best = chop;
        }
    }
    best
}

impl Next {
    /// Layout of the pointer storage for a middle array starting at byte `base` with
    /// `entries` records pointing into `max_next` children; returns it, its array size
    /// in bytes, and the inline bit count.
    pub(crate) fn layout(
        base: usize,
        entries: u64,
        max_next: u64,
        array_bits: Option<u8>,
    ) -> (Next, u64) {
        let required = required_bits(max_next);
        match array_bits {
            None => (Next::Plain { bits: required }, 0),
            Some(max_bits) => {
                let max_offset = entries + 1;
                let chop = chop_bits(max_offset, max_next, max_bits);
                let count = (max_next >> (required - chop)) + 1;
                // The array starts 8 bytes past the next 8-byte boundary (header holds
                // version and bits); mmap bases are page aligned, so file offsets suffice.
                let offsets = align8(base as u64) as usize + 8;
                let size = 8 * (1 + count) + 7;
                (
                    Next::Array {
                        bits: required - chop,
                        offsets,
                        count,
                    },
                    size,
                )
            }
        }
    }

    pub(crate) fn inline_bits(&self) -> u8 {
        match self {
            Next::Plain { bits } | Next::Array { bits, .. } => *bits,
        }
    }

    /// Children range of record `index` whose pointer bits start at `bit_off`.
    #[inline]
    fn read(&self, data: &[u8], bit_off: u64, index: u64, total_bits: u8) -> NodeRange {
        let next_off = bit_off.wrapping_add(u64::from(total_bits));
        match *self {
            Next::Plain { bits } => NodeRange {
                begin: int_at(data, bit_off, mask_of(bits)),
                end: int_at(data, next_off, mask_of(bits)),
            },
            Next::Array {
                bits,
                offsets,
                count,
            } => {
                let at = |i: u64| u64_at(data, offsets.wrapping_add((i as usize).wrapping_mul(8)));
                // upper_bound(index) - 1: last array slot whose start is <= index.
                let (mut lo, mut hi) = (0u64, count);
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    if at(mid) <= index {
                        lo = mid + 1
                    } else {
                        hi = mid
                    }
                }
                let begin_it = lo.saturating_sub(1);
                let mut end_it = begin_it + 1;
                while end_it < count && at(end_it) <= index.wrapping_add(1) {
                    end_it += 1;
                }
                end_it -= 1;
                NodeRange {
                    begin: (begin_it << bits) | int_at(data, bit_off, mask_of(bits)),
                    end: (end_it << bits) | int_at(data, next_off, mask_of(bits)),
                }
            }
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Middle {
    pub packed: Packed,
    pub quant_bits: u8,
    pub next: Next,
}

#[derive(Debug, Clone)]
pub(crate) struct TrieSearch {
    pub unigrams: usize,
    pub unigram_count: u64,
    pub quant: Quant,
    pub middles: Vec<Middle>,
    pub longest: Packed,
}

impl Search for TrieSearch {
    type Node = NodeRange;

    #[inline]
    fn unigram(&self, data: &[u8], word: u32) -> (Weights, NodeRange, bool) {
        let off = if u64::from(word) <= self.unigram_count {
            self.unigrams + word as usize * UNIGRAM_ENTRY
        } else {
            usize::MAX // corrupt id: reads as zeros
        };
        let weights = Weights {
            prob: f32_at(data, off),
            backoff: f32_at(data, off.wrapping_add(4)),
        };
        let range = NodeRange {
            begin: u64_at(data, off.wrapping_add(8)),
            end: u64_at(data, off.wrapping_add(8 + UNIGRAM_ENTRY)),
        };
        (weights, range, range.begin == range.end)
    }

    #[inline]
    fn middle(
        &self,
        data: &[u8],
        order_minus_2: usize,
        word: u32,
        node: &mut NodeRange,
    ) -> Option<(Weights, bool)> {
        let middle = self.middles.get(order_minus_2)?;
        let (index, at) = middle.packed.find(data, word, *node)?;
        let weights = self.quant.middle(data, order_minus_2, at);
        *node = middle.next.read(
            data,
            at.wrapping_add(u64::from(middle.quant_bits)),
            index,
            middle.packed.total_bits,
        );
        Some((weights, node.begin == node.end))
    }

    #[inline]
    fn longest(&self, data: &[u8], word: u32, node: &NodeRange) -> Option<f32> {
        let (_, at) = self.longest.find(data, word, *node)?;
        Some(self.quant.longest(data, at))
    }
}
