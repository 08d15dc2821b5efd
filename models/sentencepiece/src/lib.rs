//! SentencePiece models (`.model`: unigram, BPE, word and char): loading, normalization and
//! `encode_as_pieces`, exactly as the `sentencepiece` Python module computes it. Data-Juicer's
//! tokenized word filters and `perplexity_filter` use it.
//!
//! Pipeline: `proto` decodes the `ModelProto`, `vocab` indexes the pieces, `normalizer`
//! (with `charsmap`) rewrites the text, a segmenter (`unigram`, `bpe`, `simple`) splits
//! it, and [`SentencePiece::encode_into`] turns segments into pieces the way
//! `SentencePieceProcessor::EncodeOptimized` does (unknown runs merged, or expanded to
//! `<0xHH>` byte pieces under byte fallback).
//!
//! The reference is sentencepiece 0.2.3, the current PyPI release. Older releases differ in
//! rare cases: they scored unigram candidates in double precision (other tie-breaks), gave
//! user-defined symbols a different bonus, did not re-base long unigram paths, and looked
//! up reserved (control) pieces in BPE, char and word models.

mod bpe;
mod charsmap;
mod normalizer;
mod proto;
mod simple;
mod trie;
mod unigram;
mod vocab;

use std::cell::RefCell;
use std::path::Path;

use normalizer::Normalizer;
use proto::{ModelType, PieceType};
use vocab::Vocab;

/// Why a model could not be loaded. `model` names the file (or `<bytes>` for
/// [`SentencePiece::from_bytes`]).
#[derive(Debug, thiserror::Error)]
pub enum SentencePieceError {
    #[error("cannot read SentencePiece model {model}: {source}")]
    Io {
        model: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{model} is not a SentencePiece model (truncated, or not a ModelProto protobuf): {what} at byte {offset}"
    )]
    NotAModel {
        model: String,
        offset: usize,
        what: String,
    },
    #[error(
        "{model}: unsupported SentencePiece model_type {model_type} (known: 1 UNIGRAM, 2 BPE, 3 WORD, 4 CHAR)"
    )]
    UnsupportedModelType { model: String, model_type: u64 },
    #[error("{model}: invalid SentencePiece model: {reason}")]
    InvalidModel { model: String, reason: String },
}

/// A piece boundary in the normalized text plus the vocabulary id it maps to.
#[derive(Clone, Copy)]
pub(crate) struct Segment {
    start: usize,
    end: usize,
    id: u32,
}

impl Segment {
    #[inline]
    pub(crate) fn new(start: usize, end: usize, id: u32) -> Segment {
        Segment { start, end, id }
    }
}

/// Per-thread buffers so that encoding allocates only the returned pieces.
#[derive(Default)]
struct Scratch {
    normalized: Vec<u8>,
    segments: Vec<Segment>,
    best: Vec<unigram::BestPath>,
    bpe: bpe::Scratch,
}

impl Scratch {
    /// Drops buffers a huge document left behind so idle threads do not pin memory.
    fn trim(&mut self) {
        const KEEP: usize = 1 << 20;
        if self.normalized.capacity() > KEEP * 4 {
            *self = Scratch::default();
        } else if self.best.capacity() > KEEP || self.segments.capacity() > KEEP {
            self.best = Vec::new();
            self.segments = Vec::new();
            self.bpe = bpe::Scratch::default();
        }
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// A loaded SentencePiece model. Immutable, `Send + Sync`; encoding never panics.
pub struct SentencePiece {
    model_type: ModelType,
    vocab: Vocab,
    normalizer: Normalizer,
    normalizer_name: String,
}

impl std::fmt::Debug for SentencePiece {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SentencePiece")
            .field("normalizer", &self.normalizer_name)
            .finish_non_exhaustive()
    }
}

impl SentencePiece {
    /// Loads a `.model` file (a serialized `sentencepiece.ModelProto`).
    pub fn open(path: &Path) -> Result<SentencePiece, SentencePieceError> {
        let name = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|source| SentencePieceError::Io {
            model: name.clone(),
            source,
        })?;
        Self::load(&bytes, name)
    }

