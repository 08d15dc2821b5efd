//! Hash functions shared with kenlm's on-disk formats: MurmurHash64A for vocabulary
//! words and the multiplicative combination that keys n-grams in the probing tables.

/// MurmurHash64A (Austin Appleby) with kenlm's seed handling; little-endian blocks.
pub(crate) fn murmur_hash_64a(key: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = seed ^ (key.len() as u64).wrapping_mul(M);
    let mut blocks = key.chunks_exact(8);
    for block in &mut blocks {
        let mut k = u64::from_le_bytes(block.try_into().expect("8-byte chunk"));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// Hash of a vocabulary word as kenlm stores it (`HashForVocab`).
pub(crate) fn vocab_hash(word: &[u8]) -> u64 {
    murmur_hash_64a(word, 0)
}

/// Extends an n-gram key by one more (earlier) context word (`CombineWordHash`).
/// `1 + next` wraps in 32 bits first, as the C++ `unsigned` addition does.
#[inline]
pub(crate) fn combine_word_hash(current: u64, next: u32) -> u64 {
    current.wrapping_mul(8_978_948_897_894_561_157)
        ^ u64::from(next.wrapping_add(1)).wrapping_mul(17_894_857_484_156_487_943)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_lengths_differ() {
        // Every tail length takes a different branch; hashes must all differ.
        let word = b"abcdefghijklmnop";
        let hashes: Vec<u64> = (0..=16).map(|n| vocab_hash(&word[..n])).collect();
        let mut sorted = hashes.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), hashes.len());
    }
}
