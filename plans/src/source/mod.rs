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
mod json_array;
mod json_types;
mod jsonl;
pub mod media;
mod parquet_input;
mod skeleton;

use std::path::PathBuf;
use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;

pub use content_hash::{ContentHasher, HASH_ALGORITHM, RangeDigest, RangeHashSink};
pub use exec::{RowRangeExec, RowRangeTable};
pub(crate) use files::discover_all;
pub use files::{Compression, FileFormat};

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
    /// JSONL: a seek point at each byte mark (first at row 0), where reading a range starts.
    pub seek_points: Vec<SeekPoint>,
    /// JSONL: `(row, byte offset)` of a row about every [`MARK_BYTES`] bytes, and `(rows, end
    /// offset)` last: what [`InputIndex::byte_balanced_ranges`] cuts by. Empty for other formats.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub byte_marks: Vec<(u64, u64)>,
    /// The object `path` is a cached copy of (object-storage datasets); a process without the
    /// copy downloads it when it first reads the file (`RowRangeExec`).
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
            byte_marks: vec![],
            remote: None,
        })
    }
}

/// Hugging Face's JSON chunk size: its scan for generic JSON fields covers this much of the first
/// file, to a line end (the lines that start at an offset up to this one).
pub(crate) const JSON_SCAN_CHUNK: u64 = 10 << 20;
/// JSONL byte-mark spacing: a mark once this many bytes and [`MARK_MIN_ROWS`] rows passed.
pub(crate) const MARK_BYTES: u64 = 256 << 10;
pub(crate) const MARK_MIN_ROWS: u64 = 16;

/// The whole input: files in order, their merged schema, and the row count.
#[derive(Debug)]
pub struct InputIndex {
    pub dataset_path: String,
    pub files: Vec<InputFile>,
    pub schema: SchemaRef,
    pub total_rows: u64,
    /// The fields Data-Juicer's loader keeps as generic JSON (none for Parquet and Arrow).
    pub json_types: crate::pyjson::JsonTypes,
    /// Media files the recipe's operators read, which content hashes cover (none: rows only).
    pub media: Option<media::MediaRefs>,
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
        let (mut index, first_chunk) = InputIndex::index_files(dataset_path)?;
        if let Some(chunk) = first_chunk {
            index.json_types = json_types::from_chunk(&chunk);
        } else if let Some(f) = index.files.first()
            && matches!(f.format, FileFormat::Jsonl | FileFormat::JsonArray)
        {
            index.json_types = json_types::detect(&f.path, f.format, f.compression)?;
        }
        Ok(index)
    }

    /// Like [`InputIndex::build`], but rows are read with `schema` (missing columns as nulls,
    /// types cast) instead of the inferred one: checkpoints are read back with the schema the
    /// plan had at that op, whatever subset of keys a JSON checkpoint happens to contain. (A
    /// checkpoint is dj-fusion's own file: no generic JSON fields to look for.)
    pub fn build_with_schema(
        dataset_path: &str,
        schema: SchemaRef,
    ) -> Result<InputIndex, SourceError> {
        let (mut index, _) = InputIndex::index_files(dataset_path)?;
        index.schema = schema;
        Ok(index)
    }

    /// Every file of `dataset_path` indexed, their schemas merged (no generic JSON fields), and
    /// the shapes of the first file's first rows if it is JSON lines.
    fn index_files(
        dataset_path: &str,
    ) -> Result<(InputIndex, Option<jsonl::ChunkShapes>), SourceError> {
        let paths = discover_all(dataset_path)?;
        let mut files = Vec::with_capacity(paths.len());
        let mut schemas = Vec::with_capacity(paths.len());
        let mut first_chunk = None;
        for (path, format, compression, remote) in paths {
            let (mut file, schema) = match format {
                FileFormat::Parquet => parquet_input::index(&path)?,
                FileFormat::ArrowIpc => arrow_input::index(&path)?,
                FileFormat::Jsonl | FileFormat::JsonArray => {
                    let (file, schema, chunk) = jsonl::index(&path, format, compression)?;
                    if files.is_empty() {
                        first_chunk = chunk;
                    }
                    (file, schema)
                }
            };
            file.remote = remote;
            files.push(file);
            schemas.push(schema);
        }
        let schema = merge_schemas(&files, schemas)?;
        let total_rows = files.iter().map(|f| f.rows).sum();
        let index = InputIndex {
            dataset_path: dataset_path.to_string(),
            files,
            schema,
            total_rows,
            json_types: crate::pyjson::JsonTypes::none(),
            media: None,
        };
        Ok((index, first_chunk))
    }

    /// `n` balanced contiguous ranges: the first `rows % n` get one extra row (Data-Juicer's
    /// split). `n` is clamped to `[1, rows]`; an empty input gives one empty range.
    pub(crate) fn balanced_ranges(&self, n: usize) -> Vec<RowRange> {
        balanced_ranges(self.total_rows, n)
    }

    /// `n` contiguous ranges of about equal bytes, so that partitions of long documents cost
    /// about as much as partitions of short ones; cut at the files' byte marks (every 256 KB or
    /// so). Falls back to [`InputIndex::balanced_ranges`] (equal rows) when a file has no marks
    /// (Parquet, Arrow, JSON arrays) or the marks are too coarse for `n` non-empty ranges.
    pub fn byte_balanced_ranges(&self, n: usize) -> Vec<RowRange> {
        let rows = self.total_rows;
        if n <= 1 || self.files.iter().any(|f| f.byte_marks.is_empty()) {
            return self.balanced_ranges(n);
        }
        // (global row, global byte) at every mark.
        let mut points = Vec::new();
        let (mut rows_before, mut bytes_before) = (0u64, 0u64);
        for f in &self.files {
            let first = f.byte_marks[0].1;
            points.extend(
                f.byte_marks
                    .iter()
                    .map(|&(r, o)| (rows_before + r, bytes_before + o - first)),
            );
            rows_before += f.rows;
            bytes_before += f.byte_marks.last().map_or(0, |&(_, o)| o - first);
        }
        let total_bytes = bytes_before;
        let mut cuts = vec![0u64];
        for k in 1..n as u64 {
            let target = total_bytes * k / n as u64;
            let i = points.partition_point(|&(_, b)| b < target);
            // The mark nearest the target, after the previous cut, leaving a row per range left.
            let nearest = match (i.checked_sub(1).map(|j| points[j]), points.get(i)) {
                (Some(before), Some(at)) if target - before.1 < at.1 - target => before.0,
                (_, Some(at)) => at.0,
                (Some(before), None) => before.0,
                (None, None) => return self.balanced_ranges(n),
            };
            if nearest <= *cuts.last().unwrap() || nearest > rows - (n as u64 - k) {
                return self.balanced_ranges(n);
            }
            cuts.push(nearest);
        }
        cuts.push(rows);
        cuts.windows(2)
            .map(|w| RowRange {
                start: w[0],
                end: w[1],
            })
            .collect()
    }

    /// Bytes of the input in `range`, as far as the byte marks tell (whole marks around it);
    /// the range's share of the rows times the input's bytes when a file has no marks.
    pub fn approx_bytes(&self, range: RowRange) -> u64 {
        let mut total = 0u64;
        let mut rows_before = 0u64;
        for f in &self.files {
            let (start, end) = (
                range.start.clamp(rows_before, rows_before + f.rows) - rows_before,
                range.end.clamp(rows_before, rows_before + f.rows) - rows_before,
            );
            rows_before += f.rows;
            if start >= end {
                continue;
            }
            if f.byte_marks.is_empty() {
                total += f.size_bytes * (end - start) / f.rows.max(1);
                continue;
            }
            let m = &f.byte_marks;
            let lo = m[m.partition_point(|&(r, _)| r <= start) - 1].1;
            let hi = m[m.partition_point(|&(r, _)| r < end).min(m.len() - 1)].1;
            total += hi - lo;
        }
        total
    }

    pub fn total_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.size_bytes).sum()
    }
}