    /// Loads a model from the bytes of a `.model` file.
    pub fn from_bytes(bytes: &[u8]) -> Result<SentencePiece, SentencePieceError> {
        Self::load(bytes, "<bytes>".to_string())
    }

    fn load(bytes: &[u8], model: String) -> Result<SentencePiece, SentencePieceError> {
        let not_a_model = |offset, what: &str| SentencePieceError::NotAModel {
            model: model.clone(),
            offset,
            what: what.to_string(),
        };
        if bytes.is_empty() {
            return Err(not_a_model(0, "the file is empty"));
        }
        let proto = proto::parse_model(bytes).map_err(|e| not_a_model(e.offset, e.what))?;
        if proto.pieces.is_empty() {
            return Err(not_a_model(bytes.len(), "it has no vocabulary pieces"));
        }
        if let Some(model_type) = proto.trainer.unknown_model_type {
            return Err(SentencePieceError::UnsupportedModelType { model, model_type });
        }
        let invalid = |reason: String| SentencePieceError::InvalidModel {
            model: model.clone(),
            reason,
        };
        let vocab = Vocab::new(&proto, proto.trainer.model_type).map_err(invalid)?;
        let mut normalizer =
            Normalizer::new(&proto.normalizer, proto.trainer.treat_whitespace_as_suffix)
                .map_err(|e| invalid(format!("normalizer: {e}")))?;
        normalizer.note_user_symbols(&vocab.user_symbols);
        Ok(SentencePiece {
            model_type: proto.trainer.model_type,
            vocab,
            normalizer,
            normalizer_name: proto.normalizer.name,
        })
    }

    /// The number of vocabulary pieces: ids run from 0 to this, exclusive.
    pub fn piece_count(&self) -> usize {
        self.vocab.len()
    }

    /// The normalization rule the model was trained with (`nmt_nfkc`, `identity`, ...).
    pub fn normalizer_name(&self) -> &str {
        &self.normalizer_name
    }

    /// Exactly Python `sentencepiece.SentencePieceProcessor(model_file=..).encode_as_pieces(text)`.
    pub fn encode_as_pieces(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.encode_into(text, &mut out);
        out
    }

    /// Same as [`Self::encode_as_pieces`], appending into a caller-owned buffer.
    pub fn encode_into(&self, text: &str, out: &mut Vec<String>) {
        let mut pieces = Pieces::default();
        self.encode_joined(text, &mut pieces);
        out.extend(pieces.iter().map(str::to_string));
    }

    /// How many words of the normalized `text` hold a character `counts` accepts, or `None` when
    /// this model's pieces may span two words. A word runs from the start of a ▁ (U+2581) to the
    /// next one (the first from the start of the text). Every piece of
    /// [`Self::encode_as_pieces`] then lies within one word, so a caller can bound what the pieces
    /// hold from the words, for the cost of the normalization alone. `counts` is asked about each
    /// word's characters up to the first it accepts.
    pub fn count_words(&self, text: &str, counts: impl Fn(char) -> bool) -> Option<usize> {
        self.with_normalized(text, |normalized| {
            // The ▁s are found in one vector scan; a word is then read only up to the first
            // character `counts` accepts, usually its first or second.
            let b = normalized.as_bytes();
            let word_ends = memchr::memmem::find_iter(b, "\u{2581}".as_bytes())
                .filter(|&at| at > 0)
                .chain([b.len()]);
            let (mut words, mut start) = (0, 0);
            for end in word_ends {
                words += usize::from(normalized[start..end].chars().any(&counts));
                start = end;
            }
            words
        })
    }

    /// Calls `f` with `text` normalized when no piece of this model can span two words.
    fn with_normalized<R>(&self, text: &str, f: impl FnOnce(&str) -> R) -> Option<R> {
        if !self.vocab.words_apart {
            return None;
        }
        let normalize = |scratch: &mut Scratch| {
            self.normalizer.normalize(
                text.as_bytes(),
                &self.vocab.user_symbols,
                &mut scratch.normalized,
            );
            let r = simdutf8::basic::from_utf8(&scratch.normalized).ok().map(f);
            scratch.trim();
            r
        };
        let mut normalize = Some(normalize);
        let mut run = |scratch: &mut Scratch| normalize.take().and_then(|n| n(scratch));
        match SCRATCH.try_with(|cell| cell.try_borrow_mut().ok().map(|mut s| run(&mut s))) {
            Ok(Some(r)) => r,
            _ => run(&mut Scratch::default()),
        }
    }

