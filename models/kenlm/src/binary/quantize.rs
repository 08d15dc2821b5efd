//! Value storage in trie models: raw floats (31-bit non-positive probability + 32-bit
//! backoff) or `-q`/`-b` quantization, where each order has tables of bin centres and
//! entries store bin indices.

use crate::bytes::{bits_at, f32_at, int_at, mask_of};
use crate::search::{SIGN_BIT, Weights};

/// Version byte kenlm writes at the start of the quantization header.
pub(crate) const QUANT_VERSION: u8 = 2;

#[derive(Debug, Clone)]
pub(crate) enum Quant {
    /// Middle entries hold 63 bits (prob, backoff), the highest order 31.
    Raw,
    Separate(SeparateQuant),
}

#[derive(Debug, Clone)]
pub(crate) struct SeparateQuant {
    pub prob_bits: u8,
    pub backoff_bits: u8,
    /// Per middle order: byte offsets of the probability and backoff centre tables.
    pub middle_tables: Vec<(usize, usize)>,
    pub longest_table: usize,
}

impl Quant {
    /// Bytes of the quantization header + tables for a model of `order`.
    pub(crate) fn size(order: usize, bits: Option<(u8, u8)>) -> u64 {
        match bits {
            None => 0,
            Some((prob, backoff)) => {
                let longest = (1u64 << prob) * 4;
                let middle = (1u64 << backoff) * 4 + longest;
                (order as u64 - 2) * middle + longest + 8
            }
        }
    }

    /// Lays out the centre tables of a header starting at byte `start`.
    pub(crate) fn separate(start: usize, order: usize, prob_bits: u8, backoff_bits: u8) -> Quant {
        let mut at = start + 8;
        let mut middle_tables = Vec::with_capacity(order - 2);
        for _ in 0..order - 2 {
            let prob = at;
            at += (1usize << prob_bits) * 4;
            middle_tables.push((prob, at));
            at += (1usize << backoff_bits) * 4;
        }
        Quant::Separate(SeparateQuant {
            prob_bits,
            backoff_bits,
            middle_tables,
            longest_table: at,
        })
    }

    pub(crate) fn middle_bits(&self) -> u8 {
        match self {
            Quant::Raw => 63,
            Quant::Separate(q) => q.prob_bits + q.backoff_bits,
        }
    }

    pub(crate) fn longest_bits(&self) -> u8 {
        match self {
            Quant::Raw => 31,
            Quant::Separate(q) => q.prob_bits,
        }
    }

    /// Weights of a middle entry whose value bits start at absolute bit `at`.
    #[inline]
    pub(crate) fn middle(&self, data: &[u8], order_minus_2: usize, at: u64) -> Weights {
        match self {
            Quant::Raw => Weights {
                prob: non_positive_31(data, at),
                backoff: f32::from_bits(bits_at(data, at.wrapping_add(31)) as u32),
            },
            Quant::Separate(q) => {
                let (probs, backoffs) = q
                    .middle_tables
                    .get(order_minus_2)
                    .copied()
                    .unwrap_or((usize::MAX, usize::MAX));
                let backoff = int_at(data, at, mask_of(q.backoff_bits)) as usize;
                let prob = int_at(
                    data,
                    at.wrapping_add(u64::from(q.backoff_bits)),
                    mask_of(q.prob_bits),
                ) as usize;
                Weights {
                    prob: f32_at(data, probs.wrapping_add(prob * 4)),
                    backoff: f32_at(data, backoffs.wrapping_add(backoff * 4)),
                }
            }
        }
    }

    /// Probability of a highest-order entry whose value bits start at absolute bit `at`.
    #[inline]
    pub(crate) fn longest(&self, data: &[u8], at: u64) -> f32 {
        match self {
            Quant::Raw => non_positive_31(data, at),
            Quant::Separate(q) => {
                let idx = int_at(data, at, mask_of(q.prob_bits)) as usize;
                f32_at(data, q.longest_table.wrapping_add(idx * 4))
            }
        }
    }
}

/// A float stored without its sign bit, which is known to be set.
#[inline]
fn non_positive_31(data: &[u8], at: u64) -> f32 {
    f32::from_bits((bits_at(data, at) as u32 & !SIGN_BIT) | SIGN_BIT)
}
