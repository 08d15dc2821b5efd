//! From hidden vector to top-k labels, per training loss, as fastText's `Loss::predict`
//! computes it: softmax, one sigmoid per label (negative sampling and one-vs-all, via
//! fastText's 512-entry sigmoid table), or a depth-first search of the hierarchical-softmax
//! Huffman tree. Scores are `log(p + 1e-5)` in f32 and are ranked with fastText's heap.

use crate::args::LossKind;
use crate::heap::{self, Scored};
use crate::matrix::Matrix;

const SIGMOID_TABLE_SIZE: usize = 512;
const MAX_SIGMOID: f32 = 8.0;

/// fastText's `std_log`: `std::log(x + 1e-5)` evaluated in double, returned as f32.
#[inline]
fn std_log(x: f32) -> f32 {
    (x as f64 + 1e-5).ln() as f32
}

pub(crate) enum Loss {
    Softmax,
    /// Negative sampling and one-vs-all predict alike.
    Sigmoid(Box<[f32; SIGMOID_TABLE_SIZE + 1]>),
    Hierarchical(HuffmanTree),
}

/// Scratch for one prediction, reused across calls.
#[derive(Default)]
pub(crate) struct LossScratch {
    output: Vec<f32>,
    stack: Vec<(i32, f32)>,
    /// The result: (log-probability, label) pairs, best first.
    pub top: Vec<Scored>,
}

impl Loss {
    pub(crate) fn new(kind: LossKind, label_counts: &[i64]) -> Loss {
        match kind {
            LossKind::Softmax => Loss::Softmax,
            LossKind::NegativeSampling | LossKind::OneVsAll => Loss::Sigmoid(sigmoid_table()),
            LossKind::HierarchicalSoftmax => Loss::Hierarchical(HuffmanTree::new(label_counts)),
        }
    }

    /// Fills `s.top` with at most `k` (log-probability, label) pairs, best first.
    pub(crate) fn predict(
        &self,
        output: &Matrix,
        hidden: &[f32],
        nlabels: usize,
        k: usize,
        threshold: f32,
        s: &mut LossScratch,
    ) {
        let top = &mut s.top;
        top.clear();
        match self {
            Loss::Hierarchical(tree) => tree.dfs(output, hidden, k, threshold, &mut s.stack, top),
            Loss::Softmax => {
                dot_all(output, hidden, nlabels, &mut s.output);
                softmax(&mut s.output);
                find_k_best(&s.output, k, threshold, top);
            }
            Loss::Sigmoid(table) => {
                dot_all(output, hidden, nlabels, &mut s.output);
                for o in s.output.iter_mut() {
                    *o = sigmoid(table, *o);
                }
                find_k_best(&s.output, k, threshold, top);
            }
        }
        heap::sort(top);
    }
}

fn dot_all(output: &Matrix, hidden: &[f32], nlabels: usize, out: &mut Vec<f32>) {
    out.clear();
    out.extend((0..nlabels).map(|i| output.dot_row(hidden, i)));
}

/// `SoftmaxLoss::computeOutput`: the C++ calls the double `exp` on the f32 difference.
fn softmax(out: &mut [f32]) {
    let mut max = out[0];
    for &o in out.iter() {
        max = if o < max { max } else { o };
    }
    let mut z = 0.0f32;
    for o in out.iter_mut() {
        *o = ((*o - max) as f64).exp() as f32;
        z += *o;
    }
    for o in out.iter_mut() {
        *o /= z;
    }
}

/// `Loss::t_sigmoid_`: `1 / (1 + std::exp(-x))` with the float `exp`, divided in double.
fn sigmoid_table() -> Box<[f32; SIGMOID_TABLE_SIZE + 1]> {
    let mut t = Box::new([0.0f32; SIGMOID_TABLE_SIZE + 1]);
    for (i, v) in t.iter_mut().enumerate() {
        let x = (i as f32 * 2.0 * MAX_SIGMOID) / SIGMOID_TABLE_SIZE as f32 - MAX_SIGMOID;
        *v = (1.0f64 / (1.0f64 + (-x).exp() as f64)) as f32;
    }
    t
}