    /// The pieces of [`Self::encode_as_pieces`], appended to `out` as one string and their
    /// ends: no allocation per piece, which for long documents was a fifth of the encoding.
    pub fn encode_joined(&self, text: &str, out: &mut Pieces) {
        let done = SCRATCH.try_with(|cell| match cell.try_borrow_mut() {
            Ok(mut scratch) => {
                self.encode_with(text, &mut scratch, out);
                scratch.trim();
            }
            Err(_) => self.encode_with(text, &mut Scratch::default(), out),
        });
        // Only during thread teardown is the thread-local gone.
        if done.is_err() {
            self.encode_with(text, &mut Scratch::default(), out);
        }
    }

    fn encode_with(&self, text: &str, scratch: &mut Scratch, out: &mut Pieces) {
        let Scratch {
            normalized,
            segments,
            best,
            bpe: bpe_scratch,
        } = scratch;
        self.normalizer
            .normalize(text.as_bytes(), &self.vocab.user_symbols, normalized);
        segments.clear();
        match self.model_type {
            ModelType::Unigram => unigram::encode(&self.vocab, normalized, best, segments),
            ModelType::Bpe => bpe::encode(&self.vocab, normalized, bpe_scratch, segments),
            ModelType::Word => simple::encode_words(&self.vocab, normalized, segments),
            ModelType::Char => simple::encode_chars(&self.vocab, normalized, segments),
        }
        self.emit_pieces(normalized, segments, out);
    }

    /// The piece loop of sentencepiece's `SentencePieceProcessor::EncodeOptimized`:
    /// consecutive unknown pieces are merged into one, or, with byte fallback, each unknown
    /// piece becomes one `<0xHH>` piece per UTF-8 byte.
    fn emit_pieces(&self, text: &[u8], segments: &[Segment], out: &mut Pieces) {
        // Python decodes each piece from UTF-8 with replacement; the normalized text is valid
        // UTF-8 as a whole (checked once) and pieces end on character boundaries, so slices
        // of it are those strings, without a decode per piece.
        let valid = simdutf8::basic::from_utf8(text).ok();
        if let Some(valid) = valid
            && !self.vocab.byte_fallback
            && tiles(valid, segments)
        {
            self.emit_tiling(valid, segments, out);
        } else {
            self.emit_each(text, valid, segments, out);
        }
    }

