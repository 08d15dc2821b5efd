//! A byte-wise double-array trie built at load time from the vocabulary, used for
//! the per-position prefix matching of the unigram Viterbi, BPE pair lookups and the
//! user-defined-symbol matcher. Transitions are `child = base[node] ^ byte`, checked
//! against `check[child] == node`, so a lookup costs one array access per byte.
//! Construction follows darts-clone's layout: the array grows in 256-unit blocks, so all
//! children of a node share a block, and only the last few blocks are searched for room,
//! which keeps building linear in the vocabulary size.

/// `check` of a slot no node owns.
const FREE: u32 = u32::MAX;
/// `check` of the root, which has no parent.
const ROOT_CHECK: u32 = u32::MAX - 1;
const BLOCK: usize = 256;
/// Blocks still searched for free slots; older ones are left as they are.
const OPEN_BLOCKS: usize = 16;
const NIL: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Unit {
    base: u32,
    check: u32,
    /// Value of the key ending at this node, or -1.
    value: i32,
}

const EMPTY: Unit = Unit {
    base: 0,
    check: FREE,
    value: -1,
};

pub(crate) struct DoubleArray {
    units: Vec<Unit>,
}

/// Free slots of the open blocks as a circular doubly linked list.
struct Builder {
    units: Vec<Unit>,
    next: Vec<u32>,
    prev: Vec<u32>,
    head: u32,
    first_open_block: usize,
}

impl Builder {
    fn new() -> Builder {
        let mut b = Builder {
            units: Vec::new(),
            next: Vec::new(),
            prev: Vec::new(),
            head: NIL,
            first_open_block: 0,
        };
        b.add_block();
        b.reserve(0, ROOT_CHECK);
        b
    }

    fn link(&mut self, i: usize) {
        let slot = i as u32;
        if self.head == NIL {
            self.head = slot;
            self.next[i] = slot;
            self.prev[i] = slot;
        } else {
            let head = self.head as usize;
            let tail = self.prev[head] as usize;
            self.next[tail] = slot;
            self.prev[i] = tail as u32;
            self.next[i] = self.head;
            self.prev[head] = slot;
        }
    }

    fn unlink(&mut self, i: usize) {
        let (next, prev) = (self.next[i], self.prev[i]);
        if next as usize == i {
            self.head = NIL;
        } else {
            self.prev[next as usize] = prev;
            self.next[prev as usize] = next;
            if self.head as usize == i {
                self.head = next;
            }
        }
    }

    /// Appends a block; closes the oldest open block when too many are open.
    fn add_block(&mut self) -> usize {
        let start = self.units.len();
        self.units.resize(start + BLOCK, EMPTY);
        self.next.resize(start + BLOCK, NIL);
        self.prev.resize(start + BLOCK, NIL);
        for i in start..start + BLOCK {
            self.link(i);
        }
        if start / BLOCK - self.first_open_block >= OPEN_BLOCKS {
            let closing = self.first_open_block * BLOCK;
            for i in closing..closing + BLOCK {
                if self.units[i].check == FREE {
                    self.unlink(i);
                }
            }
            self.first_open_block += 1;
        }
        start
    }

    fn reserve(&mut self, slot: usize, parent: u32) {
        self.unlink(slot);
        self.units[slot].check = parent;
    }

    /// A base whose slots `base ^ label` are all free (first fit over the open blocks).
    fn find_base(&mut self, labels: &[(u8, usize, usize)]) -> usize {
        let first = usize::from(labels[0].0);
        if self.head != NIL {
            let mut pos = self.head as usize;
            loop {
                let base = pos ^ first;
                let fits = labels[1..]
                    .iter()
                    .all(|&(label, _, _)| self.units[base ^ usize::from(label)].check == FREE);
                if fits {
                    return base;
                }
                pos = self.next[pos] as usize;
                if pos == self.head as usize {
                    break;
                }
            }
        }
        self.add_block()
    }
}

