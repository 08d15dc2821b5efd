//! Loading ARPA text files the way kenlm does by default: parse with FilePiece rules,
//! enforce kenlm's checks (positive probabilities, missing `<s>`/`</s>`, unknown words,
//! missing contexts) and build the probing structure in memory.

mod build;
pub(crate) use build::PROBING_MULTIPLIER;
mod reader;

use crate::search::MAX_ORDER;
use build::{Builder, ProbBackoff};
use reader::{ReadError, ReadResult, Reader, is_blank_line};

/// Where parsing failed: byte position and message; the caller turns the position
/// into a line number.
pub(crate) type ArpaError = ReadError;

/// Parses ARPA text into the serialized probing layout plus its n-gram counts.
pub(crate) fn load(data: &[u8]) -> Result<(Vec<u8>, Vec<u64>), ArpaError> {
    let mut r = Reader::new(data);
    let counts = read_counts(&mut r)?;
    if counts.len() > MAX_ORDER {
        return r.fail(r.pos, format!(
            "this model has order {} but kenlm (and this reader) supports at most order {MAX_ORDER}",
            counts.len()
        ));
    }
    if counts.len() < 2 {
        return r.fail(r.pos, "kenlm requires at least a bigram model (order >= 2)");
    }
    // Every entry takes at least a few bytes of text, so larger counts cannot be right;
    // checking first avoids allocating tables for absurd counts.
    if counts.iter().any(|&c| c > data.len() as u64) || counts[0] >= u64::from(u32::MAX) {
        return r.fail(
            r.pos,
            format!("n-gram counts {counts:?} are larger than the file could hold"),
        );
    }
    let mut builder = Builder::new(&counts);
    read_unigrams(&mut r, &mut builder)?;
    let at = r.pos;
    for (name, word) in [("<s>", b"<s>".as_slice()), ("</s>", b"</s>".as_slice())] {
        if builder.index(word) == 0 {
            return r.fail(
                at,
                format!("the ARPA file is missing {name} (kenlm rejects such models)"),
            );
        }
    }
    for n in 2..=counts.len() {
        read_ngrams(&mut r, &mut builder, n)?;
    }
    read_end(&mut r)?;
    Ok((builder.finish(), counts))
}

/// `\data\` and its `ngram N=count` lines (kenlm's `ReadARPACounts`).
fn read_counts(r: &mut Reader<'_>) -> ReadResult<Vec<u64>> {
    let mut start = r.pos;
    let mut line = r.read_line()?;
    while is_blank_line(line) || line.starts_with(b"#") {
        start = r.pos;
        line = r.read_line()?;
    }
    if line != b"\\data\\" {
        let shown = String::from_utf8_lossy(&line[..line.len().min(60)]).into_owned();
        let hint = if line.starts_with(&[0x1f, 0x8b]) {
            " (looks gzip-compressed; decompress it first)"
        } else if line.starts_with(b"mmap lm http://kheafield.com/code") {
            " (looks like a KenLM binary with a damaged header)"
        } else {
            ""
        };
        return r.fail(
            start,
            format!("first non-empty line was \"{shown}\", not \\data\\{hint}"),
        );
    }
    let mut counts = Vec::new();
    loop {
        let start = r.pos;
        let line = r.read_line()?;
        if is_blank_line(line) {
            return Ok(counts);
        }
        let text = String::from_utf8_lossy(line);
        let Some(rest) = text.strip_prefix("ngram ") else {
            return r.fail(
                start,
                format!("count line \"{text}\" doesn't begin with \"ngram \""),
            );
        };
        let rest = rest.trim_start();
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let length: Option<usize> = rest[..digits].parse().ok();
        if length != Some(counts.len() + 1) {
            return r.fail(
                start,
                format!("ngram count lengths should be consecutive starting with 1: {text}"),
            );
        }
        let Some(value) = rest[digits..].strip_prefix('=') else {
            return r.fail(
                start,
                format!(
                    "expected = immediately following the first number in the count line {text}"
                ),
            );
        };
        let value = value.trim_start();
        let digits = value.bytes().take_while(u8::is_ascii_digit).count();
        match value[..digits].parse::<u64>() {
            Ok(count) => counts.push(count),
            Err(_) => return r.fail(start, format!("bad count in \"{text}\"")),
        }
    }
}

/// Skips blank lines, then requires the `\N-grams:` header.
fn read_header(r: &mut Reader<'_>, n: usize) -> ReadResult<()> {
    let mut start = r.pos;
    let mut line = r.read_line()?;
    while is_blank_line(line) {
        start = r.pos;
        line = r.read_line()?;
    }
    let expected = format!("\\{n}-grams:");
    if line != expected.as_bytes() {
        let shown = String::from_utf8_lossy(&line[..line.len().min(60)]).into_owned();
        return r.fail(
            start,
            format!("was expecting n-gram header {expected} but got \"{shown}\" instead"),
        );
    }
    Ok(())
}

