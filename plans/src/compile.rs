//! Recipe -> DataFusion `LogicalPlan`.
//!
//! Mappers become a projection rewriting the text column with the op's UDF; filters add their
//! stat to the `__dj__stats__` struct (reusing a stat the input already has, as Data-Juicer does)
//! and filter on its range; deduplicators add their hash column and a global `DjDedup` node.
//! Every op ends in a `DjOp` boundary node that labels the plan and counts the op's output.

use std::collections::BTreeMap;
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Fields};
use datafusion::common::{Column, DFSchema, DataFusionError};
use datafusion::datasource::{TableProvider, provider_as_source};
use datafusion::functions::core::expr_fn::{get_field, named_struct};
use datafusion::logical_expr::{Expr, Extension, LogicalPlan, LogicalPlanBuilder, lit};
use dj_udfs::{Operator, PY_MAXSIZE, STATS_COLUMN, StatRange};

use crate::nodes::dedup::{Concurrency, DedupBarrier};
use crate::nodes::{
    Boundary, CheckpointNode, CheckpointTarget, DedupNode, OpBoundaryNode, OpCounters,
};
use crate::recipe::{OpConfig, Recipe};

#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error(
        "process entry {entry} ({op}): text column `{column}` is not in the input; its columns are: {available}"
    )]
    MissingColumn {
        entry: usize,
        op: String,
        column: String,
        available: String,
    },
    #[error(
        "process entry {entry} ({op}): column `{column}` must be a string column, it is {actual}"
    )]
    NotText {
        entry: usize,
        op: String,
        column: String,
        actual: String,
    },
    #[error("input column `{STATS_COLUMN}` must be a struct of stats, it is {0}")]
    BadStats(String),
    #[error(transparent)]
    DataFusion(#[from] DataFusionError),
}

/// The compiled plan and the per-op row counters its `DjOp` nodes fill.
#[derive(Debug, Clone)]
pub struct CompiledRecipe {
    pub plan: LogicalPlan,
    pub counters: Arc<OpCounters>,
}

fn column(name: &str) -> Expr {
    Expr::Column(Column::new_unqualified(name))
}

/// Per-partition compilation context: which logical partition, the dedup barriers shared by all
/// partitions (by op index), and where the checkpoint strategy wants a checkpoint.
pub struct PartitionContext<'a> {
    pub partition: usize,
    pub barriers: &'a BTreeMap<usize, Arc<DedupBarrier>>,
    pub checkpoint: &'a dyn Fn(&OpConfig) -> Option<CheckpointTarget>,
}

/// Compiles all of `recipe.process` over `table` as one stand-alone partition (no checkpoints).
pub fn compile(
    recipe: &Recipe,
    table: Arc<dyn TableProvider>,
) -> Result<CompiledRecipe, CompileError> {
    let barriers = barriers_for(&recipe.process, 1, None, None);
    let ctx = PartitionContext {
        partition: 0,
        barriers: &barriers,
        checkpoint: &|_| None,
    };
    compile_partition(recipe, table, true, &recipe.process, &ctx)
}

/// One [`DedupBarrier`] per deduplicator op, for `partitions` logical partitions.
pub fn barriers_for(
    ops: &[OpConfig],
    partitions: usize,
    dir: Option<&std::path::Path>,
    concurrency: Option<&Arc<Concurrency>>,
) -> BTreeMap<usize, Arc<DedupBarrier>> {
    ops.iter()
        .filter_map(|o| match &o.operator {
            Operator::Deduplicator(d) => {
                let dir = dir.map(|d| d.to_path_buf());
                let barrier =
                    DedupBarrier::new(o.index, d.kind, partitions, dir, concurrency.cloned());
                Some((o.index, barrier))
            }
            _ => None,
        })
        .collect()
}

/// Compiles `ops` (the tail of the process list still to run for this partition) over `table`.
/// With `from_input` the table is the raw input: rows whose text (`text_keys[0]`) is null are
/// dropped first, as Data-Juicer's loader does; a checkpoint table has had that done already.
pub fn compile_partition(
    recipe: &Recipe,
    table: Arc<dyn TableProvider>,
    from_input: bool,
    ops: &[OpConfig],
    ctx: &PartitionContext<'_>,
) -> Result<CompiledRecipe, CompileError> {
    let counters = OpCounters::new(recipe.process.len());
    let mut plan = LogicalPlanBuilder::scan("input", provider_as_source(table), None)?.build()?;
    let text_key = &recipe.text_keys[0];
    let load = if from_input && plan.schema().fields().iter().any(|f| f.name() == text_key) {
        plan = LogicalPlanBuilder::from(plan)
            .filter(column(text_key).is_not_null())?
            .build()?;
        format!("drop rows with null {text_key}")
    } else if from_input {
        "input".to_string()
    } else {
        "from checkpoint".to_string()
    };
    plan = boundary(plan, Boundary::Load, load, "source", &counters);
    for op in ops {
        plan = compile_op(plan, op, &counters, ctx)?;
        plan = boundary(
            plan,
            Boundary::Op(op.index),
            op.name.clone(),
            op.spec.kind.as_str(),
            &counters,
        );
        if let Some(target) = (ctx.checkpoint)(op) {
            plan = LogicalPlan::Extension(Extension {
                node: Arc::new(CheckpointNode {
                    input: plan,
                    target,
                }),
            });
        }
    }
    Ok(CompiledRecipe { plan, counters })
}

