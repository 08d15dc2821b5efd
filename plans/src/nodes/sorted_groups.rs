//! Deciding a frequency selector whose values do not fit its memory budget. Each partition's rows
//! go to a temporary Arrow IPC file as `(group key, dataset order, row)`; DataFusion's `SortExec`
//! sorts them within the budget ([`super::external`]) by group and then dataset order, so one
//! pass sees each group's rows together, in dataset order: it counts them, notes the group's
//! first appearance and gives each row its place in its group. The groups are then ordered as
//! Data-Juicer orders them (by size, ties by first appearance, as a stable sort of a dict in
//! insertion order does), the first ones kept, and each row's output rank is its group's start
//! plus its place: the in-memory selection's ranks exactly.
//!
//! What stays in memory is the ranks (8 bytes per row, which every selector's decision returns)
//! and 28 bytes per distinct value, plus what the sort holds within the budget.

use std::sync::Arc;

use datafusion::arrow::array::{AsArray, RecordBatch, UInt8Array, UInt32Array, UInt64Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, UInt8Type, UInt64Type};
use datafusion::common::{Result, exec_err};
use dj_udfs::SelectorKind;
use dj_udfs::selector::SelectValue;

use super::external::{MemoryBudget, RowFile, sort_files};
use super::values::{DROPPED, Ranking, SelectRows};

pub(crate) fn file_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        // 0 for rows without a value (one group of their own), 1 for the others.
        Field::new("present", DataType::UInt8, false),
        Field::new("hi", DataType::UInt64, false),
        Field::new("lo", DataType::UInt64, false),
        Field::new("order", DataType::UInt64, false),
        Field::new("row", DataType::UInt32, false),
    ]))
}

/// Writes one partition's rows, keyed as the in-memory selection groups them: a group's digest,
/// a number's bits, or no value.
pub(crate) fn write_groups(rows: &SelectRows) -> Result<RowFile> {
    const BATCH_ROWS: usize = 1 << 15;
    let n = rows.order.len();
    let batches = (0..n).step_by(BATCH_ROWS).map(|a| {
        let b = (a + BATCH_ROWS).min(n);
        let keys: Vec<Option<u128>> = (rows.values[a..b].iter())
            .map(|v| match v {
                SelectValue::Group(g) => Some(*g),
                SelectValue::Number(x) => Some(x.to_bits() as u128),
                SelectValue::None => None,
            })
            .collect();
        let present = keys.iter().map(|k| k.is_some() as u8);
        let hi = keys.iter().map(|k| (k.unwrap_or(0) >> 64) as u64);
        let lo = keys.iter().map(|k| k.unwrap_or(0) as u64);
        Ok(RecordBatch::try_new(
            file_schema(),
            vec![
                Arc::new(UInt8Array::from_iter_values(present)),
                Arc::new(UInt64Array::from_iter_values(hi)),
                Arc::new(UInt64Array::from_iter_values(lo)),
                Arc::new(UInt64Array::from(rows.order[a..b].to_vec())),
                Arc::new(UInt32Array::from_iter_values(a as u32..b as u32)),
            ],
        )?)
    });
    RowFile::write(n, batches)
}

/// One group of equal values: its first appearance (dataset order) and its rows.
#[derive(Clone, Copy)]
struct Group {
    first: u64,
    size: u32,
}

