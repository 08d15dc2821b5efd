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
use super::{InputFile, SEEK_EVERY, SeekPoint, SourceError};

/// Rows are flushed into a batch at this many rows or [`BATCH_BYTES`] bytes of JSON.
pub const BATCH_ROWS: usize = 8192;
pub const BATCH_BYTES: usize = 8 << 20;

/// Reads a file line by line, tracking byte offsets and 1-based line numbers; skips blank lines.
struct Lines<R> {
    reader: R,
    buf: Vec<u8>,
    offset: u64,
    line: u64,
}

impl<R: BufRead> Lines<R> {
    fn new(reader: R, offset: u64, line: u64) -> Self {
        Lines {
            reader,
            buf: Vec::with_capacity(4096),
            offset,
            line,
        }
    }

    /// Next non-blank line: (its byte offset, its line number). The bytes are in `self.buf`.
    fn next_row(&mut self, path: &Path) -> Result<Option<(u64, u64)>, SourceError> {
        loop {
            self.buf.clear();
            let start = self.offset;
            let n = self
                .reader
                .read_until(b'\n', &mut self.buf)
                .map_err(|e| SourceError::io(path, e))?;
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
        }
    }
}

fn parse_object(bytes: &[u8], path: &Path, line: u64) -> Result<Value, SourceError> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| SourceError::BadRow {
        path: path.to_path_buf(),
        line,
        message: e.to_string(),
    })?;
    if !v.is_object() {
        return Err(SourceError::BadRow {
            path: path.to_path_buf(),
            line,
            message: format!("expected a JSON object, got {}", kind(&v)),
        });
    }
    Ok(v)
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

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
) -> Result<(InputFile, Schema), SourceError> {
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
        let values = load_array(path, compression)?;
        let schema = infer_json_schema_from_iterator(values.iter().map(Ok::<_, ArrowError>))
            .map_err(|e| SourceError::Invalid {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?;
        let file = InputFile {
            path: path.to_path_buf(),
            format: FileFormat::JsonArray,
            compression,
            rows: values.len() as u64,
            size_bytes,
            seek_points: vec![],
            remote: None,
        };
        return Ok((file, schema));
    }

    let mut lines = Lines::new(
        BufReader::with_capacity(1 << 20, open(path, compression)?),
        0,
        0,
    );
    let mut seek_points = Vec::new();
    let mut rows = 0u64;
    let mut failure: Option<SourceError> = None;
    let iter = std::iter::from_fn(|| match lines.next_row(path) {
        Ok(Some((offset, line))) => {
            if rows.is_multiple_of(SEEK_EVERY) {
                seek_points.push(SeekPoint {
                    row: rows,
                    offset,
                    line: line - 1,
                });
            }
            rows += 1;
            match parse_object(&lines.buf, path, line) {
                Ok(v) => Some(Ok(v)),
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
        remote: None,
    };
    Ok((file, schema))
}

fn load_array(path: &Path, compression: Compression) -> Result<Vec<Value>, SourceError> {
    let mut text = Vec::new();
    open(path, compression)?
        .read_to_end(&mut text)
        .map_err(|e| SourceError::io(path, e))?;
    let v: Value = serde_json::from_slice(&text).map_err(|e| SourceError::BadRow {
        path: path.to_path_buf(),
        line: e.line() as u64,
        message: e.to_string(),
    })?;
    let Value::Array(items) = v else {
        return Err(SourceError::Invalid {
            path: path.to_path_buf(),
            message: "expected a JSON array of objects".into(),
        });
    };
    if let Some(i) = items.iter().position(|v| !v.is_object()) {
        return Err(SourceError::Invalid {
            path: path.to_path_buf(),
            message: format!(
                "element {i} of the JSON array is {}, expected an object",
                kind(&items[i])
            ),
        });
    }
    Ok(items)
}

/// Reads rows `[start, end)` of `file` (file-local indices) with `schema` (which may be a
/// projection: other fields are skipped), calling `emit` per batch until it returns false.
pub fn read_range(
    file: &InputFile,
    schema: &SchemaRef,
    start: u64,
    end: u64,
    emit: &mut dyn FnMut(RecordBatch) -> bool,
) -> Result<(), SourceError> {
    let path = file.path.as_path();
    let decode_err = |line: u64, e: ArrowError| SourceError::BadRow {
        path: path.to_path_buf(),
        line,
        message: e.to_string(),
    };
    let mut decoder = ReaderBuilder::new(schema.clone())
        .with_batch_size(BATCH_ROWS)
        .build_decoder()
        .map_err(|e| decode_err(0, e))?;
    if file.format == FileFormat::JsonArray {
        let values = load_array(path, file.compression)?;
        for chunk in values[start as usize..end as usize].chunks(BATCH_ROWS) {
            decoder.serialize(chunk).map_err(|e| decode_err(0, e))?;
            if let Some(b) = decoder.flush().map_err(|e| decode_err(0, e))?
                && !emit(b)
            {
                return Ok(());
            }
        }
        return Ok(());
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
    let (mut rows, mut bytes) = (0usize, 0usize);
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
        decoder
            .decode(&lines.buf)
            .map_err(|e| decode_err(line, e))?;
        rows += 1;
        bytes += lines.buf.len();
        if rows >= BATCH_ROWS || bytes >= BATCH_BYTES {
            if let Some(b) = decoder.flush().map_err(|e| decode_err(line, e))?
                && !emit(b)
            {
                return Ok(());
            }
            (rows, bytes) = (0, 0);
        }
    }
    if let Some(b) = decoder.flush().map_err(|e| decode_err(lines.line, e))? {
        emit(b);
    }
    Ok(())
}
