//! JSON input: indexing (row count, seek points, schema inference, validation with file:line
//! errors) and reading a row range into Arrow batches with arrow-json's decoder.

use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::json::ReaderBuilder;
use datafusion::arrow::json::reader::infer_json_schema_from_iterator;
use serde_json::Value;

use super::files::{Compression, FileFormat, open};
use super::json_array::ArrayElements;
use super::skeleton::{RecentShapes, parse_object};
use super::{InputFile, JSON_SCAN_CHUNK, MARK_BYTES, MARK_MIN_ROWS, SeekPoint, SourceError};

/// Rows are flushed into a batch at this many rows or [`BATCH_BYTES`] bytes of JSON.
pub(crate) const BATCH_ROWS: usize = 8192;
pub(crate) const BATCH_BYTES: usize = 2 << 20;

/// Reads a file line by line, tracking byte offsets and 1-based line numbers; skips blank lines.
struct Lines<R> {
    reader: R,
    buf: Vec<u8>,
    offset: u64,
    line: u64,
    /// The offset of the first blank line skipped.
    first_blank: Option<u64>,
}

impl<R: BufRead> Lines<R> {
    fn new(reader: R, offset: u64, line: u64) -> Self {
        Lines {
            reader,
            buf: Vec::with_capacity(4096),
            offset,
            line,
            first_blank: None,
        }
    }

    /// Appends the next line (with its `\n`, if any) to `self.buf`; returns its length.
    /// `BufRead::read_until`, but with the memchr crate's vectorized search (std's is several
    /// times slower, and lines here are up to megabytes long). A line longer than
    /// [`max_line_bytes`] is a [`LineTooLong`] error, found before it is all in memory.
    fn read_line(&mut self) -> std::io::Result<usize> {
        let mut n = 0;
        let limit = max_line_bytes();
        loop {
            let available = match self.reader.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                return Ok(n);
            }
            let (take, done) = match memchr::memchr(b'\n', available) {
                Some(i) => (i + 1, true),
                None => (available.len(), false),
            };
            if n + take > limit {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    LineTooLong(limit),
                ));
            }
            self.buf.extend_from_slice(&available[..take]);
            self.reader.consume(take);
            n += take;
            if done {
                return Ok(n);
            }
        }
    }

    /// Next non-blank line: (its byte offset, its line number). The bytes are in `self.buf`.
    fn next_row(&mut self, path: &Path) -> Result<Option<(u64, u64)>, SourceError> {
        loop {
            self.buf.clear();
            let start = self.offset;
            let n = self.read_line().map_err(|e| {
                match e.get_ref().and_then(|e| e.downcast_ref::<LineTooLong>()) {
                    Some(too_long) => SourceError::Invalid {
                        path: path.to_path_buf(),
                        message: format!("line {}: {too_long}", self.line + 1),
                    },
                    None => SourceError::io(path, e),
                }
            })?;
            if n == 0 {
                return Ok(None);
            }
            self.offset += n as u64;
            self.line += 1;
            if self.line == 1 && self.buf.starts_with(b"\xEF\xBB\xBF") {
                self.buf.drain(..3);
            }
            if !self.buf.iter().all(u8::is_ascii_whitespace) {
                return Ok(Some((start, self.line)));
            }
            self.first_blank.get_or_insert(start);
        }
    }
}

/// The longest line read, in bytes: `DJ_MAX_LINE_MB` (default 1024, at most 2047). A row's text
/// must fit one Arrow string array (2 GiB), and reading a line takes about 4x its size in memory
/// (the line, its JSON decoding, its Arrow column, its output), so a longer one is refused with an
/// error naming it rather than read until the process is killed.
fn max_line_bytes() -> usize {
    static MAX: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *MAX.get_or_init(|| {
        let mb = std::env::var("DJ_MAX_LINE_MB")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|mb| *mb > 0)
            .unwrap_or(1024);
        (mb << 20).min(i32::MAX as usize)
    })
}

/// A line longer than the limit (in bytes).
#[derive(Debug)]
struct LineTooLong(usize);