/// A log probability; kenlm's default config rejects positive ones.
fn read_prob(r: &mut Reader<'_>, n: usize) -> ReadResult<f32> {
    let start = r.pos;
    let prob = r.read_float()?;
    if prob > 0.0 {
        return r.fail(
            start,
            format!(
                "positive log probability {prob} in a {n}-gram (kenlm rejects these by default)"
            ),
        );
    }
    Ok(prob)
}

/// Consumes the `\n` after a `\r`.
fn newline_after_cr(r: &mut Reader<'_>) -> ReadResult<()> {
    let at = r.pos;
    match r.get("a newline")? {
        b'\n' => Ok(()),
        c => r.fail(
            at,
            format!(
                "expected newline after carriage return, got {:?}",
                c as char
            ),
        ),
    }
}

/// Optional backoff of a unigram or middle-order n-gram; absent or zero -> -0.0.
fn read_backoff(r: &mut Reader<'_>) -> ReadResult<f32> {
    let at = r.pos;
    match r.get("a tab or newline")? {
        b'\t' => {
            let start = r.pos;
            let mut backoff = r.read_float()?;
            if backoff == 0.0 {
                backoff = -0.0;
            }
            if !backoff.is_finite() {
                return r.fail(start, format!("bad backoff {backoff}"));
            }
            let at = r.pos;
            match r.get("a newline")? {
                b'\r' => newline_after_cr(r)?,
                b'\n' => {}
                c => {
                    return r.fail(
                        at,
                        format!("expected newline after backoff, got {:?}", c as char),
                    );
                }
            }
            Ok(backoff)
        }
        b'\r' => newline_after_cr(r).map(|()| -0.0),
        b'\n' => Ok(-0.0),
        _ => r.fail(at, "expected tab or newline for backoff"),
    }
}

/// Highest-order n-grams have no backoff; kenlm tolerates an explicit zero.
fn read_no_backoff(r: &mut Reader<'_>) -> ReadResult<()> {
    let at = r.pos;
    match r.get("a tab or newline")? {
        b'\t' => {
            let start = r.pos;
            let got = r.read_float()?;
            if got != 0.0 {
                return r.fail(
                    start,
                    format!(
                        "non-zero backoff {got} provided for an n-gram that should have no backoff"
                    ),
                );
            }
            Ok(())
        }
        b'\r' => newline_after_cr(r),
        b'\n' => Ok(()),
        _ => r.fail(at, "expected tab or newline for backoff"),
    }
}

fn read_unigrams(r: &mut Reader<'_>, builder: &mut Builder) -> ReadResult<()> {
    read_header(r, 1)?;
    for _ in 0..builder.counts[0] {
        let prob = read_prob(r, 1)?;
        let at = r.pos;
        if r.get("a tab")? != b'\t' {
            return r.fail(at, "expected tab after probability");
        }
        let id = builder
            .insert_word(r.read_word())
            .or_else(|e| r.fail(at, e))?;
        let backoff = read_backoff(r)?;
        builder.set_unigram(id, ProbBackoff { prob, backoff });
    }
    Ok(())
}

fn read_ngrams(r: &mut Reader<'_>, builder: &mut Builder, n: usize) -> ReadResult<()> {
    read_header(r, n)?;
    let mut ids = [0u32; MAX_ORDER];
    for _ in 0..builder.counts[n - 1] {
        let prob = read_prob(r, n)?;
        let start = r.pos;
        for i in 0..n {
            let word = r.read_word();
            let id = builder.index(word);
            if id == 0 && word != b"<unk>" && word != b"<UNK>" {
                return r.fail(
                    start,
                    format!(
                        "word \"{}\" in a {n}-gram was not seen in the unigrams",
                        String::from_utf8_lossy(word)
                    ),
                );
            }
            ids[n - 1 - i] = id;
        }
        let backoff = if n == builder.order {
            read_no_backoff(r)?;
            0.0
        } else {
            read_backoff(r)?
        };
        builder.add_ngram(&ids[..n], ProbBackoff { prob, backoff }).or_else(|e| {
            let hint = if e.contains("is full") {
                " (too many n-grams whose lower-order suffix was pruned; kenlm fails the same way)"
            } else {
                ""
            };
            r.fail(start, format!("{e}{hint}"))
        })?;
    }
    Ok(())
}

/// `\end\`, followed by nothing but blank lines.
fn read_end(r: &mut Reader<'_>) -> ReadResult<()> {
    let mut start = r.pos;
    let mut line = r.read_line()?;
    while is_blank_line(line) {
        start = r.pos;
        line = r.read_line()?;
    }
    if line != b"\\end\\" {
        let shown = String::from_utf8_lossy(&line[..line.len().min(60)]).into_owned();
        return r.fail(start, format!("expected \\end\\ but found \"{shown}\""));
    }
    while !r.at_end() {
        let start = r.pos;
        let line = r.read_line()?;
        if !is_blank_line(line) {
            return r.fail(start, "trailing non-blank line after \\end\\");
        }
    }
    Ok(())
}
