//! Deciding a deduplicator whose keys do not fit its memory budget. Each partition's keys go to
//! a temporary Arrow IPC file as `(key, row)` pairs; DataFusion's `SortExec`, under the budget's
//! memory pool, sorts all pairs by key and then by global row ([`super::external`]); one pass over
//! the sorted pairs joins each key's rows to its first row. MinHash unions them (a union-find over global row indices whose roots are the
//! smallest index, as in memory); exact dedup drops every row but the first. SimHash unions each
//! value's rows too, then searches the distinct values for near ones on disk
//! ([`super::sorted_simhash`]). The survivors are the in-memory paths' exactly: the smallest row of
//! each component, the first row of each key.
//!
//! What stays in memory is 4 bytes per row for the union-find and 1 per row for the masks, plus
//! what the sort holds within the budget.

use std::sync::Arc;

use datafusion::arrow::array::{AsArray, RecordBatch, UInt32Array, UInt64Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, UInt64Type};
use datafusion::common::{Result, exec_err};
use dj_udfs::DedupKind;

use super::external::{MemoryBudget, RowFile, RowFileWriter, sort_files};
use super::keys::Keys;
use super::sorted_simhash::{PermutedValues, join_near_values};

/// One partition's keys on disk: its rows' `(key, row)` pairs in row order.
pub(crate) struct KeyFile(RowFile);

impl KeyFile {
    /// Writes `keys` (row `i`'s keys as pairs with row `i`).
    pub(crate) fn write(keys: &Keys) -> Result<KeyFile> {
        let mut writer = KeyFileWriter::default();
        writer.append(keys)?;
        writer.finish()
    }

    pub(crate) fn rows(&self) -> usize {
        self.0.rows()
    }
}

/// A [`KeyFile`] written a few rows at a time.
#[derive(Default)]
pub(crate) struct KeyFileWriter {
    file: RowFileWriter,
    rows: usize,
}

impl KeyFileWriter {
    /// Appends the rows of `keys`, which follow those appended before, a few thousand rows a
    /// batch.
    pub(crate) fn append(&mut self, keys: &Keys) -> Result<()> {
        const BATCH_ROWS: usize = 4096;
        for start in (0..keys.rows()).step_by(BATCH_ROWS) {
            let (mut hi, mut lo, mut row) = (Vec::new(), Vec::new(), Vec::new());
            for i in start..(start + BATCH_ROWS).min(keys.rows()) {
                for key in keys.row(i) {
                    hi.push((key >> 64) as u64);
                    lo.push(*key as u64);
                    row.push((self.rows + i) as u32);
                }
            }
            self.file.write(&pairs_batch(hi, lo, row)?)?;
        }
        self.rows += keys.rows();
        Ok(())
    }

    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    pub(crate) fn finish(self) -> Result<KeyFile> {
        Ok(KeyFile(self.file.finish_rows(self.rows)?))
    }
}

fn file_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("hi", DataType::UInt64, false),
        Field::new("lo", DataType::UInt64, false),
        Field::new("row", DataType::UInt32, false),
    ]))
}

fn pairs_batch(hi: Vec<u64>, lo: Vec<u64>, row: Vec<u32>) -> Result<RecordBatch> {
    Ok(RecordBatch::try_new(
        file_schema(),
        vec![
            Arc::new(UInt64Array::from(hi)),
            Arc::new(UInt64Array::from(lo)),
            Arc::new(UInt32Array::from(row)),
        ],
    )?)
}