impl std::fmt::Display for LineTooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "longer than {} MB, the longest line read (set DJ_MAX_LINE_MB to raise it, up to 2047)",
            self.0 >> 20
        )
    }
}

impl std::error::Error for LineTooLong {}

fn first_byte(path: &Path, compression: Compression) -> Result<Option<u8>, SourceError> {
    let mut r = BufReader::new(open(path, compression)?);
    loop {
        let buf = r.fill_buf().map_err(|e| SourceError::io(path, e))?;
        if buf.is_empty() {
            return Ok(None);
        }
        let skip = buf
            .iter()
            .take_while(|b| b.is_ascii_whitespace() || **b == 0xEF || **b == 0xBB || **b == 0xBF)
            .count();
        if skip < buf.len() {
            return Ok(Some(buf[skip]));
        }
        let len = buf.len();
        r.consume(len);
    }
}

/// Counts, validates and indexes one JSON file; infers its schema from every row.
pub fn index(
    path: &Path,
    format: FileFormat,
    compression: Compression,
) -> Result<(InputFile, Schema, Option<ChunkShapes>), SourceError> {
    let size_bytes = std::fs::metadata(path)
        .map_err(|e| SourceError::io(path, e))?
        .len();
    let is_json_name = path
        .to_string_lossy()
        .to_ascii_lowercase()
        .contains(".json")
        && !path
            .to_string_lossy()
            .to_ascii_lowercase()
            .contains(".jsonl");
    if format == FileFormat::JsonArray
        || (is_json_name && first_byte(path, compression)? == Some(b'['))
    {
        // One element at a time: the schema is inferred as the array streams by.
        let mut elements = array_elements(path, compression)?;
        let (mut rows, mut failed) = (0u64, None);
        let values = std::iter::from_fn(|| match next_array_object(&mut elements, path) {
            Ok(Some(v)) => {
                rows += 1;
                Some(Ok::<_, ArrowError>(v))
            }
            Ok(None) => None,
            Err(e) => {
                failed = Some(e);
                None
            }
        });
        let inferred = infer_json_schema_from_iterator(values);
        if let Some(e) = failed {
            return Err(e);
        }
        let schema = inferred.map_err(|e| SourceError::Invalid {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let file = InputFile {
            path: path.to_path_buf(),
            format: FileFormat::JsonArray,
            compression,
            rows,
            size_bytes,
            seek_points: vec![],
            byte_marks: vec![],
            remote: None,
        };
        return Ok((file, schema, None));
    }

    if compression == Compression::None
        && size_bytes >= PARALLEL_INDEX_BYTES
        && let Some(Part {
            rows,
            seek_points,
            mut byte_marks,
            end,
            schema,
            chunk,
            ..
        }) = index_in_parts(path, size_bytes)?
    {
        byte_marks.push((rows, end));
        let file = InputFile {
            path: path.to_path_buf(),
            format: FileFormat::Jsonl,
            compression,
            rows,
            size_bytes,
            seek_points,
            byte_marks,
            remote: None,
        };
        return Ok((file, schema, Some(chunk)));
    }
    let reader = BufReader::with_capacity(1 << 20, open(path, compression)?);
    let Part {
        rows,
        mut seek_points,
        mut byte_marks,
        end,
        schema,
        chunk,
        ..
    } = index_lines(path, reader, 0, 0)?;
    byte_marks.push((rows, end));
    if seek_points.is_empty() {
        seek_points.push(SeekPoint {
            row: 0,
            offset: 0,
            line: 0,
        });
    }
    let file = InputFile {
        path: path.to_path_buf(),
        format: FileFormat::Jsonl,
        compression,
        rows,
        size_bytes,
        seek_points,
        byte_marks,
        remote: None,
    };
    Ok((file, schema, Some(chunk)))
}

/// Uncompressed JSON lines files at least this large are indexed in parallel parts (a part's
/// thread and file cost well under a millisecond; 24 MB of short rows took 140 ms on one).
pub(crate) const PARALLEL_INDEX_BYTES: u64 = 4 << 20;

/// One part of a file indexed on its own: rows, seek points with part-local rows and lines,
/// lines read (blank ones included), and the part's inferred schema.
struct Part {
    rows: u64,
    seek_points: Vec<SeekPoint>,
    /// `(part-local row, file offset)` marks, the first at the part's first row.
    byte_marks: Vec<(u64, u64)>,
    /// File offset after the part's last line.
    end: u64,
    lines: u64,
    schema: Schema,
    /// The shapes of the rows that start in the file's first [`JSON_SCAN_CHUNK`] bytes.
    chunk: ChunkShapes,
}

/// The distinct shapes (see [`Skeleton`](super::skeleton::Skeleton)) of the rows starting in a
/// file's first [`JSON_SCAN_CHUNK`] bytes, and whether a blank line starts there too: what
/// Hugging Face's scan for generic JSON fields reads, found while indexing instead of parsed
/// again.
#[derive(Debug, Default)]
pub(crate) struct ChunkShapes {
    pub(crate) shapes: Vec<Value>,
    pub(crate) blank: bool,
}

/// Indexes an uncompressed JSON lines file in as many parts as there are cores, cut at line
/// starts, then joins them: row and line numbers are shifted by the parts before, and the
/// schemas merged in order (first appearance, as one pass infers it). `None` when a part
/// fails or the parts' types conflict: the caller's single pass then gives the exact error
/// (with its global line number) or the coerced type.
fn index_in_parts(path: &Path, size: u64) -> Result<Option<Part>, SourceError> {
    let parts = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8) as u64;
    if parts < 2 {
        return Ok(None);
    }
    let mut cuts = vec![0u64];
    for i in 1..parts {
        let target = size * i / parts;
        let mut f = std::fs::File::open(path).map_err(|e| SourceError::io(path, e))?;
        f.seek(SeekFrom::Start(target))
            .map_err(|e| SourceError::io(path, e))?;
        let mut skipped = Vec::new();
        let n = BufReader::new(f)
            .read_until(b'\n', &mut skipped)
            .map_err(|e| SourceError::io(path, e))?;
        let cut = target + n as u64;
        if cut > *cuts.last().unwrap() && cut < size {
            cuts.push(cut);
        }
    }
    cuts.push(size);
    let results: Vec<Result<Option<Part>, SourceError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = cuts
            .windows(2)
            .enumerate()
            .map(|(i, w)| scope.spawn(move || index_part(path, w[0], w[1], i == 0)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("index thread panicked"))
            .collect()
    });
    let (mut rows, mut lines) = (0u64, 0u64);
    let mut seek_points = Vec::new();
    let mut byte_marks = Vec::new();
    let mut schemas = Vec::new();
    let mut end = 0;
    let mut chunk = ChunkShapes::default();
    for part in results {
        let Some(part) = part? else {
            return Ok(None);
        };
        chunk.shapes.extend(part.chunk.shapes);
        chunk.blank |= part.chunk.blank;
        byte_marks.extend(part.byte_marks.iter().map(|&(r, o)| (rows + r, o)));
        end = part.end;
        seek_points.extend(part.seek_points.iter().map(|p| SeekPoint {
            row: rows + p.row,
            offset: p.offset,
            line: lines + p.line,
        }));
        rows += part.rows;
        lines += part.lines;
        schemas.push(part.schema);
    }
    let Ok(schema) = Schema::try_merge(schemas) else {
        return Ok(None);
    };
    if seek_points.is_empty() {
        seek_points.push(SeekPoint {
            row: 0,
            offset: 0,
            line: 0,
        });
    }
    Ok(Some(Part {
        rows,
        seek_points,
        byte_marks,
        end,
        lines,
        schema,
        chunk,
    }))
}

