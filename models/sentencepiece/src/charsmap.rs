//! Reader for `NormalizerSpec.precompiled_charsmap`: a little-endian u32 length, a
//! darts-clone double array mapping UTF-8 sequences to offsets, then a blob of
//! NUL-terminated replacement strings. This is how nmt_nfkc, nfkc, nmt_nfkc_cf and custom
//! rule TSVs are stored, so no Unicode tables are needed at run time.

pub(crate) struct CharsMap {
    units: Vec<u32>,
    normalized: Vec<u8>,
}

// darts-clone unit layout (see darts.h: DoubleArrayUnit).
#[inline]
fn has_leaf(unit: u32) -> bool {
    (unit >> 8) & 1 == 1
}
#[inline]
fn value(unit: u32) -> u32 {
    unit & ((1 << 31) - 1)
}
#[inline]
fn label(unit: u32) -> u32 {
    unit & ((1 << 31) | 0xff)
}
#[inline]
fn offset(unit: u32) -> usize {
    ((unit >> 10) << ((unit & (1 << 9)) >> 6)) as usize
}

/// sentencepiece keeps at most this many matches per position (`kMaxTrieResultsSize`).
const MAX_MATCHES: usize = 32;

impl CharsMap {
    /// Whether some rule's key starts with `byte` (when none does, `byte` maps to itself).
    pub(crate) fn may_start_with(&self, byte: u8) -> bool {
        let node = offset(self.units[0]) ^ usize::from(byte);
        self.units
            .get(node)
            .is_some_and(|&unit| label(unit) == u32::from(byte))
    }

    /// Whether some rule's key starts with `prefix`.
    pub(crate) fn has_prefix(&self, prefix: &[u8]) -> bool {
        let mut node = offset(self.units[0]);
        for &byte in prefix {
            node ^= usize::from(byte);
            match self.units.get(node) {
                Some(&unit) if label(unit) == u32::from(byte) => node ^= offset(unit),
                _ => return false,
            }
        }
        true
    }

    /// Splits and validates the blob like sentencepiece 0.2.3's
    /// `DecodePrecompiledCharsMap` + `DoubleArray::validate`, so every transition and
    /// every value stays in bounds afterwards.
    pub(crate) fn decode(blob: &[u8]) -> Result<CharsMap, &'static str> {
        if blob.len() <= 4 {
            return Err("precompiled_charsmap is too short to hold its header");
        }
        let trie_size = u32::from_le_bytes([blob[0], blob[1], blob[2], blob[3]]) as usize;
        if trie_size >= blob.len() - 4 {
            return Err("precompiled_charsmap trie size exceeds the blob size");
        }
        if trie_size < 1024 || !trie_size.is_multiple_of(1024) {
            return Err("precompiled_charsmap trie size is not a multiple of 1024");
        }
        let (trie, normalized) = blob[4..].split_at(trie_size);
        if normalized.last() != Some(&0) {
            return Err("precompiled_charsmap strings are not NUL-terminated");
        }
        let units: Vec<u32> = trie
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        if !valid_double_array(&units, normalized.len()) {
            return Err("precompiled_charsmap trie is corrupt");
        }
        Ok(CharsMap {
            units,
            normalized: normalized.to_vec(),
        })
    }

    /// The longest rule matching a prefix of `text`: `(bytes consumed, replacement)`.
    #[inline]
    pub(crate) fn longest_prefix(&self, text: &[u8]) -> Option<(usize, &[u8])> {
        let mut node = offset(self.units[0]);
        let mut best: Option<(usize, usize)> = None;
        let mut matches = 0;
        for (i, &byte) in text.iter().enumerate() {
            node ^= usize::from(byte);
            let Some(&unit) = self.units.get(node) else {
                break;
            };
            if label(unit) != u32::from(byte) {
                break;
            }
            node ^= offset(unit);
            if has_leaf(unit) {
                let Some(&leaf) = self.units.get(node) else {
                    break;
                };
                best = Some((i + 1, value(leaf) as usize));
                matches += 1;
                if matches == MAX_MATCHES {
                    break;
                }
            }
        }
        let (len, at) = best?;
        let tail = self.normalized.get(at..)?;
        let end = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
        Some((len, &tail[..end]))
    }
}

/// darts-clone's `validate(max_value)`: the root is sane, every non-leaf unit's children
/// block lies inside the array, leaf flags point at leaf units, and values are `< max_value`.
fn valid_double_array(units: &[u32], max_value: usize) -> bool {
    let size = units.len();
    let root = units[0];
    if label(root) != 0 || has_leaf(root) || offset(root) == 0 || (offset(root) | 0xff) >= size {
        return false;
    }
    units.iter().enumerate().skip(1).all(|(i, &unit)| {
        if label(unit) <= 0xff {
            let children = i ^ offset(unit);
            (children | 0xff) < size && (!has_leaf(unit) || label(units[children]) > 0xff)
        } else {
            (value(unit) as usize) < max_value
        }
    })
}
