//! Writing the result: `export_path` as JSON lines (Data-Juicer's byte format) or parquet, the
//! `<name>_stats.jsonl` stats file, and `export_shard_size` shards. Every file is written under a
//! temporary name, fsynced and renamed, so `export_path` never holds a half-written result.
//!
//! Partitions first stage their rows ([`staged`]: Arrow files, JSON lines fragments, or lines
//! placed straight into the shared export file, [`placed`]); the export is then written from
//! them in partition order, or in a selector's rank order ([`ranked`]), and published to its
//! [`target`].

mod fragment;
pub(crate) mod placed;
pub(crate) mod ranked;
pub(crate) mod staged;
pub(crate) mod target;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::parquet::basic::Compression as ParquetCompression;
use datafusion::parquet::file::properties::WriterProperties;
use dj_udfs::columns::{HASH_COLUMNS, META_COLUMN, STATS_COLUMN};

use dj_plans::atomic::AtomicFile;
use dj_plans::drop_behind::DropBehindWriter;
use dj_plans::nodes::CacheGrant;
use dj_plans::pyjson::{self, JsonTypes, Step};
use dj_plans::source::InputIndex;

/// A partition's result on disk: Arrow IPC, or JSON lines fragments of its export lines (and
/// stats lines); when placed, its kept lines' share of the shared files.
pub(crate) struct Staged {
    pub(crate) path: PathBuf,
    pub(crate) stats_path: Option<PathBuf>,
    pub(crate) rows: u64,
    pub(crate) bytes: u64,
    /// How many first bytes of the file at `path`, and of the one at `stats_path`, stay in the
    /// page cache, under `_cached` (given back when this is dropped).
    pub(crate) kept: [u64; 2],
    pub(crate) _cached: Vec<CacheGrant>,
}

/// The fields the export writes as generic JSON: those of the input, and the stats and tags
/// columns when Data-Juicer creates them (as JSON columns).
pub(crate) fn json_types_of(index: &InputIndex) -> JsonTypes {
    let mut types = index.json_types.clone();
    if dj_plans::compile::json_stats(index) {
        types.mark(&[Step::Key(STATS_COLUMN.to_string())]);
    }
    if index.schema.field_with_name(META_COLUMN).is_err() {
        types.mark(&[Step::Key(META_COLUMN.to_string())]);
    }
    types
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum ExportError {
    #[error("cannot write export {}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "unsupported export format for {0}: expected a path ending in .jsonl, .json or .parquet"
    )]
    Format(PathBuf),
    #[error("cannot write export {path}: {message}")]
    Encode { path: PathBuf, message: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ExportFormat {
    Jsonl,
    Parquet,
}

/// What to write where.
#[derive(Debug, Clone)]
pub(crate) struct ExportSpec {
    pub path: PathBuf,
    pub format: ExportFormat,
    pub shard_size: u64,
    pub keep_stats: bool,
    pub keep_hashes: bool,
    pub export_stats: bool,
    /// The fields Data-Juicer holds as generic JSON (see [`JsonTypes`]).
    pub json_types: Arc<JsonTypes>,
}

impl ExportSpec {
    pub(crate) fn new(
        path: &Path,
        shard_size: u64,
        keep_stats: bool,
        keep_hashes: bool,
    ) -> Result<Self, ExportError> {
        let name = path.to_string_lossy().to_ascii_lowercase();
        let format = if name.ends_with(".jsonl") || name.ends_with(".json") {
            ExportFormat::Jsonl
        } else if name.ends_with(".parquet") {
            ExportFormat::Parquet
        } else {
            return Err(ExportError::Format(path.to_path_buf()));
        };
        Ok(ExportSpec {
            path: path.to_path_buf(),
            format,
            shard_size,
            keep_stats,
            keep_hashes,
            export_stats: true,
            json_types: Arc::new(JsonTypes::none()),
        })
    }

    fn suffix(&self) -> &str {
        self.path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("jsonl")
    }

    /// `<export without .suffix>_stats.jsonl`, as Data-Juicer names it.
    pub(crate) fn stats_path(&self) -> PathBuf {
        let s = self.path.to_string_lossy();
        let suffix = format!(".{}", self.suffix());
        PathBuf::from(s.replacen(&suffix, "_stats.jsonl", 1))
    }

    /// Shard file names for `n` shards: `<basename>-<i>-of-<n>.<suffix>`, zero-padded to
    /// `len(str(n)) + 1` digits, next to `export_path`.
    pub(crate) fn shard_paths(&self, n: usize) -> Vec<PathBuf> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let file = self
            .path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let base = file.split('.').next().unwrap_or("export");
        let width = n.to_string().len() + 1;
        (0..n)
            .map(|i| {
                dir.join(format!(
                    "{base}-{i:0width$}-of-{n:0width$}.{}",
                    self.suffix()
                ))
            })
            .collect()
    }

    /// The exported columns of `schema` (stats, tags and hashes dropped unless kept).
    pub(crate) fn result_schema(&self, schema: &Schema) -> Schema {
        let keep = |name: &str| {
            name != dj_udfs::columns::ORDER_COLUMN
                && (self.keep_stats || (name != STATS_COLUMN && name != META_COLUMN))
                && (self.keep_hashes || !HASH_COLUMNS.contains(&name))
        };
        Schema::new(
            schema
                .fields()
                .iter()
                .filter(|f| keep(f.name()))
                .cloned()
                .collect::<Vec<_>>(),
        )
    }
}

