//! Word ids for `word_repetition_filter`: every word numbered in order of first appearance, so
//! that word n-grams are counted as packed ids. Words of up to 15 bytes are u128 keys of a
//! per-thread table (no string hashing or comparison); the refined words of a text are keyed in
//! one pass over its lower-cased copy, without collecting them as strings, and numbered in a
//! second pass that prefetches the table.

use std::cell::RefCell;

use foldhash::HashMap;

use crate::filter::gram_count::{MAX_KEPT, Table};
use crate::py::str_lower::push_py_lower;
use crate::text::{special_characters, words_from_document};

/// Words longer than this are interned by their text.
const MAX_PACKED_WORD: usize = 15;

/// A word of 1 to [`MAX_PACKED_WORD`] bytes as a u128, losslessly: its bytes little-endian in the
/// low 15 bytes (zero beyond the word) and its length in the top byte.
#[inline]
fn packed_word(w: &[u8]) -> u128 {
    debug_assert!((1..=MAX_PACKED_WORD).contains(&w.len()));
    let mut buf = [0u8; 16];
    buf[..w.len()].copy_from_slice(w);
    buf[15] = w.len() as u8;
    u128::from_le_bytes(buf)
}

/// [`packed_word`] of `bytes[start..start + len]`, as one 16-byte load and a mask where the
/// bytes allow it.
#[inline(always)]
fn packed_word_at(bytes: &[u8], start: usize, len: usize) -> u128 {
    debug_assert!((1..=MAX_PACKED_WORD).contains(&len) && start + len <= bytes.len());
    let Some(chunk) = bytes.get(start..start + 16) else {
        return packed_word(&bytes[start..start + len]);
    };
    let loaded = u128::from_le_bytes(chunk.try_into().expect("16 bytes"));
    (loaded & (u128::MAX >> (8 * (16 - len)))) | (len as u128) << 120
}

/// The key of the word that `long_id` numbers among a text's words longer than
/// [`MAX_PACKED_WORD`]: its top bit is set, which a packed word's length byte never sets.
#[inline]
fn long_word_key(long_id: u32) -> u128 {
    1 << 127 | u128::from(long_id)
}

#[derive(Default)]
struct WordInterner {
    table: Table,
    /// The key of each word of the text, in order.
    keys: Vec<u128>,
    /// The lower-cased text whose words are keyed.
    lower: String,
    ids: Vec<u32>,
}

thread_local! {
    static INTERNER: RefCell<WordInterner> = RefCell::new(WordInterner::default());
}

/// Keys the words of one text; `long` numbers the words longer than [`MAX_PACKED_WORD`]. Its
/// keys are collected first and numbered in one pass, which prefetches the table ahead of the
/// lookups (looking each word up as it is split leaves every cache miss on the critical path).
struct Numbering<'w, 'a> {
    interner: &'w mut WordInterner,
    long: HashMap<&'a str, u32>,
}

impl<'w, 'a> Numbering<'w, 'a> {
    fn new(interner: &'w mut WordInterner) -> Self {
        interner.keys.clear();
        interner.ids.clear();
        Numbering {
            interner,
            long: HashMap::default(),
        }
    }

    #[inline(always)]
    fn push_packed(&mut self, key: u128) {
        self.interner.keys.push(key);
    }

    fn push_long(&mut self, word: &'a str) {
        let next = self.long.len() as u32;
        let long_id = *self.long.entry(word).or_insert(next);
        self.interner.keys.push(long_word_key(long_id));
    }

    fn push(&mut self, word: &'a str) {
        if word.len() <= MAX_PACKED_WORD {
            self.push_packed(packed_word(word.as_bytes()));
        } else {
            self.push_long(word);
        }
    }

    /// Numbers the words, calls `f` with their ids and the largest id, and drops buffers a long
    /// text grew.
    fn finish<R>(self, expected_distinct: usize, f: impl FnOnce(&[u32], u32) -> R) -> R {
        let c = self.interner;
        let max_id = c.table.intern(&c.keys, expected_distinct, &mut c.ids);
        let r = f(&c.ids, max_id);
        c.table.release_large();
        if c.ids.capacity() > MAX_KEPT {
            c.ids = Vec::new();
            c.keys = Vec::new();
        }
        r
    }
}

/// Calls `f` with the id of every word (1 for the first distinct word, 2 for the next, ...) and
/// the largest id.
pub(crate) fn with_word_ids<R>(words: &[&str], f: impl FnOnce(&[u32], u32) -> R) -> R {
    INTERNER.with(|c| {
        let mut c = c.borrow_mut();
        let mut numbering = Numbering::new(&mut c);
        for w in words {
            numbering.push(w);
        }
        numbering.finish(words.len(), f)
    })
}

