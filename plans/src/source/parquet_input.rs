//! Parquet input: row counts from the footer and row-range reads with row-group skipping and a
//! row selection inside the first and last group.

use std::path::Path;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::parquet::arrow::ProjectionMask;
use datafusion::parquet::arrow::arrow_reader::{
    ParquetRecordBatchReaderBuilder, RowSelection, RowSelector,
};

use super::files::FileFormat;
use super::jsonl::BATCH_ROWS;
use super::{InputFile, SourceError};

fn builder(path: &Path) -> Result<ParquetRecordBatchReaderBuilder<std::fs::File>, SourceError> {
    let f = std::fs::File::open(path).map_err(|e| SourceError::io(path, e))?;
    ParquetRecordBatchReaderBuilder::try_new(f).map_err(|e| SourceError::Invalid {
        path: path.to_path_buf(),
        message: format!("not a readable parquet file: {e}"),
    })
}

pub fn index(path: &Path) -> Result<(InputFile, Schema), SourceError> {
    let b = builder(path)?;
    let rows = b.metadata().file_metadata().num_rows() as u64;
    let schema = b.schema().as_ref().clone();
    // Drop writer metadata (pandas, arrow) so files merge on fields alone.
    let schema = Schema::new(schema.fields().clone());
    let file = InputFile::binary(path, FileFormat::Parquet, rows)?;
    Ok((file, schema))
}

/// Reads rows `[start, end)` of the file, the columns of `schema` only, cast to its types.
pub(crate) fn read_range(
    file: &InputFile,
    schema: &SchemaRef,
    start: u64,
    end: u64,
    emit: &mut dyn FnMut(RecordBatch) -> bool,
) -> Result<(), SourceError> {
    let path = file.path.as_path();
    let err = |e: &dyn std::fmt::Display| SourceError::Invalid {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let b = builder(path)?;
    let file_schema = b.schema().clone();
    let indices: Vec<usize> = schema
        .fields()
        .iter()
        .filter_map(|f| file_schema.index_of(f.name()).ok())
        .collect();
    let mask = ProjectionMask::roots(b.parquet_schema(), indices);
    // Keep only the row groups overlapping the range; select inside them.
    let mut groups = Vec::new();
    let mut selectors = Vec::new();
    let mut group_start = 0u64;
    for (i, rg) in b.metadata().row_groups().iter().enumerate() {
        let n = rg.num_rows() as u64;
        let group_end = group_start + n;
        if group_end > start && group_start < end {
            groups.push(i);
            let lo = start.max(group_start) - group_start;
            let hi = end.min(group_end) - group_start;
            if lo > 0 {
                selectors.push(RowSelector::skip(lo as usize));
            }
            selectors.push(RowSelector::select((hi - lo) as usize));
            if hi < n {
                selectors.push(RowSelector::skip((n - hi) as usize));
            }
        }
        group_start = group_end;
    }
    let reader = b
        .with_row_groups(groups)
        .with_row_selection(RowSelection::from(selectors))
        .with_projection(mask)
        .with_batch_size(BATCH_ROWS)
        .build()
        .map_err(|e| err(&e))?;
    for batch in reader {
        let batch = batch.map_err(|e| err(&e))?;
        let batch = conform(batch, schema).map_err(|e| err(&e))?;
        if !emit(batch) {
            break;
        }
    }
    Ok(())
}

/// Reorders/casts/null-fills a batch to `schema` (files of one dataset may differ slightly).
pub(crate) fn conform(
    batch: RecordBatch,
    schema: &SchemaRef,
) -> Result<RecordBatch, datafusion::arrow::error::ArrowError> {
    use datafusion::arrow::array::{ArrayRef, StructArray, new_null_array};
    use datafusion::arrow::compute::cast;
    use datafusion::arrow::datatypes::DataType;
    use std::sync::Arc;
    let cols = schema
        .fields()
        .iter()
        .map(|f| match batch.schema().index_of(f.name()) {
            Ok(i) => {
                let c = batch.column(i);
                if c.data_type() == f.data_type() {
                    Ok(c.clone())
                } else if matches!(f.data_type(), DataType::Struct(fs) if fs.is_empty()) {
                    // An empty struct (`{}`), written to parquet with a placeholder field.
                    Ok(
                        Arc::new(StructArray::new_empty_fields(c.len(), c.nulls().cloned()))
                            as ArrayRef,
                    )
                } else {
                    cast(c, f.data_type())
                }
            }
            Err(_) => Ok(new_null_array(f.data_type(), batch.num_rows())),
        })
        .collect::<Result<Vec<_>, _>>()?;
    RecordBatch::try_new(schema.clone(), cols)
}
