//! The order of each window of filters from a sample of the input: before a run, the ops before
//! the window and then every filter of it are run on a few rows spread over the input, and what
//! each filter drops decides, with its cost, where it runs (`Recipe::order_by_sample`). The
//! sample is the same rows for the same input, so a resumed job orders its filters as it did.

use std::sync::Arc;

use anyhow::Result;
use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::common::Column;
use datafusion::functions::expr_fn::octet_length;
use datafusion::logical_expr::{Expr, LogicalPlanBuilder, cast, lit};
use datafusion::prelude::{DataFrame, SessionContext};
use dj_plans::compile::{Barriers, compile_partition, filter_stats, json_stats};
use dj_plans::recipe::FilterSample;
use dj_plans::source::{InputIndex, RowRange, RowRangeTable};
use dj_plans::{OpConfig, Recipe};
use dj_udfs::Operator;

/// The sample is this share of the input's bytes, at most [`MAX_SAMPLE_BYTES`]; an input whose
/// sample would be under [`MIN_SAMPLE_BYTES`] keeps the order by cost alone (its run is short
/// anyway).
const SAMPLE_SHARE: u64 = 100;
const MAX_SAMPLE_BYTES: u64 = 4 << 20;
const MIN_SAMPLE_BYTES: u64 = 256 << 10;
/// Places in the input the sample's rows come from (a run of rows at the start of each of as
/// many byte-balanced ranges).
const SAMPLE_PLACES: usize = 16;

/// `recipe` with each window of filters ordered by what a sample of `index` says they drop.
pub(crate) async fn ordered(recipe: &Recipe, index: &Arc<InputIndex>) -> Result<Recipe> {
    let bytes = (index.total_bytes() / SAMPLE_SHARE).min(MAX_SAMPLE_BYTES);
    if recipe.filter_windows.is_empty() || bytes < MIN_SAMPLE_BYTES {
        return Ok(recipe.clone());
    }
    ordered_by_sample(recipe, index, bytes).await
}

/// [`ordered`] with a sample of about `sample_bytes`.
pub(crate) async fn ordered_by_sample(
    recipe: &Recipe,
    index: &Arc<InputIndex>,
    sample_bytes: u64,
) -> Result<Recipe> {
    let mut recipe = recipe.clone();
    let ranges = sample_ranges(index, sample_bytes);
    if ranges.is_empty() {
        return Ok(recipe);
    }
    for window in recipe.filter_windows.clone() {
        // A media mapper writes files: the sample does not go through it, and this window and
        // those after it keep their order by cost.
        let before = &recipe.process[..window.start];
        if before
            .iter()
            .any(|op| matches!(op.operator, Operator::MediaMapper(_)))
        {
            break;
        }
        let sample = sample_window(&recipe, index, &ranges, window.clone()).await?;
        recipe.order_by_sample(window.clone(), &sample);
        let order: Vec<&str> = (recipe.process[window].iter())
            .map(|op| op.name.as_str())
            .collect();
        tracing::info!(
            "filters ordered by a sample of {} rows: {}",
            sample.bytes.len(),
            order.join(", ")
        );
    }
    Ok(recipe)
}

/// Up to [`SAMPLE_PLACES`] runs of rows spread over the input, about `bytes` in all by the
/// input's average row (its byte marks are too coarse to measure a few rows).
fn sample_ranges(index: &InputIndex, bytes: u64) -> Vec<RowRange> {
    let per_row = (index.total_bytes() / index.total_rows.max(1)).max(1);
    let rows = (bytes / SAMPLE_PLACES as u64 / per_row).max(1);
    (index.byte_balanced_ranges(SAMPLE_PLACES).into_iter())
        .filter(|place| !place.is_empty())
        .map(|place| RowRange {
            start: place.start,
            end: (place.start + rows).min(place.end),
        })
        .collect()
}

