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
    /// ASCII bytes no rule and no user-defined symbol starts with: each is its own
    /// normalized form, so runs of them are copied without a trie walk per character.
    plain: [bool; 128],
    /// ASCII bytes that are their own normalized form when the next byte is ASCII (or there is
    /// none): no user-defined symbol starts with them, and the rules that do are the byte
    /// itself (mapped to itself) or go on with non-ASCII bytes. nmt_nfkc's letters are such
    /// (their rules add combining marks), so words are copied as runs too.
    plain_before_ascii: [bool; 128],
    /// Whether the CPU has the vector path's features (AVX-512 F, BW and VBMI).
    vector: bool,
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
            plain: [false; 128],
            plain_before_ascii: [false; 128],
            vector: has_avx512_vbmi(),
        })
    }

    /// Finds the ASCII bytes that normalize to themselves, given the model's user-defined
    /// symbols (which [`Self::normalize`] is then always called with).
    pub(crate) fn note_user_symbols(&mut self, user: &PrefixMatcher) {
        for b in 0..128u8 {
            let user_symbol = user.may_start_with(b);
            self.plain[usize::from(b)] =
                !user_symbol && !self.charsmap.as_ref().is_some_and(|m| m.may_start_with(b));
            self.plain_before_ascii[usize::from(b)] = !user_symbol
                && self.charsmap.as_ref().is_none_or(|m| {
                    m.longest_prefix(&[b])
                        .is_none_or(|(_, replacement)| replacement == [b])
                        && (0..128u8).all(|next| !m.has_prefix(&[b, next]))
                });
        }
    }

    /// The length of the run of plain characters other than the space at `pos` of `input`:
    /// bytes that normalize to themselves (see [`Self::plain`] and
    /// [`Self::plain_before_ascii`]). `blocks` keeps the vector path's last 64-byte block.
    #[inline]
    fn plain_run(&self, input: &[u8], pos: usize, blocks: &mut PlainBlock) -> usize {
        let mut at = pos;
        #[cfg(target_arch = "x86_64")]
        if self.vector {
            loop {
                if !(blocks.start <= at && at < blocks.start + 64) {
                    if at + 65 > input.len() {
                        break;
                    }
                    // SAFETY: the CPU has the features (checked when the normalizer was made),
                    // and 65 bytes from `at` are in `input`.
                    blocks.plain = unsafe { self.plain_block_avx512(input, at) };
                    blocks.start = at;
                }
                let offset = at - blocks.start;
                let run = (!(blocks.plain >> offset)).trailing_zeros() as usize;
                if run < 64 - offset {
                    return at + run - pos;
                }
                at += 64 - offset;
            }
        }
        let rest = &input[at..];
        at - pos
            + rest
                .iter()
                .enumerate()
                .take_while(|&(i, &b)| {
                    b != b' '
                        && b < 0x80
                        && (self.plain[usize::from(b)]
                            || (self.plain_before_ascii[usize::from(b)]
                                && rest.get(i + 1).is_none_or(|&next| next < 0x80)))
                })
                .count()
    }

    /// Bit `i` set when byte `at + i` of `input` belongs to a plain run (see
    /// [`Self::plain_run`]); a byte's successor decides whether it is plain.
    ///
    /// # Safety
    ///
    /// The CPU has AVX-512 F, BW and VBMI; `input` has 65 bytes from `at`.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
    unsafe fn plain_block_avx512(&self, input: &[u8], at: usize) -> u64 {
        use std::arch::x86_64::*;
        debug_assert!(at + 65 <= input.len());
        // SAFETY: each table is 128 one-byte bools (0 or 1), two 64-byte loads; 65 bytes from
        // `at` are in `input`.
        let (plain_lo, plain_hi, before_lo, before_hi, v, next) = unsafe {
            (
                _mm512_loadu_si512(self.plain.as_ptr().cast()),
                _mm512_loadu_si512(self.plain.as_ptr().add(64).cast()),
                _mm512_loadu_si512(self.plain_before_ascii.as_ptr().cast()),
                _mm512_loadu_si512(self.plain_before_ascii.as_ptr().add(64).cast()),
                _mm512_loadu_si512(input.as_ptr().add(at).cast()),
                _mm512_loadu_si512(input.as_ptr().add(at + 1).cast()),
            )
        };
        // The tables are indexed by a byte's low 7 bits; non-ASCII bytes are masked out.
        let ascii = !_mm512_movepi8_mask(v);
        let next_ascii = !_mm512_movepi8_mask(next);
        let lookup = |lo, hi| {
            let found = _mm512_permutex2var_epi8(lo, v, hi);
            _mm512_test_epi8_mask(found, found)
        };
        let (plain, before) = (lookup(plain_lo, plain_hi), lookup(before_lo, before_hi));
        let not_space = !_mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b' ' as i8));
        ascii & not_space & (plain | (before & next_ascii))
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
        let whole = input;
        let mut blocks = PlainBlock {
            start: usize::MAX / 2,
            plain: 0,
        };
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
            // A run of plain characters other than the space: copied as they are.
            let run = self.plain_run(whole, whole.len() - input.len(), &mut blocks);
            if run > 0 {
                copy_run(out, input, run);
                input = &input[run..];
                is_prev_space = false;
                continue;
            }
            // A plain space (one a word ends with): what the general path below does with its
            // normalized form, a single space.
            if input[0] == b' ' && self.plain[usize::from(b' ')] {
                if !is_prev_space {
                    self.push_space(out);
                    is_prev_space = true;
                }
                input = &input[1..];
                if !self.remove_extra_whitespaces {
                    is_prev_space = false;
                }
                continue;
            }
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

