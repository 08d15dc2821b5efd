//! MinHash's keep decision, built as the partitions arrive: each partition's band keys join one
//! union-find when they reach the barrier, so the work of the partitions that finish first
//! overlaps the hashing of those still running instead of waiting for the last one. Which rows
//! are connected does not depend on the order keys arrive in, and the survivor of each connected
//! component is its smallest row in input order, so the masks are `decide_in_memory`'s.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use super::keys::Keys;
use super::sorted_keys::find;

/// Rows are numbered in order of arrival (a partition's rows take the next numbers); a key maps
/// to the first such row holding it.
pub(crate) struct BandUnion {
    first: HashMap<u128, u32, foldhash::fast::RandomState>,
    parent: Vec<u32>,
    /// Per partition, once it is in: the arrival number of its first row, and its rows.
    arrived: Vec<Option<(u32, u32)>>,
}

impl BandUnion {
    pub(crate) fn new(partitions: usize) -> Self {
        BandUnion {
            first: HashMap::default(),
            parent: Vec::new(),
            arrived: vec![None; partitions],
        }
    }

    /// Joins partition `p`'s rows (`keys`, one list of band keys per row) to the rows before;
    /// false (and nothing added) when `p` is in already.
    #[must_use]
    pub(crate) fn add(&mut self, p: usize, keys: &Keys) -> bool {
        if self.arrived[p].is_some() {
            return false;
        }
        let base = self.parent.len() as u32;
        let rows = keys.rows() as u32;
        self.parent.extend(base..base + rows);
        // At most one rehash per partition instead of one per doubling.
        self.first.reserve(keys.keys.len());
        for i in 0..rows {
            let row = base + i;
            for &key in keys.row(i as usize) {
                match self.first.entry(key) {
                    Entry::Vacant(v) => {
                        v.insert(row);
                    }
                    Entry::Occupied(o) => union(&mut self.parent, *o.get(), row),
                }
            }
        }
        self.arrived[p] = Some((base, rows));
        true
    }

    /// Whether every partition is in.
    pub(crate) fn complete(&self) -> bool {
        self.arrived.iter().all(Option::is_some)
    }

    /// Per partition, in input order, whether each row survives: it does when no row before it
    /// in input order (partitions in order, rows in order) is connected to it.
    pub(crate) fn decide(mut self) -> Vec<Vec<bool>> {
        assert!(self.complete(), "every partition's keys are in");
        drop(std::mem::take(&mut self.first));
        let mut component_seen = vec![false; self.parent.len()];
        let parent = &mut self.parent;
        self.arrived
            .iter()
            .map(|&arrived| {
                let (base, rows) = arrived.expect("checked complete");
                (base..base + rows)
                    .map(|row| {
                        let root = find(parent, row) as usize;
                        !std::mem::replace(&mut component_seen[root], true)
                    })
                    .collect()
            })
            .collect()
    }
}

fn union(parent: &mut [u32], a: u32, b: u32) {
    let (a, b) = (find(parent, a), find(parent, b));
    parent[a.max(b) as usize] = a.min(b);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nodes::dedup::decide_in_memory;
    use dj_udfs::DedupKind;

    /// Each row's fate by brute force: a row survives when no smaller row (in input order) is
    /// connected to it, found by relabelling every component with its smallest row until stable.
    fn survivors(parts: &[Keys]) -> Vec<Vec<bool>> {
        let rows: Vec<&[u128]> = parts
            .iter()
            .flat_map(|k| (0..k.rows()).map(move |i| k.row(i)))
            .collect();
        let mut label: Vec<usize> = (0..rows.len()).collect();
        let mut changed = true;
        while changed {
            changed = false;
            for i in 0..rows.len() {
                for j in 0..rows.len() {
                    if label[j] < label[i] && rows[i].iter().any(|k| rows[j].contains(k)) {
                        label[i] = label[j];
                        changed = true;
                    }
                }
            }
        }
        let mut at = 0;
        parts
            .iter()
            .map(|k| {
                let keep = (at..at + k.rows()).map(|i| label[i] == i).collect();
                at += k.rows();
                keep
            })
            .collect()
    }

    /// Random partitions of rows sharing keys from a small range, added in several arrival
    /// orders of four partitions: the survivors are the brute-force ones, and what
    /// `decide_in_memory` gives.
    #[test]
    fn any_arrival_order_decides_as_all_at_once() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let mut dropped = 0;
        for round in 0..20 {
            let parts: Vec<Keys> = (0..4)
                .map(|_| {
                    let rows: Vec<Vec<u128>> = (0..next(30))
                        .map(|_| (0..next(4)).map(|_| u128::from(next(60))).collect())
                        .collect();
                    let rows: Vec<&[u128]> = rows.iter().map(Vec::as_slice).collect();
                    Keys::from_rows(&rows)
                })
                .collect();
            let want = survivors(&parts);
            dropped += want.iter().flatten().filter(|&&k| !k).count();
            assert_eq!(
                decide_in_memory(DedupKind::MinHashBands, &parts).unwrap(),
                want
            );
            for order in [[0, 1, 2, 3], [3, 2, 1, 0], [2, 0, 3, 1], [1, 3, 0, 2]] {
                let mut u = BandUnion::new(4);
                for (i, &p) in order.iter().enumerate() {
                    assert!(!u.complete(), "{i}");
                    assert!(u.add(p, &parts[p]));
                }
                assert!(u.complete());
                assert_eq!(u.decide(), want, "round {round}, order {order:?}");
            }
        }
        assert!(dropped > 20, "the rows share keys: {dropped} dropped");
    }

    /// A component whose rows arrive before its smallest row keeps that row, not the first to
    /// arrive.
    #[test]
    fn the_survivor_is_the_smallest_in_input_order() {
        let mut u = BandUnion::new(2);
        assert!(u.add(1, &Keys::from_rows(&[&[7], &[8], &[7, 8]])));
        assert!(
            !u.add(1, &Keys::from_rows(&[&[9]])),
            "partition 1 is in already"
        );
        assert!(u.add(0, &Keys::from_rows(&[&[9], &[8]])));
        assert_eq!(u.decide(), [vec![true, true], vec![false, false, false]]);
    }
}
