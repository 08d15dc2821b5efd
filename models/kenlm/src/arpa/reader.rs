//! A byte cursor over ARPA text with the tokenizing rules of kenlm's `util::FilePiece`
//! (which whitespace each read skips, how numbers are parsed), so files kenlm accepts
//! or rejects are accepted or rejected here too.

/// kenlm's `kSpaces`: what `ReadFloat` skips (includes newlines).
pub(crate) fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// kenlm's `kARPASpaces`: what separates words in an n-gram line.
fn is_arpa_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// C `isspace` in the "C" locale, used to recognise blank lines.
pub(crate) fn is_blank_line(line: &[u8]) -> bool {
    line.iter().all(|&b| is_space(b))
}

pub(crate) struct Reader<'a> {
    pub data: &'a [u8],
    pub pos: usize,
}

/// A read failure and the byte position it refers to.
pub(crate) struct ReadError {
    pub at: usize,
    pub message: String,
}

pub(crate) type ReadResult<T> = Result<T, ReadError>;

impl<'a> Reader<'a> {
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Reader { data, pos: 0 }
    }

    pub(crate) fn fail<T>(&self, at: usize, message: impl Into<String>) -> ReadResult<T> {
        Err(ReadError {
            at,
            message: message.into(),
        })
    }

    fn eof<T>(&self, expected: &str) -> ReadResult<T> {
        self.fail(
            self.data.len(),
            format!("unexpected end of file, expected {expected}"),
        )
    }

    /// Next line without its `\n` (and a trailing `\r`, as kenlm strips it).
    pub(crate) fn read_line(&mut self) -> ReadResult<&'a [u8]> {
        if self.pos >= self.data.len() {
            return self.eof("another line");
        }
        let rest = &self.data[self.pos..];
        let (line, used) = match rest.iter().position(|&b| b == b'\n') {
            Some(n) => (&rest[..n], n + 1),
            None => (rest, rest.len()),
        };
        self.pos += used;
        Ok(line.strip_suffix(b"\r").unwrap_or(line))
    }

    /// True once only end-of-file remains.
    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.data.len()
    }

    pub(crate) fn get(&mut self, expected: &str) -> ReadResult<u8> {
        match self.data.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                Ok(b)
            }
            None => self.eof(expected),
        }
    }

    /// A word: skips separators, then takes bytes up to the next separator.
    pub(crate) fn read_word(&mut self) -> &'a [u8] {
        while self.pos < self.data.len() && is_arpa_space(self.data[self.pos]) {
            self.pos += 1;
        }
        let start = self.pos;
        while self.pos < self.data.len() && !is_arpa_space(self.data[self.pos]) {
            self.pos += 1;
        }
        &self.data[start..self.pos]
    }

    /// A float as kenlm's `ReadFloat` parses it: whitespace (newlines too) skipped, the
    /// longest numeric prefix taken (double-conversion with trailing junk allowed,
    /// infinity spelled `inf`), NaN rejected.
    pub(crate) fn read_float(&mut self) -> ReadResult<f32> {
        while self.pos < self.data.len() && is_space(self.data[self.pos]) {
            self.pos += 1;
        }
        if self.at_end() {
            return self.eof("a number");
        }
        let start = self.pos;
        let s = &self.data[start..];
        let digits = |from: usize| s[from..].iter().take_while(|b| b.is_ascii_digit()).count();
        let mut i = usize::from(matches!(s[0], b'+' | b'-'));
        let value = if s[i..].starts_with(b"inf") {
            i += 3;
            if s[0] == b'-' {
                f32::NEG_INFINITY
            } else {
                f32::INFINITY
            }
        } else {
            let int = digits(i);
            i += int;
            let mut frac = 0;
            if s.get(i) == Some(&b'.') {
                frac = digits(i + 1);
                if int + frac > 0 {
                    i += 1 + frac;
                }
            }
            if int + frac == 0 {
                let token: Vec<u8> = s
                    .iter()
                    .take(20)
                    .take_while(|&&b| !is_space(b))
                    .copied()
                    .collect();
                return self.fail(
                    start,
                    format!("bad number \"{}\"", String::from_utf8_lossy(&token)),
                );
            }
            if matches!(s.get(i), Some(b'e' | b'E')) {
                let mut k = i + 1;
                if matches!(s.get(k), Some(b'+' | b'-')) {
                    k += 1;
                }
                let exp = digits(k);
                if exp > 0 {
                    i = k + exp;
                }
            }
            // The slice is ASCII digits/sign/dot/exponent, which Rust parses with the
            // same correct rounding as double-conversion's StringToFloat.
            let text = std::str::from_utf8(&s[..i]).unwrap_or("");
            match text.parse::<f32>() {
                Ok(v) => v,
                Err(_) => return self.fail(start, format!("bad number \"{text}\"")),
            }
        };
        self.pos = start + i;
        Ok(value)
    }
}
