//! Scoring shared by all data structures: kenlm's `FullScore` (longest-match lookup,
//! backoff charged from the context state, right-state trimming) over any `Search`.

/// Highest n-gram order supported, as in the `kenlm` Python wheel (`KENLM_MAX_ORDER=6`).
pub(crate) const MAX_ORDER: usize = 6;

pub(crate) const SIGN_BIT: u32 = 0x8000_0000;

/// Probability and backoff of one n-gram, log10.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Weights {
    pub prob: f32,
    pub backoff: f32,
}

/// Lookups a data structure provides; `Node` carries the position reached so far.
pub(crate) trait Search {
    type Node: Copy;
    /// Unigram weights, the node for extending leftwards, and whether no longer n-gram
    /// ends in this word (so context need not be consulted).
    fn unigram(&self, data: &[u8], word: u32) -> (Weights, Self::Node, bool);
    /// Extends `node` by context `word` at order `order_minus_2 + 2`.
    fn middle(
        &self,
        data: &[u8],
        order_minus_2: usize,
        word: u32,
        node: &mut Self::Node,
    ) -> Option<(Weights, bool)>;
    /// Probability of the highest-order n-gram `node` extended by `word`.
    fn longest(&self, data: &[u8], word: u32, node: &Self::Node) -> Option<f32>;
    /// A hint that `word` will soon be scored after `context` (most recent first): start
    /// loading what its lookups will read. Changes no result.
    fn prefetch(&self, _data: &[u8], _word: u32, _context: &[u32]) {}
}

/// Asks the CPU to start loading the cache line holding `data[off]` (nothing past the end).
#[inline]
pub(crate) fn prefetch_at(data: &[u8], off: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(byte) = data.get(off) {
        // SAFETY: a prefetch only hints the cache; the address is inside `data`.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                std::ptr::from_ref(byte).cast(),
            )
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (data, off);
}

/// kenlm's right state: the context words (most recent first) that can still matter,
/// with their backoffs.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct State {
    pub words: [u32; MAX_ORDER - 1],
    pub backoff: [f32; MAX_ORDER - 1],
    pub length: usize,
}

/// A backoff of exactly -0.0 marks "no n-gram extends this context" (kenlm's blank.hh);
/// any other value, +0.0 included, keeps the word in the state.
#[inline]
pub(crate) fn has_extension(backoff: f32) -> bool {
    backoff.to_bits() != (-0.0f32).to_bits()
}

/// log10 p(`word` | `state`) as kenlm's `FullScore` computes it in `f32`, writing the
/// successor state to `out`.
#[inline]
pub(crate) fn full_score<S: Search>(
    search: &S,
    data: &[u8],
    order: usize,
    state: &State,
    word: u32,
    out: &mut State,
) -> f32 {
    let (mut prob, ngram_length) = score_except_backoff(search, data, order, state, word, out);
    // Charge the backoffs of the context n-grams longer than the match.
    for &b in &state.backoff[ngram_length - 1..state.length] {
        prob += b;
    }
    prob
}

/// kenlm's `ScoreExceptBackoff` + `ResumeScore`: the longest matching n-gram's
/// probability and its length.
#[inline]
fn score_except_backoff<S: Search>(
    search: &S,
    data: &[u8],
    order: usize,
    state: &State,
    word: u32,
    out: &mut State,
) -> (f32, usize) {
    let (uni, mut node, mut independent_left) = search.unigram(data, word);
    let mut prob = uni.prob;
    let mut ngram_length = 1;
    out.backoff[0] = uni.backoff;
    out.length = usize::from(has_extension(uni.backoff));
    out.words[0] = word;
    let context = &state.words[..state.length];
    if context.is_empty() {
        return (prob, ngram_length);
    }
    let mut next_use = out.length;
    for (i, &ctx) in context.iter().enumerate() {
        if independent_left {
            break;
        }
        if i == order - 2 {
            if let Some(p) = search.longest(data, ctx, &node) {
                prob = p;
                ngram_length = order;
            }
            break;
        }
        let Some((w, independent)) = search.middle(data, i, ctx, &mut node) else {
            break;
        };
        independent_left = independent;
        out.backoff[i + 1] = w.backoff;
        prob = w.prob;
        ngram_length = i + 2;
        if has_extension(w.backoff) {
            next_use = ngram_length;
        }
    }
    out.length = next_use;
    if next_use > 1 {
        out.words[1..next_use].copy_from_slice(&context[..next_use - 1]);
    }
    (prob, ngram_length)
}
