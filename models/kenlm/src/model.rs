//! The public `Model`: opens ARPA or binary files, owns the bytes (memory map or heap)
//! and scores sentences exactly as the `kenlm` Python module's `Model.score`.

use std::cell::RefCell;
use std::path::Path;

use crate::arpa;
use crate::binary::{self, Layout, Structure, header};
use crate::error::KenlmError;
use crate::search::{MAX_ORDER, Search, State, full_score};

/// The model bytes: a binary file mapped in place, or an ARPA file built in memory.
enum Backing {
    Mmap(memmap2::Mmap),
    Heap(Vec<u8>),
}

impl Backing {
    fn bytes(&self) -> &[u8] {
        match self {
            Backing::Mmap(m) => m,
            Backing::Heap(v) => v,
        }
    }
}

/// A loaded KenLM n-gram language model.
pub struct Model {
    backing: Backing,
    layout: Layout,
    begin_sentence: State,
    end_sentence: u32,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.layout.structure {
            Structure::Probing(_) => "probing",
            Structure::Trie(_) => "trie",
        };
        f.debug_struct("Model")
            .field("order", &self.layout.order)
            .field("structure", &kind)
            .finish()
    }
}

impl Model {
    /// Opens ARPA text or a KenLM binary file (detected by content, as kenlm does);
    /// binaries are memory-mapped and read in place.
    pub fn open(path: &Path) -> Result<Model, KenlmError> {
        let io = |source| KenlmError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        let map = if len == 0 {
            None
        } else {
            // SAFETY: the map is read-only; like kenlm, we require that model files are
            // not modified while loaded. All reads are bounds-checked.
            Some(unsafe { memmap2::Mmap::map(&file) }.map_err(io)?)
        };
        let data: &[u8] = map.as_deref().unwrap_or(&[]);
        let binary_err = |message| KenlmError::Binary {
            path: path.to_path_buf(),
            message,
        };
        let (backing, layout) = if header::detect(data).map_err(binary_err)? {
            let layout = binary::load(data).map_err(binary_err)?;
            (
                Backing::Mmap(map.expect("binary files are non-empty")),
                layout,
            )
        } else {
            let (bytes, counts) = arpa::load(data).map_err(|e| KenlmError::Arpa {
                path: path.to_path_buf(),
                line: line_of(data, e.at),
                message: e.message,
            })?;
            let layout = binary::probing_from_arpa(&bytes, counts).map_err(binary_err)?;
            (Backing::Heap(bytes), layout)
        };
        Ok(Model::new(backing, layout))
    }

    fn new(backing: Backing, layout: Layout) -> Model {
        let data = backing.bytes();
        let bos = layout.vocab.index(data, b"<s>");
        let end_sentence = layout.vocab.index(data, b"</s>");
        let backoff = match &layout.structure {
            Structure::Probing(s) => s.unigram(data, bos).0.backoff,
            Structure::Trie(s) => s.unigram(data, bos).0.backoff,
        };
        // kenlm's BeginSentenceState always keeps <s>, whatever its backoff.
        let mut begin_sentence = State {
            length: 1,
            ..State::default()
        };
        begin_sentence.words[0] = bos;
        begin_sentence.backoff[0] = backoff;
        Model {
            backing,
            layout,
            begin_sentence,
            end_sentence,
        }
    }

    /// The n-gram order.
    pub fn order(&self) -> usize {
        self.layout.order
    }

    /// Exactly kenlm Python's `Model.score(sentence, bos, eos)`: log10 probability of
    /// the whitespace-separated words (plus `</s>` if `eos`, conditioned on `<s>` if
    /// `bos`), summed in `f32`.
    pub fn score(&self, sentence: &str, bos: bool, eos: bool) -> f32 {
        match &self.layout.structure {
            Structure::Probing(s) => self.score_words(s, sentence.as_bytes(), bos, eos),
            Structure::Trie(s) => self.score_words(s, sentence.as_bytes(), bos, eos),
        }
    }

    /// The vocabulary id of `word` (0, `<unk>`, when the model does not have it): what
    /// [`Self::score`] looks each word up as. Callers that score the same words many times
    /// look them up once and score with [`Self::score_ids`].
    pub fn index(&self, word: &[u8]) -> u32 {
        self.layout.vocab.index(self.backing.bytes(), word)
    }

    /// [`Self::score`] of the sentence whose words have the vocabulary ids `ids` (from
    /// [`Self::index`]): the same sum in the same order, without splitting and hashing words.
    pub fn score_ids(&self, ids: &[u32], bos: bool, eos: bool) -> f32 {
        match &self.layout.structure {
            Structure::Probing(s) => self.score_with(s, ids, bos, eos),
            Structure::Trie(s) => self.score_with(s, ids, bos, eos),
        }
    }

    fn score_words<S: Search>(&self, search: &S, sentence: &[u8], bos: bool, eos: bool) -> f32 {
        thread_local! {
            static IDS: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
        }
        let data = self.backing.bytes();
        let ids = words(sentence, bos && eos).map(|word| self.layout.vocab.index(data, word));
        IDS.with(|cell| match cell.try_borrow_mut() {
            Ok(mut buffer) => {
                buffer.clear();
                buffer.extend(ids);
                let total = self.score_with(search, &buffer, bos, eos);
                if buffer.capacity() > 1 << 20 {
                    *buffer = Vec::new();
                }
                total
            }
            Err(_) => self.score_with(search, &ids.collect::<Vec<_>>(), bos, eos),
        })
    }

    fn score_with<S: Search>(&self, search: &S, ids: &[u32], bos: bool, eos: bool) -> f32 {
        /// How many words ahead the next lookups are prefetched: enough for their cache
        /// misses to overlap the current word's.
        const AHEAD: usize = 2;
        let data = self.backing.bytes();
        let order = self.layout.order;
        let mut state = if bos {
            self.begin_sentence
        } else {
            State::default()
        };
        let mut next = State::default();
        let mut total = 0.0f32;
        let mut context = [0u32; MAX_ORDER - 1];
        for (t, &id) in ids.iter().enumerate() {
            if let Some(&ahead) = ids.get(t + AHEAD) {
                // The words before it, most recent first (a superset of what its state keeps).
                let n = (t + AHEAD).min(order - 1);
                for (k, slot) in context[..n].iter_mut().enumerate() {
                    *slot = ids[t + AHEAD - 1 - k];
                }
                search.prefetch(data, ahead, &context[..n]);
            }
            total += full_score(search, data, order, &state, id, &mut next);
            std::mem::swap(&mut state, &mut next);
        }
        if eos {
            total += full_score(search, data, order, &state, self.end_sentence, &mut next);
        }
        total
    }
}

/// Splits as the Python module does. Both paths split on ASCII whitespace; both hand
/// C strings to kenlm, so a NUL ends the whole sentence when `bos && eos` (the
/// `ScoreSentence` path) and otherwise ends just the word it is in.
fn words(sentence: &[u8], whole_sentence_c_string: bool) -> impl Iterator<Item = &[u8]> {
    let sentence = if whole_sentence_c_string {
        sentence.split(|&b| b == 0).next().unwrap_or(&[])
    } else {
        sentence
    };
    sentence
        .split(|&b| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c))
        .filter(|w| !w.is_empty())
        .map(|w| w.split(|&b| b == 0).next().unwrap_or(&[]))
}

/// 1-based line number of byte `at`.
fn line_of(data: &[u8], at: usize) -> usize {
    data[..at.min(data.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}
