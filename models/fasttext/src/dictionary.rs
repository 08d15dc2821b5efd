//! The model's vocabulary (fastText's `Dictionary`): words and labels with their counts, the
//! open-addressing word table keyed by fastText's FNV-1a hash, the n-gram prune map of
//! quantized models, and the turning of one line of text into input-matrix rows.

use std::collections::HashMap;

use crate::FastTextError;
use crate::args::Args;
use crate::io::Reader;

/// The end-of-sentence token fastText appends for the newline ending every predicted line.
pub(crate) const EOS: &[u8] = b"</s>";
/// Tokens starting with this are labels; fastText's default, which the file does not store.
const LABEL_PREFIX: &[u8] = b"__label__";
/// Word n-gram hashes are combined with this multiplier (fastText's `addWordNgrams`).
const WORD_NGRAM_MUL: u64 = 116_049_371;
/// Above this many buckets the prune map is a hash map rather than a dense table.
const DENSE_PRUNE_LIMIT: i32 = 1 << 23;

/// fastText's FNV-1a: each byte is sign-extended (`int8_t`) before the xor, a quirk every
/// released model depends on.
#[inline]
pub(crate) fn fnv_hash(bytes: &[u8]) -> u32 {
    bytes.iter().fold(2_166_136_261u32, |h, &b| fnv_step(h, b))
}

#[inline]
fn fnv_step(h: u32, b: u8) -> u32 {
    (h ^ (b as i8 as i32 as u32)).wrapping_mul(16_777_619)
}

#[inline]
fn is_utf8_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// fastText's token separators (`Dictionary::readWord`); everything else, including Unicode
/// spaces, is part of a word.
#[inline]
fn is_separator(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t' | 0x0B | 0x0C | 0)
}

/// Maps a hashed n-gram bucket to its row in a pruned (quantized with cutoff) input matrix.
enum PruneMap {
    /// Not pruned: bucket `b` is row `nwords + b`.
    None,
    /// Pruned to nothing: n-grams are dropped.
    Empty,
    /// Dense table indexed by bucket, -1 where dropped.
    Dense(Vec<i32>),
    Sparse(HashMap<i32, i32>),
}

pub(crate) struct Dictionary {
    /// All entry strings back to back; entry `i` is `arena[offsets[i]..offsets[i + 1]]`.
    arena: Vec<u8>,
    offsets: Vec<usize>,
    nwords: i32,
    /// fastText's `word2int_`: linear-probing table of entry ids, -1 for empty slots.
    table: Vec<i32>,
    label_counts: Vec<i64>,
    prune: PruneMap,
    bucket: u32,
    minn: i32,
    maxn: i32,
    word_ngrams: i32,
}

/// Per-call buffers for tokenization, reused across calls.
#[derive(Default)]
pub(crate) struct TokenScratch {
    pub rows: Vec<i32>,
    hashes: Vec<i32>,
    wrapped: Vec<u8>,
    seen: SeenTokens,
}

/// The tokens of the current line already turned into rows: a word repeated in a long
/// document costs a lookup here instead of the dictionary probe and its char n-grams again.
/// A token's rows depend on the token alone, so this changes nothing in the result.
#[derive(Default)]
struct SeenTokens {
    /// Open addressing on the token's FNV hash: entry index + 1, 0 when empty.
    slots: Vec<u32>,
    entries: Vec<SeenToken>,
    /// Each entry's rows, back to back.
    rows: Vec<i32>,
}

/// The first slot tried for a token whose FNV hash is `h` (its low bits alone cluster).
fn home_slot(h: u32, mask: usize) -> usize {
    (h.wrapping_mul(0x9E37_79B9) >> 7) as usize & mask
}

#[derive(Clone, Copy)]
struct SeenToken {
    /// Where the token is in the line.
    start: u32,
    len: u32,
    rows_start: u32,
    rows_end: u32,
    hash: u32,
    /// A label: it adds nothing.
    label: bool,
}

impl SeenTokens {
    /// Empties the table, sized for a line of `len` bytes.
    fn reset(&mut self, len: usize) {
        let want = (len / 4 + 16).next_power_of_two();
        self.slots.clear();
        self.slots.resize(want, 0);
        self.entries.clear();
        self.rows.clear();
    }

