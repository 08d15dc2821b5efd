//! Recipe -> DataFusion `LogicalPlan`.
//!
//! Mappers become a projection rewriting the text column with the op's UDF; filters add their
//! stat to the `__dj__stats__` struct (reusing a stat the input already has, as Data-Juicer does)
//! and filter on its range; deduplicators add their hash column and a global `DjDedup` node.
//! Every op ends in a `DjOp` boundary node that labels the plan and counts the op's output.

use std::collections::BTreeMap;
use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::DFSchema;
use datafusion::datasource::{TableProvider, provider_as_source};
use datafusion::functions::core::expr_fn::{get_field, named_struct};
use datafusion::logical_expr::{
    Expr, ExprSchemable, Extension, LogicalPlan, LogicalPlanBuilder, cast, lit,
};
use dj_udfs::columns::{
    HASH_COLUMN, JOINT_STATS_COLUMN, MEDIA_MAPPED_COLUMN, META_COLUMN, ORDER_COLUMN,
    SELECT_KEY_COLUMN, SOURCE_FILE_COLUMN, STATS_COLUMN,
};
use dj_udfs::{DedupReads, MediaMapperOp, MediaMapperShape, Operator, SelectorKind, SelectorOp};

use crate::nodes::dedup::DedupBarrier;
use crate::nodes::{
    Boundary, CheckpointNode, CheckpointTarget, Concurrency, DedupNode, OpBoundaryNode, OpCounters,
};
use crate::nodes::{SelectBarrier, SelectNode};
use crate::recipe::{OpConfig, Recipe};

mod error;
mod stats;

pub use error::CompileError;
pub use stats::json_stats;
use stats::{
    column, json_stats_of, range_predicate, stat_names, stats_fields, stats_in_recipe_order,
    stored_stat, with_column,
};

/// The compiled plan and the per-op row counters its `DjOp` nodes fill.
#[derive(Debug, Clone)]
pub struct CompiledRecipe {
    pub plan: LogicalPlan,
    pub counters: Arc<OpCounters>,
}

/// Per-partition compilation context: which logical partition, the dedup barriers shared by all
/// partitions (by op index), and where the checkpoint strategy wants a checkpoint.
pub struct PartitionContext<'a> {
    pub partition: usize,
    pub barriers: &'a BTreeMap<usize, Arc<DedupBarrier>>,
    /// The selector barriers shared by all partitions (by op index).
    pub selectors: &'a BTreeMap<usize, Arc<SelectBarrier>>,
    pub checkpoint: &'a dyn Fn(&OpConfig) -> Option<CheckpointTarget>,
    /// Whether new stats pass Data-Juicer's JSON round trip (see [`json_stats`]).
    pub json_stats: bool,
}

/// Compiles all of `recipe.process` over `table` as one stand-alone partition (no checkpoints).
pub fn compile(
    recipe: &Recipe,
    table: Arc<dyn TableProvider>,
) -> Result<CompiledRecipe, CompileError> {
    let mut barriers = Barriers::new(&recipe.process, 1, None, None);
    barriers.json_stats = json_stats_of(&table.schema());
    compile_partition(
        recipe,
        table,
        true,
        &recipe.process,
        &barriers.context(0, &|_| None),
    )
}

/// The global meeting points of a run: one barrier per dedup op and per selector op.
pub struct Barriers {
    pub dedup: BTreeMap<usize, Arc<DedupBarrier>>,
    pub select: BTreeMap<usize, Arc<SelectBarrier>>,
    /// Whether the run stores stats as Data-Juicer's JSON column (see [`json_stats`]).
    pub json_stats: bool,
}

impl Barriers {
    pub fn new(
        ops: &[OpConfig],
        partitions: usize,
        dir: Option<&std::path::Path>,
        concurrency: Option<&Arc<Concurrency>>,
    ) -> Self {
        let mut barriers = Barriers {
            dedup: BTreeMap::new(),
            select: BTreeMap::new(),
            json_stats: true,
        };
        let dir = || dir.map(|d| d.to_path_buf());
        for o in ops {
            match &o.operator {
                Operator::Deduplicator(d) => {
                    let b =
                        DedupBarrier::new(o.index, d.kind, partitions, dir(), concurrency.cloned());
                    barriers.dedup.insert(o.index, b);
                }
                Operator::Selector(s) => {
                    let b = SelectBarrier::new(
                        o.index,
                        s.kind.clone(),
                        partitions,
                        dir(),
                        concurrency.cloned(),
                    );
                    barriers.select.insert(o.index, b);
                }
                _ => {}
            }
        }
        barriers
    }

