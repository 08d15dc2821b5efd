//! `dj-sql`: a job directory as SQL tables in a DataFusion `SessionContext`.
//!
//! * `checkpoint_op_XXXX_partition_YYYY`: every checkpoint file (parquet, Arrow IPC, jsonl,
//!   jsonl.gz), named after its file stem; `checkpoint_op_XXXX`: a view that is the `UNION ALL`
//!   of that op's partitions in partition order (JSON checkpoints share one schema inferred over
//!   all of the op's files, so the union lines up).
//! * `export` (and `export_stats`): the job's export, from `job_summary.json`'s `export_files`,
//!   else the recipe copy's `export_path`.
//! * `events`: every event of every `events_*.jsonl`, with a schema inferred over all events in
//!   first-appearance order (events have different keys; `metadata` is a struct).
//! * `input`: the recipe's `dataset_path`, one DataFusion partition per saved logical partition;
//!   `input_partition_YYYY`: each partition's rows `[start_row, end_row)`.
//!
//! Relative paths in the job files are relative to the directory the job was run from, which is
//! recovered from where the job directory is (`work_dir`); the current directory is the fallback.

use std::collections::BTreeMap;
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use clap::{Parser, ValueEnum};
use datafusion::arrow::array::{ArrayRef, RecordBatch, StringBuilder};
use datafusion::arrow::datatypes::{DataType, Field, Fields, Schema, SchemaRef};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::datasource::MemTable;
use datafusion::datasource::file_format::file_compression_type::FileCompressionType;
use datafusion::datasource::file_format::options::ArrowReadOptions;
use datafusion::prelude::{JsonReadOptions, ParquetReadOptions, SessionConfig, SessionContext};
use dj_plans::nodes::checkpoint::parse_checkpoint_file_name;
use dj_plans::source::{InputIndex, RowRange, RowRangeTable};
use serde::Serialize;
use serde_json::Value;

use crate::events::load_events;
use crate::job::JobPaths;
use crate::jobtools::{effective_recipe, is_job_dir, load_job_summary};
use crate::partitioning::PartitioningInfo;

/// A table (or view) registered for a job.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TableEntry {
    pub name: String,
    /// `checkpoint`, `checkpoint view`, `export`, `export stats`, `events`, `input`,
    /// `input partition`.
    pub kind: String,
    /// Where its rows come from.
    pub source: String,
}

/// A job's tables in a DataFusion session.
pub struct JobSql {
    pub ctx: SessionContext,
    pub job_dir: PathBuf,
    pub tables: Vec<TableEntry>,
    /// Parts of the job that could not be registered (missing export, unreadable input, ...).
    pub warnings: Vec<String>,
}

impl std::fmt::Debug for JobSql {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobSql")
            .field("job_dir", &self.job_dir)
            .field("tables", &self.tables)
            .field("warnings", &self.warnings)
            .finish()
    }
}

/// A query's result.
#[derive(Debug, Clone)]
pub struct QueryResult {
    pub schema: SchemaRef,
    pub batches: Vec<RecordBatch>,
}

impl QueryResult {
    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(|b| b.num_rows()).sum()
    }
}

/// How `dj-sql` prints results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// An aligned table.
    Table,
    /// CSV with a header (nested values as text).
    Csv,
    /// A JSON array of objects (nulls explicit).
    Json,
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn path_str(p: &Path) -> Result<String> {
    let abs = std::path::absolute(p)?;
    abs.to_str()
        .map(str::to_string)
        .with_context(|| format!("path is not UTF-8: {}", abs.display()))
}

fn normal_components(p: &Path) -> Vec<Component<'_>> {
    p.components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect()
}

/// `full` without the trailing components `suffix`, if it ends with them.
fn strip_suffix(full: &Path, suffix: &Path) -> Option<PathBuf> {
    let f = normal_components(full);
    let s = normal_components(suffix);
    if s.is_empty() || s.len() > f.len() || f[f.len() - s.len()..] != s[..] {
        return None;
    }
    Some(f[..f.len() - s.len()].iter().collect())
}