/// Appends `input[..run]` to `out`. A run (usually a word) at the start of 64 bytes or more is
/// copied as one fixed 64-byte block, its excess written past the end and dropped: vector moves
/// instead of a `memcpy` call per word.
#[inline(always)]
fn copy_run(out: &mut Vec<u8>, input: &[u8], run: usize) {
    if run <= 64 && input.len() >= 64 {
        out.reserve(64);
        let len = out.len();
        // SAFETY: `input` has 64 readable bytes and `out` room for 64 more; of those, the first
        // `run` (all written) are kept.
        unsafe {
            std::ptr::copy_nonoverlapping(input.as_ptr(), out.as_mut_ptr().add(len), 64);
            out.set_len(len + run);
        }
    } else {
        out.extend_from_slice(&input[..run]);
    }
}

/// The plain bytes of the 64 from `start` (see [`Normalizer::plain_run`]).
struct PlainBlock {
    start: usize,
    plain: u64,
}

/// Whether the CPU runs [`Normalizer::plain_run`]'s vector path.
fn has_avx512_vbmi() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vbmi")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

#[cfg(test)]
mod tests {
    /// The plain-run shortcut gives exactly the character-by-character normalization.
    #[test]
    fn plain_runs_normalize_as_each_character_does() {
        let texts = [
            "  Hello,  world!\tTabs\nand\r\nlines  ",
            "ASCII only: a-b_c (d) [e] {f} 1.5e3 ~`'\"",
            "Mixed ｆｕｌｌｗｉｄｔｈ and café, naïve  \u{3000} ideographic space",
            "\u{0} nul \u{7f} del \u{1b}[0m escapes",
            "",
            "   ",
            "a  b   c \u{3000} d\u{a0} e\t f \n",
            " x, y . z ! ",
            "cafe\u{301} nai\u{308}ve A\u{30a}ngstro\u{308}m ﬁne ｅ e\u{301}e",
            "e",
            "ab\u{301}",
        ]
        .map(String::from);
        // Long texts, for the vector path: every offset of each text against the 64-byte blocks.
        let long: Vec<String> = texts
            .iter()
            .flat_map(|t| (0..70).map(move |pad| "w".repeat(pad) + &t.repeat(5) + " end"))
            .collect();
        let (mut plain_space, mut plain_letters) = (false, false);
        for (path, bytes) in crate::fixture_models() {
            let sp = crate::SentencePiece::from_bytes(&bytes).unwrap();
            let mut reference = crate::SentencePiece::from_bytes(&bytes).unwrap();
            reference.normalizer.plain = [false; 128];
            reference.normalizer.plain_before_ascii = [false; 128];
            assert!(
                sp.normalizer.plain.iter().any(|&p| p),
                "{}: no plain bytes",
                path.display()
            );
            plain_space |= sp.normalizer.plain[usize::from(b' ')];
            plain_letters |= sp.normalizer.plain_before_ascii[usize::from(b'e')]
                && !sp.normalizer.plain[usize::from(b'e')];
            for text in texts.iter().chain(&long) {
                assert_eq!(
                    sp.encode_as_pieces(text),
                    reference.encode_as_pieces(text),
                    "{}: {text:?}",
                    path.display()
                );
            }
        }
        assert!(plain_space, "no model takes the plain-space path");
        assert!(plain_letters, "no model copies letters only before ASCII");
    }
}