impl DoubleArray {
    /// Builds the trie; `keys` need not be sorted. For duplicate keys the first one wins.
    /// Values must be non-negative.
    pub(crate) fn build(keys: &[(&[u8], i32)]) -> DoubleArray {
        let mut sorted: Vec<(&[u8], i32)> = keys.to_vec();
        sorted.sort_by(|a, b| a.0.cmp(b.0));
        sorted.dedup_by(|later, earlier| later.0 == earlier.0);

        let mut b = Builder::new();
        // (node, key range sharing the node's prefix, depth)
        let mut stack = vec![(0usize, 0usize, sorted.len(), 0usize)];
        let mut labels: Vec<(u8, usize, usize)> = Vec::new();
        while let Some((node, mut lo, hi, depth)) = stack.pop() {
            if lo < hi && sorted[lo].0.len() == depth {
                b.units[node].value = sorted[lo].1;
                lo += 1;
            }
            labels.clear();
            for (i, key) in (lo..hi).zip(&sorted[lo..hi]) {
                let label = key.0[depth];
                match labels.last_mut() {
                    Some(last) if last.0 == label => last.2 = i + 1,
                    _ => labels.push((label, i, i + 1)),
                }
            }
            if labels.is_empty() {
                continue;
            }
            let base = b.find_base(&labels);
            b.units[node].base = base as u32;
            for &(label, from, to) in &labels {
                let child = base ^ usize::from(label);
                b.reserve(child, node as u32);
                stack.push((child, from, to, depth + 1));
            }
        }
        let mut units = b.units;
        while units.last().is_some_and(|u| u.check == FREE) {
            units.pop();
        }
        units.shrink_to_fit();
        DoubleArray { units }
    }

    /// Whether some key starts with `byte`.
    pub(crate) fn has_key_starting_with(&self, byte: u8) -> bool {
        !self.units.is_empty() && self.child(0, byte).is_some()
    }

    #[inline]
    fn child(&self, node: usize, byte: u8) -> Option<usize> {
        let child = self.units[node].base as usize ^ usize::from(byte);
        match self.units.get(child) {
            Some(unit) if unit.check == node as u32 => Some(child),
            _ => None,
        }
    }

    /// Calls `f(length, value)` for every key that is a prefix of `text`, shortest first.
    #[inline]
    pub(crate) fn for_each_prefix(&self, text: &[u8], mut f: impl FnMut(usize, i32)) {
        let mut node = 0;
        for (i, &byte) in text.iter().enumerate() {
            match self.child(node, byte) {
                Some(next) => node = next,
                None => return,
            }
            let value = self.units[node].value;
            if value >= 0 {
                f(i + 1, value);
            }
        }
    }

    /// The value of `key` itself.
    pub(crate) fn get(&self, key: &[u8]) -> Option<i32> {
        let mut node = 0;
        for &byte in key {
            node = self.child(node, byte)?;
        }
        let value = self.units[node].value;
        (value >= 0).then_some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_longest_and_exact() {
        let keys: Vec<(&[u8], i32)> = vec![
            (b"a", 1),
            (b"ab", 2),
            (b"abc", 3),
            (b"b", 4),
            (b"\xe2\x96\x81", 5),
            (b"ab", 9),
        ];
        let trie = DoubleArray::build(&keys);
        let mut found = Vec::new();
        trie.for_each_prefix(b"abcd", |len, v| found.push((len, v)));
        assert_eq!(found, vec![(1, 1), (2, 2), (3, 3)]);
        let mut none = true;
        trie.for_each_prefix(b"xa", |_, _| none = false);
        assert!(none);
        assert_eq!(trie.get(b"\xe2\x96\x81"), Some(5));
        assert_eq!(trie.get(b"\xe2\x96"), None);
        assert_eq!(trie.get(b"abcd"), None);
        assert_eq!(trie.get(b""), None);
    }

    #[test]
    fn many_keys_round_trip() {
        let words: Vec<String> = (0..5000)
            .map(|i| format!("w{}x{}", i * 7919 % 10007, i))
            .collect();
        let keys: Vec<(&[u8], i32)> = words
            .iter()
            .enumerate()
            .map(|(i, w)| (w.as_bytes(), i as i32))
            .collect();
        let trie = DoubleArray::build(&keys);
        for (i, w) in words.iter().enumerate() {
            assert_eq!(trie.get(w.as_bytes()), Some(i as i32));
        }
        assert_eq!(trie.get(b"w"), None);
    }
}

#[cfg(test)]
mod scale {
    #[test]
    #[ignore = "timing only"]
    fn large_vocab_build_time() {
        let mut state = 7u64;
        let words: Vec<Vec<u8>> = (0..250_000)
            .map(|_| {
                let len = 1 + (state % 12) as usize;
                (0..len)
                    .map(|_| {
                        state = state
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        // Mostly a-z plus some multibyte lead/continuation bytes.
                        [
                            b'a' + (state >> 59) as u8 % 26,
                            0xe3,
                            0x81 + (state >> 60) as u8,
                        ][(state >> 33) as usize % 3]
                    })
                    .collect()
            })
            .collect();
        let keys: Vec<(&[u8], i32)> = words
            .iter()
            .enumerate()
            .map(|(i, w)| (w.as_slice(), i as i32))
            .collect();
        let start = std::time::Instant::now();
        let trie = super::DoubleArray::build(&keys);
        println!(
            "250k keys: {:?}, {} units",
            start.elapsed(),
            trie.units.len()
        );
        for (w, _) in &keys {
            assert!(trie.get(w).is_some());
        }
    }
}