/// The keep-masks of `parts` (in partition order), from their keys on disk sorted within
/// `budget`. Rows of `before` come ahead of every partition's and get no mask: exact dedup's keys
/// of partitions it already decided. Blocks; runs the sort on a private runtime.
pub(crate) fn decide_sorted(
    kind: DedupKind,
    budget: &MemoryBudget,
    before: Option<KeyFile>,
    parts: Vec<KeyFile>,
) -> Result<Vec<Vec<bool>>> {
    let skip = before.as_ref().map_or(0, KeyFile::rows);
    let rows: Vec<usize> = parts.iter().map(KeyFile::rows).collect();
    let total = skip + rows.iter().sum::<usize>();
    if total > u32::MAX as usize {
        return exec_err!("a deduplicator over {total} rows: at most 2^32 - 1 are supported");
    }
    let files: Vec<RowFile> = before.into_iter().chain(parts).map(|f| f.0).collect();
    let mut joiner = match kind {
        DedupKind::Exact => Joiner::First(vec![true; total]),
        DedupKind::MinHashBands | DedupKind::SimHash { .. } => {
            Joiner::Components((0..total as u32).collect())
        }
    };
    // SimHash: the distinct values (a key's low half) and their first rows, to search.
    let mut distinct = match kind {
        DedupKind::SimHash {
            num_blocks,
            hamming_distance,
        } => Some(PermutedValues::first(num_blocks, hamming_distance)?),
        _ => None,
    };
    let mut last: Option<(u64, u64, u32)> = None;
    let by_key = [("hi", false), ("lo", false)];
    sort_files(budget, &file_schema(), files, &by_key, |batch| {
        let hi = batch.column(0).as_primitive::<UInt64Type>().values();
        let lo = batch.column(1).as_primitive::<UInt64Type>().values();
        let row = batch.column(2).as_primitive::<UInt64Type>().values();
        for i in 0..batch.num_rows() {
            let g = row[i] as u32;
            match last {
                Some((h, l, first)) if h == hi[i] && l == lo[i] => joiner.join(first, g),
                _ => {
                    last = Some((hi[i], lo[i], g));
                    if let Some(distinct) = &mut distinct {
                        distinct.push(lo[i], g as u64)?;
                    }
                }
            }
        }
        Ok(())
    })?;
    if let (
        Some(distinct),
        DedupKind::SimHash {
            num_blocks,
            hamming_distance,
        },
    ) = (distinct, kind)
    {
        join_near_values(budget, distinct, num_blocks, hamming_distance, |a, b| {
            joiner.join(a as u32, b as u32);
            Ok(())
        })?;
    }
    let keep = joiner.keep();
    let mut at = skip;
    Ok(rows
        .iter()
        .map(|n| {
            let mask = keep[at..at + n].to_vec();
            at += n;
            mask
        })
        .collect())
}

/// How a key's later rows join its first.
enum Joiner {
    /// Exact dedup: the later rows are dropped.
    First(Vec<bool>),
    /// MinHash: the rows are one component; its smallest row is the root and survives.
    Components(Vec<u32>),
}

impl Joiner {
    fn join(&mut self, first: u32, row: u32) {
        match self {
            Joiner::First(keep) => keep[row as usize] = false,
            Joiner::Components(parent) => {
                let (a, b) = (find(parent, first), find(parent, row));
                let (lo, hi) = (a.min(b), a.max(b));
                parent[hi as usize] = lo;
            }
        }
    }

    fn keep(self) -> Vec<bool> {
        match self {
            Joiner::First(keep) => keep,
            Joiner::Components(mut parent) => (0..parent.len() as u32)
                .map(|g| find(&mut parent, g) == g)
                .collect(),
        }
    }
}