/// Candidate directories the job was run from, most likely first; the current directory last.
fn run_dirs(job_dir: &Path, summary: Option<&Value>, recipe: Option<&Value>) -> Vec<PathBuf> {
    let mut bases = Vec::new();
    let Ok(abs) = std::path::absolute(job_dir) else {
        return vec![PathBuf::from(".")];
    };
    let id = file_name(&abs);
    let relative = |s: &str| Path::new(s).is_relative().then(|| PathBuf::from(s));
    if let Some(w) = summary
        .and_then(|s| s["work_dir"].as_str())
        .and_then(relative)
    {
        bases.extend(strip_suffix(&abs, &w));
    }
    if let Some(r) = recipe {
        match r["work_dir"].as_str() {
            Some(w) => {
                let w = w.replace("{job_id}", &id);
                if let Some(w) = relative(&w) {
                    let w = if w.file_name().is_some_and(|n| n == id.as_str()) {
                        w
                    } else {
                        w.join(&id)
                    };
                    bases.extend(strip_suffix(&abs, &w));
                }
            }
            None => {
                if let Some(parent) = r["export_path"]
                    .as_str()
                    .and_then(relative)
                    .and_then(|e| e.parent().map(Path::to_path_buf))
                {
                    bases.extend(strip_suffix(&abs, &parent.join(&id)));
                }
            }
        }
    }
    if let Ok(cwd) = std::env::current_dir() {
        bases.push(cwd);
    }
    bases.dedup();
    bases
}

/// `p` resolved against the first candidate directory where it exists (globs: where the
/// directory before the first wildcard exists).
fn resolve(bases: &[PathBuf], p: &str) -> PathBuf {
    let path = Path::new(p);
    if path.is_absolute() || bases.is_empty() {
        return path.to_path_buf();
    }
    let probe = match p.find(['*', '?', '[']) {
        Some(i) => Path::new(&p[..i])
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default(),
        None => path.to_path_buf(),
    };
    bases
        .iter()
        .find(|b| b.join(&probe).exists())
        .unwrap_or(&bases[0])
        .join(path)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CkFormat {
    Parquet,
    Arrow,
    Jsonl,
    JsonlGz,
}

impl CkFormat {
    fn of(name: &str) -> Option<CkFormat> {
        Some(if name.ends_with(".parquet") {
            CkFormat::Parquet
        } else if name.ends_with(".arrow") {
            CkFormat::Arrow
        } else if name.ends_with(".jsonl.gz") {
            CkFormat::JsonlGz
        } else if name.ends_with(".jsonl") {
            CkFormat::Jsonl
        } else {
            return None;
        })
    }
    fn json_options(self) -> JsonReadOptions<'static> {
        let o = JsonReadOptions::default().schema_infer_max_records(usize::MAX);
        if self == CkFormat::JsonlGz {
            o.file_extension(".jsonl.gz")
                .file_compression_type(FileCompressionType::GZIP)
        } else {
            o.file_extension(".jsonl")
        }
    }
}

impl JobSql {
    /// Registers every table of the job in `job_dir`.
    pub async fn open(job_dir: &Path) -> Result<JobSql> {
        if !job_dir.is_dir() {
            bail!("Job directory not found: {}", job_dir.display());
        }
        if !is_job_dir(job_dir) {
            bail!(
                "{} is not a job directory (no events_*.jsonl, job_summary.json or .lock)",
                job_dir.display()
            );
        }
        let config = SessionConfig::new().with_information_schema(true);
        let mut s = JobSql {
            ctx: SessionContext::new_with_config(config),
            job_dir: job_dir.to_path_buf(),
            tables: vec![],
            warnings: vec![],
        };
        let summary = load_job_summary(job_dir).unwrap_or(None);
        let recipe = effective_recipe(job_dir);
        let bases = run_dirs(job_dir, summary.as_ref(), recipe.as_ref());
        s.register_checkpoints().await;
        s.register_export(summary.as_ref(), recipe.as_ref(), &bases)
            .await;
        if let Err(e) = s.register_events() {
            s.warnings
                .push(format!("table `events` not registered: {e:#}"));
        }
        s.register_input(recipe.as_ref(), &bases).await;
        Ok(s)
    }

    fn add(&mut self, name: &str, kind: &str, source: impl Into<String>) {
        self.tables.push(TableEntry {
            name: name.into(),
            kind: kind.into(),
            source: source.into(),
        });
    }

