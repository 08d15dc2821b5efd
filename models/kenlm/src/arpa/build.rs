//! Builds kenlm's probing structure from parsed ARPA entries, replaying
//! `lm/search_hashed.cc` step by step (sign-bit "extends left" marks, extension
//! markers on backoffs, blanks for pruned suffixes) and serializing it in the
//! binary `probing` layout so one lookup path serves ARPA and binary models.

use crate::binary::probing::{UNIGRAM_ENTRY, buckets_for};
use crate::hash::{combine_word_hash, vocab_hash};
use crate::search::SIGN_BIT;
use crate::vocab::PROBING_VOCAB_ENTRY;

/// kenlm's default `Config::probing_multiplier`.
pub(crate) const PROBING_MULTIPLIER: f32 = 1.5;
/// kenlm's default `Config::unknown_missing_logprob`.
pub(crate) const UNKNOWN_MISSING_LOGPROB: f32 = -100.0;
const NO_EXTENSION: f32 = -0.0;

/// Linear-probing table with kenlm's insert rules: key 0 marks an empty bucket and an
/// insert fails once entries would reach the bucket count.
pub(crate) struct HashTable<V> {
    keys: Vec<u64>,
    values: Vec<V>,
    used: u64,
}

impl<V: Copy + Default> HashTable<V> {
    fn new(entries: u64) -> Self {
        let buckets = buckets_for(entries, PROBING_MULTIPLIER) as usize;
        HashTable {
            keys: vec![0; buckets],
            values: vec![V::default(); buckets],
            used: 0,
        }
    }

    fn probe(&self, key: u64) -> usize {
        let buckets = self.keys.len();
        let mut i = (key % buckets as u64) as usize;
        while self.keys[i] != key && self.keys[i] != 0 {
            i = if i + 1 == buckets { 0 } else { i + 1 };
        }
        i
    }

    fn count_insert(&mut self) -> Result<(), String> {
        self.used += 1;
        if self.used >= self.keys.len() as u64 {
            return Err(format!(
                "hash table with {} buckets is full",
                self.keys.len()
            ));
        }
        Ok(())
    }

    /// Inserts without checking for an existing key, as kenlm's `Insert` does.
    fn insert(&mut self, key: u64, value: V) -> Result<usize, String> {
        self.count_insert()?;
        let buckets = self.keys.len();
        let mut i = (key % buckets as u64) as usize;
        while self.keys[i] != 0 {
            i = if i + 1 == buckets { 0 } else { i + 1 };
        }
        self.keys[i] = key;
        self.values[i] = value;
        Ok(i)
    }

    fn find(&self, key: u64) -> Option<usize> {
        let i = self.probe(key);
        (self.keys[i] == key).then_some(i)
    }

    /// Returns the slot and whether the key was already present.
    fn find_or_insert(&mut self, key: u64, value: V) -> Result<(usize, bool), String> {
        let i = self.probe(key);
        if self.keys[i] == key {
            return Ok((i, true));
        }
        self.count_insert()?;
        self.keys[i] = key;
        self.values[i] = value;
        Ok((i, false))
    }
}

/// `prob` + `backoff`; `prob`'s sign bit is kenlm's "independent left" flag.
#[derive(Clone, Copy, Default)]
pub(crate) struct ProbBackoff {
    pub prob: f32,
    pub backoff: f32,
}

fn set_sign(x: &mut f32) {
    *x = f32::from_bits(x.to_bits() | SIGN_BIT);
}

fn unset_sign(x: &mut f32) {
    *x = f32::from_bits(x.to_bits() & !SIGN_BIT);
}

/// -0.0 ("nothing extends this") becomes +0.0 once something does.
fn set_extension(backoff: &mut f32) {
    if backoff.to_bits() == NO_EXTENSION.to_bits() {
        *backoff = 0.0;
    }
}

/// Where a lower-order entry lives while adjusting it.
#[derive(Clone, Copy)]
enum Slot {
    Unigram(usize),
    Middle(usize, usize),
}

pub(crate) struct Builder {
    pub order: usize,
    pub counts: Vec<u64>,
    vocab: HashTable<u32>,
    bound: u32,
    pub saw_unk: bool,
    unigrams: Vec<ProbBackoff>,
    middles: Vec<HashTable<ProbBackoff>>,
    longest: HashTable<f32>,
}

impl Builder {
    pub(crate) fn new(counts: &[u64]) -> Self {
        let order = counts.len();
        Builder {
            order,
            counts: counts.to_vec(),
            vocab: HashTable::new(counts[0]),
            bound: 1,
            saw_unk: false,
            unigrams: vec![ProbBackoff::default(); counts[0] as usize + 1],
            middles: counts[1..order - 1]
                .iter()
                .map(|&c| HashTable::new(c))
                .collect(),
            longest: HashTable::new(counts[order - 1]),
        }
    }

    /// Adds a unigram's word, returning its id (`<unk>`/`<UNK>` are always 0).
    pub(crate) fn insert_word(&mut self, word: &[u8]) -> Result<u32, String> {
        let hash = vocab_hash(word);
        if hash == vocab_hash(b"<unk>") || hash == vocab_hash(b"<UNK>") {
            self.saw_unk = true;
            return Ok(0);
        }
        self.vocab.insert(hash, self.bound)?;
        self.bound += 1;
        Ok(self.bound - 1)
    }

    pub(crate) fn index(&self, word: &[u8]) -> u32 {
        self.vocab
            .find(vocab_hash(word))
            .map_or(0, |i| self.vocab.values[i])
    }

    pub(crate) fn set_unigram(&mut self, id: u32, weights: ProbBackoff) {
        self.unigrams[id as usize] = weights;
    }

