//! The order ops run in: consecutive filters run by cost and by what they drop. A filter only
//! adds its stat and drops rows, so a window of filters keeps the same rows, with the same stats,
//! in any order (the compiler puts the stats back in the recipe's order); running first the
//! filters that drop much for little work spares the others the rows they drop. At load each
//! window runs cheapest first; the runner then orders it by what a sample of the input says each
//! filter drops ([`FilterSample`]). Data-Juicer's `fusion_strategy: probe` reorders its filter
//! groups by their probed speed.

use std::collections::HashSet;
use std::ops::Range;
use std::path::Path;

use dj_udfs::Operator;
use dj_udfs::columns::STATS_COLUMN;

use super::{CheckpointConfig, CheckpointStrategy, ExecutorType, OpConfig};

/// CPU nanoseconds per input byte of the model work an op may share with the ops before it:
/// SentencePiece's pieces are computed once per text and model (`models::pieces`), so the first
/// op that tokenizes a text with a model pays for it and later ones read the pieces.
const SENTENCEPIECE_NS_PER_BYTE: f64 = 49.0;

/// The estimated cost of `op` per input byte, in nanoseconds, apart from SentencePiece: what each
/// op alone took on 1,000 documents of 48 KB on average (`bench-fast` build, one op per recipe,
/// CPU time less that of an op that reads no text). Ops without a measurement get 10; filters
/// over media files pay per file, not per byte, and go last.
fn own_cost(op: &OpConfig) -> f64 {
    let tokenized = op.params.bool("tokenization");
    match op.name.as_str() {
        "specified_field_filter" | "specified_numeric_field_filter" | "suffix_filter" => 0.5,
        "alphanumeric_filter" if tokenized => 255.0, // a Hugging Face tokenizer
        "alphanumeric_filter" => 2.0,
        "special_characters_filter" => 2.5,
        "text_length_filter" => 3.0,
        "average_line_length_filter" => 3.3,
        "maximum_line_length_filter" => 3.5,
        "words_num_filter" if tokenized => 1.0,
        "words_num_filter" => 5.0,
        "stopwords_filter" | "flagged_words_filter" => 11.0,
        "word_repetition_filter" if tokenized => 46.0,
        "word_repetition_filter" => 12.0,
        "character_repetition_filter" => 17.5,
        "perplexity_filter" => 21.0, // KenLM, after the pieces
        "language_id_score_filter" => 28.0,
        "token_num_filter" => 255.0,
        name if name.starts_with("image_")
            || name.starts_with("audio_")
            || name.starts_with("video_") =>
        {
            1000.0
        }
        _ => 10.0,
    }
}

/// Whether `op` may run anywhere within its run of filters: it computes its stats from the
/// text or a field no other filter writes (a filter over `__dj__stats__` reads what the filters
/// before it computed, so it stays where it is).
fn movable(op: &OpConfig) -> bool {
    match &op.operator {
        Operator::Filter(_) => true,
        Operator::FieldFilter(f) => {
            f.field != STATS_COLUMN && !f.field.starts_with(&format!("{STATS_COLUMN}."))
        }
        _ => false,
    }
}

/// The ranges of `ops` within which filters may change places: maximal runs of movable filters,
/// cut where the checkpoint strategy fixes a checkpoint (only the `ray_partitioned` executor
/// writes checkpoints). `every_n_ops` fixes the positions after which it checkpoints: a run may
/// change order within each window. `manual` fixes its named ops: they do not move. `every_op`
/// leaves nothing to reorder. `auto` decides at run time and is told not to checkpoint inside a
/// reordered run.
fn windows(
    ops: &[OpConfig],
    executor: ExecutorType,
    checkpoint: &CheckpointConfig,
) -> Vec<Range<usize>> {
    let checkpoints = executor == ExecutorType::RayPartitioned && checkpoint.enabled;
    let pinned_op = |op: &OpConfig| {
        checkpoints
            && match checkpoint.strategy {
                CheckpointStrategy::EveryOp => true,
                CheckpointStrategy::Manual => checkpoint.op_names.contains(&op.name),
                _ => false,
            }
    };
    let ends_window = |i: usize| {
        checkpoints
            && checkpoint.strategy == CheckpointStrategy::EveryNOps
            && (i + 1).is_multiple_of(checkpoint.n_ops)
    };
    let mut windows = Vec::new();
    let mut start = 0;
    for (i, op) in ops.iter().enumerate() {
        if !movable(op) || pinned_op(op) {
            if i > start {
                windows.push(start..i);
            }
            start = i + 1;
        } else if ends_window(i) {
            windows.push(start..i + 1);
            start = i + 1;
        }
    }
    if ops.len() > start {
        windows.push(start..ops.len());
    }
    windows.retain(|w| w.len() > 1);
    windows
}