    /// Bounds what each deduplicator and selector holds in memory by `budget` (shared by all).
    pub fn with_budget(self, budget: &Arc<crate::nodes::MemoryBudget>) -> Self {
        for barrier in self.dedup.values() {
            barrier.set_budget(budget.clone());
        }
        for barrier in self.select.values() {
            barrier.set_budget(budget.clone());
        }
        self
    }

    /// Sets how the run stores stats from its raw input (see [`json_stats`]).
    pub fn with_input(mut self, input: &crate::source::InputIndex) -> Self {
        self.json_stats = json_stats(input);
        self
    }

    /// Loads the persisted keys / values partition `p` gave every global op up to `op` (it
    /// resumes after `op`); names the first global op whose file is missing.
    pub fn load_persisted(
        &self,
        p: usize,
        op: usize,
        decided_in_stages: &dyn Fn(&DedupBarrier) -> bool,
    ) -> std::io::Result<Result<(), usize>> {
        for (d, barrier) in self.dedup.range(..=op) {
            if !decided_in_stages(barrier) && !barrier.load_persisted(p)? {
                return Ok(Err(*d));
            }
        }
        for (d, barrier) in self.select.range(..=op) {
            if !barrier.load_persisted(p)? {
                return Ok(Err(*d));
            }
        }
        Ok(Ok(()))
    }

    /// The compile context of partition `p`.
    pub fn context<'a>(
        &'a self,
        partition: usize,
        checkpoint: &'a dyn Fn(&OpConfig) -> Option<CheckpointTarget>,
    ) -> PartitionContext<'a> {
        PartitionContext {
            partition,
            barriers: &self.dedup,
            selectors: &self.select,
            checkpoint,
            json_stats: self.json_stats,
        }
    }
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
    let mut load = load;
    if from_input && let Some((p, note)) = absolute_media_paths(plan.clone(), recipe)? {
        plan = p;
        load = format!("{load}; {note}");
    }
    plan = boundary(plan, Boundary::Load, load, "source", &counters);
    // The stats a reordered run of filters found, for putting the ones it adds in recipe order.
    let mut stats_before_run = stat_names(plan.schema())?;
    for op in ops {
        let run = recipe.reordered.iter().find(|r| r.contains(&op.index));
        if run.is_some_and(|r| r.start == op.index) {
            stats_before_run = stat_names(plan.schema())?;
        }
        plan = compile_op(plan, op, &counters, ctx, recipe.keep_hashes_in_res_ds)?;
        if let Some(run) = run.filter(|r| r.end == op.index + 1) {
            plan = stats_in_recipe_order(plan, &stats_before_run, &recipe.process[run.clone()])?;
        }
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
            entry: op.entry + 1,
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
            entry: op.entry + 1,
            op: op.name.clone(),
            column: name.to_string(),
            actual: other.to_string(),
        }),
    }
}

/// A filter's stats added to `__dj__stats__` (only those the rows do not already carry, as
/// Data-Juicer skips a stat that is there), without filtering, and the predicate of the rows the
/// filter keeps (`None`: unbounded, it keeps every row). The compiler filters on it; `dj-analyze`
/// counts it. With `counters`, the computation is labelled as the op's stats in the plan. With
/// `exact` every row's stat is computed in full (the analyzer reports them all); otherwise a
/// rejected row's stat may be computed only as far as the filter's decision needs
/// (`FilterOp::decide_udf`): the rows kept, and their stats, are the same.
pub fn filter_stats(
    plan: LogicalPlan,
    op: &OpConfig,
    counters: Option<&Arc<OpCounters>>,
    json_stats: bool,
    exact: bool,
) -> Result<(LogicalPlan, Option<Expr>), CompileError> {
    let f = match &op.operator {
        Operator::Filter(f) => f,
        Operator::FieldFilter(f) => {
            return field_filter_stats(plan, op, f, counters, json_stats)
                .map(|(p, keep)| (p, Some(keep)));
        }
        _ => panic!("filter_stats of {}, which is not a filter", op.name),
    };
    let schema = plan.schema().clone();
    check_text_column(&schema, op)?;
    let stat_type = f.stat_udf.return_type(&[DataType::Utf8])?;
    let existing = stats_fields(&schema)?;
    let has_stat = existing
        .as_ref()
        .is_some_and(|fs| fs.iter().any(|x| x.name() == f.stat_key));
    let plan = if has_stat {
        plan
    } else {
        let mut args = Vec::new();
        for field in existing.iter().flatten() {
            args.push(lit(field.name().as_str()));
            args.push(get_field(column(STATS_COLUMN), field.name().as_str()));
        }
        args.push(lit(f.stat_key));
        let udf = match &f.decide_udf {
            Some(decide) if !exact => decide,
            _ => &f.stat_udf,
        };
        let stat = udf.call(vec![column(op.text_key())]);
        args.push(stored_stat(stat, &stat_type, json_stats));
        let computed = LogicalPlanBuilder::from(plan)
            .project(with_column(&schema, STATS_COLUMN, named_struct(args)))?
            .build()?;
        stats_boundary(computed, op, counters)
    };
    let keep = range_predicate(
        get_field(column(STATS_COLUMN), f.stat_key),
        stat_type.is_integer(),
        &f.range,
    );
    Ok((plan, keep))
}

