//! The keys a deduplicator decides from: each row's 128-bit keys (one hash, or one per MinHash
//! band, or a SimHash value), read from its hash column, and exact dedup's keep-first rule over
//! them.

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{Result, exec_datafusion_err, exec_err};
use dj_udfs::DedupKind;

use super::blake3_lanes::{key_of_bytes, keys_of_messages};

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
    /// Keys with one row per slice, for tests.
    #[cfg(test)]
    pub(crate) fn from_rows(rows: &[&[u128]]) -> Keys {
        let mut k = Keys::new();
        for row in rows {
            k.push_row(row.iter().copied());
        }
        k
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

/// 128-bit key of a hash value: the value itself when it is 32 hex digits (an MD5), else a
/// BLAKE3 digest prefix of its bytes.
fn key_of(value: &str) -> u128 {
    if value.len() == 32
        && let Ok(k) = u128::from_str_radix(value, 16)
    {
        return k;
    }
    key_of_bytes(value.as_bytes())
}

/// The key of a SimHash value: its decimal string (`str(np.uint64(h))`) parsed, zero-extended.
fn simhash_key(value: &str) -> Result<u128> {
    value.parse::<u64>().map(u128::from).map_err(|_| {
        exec_datafusion_err!("a SimHash must be a decimal 64-bit unsigned integer, got {value:?}")
    })
}

/// Appends the keys of every row of the hash column: one per string hash (a SimHash's value
/// itself), one per band of a `List<Binary>` of band keys; none for a null.
pub(crate) fn keys_of(
    kind: DedupKind,
    batch: &RecordBatch,
    col: usize,
    out: &mut Keys,
) -> Result<()> {
    let c = batch.column(col);
    let simhash = matches!(kind, DedupKind::SimHash { .. });
    let push = |out: &mut Keys, v: Option<&str>| -> Result<()> {
        match v {
            Some(v) if simhash => out.push_row([simhash_key(v)?]),
            v => out.push_row(v.map(key_of)),
        }
        Ok(())
    };
    match c.data_type() {
        DataType::Utf8 => c.as_string::<i32>().iter().try_for_each(|v| push(out, v))?,
        DataType::LargeUtf8 => c.as_string::<i64>().iter().try_for_each(|v| push(out, v))?,
        DataType::Utf8View => c.as_string_view().iter().try_for_each(|v| push(out, v))?,
        DataType::List(f) if matches!(f.data_type(), DataType::Binary) => {
            // Every band of the batch, hashed sixteen at a time, then handed out by row.
            let list = c.as_list::<i32>();
            let bands = list.values().as_binary::<i32>();
            let offsets = list.value_offsets();
            let mut messages = Vec::new();
            let mut counts = Vec::with_capacity(list.len());
            for i in 0..list.len() {
                let before = messages.len();
                if !list.is_null(i) {
                    let (start, end) = (offsets[i] as usize, offsets[i + 1] as usize);
                    messages.extend(
                        (start..end)
                            .filter(|&j| !bands.is_null(j))
                            .map(|j| bands.value(j)),
                    );
                }
                counts.push(messages.len() - before);
            }
            let mut keys = Vec::new();
            keys_of_messages(&messages, &mut keys);
            let mut at = 0;
            for count in counts {
                out.push_row(keys[at..at + count].iter().copied());
                at += count;
            }
        }
        other => {
            return exec_err!(
                "hash column must be a string or a list of binary band keys, got {other}"
            );
        }
    }
    Ok(())
}