/// Serializes result batches as the export's and the stats file's JSON lines, so partitions can
/// encode their own rows in parallel and the export only concatenates them
/// ([`Exporter::append_fragments`]). Only for a single JSON lines export in input order.
#[derive(Debug, Clone)]
pub(crate) struct JsonFragmentEncoder {
    result_columns: Vec<usize>,
    stats_columns: Option<Vec<usize>>,
    types: Arc<JsonTypes>,
}

impl JsonFragmentEncoder {
    /// The encoder for `schema`, or `None` when the export is not one JSON lines file written in
    /// input order (parquet, shards, or a selector's rank order).
    pub(crate) fn new(spec: &ExportSpec, schema: &Schema) -> Result<Option<Self>, ExportError> {
        if spec.format != ExportFormat::Jsonl
            || spec.shard_size > 0
            || schema.index_of(dj_udfs::columns::ORDER_COLUMN).is_ok()
        {
            return Ok(None);
        }
        let result_schema = spec.result_schema(schema);
        pyjson::check_schema(&result_schema).map_err(|e| ExportError::Encode {
            path: spec.path.clone(),
            message: e.to_string(),
        })?;
        let columns = Columns::new(spec, schema, &result_schema);
        Ok(Some(JsonFragmentEncoder {
            result_columns: columns.result,
            stats_columns: columns.stats,
            types: spec.json_types.clone(),
        }))
    }

    pub(crate) fn has_stats(&self) -> bool {
        self.stats_columns.is_some()
    }

    /// Appends the export lines of `batch` to `result` and its stats lines to `stats`.
    pub(crate) fn encode(
        &self,
        batch: &RecordBatch,
        result: &mut String,
        stats: &mut String,
    ) -> Result<(), datafusion::arrow::error::ArrowError> {
        if let Some(cols) = &self.stats_columns {
            pyjson::write_rows(&batch.project(cols)?, stats, &self.types);
        }
        pyjson::write_rows(&batch.project(&self.result_columns)?, result, &self.types);
        Ok(())
    }
}

/// Which columns of a result batch go to the export and which to the stats file.
struct Columns {
    result: Vec<usize>,
    /// `None`: no stats file.
    stats: Option<Vec<usize>>,
}

impl Columns {
    fn new(spec: &ExportSpec, schema: &Schema, result_schema: &Schema) -> Columns {
        let index = |name: &str| schema.index_of(name).ok();
        let result = result_schema
            .fields()
            .iter()
            .filter_map(|f| index(f.name()))
            .collect();
        let stats: Vec<usize> = [STATS_COLUMN, META_COLUMN]
            .iter()
            .filter_map(|n| index(n))
            .collect();
        Columns {
            result,
            stats: (spec.export_stats && !stats.is_empty()).then_some(stats),
        }
    }
}

