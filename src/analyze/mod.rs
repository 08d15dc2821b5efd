//! `dj-analyze`, as Data-Juicer's analyzer: every filter's stats over the whole input, without
//! filtering (mappers and deduplicators are not run, as in Data-Juicer). Stats the rows already
//! carry in `__dj__stats__` (a checkpoint, or an export with `keep_stats_in_res_ds`) are read, not
//! recomputed, as Data-Juicer's filters skip them. Each stat is summarised as pandas' `describe`
//! does, with what each filter's bounds and candidate thresholds would keep; written as
//! `overall.csv`, `analysis.json`, one histogram PNG per stat and a self-contained `report.html`
//! ([`report`]).

mod job;
mod report;
mod stats;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Result, bail};
use datafusion::arrow::array::{Array, AsArray, BooleanArray, StructArray, UInt32Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type};
use datafusion::logical_expr::{Expr, LogicalPlanBuilder, lit};
use datafusion::prelude::{DataFrame, SessionContext, col};
use dj_plans::Recipe;
use dj_plans::compile::{CompileError, filter_stats};
use dj_plans::source::RowRangeTable;
use dj_udfs::Operator;
use dj_udfs::columns::STATS_COLUMN;
use futures::StreamExt;
use serde::Serialize;

pub(crate) use report::write_report;
pub(crate) use stats::{Describe, TextDescribe, Threshold};

/// One stat of `__dj__stats__` over the input.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct StatAnalysis {
    /// The stat's key in `__dj__stats__` (Data-Juicer's name).
    pub(crate) stat: String,
    /// The input rows already carried it, so it was read rather than computed.
    pub(crate) from_input: bool,
    /// The recipe's filters that test this stat (none for a stat only the input carries).
    pub(crate) filters: Vec<FilterUse>,
    pub(crate) summary: Summary,
    /// Numeric values of every row with one, in row order (for the histogram).
    #[serde(skip)]
    pub(crate) values: Vec<f64>,
}

/// A filter of the recipe and what it keeps of the analyzed rows.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FilterUse {
    pub(crate) op: String,
    pub(crate) op_index: usize,
    /// The filter's bounds on a numeric stat (`None`: unbounded on that side, or a filter whose
    /// keep rule is not a range, such as language ID's label).
    pub(crate) min: Option<f64>,
    pub(crate) max: Option<f64>,
    /// Rows the filter keeps with its current parameters.
    pub(crate) kept: u64,
}

/// pandas' summary of one stat: numeric (with candidate thresholds) or strings.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Summary {
    Numeric {
        describe: Describe,
        /// What other thresholds would keep.
        thresholds: Vec<Threshold>,
    },
    Text(TextDescribe),
}

/// The whole analysis of one recipe's input.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Analysis {
    pub(crate) recipe: String,
    pub(crate) dataset_path: String,
    /// Rows analyzed (those with a text; Data-Juicer's loader drops the others).
    pub(crate) rows: u64,
    pub(crate) stats: Vec<StatAnalysis>,
    /// Filters and stats not analyzed here, with why.
    pub(crate) skipped: Vec<String>,
}

/// How one column of `__dj__stats__` is read.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Numeric,
    Text,
    /// A list of numbers or strings: exploded, as Data-Juicer's analysis does.
    NumericList,
    TextList,
}

fn kind_of(data_type: &DataType) -> Option<Kind> {
    match data_type {
        t if t.is_numeric() => Some(Kind::Numeric),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Some(Kind::Text),
        DataType::List(f) | DataType::LargeList(f) => match kind_of(f.data_type())? {
            Kind::Numeric => Some(Kind::NumericList),
            Kind::Text => Some(Kind::TextList),
            _ => None,
        },
        _ => None,
    }
}

/// A filter of the recipe in the analysis plan: its keep predicate as a column.
struct PlannedFilter {
    op: String,
    op_index: usize,
    stat_keys: Vec<String>,
    min: Option<f64>,
    max: Option<f64>,
    /// Whether the plan has a keep column for it (a filter without bounds keeps every row).
    has_keep: bool,
}