fn stats_boundary(
    plan: LogicalPlan,
    op: &OpConfig,
    counters: Option<&Arc<OpCounters>>,
) -> LogicalPlan {
    match counters {
        Some(counters) => boundary(
            plan,
            Boundary::Stats(op.index),
            op.name.clone(),
            "filter",
            counters,
        ),
        None => plan,
    }
}

fn compile_op(
    plan: LogicalPlan,
    op: &OpConfig,
    counters: &Arc<OpCounters>,
    ctx: &PartitionContext<'_>,
    keep_hashes: bool,
) -> Result<LogicalPlan, CompileError> {
    let schema = plan.schema().clone();
    if let Operator::FieldFilter(_) = &op.operator {
        let (plan, keep) = filter_stats(plan, op, Some(counters), ctx.json_stats, false)?;
        let keep = keep.expect("a field filter always has a keep predicate");
        return Ok(LogicalPlanBuilder::from(plan).filter(keep)?.build()?);
    }
    if let Operator::Selector(s) = &op.operator {
        return compile_selector(plan, op, s, ctx);
    }
    if let Operator::MediaMapper(m) = &op.operator {
        return compile_media_mapper(plan, op, m, counters);
    }
    if matches!(op.operator, Operator::Deduplicator(_))
        && schema.fields().iter().any(|f| f.name() == ORDER_COLUMN)
    {
        return Err(CompileError::DedupAfterSelector {
            entry: op.entry + 1,
            op: op.name.clone(),
        });
    }
    check_text_column(&schema, op)?;
    let text = column(op.text_key());
    let builder = LogicalPlanBuilder::from(plan);
    let plan = match &op.operator {
        Operator::Mapper { udf } => builder
            .project(with_column(&schema, op.text_key(), udf.call(vec![text])))?
            .build()?,
        Operator::Filter(_) => {
            let (plan, keep) =
                filter_stats(builder.build()?, op, Some(counters), ctx.json_stats, false)?;
            match keep {
                Some(pred) => LogicalPlanBuilder::from(plan).filter(pred)?.build()?,
                None => plan,
            }
        }
        Operator::FieldFilter(_) | Operator::Selector(_) | Operator::MediaMapper(_) => {
            unreachable!("handled above")
        }
        Operator::Deduplicator(d) => {
            let barrier = ctx
                .barriers
                .get(&op.index)
                .expect("a barrier per dedup op")
                .clone();
            // Decided already (a cluster run decides dedups before sending the plans): the
            // rows are kept by position, so the hash is not computed again, unless exported or
            // it drops the rows whose files cannot be read (the positions count without them).
            let reads_media = matches!(d.reads, DedupReads::Media { .. });
            let hash = if !keep_hashes && !reads_media && barrier.mask(ctx.partition)?.is_some() {
                let hash_type = d.hash_udf.return_type(&[DataType::Utf8])?;
                lit(datafusion::common::ScalarValue::try_from(&hash_type)?)
            } else {
                d.hash_udf.call(dedup_args(&schema, &d.reads, text))
            };
            let mut hashed = builder
                .project(with_column(&schema, d.hash_column, hash))?
                .build()?;
            if reads_media {
                // An empty hash: the sample's files could not be read; it is dropped. The
                // boundary keeps the filter from being pushed below the projection, which would
                // hash every file twice.
                let h = column(d.hash_column);
                hashed = LogicalPlanBuilder::from(stats_boundary(hashed, op, Some(counters)))
                    .filter(h.clone().is_null().or(h.not_eq(lit(""))))?
                    .build()?;
            }
            let deduped = LogicalPlan::Extension(Extension {
                node: Arc::new(DedupNode {
                    input: hashed,
                    index: op.index,
                    op_name: op.name.clone(),
                    hash_column: d.hash_column.to_string(),
                    partition: ctx.partition,
                    barrier,
                }),
            });
            match &d.reads {
                DedupReads::Media { and_text, .. } if keep_hashes => {
                    exported_media_hashes(deduped, d.hash_column, *and_text)?
                }
                _ => deduped,
            }
        }
    };
    Ok(plan)
}