    /// [`Self::emit_pieces`] piece by piece, for any segments (`valid`: `text`, if UTF-8).
    fn emit_each(&self, text: &[u8], valid: Option<&str>, segments: &[Segment], out: &mut Pieces) {
        let piece_text = |start: usize, end: usize| -> std::borrow::Cow<'_, str> {
            match valid {
                Some(t) if t.is_char_boundary(start) && t.is_char_boundary(end) => {
                    std::borrow::Cow::Borrowed(&t[start..end])
                }
                _ => String::from_utf8_lossy(text.get(start..end).unwrap_or_default()),
            }
        };
        let mut prev_unknown = false;
        for seg in segments {
            let (start, end) = if seg.start <= seg.end && seg.end <= text.len() {
                (seg.start, seg.end)
            } else {
                (0, 0)
            };
            let kind = self.vocab.kind(seg.id);
            if kind == PieceType::Control {
                out.push(&piece_text(start, end), NO_PIECE_ID);
                prev_unknown = false;
                continue;
            }
            let unknown = kind == PieceType::Unknown;
            if unknown && self.vocab.byte_fallback {
                for b in &text[start..end] {
                    out.push(&format!("<0x{b:02X}>"), NO_PIECE_ID);
                }
            } else if unknown && prev_unknown && !out.is_empty() {
                out.extend_last(&piece_text(start, end));
            } else {
                let piece = piece_text(start, end);
                // Only a vocabulary piece's own bytes carry its id.
                let id = match (&piece, kind) {
                    (std::borrow::Cow::Borrowed(_), PieceType::Normal | PieceType::UserDefined) => {
                        seg.id
                    }
                    _ => NO_PIECE_ID,
                };
                out.push(&piece, id);
            }
            prev_unknown = unknown;
        }
    }

    /// [`Self::emit_pieces`] for segments that tile `text` (see [`tiles`]) without byte
    /// fallback: every piece is its slice of `text`, so the text is copied once and only the
    /// piece ends and ids are worked out piece by piece.
    fn emit_tiling(&self, text: &str, segments: &[Segment], out: &mut Pieces) {
        let base = out.joined.len() as u32;
        out.joined.push_str(text);
        let mut prev_unknown = false;
        for seg in segments {
            let end = base + seg.end as u32;
            let kind = self.vocab.kind(seg.id);
            let unknown = kind == PieceType::Unknown;
            if unknown && prev_unknown && !out.ends.is_empty() {
                // Merged into the unknown piece before it, as `Pieces::extend_last` does.
                *out.ends.last_mut().expect("not empty") = end;
                *out.ids.last_mut().expect("one id per piece") = NO_PIECE_ID;
            } else {
                let id = match kind {
                    PieceType::Normal | PieceType::UserDefined => seg.id,
                    _ => NO_PIECE_ID,
                };
                out.ends.push(end);
                out.ids.push(id);
            }
            prev_unknown = unknown;
        }
    }
}

/// Whether `segments` cover `text` from its start to its end, one after the other, each starting
/// and ending on a character boundary: then the pieces, joined, are `text` itself.
fn tiles(text: &str, segments: &[Segment]) -> bool {
    let mut at = 0;
    for seg in segments {
        if seg.start != at || seg.end < seg.start || !text.is_char_boundary(seg.end) {
            return false;
        }
        at = seg.end;
    }
    at == text.len()
}

/// The id of a piece that is not one vocabulary piece's text (an unknown run, a byte piece).
pub const NO_PIECE_ID: u32 = u32::MAX;

/// Pieces as one string and where each ends: what [`SentencePiece::encode_joined`] fills.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Pieces {
    /// The pieces, concatenated.
    pub joined: String,
    /// The byte offset in `joined` where each piece ends.
    pub ends: Vec<u32>,
    /// Each piece's vocabulary id where the piece is exactly that vocabulary piece's text
    /// (the same id always comes with the same text), else [`NO_PIECE_ID`]: lets a caller
    /// memoize per-piece work by id.
    pub ids: Vec<u32>,
}

impl Pieces {
    pub fn clear(&mut self) {
        self.joined.clear();
        self.ends.clear();
        self.ids.clear();
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    fn push(&mut self, piece: &str, id: u32) {
        self.joined.push_str(piece);
        self.ends.push(self.joined.len() as u32);
        self.ids.push(id);
    }

    fn extend_last(&mut self, more: &str) {
        self.joined.push_str(more);
        if let Some(last) = self.ends.last_mut() {
            *last = self.joined.len() as u32;
        }
        if let Some(last) = self.ids.last_mut() {
            *last = NO_PIECE_ID;
        }
    }

    /// Each piece, in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(self.ends.iter())
            .map(|(a, &b)| &self.joined[a as usize..b as usize])
    }
}