    /// The slot of `token` (hash `h`) in `line`: its entry, or the empty slot for it.
    fn find(&self, line: &[u8], token: &[u8], h: u32) -> (usize, Option<SeenToken>) {
        let mask = self.slots.len() - 1;
        let mut slot = home_slot(h, mask);
        loop {
            match self.slots[slot] {
                0 => return (slot, None),
                i => {
                    let e = self.entries[i as usize - 1];
                    if e.hash == h && &line[e.start as usize..(e.start + e.len) as usize] == token {
                        return (slot, Some(e));
                    }
                }
            }
            slot = (slot + 1) & mask;
        }
    }

    fn insert(&mut self, slot: usize, entry: SeenToken) {
        self.entries.push(entry);
        self.slots[slot] = self.entries.len() as u32;
        if self.entries.len() * 2 > self.slots.len() {
            let mut bigger = vec![0u32; self.slots.len() * 2];
            let mask = bigger.len() - 1;
            for (i, e) in self.entries.iter().enumerate() {
                let mut slot = home_slot(e.hash, mask);
                while bigger[slot] != 0 {
                    slot = (slot + 1) & mask;
                }
                bigger[slot] = i as u32 + 1;
            }
            self.slots = bigger;
        }
    }
}

impl Dictionary {
    /// Reads `Dictionary::save`'s layout and checks what prediction relies on.
    pub(crate) fn read(r: &mut Reader<'_>, args: &Args) -> Result<Dictionary, FastTextError> {
        let size = r.i32("dictionary size")?;
        let nwords = r.i32("dictionary nwords")?;
        let nlabels = r.i32("dictionary nlabels")?;
        let _ntokens = r.i64("dictionary ntokens")?;
        let prune_size = r.i64("dictionary pruneidx_size")?;
        if size < 0 || nwords < 0 || nlabels < 0 || nwords as i64 + nlabels as i64 != size as i64 {
            return Err(r.invalid(format!(
                "dictionary has size {size} but {nwords} words and {nlabels} labels"
            )));
        }
        if nlabels == 0 {
            return Err(r.unsupported("dictionary has no labels (not a classifier)"));
        }
        // Each entry takes at least 10 bytes (NUL, count, type): refuse absurd sizes early.
        if size as usize > r.remaining() / 10 {
            return Err(r.truncated("dictionary entries", size as usize * 10));
        }
        let mut arena = Vec::new();
        let mut offsets = Vec::with_capacity(size as usize + 1);
        offsets.push(0);
        let mut label_counts = Vec::with_capacity(nlabels as usize);
        for i in 0..size {
            let word = r.cstr(&format!("dictionary entry {i} string"))?;
            let count = r.i64(&format!("dictionary entry {i} count"))?;
            let kind = r.u8(&format!("dictionary entry {i} type"))?;
            let expected = u8::from(i >= nwords);
            if kind != expected {
                return Err(r.invalid(format!(
                    "dictionary entry {i} has type {kind}, expected {expected} ({nwords} words come before the labels)"
                )));
            }
            if kind == 1 {
                label_counts.push(count);
            }
            arena.extend_from_slice(word);
            offsets.push(arena.len());
        }
        let prune = read_prune_map(r, prune_size, args.bucket)?;
        let mut dict = Dictionary {
            arena,
            offsets,
            nwords,
            table: Vec::new(),
            label_counts,
            prune,
            bucket: args.bucket as u32,
            minn: args.minn,
            maxn: args.maxn,
            word_ngrams: args.word_ngrams,
        };
        dict.build_table();
        Ok(dict)
    }

    /// fastText sizes its table `ceil(size / 0.7)` and inserts in entry order, so a lookup
    /// probes exactly as the C++ does.
    fn build_table(&mut self) {
        let size = self.offsets.len() - 1;
        let len = (size as f64 / 0.7).ceil() as usize;
        self.table = vec![-1; len.max(1)];
        for i in 0..size {
            let word = self.entry(i as i32);
            let slot = self.find_slot(word, fnv_hash(word));
            self.table[slot] = i as i32;
        }
    }

    fn entry(&self, id: i32) -> &[u8] {
        let i = id as usize;
        &self.arena[self.offsets[i]..self.offsets[i + 1]]
    }

    fn find_slot(&self, word: &[u8], h: u32) -> usize {
        let len = self.table.len();
        let mut slot = (h as usize) % len;
        while self.table[slot] != -1 && self.entry(self.table[slot]) != word {
            slot = (slot + 1) % len;
        }
        slot
    }

    pub(crate) fn nlabels(&self) -> usize {
        self.label_counts.len()
    }