/// [`with_word_ids`] over the refined words of `text`: split on ASCII space, `\n` and `\t`,
/// lower-cased (Python `str.lower()`), `SPECIAL_CHARACTERS` stripped from both ends, empty words
/// dropped. The whole text is lower-cased once (the same words, see
/// `words::with_refined_words`).
pub(crate) fn with_refined_word_ids<R>(text: &str, f: impl FnOnce(&[u32], u32) -> R) -> R {
    let set = special_characters();
    INTERNER.with(|c| {
        let mut c = c.borrow_mut();
        // The lower-cased copy lives in a buffer kept between texts (no fresh pages per text);
        // it is taken out while the numbering borrows its words.
        let mut lower = std::mem::take(&mut c.lower);
        lower.clear();
        push_py_lower(text, &mut lower);
        let bytes = lower.as_bytes();
        let mut numbering = Numbering::new(&mut c);
        for word in words_from_document(&lower) {
            let word = set.trim(word);
            if word.is_empty() {
                continue;
            }
            if word.len() <= MAX_PACKED_WORD {
                let start = word.as_ptr() as usize - lower.as_ptr() as usize;
                numbering.push_packed(packed_word_at(bytes, start, word.len()));
            } else {
                numbering.push_long(word);
            }
        }
        // The table doubles as distinct words come: start it small, for a text's vocabulary.
        let r = numbering.finish((bytes.len() / 16).min(1 << 16), f);
        if lower.capacity() <= MAX_KEPT * 16 {
            c.lower = lower;
        }
        r
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::words::refined_words;

    /// Packed words are equal exactly when the words are, for every length and overlap, and a
    /// word packs the same from a slice and from a load in a longer text.
    #[test]
    fn packed_words_are_lossless() {
        let mut words: Vec<Vec<u8>> = Vec::new();
        for len in 1..=MAX_PACKED_WORD {
            for fill in [b'a', b'b'] {
                words.push(vec![fill; len]);
                for i in 0..len {
                    let mut w = vec![fill; len];
                    w[i] = b'z';
                    words.push(w);
                }
            }
        }
        words.push("é".as_bytes().to_vec());
        words.push(vec![0]);
        words.push(vec![0, 0]);
        let keys: Vec<u128> = words.iter().map(|w| packed_word(w)).collect();
        for (i, a) in words.iter().enumerate() {
            for (j, b) in words.iter().enumerate() {
                assert_eq!(a == b, keys[i] == keys[j], "{a:?} {b:?}");
            }
            for pad in [0, 1, 15, 16, 40] {
                let mut text = b"xyz".to_vec();
                text.extend_from_slice(a);
                text.extend(std::iter::repeat_n(b'q', pad));
                assert_eq!(packed_word_at(&text, 3, a.len()), keys[i], "{a:?} {pad}");
            }
        }
    }

    /// Ids are in order of first appearance, short and long words alike.
    #[test]
    fn word_ids_in_order_of_appearance() {
        let long = "a-very-long-word-indeed";
        let words = ["the", "cat", long, "the", "sat", long, "cat", "x", "x"];
        let (ids, max) = with_word_ids(&words, |ids, max| (ids.to_vec(), max));
        assert_eq!(ids, [1, 2, 3, 1, 4, 3, 2, 5, 5]);
        assert_eq!(max, 5);
        let (ids, max) = with_word_ids(&["b", "a", "b"], |ids, max| (ids.to_vec(), max));
        assert_eq!((ids, max), (vec![1, 2, 1], 2));
    }

    /// The one-pass numbering of a text's refined words gives the ids of the collected refined
    /// words: special characters at either end, non-ASCII ends, words that strip to nothing, words
    /// of every length around the packed limit, at the very end of the text, and enough distinct
    /// words for the table to double twice.
    #[test]
    fn refined_word_ids_equal_ids_of_refined_words() {
        // Digits are special characters: "w17" refines to "w", so numbered words collapse.
        let vocabulary: String = (0..3000)
            .map(|i| format!("w{} ", i * 7919 % 2999))
            .collect();
        // 5,000 distinct words in 25 KB: the table starts at 4,096 slots and doubles twice.
        let letters = |i: usize| -> String {
            [i / 676, i / 26 % 26, i % 26]
                .map(|d| char::from(b'a' + d as u8))
                .iter()
                .collect()
        };
        let distinct: String = (0..5000).map(|i| format!("k{} ", letters(i))).collect();
        let texts = [
            "".to_string(),
            "...  !!! --".to_string(),
            "The, (QUICK) brown\tfox!\n... 42 ΣΑΣ the quick «brown» fox".to_string(),
            "“quoted” words’ and ‘more’ — dashes —like— this".to_string(),
            "abcdefghijklmno abcdefghijklmnop ABCDEFGHIJKLMNO. (abcdefghijklmnop) x".to_string(),
            "İSTANBUL ǅ ß ﬃ Straße STRASSE straße".to_string(),
            vocabulary.clone() + &vocabulary.to_uppercase() + "(end)",
            distinct.clone() + &distinct.to_uppercase(),
            "tail-at-end-15c".to_string(),
            "a".to_string(),
        ];
        for text in &texts {
            let refined = refined_words(text);
            let refined: Vec<&str> = refined.iter().map(|w| w.as_ref()).collect();
            let want = with_word_ids(&refined, |ids, max| (ids.to_vec(), max));
            let got = with_refined_word_ids(text, |ids, max| (ids.to_vec(), max));
            assert_eq!(got, want, "{text:?}");
        }
    }
}