    fn weights(&mut self, slot: Slot) -> &mut ProbBackoff {
        match slot {
            Slot::Unigram(w) => &mut self.unigrams[w],
            Slot::Middle(t, i) => &mut self.middles[t].values[i],
        }
    }

    /// Adds one n-gram; `ids` holds its word ids in reverse (predicted word first).
    /// Errors are kenlm's: a full table or a context that is not itself an n-gram.
    pub(crate) fn add_ngram(
        &mut self,
        ids: &[u32],
        mut weights: ProbBackoff,
    ) -> Result<(), String> {
        let n = ids.len();
        let mut keys = [0u64; crate::search::MAX_ORDER];
        keys[0] = combine_word_hash(u64::from(ids[0]), ids[1]);
        for h in 1..n - 1 {
            keys[h] = combine_word_hash(keys[h - 1], ids[h + 1]);
        }
        // Nothing extends a new n-gram to the left yet.
        set_sign(&mut weights.prob);
        if n == self.order {
            self.longest.insert(keys[n - 2], weights.prob)?;
        } else {
            self.middles[n - 2].insert(keys[n - 2], weights)?;
        }
        let between = self.find_lower(&keys[..n - 1], ids[0])?;
        self.adjust_lower(&between, ids);
        self.activate_context(ids)
    }

    /// kenlm's `FindLower`: the right-aligned suffixes of the n-gram, longest first,
    /// down to the first that exists, inserting blanks for missing ones.
    fn find_lower(&mut self, keys: &[u64], word: u32) -> Result<Vec<Slot>, String> {
        let mut between = Vec::with_capacity(keys.len());
        let blank = ProbBackoff {
            prob: 0.0,
            backoff: NO_EXTENSION,
        };
        for lower in (0..keys.len() - 1).rev() {
            let (slot, found) = self.middles[lower].find_or_insert(keys[lower], blank)?;
            between.push(Slot::Middle(lower, slot));
            if found {
                return Ok(between);
            }
        }
        between.push(Slot::Unigram(word as usize));
        Ok(between)
    }

    /// kenlm's `AdjustLower` (NoRestBuild): give blanks the backed-off probability and
    /// mark every suffix as extended to the left.
    fn adjust_lower(&mut self, between: &[Slot], ids: &[u32]) {
        let n = ids.len();
        if between.len() > 1 {
            let mut prob = -self.weights(between[between.len() - 1]).prob.abs();
            let mut basis = n - between.len();
            let mut change = between.len() - 1;
            if basis == 1 {
                // Hallucinate a bigram from the unigram backoff and probability.
                let backoff = &mut self.unigrams[ids[1] as usize].backoff;
                set_extension(backoff);
                prob += *backoff;
                change -= 1;
                self.weights(between[change]).prob = prob;
                basis = 2;
            }
            let mut backoff_hash = u64::from(ids[1]);
            for &id in &ids[2..=basis] {
                backoff_hash = combine_word_hash(backoff_hash, id);
            }
            while basis < n - 1 {
                if let Some(i) = self.middles[basis - 2].find(backoff_hash) {
                    let backoff = &mut self.middles[basis - 2].values[i].backoff;
                    set_extension(backoff);
                    prob += *backoff;
                }
                change -= 1;
                self.weights(between[change]).prob = prob;
                backoff_hash = combine_word_hash(backoff_hash, ids[basis + 1]);
                basis += 1;
            }
        }
        for &slot in between {
            unset_sign(&mut self.weights(slot).prob);
        }
    }

    /// kenlm's `ActivateUnigram` / `ActivateLowerMiddle`: the context now extends.
    fn activate_context(&mut self, ids: &[u32]) -> Result<(), String> {
        let n = ids.len();
        if n == 2 {
            set_extension(&mut self.unigrams[ids[1] as usize].backoff);
            return Ok(());
        }
        let mut hash = u64::from(ids[1]);
        for &id in &ids[2..n] {
            hash = combine_word_hash(hash, id);
        }
        let table = &mut self.middles[n - 3];
        let i = table.find(hash).ok_or_else(|| {
            format!(
                "the context of every {n}-gram should appear as a {}-gram",
                n - 1
            )
        })?;
        set_extension(&mut table.values[i].backoff);
        Ok(())
    }

    /// Applies kenlm's default `<unk>` when the file had none, then writes the tables
    /// in the binary `probing` layout (without file header).
    pub(crate) fn finish(mut self) -> Vec<u8> {
        if !self.saw_unk {
            self.unigrams[0] = ProbBackoff {
                prob: UNKNOWN_MISSING_LOGPROB,
                backoff: 0.0,
            };
        }
        let mut out = Vec::new();
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&self.bound.to_le_bytes());
        for (k, v) in self.vocab.keys.iter().zip(&self.vocab.values) {
            out.extend_from_slice(&k.to_le_bytes());
            out.extend_from_slice(&v.to_le_bytes());
        }
        debug_assert_eq!(out.len(), 8 + self.vocab.keys.len() * PROBING_VOCAB_ENTRY);
        for u in &self.unigrams {
            out.extend_from_slice(&u.prob.to_le_bytes());
            out.extend_from_slice(&u.backoff.to_le_bytes());
        }
        debug_assert_eq!(self.unigrams.len() * 8, self.unigrams.len() * UNIGRAM_ENTRY);
        for table in &self.middles {
            for (k, v) in table.keys.iter().zip(&table.values) {
                out.extend_from_slice(&k.to_le_bytes());
                out.extend_from_slice(&v.prob.to_le_bytes());
                out.extend_from_slice(&v.backoff.to_le_bytes());
            }
        }
        for (k, v) in self.longest.keys.iter().zip(&self.longest.values) {
            out.extend_from_slice(&k.to_le_bytes());
            out.extend_from_slice(&v.to_le_bytes());
        }
        out
    }
}
