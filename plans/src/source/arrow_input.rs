//! Arrow IPC file input (checkpoints written in the `arrow` storage format).

use std::path::Path;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::arrow::ipc::reader::FileReader;

use super::files::FileFormat;
use super::parquet_input::conform;
use super::{InputFile, SourceError};

fn open(path: &Path) -> Result<FileReader<std::io::BufReader<std::fs::File>>, SourceError> {
    let f = std::fs::File::open(path).map_err(|e| SourceError::io(path, e))?;
    FileReader::try_new(std::io::BufReader::new(f), None).map_err(|e| SourceError::Invalid {
        path: path.to_path_buf(),
        message: format!("not a readable Arrow IPC file: {e}"),
    })
}

pub fn index(path: &Path) -> Result<(InputFile, Schema), SourceError> {
    let reader = open(path)?;
    let schema = Schema::new(reader.schema().fields().clone());
    let mut rows = 0u64;
    for batch in reader {
        rows += batch
            .map_err(|e| SourceError::Invalid {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?
            .num_rows() as u64;
    }
    let file = InputFile::binary(path, FileFormat::ArrowIpc, rows)?;
    Ok((file, schema))
}

pub(crate) fn read_range(
    file: &InputFile,
    schema: &SchemaRef,
    start: u64,
    end: u64,
    emit: &mut dyn FnMut(RecordBatch) -> bool,
) -> Result<(), SourceError> {
    let err = |e: &dyn std::fmt::Display| SourceError::Invalid {
        path: file.path.clone(),
        message: e.to_string(),
    };
    let mut row = 0u64;
    for batch in open(&file.path)? {
        let batch = batch.map_err(|e| err(&e))?;
        let (lo, hi) = (row, row + batch.num_rows() as u64);
        row = hi;
        if hi <= start || lo >= end {
            continue;
        }
        let from = start.max(lo) - lo;
        let to = end.min(hi) - lo;
        let slice = batch.slice(from as usize, (to - from) as usize);
        if !emit(conform(slice, schema).map_err(|e| err(&e))?) {
            break;
        }
        if row >= end {
            break;
        }
    }
    Ok(())
}
