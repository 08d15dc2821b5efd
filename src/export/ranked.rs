//! Export order after a selector: every partition's staged rows carry their output rank in
//! `__dj__order`; DataFusion's `SortExec`, in the run's memory budget, sorts all of them by rank,
//! spilling sorted runs to disk and merging them when they do not fit. A partition of the default
//! executor is half the input or more, so no partition is assumed to fit in memory.

use std::path::Path;
use std::sync::Arc;

use anyhow::Result;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::{DataType, Schema, SchemaRef};
use datafusion::arrow::ipc::reader::StreamReader;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use dj_plans::drop_behind::DropBehindReader;
use dj_plans::nodes::MemoryBudget;
use futures::StreamExt;

#[cfg(test)]
const OUT_ROWS: usize = 8192;

/// `schema` with its rank column `order` a `UInt64` (a JSON checkpoint reads it back as Int64).
fn ranked_schema(schema: &Schema, order: usize) -> SchemaRef {
    let fields: Vec<_> = (schema.fields().iter().enumerate())
        .map(|(i, f)| match i == order {
            true => Arc::new(f.as_ref().clone().with_data_type(DataType::UInt64)),
            false => f.clone(),
        })
        .collect();
    Arc::new(Schema::new(fields))
}

/// `batch` in `schema`: its rank column cast to `UInt64`.
fn with_u64_ranks(
    batch: RecordBatch,
    order: usize,
    schema: &SchemaRef,
) -> datafusion::common::Result<RecordBatch> {
    let mut columns = batch.columns().to_vec();
    columns[order] = datafusion::arrow::compute::cast(&columns[order], &DataType::UInt64)?;
    Ok(RecordBatch::try_new(schema.clone(), columns)?)
}

/// Calls `sink` with the rows of all `staged` partitions (Arrow IPC files of one schema) in
/// ascending `__dj__order` (column `order`), sorted within `budget`; `row_bytes` is about what a
/// staged row takes.
pub(crate) async fn write_in_rank_order(
    staged: &[&Path],
    order: usize,
    (budget, row_bytes): (&MemoryBudget, usize),
    mut sink: impl FnMut(&RecordBatch) -> Result<()>,
) -> Result<()> {
    let readers = staged
        .iter()
        .map(|path| {
            let file = DropBehindReader::new(std::fs::File::open(path)?)?;
            Ok(StreamReader::try_new(std::io::BufReader::new(file), None)?)
        })
        .collect::<Result<Vec<_>>>()?;
    let Some(first) = readers.first() else {
        return Ok(());
    };
    let schema = ranked_schema(&first.schema(), order);
    let out = schema.clone();
    let rows = futures::stream::iter(
        readers
            .into_iter()
            .flatten()
            .map(move |batch| with_u64_ranks(batch?, order, &out)),
    );
    let input = Box::pin(RecordBatchStreamAdapter::new(schema.clone(), rows));
    let mut sorted = budget.sort_stream(input, schema.field(order).name(), row_bytes)?;
    while let Some(batch) = sorted.next().await {
        sink(&batch?)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{ArrayRef, AsArray, StringArray, UInt64Array};
    use datafusion::arrow::ipc::writer::StreamWriter;

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
                    dj_udfs::columns::ORDER_COLUMN,
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

    #[tokio::test]
    async fn merges_partitions_in_rank_order() {
        let dir = tempfile::tempdir().unwrap();
        let a = stage(dir.path(), "a", &[(&[4, 0], &["e", "a"]), (&[2], &["c"])]);
        let b = stage(dir.path(), "b", &[(&[3, 1, 5], &["d", "b", "f"])]);
        let mut out = Vec::new();
        let budget = MemoryBudget::new(64 << 20).unwrap();
        write_in_rank_order(&[&a, &b], 1, (&budget, 32), |batch| {
            out.extend(
                batch
                    .column(0)
                    .as_string::<i32>()
                    .iter()
                    .map(|s| s.unwrap().to_string()),
            );
            Ok(())
        })
        .await
        .unwrap();
        assert_eq!(out, ["a", "b", "c", "d", "e", "f"]);
    }

    /// Many batches per partition, ranks interleaved across partitions, and one partition whose
    /// order column came back from JSON as Int64.
    #[tokio::test]
    async fn merges_many_batches_and_mixed_rank_types() {
        use datafusion::arrow::array::Int64Array;
        let dir = tempfile::tempdir().unwrap();
        let n = 30_000u64;
        let mut paths = Vec::new();
        for part in 0..3u64 {
            // Descending within the partition, so the per-partition sort matters too.
            let ranks: Vec<u64> = (0..n).rev().filter(|r| r % 3 == part).collect();
            let order: ArrayRef = if part == 1 {
                Arc::new(Int64Array::from_iter_values(
                    ranks.iter().map(|r| *r as i64),
                ))
            } else {
                Arc::new(UInt64Array::from(ranks.clone()))
            };
            let text: ArrayRef = Arc::new(StringArray::from_iter_values(
                ranks.iter().map(|r| format!("row {r}")),
            ));
            let b = RecordBatch::try_from_iter(vec![
                ("text", text),
                (dj_udfs::columns::ORDER_COLUMN, order),
            ])
            .unwrap();
            let path = dir.path().join(format!("p{part}"));
            let mut w =
                StreamWriter::try_new(std::fs::File::create(&path).unwrap(), &b.schema()).unwrap();
            for start in (0..b.num_rows()).step_by(1000) {
                w.write(&b.slice(start, 1000.min(b.num_rows() - start)))
                    .unwrap();
            }
            w.finish().unwrap();
            paths.push(path);
        }
        let staged: Vec<&Path> = paths.iter().map(|p| p.as_path()).collect();
        // In memory, and past a budget that holds a fraction of the rows (sorted runs spilled).
        for budget in [64 << 20, 1 << 20] {
            let budget = MemoryBudget::new(budget).unwrap();
            let mut texts = Vec::new();
            write_in_rank_order(&staged, 1, (&budget, 32), |batch| {
                assert!(batch.num_rows() <= OUT_ROWS);
                let ranks = batch
                    .column(1)
                    .as_primitive::<datafusion::arrow::datatypes::UInt64Type>();
                for (i, t) in batch.column(0).as_string::<i32>().iter().enumerate() {
                    assert_eq!(t.unwrap(), format!("row {}", ranks.value(i)));
                    texts.push(ranks.value(i));
                }
                Ok(())
            })
            .await
            .unwrap();
            assert_eq!(texts, (0..n).collect::<Vec<_>>());
        }
    }
}