    async fn register_checkpoints(&mut self) {
        let dir = self.job_dir.join("checkpoints");
        let mut by_op: BTreeMap<usize, BTreeMap<usize, PathBuf>> = BTreeMap::new();
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some((op, p)) = parse_checkpoint_file_name(&name) {
                by_op.entry(op).or_default().insert(p, entry.path());
            }
        }
        for (op, parts) in by_op {
            if let Err(e) = self.register_op(op, &parts).await {
                self.warnings
                    .push(format!("checkpoints of op {op} not registered: {e:#}"));
            }
        }
    }

    async fn register_op(&mut self, op: usize, parts: &BTreeMap<usize, PathBuf>) -> Result<()> {
        // JSON checkpoints: one schema inferred over every record of the op's files.
        let mut json_schemas: BTreeMap<&'static str, Schema> = BTreeMap::new();
        for fmt in [CkFormat::Jsonl, CkFormat::JsonlGz] {
            let files: Vec<String> = parts
                .values()
                .filter(|p| CkFormat::of(&file_name(p)) == Some(fmt))
                .map(|p| path_str(p))
                .collect::<Result<_>>()?;
            if !files.is_empty() {
                let df = self.ctx.read_json(files, fmt.json_options()).await?;
                json_schemas.insert(
                    if fmt == CkFormat::Jsonl { "j" } else { "g" },
                    df.schema().as_arrow().clone(),
                );
            }
        }
        let mut names = Vec::new();
        for path in parts.values() {
            let file = file_name(path);
            let name = file.split('.').next().unwrap_or_default().to_string();
            let p = path_str(path)?;
            let registered = match CkFormat::of(&file) {
                Some(CkFormat::Parquet) => {
                    self.ctx
                        .register_parquet(&name, &p, ParquetReadOptions::default())
                        .await
                }
                Some(CkFormat::Arrow) => {
                    self.ctx
                        .register_arrow(&name, &p, ArrowReadOptions::default())
                        .await
                }
                Some(fmt @ (CkFormat::Jsonl | CkFormat::JsonlGz)) => {
                    let schema = &json_schemas[if fmt == CkFormat::Jsonl { "j" } else { "g" }];
                    self.ctx
                        .register_json(&name, &p, fmt.json_options().schema(schema))
                        .await
                }
                None => continue,
            };
            match registered {
                Ok(()) => {
                    self.add(&name, "checkpoint", path.display().to_string());
                    names.push(name);
                }
                Err(e) => self.warnings.push(format!("{}: {e}", path.display())),
            }
        }
        if names.is_empty() {
            return Ok(());
        }
        let view = format!("checkpoint_op_{op:04}");
        let union = names
            .iter()
            .map(|n| format!("SELECT * FROM {n}"))
            .collect::<Vec<_>>()
            .join(" UNION ALL ");
        let created = self
            .ctx
            .sql(&format!("CREATE VIEW {view} AS {union}"))
            .await;
        if created.is_err() {
            // Differing schemas: line the partitions up by column name instead.
            let mut df = self.ctx.table(names[0].as_str()).await?;
            for n in &names[1..] {
                df = df.union_by_name(self.ctx.table(n.as_str()).await?)?;
            }
            self.ctx.register_table(view.as_str(), df.into_view())?;
        }
        let source = format!(
            "UNION ALL of {} partition{} ({})",
            names.len(),
            if names.len() == 1 { "" } else { "s" },
            names.join(", ")
        );
        self.add(&view, "checkpoint view", source);
        Ok(())
    }

    async fn register_export(
        &mut self,
        summary: Option<&Value>,
        recipe: Option<&Value>,
        bases: &[PathBuf],
    ) {
        let listed: Option<Vec<PathBuf>> =
            summary
                .and_then(|s| s["export_files"].as_array())
                .map(|files| {
                    files
                        .iter()
                        .filter_map(|f| f.as_str())
                        .map(|f| resolve(bases, f))
                        .collect()
                });
        let files = match listed {
            Some(files) => files,
            None => match recipe.and_then(|r| r["export_path"].as_str()) {
                Some(e) => export_files_of(&resolve(bases, e)),
                None => {
                    self.warnings.push(
                        "table `export` not registered: no job_summary.json and no export_path in the recipe copy".into(),
                    );
                    return;
                }
            },
        };
        let (stats, data): (Vec<PathBuf>, Vec<PathBuf>) = files
            .into_iter()
            .partition(|f| file_name(f).ends_with("_stats.jsonl"));
        for (table, kind, files) in [
            ("export", "export", data),
            ("export_stats", "export stats", stats),
        ] {
            if files.is_empty() {
                if table == "export" {
                    self.warnings.push(
                        "table `export` not registered: the job has no export files (yet)".into(),
                    );
                }
                continue;
            }
            if let Some(missing) = files.iter().find(|f| !f.is_file()) {
                self.warnings.push(format!(
                    "table `{table}` not registered: {} not found",
                    missing.display()
                ));
                continue;
            }
            if let Err(e) = self.register_files(table, &files).await {
                self.warnings
                    .push(format!("table `{table}` not registered: {e:#}"));
                continue;
            }
            let source = files
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(", ");
            self.add(table, kind, source);
        }
    }

    /// Registers `files` (all one format: jsonl/json, parquet) as one table.
    async fn register_files(&self, table: &str, files: &[PathBuf]) -> Result<()> {
        let paths: Vec<String> = files.iter().map(|f| path_str(f)).collect::<Result<_>>()?;
        let first = file_name(&files[0]);
        let ext = if first.ends_with(".parquet") {
            ".parquet"
        } else if first.ends_with(".jsonl") {
            ".jsonl"
        } else if first.ends_with(".json") {
            ".json"
        } else {
            bail!("unsupported export format: {first}");
        };
        if let Some(other) = files.iter().find(|f| !file_name(f).ends_with(ext)) {
            bail!("mixed export formats: {first} and {}", file_name(other));
        }
        let df = if ext == ".parquet" {
            self.ctx
                .read_parquet(paths, ParquetReadOptions::default())
                .await?
        } else {
            self.ctx
                .read_json(
                    paths,
                    JsonReadOptions::default()
                        .file_extension(ext)
                        .schema_infer_max_records(usize::MAX),
                )
                .await?
        };
        self.ctx.register_table(table, df.into_view())?;
        Ok(())
    }

    fn register_events(&mut self) -> Result<()> {
        let events = load_events(&self.job_dir);
        let batch = events_batch(&events)?;
        let schema = batch.schema();
        let table = MemTable::try_new(schema, vec![vec![batch]])?;
        self.ctx.register_table("events", Arc::new(table))?;
        let files = crate::events::event_files(&self.job_dir);
        let source = format!(
            "{} events from {}",
            events.len(),
            files
                .iter()
                .map(|f| file_name(f))
                .collect::<Vec<_>>()
                .join(", ")
        );
        self.add("events", "events", source);
        Ok(())
    }

    async fn register_input(&mut self, recipe: Option<&Value>, bases: &[PathBuf]) {
        let info: Option<PartitioningInfo> =
            std::fs::read_to_string(JobPaths::new(self.job_dir.clone()).partitioning_info())
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok());
        let dataset = recipe
            .and_then(|r| r["dataset_path"].as_str())
            .or_else(|| {
                info.as_ref()
                    .map(|i| i.dataset_path.as_str())
                    .filter(|d| !d.is_empty())
            })
            .map(str::to_string);
        let Some(dataset) = dataset else {
            self.warnings.push(
                "table `input` not registered: no dataset_path in the recipe copy or partitioning_info.json".into(),
            );
            return;
        };
        let path = resolve(bases, &dataset);
        let shown = path.display().to_string();
        let index = tokio::task::spawn_blocking(move || InputIndex::build(&shown)).await;
        let index = match index {
            Ok(Ok(i)) => Arc::new(i),
            Ok(Err(e)) => {
                self.warnings
                    .push(format!("table `input` not registered: {e}"));
                return;
            }
            Err(e) => {
                self.warnings
                    .push(format!("table `input` not registered: {e}"));
                return;
            }
        };
        // The saved boundaries, validated as a resume validates them.
        let saved = info.as_ref().map(|i| i.saved_ranges(index.total_rows));
        let contiguous = matches!(saved, Some(Ok(_)));
        let ranges = match saved {
            Some(Ok(saved)) => saved,
            failed => {
                if let Some(Err(e)) = failed {
                    self.warnings.push(format!(
                        "the saved partitions do not fit the input ({e:#}): `input` is the whole input, without input_partition_* tables"
                    ));
                }
                vec![RowRange {
                    start: 0,
                    end: index.total_rows,
                }]
            }
        };
        let source = path.display().to_string();
        let table = RowRangeTable::new(index.clone(), ranges.clone());
        if let Err(e) = self.ctx.register_table("input", Arc::new(table)) {
            self.warnings
                .push(format!("table `input` not registered: {e}"));
            return;
        }
        self.add(
            "input",
            "input",
            format!(
                "{source} ({} rows, {} partition{})",
                index.total_rows,
                ranges.len(),
                if ranges.len() == 1 { "" } else { "s" }
            ),
        );
        if contiguous {
            for (p, r) in ranges.iter().enumerate() {
                let name = format!("input_partition_{p:04}");
                let table = RowRangeTable::new(index.clone(), vec![*r]);
                if self
                    .ctx
                    .register_table(name.as_str(), Arc::new(table))
                    .is_ok()
                {
                    self.add(
                        &name,
                        "input partition",
                        format!("{source} rows [{}, {})", r.start, r.end),
                    );
                }
            }
        }
    }

    /// Runs one SQL statement and collects its result.
    pub async fn query(&self, sql: &str) -> Result<QueryResult> {
        let df = self.ctx.sql(sql).await?;
        let schema = df.schema().inner().clone();
        let batches = df.collect().await?;
        Ok(QueryResult { schema, batches })
    }

    /// `\d`: the registered tables.
    pub fn describe_tables(&self) -> String {
        let wn = self
            .tables
            .iter()
            .map(|t| t.name.len())
            .max()
            .unwrap_or(4)
            .max(4);
        let wk = self
            .tables
            .iter()
            .map(|t| t.kind.len())
            .max()
            .unwrap_or(4)
            .max(4);
        let mut s = format!("{:<wn$}  {:<wk$}  source\n", "name", "kind");
        for t in &self.tables {
            s.push_str(&format!("{:<wn$}  {:<wk$}  {}\n", t.name, t.kind, t.source));
        }
        s
    }

    /// `\d NAME`: a table's columns.
    pub async fn describe_table(&self, name: &str) -> Result<String> {
        let df = self
            .ctx
            .table(name)
            .await
            .with_context(|| format!("no table {name:?} (\\d lists them)"))?;
        let schema = df.schema().as_arrow();
        let w = schema
            .fields()
            .iter()
            .map(|f| f.name().len())
            .max()
            .unwrap_or(6)
            .max(6);
        let mut s = format!("{:<w$}  type\n", "column");
        for f in schema.fields() {
            s.push_str(&format!("{:<w$}  {}\n", f.name(), f.data_type()));
        }
        Ok(s)
    }
}

