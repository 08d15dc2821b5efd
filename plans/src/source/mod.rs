//! The row-boundary partition source: the recipe's input as one ordered sequence of rows, cut
//! into logical partitions `[start_row, end_row)` whatever the file and batch layout.
//!
//! [`InputIndex::build`] finds the input files, counts their rows, infers one schema and records
//! where rows start; [`RowRangeExec`] is the leaf execution plan with one output partition per
//! row range, so DataFusion partitions map exactly onto logical partitions.

mod arrow_input;
pub mod content_hash;
mod exec;
mod files;
mod jsonl;
mod parquet_input;

use std::path::PathBuf;
use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;

pub use content_hash::{ContentHasher, HASH_ALGORITHM, RangeDigest, RangeHashSink};
pub use exec::{RowRangeExec, RowRangeTable};
pub use files::{Compression, FileFormat, discover, discover_all};

/// Input problems: which file, which line, what was expected.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("input not found: {0} (dataset_path matches no file)")]
    NotFound(String),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: malformed JSON row: {message}")]
    BadRow {
        path: PathBuf,
        line: u64,
        message: String,
    },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error("input schema mismatch: {0}")]
    Schema(String),
}

impl SourceError {
    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> SourceError {
        SourceError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// A position inside one input file from which rows can be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SeekPoint {
    /// Row index within the file.
    pub row: u64,
    /// Byte offset of that row in the (decompressed) file.
    pub offset: u64,
    /// 1-based line number of that row.
    pub line: u64,
}

/// One input file, counted and indexed.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct InputFile {
    pub path: PathBuf,
    pub format: FileFormat,
    pub compression: Compression,
    pub rows: u64,
    pub size_bytes: u64,
    /// JSONL: seek points every [`SEEK_EVERY`] rows (first at row 0).
    pub seek_points: Vec<SeekPoint>,
    /// The object `path` is a cached copy of (object-storage datasets); a process without the
    /// copy downloads it ([`InputIndex::ensure_local`]).
    #[serde(default)]
    pub remote: Option<crate::store::RemoteObject>,
}

impl InputFile {
    /// A whole-file binary input (parquet, Arrow IPC) of `rows` rows: no seek points needed.
    pub(crate) fn binary(
        path: &std::path::Path,
        format: FileFormat,
        rows: u64,
    ) -> Result<InputFile, SourceError> {
        let size_bytes = std::fs::metadata(path)
            .map_err(|e| SourceError::io(path, e))?
            .len();
        Ok(InputFile {
            path: path.to_path_buf(),
            format,
            compression: Compression::None,
            rows,
            size_bytes,
            seek_points: vec![],
            remote: None,
        })
    }
}

/// JSONL seek-point spacing, in rows.
pub const SEEK_EVERY: u64 = 4096;

/// The whole input: files in order, their merged schema, and the row count.
#[derive(Debug)]
pub struct InputIndex {
    pub dataset_path: String,
    pub files: Vec<InputFile>,
    pub schema: SchemaRef,
    pub total_rows: u64,
}

/// A logical partition's rows `[start, end)` in input order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RowRange {
    pub start: u64,
    pub end: u64,
}

impl RowRange {
    pub fn len(&self) -> u64 {
        self.end - self.start
    }
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

impl InputIndex {
    /// Finds, counts and indexes every input file of `dataset_path` (a file, a directory or a
    /// glob), validating every JSON row on the way so bad input fails before any output exists.
    pub fn build(dataset_path: &str) -> Result<InputIndex, SourceError> {
        let paths = discover_all(dataset_path)?;
        let mut files = Vec::with_capacity(paths.len());
        let mut schemas = Vec::with_capacity(paths.len());
        for (path, format, compression, remote) in paths {
            let (mut file, schema) = match format {
                FileFormat::Parquet => parquet_input::index(&path)?,
                FileFormat::ArrowIpc => arrow_input::index(&path)?,
                FileFormat::Jsonl | FileFormat::JsonArray => {
                    jsonl::index(&path, format, compression)?
                }
            };
            file.remote = remote;
            files.push(file);
            schemas.push(schema);
        }
        let schema = merge_schemas(&files, schemas)?;
        let total_rows = files.iter().map(|f| f.rows).sum();
        Ok(InputIndex {
            dataset_path: dataset_path.to_string(),
            files,
            schema,
            total_rows,
        })
    }

    /// Like [`InputIndex::build`], but rows are read with `schema` (missing columns as nulls,
    /// types cast) instead of the inferred one: checkpoints are read back with the schema the
    /// plan had at that op, whatever subset of keys a JSON checkpoint happens to contain.
    pub fn build_with_schema(
        dataset_path: &str,
        schema: SchemaRef,
    ) -> Result<InputIndex, SourceError> {
        let mut index = InputIndex::build(dataset_path)?;
        index.schema = schema;
        Ok(index)
    }

    /// `n` balanced contiguous ranges: the first `rows % n` get one extra row (Data-Juicer's
    /// split). `n` is clamped to `[1, rows]`; an empty input gives one empty range.
    pub fn balanced_ranges(&self, n: usize) -> Vec<RowRange> {
        balanced_ranges(self.total_rows, n)
    }

    /// Makes sure every input file is on this machine: a cached object-storage input missing
    /// here (another process indexed it) is downloaded to this machine's cache.
    pub fn ensure_local(&mut self) -> Result<(), SourceError> {
        for file in &mut self.files {
            if let Some(remote) = &file.remote
                && !file.path.is_file()
            {
                file.path =
                    crate::store::ensure_local(remote).map_err(|e| SourceError::Invalid {
                        path: file.path.clone(),
                        message: e.to_string(),
                    })?;
            }
        }
        Ok(())
    }

    pub fn total_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.size_bytes).sum()
    }
}

/// See [`InputIndex::balanced_ranges`].
pub fn balanced_ranges(rows: u64, n: usize) -> Vec<RowRange> {
    let n = (n as u64).clamp(1, rows.max(1));
    let (base, rem) = (rows / n, rows % n);
    let mut start = 0;
    (0..n)
        .map(|i| {
            let end = start + base + u64::from(i < rem);
            let r = RowRange { start, end };
            start = end;
            r
        })
        .collect()
}

fn merge_schemas(
    files: &[InputFile],
    schemas: Vec<datafusion::arrow::datatypes::Schema>,
) -> Result<SchemaRef, SourceError> {
    let mut merged = datafusion::arrow::datatypes::Schema::empty();
    for (file, schema) in files.iter().zip(schemas) {
        merged =
            datafusion::arrow::datatypes::Schema::try_merge([merged, schema]).map_err(|e| {
                SourceError::Schema(format!(
                    "{} does not match the files before it: {e}",
                    file.path.display()
                ))
            })?;
    }
    Ok(Arc::new(merged))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cuts(rows: u64, n: usize) -> Vec<u64> {
        let r = balanced_ranges(rows, n);
        r[..r.len() - 1].iter().map(|r| r.end).collect()
    }

    #[test]
    fn balanced_cuts_match_data_juicer() {
        assert_eq!(cuts(10, 4), vec![3, 6, 8]);
        assert_eq!(cuts(8, 4), vec![2, 4, 6]);
        assert_eq!(cuts(10, 3), vec![4, 7]);
        assert_eq!(cuts(2, 2), vec![1]);
        assert_eq!(balanced_ranges(0, 4), vec![RowRange { start: 0, end: 0 }]);
        assert_eq!(balanced_ranges(3, 8).len(), 3);
    }
}