/// The root of `x`, halving the path.
pub(crate) fn find(parent: &mut [u32], mut x: u32) -> u32 {
    while parent[x as usize] != x {
        parent[x as usize] = parent[parent[x as usize] as usize];
        x = parent[x as usize];
    }
    x
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn minhash_components_keep_their_smallest_row() {
        // Rows 0-1 share key 7; 1-3 share 9 (a chain 0-1-3); 2 and 4 are alone; 5 has no keys.
        let parts = [
            Keys::from_rows(&[&[7, 1], &[7, 9]]),
            Keys::from_rows(&[&[2], &[9], &[4], &[]]),
        ];
        let budget = MemoryBudget::new(1 << 20).unwrap();
        let files = parts.iter().map(|k| KeyFile::write(k).unwrap()).collect();
        let masks = decide_sorted(DedupKind::MinHashBands, &budget, None, files).unwrap();
        assert_eq!(masks, [vec![true, false], vec![true, false, true, true]]);
    }

    #[test]
    fn exact_keys_before_drop_later_rows() {
        let budget = MemoryBudget::new(1 << 20).unwrap();
        let before = KeyFile::write(&Keys::from_rows(&[&[5]])).unwrap();
        let files = vec![KeyFile::write(&Keys::from_rows(&[&[5], &[6], &[6], &[]])).unwrap()];
        let masks = decide_sorted(DedupKind::Exact, &budget, Some(before), files).unwrap();
        assert_eq!(masks, [vec![false, true, false, true]]);
    }

    /// Per row its keys: `bands` per row for MinHash (one for exact), with a long chain (row
    /// `i` shares a band with row `i + 1` over a third of the rows), one hub key shared by every
    /// fifth row, rows without keys (nulls) every thirteenth, and the rest pseudo-random.
    pub(crate) fn corpus(rows: usize, bands: usize) -> Vec<Vec<u128>> {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        (0..rows)
            .map(|i| {
                if i % 13 == 5 {
                    return Vec::new();
                }
                (0..bands)
                    .map(|b| {
                        let b128 = b as u128;
                        if i < rows / 3 && b == i % bands {
                            (b128 << 64) | (i / 2) as u128 // shared with a neighbour
                        } else if i % 5 == 0 && b == 0 {
                            7 << 100 // the hub
                        } else if bands == 1 {
                            (next() % (rows as u64 / 3)) as u128 // exact: many repeats
                        } else {
                            (b128 << 64) | (next() % (rows as u64 * 4)) as u128
                        }
                    })
                    .collect()
            })
            .collect()
    }

    /// One SimHash value per row: a long chain (each of the first third's values one bit from
    /// the previous row's), a hub of values within a few bits of 0 every fifth row, exact repeats
    /// every seventh, no value (null) every thirteenth, and the rest pseudo-random.
    pub(crate) fn simhash_corpus(rows: usize) -> Vec<Vec<u128>> {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut chain = 0x0f0f_3c3c_a5a5_9696u64;
        let mut out: Vec<Vec<u128>> = Vec::with_capacity(rows);
        for i in 0..rows {
            let value = if i % 13 == 5 {
                None
            } else if i % 7 == 3 {
                out[i / 2].first().copied().map(|v| v as u64)
            } else if i < rows / 3 {
                chain ^= 1 << (i % 64);
                Some(chain)
            } else if i % 5 == 0 {
                Some((0..next() % 4).fold(0, |v, _| v | 1 << (next() % 64)))
            } else {
                Some(next())
            };
            out.push(value.map(|v| v as u128).into_iter().collect());
        }
        out
    }

    pub(crate) fn split(rows: &[Vec<u128>], partitions: usize) -> Vec<Keys> {
        let per = rows.len().div_ceil(partitions);
        (0..partitions)
            .map(|p| {
                let mut k = Keys::new();
                for r in rows.iter().skip(p * per).take(per) {
                    k.push_row(r.iter().copied());
                }
                k
            })
            .collect()
    }

    /// A barrier under a budget that its keys exceed gives the same masks as the in-memory
    /// decision, for 1, 3 and 7 partitions arriving in any order.
    #[test]
    fn spilled_decisions_match_the_in_memory_ones() {
        use super::super::dedup::DedupBarrier;
        let simhash = |num_blocks, hamming_distance| DedupKind::SimHash {
            num_blocks,
            hamming_distance,
        };
        for (kind, rows) in [
            (DedupKind::Exact, corpus(2000, 1)),
            (DedupKind::MinHashBands, corpus(2000, 4)),
            (simhash(6, 4), simhash_corpus(2000)),
            (simhash(4, 1), simhash_corpus(2000)),
        ] {
            for partitions in [1, 3, 7] {
                let parts = split(&rows, partitions);
                let expected = super::super::dedup::decide_in_memory(kind, &parts).unwrap();
                for (budget, spills) in [
                    (None, false),
                    (Some(64 << 10), true),
                    (Some(64 << 20), false),
                ] {
                    let b = DedupBarrier::new(0, kind, partitions, None, None);
                    if let Some(bytes) = budget {
                        b.set_budget(MemoryBudget::new(bytes).unwrap());
                    }
                    // Middle partitions first, then the first: exact dedup decides a prefix before
                    // the keys go to disk.
                    let mut order: Vec<usize> = (0..partitions).collect();
                    order.rotate_left(partitions / 2);
                    for p in order {
                        b.contribute(p, parts[p].clone()).unwrap();
                    }
                    let masks: Vec<Vec<bool>> = (0..partitions)
                        .map(|p| b.mask(p).unwrap().unwrap())
                        .collect();
                    let case = format!("{kind:?}, {partitions} partitions, budget {budget:?}");
                    assert_eq!(b.spilled(), spills, "{case}");
                    assert_eq!(masks, expected, "{case}");
                }
            }
        }
    }
}
