//! The rows a global node (deduplicator, selector) holds back until its barrier decides: Arrow IPC
//! in an anonymous temporary file, created at the first batch, written and read back dropping
//! behind (see [`crate::drop_behind`]), and removed by the OS when its last handle closes.

use std::fmt;
use std::io::{BufReader, BufWriter, Seek};

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::ipc::reader::StreamReader;
use datafusion::arrow::ipc::writer::StreamWriter;
use datafusion::common::{DataFusionError, Result, exec_datafusion_err};

use crate::drop_behind::{DropBehindReader, DropBehindWriter};

/// A failure to spill rows, naming where spill files go.
pub(crate) fn spill_error(e: &dyn fmt::Display) -> DataFusionError {
    exec_datafusion_err!(
        "cannot spill rows to a temporary file in {} (set TMPDIR to move it): {e}",
        std::env::temp_dir().display()
    )
}

/// A failure to save a key or value file, naming it.
pub(crate) fn saving_error(path: &std::path::Path, e: std::io::Error) -> DataFusionError {
    exec_datafusion_err!("cannot save {}: {e}", path.display())
}

/// Rows being spilled.
#[derive(Default)]
pub(crate) struct Spill {
    writer: Option<StreamWriter<BufWriter<DropBehindWriter>>>,
}

/// The spilled rows, to read back once.
pub(crate) struct Spilled(std::fs::File);

impl Spill {
    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if self.writer.is_none() {
            let file = tempfile::tempfile()
                .and_then(DropBehindWriter::new)
                .map_err(|e| spill_error(&e))?;
            self.writer = Some(StreamWriter::try_new(
                BufWriter::new(file),
                &batch.schema(),
            )?);
        }
        let writer = self.writer.as_mut().expect("created above");
        writer.write(batch).map_err(|e| spill_error(&e))
    }

    /// The rows written, or `None` when there were none.
    pub(crate) fn finish(self) -> Result<Option<Spilled>> {
        let Some(mut w) = self.writer else {
            return Ok(None);
        };
        w.finish().map_err(|e| spill_error(&e))?;
        let mut file = w
            .into_inner()?
            .into_inner()
            .map_err(|e| spill_error(&e.into_error()))?
            .into_inner();
        file.rewind().map_err(|e| spill_error(&e))?;
        Ok(Some(Spilled(file)))
    }
}

impl Spilled {
    /// The rows in the order they were written (blocking reads: call off the async runtime).
    pub(crate) fn read(self) -> Result<StreamReader<BufReader<DropBehindReader>>> {
        let file = DropBehindReader::new(self.0).map_err(|e| spill_error(&e))?;
        Ok(StreamReader::try_new(BufReader::new(file), None)?)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::array::{Int64Array, StringArray};
    use datafusion::arrow::datatypes::{DataType, Field, Schema};

    use super::*;

    #[test]
    fn reads_back_what_was_written() {
        assert!(Spill::default().finish().unwrap().is_none());
        let schema = Arc::new(Schema::new(vec![
            Field::new("n", DataType::Int64, false),
            Field::new("text", DataType::Utf8, true),
        ]));
        let batches: Vec<RecordBatch> = (0..3)
            .map(|i| {
                RecordBatch::try_new(
                    schema.clone(),
                    vec![
                        Arc::new(Int64Array::from(vec![i, i + 10])),
                        Arc::new(StringArray::from(vec![Some("a".repeat(i as usize)), None])),
                    ],
                )
                .unwrap()
            })
            .collect();
        let mut spill = Spill::default();
        for b in &batches {
            spill.write(b).unwrap();
        }
        let back: Vec<RecordBatch> = spill
            .finish()
            .unwrap()
            .unwrap()
            .read()
            .unwrap()
            .collect::<std::result::Result<_, _>>()
            .unwrap();
        assert_eq!(back, batches);
    }
}