/// The files of an export at `path`: the file itself, else its shards
/// (`<base>-<i>-of-<n>.<ext>`), plus the `<name>_stats.jsonl` beside it.
fn export_files_of(path: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let name = file_name(path);
    let base = name.split('.').next().unwrap_or_default().to_string();
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_default();
    let dir = path.parent().unwrap_or(Path::new("."));
    if path.is_file() {
        files.push(path.to_path_buf());
    } else {
        let mut shards: Vec<PathBuf> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                let n = file_name(p);
                n.starts_with(&format!("{base}-"))
                    && n.ends_with(&format!(".{ext}"))
                    && n.contains("-of-")
            })
            .collect();
        shards.sort();
        files.extend(shards);
    }
    let stem = name.strip_suffix(&format!(".{ext}")).unwrap_or(&name);
    let stats = dir.join(format!("{stem}_stats.jsonl"));
    if stats.is_file() {
        files.push(stats);
    }
    files
}

// ---------------------------------------------------------------------------------------------
// The events table: a schema over all events, keys in first-appearance order.

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Null,
    Bool,
    Int,
    Float,
    Str,
    Obj(Vec<(String, Kind)>),
    /// Arrays and mixed types: JSON text.
    Json,
}

fn kind_of(v: &Value) -> Kind {
    match v {
        Value::Null => Kind::Null,
        Value::Bool(_) => Kind::Bool,
        Value::Number(n) if n.is_i64() => Kind::Int,
        Value::Number(_) => Kind::Float,
        Value::String(_) => Kind::Str,
        Value::Array(_) => Kind::Json,
        Value::Object(m) => Kind::Obj(m.iter().map(|(k, v)| (k.clone(), kind_of(v))).collect()),
    }
}

