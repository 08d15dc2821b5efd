//! Deciding a selector whose values do not fit its memory budget. A top-k or range selector's
//! rows go to a temporary Arrow IPC file per partition as `(value, dataset order, row)`;
//! DataFusion's `SortExec` sorts them within the budget ([`super::external`]) by value
//! (descending for `reverse`) and then dataset order, which is `heapq.nlargest`/`nsmallest`'s
//! order with ties in dataset order, and the first `k` get their output ranks. A range selector
//! does Data-Juicer's two passes: the `upper` smallest, then the `upper - lower` largest of those
//! (ties in the first pass's order). A selector that passes the dataset unchanged ranks every row
//! by dataset order instead. Only numbers sort this way: a partition with a missing or NaN value
//! makes the barrier decide in memory (see [`sortable`]). A frequency selector's rows are sorted
//! by group instead ([`super::sorted_groups`]).

use std::sync::Arc;

use datafusion::arrow::array::{AsArray, Float64Array, RecordBatch, UInt32Array, UInt64Array};
use datafusion::arrow::datatypes::{DataType, Field, Float64Type, Schema, SchemaRef, UInt64Type};
use datafusion::common::{Result, exec_err};
use dj_udfs::SelectorKind;
use dj_udfs::selector::SelectValue;

use super::external::{MemoryBudget, RowFile, RowFileWriter, sort_files};
use super::sorted_groups::{decide_frequency, write_groups};
use super::values::{Ranking, SelectRows};

/// Whether a `kind` selector can decide from `rows` sorted on disk: a frequency selector always
/// can (it sorts by group key); the others when every value is a number that sorts as the
/// in-memory selection compares it (NaN compares equal to everything there, which no sort
/// reproduces).
pub(crate) fn sortable(kind: &SelectorKind, rows: &SelectRows) -> bool {
    matches!(kind, SelectorKind::Frequency { .. })
        || (rows.values.iter()).all(|v| matches!(v, SelectValue::Number(x) if !x.is_nan()))
}

fn file_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("value", DataType::Float64, false),
        Field::new("order", DataType::UInt64, false),
        Field::new("row", DataType::UInt32, false),
    ]))
}

/// One partition's selector rows on disk.
pub(crate) struct ValueFile(RowFile);

impl ValueFile {
    /// Writes `rows` of a `kind` selector, which are [`sortable`]: by group for a frequency
    /// selector ([`write_groups`]), by value for the others.
    pub(crate) fn write(kind: &SelectorKind, rows: &SelectRows) -> Result<ValueFile> {
        if matches!(kind, SelectorKind::Frequency { .. }) {
            return Ok(ValueFile(write_groups(rows)?));
        }
        const BATCH_ROWS: usize = 1 << 15;
        let n = rows.order.len();
        let batches = (0..n).step_by(BATCH_ROWS).map(|a| {
            let b = (a + BATCH_ROWS).min(n);
            // -0.0 and 0.0 compare equal in memory; the sort orders them apart.
            let values: Vec<f64> = (rows.values[a..b].iter())
                .map(|v| match v {
                    SelectValue::Number(x) => x + 0.0,
                    _ => f64::NAN,
                })
                .collect();
            Ok(RecordBatch::try_new(
                file_schema(),
                vec![
                    Arc::new(Float64Array::from(values)),
                    Arc::new(UInt64Array::from(rows.order[a..b].to_vec())),
                    Arc::new(UInt32Array::from_iter_values(a as u32..b as u32)),
                ],
            )?)
        });
        Ok(ValueFile(RowFile::write(n, batches)?))
    }

    /// The rows of a selector by value back, to decide in memory.
    pub(crate) fn read(self) -> Result<SelectRows> {
        let mut rows = SelectRows::default();
        for batch in self.0.read()? {
            let values = batch.column(0).as_primitive::<Float64Type>();
            rows.values
                .extend(values.values().iter().map(|x| SelectValue::Number(*x)));
            let order = batch.column(1).as_primitive::<UInt64Type>();
            rows.order.extend(order.values().iter().copied());
        }
        Ok(rows)
    }

    pub(crate) fn rows(&self) -> usize {
        self.0.rows()
    }
}

/// Output ranks per partition and row ([`super::values::DROPPED`] for rows not selected) of a top-k, range or
/// frequency selector over `parts` (in partition order), sorted on disk within `budget`.
pub(crate) fn decide_sorted(
    kind: &SelectorKind,
    budget: &MemoryBudget,
    parts: Vec<ValueFile>,
) -> Result<Vec<Vec<u64>>> {
    let mut ranking = Ranking::new(parts.iter().map(ValueFile::rows));
    let files: Vec<RowFile> = parts.into_iter().map(|f| f.0).collect();
    let n = ranking.total;
    let by_order = [("order", false)];
    match kind {
        SelectorKind::TopK { reverse, .. } => {
            let (order, keep) = match kind.top_count(n) {
                None => (&by_order[..], n),
                Some(k) => (&[("value", *reverse), ("order", false)][..], k),
            };
            rank_first(budget, files, order, (keep, 2), &mut ranking)?;
        }
        SelectorKind::Range { .. } => match kind.range_bounds(n) {
            None => rank_first(budget, files, &by_order, (n, 2), &mut ranking)?,
            Some((lower, upper)) => {
                // Data-Juicer's two passes: the `upper` smallest (ties in dataset order), then
                // the `upper - lower` largest of those (ties in that first order).
                let smallest = first_sorted(budget, files, upper)?;
                let by_value = [("value", true)];
                let keep = (upper - lower, 1);
                rank_first(budget, vec![smallest], &by_value, keep, &mut ranking)?;
            }
        },
        SelectorKind::Frequency { .. } => return decide_frequency(kind, budget, files),
        SelectorKind::Random { .. } => {
            return exec_err!("a random selector does not decide from values sorted on disk");
        }
    }
    Ok(ranking.ranks)
}