    pub(crate) fn label_counts(&self) -> &[i64] {
        &self.label_counts
    }

    pub(crate) fn label(&self, i: usize) -> &[u8] {
        self.entry(self.nwords + i as i32)
    }

    /// Whether the file carries a prune map (`pruneidx_size >= 0`): only quantized models do.
    pub(crate) fn is_pruned(&self) -> bool {
        !matches!(self.prune, PruneMap::None)
    }

    /// Largest input row tokenization can produce plus one, to check against the matrix.
    pub(crate) fn rows_needed(&self) -> u64 {
        let hashed = match &self.prune {
            PruneMap::None if self.maxn > 0 || self.word_ngrams > 1 => self.bucket as u64,
            PruneMap::None | PruneMap::Empty => 0,
            PruneMap::Dense(t) => t.iter().map(|&v| v as i64 + 1).max().unwrap_or(0) as u64,
            PruneMap::Sparse(m) => m.values().map(|&v| v as i64 + 1).max().unwrap_or(0) as u64,
        };
        self.nwords as u64 + hashed
    }

    /// Turns one line into input rows exactly as `Dictionary::getLine` does for Python's
    /// `predict` (which appends a newline): whitespace-separated tokens, then `</s>`; a token
    /// equal to `</s>` ends the line. Text after a `'\n'` is ignored, like the C++ reader.
    pub(crate) fn line_to_rows(&self, text: &[u8], s: &mut TokenScratch) {
        s.rows.clear();
        s.hashes.clear();
        let line = match text.iter().position(|&b| b == b'\n') {
            Some(end) => &text[..end],
            None => text,
        };
        let mut ended = false;
        s.seen.reset(line.len());
        for token in line.split(|&b| is_separator(b)).filter(|t| !t.is_empty()) {
            self.add_seen_token(line, token, s);
            if token == EOS {
                ended = true;
                break;
            }
        }
        if !ended {
            self.add_token(EOS, s);
        }
        self.add_word_ngrams(s);
    }

    /// [`Self::add_token`] for `token`, a slice of `line`, remembering its rows for the
    /// line's later occurrences.
    fn add_seen_token(&self, line: &[u8], token: &[u8], s: &mut TokenScratch) {
        let h = fnv_hash(token);
        let (slot, seen) = s.seen.find(line, token, h);
        if let Some(e) = seen {
            if !e.label {
                let rows = &s.seen.rows[e.rows_start as usize..e.rows_end as usize];
                s.rows.extend_from_slice(rows);
                s.hashes.push(e.hash as i32);
            }
            return;
        }
        let (rows_before, hashes_before) = (s.rows.len(), s.hashes.len());
        self.add_token_hashed(token, h, s);
        let rows_start = s.seen.rows.len() as u32;
        s.seen.rows.extend_from_slice(&s.rows[rows_before..]);
        let entry = SeenToken {
            start: (token.as_ptr() as usize - line.as_ptr() as usize) as u32,
            len: token.len() as u32,
            rows_start,
            rows_end: s.seen.rows.len() as u32,
            hash: h,
            label: s.hashes.len() == hashes_before,
        };
        s.seen.insert(slot, entry);
    }

    fn add_token(&self, token: &[u8], s: &mut TokenScratch) {
        self.add_token_hashed(token, fnv_hash(token), s);
    }

    fn add_token_hashed(&self, token: &[u8], h: u32, s: &mut TokenScratch) {
        let wid = self.table[self.find_slot(token, h)];
        let is_label = if wid < 0 {
            token.starts_with(LABEL_PREFIX)
        } else {
            wid >= self.nwords
        };
        if is_label {
            return;
        }
        // `Dictionary::addSubwords`: a known word is its own row, plus its char n-grams when
        // the model has them; an unknown word is only its n-grams; `</s>` has none.
        if wid >= 0 {
            s.rows.push(wid);
        }
        if token != EOS && (wid < 0 || self.maxn > 0) {
            s.wrapped.clear();
            s.wrapped.push(b'<');
            s.wrapped.extend_from_slice(token);
            s.wrapped.push(b'>');
            self.push_subwords(&s.wrapped, &mut s.rows);
        }
        s.hashes.push(h as i32);
    }