/// Creates the export directory and a temporary file next to `dest`.
fn create_atomic(dest: &Path) -> Result<(AtomicFile, File), ExportError> {
    let io = |source| ExportError::Io {
        path: dest.to_path_buf(),
        source,
    };
    if let Some(dir) = dest.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    AtomicFile::create(dest).map_err(io)
}

enum Sink {
    Jsonl(BufWriter<DropBehindWriter>, String),
    Parquet(Box<ArrowWriter<DropBehindWriter>>),
}

struct OpenFile {
    atomic: AtomicFile,
    sink: Sink,
    types: Arc<JsonTypes>,
}

impl OpenFile {
    fn create(
        path: &Path,
        format: ExportFormat,
        schema: &SchemaRef,
        types: &Arc<JsonTypes>,
    ) -> Result<OpenFile, ExportError> {
        let (atomic, file) = create_atomic(path)?;
        let file = DropBehindWriter::new(file).map_err(|source| ExportError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let sink = match format {
            ExportFormat::Jsonl => {
                Sink::Jsonl(BufWriter::with_capacity(1 << 20, file), String::new())
            }
            ExportFormat::Parquet => {
                let props = WriterProperties::builder()
                    .set_compression(ParquetCompression::SNAPPY)
                    .build();
                Sink::Parquet(Box::new(
                    ArrowWriter::try_new(file, schema.clone(), Some(props)).map_err(|e| {
                        ExportError::Encode {
                            path: path.to_path_buf(),
                            message: e.to_string(),
                        }
                    })?,
                ))
            }
        };
        Ok(OpenFile {
            atomic,
            sink,
            types: types.clone(),
        })
    }

    fn write(&mut self, batch: &RecordBatch) -> Result<(), ExportError> {
        let path = self.atomic.dest().to_path_buf();
        match &mut self.sink {
            Sink::Jsonl(w, buf) => {
                buf.clear();
                pyjson::write_rows(batch, buf, &self.types);
                w.write_all(buf.as_bytes())
                    .map_err(|source| ExportError::Io { path, source })
            }
            Sink::Parquet(w) => {
                let encode = |e: datafusion::parquet::errors::ParquetError| ExportError::Encode {
                    path: path.clone(),
                    message: e.to_string(),
                };
                w.write(batch).map_err(encode)?;
                if w.in_progress_size() > dj_plans::nodes::checkpoint::ROW_GROUP_BYTES {
                    w.flush().map_err(encode)?;
                }
                Ok(())
            }
        }
    }

    /// A JSON lines file for `dest` that starts as the written file `fragment` (which it takes
    /// over: see [`AtomicFile::adopt`]).
    fn adopt(
        fragment: &Path,
        dest: &Path,
        types: &Arc<JsonTypes>,
    ) -> Result<OpenFile, ExportError> {
        let (atomic, file) = AtomicFile::adopt(fragment, dest)
            .and_then(|(atomic, file)| Ok((atomic, DropBehindWriter::new(file)?)))
            .map_err(|source| ExportError::Io {
                path: dest.to_path_buf(),
                source,
            })?;
        Ok(OpenFile {
            atomic,
            sink: Sink::Jsonl(BufWriter::with_capacity(1 << 20, file), String::new()),
            types: types.clone(),
        })
    }

    /// Appends the bytes of the file at `src` (JSON lines only), whose first `kept` bytes are
    /// kept in the page cache.
    fn append_file(&mut self, src: &Path, kept: u64) -> Result<(), ExportError> {
        let path = self.atomic.dest().to_path_buf();
        let Sink::Jsonl(w, _) = &mut self.sink else {
            unreachable!("fragments are JSON lines");
        };
        let io = |source| ExportError::Io {
            path: path.clone(),
            source,
        };
        w.flush().map_err(io)?;
        let mut from = File::open(src).map_err(|source| ExportError::Io {
            path: src.to_path_buf(),
            source,
        })?;
        w.get_mut().append_file(&mut from, kept).map_err(io)?;
        Ok(())
    }

    fn finish(self) -> Result<(), ExportError> {
        let path = self.atomic.dest().to_path_buf();
        let file = match self.sink {
            Sink::Jsonl(w, _) => w.into_inner().map_err(|e| ExportError::Io {
                path: path.clone(),
                source: e.into_error(),
            })?,
            Sink::Parquet(w) => w.into_inner().map_err(|e| ExportError::Encode {
                path: path.clone(),
                message: e.to_string(),
            })?,
        };
        self.atomic
            .commit(file.into_inner())
            .map_err(|source| ExportError::Io { path, source })
    }
}

/// Writes an ordered stream of result batches to the export (and stats) files.
pub(crate) struct Exporter {
    spec: ExportSpec,
    input_schema: SchemaRef,
    result_schema: SchemaRef,
    stats_columns: Option<Vec<usize>>,
    result_columns: Vec<usize>,
    /// Rows per shard; the current shard; rows written into it.
    shard_rows: Vec<u64>,
    shard_paths: Vec<PathBuf>,
    shard: usize,
    in_shard: u64,
    current: Option<OpenFile>,
    stats: Option<OpenFile>,
    done: Vec<OpenFile>,
    pub rows_written: u64,
}

impl Exporter {
    /// Opens the export for `schema`, for `total_rows` rows of about `total_bytes` bytes (used
    /// for the number of shards).
    pub(crate) fn create(
        spec: ExportSpec,
        schema: SchemaRef,
        total_rows: u64,
        total_bytes: u64,
    ) -> Result<Exporter, ExportError> {
        Exporter::open(spec, schema, total_rows, total_bytes, None)
    }

