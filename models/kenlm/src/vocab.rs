//! Word -> id lookup over the two on-disk vocabularies: the probing hash table used by
//! `probing` models (and by ARPA files loaded into memory) and the sorted hash array
//! used by `trie` models. Unknown words map to id 0, `<unk>`.

use crate::binary::probing::find_slot;
use crate::bytes::{bounded_uniform_find, u32_at, u64_at};
use crate::hash::vocab_hash;

/// Size of one probing vocabulary entry: `u64` hash + `u32` id, packed to 4 bytes.
pub(crate) const PROBING_VOCAB_ENTRY: usize = 12;

/// Vocabulary of a probing model: a linear-probing table of (hash, id).
#[derive(Debug, Clone)]
pub(crate) struct ProbingVocab {
    /// Byte offset of the first bucket.
    pub table: usize,
    pub buckets: u64,
}

/// Vocabulary of a trie model: sorted word hashes; id = position + 1 (0 is `<unk>`).
#[derive(Debug, Clone)]
pub(crate) struct SortedVocab {
    /// Byte offset of the first hash.
    pub begin: usize,
    pub len: u64,
}

#[derive(Debug, Clone)]
pub(crate) enum Vocab {
    Probing(ProbingVocab),
    Sorted(SortedVocab),
}

impl Vocab {
    /// The id of `word`, 0 when it is not in the model.
    #[inline]
    pub(crate) fn index(&self, data: &[u8], word: &[u8]) -> u32 {
        let hash = vocab_hash(word);
        match self {
            Vocab::Probing(v) => find_slot(data, v.table, v.buckets, PROBING_VOCAB_ENTRY, hash)
                .map_or(0, |slot| u32_at(data, slot + 8)),
            Vocab::Sorted(v) => {
                let at = |i: u64| u64_at(data, v.begin.wrapping_add((i as usize).wrapping_mul(8)));
                // kenlm's Pivot64: a float-precision interpolation guess.
                let pivot = |off: u64, range: u64, width: u64| {
                    (off as f32 / range as f32 * width as f32) as u64
                };
                bounded_uniform_find(u64::MAX, 0, v.len, u64::MAX, hash, pivot, at)
                    .map_or(0, |i| (i + 1) as u32)
            }
        }
    }
}