/// A media deduplicator's hash column as Data-Juicer exports it (`keep_hashes_in_res_ds`): an
/// empty string for a sample without files (null here, so that such samples are all kept) and,
/// with `consider_text`, the text's MD5 in `__dj__hash` before it (one `media\ttext` key here).
fn exported_media_hashes(
    plan: LogicalPlan,
    hash_column: &str,
    and_text: bool,
) -> Result<LogicalPlan, CompileError> {
    use datafusion::functions::core::expr_fn::coalesce;
    use datafusion::functions::string::expr_fn::split_part;
    let mut exprs = Vec::new();
    for f in plan.schema().fields() {
        let name = f.name().as_str();
        if name == HASH_COLUMN && and_text {
            continue;
        }
        if name != hash_column {
            exprs.push(column(name));
        } else if and_text {
            let h = column(hash_column);
            exprs.push(split_part(h.clone(), lit("\t"), lit(2i64)).alias(HASH_COLUMN));
            exprs.push(split_part(h, lit("\t"), lit(1i64)).alias(hash_column));
        } else {
            exprs.push(coalesce(vec![column(hash_column), lit("")]).alias(hash_column));
        }
    }
    Ok(LogicalPlanBuilder::from(plan).project(exprs)?.build()?)
}

/// A media mapper: its UDF's struct per sample in a temporary column (behind a boundary, so the
/// filter is not pushed below it and each file is written once), the samples whose files could
/// not be read dropped, then the media column and `__dj__source_file__` (replaced, or added at
/// the end) taken from the struct.
fn compile_media_mapper(
    plan: LogicalPlan,
    op: &OpConfig,
    m: &MediaMapperOp,
    counters: &Arc<OpCounters>,
) -> Result<LogicalPlan, CompileError> {
    match &m.shape {
        MediaMapperShape::Expands => return compile_media_splitter(plan, op, m, counters),
        MediaMapperShape::AddsField { field } => {
            return compile_media_field(plan, op, m, field, counters);
        }
        MediaMapperShape::OnePerSample => {}
    }
    let schema = plan.schema().clone();
    let call = m.udf.call(vec![
        column_or_null(&schema, &m.column),
        column_or_null(&schema, SOURCE_FILE_COLUMN),
    ]);
    let mapped = LogicalPlanBuilder::from(plan)
        .project(with_column(&schema, MEDIA_MAPPED_COLUMN, call))?
        .build()?;
    let mapped = LogicalPlanBuilder::from(stats_boundary(mapped, op, Some(counters)))
        .filter(get_field(column(MEDIA_MAPPED_COLUMN), "ok"))?
        .build()?;
    let exprs = mapped_columns(&schema, &m.column, None);
    Ok(LogicalPlanBuilder::from(mapped).project(exprs)?.build()?)
}

/// The columns after a media mapper, from its struct in `__dj__media_mapped`: the media column's
/// `paths`, `__dj__source_file__` (replaced, or added at the end) and, with `text`, that text
/// column (cast back to its type); the other columns copied.
fn mapped_columns(schema: &DFSchema, media: &str, text: Option<&str>) -> Vec<Expr> {
    let field = |name: &str| get_field(column(MEDIA_MAPPED_COLUMN), name);
    let mut exprs: Vec<Expr> = schema
        .fields()
        .iter()
        .map(|f| match f.name().as_str() {
            n if Some(n) == text => cast(field("text"), f.data_type().clone()).alias(n),
            n if n == media => field("paths").alias(n),
            SOURCE_FILE_COLUMN => field("source_file").alias(SOURCE_FILE_COLUMN),
            n => column(n),
        })
        .collect();
    if !schema
        .fields()
        .iter()
        .any(|f| f.name() == SOURCE_FILE_COLUMN)
    {
        exprs.push(field("source_file").alias(SOURCE_FILE_COLUMN));
    }
    exprs
}