fn merge(a: Kind, b: Kind) -> Kind {
    match (a, b) {
        (Kind::Null, x) | (x, Kind::Null) => x,
        (Kind::Int, Kind::Float) | (Kind::Float, Kind::Int) => Kind::Float,
        (Kind::Obj(mut a), Kind::Obj(b)) => {
            merge_fields(&mut a, b);
            Kind::Obj(a)
        }
        (a, b) if a == b => a,
        _ => Kind::Json,
    }
}

fn merge_fields(into: &mut Vec<(String, Kind)>, from: Vec<(String, Kind)>) {
    for (k, kind) in from {
        match into.iter_mut().find(|(name, _)| *name == k) {
            Some((_, existing)) => *existing = merge(std::mem::replace(existing, Kind::Null), kind),
            None => into.push((k, kind)),
        }
    }
}

fn data_type(kind: &Kind) -> DataType {
    match kind {
        Kind::Bool => DataType::Boolean,
        Kind::Int => DataType::Int64,
        Kind::Float => DataType::Float64,
        Kind::Null | Kind::Str | Kind::Json => DataType::Utf8,
        Kind::Obj(fields) if fields.is_empty() => DataType::Utf8,
        Kind::Obj(fields) => DataType::Struct(to_fields(fields)),
    }
}

fn to_fields(fields: &[(String, Kind)]) -> Fields {
    fields
        .iter()
        .map(|(k, kind)| Field::new(k, data_type(kind), true))
        .collect()
}

/// `v` shaped for its column: JSON text where the column is text but the value is not.
fn normalize(v: &Value, kind: &Kind) -> Value {
    match (kind, v) {
        (_, Value::Null) => Value::Null,
        (Kind::Obj(fields), Value::Object(m)) if !fields.is_empty() => Value::Object(
            fields
                .iter()
                .filter_map(|(k, kind)| m.get(k).map(|v| (k.clone(), normalize(v, kind))))
                .collect(),
        ),
        (Kind::Null | Kind::Str | Kind::Json | Kind::Obj(_), Value::String(_)) => v.clone(),
        (Kind::Null | Kind::Str | Kind::Json | Kind::Obj(_), other) => {
            Value::String(other.to_string())
        }
        _ => v.clone(),
    }
}

