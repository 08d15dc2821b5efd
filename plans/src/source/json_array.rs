//! A `.json` file holding one array of objects, read one element at a time: memory holds one
//! element (at most `DJ_MAX_LINE_MB`, as for a JSON-lines row), never the whole file, so a
//! `.json` input streams like a `.jsonl` one.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use super::SourceError;

/// Where the reader is in the array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    /// Before the opening `[`.
    Start,
    /// After `[`: an element or `]` comes next.
    First,
    /// After an element: `,` or `]` comes next.
    AfterElement,
    /// After the closing `]`.
    Done,
}

/// The elements of a JSON array, each as its bytes in [`ArrayElements::buf`].
pub(crate) struct ArrayElements<R> {
    reader: R,
    path: PathBuf,
    /// The current element's bytes.
    pub(crate) buf: Vec<u8>,
    /// 1-based line of the next byte.
    line: u64,
    /// Elements read so far.
    index: u64,
    at: At,
    /// The longest element read, in bytes (`DJ_MAX_LINE_MB`).
    limit: usize,
}

impl<R: BufRead> ArrayElements<R> {
    pub(crate) fn new(reader: R, path: &Path, limit: usize) -> Self {
        ArrayElements {
            reader,
            path: path.to_path_buf(),
            buf: Vec::with_capacity(4096),
            line: 1,
            index: 0,
            at: At::Start,
            limit,
        }
    }

    fn invalid(&self, message: String) -> SourceError {
        SourceError::Invalid {
            path: self.path.clone(),
            message,
        }
    }

    /// The next byte, not consumed; `None` at the end of the file.
    fn peek(&mut self) -> Result<Option<u8>, SourceError> {
        Ok(fill(&mut self.reader, &self.path)?.first().copied())
    }

    /// Skips whitespace (and a byte-order mark at the start), counting lines.
    fn skip_space(&mut self) -> Result<Option<u8>, SourceError> {
        loop {
            let available = fill(&mut self.reader, &self.path)?;
            if available.is_empty() {
                return Ok(None);
            }
            let bom = self.at == At::Start && available.starts_with(b"\xEF\xBB\xBF");
            let skip = if bom { 3 } else { 0 };
            let spaces = available[skip..]
                .iter()
                .take_while(|b| b.is_ascii_whitespace())
                .count();
            self.line += available[skip..skip + spaces]
                .iter()
                .filter(|b| **b == b'\n')
                .count() as u64;
            let next = available.get(skip + spaces).copied();
            self.reader.consume(skip + spaces);
            if next.is_some() {
                return Ok(next);
            }
        }
    }

    /// Reads the next element into `buf`: `Some((its index, the line it starts on))`, or `None`
    /// after the closing `]` (followed by nothing but whitespace).
    pub(crate) fn next_element(&mut self) -> Result<Option<(u64, u64)>, SourceError> {
        loop {
            let next = self.skip_space()?;
            match (self.at, next) {
                (At::Done, None) => return Ok(None),
                (At::Done, Some(_)) => {
                    return Err(self.invalid(format!(
                        "line {}: text after the JSON array's closing `]`",
                        self.line
                    )));
                }
                (At::Start, Some(b'[')) => {
                    self.reader.consume(1);
                    self.at = At::First;
                }
                (At::Start, _) => {
                    return Err(self.invalid("expected a JSON array of objects".into()));
                }
                (At::First | At::AfterElement, Some(b']')) => {
                    self.reader.consume(1);
                    self.at = At::Done;
                }
                (At::AfterElement, Some(b',')) => {
                    self.reader.consume(1);
                    if self.skip_space()? == Some(b']') {
                        return Err(self.invalid(format!(
                            "line {}: a trailing comma after element {} of the JSON array",
                            self.line,
                            self.index - 1
                        )));
                    }
                    self.at = At::First;
                }
                (At::First, Some(_)) => {
                    let line = self.line;
                    self.read_value()?;
                    self.at = At::AfterElement;
                    self.index += 1;
                    return Ok(Some((self.index - 1, line)));
                }
                (_, found) => {
                    let what = match found {
                        Some(b) => format!("found `{}`", b as char),
                        None => "the file ended".to_string(),
                    };
                    return Err(self.invalid(format!(
                        "line {}: expected `,` or `]` after element {} of the JSON array, {what}",
                        self.line,
                        self.index.saturating_sub(1)
                    )));
                }
            }
        }
    }

