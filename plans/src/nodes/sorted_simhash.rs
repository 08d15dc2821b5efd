//! Deciding a SimHash deduplicator whose keys do not fit its memory budget: simhash-cpp's
//! block-permutation search with each permutation sorted on disk instead of in memory.
//!
//! [`super::sorted_keys`] sorts every `(value, row)` pair, joins each value's rows to its first
//! row and writes one `(permuted value, first row)` pair per distinct value (a staged decision
//! on a cluster gets them from its window query, with row ids for rows). Then, per
//! permutation, DataFusion's `SortExec` sorts those pairs within the budget, and one pass over each
//! run of equal leading blocks joins the first rows of every two values within the Hamming
//! distance, while writing the pairs under the next permutation. These are exactly the pairs
//! the in-memory search finds, so the components, and the survivor of each (its smallest row),
//! are the in-memory decision's. Memory: the union-find (4 bytes per row), one run of values
//! sharing their leading blocks, and what the sort holds within the budget.

use std::sync::Arc;

use datafusion::arrow::array::{AsArray, RecordBatch, UInt32Array, UInt64Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, UInt64Type};
use datafusion::common::{Result, exec_datafusion_err};
use dj_udfs::dedup::simhash::{Permutation, permutations, within};

use super::external::{MemoryBudget, RowFile, RowFileWriter, sort_files};

/// `(permuted value, first row, place in the file)`: the place is the row column
/// [`sort_files`] wants (a tie-break it never needs: the values are distinct).
fn file_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("value", DataType::UInt64, false),
        Field::new("first", DataType::UInt64, false),
        Field::new("place", DataType::UInt32, false),
    ]))
}

/// The distinct values with their first rows (global rows, or row ids), written under one
/// permutation.
pub(crate) struct PermutedValues {
    permutation: Permutation,
    values: Vec<u64>,
    rows: Vec<u64>,
    written: usize,
    file: RowFileWriter,
}

impl PermutedValues {
    const BATCH_ROWS: usize = 8192;

    fn new(permutation: Permutation) -> PermutedValues {
        PermutedValues {
            permutation,
            values: Vec::with_capacity(Self::BATCH_ROWS),
            rows: Vec::with_capacity(Self::BATCH_ROWS),
            written: 0,
            file: RowFileWriter::default(),
        }
    }

    /// The writer under the search's first permutation.
    pub(crate) fn first(num_blocks: usize, hamming_distance: usize) -> Result<PermutedValues> {
        let first = permutations(num_blocks, hamming_distance)
            .map_err(|e| exec_datafusion_err!("document_simhash_deduplicator: {e}"))?
            .next()
            .ok_or_else(|| exec_datafusion_err!("no SimHash permutation"))?;
        Ok(PermutedValues::new(first))
    }

    /// Appends a distinct value (unpermuted) and its first row.
    pub(crate) fn push(&mut self, value: u64, row: u64) -> Result<()> {
        self.values.push(self.permutation.apply(value));
        self.rows.push(row);
        if self.values.len() == Self::BATCH_ROWS {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.values.is_empty() {
            return Ok(());
        }
        let n = self.values.len();
        // Places only break ties between equal values, which never occur: they may wrap.
        let places = (self.written..self.written + n).map(|i| i as u32);
        self.written += n;
        let batch = RecordBatch::try_new(
            file_schema(),
            vec![
                Arc::new(UInt64Array::from(std::mem::take(&mut self.values))),
                Arc::new(UInt64Array::from(std::mem::take(&mut self.rows))),
                Arc::new(UInt32Array::from_iter_values(places)),
            ],
        )?;
        self.file.write(&batch)
    }

    fn finish(mut self) -> Result<(Permutation, RowFile)> {
        self.flush()?;
        Ok((self.permutation, self.file.finish()?))
    }
}

/// Calls `join(a, b)` for the first rows of every two distinct values within `hamming_distance`
/// bits (at least once per pair), from `values`, written under the first of the permutations of
/// `num_blocks` and `hamming_distance`. One sort on disk per permutation, within `budget`.
pub(crate) fn join_near_values(
    budget: &MemoryBudget,
    values: PermutedValues,
    num_blocks: usize,
    hamming_distance: usize,
    mut join: impl FnMut(u64, u64) -> Result<()> + Send,
) -> Result<()> {
    let mut rest = permutations(num_blocks, hamming_distance)
        .map_err(|e| exec_datafusion_err!("document_simhash_deduplicator: {e}"))?
        .skip(1);
    let (mut permutation, mut file) = values.finish()?;
    loop {
        let mut next = rest.next().map(PermutedValues::new);
        let mask = permutation.search_mask();
        let mut run: Vec<(u64, u64)> = Vec::new();
        let mut join_run = |run: &mut Vec<(u64, u64)>| -> Result<()> {
            for (a, &(va, ra)) in run.iter().enumerate() {
                for &(vb, rb) in &run[a + 1..] {
                    // A permutation moves bits, so permuted values differ in as many bits.
                    if within(va, vb, hamming_distance) {
                        join(ra, rb)?;
                    }
                }
            }
            run.clear();
            Ok(())
        };
        sort_files(
            budget,
            &file_schema(),
            vec![file],
            &[("value", false)],
            |batch| {
                let value = batch.column(0).as_primitive::<UInt64Type>().values();
                let row = batch.column(1).as_primitive::<UInt64Type>().values();
                for (&v, &r) in value.iter().zip(row) {
                    if let Some(next) = &mut next {
                        next.push(permutation.reverse(v), r)?;
                    }
                    if run
                        .first()
                        .is_some_and(|&(first, _)| first & mask != v & mask)
                    {
                        join_run(&mut run)?;
                    }
                    run.push((v, r));
                }
                Ok(())
            },
        )?;
        join_run(&mut run)?;
        match next {
            None => return Ok(()),
            Some(next) => (permutation, file) = next.finish()?,
        }
    }
}
