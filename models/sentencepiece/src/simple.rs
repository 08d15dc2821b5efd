//! The CHAR and WORD model types: no search, just a fixed split of the normalized text
//! (characters, or runs starting at each U+2581) looked up in the vocabulary.

use crate::Segment;
use crate::normalizer::{SPACE_SYMBOL, one_char_len};
use crate::proto::PieceType;
use crate::vocab::Vocab;

/// Looks a piece up among NORMAL / USER_DEFINED pieces; UNUSED and missing ones are `<unk>`.
fn piece_id(vocab: &Vocab, piece: &[u8]) -> u32 {
    let id = vocab.lookup_or_unk(piece);
    if id != vocab.unk_id && vocab.kind(id) == PieceType::Unused {
        vocab.unk_id
    } else {
        id
    }
}

/// `character::Model::Encode`: user-defined symbols whole, otherwise one character each.
pub(crate) fn encode_chars(vocab: &Vocab, text: &[u8], out: &mut Vec<Segment>) {
    let mut pos = 0;
    while pos < text.len() {
        let rest = &text[pos..];
        let len = vocab
            .user_symbols
            .longest(rest)
            .unwrap_or_else(|| one_char_len(rest[0]).min(rest.len()));
        out.push(Segment::new(pos, pos + len, piece_id(vocab, &rest[..len])));
        pos += len;
    }
}

/// `word::Model::Encode`, i.e. `SplitIntoWords` with its defaults (whitespace as prefix,
/// no whitespace-only pieces): a new word starts at the beginning and at every U+2581.
pub(crate) fn encode_words(vocab: &Vocab, text: &[u8], out: &mut Vec<Segment>) {
    let mut word_start = 0;
    let mut pos = 0;
    while pos < text.len() {
        let len = one_char_len(text[pos]).min(text.len() - pos);
        if pos > word_start && &text[pos..pos + len] == SPACE_SYMBOL {
            out.push(Segment::new(
                word_start,
                pos,
                piece_id(vocab, &text[word_start..pos]),
            ));
            word_start = pos;
        }
        pos += len;
    }
    if word_start < text.len() {
        out.push(Segment::new(
            word_start,
            text.len(),
            piece_id(vocab, &text[word_start..]),
        ));
    }
}