/// Computes every filter's stats of `recipe` over its whole input, or with `job`, over the rows
/// that job saved in its checkpoints (see [`job`]).
pub(crate) async fn analyze(recipe: &Recipe, job: Option<&str>) -> Result<Analysis> {
    let ctx = SessionContext::new_with_state(dj_plans::planner::state(dj_plans::planner::config(
        recipe.np.max(1),
    )));
    let (input, dataset_path, json_stats) = match job {
        None => {
            let index = Arc::new(crate::plan::build_index(recipe).await?);
            let ranges = index.byte_balanced_ranges(recipe.np.max(1));
            let json_stats = dj_plans::compile::json_stats(&index);
            let table = RowRangeTable::new(index.clone(), ranges);
            let input = ctx.read_table(Arc::new(table))?;
            (input, recipe.dataset_path.clone(), json_stats)
        }
        Some(id) => {
            let rows = job::job_rows(recipe, id).await?;
            let mut union: Option<DataFrame> = None;
            for table in rows.tables {
                let df = ctx.read_table(Arc::new(table))?;
                union = Some(match union {
                    None => df,
                    Some(u) => u.union(df)?,
                });
            }
            let input = union.expect("a job has partitions");
            (input, rows.description, rows.json_stats)
        }
    };
    let input_stats: Vec<String> = match input.schema().field_with_unqualified_name(STATS_COLUMN) {
        Ok(f) => match f.data_type() {
            DataType::Struct(fs) => fs.iter().map(|f| f.name().clone()).collect(),
            _ => Vec::new(),
        },
        Err(_) => Vec::new(),
    };
    let (df, filters, mut skipped) = plan(recipe, input, json_stats)?;
    let stats_type = df
        .schema()
        .field_with_unqualified_name(STATS_COLUMN)
        .ok()
        .map(|f| f.data_type().clone());
    let Some(DataType::Struct(fields)) = stats_type else {
        bail!(
            "{}: no filter whose stats can be analyzed (Data-Juicer's analyzer computes the stats of filters)",
            recipe.file
        );
    };
    let mut columns = Vec::new();
    for (i, f) in fields.iter().enumerate() {
        match kind_of(f.data_type()) {
            Some(kind) => columns.push((i, f.name().clone(), kind)),
            None => skipped.push(format!(
                "stat `{}`: values of type {} are not analyzed (Data-Juicer analyzes numbers, strings and lists of them)",
                f.name(),
                f.data_type()
            )),
        }
    }
    // The keep columns follow the stats, one per filter that has one.
    let mut next = 1;
    let keep_columns: Vec<Option<usize>> = filters
        .iter()
        .map(|f| {
            f.has_keep.then(|| {
                next += 1;
                next - 1
            })
        })
        .collect();
    let collected = collect(df, &columns, keep_columns).await?;
    let mut stats = Vec::new();
    for ((_, key, _), values) in columns.iter().zip(collected.values) {
        let uses: Vec<FilterUse> = filters
            .iter()
            .enumerate()
            .filter(|(_, f)| f.stat_keys.contains(key))
            .map(|(i, f)| FilterUse {
                op: f.op.clone(),
                op_index: f.op_index,
                min: f.min,
                max: f.max,
                kept: collected.kept[i],
            })
            .collect();
        let from_input = input_stats.contains(key);
        let (summary, values) = match values {
            Values::Numeric(values) if !values.is_empty() => {
                let mut sorted = values.clone();
                sorted.sort_by(f64::total_cmp);
                let summary = Summary::Numeric {
                    describe: Describe::of(&values, &sorted),
                    thresholds: stats::thresholds(&sorted),
                };
                (summary, values)
            }
            Values::Text(values) if !values.is_empty() => {
                (Summary::Text(TextDescribe::of(&values)), Vec::new())
            }
            _ => {
                // Data-Juicer skips a column without any valid value.
                skipped.push(format!("stat `{key}`: no row has a value"));
                continue;
            }
        };
        stats.push(StatAnalysis {
            stat: key.clone(),
            from_input,
            filters: uses,
            summary,
            values,
        });
    }
    Ok(Analysis {
        recipe: recipe.file.clone(),
        dataset_path,
        rows: collected.rows,
        stats,
        skipped,
    })
}