    /// The export of partitions encoded by a [`JsonFragmentEncoder`], starting from the first
    /// partition's fragments (`result` with `rows` rows, and `stats`), which become the export
    /// and stats files without being copied; append the others with
    /// [`Exporter::append_fragments`].
    pub(crate) fn from_fragments(
        spec: ExportSpec,
        schema: SchemaRef,
        result: &Path,
        stats: Option<&Path>,
        rows: u64,
    ) -> Result<Exporter, ExportError> {
        let mut exporter = Exporter::open(spec, schema, 0, 0, Some((result, stats)))?;
        exporter.in_shard = rows;
        exporter.rows_written = rows;
        Ok(exporter)
    }

    /// Opens the first export file and the stats file: created empty, or taken over from the
    /// `fragments` (export lines, stats lines) already written.
    fn open(
        spec: ExportSpec,
        schema: SchemaRef,
        total_rows: u64,
        total_bytes: u64,
        fragments: Option<(&Path, Option<&Path>)>,
    ) -> Result<Exporter, ExportError> {
        let result_schema = Arc::new(spec.result_schema(&schema));
        if spec.format == ExportFormat::Jsonl {
            pyjson::check_schema(&result_schema).map_err(|e| ExportError::Encode {
                path: spec.path.clone(),
                message: e.to_string(),
            })?;
        }
        let Columns {
            result: result_columns,
            stats: stats_columns,
        } = Columns::new(&spec, &schema, &result_schema);
        let (shard_rows, shard_paths) = if spec.shard_size > 0 && total_rows > 0 {
            let n = ((total_bytes / spec.shard_size) as usize + 1).min(total_rows as usize);
            // Data-Juicer shards contiguously, the first `rows % n` shards one row longer.
            let (base, rem) = (total_rows / n as u64, total_rows % n as u64);
            (
                (0..n as u64).map(|i| base + u64::from(i < rem)).collect(),
                spec.shard_paths(n),
            )
        } else {
            (vec![u64::MAX], vec![spec.path.clone()])
        };
        let current = Some(match fragments {
            Some((result, _)) => OpenFile::adopt(result, &shard_paths[0], &spec.json_types)?,
            None => OpenFile::create(
                &shard_paths[0],
                spec.format,
                &result_schema,
                &spec.json_types,
            )?,
        });
        let stats = match (&stats_columns, fragments.and_then(|(_, stats)| stats)) {
            (Some(_), Some(fragment)) => Some(OpenFile::adopt(
                fragment,
                &spec.stats_path(),
                &spec.json_types,
            )?),
            (Some(cols), None) => {
                let s = Arc::new(schema.project(cols).expect("indices from schema"));
                Some(OpenFile::create(
                    &spec.stats_path(),
                    ExportFormat::Jsonl,
                    &s,
                    &spec.json_types,
                )?)
            }
            (None, _) => None,
        };
        Ok(Exporter {
            spec,
            input_schema: schema,
            result_schema,
            stats_columns,
            result_columns,
            shard_rows,
            shard_paths,
            shard: 0,
            in_shard: 0,
            current,
            stats,
            done: Vec::new(),
            rows_written: 0,
        })
    }

    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<(), ExportError> {
        debug_assert_eq!(
            batch.schema().fields().len(),
            self.input_schema.fields().len()
        );
        let encode = |e: datafusion::arrow::error::ArrowError| ExportError::Encode {
            path: self.spec.path.clone(),
            message: e.to_string(),
        };
        if let (Some(stats), Some(cols)) = (&mut self.stats, &self.stats_columns) {
            stats.write(&batch.project(cols).map_err(encode)?)?;
        }
        let result = batch.project(&self.result_columns).map_err(encode)?;
        let result = RecordBatch::try_new(self.result_schema.clone(), result.columns().to_vec())
            .map_err(encode)?;
        let mut offset = 0usize;
        while offset < result.num_rows() {
            let room = (self.shard_rows[self.shard] - self.in_shard) as usize;
            let n = room.min(result.num_rows() - offset);
            self.current
                .as_mut()
                .expect("open shard")
                .write(&result.slice(offset, n))?;
            offset += n;
            self.in_shard += n as u64;
            self.rows_written += n as u64;
            if self.in_shard == self.shard_rows[self.shard]
                && self.shard + 1 < self.shard_rows.len()
            {
                self.done.push(self.current.take().unwrap());
                self.shard += 1;
                self.in_shard = 0;
                self.current = Some(OpenFile::create(
                    &self.shard_paths[self.shard],
                    self.spec.format,
                    &self.result_schema,
                    &self.spec.json_types,
                )?);
            }
        }
        Ok(())
    }