/// Sorts `files` by `order` (then global row) and gives the first `keep` rows their ranks; a
/// row's global index is in column `target` of the sorted batches.
fn rank_first(
    budget: &MemoryBudget,
    files: Vec<RowFile>,
    order: &[(&str, bool)],
    (keep, target): (usize, usize),
    ranking: &mut Ranking,
) -> Result<()> {
    let mut rank = 0u64;
    sort_files(budget, &file_schema(), files, order, |batch| {
        let rows = batch.column(target).as_primitive::<UInt64Type>().values();
        for g in rows.iter().take(keep.saturating_sub(rank as usize)) {
            ranking.set(*g as usize, rank);
            rank += 1;
        }
        Ok(())
    })?;
    Ok(())
}

/// The `k` smallest rows of `files` (ties in dataset order), as one file in that order whose
/// `order` column holds each row's global index and whose row column its position.
fn first_sorted(budget: &MemoryBudget, files: Vec<RowFile>, k: usize) -> Result<RowFile> {
    let mut out = RowFileWriter::default();
    let mut taken = 0usize;
    let by_value = [("value", false), ("order", false)];
    sort_files(budget, &file_schema(), files, &by_value, |batch| {
        let n = batch.num_rows().min(k - taken);
        if n == 0 {
            return Ok(());
        }
        let positions = UInt32Array::from_iter_values(taken as u32..(taken + n) as u32);
        out.write(&RecordBatch::try_new(
            file_schema(),
            vec![
                batch.column(0).slice(0, n),
                batch.column(2).slice(0, n),
                Arc::new(positions),
            ],
        )?)?;
        taken += n;
        Ok(())
    })?;
    out.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nodes::select::SelectBarrier;

    /// Per partition its rows: values with many ties, signed zeros and infinities; dataset order
    /// keys as the runner makes them (partition in the high bits).
    fn parts(partitions: usize, rows: usize, nan_at: Option<usize>) -> Vec<SelectRows> {
        let mut state = 0x1234_5678_9abc_def0u64;
        let per = rows.div_ceil(partitions);
        (0..partitions)
            .map(|p| {
                let mut part = SelectRows::default();
                for i in 0..per.min(rows - (p * per).min(rows)) {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    let g = p * per + i;
                    let x = match state % 50 {
                        0 => -0.0,
                        1 => 0.0,
                        2 => f64::INFINITY,
                        _ if Some(g) == nan_at => f64::NAN,
                        v => (v % 17) as f64 / 4.0 - 2.0,
                    };
                    part.order.push(((p as u64) << 40) | i as u64);
                    part.values.push(SelectValue::Number(x));
                }
                part
            })
            .collect()
    }

    fn ranks(b: &SelectBarrier, partitions: usize) -> Vec<Vec<u64>> {
        (0..partitions).map(|p| b.ranks(p).unwrap()).collect()
    }

    /// Top-k and range selectors past their budget rank exactly as in memory: by count and by
    /// ratio, largest and smallest, percentiles and ranks, passing unchanged, for 1, 3 and 7
    /// partitions arriving in any order; with a NaN, from the files read back.
    #[test]
    fn spilled_selections_match_the_in_memory_ones() {
        let top = |top_ratio, topk, reverse| SelectorKind::TopK {
            top_ratio,
            topk,
            reverse,
        };
        let range =
            |lower_percentile, upper_percentile, lower_rank, upper_rank| SelectorKind::Range {
                lower_percentile,
                upper_percentile,
                lower_rank,
                upper_rank,
            };
        let kinds = [
            top(Some(0.3), None, true),
            top(None, Some(123), false),
            top(Some(0.5), Some(40), true),
            top(None, None, false),
            range(Some(0.2), Some(0.7), None, None),
            range(Some(0.1), Some(0.9), Some(100), Some(900)),
            range(Some(0.3), None, None, None),
        ];
        for kind in kinds {
            for partitions in [1, 3, 7] {
                for nan_at in [None, Some(700)] {
                    let parts = parts(partitions, 1500, nan_at);
                    let expected = crate::nodes::select::decide(&kind, &parts);
                    for (budget, spills) in [(None, false), (Some(32 << 10), true)] {
                        let b = SelectBarrier::new(0, kind.clone(), partitions, None, None);
                        if let Some(bytes) = budget {
                            b.set_budget(MemoryBudget::new(bytes).unwrap());
                        }
                        let mut order: Vec<usize> = (0..partitions).collect();
                        order.rotate_left(partitions / 2);
                        for p in order {
                            b.contribute(p, parts[p].clone()).unwrap();
                        }
                        let case = format!("{kind:?}, {partitions} partitions, NaN {nan_at:?}");
                        assert_eq!(b.spilled(), spills, "{case}");
                        assert_eq!(ranks(&b, partitions), expected, "{case}");
                    }
                }
            }
        }
    }
}