/// The analysis plan over `input`: the loader's null-text drop, then every filter's stats
/// (without filtering) and a Boolean column per filter with what it keeps.
fn plan(
    recipe: &Recipe,
    input: DataFrame,
    json_stats: bool,
) -> Result<(DataFrame, Vec<PlannedFilter>, Vec<String>)> {
    let (state, mut plan) = input.into_parts();
    let text_key = &recipe.text_keys[0];
    if plan.schema().fields().iter().any(|f| f.name() == text_key) {
        plan = LogicalPlanBuilder::from(plan)
            .filter(col(text_key.as_str()).is_not_null())?
            .build()?;
    }
    let mut filters = Vec::new();
    let mut keeps: Vec<Expr> = Vec::new();
    let mut skipped = Vec::new();
    // In the recipe's order: nothing is filtered, so the order of the stats is all it changes.
    let mut ops: Vec<&dj_plans::OpConfig> = recipe.process.iter().collect();
    ops.sort_by_key(|op| op.entry);
    for op in ops {
        let (stat_keys, min, max) = match &op.operator {
            Operator::Filter(f) => (vec![f.stat_key.to_string()], f.range.min, f.range.max),
            Operator::FieldFilter(f) => {
                (f.stats.iter().map(|s| s.key.clone()).collect(), None, None)
            }
            _ => continue,
        };
        if stat_keys.is_empty() {
            // Data-Juicer's analyzer has nothing to summarise for a filter without stats
            // (`suffix_filter`, `specified_field_filter`).
            continue;
        }
        match filter_stats(plan.clone(), op, None, json_stats, true) {
            Ok((p, keep)) => {
                plan = p;
                let has_keep = keep.is_some();
                keeps.extend(keep.map(|k| k.alias(format!("__dj__keep_{}", op.entry))));
                filters.push(PlannedFilter {
                    op: op.name.clone(),
                    op_index: op.entry,
                    stat_keys,
                    min,
                    max,
                    has_keep,
                });
            }
            Err(
                e @ (CompileError::MissingColumn { .. }
                | CompileError::NotText { .. }
                | CompileError::MissingField { .. }),
            ) => skipped.push(format!("#{} {}: {e}", op.entry, op.name)),
            Err(e) => return Err(e.into()),
        }
    }
    let mut select = Vec::new();
    if plan
        .schema()
        .fields()
        .iter()
        .any(|f| f.name() == STATS_COLUMN)
    {
        select.push(col(STATS_COLUMN));
    } else {
        select.push(lit(datafusion::common::ScalarValue::Null).alias(STATS_COLUMN));
    }
    select.extend(keeps);
    let plan = LogicalPlanBuilder::from(plan).project(select)?.build()?;
    Ok((DataFrame::new(state, plan), filters, skipped))
}

enum Values {
    Numeric(Vec<f64>),
    Text(Vec<String>),
}

struct Collected {
    rows: u64,
    values: Vec<Values>,
    /// Rows each filter keeps, in filter order.
    kept: Vec<u64>,
}