/// What a sample of the input says about a window of filters: each sample row's text length in
/// bytes, and for each op of the window (in its current order) whether it keeps each row.
#[derive(Debug, Clone)]
pub struct FilterSample {
    pub bytes: Vec<u64>,
    pub keeps: Vec<Vec<bool>>,
}

/// Below this share of the bytes a filter drops, it counts as dropping nothing: filters that
/// drop nothing of the sample run cheapest first.
const MIN_DROPPED: f64 = 1e-3;

/// The positions of `window`'s ops (indices into it) in the order they run. Each step takes the
/// op with the lowest cost per byte it drops: its cost given the SentencePiece models the ops
/// before it have run, over the share of the bytes still kept (by the ops before it) that it
/// drops in `sample` (without a sample, or when it drops nothing, [`MIN_DROPPED`]); then the
/// cheaper op, then the first in the recipe. This is the classic order of independent
/// predicates by cost over selectivity, taken greedily so that correlated filters (two that drop
/// the same rows) and shared tokenizations are counted as they are.
fn run_order(window: &[OpConfig], sample: Option<&FilterSample>) -> Vec<usize> {
    let rows = sample.map_or(0, |s| s.bytes.len());
    let mut alive = vec![true; rows];
    let mut left: Vec<usize> = (0..window.len()).collect();
    let mut tokenized: HashSet<&Path> = HashSet::new();
    let mut order = Vec::with_capacity(window.len());
    while !left.is_empty() {
        let cost = |op: &OpConfig| {
            let models = op.models.iter().filter(|m| m.kind == "SentencePiece");
            let new_models = models
                .filter(|m| !tokenized.contains(m.path.as_path()))
                .count();
            own_cost(op) + new_models as f64 * SENTENCEPIECE_NS_PER_BYTE
        };
        let dropped = |k: usize| {
            let Some(s) = sample else { return 0.0 };
            let (mut kept_bytes, mut dropped_bytes) = (0u64, 0u64);
            for (row, &bytes) in s.bytes.iter().enumerate().filter(|(r, _)| alive[*r]) {
                kept_bytes += bytes;
                if !s.keeps[k][row] {
                    dropped_bytes += bytes;
                }
            }
            match kept_bytes {
                0 => 0.0,
                total => dropped_bytes as f64 / total as f64,
            }
        };
        let key = |k: usize| {
            let c = cost(&window[k]);
            (c / dropped(k).max(MIN_DROPPED), c)
        };
        let (at, _) = left
            .iter()
            .map(|&k| key(k))
            .enumerate()
            .min_by(|(_, a), (_, b)| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)))
            .expect("not empty");
        let next = left.remove(at);
        for m in window[next]
            .models
            .iter()
            .filter(|m| m.kind == "SentencePiece")
        {
            tokenized.insert(m.path.as_path());
        }
        if let Some(s) = sample {
            for (a, &keep) in alive.iter_mut().zip(&s.keeps[next]) {
                *a &= keep;
            }
        }
        order.push(next);
    }
    order
}

/// Runs the ops of `window` in the order of `positions` (indices into it), renumbering `index`.
fn apply(ops: &mut Vec<OpConfig>, window: Range<usize>, positions: &[usize]) {
    let moved: Vec<OpConfig> = positions
        .iter()
        .map(|&k| ops[window.start + k].clone())
        .collect();
    ops.splice(window, moved);
    for (i, op) in ops.iter_mut().enumerate() {
        op.index = i;
    }
}

/// The windows whose ops run in another order than the recipe lists them.
fn reordered(ops: &[OpConfig], windows: &[Range<usize>]) -> Vec<Range<usize>> {
    (windows.iter())
        .filter(|w| ops[(*w).clone()].iter().any(|op| op.entry != op.index))
        .cloned()
        .collect()
}

/// Puts each window of `ops` cheapest first (`index` becomes the running position, `entry`
/// keeps the recipe's). Returns the windows and those whose order changed.
pub(super) fn reorder_filters(
    ops: &mut Vec<OpConfig>,
    executor: ExecutorType,
    checkpoint: &CheckpointConfig,
) -> (Vec<Range<usize>>, Vec<Range<usize>>) {
    let windows = windows(ops, executor, checkpoint);
    for window in &windows {
        let order = run_order(&ops[window.clone()], None);
        apply(ops, window.clone(), &order);
    }
    let changed = reordered(ops, &windows);
    (windows, changed)
}

impl super::Recipe {
    /// Orders the filters of `window` (one of [`Self::filter_windows`]) by what `sample` says
    /// each drops, with the same costs (see [`run_order`]).
    pub fn order_by_sample(&mut self, window: Range<usize>, sample: &FilterSample) {
        assert!(self.filter_windows.contains(&window), "not a filter window");
        let order = run_order(&self.process[window.clone()], Some(sample));
        apply(&mut self.process, window, &order);
        self.reordered = reordered(&self.process, &self.filter_windows);
    }
}

