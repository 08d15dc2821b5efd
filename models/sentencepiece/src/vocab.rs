//! The vocabulary of a loaded model: per-id score and type, the trie used for piece lookup
//! and the user-defined-symbol matcher. Validation and the lookup tables follow
//! sentencepiece 0.2.3's `ModelInterface::InitializePieces`: unigram, char and word models
//! look up NORMAL / USER_DEFINED / UNUSED pieces only, BPE looks up every piece (and then
//! refuses to produce the reserved ones).

use std::collections::HashSet;

use crate::proto::{ModelProto, ModelType, PieceType};
use crate::trie::DoubleArray;

/// The id sentencepiece calls -1: "no `<unk>` piece" (only legal with byte fallback).
pub(crate) const NO_ID: u32 = u32::MAX;

/// sentencepiece rejects pieces of this many bytes or more (`kMaxPieceSize`).
const MAX_PIECE_BYTES: usize = 8000;

/// Longest-match over the USER_DEFINED pieces (sentencepiece's `PrefixMatcher`).
pub(crate) struct PrefixMatcher {
    trie: Option<DoubleArray>,
}

impl PrefixMatcher {
    /// Whether some user-defined symbol starts with `byte`.
    pub(crate) fn may_start_with(&self, byte: u8) -> bool {
        self.trie
            .as_ref()
            .is_some_and(|t| t.has_key_starting_with(byte))
    }

    /// Length of the longest user-defined symbol at the head of `text`. Like the C++, only
    /// the 64 shortest matches are considered.
    #[inline]
    pub(crate) fn longest(&self, text: &[u8]) -> Option<usize> {
        let trie = self.trie.as_ref()?;
        let (mut best, mut seen) = (None, 0);
        trie.for_each_prefix(text, |len, _| {
            if seen < 64 {
                best = Some(len);
            }
            seen += 1;
        });
        best
    }
}

pub(crate) struct Vocab {
    scores: Vec<f32>,
    /// What a unigram lattice node of each piece scores: the score of a NORMAL piece, the
    /// length bonus of a USER_DEFINED one, NaN for pieces the lattice skips (UNUSED).
    lattice_scores: Vec<f32>,
    kinds: Vec<PieceType>,
    /// Piece -> id for segmentation: segmentable pieces, or every piece for BPE.
    pub(crate) lookup: DoubleArray,
    /// The UNKNOWN piece, or [`NO_ID`].
    pub(crate) unk_id: u32,
    pub(crate) byte_fallback: bool,
    pub(crate) user_symbols: PrefixMatcher,
    /// Minimum score over NORMAL pieces (FLT_MAX when there are none, as in the C++).
    pub(crate) min_score: f32,
    /// No piece can span the start of a ▁: a unigram model without byte fallback whose pieces
    /// hold ▁ only as their first character and that has ▁ itself as a piece (so a ▁ is never
    /// part of an unknown piece, and unknown pieces merged in a row never cross one).
    pub(crate) words_apart: bool,
}

/// `<0x41>`-style byte piece names (uppercase hex only); `None` for anything else.
fn byte_piece_value(piece: &[u8]) -> Option<u8> {
    let hex = piece.strip_prefix(b"<0x")?.strip_suffix(b">")?;
    if hex.len() != 2
        || !hex
            .iter()
            .all(|b| b.is_ascii_digit() || (b'A'..=b'F').contains(b))
    {
        return None;
    }
    u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()
}

/// `GetUserDefinedScore`: `0.1 * (length - 1)` in double, returned as float. User-defined
/// pieces thereby beat any segmentation into normal (log-probability, <= 0) pieces, and
/// longer ones beat shorter ones.
fn user_defined_score(length: usize) -> f32 {
    (0.1 * (length as f64 - 1.0)) as f32
}

pub(crate) fn is_segmentable(kind: PieceType) -> bool {
    matches!(
        kind,
        PieceType::Normal | PieceType::UserDefined | PieceType::Unused
    )
}