/// Streams the analysis plan, partitions in order (pandas sums in row order), into values per
/// stat column and kept rows per filter.
async fn collect(
    df: DataFrame,
    columns: &[(usize, String, Kind)],
    keep_columns: Vec<Option<usize>>,
) -> Result<Collected> {
    let n_filters = keep_columns.len();
    let keep_columns = Arc::new(keep_columns);
    let streams = df.execute_stream_partitioned().await?;
    let columns: Arc<Vec<(usize, String, Kind)>> = Arc::new(columns.to_vec());
    let tasks: Vec<_> = streams
        .into_iter()
        .map(|mut stream| {
            let columns = columns.clone();
            let keep_columns = keep_columns.clone();
            tokio::spawn(async move {
                let mut out = Collected {
                    rows: 0,
                    values: columns.iter().map(|(_, _, k)| empty(*k)).collect(),
                    kept: vec![0; n_filters],
                };
                while let Some(batch) = stream.next().await {
                    let batch = batch?;
                    out.rows += batch.num_rows() as u64;
                    let stats = batch.column(0).as_struct();
                    for ((i, _, kind), values) in columns.iter().zip(&mut out.values) {
                        append(stats, *i, *kind, values)?;
                    }
                    for (kept, column) in out.kept.iter_mut().zip(keep_columns.iter()) {
                        *kept += match column {
                            Some(c) => count_true(batch.column(*c).as_boolean()),
                            None => batch.num_rows() as u64,
                        };
                    }
                }
                anyhow::Ok(out)
            })
        })
        .collect();
    let mut all = Collected {
        rows: 0,
        values: columns.iter().map(|(_, _, k)| empty(*k)).collect(),
        kept: vec![0; n_filters],
    };
    for task in tasks {
        let part = task.await??;
        all.rows += part.rows;
        for (a, p) in all.kept.iter_mut().zip(part.kept) {
            *a += p;
        }
        for (a, p) in all.values.iter_mut().zip(part.values) {
            match (a, p) {
                (Values::Numeric(a), Values::Numeric(p)) => a.extend(p),
                (Values::Text(a), Values::Text(p)) => a.extend(p),
                _ => unreachable!("same kinds in every partition"),
            }
        }
    }
    Ok(all)
}

fn empty(kind: Kind) -> Values {
    match kind {
        Kind::Numeric | Kind::NumericList => Values::Numeric(Vec::new()),
        Kind::Text | Kind::TextList => Values::Text(Vec::new()),
    }
}

fn count_true(keep: &BooleanArray) -> u64 {
    keep.iter().filter(|k| *k == Some(true)).count() as u64
}

/// Appends the valid values of field `i` of `stats` (lists exploded, nulls dropped).
fn append(stats: &StructArray, i: usize, kind: Kind, out: &mut Values) -> Result<()> {
    let column = stats.column(i);
    // A row whose stats struct is null has none of its fields.
    let valid = |r: usize| stats.is_valid(r) && column.is_valid(r);
    let flat: Arc<dyn Array> = match kind {
        Kind::Numeric | Kind::Text => {
            let rows: Vec<u32> = (0..column.len())
                .filter(|r| valid(*r))
                .map(|r| r as u32)
                .collect();
            datafusion::arrow::compute::take(column.as_ref(), &UInt32Array::from(rows), None)?
        }
        Kind::NumericList | Kind::TextList => {
            let mut parts = Vec::new();
            for r in (0..column.len()).filter(|r| valid(*r)) {
                parts.push(list_value(column.as_ref(), r));
            }
            if parts.is_empty() {
                return Ok(());
            }
            let refs: Vec<&dyn Array> = parts.iter().map(|a| a.as_ref()).collect();
            datafusion::arrow::compute::concat(&refs)?
        }
    };
    match out {
        Values::Numeric(out) => {
            let f = cast(&flat, &DataType::Float64)?;
            out.extend(f.as_primitive::<Float64Type>().iter().flatten());
        }
        Values::Text(out) => {
            let s = cast(&flat, &DataType::Utf8)?;
            out.extend(s.as_string::<i32>().iter().flatten().map(str::to_string));
        }
    }
    Ok(())
}

fn list_value(column: &dyn Array, row: usize) -> Arc<dyn Array> {
    match column.data_type() {
        DataType::LargeList(_) => column.as_list::<i64>().value(row),
        _ => column.as_list::<i32>().value(row),
    }
}

/// Where the analysis goes by default: `analysis/` next to the export.
pub(crate) fn default_output(recipe: &Recipe) -> PathBuf {
    Path::new(&recipe.export_path)
        .parent()
        .unwrap_or(Path::new("."))
        .join("analysis")
}