#[cfg(test)]
mod tests {
    use crate::Recipe;

    /// The recipe's ops as they run, each as `entry:name`, and the reordered ranges.
    fn run_order(process: &str, settings: &str) -> (Vec<String>, Vec<std::ops::Range<usize>>) {
        let models = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/models");
        let text =
            format!("dataset_path: in.jsonl\nmodel_dir: {models}\n{settings}\nprocess:\n{process}");
        let r = Recipe::from_str("r.yaml", &text, &[]).unwrap();
        for (i, op) in r.process.iter().enumerate() {
            assert_eq!(op.index, i, "index is the running position");
        }
        let ops = r
            .process
            .iter()
            .map(|o| format!("{}:{}", o.entry, o.name))
            .collect();
        (ops, r.reordered)
    }

    const C4_FILTERS: &str = "  - clean_email_mapper:
  - alphanumeric_filter:
  - character_repetition_filter:
  - language_id_score_filter:
  - perplexity_filter:
  - special_characters_filter:
  - words_num_filter:
      tokenization: true
  - word_repetition_filter:
      tokenization: true
  - document_simhash_deduplicator:
  - text_length_filter:
";

    /// Cheapest first; the first op that tokenizes with a SentencePiece model pays for it, the
    /// others after it only for their own work; mappers and deduplicators stay and end runs.
    #[test]
    fn filters_run_cheapest_first_between_other_ops() {
        let (ops, reordered) = run_order(C4_FILTERS, "");
        assert_eq!(
            ops,
            [
                "0:clean_email_mapper",
                "1:alphanumeric_filter",
                "5:special_characters_filter",
                "2:character_repetition_filter",
                "3:language_id_score_filter",
                "6:words_num_filter",
                "4:perplexity_filter",
                "7:word_repetition_filter",
                "8:document_simhash_deduplicator",
                "9:text_length_filter",
            ]
        );
        assert_eq!(reordered, std::slice::from_ref(&(1..8)));
    }

    #[test]
    fn reorder_filters_false_keeps_the_recipe_order() {
        let (ops, reordered) = run_order(C4_FILTERS, "reorder_filters: false");
        let entries: Vec<&str> = ops.iter().map(|o| o.split(':').next().unwrap()).collect();
        assert_eq!(entries, ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"]);
        assert!(reordered.is_empty());
    }

    /// A filter over `__dj__stats__` reads what the filters before it computed: it stays, and
    /// the filters on either side of it do not cross it.
    #[test]
    fn a_filter_over_stats_is_a_barrier() {
        let process = "  - character_repetition_filter:
  - text_length_filter:
  - specified_numeric_field_filter:
      field_key: __dj__stats__.text_len
      min_value: 5
  - perplexity_filter:
  - alphanumeric_filter:
  - specified_field_filter:
      field_key: meta.lang
      target_value: [en]
";
        let (ops, reordered) = run_order(process, "");
        assert_eq!(
            ops,
            [
                "1:text_length_filter",
                "0:character_repetition_filter",
                "2:specified_numeric_field_filter",
                "5:specified_field_filter",
                "4:alphanumeric_filter",
                "3:perplexity_filter",
            ]
        );
        assert_eq!(reordered, [0..2, 3..6]);
    }

    /// With the ray_partitioned executor, checkpoints the strategy fixes are not crossed:
    /// `every_n_ops` windows, `manual`'s named ops; `every_op` leaves nothing to reorder, and
    /// `auto` (which is kept out of reordered runs) reorders like the default executor.
    #[test]
    fn fixed_checkpoints_are_not_crossed() {
        let process = "  - perplexity_filter:
  - language_id_score_filter:
  - character_repetition_filter:
  - alphanumeric_filter:
  - text_length_filter:
";
        let ray = |checkpoint: &str| {
            let (ops, _) = run_order(
                process,
                &format!("executor_type: ray_partitioned\ncheckpoint:\n{checkpoint}"),
            );
            ops.iter()
                .map(|o| o.split(':').next().unwrap().to_string())
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(ray("  strategy: every_n_ops\n  n_ops: 2"), "1 0 3 2 4");
        assert_eq!(ray("  strategy: every_op"), "0 1 2 3 4");
        assert_eq!(
            ray("  strategy: manual\n  op_names: [character_repetition_filter]"),
            "1 0 2 3 4"
        );
        assert_eq!(ray("  strategy: auto"), "3 4 2 1 0");
        assert_eq!(ray("  enabled: false"), "3 4 2 1 0");
        let (ops, _) = run_order(process, "");
        assert_eq!(ops[0], "3:alphanumeric_filter");
    }
}