/// See [`InputIndex::balanced_ranges`].
pub(crate) fn balanced_ranges(rows: u64, n: usize) -> Vec<RowRange> {
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

    /// An index of one JSONL file of `rows` rows whose row `r` has `len(r)` bytes, with marks
    /// every 10 rows.
    fn marked_index(rows: u64, len: impl Fn(u64) -> u64) -> InputIndex {
        let mut marks = Vec::new();
        let mut offset = 0;
        for r in 0..rows {
            if r % 10 == 0 {
                marks.push((r, offset));
            }
            offset += len(r);
        }
        marks.push((rows, offset));
        InputIndex {
            dataset_path: "x.jsonl".into(),
            files: vec![InputFile {
                path: "x.jsonl".into(),
                format: FileFormat::Jsonl,
                compression: Compression::None,
                rows,
                size_bytes: offset,
                seek_points: vec![],
                byte_marks: marks,
                remote: None,
            }],
            schema: Arc::new(datafusion::arrow::datatypes::Schema::empty()),
            total_rows: rows,
            json_types: Default::default(),
            media: None,
        }
    }

    #[test]
    fn byte_balanced_cuts_balance_bytes_not_rows() {
        // The last quarter of the rows holds 100x longer documents.
        let index = marked_index(10_000, |r| if r < 7_500 { 100 } else { 10_000 });
        let total = index.files[0].size_bytes;
        for n in [2, 3, 8] {
            let ranges = index.byte_balanced_ranges(n);
            assert_eq!(ranges.len(), n);
            assert_eq!((ranges[0].start, ranges[n - 1].end), (0, 10_000));
            assert!(
                ranges
                    .windows(2)
                    .all(|w| w[0].end == w[1].start && !w[0].is_empty())
            );
            for r in &ranges {
                let bytes = index.approx_bytes(*r);
                // Within one mark (10 rows of 10 KB) of an equal share.
                assert!(
                    bytes.abs_diff(total / n as u64) <= 100_000,
                    "{n}: {r:?} {bytes}"
                );
            }
            assert_eq!(
                ranges.iter().map(|r| index.approx_bytes(*r)).sum::<u64>(),
                total
            );
        }
        // Uniform rows: about the row-balanced cuts.
        let uniform = marked_index(1_000, |_| 50);
        assert_eq!(uniform.byte_balanced_ranges(4), uniform.balanced_ranges(4),);
    }

    #[test]
    fn byte_balanced_cuts_fall_back_to_rows() {
        // Too few marks for 8 ranges, no marks at all, one range.
        let coarse = marked_index(25, |_| 10);
        assert_eq!(coarse.byte_balanced_ranges(8), coarse.balanced_ranges(8));
        let mut unmarked = marked_index(1_000, |_| 10);
        unmarked.files[0].byte_marks.clear();
        assert_eq!(
            unmarked.byte_balanced_ranges(3),
            unmarked.balanced_ranges(3)
        );
        assert_eq!(
            unmarked.approx_bytes(RowRange { start: 0, end: 500 }),
            5_000
        );
        assert_eq!(coarse.byte_balanced_ranges(1), coarse.balanced_ranges(1));
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