/// `Loss::sigmoid`: a table lookup, truncating the index as C++'s `int64_t(...)` does.
#[inline]
fn sigmoid(table: &[f32; SIGMOID_TABLE_SIZE + 1], x: f32) -> f32 {
    if x < -MAX_SIGMOID {
        0.0
    } else if x > MAX_SIGMOID {
        1.0
    } else {
        let i = ((x + MAX_SIGMOID) * SIGMOID_TABLE_SIZE as f32 / MAX_SIGMOID / 2.0) as i64;
        // NaN maps to index 0 here, where the C++ would read out of bounds.
        table[i.clamp(0, SIGMOID_TABLE_SIZE as i64) as usize]
    }
}

/// `Loss::findKBest`: threshold on the probability, rank by `std_log`.
fn find_k_best(out: &[f32], k: usize, threshold: f32, top: &mut Vec<Scored>) {
    for (i, &p) in out.iter().enumerate() {
        if p < threshold {
            continue;
        }
        let score = std_log(p);
        if top.len() == k && score < top[0].0 {
            continue;
        }
        heap::push(top, (score, i as i32));
        if top.len() > k {
            heap::pop(top);
        }
    }
}

/// The hierarchical-softmax tree, built from label counts like `buildTree`: leaves are the
/// labels `0..osz`, internal node `osz + j` uses output row `j`, the root is `2 * osz - 2`.
pub(crate) struct HuffmanTree {
    osz: usize,
    /// (left, right) children per node, -1 for leaves.
    children: Vec<(i32, i32)>,
}

impl HuffmanTree {
    fn new(counts: &[i64]) -> HuffmanTree {
        let osz = counts.len();
        let nodes = 2 * osz - 1;
        let mut count = vec![1_000_000_000_000_000i64; nodes];
        count[..osz].copy_from_slice(counts);
        let mut children = vec![(-1i32, -1i32); nodes];
        // Labels are sorted by decreasing count, so the two cheapest of (remaining leaves,
        // new internal nodes) are always at the two cursors.
        let mut leaf = osz as i64 - 1;
        let mut node = osz;
        for i in osz..nodes {
            let mut mini = [0usize; 2];
            for m in mini.iter_mut() {
                if leaf >= 0 && count[leaf as usize] < count[node] {
                    *m = leaf as usize;
                    leaf -= 1;
                } else {
                    *m = node;
                    node += 1;
                }
            }
            children[i] = (mini[0] as i32, mini[1] as i32);
            count[i] = count[mini[0]].wrapping_add(count[mini[1]]);
        }
        HuffmanTree { osz, children }
    }

    /// `HierarchicalSoftmaxLoss::dfs` with an explicit stack (left subtree first, each
    /// node's pruning checks made when it is visited, as in the recursive C++).
    fn dfs(
        &self,
        output: &Matrix,
        hidden: &[f32],
        k: usize,
        threshold: f32,
        stack: &mut Vec<(i32, f32)>,
        top: &mut Vec<Scored>,
    ) {
        let min_score = std_log(threshold);
        stack.clear();
        stack.push((2 * self.osz as i32 - 2, 0.0));
        while let Some((node, score)) = stack.pop() {
            if score < min_score {
                continue;
            }
            if top.len() == k && score < top[0].0 {
                continue;
            }
            let (left, right) = self.children[node as usize];
            if left == -1 && right == -1 {
                heap::push(top, (score, node));
                if top.len() > k {
                    heap::pop(top);
                }
                continue;
            }
            let f = output.dot_row(hidden, node as usize - self.osz);
            // `1. / (1 + std::exp(-f))`: float exp and sum; the double quotient rounds to the
            // same f32 as an f32 division.
            let f = 1.0f32 / (1.0f32 + (-f).exp());
            stack.push((right, score + std_log(f)));
            stack.push((left, score + std_log(1.0 - f)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huffman_tree_of_three() {
        // Counts 5, 3, 1: leaves 2 and 1 merge first (node 3, count 4), then node 3 (the
        // cheaper, so on the left) with leaf 0.
        let t = HuffmanTree::new(&[5, 3, 1]);
        assert_eq!(t.children[3], (2, 1));
        assert_eq!(t.children[4], (3, 0));
    }

    #[test]
    fn sigmoid_table_ends() {
        let t = sigmoid_table();
        assert!(t[0] > 0.0 && t[0] < 0.001);
        assert_eq!(t[256], 0.5);
        assert!(t[512] > 0.999);
        assert_eq!(sigmoid(&t, -9.0), 0.0);
        assert_eq!(sigmoid(&t, 9.0), 1.0);
        assert_eq!(sigmoid(&t, f32::NAN), t[0]);
    }
}