    /// Appends a partition's JSON lines written by a [`JsonFragmentEncoder`]: `result` (holding
    /// `rows` rows) to the export, `stats` to the stats file, the first `kept` bytes of each
    /// being in the page cache. The bytes are copied by the kernel.
    pub(crate) fn append_fragments(
        &mut self,
        result: &Path,
        stats: Option<&Path>,
        rows: u64,
        kept: [u64; 2],
    ) -> Result<(), ExportError> {
        debug_assert_eq!(
            self.shard_rows.len(),
            1,
            "fragments are for unsharded exports"
        );
        self.current
            .as_mut()
            .expect("open export")
            .append_file(result, kept[0])?;
        if let (Some(file), Some(path)) = (&mut self.stats, stats) {
            file.append_file(path, kept[1])?;
        }
        self.in_shard += rows;
        self.rows_written += rows;
        Ok(())
    }

    /// Commits every file. Until this returns, `export_path` is untouched.
    pub(crate) fn finish(mut self) -> Result<Vec<PathBuf>, ExportError> {
        let mut files = std::mem::take(&mut self.done);
        files.extend(self.current.take());
        // Shards still unopened (fewer rows than planned) are created empty, as Data-Juicer does.
        for p in &self.shard_paths[self.shard + 1..] {
            files.push(OpenFile::create(
                p,
                self.spec.format,
                &self.result_schema,
                &self.spec.json_types,
            )?);
        }
        let mut paths: Vec<PathBuf> = files
            .iter()
            .map(|f| f.atomic.dest().to_path_buf())
            .collect();
        if let Some(s) = self.stats.take() {
            paths.push(s.atomic.dest().to_path_buf());
            files.push(s);
        }
        for f in files {
            f.finish()?;
        }
        Ok(paths)
    }
}