/// A media mapper that makes any number of samples of one: its UDF's list of output samples per
/// sample in a temporary column (behind a boundary, so each file is written once), unnested
/// (in order; an empty list drops the sample), then the text, the media column and
/// `__dj__source_file__` (replaced, or added at the end) taken from each output sample's
/// struct, the other columns copied.
fn compile_media_splitter(
    plan: LogicalPlan,
    op: &OpConfig,
    m: &MediaMapperOp,
    counters: &Arc<OpCounters>,
) -> Result<LogicalPlan, CompileError> {
    let schema = plan.schema().clone();
    check_text_column(&schema, op)?;
    let text_key = op.text_key();
    let call = m.udf.call(vec![
        column(text_key),
        column_or_null(&schema, &m.column),
        column_or_null(&schema, SOURCE_FILE_COLUMN),
    ]);
    let mapped = LogicalPlanBuilder::from(plan)
        .project(with_column(&schema, MEDIA_MAPPED_COLUMN, call))?
        .build()?;
    let unnested = LogicalPlanBuilder::from(stats_boundary(mapped, op, Some(counters)))
        .unnest_column(MEDIA_MAPPED_COLUMN)?
        .build()?;
    let exprs = mapped_columns(&schema, &m.column, Some(text_key));
    Ok(LogicalPlanBuilder::from(unnested).project(exprs)?.build()?)
}

/// A media mapper that adds a field: its UDF's struct per sample in a temporary column (behind a
/// boundary, so each file is written once), the samples whose files could not be read dropped,
/// then the field taken from the struct (replaced, or added at the end after the struct's empty
/// `__dj__meta__` if the sample has none, as Data-Juicer's tagging ops add it).
fn compile_media_field(
    plan: LogicalPlan,
    op: &OpConfig,
    m: &MediaMapperOp,
    field_name: &str,
    counters: &Arc<OpCounters>,
) -> Result<LogicalPlan, CompileError> {
    let schema = plan.schema().clone();
    check_text_column(&schema, op)?;
    let call = m.udf.call(vec![
        column(op.text_key()),
        column_or_null(&schema, &m.column),
        column_or_null(&schema, field_name),
    ]);
    let mapped = LogicalPlanBuilder::from(plan)
        .project(with_column(&schema, MEDIA_MAPPED_COLUMN, call))?
        .build()?;
    let field = |name: &str| get_field(column(MEDIA_MAPPED_COLUMN), name);
    let mapped = LogicalPlanBuilder::from(stats_boundary(mapped, op, Some(counters)))
        .filter(field("ok"))?
        .build()?;
    let has = |name: &str| schema.fields().iter().any(|f| f.name() == name);
    let mut exprs: Vec<Expr> = schema
        .fields()
        .iter()
        .map(|f| match f.name().as_str() {
            n if n == field_name => field("value").alias(n),
            n => column(n),
        })
        .collect();
    if !has(META_COLUMN) {
        exprs.push(field("meta").alias(META_COLUMN));
    }
    if !has(field_name) {
        exprs.push(field("value").alias(field_name));
    }
    Ok(LogicalPlanBuilder::from(mapped).project(exprs)?.build()?)
}

/// The hash UDF's arguments: the text, or the media column (a null when the input has none:
/// no sample has files) and the text if asked.
fn dedup_args(schema: &DFSchema, reads: &DedupReads, text: Expr) -> Vec<Expr> {
    match reads {
        DedupReads::Text => vec![text],
        DedupReads::Media {
            column: c,
            and_text,
        } => {
            let media = column_or_null(schema, c);
            if *and_text {
                vec![media, text]
            } else {
                vec![media]
            }
        }
    }
}

/// Column `name`, or a null for an input without it (media ops treat both as no files).
fn column_or_null(schema: &DFSchema, name: &str) -> Expr {
    if schema.fields().iter().any(|f| f.name() == name) {
        column(name)
    } else {
        lit(datafusion::common::ScalarValue::Null)
    }
}