impl Vocab {
    pub(crate) fn new(model: &ModelProto, model_type: ModelType) -> Result<Vocab, String> {
        let byte_fallback = model.trainer.byte_fallback;
        let mut kinds: Vec<PieceType> = model.pieces.iter().map(|p| p.kind).collect();
        if byte_fallback {
            // sentencepiece#1308 workaround: a raw "\0" piece next to <0x00> becomes UNUSED.
            for (kind, p) in kinds.iter_mut().zip(&model.pieces) {
                if p.piece == b"\0" {
                    *kind = PieceType::Unused;
                }
            }
        }
        if let Some(id) = model
            .pieces
            .iter()
            .position(|p| p.piece.len() >= MAX_PIECE_BYTES)
        {
            return Err(format!("piece {id} is {MAX_PIECE_BYTES} bytes or longer"));
        }
        // BPE keeps every piece in one table; the others keep reserved pieces apart.
        let one_table = model_type == ModelType::Bpe;
        let (mut seen, mut seen_reserved) = (HashSet::new(), HashSet::new());
        let mut unk_id = NO_ID;
        let mut bytes_found = [false; 256];
        let mut lookup_keys = Vec::new();
        let mut user_keys = Vec::new();

        for (id, (p, &kind)) in model.pieces.iter().zip(&kinds).enumerate() {
            let name = || String::from_utf8_lossy(&p.piece).into_owned();
            if p.piece.is_empty() {
                return Err(format!("piece {id} is empty"));
            }
            if p.piece == b"\0" && kind == PieceType::Unused {
                continue;
            }
            if p.piece.contains(&0) {
                return Err(format!("piece {id} contains a NUL byte"));
            }
            let id_value = i32::try_from(id).map_err(|_| "too many pieces".to_string())?;
            let fresh = if one_table || is_segmentable(kind) {
                lookup_keys.push((p.piece.as_slice(), id_value));
                seen.insert(p.piece.as_slice())
            } else {
                seen_reserved.insert(p.piece.as_slice())
            };
            if !fresh {
                return Err(format!("piece {:?} is defined twice", name()));
            }
            match kind {
                PieceType::UserDefined => user_keys.push((p.piece.as_slice(), id_value)),
                PieceType::Unknown if unk_id != NO_ID => {
                    return Err("more than one UNKNOWN piece".to_string());
                }
                PieceType::Unknown => unk_id = id as u32,
                PieceType::Byte if !byte_fallback => {
                    return Err(format!(
                        "byte piece {:?} is present although byte_fallback is false",
                        name()
                    ));
                }
                PieceType::Byte => match byte_piece_value(&p.piece) {
                    Some(b) => bytes_found[usize::from(b)] = true,
                    None => {
                        return Err(format!("byte piece {:?} is not of the form <0xHH>", name()));
                    }
                },
                _ => {}
            }
        }
        if unk_id == NO_ID && !byte_fallback {
            return Err("no UNKNOWN (<unk>) piece is defined".to_string());
        }
        if byte_fallback && bytes_found.iter().any(|f| !f) {
            return Err(
                "byte_fallback is true but the 256 <0xHH> byte pieces are not all present".into(),
            );
        }
        if model_type == ModelType::Unigram {
            if let Some(id) = model.pieces.iter().position(|p| !p.score.is_finite()) {
                return Err(format!("piece {id} has a NaN or infinite score"));
            }
            if lookup_keys.is_empty() {
                return Err("the unigram model has no normal pieces".to_string());
            }
        }
        let min_score = model
            .pieces
            .iter()
            .zip(&kinds)
            .filter(|(_, k)| **k == PieceType::Normal)
            .fold(f32::MAX, |m, (p, _)| m.min(p.score));

        let lattice_scores = model
            .pieces
            .iter()
            .zip(&kinds)
            .map(|(p, kind)| match kind {
                PieceType::UserDefined => user_defined_score(p.piece.len()),
                PieceType::Unused => f32::NAN,
                _ => p.score,
            })
            .collect();
        const SPACE: &[u8] = "\u{2581}".as_bytes();
        let words_apart = model_type == ModelType::Unigram
            && !byte_fallback
            && lookup_keys.iter().any(|(piece, _)| *piece == SPACE)
            && !(lookup_keys.iter())
                .any(|(piece, _)| piece.len() > 1 && piece[1..].windows(3).any(|w| w == SPACE));
        Ok(Vocab {
            scores: model.pieces.iter().map(|p| p.score).collect(),
            lattice_scores,
            kinds,
            lookup: DoubleArray::build(&lookup_keys),
            unk_id,
            byte_fallback,
            user_symbols: PrefixMatcher {
                trie: (!user_keys.is_empty()).then(|| DoubleArray::build(&user_keys)),
            },
            min_score,
            words_apart,
        })
    }

    pub(crate) fn len(&self) -> usize {
        self.kinds.len()
    }

    /// The unigram lattice score of piece `id` (see `lattice_scores`); NaN: not a node.
    #[inline]
    pub(crate) fn lattice_score(&self, id: u32) -> f32 {
        self.lattice_scores
            .get(id as usize)
            .copied()
            .unwrap_or(f32::NAN)
    }

    #[inline]
    pub(crate) fn score(&self, id: u32) -> f32 {
        self.scores.get(id as usize).copied().unwrap_or(0.0)
    }

    /// Type of `id`; [`NO_ID`] counts as UNKNOWN, as the C++ `IsUnknownId` does.
    #[inline]
    pub(crate) fn kind(&self, id: u32) -> PieceType {
        self.kinds
            .get(id as usize)
            .copied()
            .unwrap_or(PieceType::Unknown)
    }

    /// `PieceToIdNoReserved`: the id in the lookup table, else the `<unk>` id.
    #[inline]
    pub(crate) fn lookup_or_unk(&self, piece: &[u8]) -> u32 {
        self.lookup.get(piece).map_or(self.unk_id, |id| id as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::byte_piece_value;

    #[test]
    fn byte_piece_names() {
        assert_eq!(byte_piece_value(b"<0x00>"), Some(0));
        assert_eq!(byte_piece_value(b"<0xFF>"), Some(255));
        assert_eq!(byte_piece_value(b"<0xff>"), None);
        assert_eq!(byte_piece_value(b"<0x1>"), None);
        assert_eq!(byte_piece_value(b"0x41"), None);
    }
}