/// The events as one batch.
fn events_batch(events: &[Value]) -> Result<RecordBatch> {
    let mut fields: Vec<(String, Kind)> = vec![];
    for e in events {
        if let Kind::Obj(f) = kind_of(e) {
            merge_fields(&mut fields, f);
        }
    }
    if fields.is_empty() {
        fields = [
            ("event_type", Kind::Str),
            ("timestamp", Kind::Float),
            ("message", Kind::Str),
            ("event_id", Kind::Str),
            ("job_id", Kind::Str),
        ]
        .into_iter()
        .map(|(k, kind)| (k.to_string(), kind))
        .collect();
    }
    let schema = Arc::new(Schema::new(to_fields(&fields)));
    let kind = Kind::Obj(fields);
    let rows: Vec<Value> = events
        .iter()
        .filter(|e| e.is_object())
        .map(|e| normalize(e, &kind))
        .collect();
    let mut decoder = datafusion::arrow::json::ReaderBuilder::new(schema.clone())
        .with_batch_size(rows.len().max(1))
        .build_decoder()?;
    decoder.serialize(&rows)?;
    Ok(decoder
        .flush()?
        .unwrap_or_else(|| RecordBatch::new_empty(schema)))
}

// ---------------------------------------------------------------------------------------------
// Output

/// Nested columns as text (CSV has no nested values).
fn flatten_nested(batch: &RecordBatch) -> Result<RecordBatch> {
    let opts = FormatOptions::default();
    let mut fields = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    for (f, col) in batch.schema().fields().iter().zip(batch.columns()) {
        if f.data_type().is_nested() {
            let fmt = ArrayFormatter::try_new(col.as_ref(), &opts)?;
            let mut b = StringBuilder::new();
            for i in 0..col.len() {
                if col.is_null(i) {
                    b.append_null();
                } else {
                    b.append_value(fmt.value(i).to_string());
                }
            }
            fields.push(Field::new(f.name(), DataType::Utf8, true));
            columns.push(Arc::new(b.finish()));
        } else {
            fields.push(f.as_ref().clone());
            columns.push(col.clone());
        }
    }
    Ok(RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        columns,
    )?)
}

/// A result as an aligned table, CSV or JSON.
pub fn format_result(r: &QueryResult, format: OutputFormat) -> Result<String> {
    match format {
        OutputFormat::Table => {
            let table = datafusion::arrow::util::pretty::pretty_format_batches_with_schema(
                r.schema.clone(),
                &r.batches,
            )?;
            Ok(format!("{table}\n"))
        }
        OutputFormat::Csv => {
            let mut out = Vec::new();
            {
                let mut w = datafusion::arrow::csv::WriterBuilder::new()
                    .with_header(true)
                    .build(&mut out);
                let empty = RecordBatch::new_empty(r.schema.clone());
                let batches = if r.batches.is_empty() {
                    std::slice::from_ref(&empty)
                } else {
                    &r.batches[..]
                };
                for b in batches {
                    w.write(&flatten_nested(b)?)?;
                }
            }
            Ok(String::from_utf8(out)?)
        }
        OutputFormat::Json => {
            let mut out = Vec::new();
            {
                let mut w = datafusion::arrow::json::WriterBuilder::new()
                    .with_explicit_nulls(true)
                    .build::<_, datafusion::arrow::json::writer::JsonArray>(&mut out);
                for b in &r.batches {
                    w.write(b)?;
                }
                w.finish()?;
            }
            Ok(String::from_utf8(out)? + "\n")
        }
    }
}

/// Splits `text` into complete `;`-terminated statements (quotes and `--` comments respected)
/// and the unterminated rest. Statements holding only comments or blanks are dropped.
pub fn split_statements(text: &str) -> (Vec<String>, String) {
    let mut stmts = Vec::new();
    let mut start = 0;
    let mut quote: Option<char> = None;
    let mut comment = false;
    let mut meaningful = false;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if comment {
            comment = c != '\n';
            continue;
        }
        match quote {
            Some(q) => {
                if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    meaningful = true;
                }
                '-' if chars.peek().is_some_and(|(_, n)| *n == '-') => comment = true,
                ';' => {
                    if meaningful {
                        stmts.push(text[start..i].trim().to_string());
                    }
                    start = i + 1;
                    meaningful = false;
                }
                c if !c.is_whitespace() => meaningful = true,
                _ => {}
            },
        }
    }
    let rest = &text[start..];
    (
        stmts,
        if meaningful {
            rest.to_string()
        } else {
            String::new()
        },
    )
}

// ---------------------------------------------------------------------------------------------
// dj-sql