fn boundary(
    input: LogicalPlan,
    boundary: Boundary,
    op_name: String,
    kind: &'static str,
    counters: &Arc<OpCounters>,
) -> LogicalPlan {
    LogicalPlan::Extension(Extension {
        node: Arc::new(OpBoundaryNode {
            input,
            boundary,
            op_name,
            kind,
            counters: counters.clone(),
        }),
    })
}

fn check_text_column(schema: &DFSchema, op: &OpConfig) -> Result<(), CompileError> {
    let name = op.text_key();
    let field = schema
        .fields()
        .iter()
        .find(|f| f.name() == name)
        .ok_or_else(|| CompileError::MissingColumn {
            entry: op.index + 1,
            op: op.name.clone(),
            column: name.to_string(),
            available: if schema.fields().is_empty() {
                "none (the input has no rows)".to_string()
            } else {
                schema
                    .fields()
                    .iter()
                    .map(|f| f.name().as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        })?;
    match field.data_type() {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Ok(()),
        other => Err(CompileError::NotText {
            entry: op.index + 1,
            op: op.name.clone(),
            column: name.to_string(),
            actual: other.to_string(),
        }),
    }
}

/// All columns, with `name` replaced by `value` (or appended if absent).
fn with_column(schema: &DFSchema, name: &str, value: Expr) -> Vec<Expr> {
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

fn stats_fields(schema: &DFSchema) -> Result<Option<Fields>, CompileError> {
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
fn range_predicate(stat: Expr, integer_stat: bool, r: &StatRange) -> Option<Expr> {
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

fn compile_op(
    plan: LogicalPlan,
    op: &OpConfig,
    counters: &Arc<OpCounters>,
    ctx: &PartitionContext<'_>,
) -> Result<LogicalPlan, CompileError> {
    let schema = plan.schema().clone();
    check_text_column(&schema, op)?;
    let text = column(op.text_key());
    let builder = LogicalPlanBuilder::from(plan);
    let plan = match &op.operator {
        Operator::Mapper { udf } => builder
            .project(with_column(&schema, op.text_key(), udf.call(vec![text])))?
            .build()?,
        Operator::Filter(f) => {
            let existing = stats_fields(&schema)?;
            let has_stat = existing
                .as_ref()
                .is_some_and(|fs| fs.iter().any(|x| x.name() == f.stat_key));
            let plan = if has_stat {
                builder.build()?
            } else {
                let mut args = Vec::new();
                for field in existing.iter().flatten() {
                    args.push(lit(field.name().as_str()));
                    args.push(get_field(column(STATS_COLUMN), field.name().as_str()));
                }
                args.push(lit(f.stat_key));
                args.push(f.stat_udf.call(vec![text]));
                let computed = builder
                    .project(with_column(&schema, STATS_COLUMN, named_struct(args)))?
                    .build()?;
                boundary(
                    computed,
                    Boundary::Stats(op.index),
                    op.name.clone(),
                    "filter",
                    counters,
                )
            };
            let integer_stat = f.stat_udf.return_type(&[DataType::Utf8])?.is_integer();
            match range_predicate(
                get_field(column(STATS_COLUMN), f.stat_key),
                integer_stat,
                &f.range,
            ) {
                Some(pred) => LogicalPlanBuilder::from(plan).filter(pred)?.build()?,
                None => plan,
            }
        }
        Operator::Deduplicator(d) => {
            let hashed = builder
                .project(with_column(
                    &schema,
                    d.hash_column,
                    d.hash_udf.call(vec![text]),
                ))?
                .build()?;
            LogicalPlan::Extension(Extension {
                node: Arc::new(DedupNode {
                    input: hashed,
                    index: op.index,
                    op_name: op.name.clone(),
                    hash_column: d.hash_column.to_string(),
                    partition: ctx.partition,
                    barrier: ctx
                        .barriers
                        .get(&op.index)
                        .expect("a barrier per dedup op")
                        .clone(),
                }),
            })
        }
    };
    Ok(plan)
}