/// Output ranks per partition and row ([`DROPPED`] for rows not selected) of a frequency
/// selector over `files` (written by [`write_groups`], in partition order), sorted on disk
/// within `budget`.
pub(crate) fn decide_frequency(
    kind: &SelectorKind,
    budget: &MemoryBudget,
    files: Vec<RowFile>,
) -> Result<Vec<Vec<u64>>> {
    let SelectorKind::Frequency { reverse, .. } = *kind else {
        return exec_err!("only a frequency selector decides from groups sorted on disk");
    };
    let mut ranking = Ranking::new(files.iter().map(RowFile::rows));
    let column_of = |name: &str| file_schema().index_of(name);
    let (order_column, row_column) = (column_of("order")?, column_of("row")?);
    if ranking.total <= 1 || kind.group_count(0).is_none() {
        // The dataset passes unchanged: ranks in dataset order.
        let mut rank = 0u64;
        sort_files(
            budget,
            &file_schema(),
            files,
            &[("order", false)],
            |batch| {
                for g in batch
                    .column(row_column)
                    .as_primitive::<UInt64Type>()
                    .values()
                {
                    ranking.set(*g as usize, rank);
                    rank += 1;
                }
                Ok(())
            },
        )?;
        return Ok(ranking.ranks);
    }
    // Each row's group (high half) and place in it (low half), until the groups are ordered.
    let mut groups: Vec<Group> = Vec::new();
    let mut last: Option<(u8, u64, u64)> = None;
    let by_group = [
        ("present", false),
        ("hi", false),
        ("lo", false),
        ("order", false),
    ];
    sort_files(budget, &file_schema(), files, &by_group, |batch| {
        let present = batch.column(0).as_primitive::<UInt8Type>().values();
        let hi = batch.column(1).as_primitive::<UInt64Type>().values();
        let lo = batch.column(2).as_primitive::<UInt64Type>().values();
        let order = batch
            .column(order_column)
            .as_primitive::<UInt64Type>()
            .values();
        let row = batch
            .column(row_column)
            .as_primitive::<UInt64Type>()
            .values();
        for i in 0..batch.num_rows() {
            let key = (present[i], hi[i], lo[i]);
            if last != Some(key) {
                last = Some(key);
                groups.push(Group {
                    first: order[i],
                    size: 0,
                });
            }
            let g = groups.len() - 1;
            let place = groups[g].size;
            groups[g].size += 1;
            ranking.set(row[i] as usize, ((g as u64) << 32) | place as u64);
        }
        Ok(())
    })?;
    let keep = kind
        .group_count(groups.len())
        .expect("a frequency selector that passes unchanged returned above");
    let mut by_size: Vec<u32> = (0..groups.len() as u32).collect();
    by_size.sort_unstable_by_key(|&g| {
        let Group { first, size } = groups[g as usize];
        (if reverse { u32::MAX - size } else { size }, first)
    });
    let mut start = vec![DROPPED; groups.len()];
    let mut at = 0u64;
    for &g in by_size.iter().take(keep) {
        start[g as usize] = at;
        at += groups[g as usize].size as u64;
    }
    drop((groups, by_size));
    for rank in ranking.ranks.iter_mut().flatten() {
        *rank = match start[(*rank >> 32) as usize] {
            DROPPED => DROPPED,
            s => s + (*rank & 0xffff_ffff),
        };
    }
    Ok(ranking.ranks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nodes::select::{SelectBarrier, decide};

    /// Per partition its rows: values of a few hundred groups (with equal-sized groups, so that
    /// ties are broken by first appearance), no value every eleventh row, a number now and then.
    fn parts(partitions: usize, rows: usize, groups: u64) -> Vec<SelectRows> {
        let mut state = 0x0ddb_1a5e_5bad_5eedu64;
        let per = rows.div_ceil(partitions);
        (0..partitions)
            .map(|p| {
                let mut part = SelectRows::default();
                for i in 0..per.min(rows - (p * per).min(rows)) {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    part.order.push(((p as u64) << 40) | i as u64);
                    part.values.push(match state % 23 {
                        0 | 1 => SelectValue::None,
                        2 => SelectValue::Number((state % 3) as f64),
                        _ => SelectValue::Group(((state >> 8) % groups) as u128 * 0x9e37_79b9),
                    });
                }
                part
            })
            .collect()
    }

    /// A frequency selector past its budget ranks exactly as in memory: by count and by ratio,
    /// most and least frequent first, passing unchanged, with few and with many groups, for 1, 3
    /// and 7 partitions arriving in any order.
    #[test]
    fn spilled_frequency_selections_match_the_in_memory_ones() {
        let freq = |top_ratio, topk, reverse| SelectorKind::Frequency {
            top_ratio,
            topk,
            reverse,
        };
        let kinds = [
            freq(Some(0.3), None, true),
            freq(None, Some(7), false),
            freq(Some(0.5), Some(40), true),
            freq(None, None, true),
            freq(Some(1.0), None, false),
        ];
        for kind in kinds {
            for groups in [12, 900] {
                for partitions in [1, 3, 7] {
                    let parts = parts(partitions, 1500, groups);
                    let expected = decide(&kind, &parts);
                    let b = SelectBarrier::new(0, kind.clone(), partitions, None, None);
                    b.set_budget(MemoryBudget::new(32 << 10).unwrap());
                    let mut order: Vec<usize> = (0..partitions).collect();
                    order.rotate_left(partitions / 2);
                    for p in order {
                        b.contribute(p, parts[p].clone()).unwrap();
                    }
                    let case = format!("{kind:?}, {groups} groups, {partitions} partitions");
                    assert!(b.spilled(), "{case}");
                    let ranks: Vec<Vec<u64>> =
                        (0..partitions).map(|p| b.ranks(p).unwrap()).collect();
                    assert_eq!(ranks, expected, "{case}");
                    let kept = ranks.iter().flatten().filter(|r| **r != DROPPED).count();
                    assert!(kept > 0, "{case}");
                }
            }
        }
    }
}