/// Every model in `tests/fixtures`, as its path and its bytes, for the unit tests.
#[cfg(test)]
pub(crate) fn fixture_models() -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut models: Vec<_> = (std::fs::read_dir(dir).unwrap())
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "model"))
        .map(|path| {
            let bytes = std::fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect();
    assert!(!models.is_empty(), "no fixture models");
    models.sort();
    models
}

#[cfg(test)]
impl SentencePiece {
    /// Calls `f` with each word of the normalized `text` (see [`Self::count_words`]) and returns
    /// true, when no piece of this model can span two words; false otherwise. Tests check the
    /// pieces against it.
    fn for_each_word(&self, text: &str, mut f: impl FnMut(&str)) -> bool {
        self.with_normalized(text, |normalized| {
            let mut start = 0;
            while start < normalized.len() {
                let end = next_word(normalized, start);
                f(&normalized[start..end]);
                start = end;
            }
        })
        .is_some()
    }
}

#[cfg(test)]
/// Where the word of `text` starting at `start` ends: at the next ▁ after its first character.
fn next_word(text: &str, start: usize) -> usize {
    let first = text[start..].chars().next().map_or(0, char::len_utf8);
    text[start + first..]
        .find('\u{2581}')
        .map_or(text.len(), |at| start + first + at)
}

#[cfg(test)]
mod tests {
    use super::{Pieces, Scratch, SentencePiece, fixture_models, tiles};

    /// Where a model says its pieces never span two words, no piece does: the words joined are
    /// the pieces joined, and every start of a word is the start of a piece.
    #[test]
    fn pieces_stay_within_words() {
        let texts = [
            "Hello, world!  The quick brown fox's 42 jumps.\nNew line\tand tab",
            "user symbols: <sep> [MASK] @@ C++ hello world <ctrl>",
            "unknown \u{1F600}\u{1F601} runs \u{10FFFF} and \u{2603}\u{2603} snow",
            "混合 text with 中文字符 and ｆｕｌｌｗｉｄｔｈ \u{2581}\u{2581}x\u{2581}",
            "",
            "   ",
        ];
        let (mut apart, mut not) = (0, 0);
        for (path, bytes) in fixture_models() {
            let sp = SentencePiece::from_bytes(&bytes).unwrap();
            for text in texts {
                let mut words = Vec::new();
                if !sp.for_each_word(text, |w| words.push(w.to_string())) {
                    assert_eq!(sp.count_words(text, |_| true), None);
                    not += 1;
                    continue;
                }
                apart += 1;
                assert_eq!(sp.count_words(text, |_| true), Some(words.len()));
                let with_x = words.iter().filter(|w| w.contains('x')).count();
                assert_eq!(sp.count_words(text, |c| c == 'x'), Some(with_x));
                let pieces = sp.encode_as_pieces(text);
                assert_eq!(
                    words.concat(),
                    pieces.concat(),
                    "{} {text:?}",
                    path.display()
                );
                let ends = |parts: &[String]| {
                    (parts.iter())
                        .scan(0, |end, p| {
                            *end += p.len();
                            Some(*end)
                        })
                        .collect::<Vec<_>>()
                };
                let piece_ends = ends(&pieces);
                for end in ends(&words) {
                    assert!(piece_ends.contains(&end), "{} {text:?}", path.display());
                }
            }
        }
        assert!(apart >= 12 && not >= 12, "{apart} apart, {not} not");
    }

    /// Copying the text once gives the pieces and ids that copying piece by piece gives, with
    /// unknown characters (merged runs) and control pieces among them.
    #[test]
    fn tiling_pieces_are_the_pieces_one_by_one() {
        let texts = [
            "Hello, world! The quick brown fox.",
            "user symbols: <sep> [MASK] @@ C++ hello world <ctrl>",
            "unknown \u{1F600}\u{1F601} runs \u{10FFFF} and \u{2603}\u{2603}\u{2603} snow",
            "混合 text with 中文字符 and ｆｕｌｌｗｉｄｔｈ",
            "",
            "   ",
        ];
        let mut tiled = 0;
        for (path, bytes) in fixture_models() {
            let sp = SentencePiece::from_bytes(&bytes).unwrap();
            for text in texts {
                let mut scratch = Scratch::default();
                let mut fast = Pieces::default();
                sp.encode_with(text, &mut scratch, &mut fast);
                let normalized = std::str::from_utf8(&scratch.normalized).unwrap();
                let mut slow = Pieces::default();
                sp.emit_each(
                    normalized.as_bytes(),
                    Some(normalized),
                    &scratch.segments,
                    &mut slow,
                );
                assert_eq!(fast, slow, "{}: {text:?}", path.display());
                tiled +=
                    usize::from(!sp.vocab.byte_fallback && tiles(normalized, &scratch.segments));
            }
        }
        assert!(tiled > 10, "the tiling path ran {tiled} times");
    }

    #[test]
    fn is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<SentencePiece>();
    }
}
