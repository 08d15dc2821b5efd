//! Unigram segmentation: sentencepiece's `Model::EncodeOptimized` Viterbi over byte
//! positions, keeping only the best path ending at each position. Scores and tie-breaks
//! follow the C++ arithmetic exactly (see `encode`).

use crate::Segment;
use crate::normalizer::one_char_len;
use crate::vocab::Vocab;

/// sentencepiece's `kUnkPenalty`: an unknown character scores this much below the worst piece.
const UNK_PENALTY: f32 = 10.0;

/// Best path ending at a byte position: 12 bytes, one per byte of text.
#[derive(Clone, Copy)]
pub(crate) struct BestPath {
    score: f32,
    /// Where the last piece starts; [`NOT_REACHED`] while no path reaches this position.
    starts_at: u32,
    id: u32,
}

const NOT_REACHED: u32 = u32::MAX;

const UNREACHED: BestPath = BestPath {
    score: 0.0,
    starts_at: NOT_REACHED,
    id: 0,
};

/// sentencepiece 0.2.3 re-bases path scores once they leave this range (float precision).
const SCORE_RESET_THRESHOLD: f32 = 100_000.0;

/// Appends the segmentation of `text` (already normalized) to `out`.
///
/// Mirrors sentencepiece 0.2.3's `EncodeOptimized`: all arithmetic is `f32`; for each end
/// position the first candidate (by start position, then piece length) wins ties because
/// replacement needs a strictly better score; an unknown-character candidate is only added
/// when no single-character piece starts at a position; and when the running score leaves
/// +-100000 every reached position up to the frontier is re-based on it.
pub(crate) fn encode(vocab: &Vocab, text: &[u8], best: &mut Vec<BestPath>, out: &mut Vec<Segment>) {
    let size = text.len();
    if size == 0 {
        return;
    }
    if size >= NOT_REACHED as usize {
        // Beyond the C++'s own `int` positions (2 GiB); never split, never panic.
        out.push(Segment::new(0, size, vocab.unk_id));
        return;
    }
    best.clear();
    best.resize(size + 1, UNREACHED);
    let unk_score = vocab.min_score - UNK_PENALTY;
    let mut max_frontier = 0usize;

    let mut starts_at = 0;
    while starts_at < size {
        let mut till_here = best[starts_at].score;
        // Written as in the C++ (not `!range.contains`) so that NaN never triggers it.
        #[allow(clippy::manual_range_contains)]
        if till_here < -SCORE_RESET_THRESHOLD || till_here > SCORE_RESET_THRESHOLD {
            if let Some(span) = best.get_mut(starts_at..=max_frontier) {
                for (k, node) in span.iter_mut().enumerate() {
                    if k == 0 || node.starts_at != NOT_REACHED {
                        node.score -= till_here;
                    }
                }
            }
            till_here = 0.0;
        }
        let mblen = one_char_len(text[starts_at]).min(size - starts_at);
        let mut has_single_node = false;
        vocab
            .lookup
            .for_each_prefix(&text[starts_at..], |length, id| {
                let id = id as u32;
                let score = vocab.lattice_score(id);
                if score.is_nan() {
                    return;
                }
                max_frontier = max_frontier.max(starts_at + length);
                let candidate = score + till_here;
                let target = &mut best[starts_at + length];
                if target.starts_at == NOT_REACHED || candidate > target.score {
                    *target = BestPath {
                        score: candidate,
                        starts_at: starts_at as u32,
                        id,
                    };
                }
                has_single_node |= length == mblen;
            });
        if !has_single_node {
            max_frontier = max_frontier.max(starts_at + mblen);
            let candidate = unk_score + till_here;
            let target = &mut best[starts_at + mblen];
            if target.starts_at == NOT_REACHED || candidate > target.score {
                *target = BestPath {
                    score: candidate,
                    starts_at: starts_at as u32,
                    id: vocab.unk_id,
                };
            }
        }
        starts_at += mblen;
    }

    // Backtrack from the end, then put the pieces in text order.
    let first = out.len();
    let mut ends_at = size;
    while ends_at > 0 {
        let node = best[ends_at];
        let start = match node.starts_at as usize {
            start if start < ends_at => start,
            // Unreachable for well-formed UTF-8; degrade to one unknown piece, never panic.
            _ => {
                out.push(Segment::new(0, ends_at, vocab.unk_id));
                break;
            }
        };
        out.push(Segment::new(start, ends_at, node.id));
        ends_at = start;
    }
    out[first..].reverse();
}
