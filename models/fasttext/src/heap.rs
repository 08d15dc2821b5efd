//! libstdc++'s `push_heap` / `pop_heap` / `sort_heap`, re-done step for step. fastText keeps
//! its top-k predictions in such a heap, so which of several equal scores survive, and their
//! final order, depend on these exact moves.

/// A prediction: log-probability and label index.
pub(crate) type Scored = (f32, i32);

/// fastText's `comparePairs`, used as the heap's "less": the heap's front is the lowest score.
#[inline]
fn less(a: &Scored, b: &Scored) -> bool {
    a.0 > b.0
}

/// `std::__push_heap`: sift `value` up from `hole` towards `top`.
fn sift_up(heap: &mut [Scored], mut hole: usize, top: usize, value: Scored) {
    while hole > top {
        let parent = (hole - 1) / 2;
        if !less(&heap[parent], &value) {
            break;
        }
        heap[hole] = heap[parent];
        hole = parent;
    }
    heap[hole] = value;
}

/// `std::push_heap` after `heap.push(value)`.
pub(crate) fn push(heap: &mut Vec<Scored>, value: Scored) {
    heap.push(value);
    let last = heap.len() - 1;
    sift_up(heap, last, 0, value);
}

/// `std::__adjust_heap`: move the hole at `hole` down to a leaf, then sift `value` up.
fn adjust(heap: &mut [Scored], mut hole: usize, len: usize, value: Scored) {
    let top = hole;
    let mut child = hole;
    while len >= 2 && child < (len - 1) / 2 {
        child = 2 * (child + 1);
        if less(&heap[child], &heap[child - 1]) {
            child -= 1;
        }
        heap[hole] = heap[child];
        hole = child;
    }
    if len & 1 == 0 && len >= 2 && child == (len - 2) / 2 {
        child = 2 * (child + 1);
        heap[hole] = heap[child - 1];
        hole = child - 1;
    }
    sift_up(heap, hole, top, value);
}

/// `std::__pop_heap(first, last, result)` with `result == last`: the front goes to `last`.
fn pop_into_last(heap: &mut [Scored], last: usize) {
    let value = heap[last];
    heap[last] = heap[0];
    adjust(heap, 0, last, value);
}

/// `std::pop_heap` followed by `pop_back`.
pub(crate) fn pop(heap: &mut Vec<Scored>) {
    let len = heap.len();
    if len > 1 {
        pop_into_last(heap, len - 1);
    }
    heap.pop();
}

/// `std::sort_heap`: highest score first.
pub(crate) fn sort(heap: &mut [Scored]) {
    let mut last = heap.len();
    while last > 1 {
        last -= 1;
        pop_into_last(heap, last);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_top_k_sorted_descending() {
        let scores = [0.5f32, -1.0, 2.0, 0.1, 3.0, -0.5, 2.5];
        let mut heap = Vec::new();
        for (i, &s) in scores.iter().enumerate() {
            push(&mut heap, (s, i as i32));
            if heap.len() > 3 {
                pop(&mut heap);
            }
        }
        sort(&mut heap);
        assert_eq!(heap, vec![(3.0, 4), (2.5, 6), (2.0, 2)]);
    }

    #[test]
    fn ties_follow_libstdcxx() {
        // Orders printed by the same push/pop/sort sequence compiled against libstdc++.
        let mut heap = Vec::new();
        for i in 0..5 {
            push(&mut heap, (1.0, i));
        }
        sort(&mut heap);
        let order: Vec<i32> = heap.iter().map(|p| p.1).collect();
        assert_eq!(order, vec![3, 1, 4, 2, 0]);

        let scores = [1.0f32, 2.0, 1.0, 2.0, 1.0, 3.0, 2.0, 1.0, 2.0];
        let mut heap: Vec<Scored> = Vec::new();
        for (i, &s) in scores.iter().enumerate() {
            if heap.len() == 3 && s < heap[0].0 {
                continue;
            }
            push(&mut heap, (s, i as i32));
            if heap.len() > 3 {
                pop(&mut heap);
            }
        }
        sort(&mut heap);
        assert_eq!(heap, vec![(3.0, 5), (2.0, 8), (2.0, 6)]);
    }
}