/// Indexes bytes `[start, end)` (whole lines) of `path`; `None` if a row is malformed or the
/// schema cannot be inferred (the single pass then reports it with its global line).
fn index_part(path: &Path, start: u64, end: u64, first: bool) -> Result<Option<Part>, SourceError> {
    let mut f = std::fs::File::open(path).map_err(|e| SourceError::io(path, e))?;
    f.seek(SeekFrom::Start(start))
        .map_err(|e| SourceError::io(path, e))?;
    // A part after the first starts at line 1 so only the file's first line may carry a BOM.
    let reader = BufReader::with_capacity(1 << 20, f.take(end - start));
    Ok(index_lines(path, reader, start, u64::from(!first)).ok())
}

/// Counts, validates and indexes the JSON lines of `reader`, which starts at byte `offset` of
/// `path`, its line counter at `base_line`: rows, a seek point at each byte mark (lines
/// counted from the reader's start), lines read, and the schema inferred from every row.
fn index_lines(
    path: &Path,
    reader: impl BufRead,
    offset: u64,
    base_line: u64,
) -> Result<Part, SourceError> {
    let mut lines = Lines::new(reader, offset, base_line);
    let mut seek_points = Vec::new();
    let mut byte_marks: Vec<(u64, u64)> = Vec::new();
    let mut rows = 0u64;
    let mut failure: Option<SourceError> = None;
    let mut recent = RecentShapes::default();
    let mut chunk_shapes = Vec::new();
    let iter = std::iter::from_fn(|| match lines.next_row(path) {
        Ok(Some((offset, line))) => {
            // A seek point at each byte mark: reading a range skips at most one mark's spacing
            // of rows before its first.
            if byte_marks
                .last()
                .is_none_or(|&(r, o)| rows - r >= MARK_MIN_ROWS && offset - o >= MARK_BYTES)
            {
                byte_marks.push((rows, offset));
                seek_points.push(SeekPoint {
                    row: rows,
                    offset,
                    line: line - 1 - base_line,
                });
            }
            rows += 1;
            match parse_object(&lines.buf, path, line) {
                Ok(v) if recent.is_new(&v) => {
                    if offset <= JSON_SCAN_CHUNK {
                        chunk_shapes.push(v.clone());
                    }
                    Some(Ok(v))
                }
                // Adds nothing to the inferred schema.
                Ok(_) => Some(Ok(Value::Object(Default::default()))),
                Err(e) => {
                    failure = Some(e);
                    Some(Err(ArrowError::ParseError("malformed row".into())))
                }
            }
        }
        Ok(None) => None,
        Err(e) => {
            failure = Some(e);
            Some(Err(ArrowError::ParseError("read failure".into())))
        }
    });
    let inferred = infer_json_schema_from_iterator(iter);
    if let Some(e) = failure {
        return Err(e);
    }
    let schema = inferred.map_err(|e| SourceError::Invalid {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let blank = (lines.first_blank).is_some_and(|at| at <= JSON_SCAN_CHUNK);
    Ok(Part {
        rows,
        seek_points,
        byte_marks,
        end: lines.offset,
        lines: lines.line - base_line,
        schema,
        chunk: ChunkShapes {
            shapes: chunk_shapes,
            blank,
        },
    })
}

/// The elements of the JSON array in `path`, read as it streams.
pub(super) fn array_elements(
    path: &Path,
    compression: Compression,
) -> Result<ArrayElements<BufReader<Box<dyn Read + Send>>>, SourceError> {
    let reader = BufReader::with_capacity(1 << 20, open(path, compression)?);
    Ok(ArrayElements::new(reader, path, max_line_bytes()))
}

/// The array's next element, checked to be an object, as its
/// [`Skeleton`](super::skeleton::Skeleton).
fn next_array_object<R: BufRead>(
    elements: &mut ArrayElements<R>,
    path: &Path,
) -> Result<Option<Value>, SourceError> {
    let Some((i, line)) = elements.next_element()? else {
        return Ok(None);
    };
    parse_object(&elements.buf, path, line)
        .map(Some)
        .map_err(|e| match e {
            SourceError::BadRow {
                path,
                line,
                message,
            } => SourceError::BadRow {
                path,
                line,
                message: format!("element {i} of the JSON array: {message}"),
            },
            e => e,
        })
}

/// Reads rows `[start, end)` of `file` (file-local indices) with `schema` (which may be a
/// projection: other fields are skipped), calling `emit` per batch until it returns false.
pub(crate) fn read_range(
    file: &InputFile,
    schema: &SchemaRef,
    start: u64,
    end: u64,
    emit: &mut dyn FnMut(RecordBatch) -> bool,
) -> Result<(), SourceError> {
    let path = file.path.as_path();
    let mut batcher = Batcher::new(schema, path, emit)?;
    if file.format == FileFormat::JsonArray {
        let mut elements = array_elements(path, file.compression)?;
        let mut row = start;
        while row < end {
            let Some((i, at)) = elements.next_element()? else {
                return Err(SourceError::Invalid {
                    path: path.to_path_buf(),
                    message: format!(
                        "the array ended at element {row}, but the index counted {} rows; was it changed while the job ran?",
                        file.rows
                    ),
                });
            };
            if i < start {
                continue;
            }
            row = i + 1;
            if !batcher.push(&elements.buf, at)? {
                return Ok(());
            }
        }
        return batcher.finish();
    }

    let sp = file
        .seek_points
        .iter()
        .rev()
        .find(|p| p.row <= start)
        .copied()
        .unwrap_or(SeekPoint {
            row: 0,
            offset: 0,
            line: 0,
        });
    let reader: Box<dyn Read + Send> = match file.compression {
        Compression::None => {
            let mut f = std::fs::File::open(path).map_err(|e| SourceError::io(path, e))?;
            f.seek(SeekFrom::Start(sp.offset))
                .map_err(|e| SourceError::io(path, e))?;
            Box::new(f)
        }
        c => {
            let mut r = open(path, c)?;
            std::io::copy(&mut (&mut r).take(sp.offset), &mut std::io::sink())
                .map_err(|e| SourceError::io(path, e))?;
            r
        }
    };
    let mut lines = Lines::new(
        BufReader::with_capacity(1 << 20, reader),
        sp.offset,
        sp.line,
    );
    let mut row = sp.row;
    while row < end {
        let Some((_, line)) = lines.next_row(path)? else {
            return Err(SourceError::Invalid {
                path: path.to_path_buf(),
                message: format!(
                    "file ended at row {row}, but the index counted {} rows; was it changed while the job ran?",
                    file.rows
                ),
            });
        };
        row += 1;
        if row <= start {
            continue;
        }
        if !batcher.push(&lines.buf, line)? {
            return Ok(());
        }
    }
    batcher.finish()
}

/// Rows (JSON objects, raw) fed to Arrow's JSON decoder and handed on as a batch every
/// [`BATCH_ROWS`] rows or [`BATCH_BYTES`] bytes.
struct Batcher<'a> {
    decoder: datafusion::arrow::json::reader::Decoder,
    path: &'a Path,
    emit: &'a mut dyn FnMut(RecordBatch) -> bool,
    rows: usize,
    bytes: usize,
    /// The line of the last row decoded, which a decoding error names.
    line: u64,
}

impl<'a> Batcher<'a> {
    fn new(
        schema: &SchemaRef,
        path: &'a Path,
        emit: &'a mut dyn FnMut(RecordBatch) -> bool,
    ) -> Result<Self, SourceError> {
        Ok(Batcher {
            decoder: ReaderBuilder::new(schema.clone())
                .with_batch_size(BATCH_ROWS)
                .build_decoder()
                .map_err(|e| SourceError::BadRow {
                    path: path.to_path_buf(),
                    line: 0,
                    message: e.to_string(),
                })?,
            path,
            emit,
            rows: 0,
            bytes: 0,
            line: 0,
        })
    }

    fn error(&self, e: ArrowError) -> SourceError {
        SourceError::BadRow {
            path: self.path.to_path_buf(),
            line: self.line,
            message: e.to_string(),
        }
    }

    /// Decodes `row` (on `line`); false when the consumer wants no more batches.
    fn push(&mut self, row: &[u8], line: u64) -> Result<bool, SourceError> {
        self.line = line;
        self.decoder.decode(row).map_err(|e| self.error(e))?;
        self.rows += 1;
        self.bytes += row.len();
        if self.rows >= BATCH_ROWS || self.bytes >= BATCH_BYTES {
            (self.rows, self.bytes) = (0, 0);
            if let Some(b) = self.decoder.flush().map_err(|e| self.error(e))? {
                return Ok((self.emit)(b));
            }
        }
        Ok(true)
    }

    /// Hands on the last, partial batch.
    fn finish(mut self) -> Result<(), SourceError> {
        if let Some(b) = self.decoder.flush().map_err(|e| self.error(e))? {
            (self.emit)(b);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::util::pretty::pretty_format_batches;

    use super::*;

    /// Rows whose fields appear, nest and change from null to typed at different places, with
    /// blank lines and a BOM: the parallel index must equal the single pass.
    fn varied_file(rows: usize) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("varied.jsonl");
        let mut text = String::from("\u{feff}");
        for i in 0..rows {
            let v = match i % 5 {
                0 => serde_json::json!({"text": format!("row {i} é"), "meta": {"a": i}}),
                1 => serde_json::json!({"meta": {"b": null}, "text": "x", "n": null}),
                2 => serde_json::json!({"text": "y", "tags": ["a", "b"], "meta": {"b": "z"}}),
                3 if i > rows / 2 => serde_json::json!({"text": "late", "n": 1.5, "late": true}),
                _ => serde_json::json!({"text": "\u{feff}starts with a BOM char"}),
            };
            text.push_str(&v.to_string());
            text.push('\n');
            if i % 97 == 0 {
                text.push_str("   \n");
            }
        }
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    fn read_all(file: &InputFile, schema: &SchemaRef, start: u64, end: u64) -> String {
        let mut batches = Vec::new();
        read_range(file, schema, start, end, &mut |b| {
            batches.push(b);
            true
        })
        .unwrap();
        pretty_format_batches(&batches).unwrap().to_string()
    }

    #[test]
    fn parallel_index_equals_the_single_pass() {
        let (_dir, path) = varied_file(12_411);
        let (single, single_schema, _) =
            index(&path, FileFormat::Jsonl, Compression::None).unwrap();
        assert!(
            single.size_bytes < PARALLEL_INDEX_BYTES,
            "the single pass ran"
        );
        let size = single.size_bytes;
        let Part {
            rows,
            seek_points,
            mut byte_marks,
            end,
            schema,
            ..
        } = index_in_parts(&path, size).unwrap().unwrap();
        byte_marks.push((rows, end));
        assert_eq!(schema, single_schema);
        assert_eq!(rows, single.rows);
        // The parts mark other rows than the single pass, but a row marked by both is at the
        // same offset, and both end at the file's end.
        assert_eq!(byte_marks.last(), Some(&(rows, size)));
        assert_eq!(single.byte_marks.last(), Some(&(rows, size)));
        assert!(byte_marks.len() > 2 && byte_marks.windows(2).all(|w| w[0] < w[1]));
        let single_marks: std::collections::HashMap<u64, u64> =
            single.byte_marks.iter().copied().collect();
        let shared = byte_marks
            .iter()
            .filter(|(r, o)| {
                single_marks.get(r).is_some_and(|so| {
                    assert_eq!(so, o, "row {r}");
                    true
                })
            })
            .count();
        assert!(shared >= 1, "{shared}");
        // Reading a range starts at the byte mark before it (not up to 4,096 rows before).
        let marks = |points: &[SeekPoint]| -> Vec<(u64, u64)> {
            points.iter().map(|p| (p.row, p.offset)).collect()
        };
        let without_end = |m: &[(u64, u64)]| m[..m.len() - 1].to_vec();
        assert_eq!(marks(&single.seek_points), without_end(&single.byte_marks));
        assert_eq!(marks(&seek_points), without_end(&byte_marks));
        let parallel = InputFile {
            rows,
            seek_points,
            byte_marks,
            ..single.clone()
        };
        let schema = Arc::new(schema);
        for (a, b) in [
            (0, rows),
            (1, 2),
            (4000, 8200),
            (rows - 3, rows),
            (8191, 12000),
        ] {
            assert_eq!(
                read_all(&parallel, &schema, a, b),
                read_all(&single, &schema, a, b),
                "rows {a}..{b}"
            );
        }
    }

    #[test]
    fn conflicting_parts_fall_back_to_the_single_pass() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("conflict.jsonl");
        let mut text = String::new();
        for i in 0..20_000 {
            // An integer field early, a float late (the parts are cut by bytes, so the first
            // part holds only integers): one pass coerces to Float64, part 1 alone says Int64.
            let (t, v) = if i < 10_000 {
                ("long text", "1")
            } else {
                ("t", "1.5")
            };
            text.push_str(&format!("{{\"text\": \"{t}\", \"v\": {v}}}\n"));
        }
        std::fs::write(&path, text).unwrap();
        let size = std::fs::metadata(&path).unwrap().len();
        if std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2 {
            let got = index_in_parts(&path, size).unwrap();
            assert!(got.is_none(), "{:?}", got.map(|g| g.schema));
        }
        let mut bad = std::fs::read_to_string(&path).unwrap();
        bad.push_str("{\"text\": oops}\n");
        std::fs::write(&path, bad).unwrap();
        let size = std::fs::metadata(&path).unwrap().len();
        assert!(index_in_parts(&path, size).unwrap().is_none());
    }

    /// The generic JSON fields found from the shapes the index collects are those of the scan of
    /// the file's first 10 MiB: a field whose keys vary inside it, outside it, at a line starting
    /// exactly at its end and just after it; a blank line inside it and after it; a BOM; a file
    /// indexed in parallel parts.
    #[test]
    fn chunk_shapes_give_what_the_json_scan_finds() {
        use crate::source::json_types;
        let dir = tempfile::tempdir().unwrap();
        let chunk = JSON_SCAN_CHUNK as usize;
        let row = |meta: &str, pad: usize| {
            format!("{{\"text\": \"{}\", \"meta\": {meta}}}\n", "x".repeat(pad))
        };
        // Rows of about 1 KB up to `at` bytes, then `last` starting exactly at `at`.
        let fill = |at: usize, last: &str| {
            let mut text = String::from("\u{feff}");
            while text.len() < at {
                let left = at - text.len();
                let pad = if left > 2000 {
                    1000
                } else {
                    left - row(r#"{"a": 1}"#, 0).len()
                };
                text.push_str(&row(r#"{"a": 1}"#, pad));
            }
            assert_eq!(text.len(), at);
            text + last
        };
        let other = row(r#"{"b": 2}"#, 5);
        let cases = [
            ("varies inside", fill(5000, &other), true),
            ("varies at the end", fill(chunk, &other), true),
            ("varies after it", fill(chunk + 1, &other), false),
            (
                "blank inside",
                fill(5000, &(String::from("\n") + &other)),
                false,
            ),
            (
                "blank after",
                fill(chunk + 1, &(String::from("  \n") + &other)),
                false,
            ),
            (
                "blank after, varies inside",
                format!(
                    "{other}{}\n\n",
                    fill(chunk + 1, "").replacen('\u{feff}', "", 1)
                ),
                true,
            ),
        ];
        for (name, text, generic) in cases {
            let path = dir.path().join(format!("{name}.jsonl"));
            std::fs::write(&path, &text).unwrap();
            let scanned = json_types::detect(&path, FileFormat::Jsonl, Compression::None).unwrap();
            assert_eq!(
                scanned != crate::pyjson::JsonTypes::none(),
                generic,
                "{name}"
            );
            let (_, _, shapes) = index(&path, FileFormat::Jsonl, Compression::None).unwrap();
            assert_eq!(json_types::from_chunk(&shapes.unwrap()), scanned, "{name}");
            let single = index_lines(
                &path,
                BufReader::new(std::fs::File::open(&path).unwrap()),
                0,
                0,
            )
            .unwrap();
            assert_eq!(
                json_types::from_chunk(&single.chunk),
                scanned,
                "{name}: one pass"
            );
        }
    }
}
