//! SentencePiece pieces shared between the ops of a recipe: Data-Juicer recipes often tokenize the
//! same text with the same model several times (perplexity, word count, word repetition; Data-Juicer
//! shares the pieces only under op fusion). A batch passes through the ops one after the other on
//! one thread, so a small per-thread cache of the latest texts' pieces serves the later ops.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasher;
use std::sync::Arc;

use dj_sentencepiece::Pieces;

use super::SentencePiece;

/// Text and pieces kept per thread, in bytes: a batch passes through the ops one after the
/// other, so one batch is enough (8192 ordinary documents, about 1.6 KB each kept, or 2 MB of
/// input JSON); long documents simply cycle through it. 32 MB was slower on short documents
/// (1.52 against 1.42 s for the C4 recipe on 50K) and 50 MB larger on long ones.
const CACHE_BYTES: usize = 16 << 20;

/// One text and its pieces (cloned, so without spare capacity).
struct Entry {
    hash: u64,
    model: usize,
    text: Box<str>,
    pieces: Pieces,
}

impl Entry {
    fn new(hash: u64, model: usize, text: &str, pieces: &Pieces) -> Entry {
        Entry {
            hash,
            model,
            text: text.into(),
            pieces: pieces.clone(),
        }
    }

    fn bytes(&self) -> usize {
        self.text.len() + self.pieces.joined.len() + 8 * self.pieces.len() + 96
    }
}

#[derive(Default)]
struct Cache {
    /// Hash of (model, text) -> entry id; entry `id` is `entries[id - first_id]`.
    ids: HashMap<u64, u64>,
    entries: VecDeque<Entry>,
    first_id: u64,
    bytes: usize,
}

impl Cache {
    fn get(&self, hash: u64, model: usize, text: &str) -> Option<&Entry> {
        let id = *self.ids.get(&hash)?;
        let e = &self.entries[(id - self.first_id) as usize];
        (e.model == model && *e.text == *text).then_some(e)
    }

    fn insert(&mut self, entry: Entry) {
        self.bytes += entry.bytes();
        let id = self.first_id + self.entries.len() as u64;
        self.ids.insert(entry.hash, id);
        self.entries.push_back(entry);
        while self.bytes > CACHE_BYTES && self.entries.len() > 1 {
            let old = self.entries.pop_front().expect("not empty");
            if self.ids.get(&old.hash) == Some(&self.first_id) {
                self.ids.remove(&old.hash);
            }
            self.first_id += 1;
            self.bytes -= old.bytes();
        }
    }
}

thread_local! {
    static CACHE: RefCell<Cache> = RefCell::new(Cache::default());
    /// The pieces being encoded, reused across texts.
    static ENCODED: RefCell<Pieces> = RefCell::new(Pieces::default());
}

/// Calls `f` with `sp.encode_as_pieces(text)`, reusing the pieces this thread computed for the same
/// text and model recently. `sp` must come from the process's model cache ([`super::sentencepiece`]),
/// whose models are never dropped: the cache tells models apart by address.
pub(crate) fn with_pieces<R>(
    sp: &Arc<SentencePiece>,
    text: &str,
    f: impl FnOnce(&mut dyn Iterator<Item = &str>) -> R,
) -> R {
    with_piece_view(sp, text, |pieces| f(&mut pieces.iter()))
}

/// [`with_pieces`], lending the pieces with their ids.
pub(crate) fn with_piece_view<R>(
    sp: &Arc<SentencePiece>,
    text: &str,
    f: impl FnOnce(&Pieces) -> R,
) -> R {
    // Models are loaded once per process and never dropped (`models::shared`), so an address
    // names one model for the life of the process.
    let model = Arc::as_ptr(sp) as usize;
    let hash = foldhash::fast::FixedState::with_seed(0x5eed).hash_one((model, text));
    CACHE.with(|cell| {
        let Ok(mut cache) = cell.try_borrow_mut() else {
            // Re-entered from `f` (not done by the ops): no sharing.
            let mut pieces = Pieces::default();
            sp.encode_joined(text, &mut pieces);
            return f(&pieces);
        };
        if cache.get(hash, model, text).is_none() {
            let entry = ENCODED.with(|cell| {
                let pieces = &mut *cell.borrow_mut();
                pieces.clear();
                sp.encode_joined(text, pieces);
                let entry = Entry::new(hash, model, text, pieces);
                // A long document's buffers are not kept for the short ones after it.
                if pieces.joined.capacity() > 1 << 20 {
                    *pieces = Pieces::default();
                }
                entry
            });
            cache.insert(entry);
        }
        let entry = cache.get(hash, model, text).expect("just inserted");
        f(&entry.pieces)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(hash: u64, text: &str, pieces: &[&str]) -> Entry {
        let mut joined = Pieces::default();
        for p in pieces {
            joined.joined.push_str(p);
            joined.ends.push(joined.joined.len() as u32);
            joined.ids.push(dj_sentencepiece::NO_PIECE_ID);
        }
        Entry::new(hash, 1, text, &joined)
    }

    #[test]
    fn a_hit_needs_the_same_model_and_text_and_old_entries_go_first() {
        let mut c = Cache::default();
        c.insert(entry(7, "a b", &["\u{2581}a", "", "\u{2581}b"]));
        let got: Vec<&str> = c.get(7, 1, "a b").unwrap().pieces.iter().collect();
        assert_eq!(got, ["\u{2581}a", "", "\u{2581}b"]);
        // Same hash, other text or model: a miss, never another text's pieces.
        assert!(c.get(7, 1, "a c").is_none() && c.get(7, 2, "a b").is_none());
        let big = "x".repeat(CACHE_BYTES);
        c.insert(entry(8, &big, &[]));
        assert!(c.get(7, 1, "a b").is_none(), "evicted");
        assert!(c.get(8, 1, &big).is_some(), "the newest entry stays");
        assert_eq!((c.entries.len(), c.first_id), (1, 1));
    }
}