    /// Copies one JSON value's bytes into `buf`: an object or array up to its matching close, a
    /// string to its closing quote, a scalar up to the next delimiter. Its validity is left to
    /// the JSON parser.
    fn read_value(&mut self) -> Result<(), SourceError> {
        self.buf.clear();
        let limit = self.limit;
        let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
        let first = self.peek()?;
        let scalar = !matches!(first, Some(b'{' | b'[' | b'"'));
        loop {
            let available = fill(&mut self.reader, &self.path)?;
            if available.is_empty() {
                return Err(self.invalid(format!(
                    "the file ends inside element {} of the JSON array",
                    self.index
                )));
            }
            let mut end = None;
            for (i, &b) in available.iter().enumerate() {
                if in_string {
                    if escaped {
                        escaped = false;
                    } else if b == b'\\' {
                        escaped = true;
                    } else if b == b'"' {
                        in_string = false;
                        if depth == 0 {
                            end = Some(i + 1);
                            break;
                        }
                    }
                    continue;
                }
                if scalar {
                    if b == b',' || b == b']' || b.is_ascii_whitespace() {
                        end = Some(i);
                        break;
                    }
                    continue;
                }
                match b {
                    b'"' => in_string = true,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            end = Some(i + 1);
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let take = end.unwrap_or(available.len());
            if self.buf.len() + take > limit {
                return Err(self.invalid(format!(
                    "element {} of the JSON array (line {}): longer than {} MB, the longest row \
                     read (set DJ_MAX_LINE_MB to raise it, up to 2047)",
                    self.index,
                    self.line,
                    limit >> 20
                )));
            }
            self.line += memchr::memchr_iter(b'\n', &available[..take]).count() as u64;
            self.buf.extend_from_slice(&available[..take]);
            self.reader.consume(take);
            if end.is_some() {
                return Ok(());
            }
        }
    }
}

/// The reader's buffered bytes, refilled when empty (empty at the end of the file); an
/// interrupted read is retried. A free function, so the caller keeps its other fields.
fn fill<'a, R: BufRead>(reader: &'a mut R, path: &Path) -> Result<&'a [u8], SourceError> {
    // Retried without keeping the buffer (the borrow checker cannot yet return it from the
    // loop); the call after a success returns the buffered bytes without reading.
    while let Err(e) = reader.fill_buf() {
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(SourceError::io(path, e));
        }
    }
    reader.fill_buf().map_err(|e| SourceError::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elements(text: &str) -> Result<Vec<(u64, u64, String)>, String> {
        // A tiny buffer, so elements straddle refills.
        let reader = std::io::BufReader::with_capacity(3, text.as_bytes());
        let mut a = ArrayElements::new(reader, Path::new("in.json"), 1 << 20);
        let mut out = Vec::new();
        loop {
            match a.next_element() {
                Ok(Some((i, line))) => {
                    out.push((i, line, String::from_utf8(a.buf.clone()).unwrap()))
                }
                Ok(None) => return Ok(out),
                Err(e) => return Err(e.to_string()),
            }
        }
    }

    #[test]
    fn elements_come_one_at_a_time_with_their_lines() {
        let text = "\u{feff} [\n {\"text\": \"a ] } , \\\" [\"},\n\n  {\"n\": [1, {\"x\": 2}]} ,7,\"s\"\n, [1] ]\n";
        assert_eq!(
            elements(text).unwrap(),
            vec![
                (0, 2, r#"{"text": "a ] } , \" ["}"#.to_string()),
                (1, 4, r#"{"n": [1, {"x": 2}]}"#.to_string()),
                (2, 4, "7".to_string()),
                (3, 4, r#""s""#.to_string()),
                (4, 5, "[1]".to_string()),
            ]
        );
        assert_eq!(elements("[]").unwrap(), vec![]);
        assert_eq!(elements(" [ \n ] \n").unwrap(), vec![]);
    }

    #[test]
    fn malformed_arrays_are_named_by_line_and_element() {
        let err = |t: &str| elements(t).unwrap_err();
        assert_eq!(err("{}"), "in.json: expected a JSON array of objects");
        assert_eq!(
            err("[{},\n{}] x"),
            "in.json: line 2: text after the JSON array's closing `]`"
        );
        assert_eq!(
            err("[{},\n{},\n]"),
            "in.json: line 3: a trailing comma after element 1 of the JSON array"
        );
        assert_eq!(
            err("[{}\n{}]"),
            "in.json: line 2: expected `,` or `]` after element 0 of the JSON array, found `{`"
        );
        assert_eq!(
            err("[{}, {\"a\": \"unterminated}]"),
            "in.json: the file ends inside element 1 of the JSON array"
        );
        assert_eq!(
            err("[{}"),
            "in.json: line 1: expected `,` or `]` after element 0 of the JSON array, the file ended"
        );
    }
}
