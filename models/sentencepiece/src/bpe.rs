//! BPE segmentation as sentencepiece's `bpe::Model`: start from characters (user-defined
//! symbols stay whole and frozen), repeatedly merge the adjacent pair whose concatenation
//! is the highest-scoring piece (leftmost on ties), then split UNUSED results back into
//! the pair they were merged from.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::Segment;
use crate::normalizer::one_char_len;
use crate::proto::PieceType;
use crate::vocab::{Vocab, is_segmentable};

/// sentencepiece's `kMaxBpeResegmentDepth`, guarding against hostile merge chains.
const MAX_RESEGMENT_DEPTH: u32 = 100;

#[derive(Clone, Copy)]
struct Symbol {
    prev: i32,
    next: i32,
    start: u32,
    /// Byte length; 0 once merged into its left neighbour.
    len: u32,
    freeze: bool,
}

/// A candidate merge of `left` and `right`; stale once either side has changed, which is
/// detected by the combined length no longer matching `size`.
#[derive(Clone, Copy)]
struct Pair {
    score: f32,
    left: u32,
    right: u32,
    size: u32,
}

impl Ord for Pair {
    // Max-heap order of the C++ comparator: higher score first, then smaller `left`.
    // sentencepiece 0.2.3 compares the scores' IEEE bit patterns as sign-magnitude
    // integers, which is exactly `total_cmp` (so -0.0 < +0.0).
    fn cmp(&self, other: &Self) -> Ordering {
        self.score
            .total_cmp(&other.score)
            .then_with(|| other.left.cmp(&self.left))
    }
}
impl PartialOrd for Pair {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl PartialEq for Pair {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Pair {}

/// How an UNUSED piece was formed: `(piece id, left start, left len, right start, right len)`.
type RevMerge = (u32, u32, u32, u32, u32);

/// Reusable buffers for [`encode`].
#[derive(Default)]
pub(crate) struct Scratch {
    symbols: Vec<Symbol>,
    agenda: BinaryHeap<Pair>,
    rev_merge: Vec<RevMerge>,
}

struct Merger<'a> {
    vocab: &'a Vocab,
    text: &'a [u8],
    s: &'a mut Scratch,
}

impl Merger<'_> {
    fn maybe_add_pair(&mut self, left: i32, right: i32) {
        if left < 0 || right < 0 {
            return;
        }
        let (l, r) = (
            self.s.symbols[left as usize],
            self.s.symbols[right as usize],
        );
        if l.freeze || r.freeze {
            return;
        }
        let size = l.len + r.len;
        let piece = &self.text[l.start as usize..(l.start + size) as usize];
        // Only NORMAL / USER_DEFINED / UNUSED pieces may be formed by merging.
        let Some(id) = self.vocab.lookup.get(piece) else {
            return;
        };
        let id = id as u32;
        if !is_segmentable(self.vocab.kind(id)) {
            return;
        }
        self.s.agenda.push(Pair {
            score: self.vocab.score(id),
            left: left as u32,
            right: right as u32,
            size,
        });
        if self.vocab.kind(id) == PieceType::Unused {
            // Later registrations overwrite earlier ones, as the C++ map assignment does.
            self.s.rev_merge.push((id, l.start, l.len, r.start, r.len));
        }
    }

    fn merge_all(&mut self) {
        while let Some(top) = self.s.agenda.pop() {
            let (l, r) = (top.left as usize, top.right as usize);
            let (left, right) = (self.s.symbols[l], self.s.symbols[r]);
            if left.len == 0 || right.len == 0 || left.len + right.len != top.size {
                continue;
            }
            self.s.symbols[l].len = top.size;
            self.s.symbols[l].next = right.next;
            if right.next >= 0 {
                self.s.symbols[right.next as usize].prev = l as i32;
            }
            self.s.symbols[r].len = 0;
            self.maybe_add_pair(left.prev, l as i32);
            self.maybe_add_pair(l as i32, right.next);
        }
    }

    /// Emits `text[start..start+len]`, splitting UNUSED pieces back into their merge parts.
    /// Anything that is not a segmentable piece comes out as `<unk>`.
    fn resegment(&self, start: u32, len: u32, depth: u32, out: &mut Vec<Segment>) {
        let piece = &self.text[start as usize..(start + len) as usize];
        let id = self.vocab.lookup_or_unk(piece);
        let span = |id| Segment::new(start as usize, (start + len) as usize, id);
        if depth > MAX_RESEGMENT_DEPTH {
            out.push(span(id));
        } else if id == self.vocab.unk_id || !is_segmentable(self.vocab.kind(id)) {
            out.push(span(self.vocab.unk_id));
        } else if self.vocab.kind(id) != PieceType::Unused {
            out.push(span(id));
        } else if let Some(&(_, ls, ll, rs, rl)) = self.s.rev_merge.iter().rev().find(|m| m.0 == id)
        {
            self.resegment(ls, ll, depth + 1, out);
            self.resegment(rs, rl, depth + 1, out);
        } else {
            out.push(span(self.vocab.unk_id));
        }
    }
}

/// Appends the BPE segmentation of `text` (already normalized) to `out`.
pub(crate) fn encode(vocab: &Vocab, text: &[u8], scratch: &mut Scratch, out: &mut Vec<Segment>) {
    if text.is_empty() || text.len() > u32::MAX as usize / 2 {
        return;
    }
    scratch.symbols.clear();
    scratch.agenda.clear();
    scratch.rev_merge.clear();

    let mut pos = 0;
    while pos < text.len() {
        let rest = &text[pos..];
        let (len, freeze) = match vocab.user_symbols.longest(rest) {
            Some(len) => (len, true),
            None => (one_char_len(rest[0]).min(rest.len()), false),
        };
        let index = scratch.symbols.len() as i32;
        scratch.symbols.push(Symbol {
            prev: index - 1,
            next: if pos + len < text.len() {
                index + 1
            } else {
                -1
            },
            start: pos as u32,
            len: len as u32,
            freeze,
        });
        pos += len;
    }

    let mut merger = Merger {
        vocab,
        text,
        s: scratch,
    };
    for i in 1..merger.s.symbols.len() as i32 {
        merger.maybe_add_pair(i - 1, i);
    }
    merger.merge_all();

    let mut index = 0i32;
    while index >= 0 {
        let sym = merger.s.symbols[index as usize];
        merger.resegment(sym.start, sym.len, 0, out);
        index = sym.next;
    }
}
