//! Registers a job's files as tables: every checkpoint (and one view per op over its
//! partitions), the export and its stats, the events, and the input with its saved partitions.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Result, bail};
use datafusion::arrow::datatypes::Schema;
use datafusion::dataframe::DataFrame;
use datafusion::datasource::MemTable;
use datafusion::datasource::file_format::file_compression_type::FileCompressionType;
use datafusion::datasource::file_format::options::ArrowReadOptions;
use datafusion::prelude::{JsonReadOptions, ParquetReadOptions};
use dj_plans::nodes::checkpoint::parse_checkpoint_file_name;
use dj_plans::source::{InputIndex, RowRange, RowRangeTable};
use serde_json::Value;

use super::JobSql;
use super::events_table::events_batch;
use super::paths::{file_name, path_str, resolve};
use crate::job::events::load_events;
use crate::job::info::PartitioningInfo;
use crate::job::{JobPaths, JobSummary, PARTITIONING_INFO_FILE, SUMMARY_FILE};

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
    pub(super) async fn register_checkpoints(&mut self) {
        let dir = JobPaths::new(self.job_dir.clone()).checkpoints;
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

    pub(super) async fn register_op(
        &mut self,
        op: usize,
        parts: &BTreeMap<usize, PathBuf>,
    ) -> Result<()> {
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
        let mut tables = Vec::with_capacity(names.len());
        for n in &names {
            tables.push(self.ctx.table(n.as_str()).await?);
        }
        self.ctx
            .register_table(view.as_str(), union_all(tables)?.into_view())?;
        let source = format!(
            "UNION ALL of {} partition{} ({})",
            names.len(),
            if names.len() == 1 { "" } else { "s" },
            names.join(", ")
        );
        self.add(&view, "checkpoint view", source);
        Ok(())
    }

    pub(super) async fn register_export(
        &mut self,
        summary: Option<&JobSummary>,
        recipe: Option<&Value>,
        bases: &[PathBuf],
    ) {
        let listed: Option<Vec<PathBuf>> =
            summary.filter(|s| !s.export_files.is_empty()).map(|s| {
                s.export_files
                    .iter()
                    .filter_map(|f| f.to_str())
                    .map(|f| resolve(bases, f))
                    .collect()
            });
        let files = match listed {
            Some(files) => files,
            None => match recipe.and_then(|r| r["export_path"].as_str()) {
                Some(e) => export_files_of(&resolve(bases, e)),
                None => {
                    self.warnings.push(format!(
                        "table `export` not registered: no {SUMMARY_FILE} and no export_path in the recipe copy"
                    ));
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
    pub(super) async fn register_files(&self, table: &str, files: &[PathBuf]) -> Result<()> {
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

    pub(super) fn register_events(&mut self) -> Result<()> {
        let events = load_events(&self.job_dir);
        let batch = events_batch(&events)?;
        let schema = batch.schema();
        let table = MemTable::try_new(schema, vec![vec![batch]])?;
        self.ctx.register_table("events", Arc::new(table))?;
        let files = crate::job::events::event_files(&self.job_dir);
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

    pub(super) async fn register_input(&mut self, recipe: Option<&Value>, bases: &[PathBuf]) {
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
            self.warnings.push(format!(
                "table `input` not registered: no dataset_path in the recipe copy or {PARTITIONING_INFO_FILE}"
            ));
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
}

/// The op's partitions, in partition order, as one table: by position when every partition has
/// the same columns in the same order, else lined up by column name.
fn union_all(tables: Vec<DataFrame>) -> Result<DataFrame> {
    let names = |df: &DataFrame| -> Vec<String> {
        df.schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    };
    let by_name = tables.windows(2).any(|w| names(&w[0]) != names(&w[1]));
    let mut tables = tables.into_iter();
    let mut df = tables.next().expect("at least one partition");
    for t in tables {
        df = if by_name {
            df.union_by_name(t)?
        } else {
            df.union(t)?
        };
    }
    Ok(df)
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
