//! Export order after a selector: every partition's staged rows carry their output rank in
//! `__dj__order`; each partition is sorted by rank on its own (a partition fits in memory by
//! construction), then the sorted partitions are merged, so memory stays one partition plus one
//! batch per partition.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;

use anyhow::Result;
use datafusion::arrow::array::{AsArray, RecordBatch};
use datafusion::arrow::compute::{
    concat_batches, interleave_record_batch, sort_to_indices, take_record_batch,
};
use datafusion::arrow::datatypes::{DataType, Schema, UInt64Type};
use datafusion::arrow::ipc::reader::StreamReader;
use datafusion::arrow::ipc::writer::StreamWriter;
use std::sync::Arc;

const OUT_ROWS: usize = 8192;

fn read_all(path: &Path) -> Result<Vec<RecordBatch>> {
    let reader = StreamReader::try_new(std::io::BufReader::new(std::fs::File::open(path)?), None)?;
    Ok(reader.collect::<std::result::Result<Vec<_>, _>>()?)
}

/// Sorts one staged partition by rank into an anonymous temp file.
fn sort_partition(
    path: &Path,
    order: usize,
) -> Result<Option<StreamReader<std::io::BufReader<std::fs::File>>>> {
    let batches = read_all(path)?;
    let Some(first) = batches.first() else {
        return Ok(None);
    };
    let all = concat_batches(&first.schema(), &batches)?;
    drop(batches);
    // A JSON checkpoint reads the order column back as Int64: ranks are compared as u64.
    let ranks = datafusion::arrow::compute::cast(all.column(order), &DataType::UInt64)?;
    let idx = sort_to_indices(&ranks, None, None)?;
    let mut sorted = take_record_batch(&all, &idx)?;
    let mut cols = sorted.columns().to_vec();
    cols[order] = datafusion::arrow::compute::take(&ranks, &idx, None)?;
    let fields: Vec<_> = sorted
        .schema()
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            if i == order {
                Arc::new(f.as_ref().clone().with_data_type(DataType::UInt64))
            } else {
                f.clone()
            }
        })
        .collect();
    sorted = RecordBatch::try_new(Arc::new(Schema::new(fields)), cols)?;
    drop(all);
    let mut w = StreamWriter::try_new(
        std::io::BufWriter::new(tempfile::tempfile()?),
        &sorted.schema(),
    )?;
    for start in (0..sorted.num_rows()).step_by(OUT_ROWS) {
        w.write(&sorted.slice(start, OUT_ROWS.min(sorted.num_rows() - start)))?;
    }
    w.finish()?;
    let mut file = w.into_inner()?.into_inner().map_err(|e| e.into_error())?;
    std::io::Seek::rewind(&mut file)?;
    Ok(Some(StreamReader::try_new(
        std::io::BufReader::new(file),
        None,
    )?))
}

/// Calls `sink` with the rows of all `staged` partitions in ascending `__dj__order` (column
/// `order`).
pub fn write_in_rank_order(
    staged: &[&Path],
    order: usize,
    mut sink: impl FnMut(&RecordBatch) -> Result<()>,
) -> Result<()> {
    let mut readers = Vec::new();
    for path in staged {
        if let Some(r) = sort_partition(path, order)? {
            readers.push(r);
        }
    }
    // One current batch per partition; the heap holds (rank, partition, row).
    let mut current: Vec<Option<RecordBatch>> = Vec::with_capacity(readers.len());
    let mut heap = BinaryHeap::new();
    let rank =
        |b: &RecordBatch, row: usize| b.column(order).as_primitive::<UInt64Type>().value(row);
    for (p, r) in readers.iter_mut().enumerate() {
        let b = r.next().transpose()?;
        if let Some(b) = &b {
            heap.push(Reverse((rank(b, 0), p, 0usize)));
        }
        current.push(b);
    }
    let mut picks: Vec<(usize, usize)> = Vec::with_capacity(OUT_ROWS);
    let flush = |picks: &mut Vec<(usize, usize)>,
                 current: &[Option<RecordBatch>],
                 sink: &mut dyn FnMut(&RecordBatch) -> Result<()>|
     -> Result<()> {
        if picks.is_empty() {
            return Ok(());
        }
        // Interleave needs every batch; partitions without a current batch are never picked.
        let Some(template) = current.iter().flatten().next() else {
            return Ok(());
        };
        let batches: Vec<&RecordBatch> = current
            .iter()
            .map(|b| b.as_ref().unwrap_or(template))
            .collect();
        sink(&interleave_record_batch(&batches, picks)?)?;
        picks.clear();
        Ok(())
    };
    while let Some(Reverse((_, p, row))) = heap.pop() {
        picks.push((p, row));
        let len = current[p].as_ref().map_or(0, RecordBatch::num_rows);
        if row + 1 < len {
            let b = current[p].as_ref().unwrap();
            heap.push(Reverse((rank(b, row + 1), p, row + 1)));
        } else {
            // Partition p's batch is used up: emit what references it, then move it on.
            flush(&mut picks, &current, &mut sink)?;
            current[p] = readers[p].next().transpose()?;
            if let Some(b) = &current[p] {
                heap.push(Reverse((rank(b, 0), p, 0)));
            }
        }
        if picks.len() >= OUT_ROWS {
            flush(&mut picks, &current, &mut sink)?;
        }
    }
    flush(&mut picks, &current, &mut sink)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{ArrayRef, StringArray, UInt64Array};

    fn stage(dir: &Path, name: &str, batches: &[(&[u64], &[&str])]) -> std::path::PathBuf {
        let path = dir.join(name);
        let mut w: Option<StreamWriter<std::fs::File>> = None;
        for (ranks, texts) in batches {
            let b = RecordBatch::try_from_iter(vec![
                (
                    "text",
                    Arc::new(StringArray::from(texts.to_vec())) as ArrayRef,
                ),
                (
                    "__dj__order",
                    Arc::new(UInt64Array::from(ranks.to_vec())) as ArrayRef,
                ),
            ])
            .unwrap();
            let w = w.get_or_insert_with(|| {
                StreamWriter::try_new(std::fs::File::create(&path).unwrap(), &b.schema()).unwrap()
            });
            w.write(&b).unwrap();
        }
        w.unwrap().finish().unwrap();
        path
    }

    #[test]
    fn merges_partitions_in_rank_order() {
        let dir = tempfile::tempdir().unwrap();
        let a = stage(dir.path(), "a", &[(&[4, 0], &["e", "a"]), (&[2], &["c"])]);
        let b = stage(dir.path(), "b", &[(&[3, 1, 5], &["d", "b", "f"])]);
        let mut out = Vec::new();
        write_in_rank_order(&[&a, &b], 1, |batch| {
            out.extend(
                batch
                    .column(0)
                    .as_string::<i32>()
                    .iter()
                    .map(|s| s.unwrap().to_string()),
            );
            Ok(())
        })
        .unwrap();
        assert_eq!(out, ["a", "b", "c", "d", "e", "f"]);
    }
}