    /// `Dictionary::computeSubwords`: every run of `minn..=maxn` UTF-8 characters of
    /// `<word>`, except the lone `<` and `>`. The hash grows one byte at a time, which gives
    /// the same value as hashing each n-gram string.
    fn push_subwords(&self, word: &[u8], rows: &mut Vec<i32>) {
        let len = word.len();
        for i in 0..len {
            if is_utf8_continuation(word[i]) {
                continue;
            }
            let mut h = 2_166_136_261u32;
            let mut j = i;
            let mut n = 1;
            while j < len && n <= self.maxn {
                h = fnv_step(h, word[j]);
                j += 1;
                while j < len && is_utf8_continuation(word[j]) {
                    h = fnv_step(h, word[j]);
                    j += 1;
                }
                if n >= self.minn && !(n == 1 && (i == 0 || j == len)) {
                    self.push_hashed(rows, (h % self.bucket) as i32);
                }
                n += 1;
            }
        }
    }

    /// `Dictionary::addWordNgrams`: the int32 word hashes are sign-extended to 64 bits.
    fn add_word_ngrams(&self, s: &mut TokenScratch) {
        let n = self.word_ngrams as i64;
        let hashes = &s.hashes;
        for i in 0..hashes.len() {
            let mut h = hashes[i] as i64 as u64;
            let mut j = i + 1;
            while j < hashes.len() && (j as i64) < i as i64 + n {
                h = h
                    .wrapping_mul(WORD_NGRAM_MUL)
                    .wrapping_add(hashes[j] as i64 as u64);
                self.push_hashed(&mut s.rows, (h % self.bucket as u64) as i32);
                j += 1;
            }
        }
    }

    /// `Dictionary::pushHash`: bucket to input row, through the prune map if there is one.
    #[inline]
    fn push_hashed(&self, rows: &mut Vec<i32>, id: i32) {
        let mapped = match &self.prune {
            PruneMap::None => id,
            PruneMap::Empty => return,
            PruneMap::Dense(t) => match t.get(id as usize) {
                Some(&v) if v >= 0 => v,
                _ => return,
            },
            PruneMap::Sparse(m) => match m.get(&id) {
                Some(&v) => v,
                None => return,
            },
        };
        rows.push(self.nwords + mapped);
    }
}

fn read_prune_map(r: &mut Reader<'_>, size: i64, bucket: i32) -> Result<PruneMap, FastTextError> {
    if size < 0 {
        return Ok(PruneMap::None);
    }
    if size == 0 {
        return Ok(PruneMap::Empty);
    }
    if size as u64 > (r.remaining() / 8) as u64 {
        return Err(r.truncated("dictionary pruneidx", (size as usize).saturating_mul(8)));
    }
    let mut pairs = Vec::with_capacity(size as usize);
    for i in 0..size {
        let from = r.i32(&format!("dictionary pruneidx pair {i}"))?;
        let to = r.i32(&format!("dictionary pruneidx pair {i}"))?;
        if to < 0 {
            return Err(r.invalid(format!("pruneidx pair {i} maps to row {to}")));
        }
        pairs.push((from, to));
    }
    // Later pairs win, as with fastText's `pruneidx_[first] = second`. Keys outside
    // [0, bucket) can never be looked up.
    if bucket <= DENSE_PRUNE_LIMIT {
        let mut table = vec![-1; bucket as usize];
        for (from, to) in pairs {
            if from >= 0 && from < bucket {
                table[from as usize] = to;
            }
        }
        Ok(PruneMap::Dense(table))
    } else {
        Ok(PruneMap::Sparse(pairs.into_iter().collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_sign_extends_bytes() {
        assert_eq!(fnv_hash(b""), 2_166_136_261);
        // "a" is plain FNV-1a.
        assert_eq!(fnv_hash(b"a"), 0xe40c292c);
        // A byte >= 0x80 is xored as 0xFFFFFFxx, unlike standard FNV-1a (0x0ac0d9d9 here).
        let std_fnv = (2_166_136_261u32 ^ 0xC3).wrapping_mul(16_777_619);
        assert_ne!(fnv_hash(&[0xC3]), std_fnv);
        assert_eq!(
            fnv_hash(&[0xC3]),
            (2_166_136_261u32 ^ 0xFFFF_FFC3).wrapping_mul(16_777_619)
        );
    }

    #[test]
    fn separators_are_fasttexts() {
        for b in [b' ', b'\n', b'\r', b'\t', 0x0B, 0x0C, 0] {
            assert!(is_separator(b));
        }
        assert!(!is_separator(0xA0));
        assert!(!is_separator(b'a'));
    }
}
