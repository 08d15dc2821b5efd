//! Text normalization before segmentation, as sentencepiece's `Normalizer::Normalize`:
//! user-defined symbols pass through untouched, everything else goes through the
//! precompiled charsmap (longest rule wins), then whitespace is trimmed/squeezed, escaped
//! to U+2581 and a dummy prefix (or suffix) space is added.

use crate::charsmap::CharsMap;
use crate::proto::NormalizerSpec;
use crate::vocab::PrefixMatcher;

/// U+2581 LOWER ONE EIGHTH BLOCK, sentencepiece's visible space.
pub(crate) const SPACE_SYMBOL: &[u8] = "\u{2581}".as_bytes();

pub(crate) struct Normalizer {
    charsmap: Option<CharsMap>,
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
    escape_whitespaces: bool,
    treat_whitespace_as_suffix: bool,
}

/// Byte length of the UTF-8 sequence a lead byte starts (1 for stray continuation bytes),
/// sentencepiece's `OneCharLen`.
#[inline]
pub(crate) fn one_char_len(lead: u8) -> usize {
    const LEN: [u8; 16] = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4];
    usize::from(LEN[usize::from(lead >> 4)])
}

impl Normalizer {
    pub(crate) fn new(
        spec: &NormalizerSpec,
        treat_whitespace_as_suffix: bool,
    ) -> Result<Normalizer, &'static str> {
        let charsmap = if spec.precompiled_charsmap.is_empty() {
            None
        } else {
            Some(CharsMap::decode(&spec.precompiled_charsmap)?)
        };
        Ok(Normalizer {
            charsmap,
            add_dummy_prefix: spec.add_dummy_prefix,
            remove_extra_whitespaces: spec.remove_extra_whitespaces,
            escape_whitespaces: spec.escape_whitespaces,
            treat_whitespace_as_suffix,
        })
    }

    /// Normalizes the head of `input`: `(normalized text, bytes consumed)`.
    #[inline]
    fn normalize_prefix<'a>(&'a self, input: &'a [u8], user: &PrefixMatcher) -> (&'a [u8], usize) {
        if let Some(len) = user.longest(input) {
            return (&input[..len], len);
        }
        if let Some(map) = &self.charsmap
            && let Some((len, replacement)) = map.longest_prefix(input)
        {
            return (replacement, len);
        }
        // Input comes from a `&str`, so it is well-formed UTF-8 and the character is kept.
        let len = one_char_len(input[0]).min(input.len());
        (&input[..len], len)
    }

    fn push_space(&self, out: &mut Vec<u8>) {
        if self.escape_whitespaces {
            out.extend_from_slice(SPACE_SYMBOL);
        } else {
            out.push(b' ');
        }
    }

    /// Writes the normalized form of `input` into `out` (cleared first).
    pub(crate) fn normalize(&self, mut input: &[u8], user: &PrefixMatcher, out: &mut Vec<u8>) {
        out.clear();
        if self.remove_extra_whitespaces {
            // Leading characters that normalize to exactly one space are dropped.
            while !input.is_empty() {
                let (piece, consumed) = self.normalize_prefix(input, user);
                if piece != b" " {
                    break;
                }
                input = &input[consumed..];
            }
        }
        if input.is_empty() {
            return;
        }
        if !self.treat_whitespace_as_suffix && self.add_dummy_prefix {
            self.push_space(out);
        }

        let mut is_prev_space = self.remove_extra_whitespaces;
        while !input.is_empty() {
            let (mut piece, consumed) = self.normalize_prefix(input, user);
            if is_prev_space {
                while let [b' ', rest @ ..] = piece {
                    piece = rest;
                }
            }
            if let Some(&last) = piece.last() {
                for &byte in piece {
                    if byte == b' ' && self.escape_whitespaces {
                        out.extend_from_slice(SPACE_SYMBOL);
                    } else {
                        out.push(byte);
                    }
                }
                is_prev_space = last == b' ';
            }
            input = &input[consumed..];
            if !self.remove_extra_whitespaces {
                is_prev_space = false;
            }
        }

        if self.remove_extra_whitespaces {
            let space: &[u8] = if self.escape_whitespaces {
                SPACE_SYMBOL
            } else {
                b" "
            };
            while out.ends_with(space) {
                out.truncate(out.len() - space.len());
            }
        }
        if self.treat_whitespace_as_suffix && self.add_dummy_prefix {
            self.push_space(out);
        }
    }
}