/// Query a partitioned job's checkpoints, export, event log and input with SQL.
#[derive(Debug, Parser)]
#[command(
    name = "dj-sql",
    version,
    after_help = "Tables: checkpoint_op_XXXX_partition_YYYY (each checkpoint), checkpoint_op_XXXX \
(UNION ALL of an op's partitions), export, export_stats, events, input, input_partition_YYYY. \
Struct fields: get_field(__dj__stats__, 'text_len'). Without a query: statements from stdin, each \
ended by ';'; \\d lists tables, \\d NAME shows columns, \\q quits."
)]
pub struct SqlFlags {
    /// The directory holding the job directories (the recipe's work_dir).
    #[arg(long = "work_dir", alias = "work-dir", default_value = ".")]
    pub work_dir: PathBuf,
    /// The job id (a directory under --work_dir).
    pub job_id: String,
    /// SQL to run (statements separated by ';'); without it, an interactive prompt.
    pub query: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

/// `dj-sql`.
pub fn sql_main() -> ExitCode {
    let flags = SqlFlags::parse();
    match sql_cmd(&flags) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn sql_cmd(flags: &SqlFlags) -> Result<bool> {
    crate::job::validate_job_id(&flags.job_id)?;
    let dir = flags.work_dir.join(&flags.job_id);
    if !dir.is_dir() {
        bail!(
            "Job directory not found: {} (--work_dir is the directory holding job directories)",
            dir.display()
        );
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let job = JobSql::open(&dir).await?;
        for w in &job.warnings {
            eprintln!("warning: {w}");
        }
        match &flags.query {
            Some(q) => {
                let (mut stmts, rest) = split_statements(q);
                if !rest.trim().is_empty() {
                    stmts.push(rest.trim().to_string());
                }
                if stmts.is_empty() {
                    bail!("the query is empty");
                }
                let mut out = std::io::stdout().lock();
                for s in &stmts {
                    let r = job.query(s).await?;
                    if !r.schema.fields().is_empty() {
                        out.write_all(format_result(&r, flags.format)?.as_bytes())?;
                    }
                }
                Ok(true)
            }
            None => repl(&job, flags.format).await,
        }
    })
}

/// Statements from stdin, line by line; `Ok(false)` if any failed.
async fn repl(job: &JobSql, format: OutputFormat) -> Result<bool> {
    let tty = std::io::stdin().is_terminal();
    let prompt = |continued: bool| {
        if tty {
            print!("{}", if continued { "   ...> " } else { "dj-sql> " });
            let _ = std::io::stdout().flush();
        }
    };
    if tty {
        println!(
            "dj-sql: job {} ({} tables). End statements with ';'. \\d lists tables, \\d NAME shows columns, \\q quits.",
            file_name(&job.job_dir),
            job.tables.len()
        );
    }
    let mut ok = true;
    let mut buf = String::new();
    prompt(false);
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let mut command = line
            .trim()
            .starts_with('\\')
            .then(|| line.trim().to_string());
        if command.is_none() {
            buf.push_str(&line);
            buf.push('\n');
            let (stmts, rest) = split_statements(&buf);
            buf = rest;
            for s in stmts {
                ok &= run_printed(job, &s, format, tty).await;
            }
            // A command after the last ';' of the line.
            if buf.trim().starts_with('\\') {
                command = Some(std::mem::take(&mut buf).trim().to_string());
            }
        }
        if let Some(cmd) = command {
            match backslash(job, &cmd).await {
                Some(done) => ok &= done,
                None => return Ok(ok),
            }
        }
        prompt(!buf.trim().is_empty());
    }
    // A last statement without its ';' (piped input).
    if !buf.trim().is_empty() {
        ok &= run_printed(job, buf.trim(), format, tty).await;
    }
    if tty {
        println!();
    }
    Ok(ok)
}

/// A `\` command: `None` for `\q`, else whether it succeeded.
async fn backslash(job: &JobSql, cmd: &str) -> Option<bool> {
    let (name, arg) = cmd.split_once(char::is_whitespace).unwrap_or((cmd, ""));
    match (name, arg.trim().trim_end_matches(';')) {
        ("\\q", _) => return None,
        ("\\d", "") => print!("{}", job.describe_tables()),
        ("\\d", table) => match job.describe_table(table).await {
            Ok(s) => print!("{s}"),
            Err(e) => {
                eprintln!("error: {e:#}");
                return Some(false);
            }
        },
        ("\\?" | "\\h" | "\\help", _) => println!(
            "End SQL statements with ';'. \\d lists tables, \\d NAME shows a table's columns, \\q quits."
        ),
        _ => {
            eprintln!("error: unknown command {name} (\\d, \\d NAME, \\q)");
            return Some(false);
        }
    }
    let _ = std::io::stdout().flush();
    Some(true)
}