/// The expression reading dotted `path` (`meta.lang` = field `lang` of struct column `meta`), or
/// `None` when some segment is missing (the error names it).
fn field_expr(schema: &DFSchema, path: &str) -> Result<Expr, (String, String)> {
    let mut segments = path.split('.');
    let first = segments.next().unwrap_or_default();
    let Some(top) = schema.fields().iter().find(|f| f.name() == first) else {
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        return Err((first.to_string(), names.join(", ")));
    };
    let mut expr = column(first);
    let mut data_type = top.data_type().clone();
    let mut walked = first.to_string();
    for seg in segments {
        let DataType::Struct(fields) = &data_type else {
            return Err((
                format!("{walked}.{seg}"),
                format!("`{walked}` is {data_type}, not an object"),
            ));
        };
        let Some(f) = fields.iter().find(|f| f.name() == seg) else {
            let names: Vec<&str> = fields.iter().map(|f| f.name().as_str()).collect();
            return Err((format!("{walked}.{seg}"), names.join(", ")));
        };
        data_type = f.data_type().clone();
        expr = get_field(expr, seg);
        walked = format!("{walked}.{seg}");
    }
    Ok(expr)
}

/// A filter over a non-text field: its stats into `__dj__stats__` (those not already there),
/// and the predicate of the rows its keep UDF accepts.
fn field_filter_stats(
    plan: LogicalPlan,
    op: &OpConfig,
    f: &dj_udfs::FieldFilterOp,
    counters: Option<&Arc<OpCounters>>,
    json_stats: bool,
) -> Result<(LogicalPlan, Expr), CompileError> {
    let schema = plan.schema().clone();
    let input = match field_expr(&schema, &f.field) {
        Ok(e) => e,
        Err(_) if f.optional => lit(datafusion::common::ScalarValue::Null),
        Err((missing, available)) => {
            return Err(CompileError::MissingField {
                entry: op.entry + 1,
                op: op.name.clone(),
                field: f.field.clone(),
                missing,
                available,
            });
        }
    };
    let existing = stats_fields(&schema)?;
    let has = |key: &str| {
        existing
            .as_ref()
            .is_some_and(|fs| fs.iter().any(|x| x.name() == key))
    };
    let missing: Vec<_> = f.stats.iter().filter(|s| !has(&s.key)).collect();
    let plan = if missing.is_empty() {
        plan
    } else {
        // Joint stats are all recomputed when one is missing (as Data-Juicer's language ID does),
        // from one call kept in a temporary column.
        let (plan, stats_input, recompute): (LogicalPlan, _, Vec<&dj_udfs::FieldStat>) =
            match &f.joint {
                Some(joint) => (
                    LogicalPlanBuilder::from(plan)
                        .project(with_column(
                            &schema,
                            JOINT_STATS_COLUMN,
                            joint.call(vec![input.clone()]),
                        ))?
                        .build()?,
                    column(JOINT_STATS_COLUMN),
                    f.stats.iter().collect(),
                ),
                None => (plan, input.clone(), missing),
            };
        let input_schema = plan.schema().clone();
        let compute = |stat: &dj_udfs::FieldStat| -> Result<Expr, CompileError> {
            let value = stat.udf.call(vec![stats_input.clone()]);
            let value_type = value.get_type(&input_schema)?;
            Ok(stored_stat(value, &value_type, json_stats))
        };
        let mut args = Vec::new();
        for field in existing.iter().flatten() {
            let name = field.name().as_str();
            args.push(lit(name));
            match recompute.iter().find(|s| s.key == name) {
                Some(stat) => args.push(compute(stat)?),
                None => args.push(get_field(column(STATS_COLUMN), name)),
            }
        }
        for stat in recompute.iter().filter(|s| !has(&s.key)) {
            args.push(lit(stat.key.as_str()));
            args.push(compute(stat)?);
        }
        let columns = with_column(&schema, STATS_COLUMN, named_struct(args));
        let computed = LogicalPlanBuilder::from(plan).project(columns)?.build()?;
        stats_boundary(computed, op, counters)
    };
    // A filter without stats (suffix_filter) tests the field itself.
    let stat_values = if f.stats.is_empty() {
        vec![input]
    } else {
        f.stats
            .iter()
            .map(|s| get_field(column(STATS_COLUMN), s.key.as_str()))
            .collect()
    };
    Ok((plan, f.keep.call(stat_values)))
}

