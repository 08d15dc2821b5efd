//! The keys a deduplicator decides from: each row's 128-bit keys (one hash, or one per MinHash
//! band, or a SimHash value), and exact dedup's keep-first rule over them.

/// Keys of one partition's rows entering the dedup, flat: row `i` has
/// `keys[offsets[i]..offsets[i + 1]]`. A row without keys (null hash) is never a duplicate. Exact
/// dedup has one key per row; MinHash one per LSH band; SimHash one per row, the 64-bit value
/// itself (zero-extended, so it survives the key file unchanged).
#[derive(Debug, Clone, PartialEq)]
pub struct Keys {
    offsets: Vec<u32>,
    pub(crate) keys: Vec<u128>,
}

impl Default for Keys {
    fn default() -> Self {
        Keys::new()
    }
}

impl Keys {
    pub fn new() -> Self {
        Keys {
            offsets: vec![0],
            keys: Vec::new(),
        }
    }
    pub(crate) fn push_row(&mut self, row: impl IntoIterator<Item = u128>) {
        self.keys.extend(row);
        self.offsets.push(self.keys.len() as u32);
    }
    pub fn rows(&self) -> usize {
        self.offsets.len() - 1
    }
    /// Forgets every row, keeping the allocations.
    pub(crate) fn clear(&mut self) {
        self.offsets.truncate(1);
        self.keys.clear();
    }
    /// The bytes its buffers take.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.keys.capacity() * 16 + self.offsets.capacity() * 4
    }
    /// The keys of row `i`.
    pub fn row(&self, i: usize) -> &[u128] {
        &self.keys[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }
}

/// A set of 128-bit keys. They are hashes already, so a fast hasher (foldhash) spreads them as
/// well as SipHash; SipHash made the decision over a million rows' MinHash band keys several
/// times slower.
pub type KeySet = std::collections::HashSet<u128, foldhash::fast::RandomState>;

/// Exact dedup's decision for one partition's rows, given the keys of the partitions before it
/// (`seen`, to which the kept keys are added): a row is kept unless its key was seen.
pub fn keep_first(keys: &Keys, seen: &mut KeySet) -> Vec<bool> {
    (0..keys.rows())
        .map(|i| keys.row(i).iter().all(|key| seen.insert(*key)))
        .collect()
}