async fn run_printed(job: &JobSql, sql: &str, format: OutputFormat, tty: bool) -> bool {
    let result = async {
        let r = job.query(sql).await?;
        let mut text = String::new();
        if !r.schema.fields().is_empty() {
            text = format_result(&r, format)?;
            if format == OutputFormat::Table && tty {
                let n = r.num_rows();
                text.push_str(&format!("({n} row{})\n", if n == 1 { "" } else { "s" }));
            }
        }
        anyhow::Ok(text)
    }
    .await;
    match result {
        Ok(text) => {
            print!("{text}");
            let _ = std::io::stdout().flush();
            true
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_split_on_semicolons_outside_quotes_and_comments() {
        let (s, rest) = split_statements("SELECT 1; SELECT ';' AS x; -- a; comment\nSELECT 2");
        assert_eq!(s, ["SELECT 1", "SELECT ';' AS x"]);
        assert_eq!(rest.trim(), "-- a; comment\nSELECT 2");
        let (s, rest) = split_statements("  ;  -- only a comment;\n ; ");
        assert!(s.is_empty() && rest.is_empty(), "{s:?} {rest:?}");
        let (s, _) = split_statements("SELECT \"a;b\" FROM t;");
        assert_eq!(s, ["SELECT \"a;b\" FROM t"]);
    }

    #[test]
    fn events_schema_merges_heterogeneous_keys_in_order() {
        let events: Vec<Value> = [
            r#"{"event_type": "job_start", "timestamp": 1.5, "metadata": {"n": 4, "flag": true}}"#,
            r#"{"event_type": "checkpoint_save", "timestamp": 2, "partition_id": 0, "metadata": {"rows": 7, "n": 2.5}}"#,
            r#"{"event_type": "x", "partition_id": "odd", "metadata": null, "list": [1, 2]}"#,
        ]
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
        let b = events_batch(&events).unwrap();
        let names: Vec<String> = b
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        assert_eq!(
            names,
            [
                "event_type",
                "timestamp",
                "metadata",
                "partition_id",
                "list"
            ]
        );
        let s = b.schema();
        assert_eq!(s.field(1).data_type(), &DataType::Float64);
        assert_eq!(s.field(3).data_type(), &DataType::Utf8); // int and string: text
        let DataType::Struct(meta) = s.field(2).data_type() else {
            panic!("metadata is a struct")
        };
        let meta: Vec<(&str, &DataType)> = meta
            .iter()
            .map(|f| (f.name().as_str(), f.data_type()))
            .collect();
        assert_eq!(
            meta,
            [
                ("n", &DataType::Float64),
                ("flag", &DataType::Boolean),
                ("rows", &DataType::Int64)
            ]
        );
        assert_eq!(b.num_rows(), 3);
        let r = QueryResult {
            schema: b.schema(),
            batches: vec![b],
        };
        let csv = format_result(&r, OutputFormat::Csv).unwrap();
        assert!(
            csv.starts_with("event_type,timestamp,metadata,partition_id,list\n"),
            "{csv}"
        );
        assert!(csv.contains("checkpoint_save,2.0,"), "{csv}");
        let json: Value =
            serde_json::from_str(&format_result(&r, OutputFormat::Json).unwrap()).unwrap();
        assert_eq!(json[1]["metadata"]["rows"], 7);
        assert_eq!(json[2]["list"], "[1,2]");
        assert_eq!(json[2]["partition_id"], "odd");
        assert_eq!(json[1]["partition_id"], "0");
        assert!(
            events_batch(&[])
                .unwrap()
                .schema()
                .field_with_name("event_type")
                .is_ok()
        );
    }

    #[test]
    fn run_directory_recovered_from_work_dir() {
        let job = Path::new("/srv/repo/outputs/jobs/ID");
        let summary: Value = serde_json::json!({"work_dir": "outputs/jobs/ID"});
        let bases = run_dirs(job, Some(&summary), None);
        assert_eq!(bases[0], Path::new("/srv/repo"));
        let recipe: Value = serde_json::json!({"work_dir": "./outputs/jobs"});
        assert_eq!(
            run_dirs(job, None, Some(&recipe))[0],
            Path::new("/srv/repo")
        );
        let recipe: Value = serde_json::json!({"export_path": "outputs/jobs/x.jsonl"});
        assert_eq!(
            run_dirs(job, None, Some(&recipe))[0],
            Path::new("/srv/repo")
        );
        assert_eq!(resolve(&bases, "/abs/x"), Path::new("/abs/x"));
        assert_eq!(
            resolve(&bases, "data/x.jsonl"),
            Path::new("/srv/repo/data/x.jsonl")
        );
    }
}