/// Data-Juicer's loader rewrites relative paths in the image / audio / video columns to paths
/// under the dataset's directory (absolute paths and URLs stay); the export shows the rewritten
/// paths, and the image filters open them. Returns the projected plan and a label, if any
/// media column exists.
fn absolute_media_paths(
    plan: LogicalPlan,
    recipe: &Recipe,
) -> Result<Option<(LogicalPlan, String)>, CompileError> {
    let schema = plan.schema().clone();
    let present: Vec<&String> = recipe
        .media_keys
        .iter()
        .filter(|k| {
            schema.fields().iter().any(|f| {
                f.name() == *k
                    && matches!(f.data_type(), DataType::List(item) if item.data_type() == &DataType::Utf8)
            })
        })
        .collect();
    if present.is_empty() {
        return Ok(None);
    }
    let Some(dir) = crate::source::media::dataset_dir(&recipe.dataset_path) else {
        return Ok(None);
    };
    let join_dir = dir.clone();
    let f = Arc::new(move |args: &[datafusion::arrow::array::ArrayRef]| {
        use datafusion::arrow::array::{Array, AsArray, ListBuilder, StringBuilder};
        let lists = args[0].as_list::<i32>();
        let mut out = ListBuilder::new(StringBuilder::new());
        for row in 0..lists.len() {
            if lists.is_null(row) {
                out.append_null();
                continue;
            }
            let items = lists.value(row);
            for p in items.as_string::<i32>().iter() {
                out.values()
                    .append_option(p.map(|p| crate::source::media::resolve(&join_dir, p)));
            }
            out.append(true);
        }
        Ok(Arc::new(out.finish()) as datafusion::arrow::array::ArrayRef)
    });
    // Not an op: no op name, so the wire codec refuses to ship it.
    let udf = dj_udfs::udf::OpUdf::from_fn(
        dj_udfs::udf::UdfIdentity {
            op: String::new(),
            name: "media_paths_under".into(),
            config: dir.clone(),
        },
        None,
        f,
    );
    let mut exprs = Vec::new();
    for field in schema.fields() {
        let name = field.name();
        if present.contains(&name) {
            exprs.push(udf.call(vec![column(name)]).alias(name));
        } else {
            exprs.push(column(name));
        }
    }
    let plan = LogicalPlanBuilder::from(plan).project(exprs)?.build()?;
    let names: Vec<&str> = present.iter().map(|s| s.as_str()).collect();
    Ok(Some((
        plan,
        format!("{} paths under {dir}", names.join(", ")),
    )))
}

/// A selector: the value column and the order column (kept from an earlier selector, else
/// null), the global `DjSelect` node, then the value column dropped. A selector without a
/// `field_key` (other than `random_selector`) passes the dataset unchanged, as in Data-Juicer.
fn compile_selector(
    plan: LogicalPlan,
    op: &OpConfig,
    s: &SelectorOp,
    ctx: &PartitionContext<'_>,
) -> Result<LogicalPlan, CompileError> {
    use datafusion::common::ScalarValue;
    let schema = plan.schema().clone();
    let value = match (&s.field, &s.value_udf) {
        (Some(field), Some(udf)) => match field_expr(&schema, field) {
            Ok(e) => udf.call(vec![e]),
            Err((missing, available)) => {
                return Err(CompileError::MissingField {
                    entry: op.entry + 1,
                    op: op.name.clone(),
                    field: field.clone(),
                    missing,
                    available,
                });
            }
        },
        _ if matches!(s.kind, SelectorKind::Random { .. }) => lit(ScalarValue::Float64(None)),
        _ => return Ok(plan),
    };
    let mut exprs = with_column(&schema, SELECT_KEY_COLUMN, value);
    if !schema.fields().iter().any(|f| f.name() == ORDER_COLUMN) {
        exprs.push(lit(ScalarValue::UInt64(None)).alias(ORDER_COLUMN));
    }
    let with_value = LogicalPlanBuilder::from(plan).project(exprs)?.build()?;
    let selected = LogicalPlan::Extension(Extension {
        node: Arc::new(SelectNode {
            input: with_value,
            index: op.index,
            op_name: op.name.clone(),
            value_column: SELECT_KEY_COLUMN.to_string(),
            partition: ctx.partition,
            barrier: ctx
                .selectors
                .get(&op.index)
                .expect("a barrier per selector op")
                .clone(),
        }),
    });
    let keep: Vec<Expr> = selected
        .schema()
        .fields()
        .iter()
        .filter(|f| f.name() != SELECT_KEY_COLUMN)
        .map(|f| column(f.name()))
        .collect();
    Ok(LogicalPlanBuilder::from(selected).project(keep)?.build()?)
}
