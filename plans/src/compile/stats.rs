//! The `__dj__stats__` struct column: which stats it holds, how a new stat is stored in it,
//! the keep predicate of a filter's range over it, and its fields put back in recipe order after
//! a reordered run of filters.

use datafusion::arrow::datatypes::{DataType, Fields};
use datafusion::common::{Column, DFSchema};
use datafusion::functions::core::expr_fn::{get_field, named_struct};
use datafusion::logical_expr::{Expr, LogicalPlan, LogicalPlanBuilder, lit};
use dj_udfs::columns::STATS_COLUMN;
use dj_udfs::{Operator, PY_MAXSIZE, StatRange};

use super::error::CompileError;
use crate::recipe::OpConfig;

/// Whether a run over `input` keeps its stats as Data-Juicer's JSON column, which rounds every
/// new float stat to 10 significant decimals: when Data-Juicer creates `__dj__stats__` itself,
/// or the input's stats objects have varying keys. Rows that carry `__dj__stats__` objects
/// with the same keys keep them as a struct, and new stats stay exact.
pub fn json_stats(input: &crate::source::InputIndex) -> bool {
    json_stats_of(&input.schema) || input.json_types.is_generic_column(STATS_COLUMN)
}

/// [`json_stats`] from a schema alone (no generic JSON fields known).
pub(super) fn json_stats_of(input: &datafusion::arrow::datatypes::Schema) -> bool {
    !matches!(
        input.field_with_name(STATS_COLUMN).map(|f| f.data_type()),
        Ok(DataType::Struct(_))
    )
}

/// A newly computed stat as the run stores it: through Data-Juicer's JSON round trip when
/// `json` and the value holds floats.
pub(super) fn stored_stat(value: Expr, value_type: &DataType, json: bool) -> Expr {
    if json && dj_udfs::filter::json_stats::has_float(value_type) {
        dj_udfs::filter::json_stats::json_stats_udf().call(vec![value])
    } else {
        value
    }
}

/// The names of the stats in `__dj__stats__` (none without the column).
pub(super) fn stat_names(schema: &DFSchema) -> Result<Vec<String>, CompileError> {
    Ok(stats_fields(schema)?
        .iter()
        .flatten()
        .map(|f| f.name().clone())
        .collect())
}

/// Rebuilds `__dj__stats__` after a reordered run of filters (`run`) so that the stats it added
/// follow the ones it found (`before`) in the order the recipe lists the filters, as running them
/// in that order would have added them (the export and `keep_stats_in_res_ds` show that order).
pub(super) fn stats_in_recipe_order(
    plan: LogicalPlan,
    before: &[String],
    run: &[OpConfig],
) -> Result<LogicalPlan, CompileError> {
    let schema = plan.schema().clone();
    let current = stat_names(&schema)?;
    let mut by_entry: Vec<&OpConfig> = run.iter().collect();
    by_entry.sort_by_key(|op| op.entry);
    let mut order: Vec<&str> = before
        .iter()
        .map(String::as_str)
        .filter(|n| current.iter().any(|c| c == n))
        .collect();
    for op in by_entry {
        let keys: Vec<&str> = match &op.operator {
            Operator::Filter(f) => vec![f.stat_key],
            Operator::FieldFilter(f) => f.stats.iter().map(|s| s.key.as_str()).collect(),
            _ => Vec::new(),
        };
        for key in keys {
            if current.iter().any(|c| c == key) && !order.contains(&key) {
                order.push(key);
            }
        }
    }
    for name in &current {
        if !order.contains(&name.as_str()) {
            order.push(name);
        }
    }
    if order.iter().zip(&current).all(|(a, b)| a == b) {
        return Ok(plan);
    }
    let mut args = Vec::with_capacity(order.len() * 2);
    for name in order {
        args.push(lit(name));
        args.push(get_field(column(STATS_COLUMN), name));
    }
    Ok(LogicalPlanBuilder::from(plan)
        .project(with_column(&schema, STATS_COLUMN, named_struct(args)))?
        .build()?)
}

pub(super) fn stats_fields(schema: &DFSchema) -> Result<Option<Fields>, CompileError> {
    match schema.fields().iter().find(|f| f.name() == STATS_COLUMN) {
        None => Ok(None),
        Some(f) => match f.data_type() {
            DataType::Struct(fields) => Ok(Some(fields.clone())),
            // An all-null stats column from an input file: treated as empty.
            DataType::Null => Ok(Some(Fields::empty())),
            other => Err(CompileError::BadStats(other.to_string())),
        },
    }
}

/// The keep predicate of a filter. Bounds are integer literals for integer stats (no casts);
/// a bound at `sys.maxsize` or beyond is dropped, since no stat reaches it.
pub(super) fn range_predicate(stat: Expr, integer_stat: bool, r: &StatRange) -> Option<Expr> {
    let bound = |v: f64| {
        if integer_stat && v.fract() == 0.0 && v.abs() < 9.2e18 {
            lit(v as i64)
        } else {
            lit(v)
        }
    };
    let max = r.max.filter(|v| *v < PY_MAXSIZE as f64);
    let lo = r.min.map(|v| {
        if r.min_closed {
            stat.clone().gt_eq(bound(v))
        } else {
            stat.clone().gt(bound(v))
        }
    });
    let hi = max.map(|v| {
        if r.max_closed {
            stat.clone().lt_eq(bound(v))
        } else {
            stat.clone().lt(bound(v))
        }
    });
    let keep = match (lo, hi) {
        (Some(a), Some(b)) => Some(a.and(b)),
        (a, b) => a.or(b),
    }?;
    // A null stat (null text) is never kept, in either direction.
    Some(if r.reversed {
        stat.is_not_null().and(Expr::Not(Box::new(keep)))
    } else {
        keep
    })
}

pub(super) fn column(name: &str) -> Expr {
    Expr::Column(Column::new_unqualified(name))
}

/// All columns, with `name` replaced by `value` (or appended if absent).
pub(super) fn with_column(schema: &DFSchema, name: &str, value: Expr) -> Vec<Expr> {
    let mut exprs: Vec<Expr> = Vec::with_capacity(schema.fields().len() + 1);
    let mut value = Some(value.alias(name));
    for f in schema.fields() {
        if f.name() == name {
            exprs.push(value.take().unwrap());
        } else {
            exprs.push(column(f.name()));
        }
    }
    exprs.extend(value);
    exprs
}
