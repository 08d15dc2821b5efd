//! Export order after a selector: every partition's staged rows carry their output rank in
//! `__dj__order`; each partition is sorted by rank on its own (a partition fits in memory by
//! construction) into a temporary file, then DataFusion's `SortPreservingMergeExec` merges the
//! sorted files, so memory stays one partition plus one batch per partition.

use std::path::Path;
use std::sync::Arc;

use anyhow::Result;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::compute::{concat_batches, sort_to_indices, take_record_batch};
use datafusion::arrow::datatypes::{DataType, Schema, SchemaRef};
use datafusion::arrow::ipc::reader::StreamReader;
use datafusion::arrow::ipc::writer::StreamWriter;
use datafusion::execution::TaskContext;
use datafusion::physical_expr::{LexOrdering, PhysicalSortExpr};
use datafusion::physical_plan::expressions::col;
use datafusion::physical_plan::sorts::sort_preserving_merge::SortPreservingMergeExec;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::{PartitionStream, StreamingTableExec};
use datafusion::physical_plan::{ExecutionPlan, SendableRecordBatchStream};
use datafusion::prelude::SessionConfig;
use dj_plans::drop_behind::{DropBehindReader, DropBehindWriter};
use futures::StreamExt;

const OUT_ROWS: usize = 8192;

fn read_all(path: &Path) -> Result<Vec<RecordBatch>> {
    let reader = StreamReader::try_new(std::io::BufReader::new(std::fs::File::open(path)?), None)?;
    Ok(reader.collect::<std::result::Result<Vec<_>, _>>()?)
}

/// One staged partition sorted by rank, in an anonymous temporary file.
#[derive(Debug)]
struct SortedPartition {
    file: std::fs::File,
    schema: SchemaRef,
}

/// Sorts one staged partition by rank into an anonymous temp file (`None`: no rows).
fn sort_partition(path: &Path, order: usize) -> Result<Option<SortedPartition>> {
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
    let schema = sorted.schema();
    let spill = DropBehindWriter::new(tempfile::tempfile()?)?;
    let mut w = StreamWriter::try_new(std::io::BufWriter::new(spill), &schema)?;
    for start in (0..sorted.num_rows()).step_by(OUT_ROWS) {
        w.write(&sorted.slice(start, OUT_ROWS.min(sorted.num_rows() - start)))?;
    }
    w.finish()?;
    let file = w
        .into_inner()?
        .into_inner()
        .map_err(|e| e.into_error())?
        .into_inner();
    Ok(Some(SortedPartition { file, schema }))
}

impl PartitionStream for SortedPartition {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let schema = self.schema.clone();
        // Each execution reads the file from its start through its own handle.
        let batches = self
            .file
            .try_clone()
            .and_then(|mut f| {
                std::io::Seek::rewind(&mut f)?;
                Ok(f)
            })
            .map_err(datafusion::error::DataFusionError::from)
            .and_then(|f| {
                let f = std::io::BufReader::new(DropBehindReader::new(f)?);
                Ok(StreamReader::try_new(f, None)?)
            });
        let stream: futures::stream::BoxStream<'static, _> = match batches {
            Ok(reader) => futures::stream::iter(reader.map(|b| b.map_err(Into::into))).boxed(),
            Err(e) => futures::stream::once(async move { Err(e) }).boxed(),
        };
        Box::pin(RecordBatchStreamAdapter::new(schema, stream))
    }
}

/// Calls `sink` with the rows of all `staged` partitions in ascending `__dj__order` (column
/// `order`).
pub(crate) async fn write_in_rank_order(
    staged: &[&Path],
    order: usize,
    mut sink: impl FnMut(&RecordBatch) -> Result<()>,
) -> Result<()> {
    let mut partitions: Vec<Arc<dyn PartitionStream>> = Vec::new();
    for path in staged {
        if let Some(p) = sort_partition(path, order)? {
            partitions.push(Arc::new(p));
        }
    }
    let Some(schema) = partitions.first().map(|p| p.schema().clone()) else {
        return Ok(());
    };
    let by_rank = LexOrdering::new([PhysicalSortExpr::new_default(col(
        schema.field(order).name(),
        &schema,
    )?)])
    .expect("one sort expression");
    let sorted =
        StreamingTableExec::try_new(schema, partitions, None, [by_rank.clone()], false, None)?;
    let merge = SortPreservingMergeExec::new(by_rank, Arc::new(sorted));
    let ctx =
        TaskContext::default().with_session_config(SessionConfig::new().with_batch_size(OUT_ROWS));
    let mut merged = merge.execute(0, Arc::new(ctx))?;
    while let Some(batch) = merged.next().await {
        sink(&batch?)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{ArrayRef, AsArray, StringArray, UInt64Array};

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
        let mut texts = Vec::new();
        write_in_rank_order(&staged, 1, |batch| {
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