/// Runs the ops before `window` (but deduplicators and selectors, which only drop rows or
/// reorder them) on the sample rows, then computes every filter of the window on all of them.
async fn sample_window(
    recipe: &Recipe,
    index: &Arc<InputIndex>,
    ranges: &[RowRange],
    window: std::ops::Range<usize>,
) -> Result<FilterSample> {
    let before: Vec<OpConfig> = recipe.process[..window.start]
        .iter()
        .filter(|op| {
            !matches!(
                op.operator,
                Operator::Deduplicator(_) | Operator::Selector(_)
            )
        })
        .cloned()
        .collect();
    let table = Arc::new(RowRangeTable::new(index.clone(), ranges.to_vec()));
    let barriers = Barriers::new(&[], 1, None, None).with_input(index);
    let compiled = compile_partition(
        recipe,
        table,
        true,
        &before,
        &barriers.context(0, &|_| None),
    )?;
    let mut plan = compiled.plan;
    let mut keeps: Vec<Expr> = Vec::new();
    for op in &recipe.process[window.clone()] {
        let (p, keep) = filter_stats(plan, op, None, json_stats(index), false)?;
        plan = p;
        // A null keep (a null stat) is not kept; no bounds keep every row.
        keeps.push(keep.map_or(lit(true), |k| k.is_true()));
    }
    let text = Expr::Column(Column::new_unqualified(&recipe.text_keys[0]));
    let mut select = vec![cast(octet_length(text), DataType::Int64).alias("bytes")];
    for (i, keep) in keeps.into_iter().enumerate() {
        select.push(keep.alias(format!("keep_{i}")));
    }
    let plan = LogicalPlanBuilder::from(plan).project(select)?.build()?;
    let ctx =
        SessionContext::new_with_state(dj_plans::planner::state(dj_plans::planner::config(1)));
    let batches = DataFrame::new(ctx.state(), plan).collect().await?;
    let mut sample = FilterSample {
        bytes: Vec::new(),
        keeps: vec![Vec::new(); window.len()],
    };
    for batch in batches {
        let bytes = batch.column(0).as_primitive::<Int64Type>();
        sample
            .bytes
            .extend((0..bytes.len()).map(|r| bytes.value(r).max(0) as u64));
        for (k, keeps) in sample.keeps.iter_mut().enumerate() {
            let column = batch.column(k + 1).as_boolean();
            keeps.extend((0..column.len()).map(|r| column.is_valid(r) && column.value(r)));
        }
    }
    Ok(sample)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Long documents that `words_num_filter` drops and short ones every filter keeps: by cost
    /// alone `words_num_filter` runs last; the sample shows that it drops nearly all the bytes,
    /// so it runs first, and the filters that drop nothing follow in cost order.
    #[tokio::test]
    async fn a_filter_dropping_most_bytes_runs_first() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.jsonl");
        let mut rows = String::new();
        for i in 0..64 {
            let text = if i % 4 == 0 {
                format!("short document number {i}, kept by every filter.")
            } else {
                "many words in a long document ".repeat(200)
            };
            rows.push_str(&serde_json::json!({ "text": text }).to_string());
            rows.push('\n');
        }
        std::fs::write(&input, rows).unwrap();
        let text = format!(
            "dataset_path: {}\nprocess:\n  - text_length_filter:\n      min_len: 5\n  \
             - words_num_filter:\n      max_num: 100\n  - special_characters_filter:\n",
            input.display()
        );
        let recipe = Recipe::from_str("r.yaml", &text, &[]).unwrap();
        let names = |r: &Recipe| r.process.iter().map(|o| o.name.clone()).collect::<Vec<_>>();
        assert_eq!(
            names(&recipe),
            [
                "special_characters_filter",
                "text_length_filter",
                "words_num_filter"
            ]
        );
        let index = Arc::new(InputIndex::build(input.to_str().unwrap()).unwrap());
        // 1 MB takes every row; 64 KB one per place (the rows are about 4.5 KB on average).
        let rows = |bytes| -> u64 { sample_ranges(&index, bytes).iter().map(|r| r.len()).sum() };
        assert_eq!((rows(1 << 20), rows(64 << 10)), (64, 16));
        let ordered = ordered_by_sample(&recipe, &index, 1 << 20).await.unwrap();
        assert_eq!(
            names(&ordered),
            [
                "words_num_filter",
                "special_characters_filter",
                "text_length_filter"
            ]
        );
        assert_eq!(ordered.reordered, std::slice::from_ref(&(0..3)));
        let entries: Vec<usize> = ordered.process.iter().map(|o| o.entry).collect();
        assert_eq!(entries, [1, 2, 0]);
        // A small input keeps the order by cost (no sample).
        let kept = super::ordered(&recipe, &index).await.unwrap();
        assert_eq!(names(&kept), names(&recipe));
    }
}
