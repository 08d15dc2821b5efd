//! `dj-analyze`, as Data-Juicer's analyzer: every filter's stat over the whole input, without
//! filtering (mappers and deduplicators are not run, as in Data-Juicer), summarised as pandas'
//! `describe` does, with what each filter's bounds and candidate thresholds would keep; written as
//! `overall.csv`, `analysis.json`, one histogram PNG per stat and a self-contained `report.html`
//! ([`report`]).

mod report;
mod stats;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Result, bail};
use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::{DataType, Float64Type, Int64Type};
use datafusion::prelude::{SessionContext, col};
use dj_plans::Recipe;
use dj_plans::source::RowRangeTable;
use dj_udfs::Operator;
use futures::StreamExt;
use serde::Serialize;

pub(crate) use report::write_report;
pub(crate) use stats::{Describe, Threshold};

/// One filter's stat over the input.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct StatAnalysis {
    /// The stat's key in `__dj__stats__` (Data-Juicer's name).
    pub(crate) stat: String,
    /// The filter that computes it, and its position in the recipe.
    pub(crate) op: String,
    pub(crate) op_index: usize,
    /// The filter's bounds (`None`: unbounded on that side).
    pub(crate) min: Option<f64>,
    pub(crate) max: Option<f64>,
    pub(crate) describe: Describe,
    /// Rows the filter's current bounds keep.
    pub(crate) kept_by_bounds: u64,
    /// What other thresholds would keep.
    pub(crate) thresholds: Vec<Threshold>,
    /// The stat of every row with one (rows whose text is null have none).
    #[serde(skip)]
    pub(crate) values: Vec<f64>,
}

/// The whole analysis of one recipe's input.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Analysis {
    pub(crate) recipe: String,
    pub(crate) dataset_path: String,
    pub(crate) rows: u64,
    pub(crate) stats: Vec<StatAnalysis>,
    /// Filters whose stats are not analyzed here, with why.
    pub(crate) skipped: Vec<String>,
}

/// Computes every filter's stat of `recipe` over its whole input.
pub(crate) async fn analyze(recipe: &Recipe) -> Result<Analysis> {
    let index = Arc::new(crate::execute::build_index(recipe).await?);
    let ctx = SessionContext::new_with_config(dj_plans::planner::config(recipe.np.max(1)));
    let ranges = index.byte_balanced_ranges(recipe.np.max(1));
    let table = RowRangeTable::new(index.clone(), ranges);
    let mut df = ctx.read_table(Arc::new(table))?;
    let mut columns = Vec::new();
    let mut skipped = Vec::new();
    for op in &recipe.process {
        match &op.operator {
            Operator::Filter(f) => {
                let name = format!("stat_{}", op.index);
                if df
                    .schema()
                    .field_with_unqualified_name(op.text_key())
                    .is_err()
                {
                    skipped.push(format!(
                        "#{} {}: its text key `{}` is not a top-level column of the input",
                        op.index,
                        op.name,
                        op.text_key()
                    ));
                    continue;
                }
                df = df.with_column(&name, f.stat_udf.call(vec![col(op.text_key())]))?;
                columns.push((op, name, f.stat_key, f.range));
            }
            Operator::FieldFilter(_) => skipped.push(format!(
                "#{} {}: stats over fields other than text are not analyzed yet",
                op.index, op.name
            )),
            _ => {}
        }
    }
    if columns.is_empty() {
        bail!(
            "{}: no filter whose stat can be analyzed (Data-Juicer's analyzer computes the stats of filters)",
            recipe.file
        );
    }
    let names: Vec<&str> = columns.iter().map(|(_, n, ..)| n.as_str()).collect();
    // Each partition on a task of its own, joined in partition order: the values are in row
    // order, which the summaries sum in.
    let streams = df
        .select_columns(&names)?
        .execute_stream_partitioned()
        .await?;
    let k = columns.len();
    let tasks: Vec<_> = streams
        .into_iter()
        .map(|mut stream| {
            tokio::spawn(async move {
                let mut values: Vec<Vec<f64>> = vec![Vec::new(); k];
                while let Some(batch) = stream.next().await {
                    for (i, column) in batch?.columns().iter().enumerate() {
                        append_values(column.as_ref(), &mut values[i])?;
                    }
                }
                anyhow::Ok(values)
            })
        })
        .collect();
    let mut values: Vec<Vec<f64>> = vec![Vec::new(); k];
    for task in tasks {
        for (all, part) in values.iter_mut().zip(task.await??) {
            all.extend(part);
        }
    }
    let stats = columns
        .into_iter()
        .zip(values)
        .map(|((op, _, key, range), values)| {
            let kept_by_bounds = values.iter().filter(|v| range.keeps(**v)).count() as u64;
            let mut sorted = values.clone();
            sorted.sort_by(f64::total_cmp);
            StatAnalysis {
                stat: key.to_string(),
                op: op.name.clone(),
                op_index: op.index,
                min: range.min,
                max: range.max,
                describe: Describe::of(&values, &sorted),
                kept_by_bounds,
                thresholds: stats::thresholds(&sorted),
                values,
            }
        })
        .collect();
    Ok(Analysis {
        recipe: recipe.file.clone(),
        dataset_path: recipe.dataset_path.clone(),
        rows: index.total_rows,
        stats,
        skipped,
    })
}

fn append_values(column: &dyn Array, out: &mut Vec<f64>) -> Result<()> {
    match column.data_type() {
        DataType::Float64 => out.extend(column.as_primitive::<Float64Type>().iter().flatten()),
        DataType::Int64 => out.extend(
            column
                .as_primitive::<Int64Type>()
                .iter()
                .flatten()
                .map(|v| v as f64),
        ),
        other => bail!("a stat of type {other} is not numeric"),
    }
    Ok(())
}

/// Where the analysis goes by default: `analysis/` next to the export.
pub(crate) fn default_output(recipe: &Recipe) -> PathBuf {
    Path::new(&recipe.export_path)
        .parent()
        .unwrap_or(Path::new("."))
        .join("analysis")
}
