//! Serialization codecs for dj-fusion's plans, so the same compiled plan runs in other processes
//! (Ballista's scheduler and executors). They carry the row-range source, the `DjOp`/`DjStats`
//! boundaries, the checkpoint sinks and the operator UDFs (by op name and parameters), and hand
//! every other node to an inner codec (Ballista's own, or DataFusion's default).
//!
//! A deduplicator travels with its decision for the partition (the runner decides it from every
//! partition's keys first, or the cluster decides it in stages and it names the lists); a selector's barrier meets all partitions inside one process, so
//! plans holding one are refused with a clear error. A decoded checkpoint sink has no listener
//! (the runner logs `checkpoint_save` when the partition's job ends), and decoded boundaries count
//! into counters of their own: their counts and times come back as their metrics.

use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::ipc::reader::StreamReader;
use datafusion::arrow::ipc::writer::StreamWriter;
use datafusion::catalog::TableProvider;
use datafusion::common::{DataFusionError, Result, TableReference};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{Extension, LogicalPlan, ScalarUDF};
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::logical_plan::{DefaultLogicalExtensionCodec, LogicalExtensionCodec};
use datafusion_proto::physical_plan::{
    DefaultPhysicalExtensionCodec, PhysicalExtensionCodec, PhysicalProtoConverterExtension,
};
use dj_udfs::udf::UdfIdentity;
use dj_udfs::wire::{identity_of, rebuild_udf};
use serde::{Deserialize, Serialize};

use crate::nodes::checkpoint::{
    CheckpointExec, CheckpointListener, CheckpointNode, CheckpointTarget, SavedCheckpoint,
};
use crate::nodes::op_boundary::{Boundary, OpBoundaryExec, OpBoundaryNode, OpCounters};
use crate::nodes::staged::{
    Decision, KeysSinkExec, KeysSinkNode, RemovedSinkExec, RemovedSinkNode,
};
use crate::nodes::{DedupBarrier, DedupExec, DedupNode, SelectBarrier, SelectExec, SelectNode};
use crate::recipe::{Compression, StorageFormat};
use crate::source::{InputFile, InputIndex, RowRange, RowRangeExec, RowRangeTable};
use dj_udfs::DedupKind;

/// First byte of every buffer: which codec wrote the rest.
const INNER: u8 = 0;
const DJ: u8 = 1;

/// A dj-fusion node on the wire (JSON after the [`DJ`] tag byte).
#[derive(Debug, Serialize, Deserialize)]
enum WireNode {
    OpBoundary {
        boundary: Boundary,
        op_name: String,
        /// The logical node's label; execution plans do not keep it.
        kind: Option<String>,
        slots: usize,
    },
    Checkpoint {
        op_index: usize,
        op_name: String,
        partition: usize,
        path: PathBuf,
        format: StorageFormat,
        compression: Compression,
        #[serde(default)]
        publish: Option<String>,
    },
    RowRange {
        index: WireIndex,
        ranges: Vec<RowRange>,
        projection: Option<Vec<usize>>,
    },
    /// A deduplicator whose decision for this partition the runner made from every
    /// partition's keys before sending the plan.
    Dedup(WireDedup),
    /// A selector whose ranks for this partition the runner decided from every partition's
    /// values before sending the plan.
    Select(WireSelect),
    /// A staged dedup's stage-1 sink: one partition's keys to a file.
    DedupKeys {
        index: usize,
        op_name: String,
        hash_column: String,
        kind: WireKind,
        partition: usize,
        path: PathBuf,
    },
    /// A staged dedup's stage-3 sink: the edges to every partition's removed rows.
    DedupRemoved {
        index: usize,
        op_name: String,
        kind: WireKind,
        partitions: usize,
        dir: PathBuf,
        budget_bytes: usize,
    },
}

/// A decided selector of one partition.
#[derive(Debug, Serialize, Deserialize)]
struct WireSelect {
    index: usize,
    op_name: String,
    value_column: String,
    partition: usize,
    partitions: usize,
    /// Each row's output rank (`u64::MAX`: dropped).
    ranks: Vec<u64>,
}

fn select_node(
    index: usize,
    op_name: &str,
    value_column: &str,
    partition: usize,
    barrier: &SelectBarrier,
) -> Result<WireNode> {
    let ranks = barrier.ranks(partition).ok_or_else(|| {
        err(format!(
            "selector op #{index} {op_name}: a plan is sent only after every partition's values decided what it keeps"
        ))
    })?;
    Ok(WireNode::Select(WireSelect {
        index,
        op_name: op_name.to_string(),
        value_column: value_column.to_string(),
        partition,
        partitions: barrier.partitions(),
        ranks,
    }))
}

impl WireSelect {
    fn barrier(&self) -> Result<Arc<SelectBarrier>> {
        if self.partition >= self.partitions {
            return Err(err(format!(
                "malformed ranks of selector op #{}",
                self.index
            )));
        }
        Ok(SelectBarrier::decided(
            self.index,
            self.partitions,
            self.partition,
            self.ranks.clone(),
        ))
    }
}

/// A decided deduplicator of one partition.
#[derive(Debug, Serialize, Deserialize)]
struct WireDedup {
    index: usize,
    op_name: String,
    hash_column: String,
    partition: usize,
    partitions: usize,
    kind: WireKind,
    /// The keep-mask, one bit per row (LSB first); empty when decided by lists.
    mask: Vec<u8>,
    rows: usize,
    /// Decided in stages: the directory of every partition's removed rows (no mask).
    #[serde(default)]
    removed_lists: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
enum WireKind {
    Exact,
    MinHashBands,
    SimHash {
        num_blocks: usize,
        hamming_distance: usize,
    },
}

impl From<DedupKind> for WireKind {
    fn from(k: DedupKind) -> Self {
        match k {
            DedupKind::Exact => WireKind::Exact,
            DedupKind::MinHashBands => WireKind::MinHashBands,
            DedupKind::SimHash {
                num_blocks,
                hamming_distance,
            } => WireKind::SimHash {
                num_blocks,
                hamming_distance,
            },
        }
    }
}

impl From<WireKind> for DedupKind {
    fn from(k: WireKind) -> Self {
        match k {
            WireKind::Exact => DedupKind::Exact,
            WireKind::MinHashBands => DedupKind::MinHashBands,
            WireKind::SimHash {
                num_blocks,
                hamming_distance,
            } => DedupKind::SimHash {
                num_blocks,
                hamming_distance,
            },
        }
    }
}

fn dedup_node(
    index: usize,
    op_name: &str,
    hash_column: &str,
    partition: usize,
    barrier: &DedupBarrier,
) -> Result<WireNode> {
    if let Some(dir) = barrier.removed_lists() {
        return Ok(WireNode::Dedup(WireDedup {
            index,
            op_name: op_name.to_string(),
            hash_column: hash_column.to_string(),
            partition,
            partitions: barrier.partitions(),
            kind: barrier.kind().into(),
            mask: Vec::new(),
            rows: 0,
            removed_lists: Some(absolute(dir)?),
        }));
    }
    let mask = barrier.mask(partition)?.ok_or_else(|| {
        err(format!(
            "dedup op #{index} {op_name}: a plan is sent only after every partition's keys decided what it keeps"
        ))
    })?;
    let mut bits = vec![0u8; mask.len().div_ceil(8)];
    for (i, keep) in mask.iter().enumerate() {
        if *keep {
            bits[i / 8] |= 1 << (i % 8);
        }
    }
    Ok(WireNode::Dedup(WireDedup {
        index,
        op_name: op_name.to_string(),
        hash_column: hash_column.to_string(),
        partition,
        partitions: barrier.partitions(),
        kind: barrier.kind().into(),
        mask: bits,
        rows: mask.len(),
        removed_lists: None,
    }))
}

impl WireDedup {
    /// The decided barrier a decoded dedup node filters with.
    fn barrier(&self) -> Result<Arc<DedupBarrier>> {
        let WireDedup {
            index,
            partition,
            partitions,
            kind,
            mask,
            rows,
            removed_lists,
            ..
        } = self;
        let (index, partition, partitions, rows) = (*index, *partition, *partitions, *rows);
        if let Some(dir) = removed_lists {
            if partition >= partitions {
                return Err(err(format!("malformed lists of dedup op #{index}")));
            }
            let barrier = DedupBarrier::new(index, (*kind).into(), partitions, None, None);
            barrier.decide_by_lists(dir.clone());
            return Ok(barrier);
        }
        if mask.len() != rows.div_ceil(8) || partition >= partitions {
            return Err(err(format!("malformed keep-mask of dedup op #{index}")));
        }
        let mask = (0..rows).map(|i| mask[i / 8] >> (i % 8) & 1 == 1).collect();
        Ok(DedupBarrier::decided(
            index,
            (*kind).into(),
            partitions,
            partition,
            mask,
        ))
    }
}

/// An [`InputIndex`] with absolute paths (executors do not share the client's working
/// directory) and its schema as an Arrow IPC stream header.
#[derive(Debug, Serialize, Deserialize)]
struct WireIndex {
    dataset_path: String,
    files: Vec<InputFile>,
    schema_ipc: Vec<u8>,
    total_rows: u64,
    /// Executors hash partitions as the client does, media fingerprints included.
    #[serde(default)]
    media: Option<crate::source::media::MediaRefs>,
}

fn keys_sink(
    index: usize,
    op_name: &str,
    hash_column: &str,
    kind: DedupKind,
    partition: usize,
    path: &Path,
) -> Result<WireNode> {
    Ok(WireNode::DedupKeys {
        index,
        op_name: op_name.to_string(),
        hash_column: hash_column.to_string(),
        kind: kind.into(),
        partition,
        path: absolute(path)?,
    })
}

fn removed_sink(d: &Decision) -> Result<WireNode> {
    Ok(WireNode::DedupRemoved {
        index: d.index,
        op_name: d.op_name.clone(),
        kind: d.kind.into(),
        partitions: d.partitions,
        dir: absolute(&d.dir)?,
        budget_bytes: d.budget_bytes,
    })
}

/// The decision a [`WireNode::DedupRemoved`] names.
fn decision(
    (index, op_name): (usize, String),
    kind: WireKind,
    partitions: usize,
    dir: PathBuf,
    budget_bytes: usize,
) -> Decision {
    Decision {
        index,
        op_name,
        kind: kind.into(),
        partitions,
        dir,
        budget_bytes,
    }
}

fn err(message: impl Into<String>) -> DataFusionError {
    DataFusionError::Internal(format!("dj-fusion codec: {}", message.into()))
}

fn absolute(path: &Path) -> Result<PathBuf> {
    std::path::absolute(path).map_err(|e| err(format!("{}: {e}", path.display())))
}

impl WireIndex {
    fn from_index(index: &InputIndex) -> Result<WireIndex> {
        let files = index
            .files
            .iter()
            .map(|f| {
                Ok(InputFile {
                    path: absolute(&f.path)?,
                    ..f.clone()
                })
            })
            .collect::<Result<_>>()?;
        let mut schema_ipc = Vec::new();
        StreamWriter::try_new(&mut schema_ipc, &index.schema)?.finish()?;
        Ok(WireIndex {
            dataset_path: index.dataset_path.clone(),
            files,
            schema_ipc,
            total_rows: index.total_rows,
            media: index.media.clone(),
        })
    }

    /// The index (its object-storage files are fetched when first read, see `RowRangeExec`).
    fn into_index(self) -> Result<InputIndex> {
        let reader = StreamReader::try_new(Cursor::new(self.schema_ipc), None)?;
        let schema: SchemaRef = reader.schema();
        Ok(InputIndex {
            dataset_path: self.dataset_path,
            files: self.files,
            schema,
            total_rows: self.total_rows,
            json_types: Default::default(),
            media: self.media,
        })
    }
}

fn write_dj(node: &WireNode, buf: &mut Vec<u8>) -> Result<()> {
    buf.push(DJ);
    serde_json::to_writer(buf, node).map_err(|e| err(e.to_string()))
}

fn read_dj(buf: &[u8]) -> Result<WireNode> {
    serde_json::from_slice(buf).map_err(|e| err(format!("malformed dj-fusion node: {e}")))
}

/// `DjOp` kinds are static labels; map a decoded one back to its static string.
fn static_kind(kind: Option<&str>) -> Result<&'static str> {
    const KINDS: [&str; 5] = ["source", "mapper", "filter", "deduplicator", "selector"];
    KINDS
        .into_iter()
        .find(|k| Some(*k) == kind)
        .ok_or_else(|| err(format!("unknown op kind {kind:?}")))
}

fn boundary_node(
    boundary: Boundary,
    op_name: &str,
    kind: Option<&str>,
    counters: &OpCounters,
) -> WireNode {
    WireNode::OpBoundary {
        boundary,
        op_name: op_name.to_string(),
        kind: kind.map(str::to_string),
        slots: counters.slot_count(),
    }
}

/// Counters of a decoded boundary: its own (what it counts comes back as its metrics).
fn decoded_counters(slots: usize) -> Arc<OpCounters> {
    OpCounters::new(slots.saturating_sub(1))
}

fn checkpoint_node(t: &CheckpointTarget) -> Result<WireNode> {
    Ok(WireNode::Checkpoint {
        op_index: t.op_index,
        op_name: t.op_name.clone(),
        partition: t.partition,
        path: absolute(&t.path)?,
        format: t.format,
        compression: t.compression,
        publish: t.publish.clone(),
    })
}

/// The listener of a decoded checkpoint sink: the process that planned the job reports it.
#[derive(Debug)]
struct ReportedByRunner;

impl CheckpointListener for ReportedByRunner {
    fn saved(&self, _checkpoint: &SavedCheckpoint) {}
}

fn decoded_target(node: WireNode) -> Option<CheckpointTarget> {
    match node {
        WireNode::Checkpoint {
            op_index,
            op_name,
            partition,
            path,
            format,
            compression,
            publish,
        } => Some(CheckpointTarget {
            op_index,
            op_name,
            partition,
            path,
            format,
            compression,
            listener: Arc::new(ReportedByRunner),
            publish,
            auto: None,
        }),
        _ => None,
    }
}

fn encode_udf(udf: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
    // Built-in functions write nothing and are found by name in the receiver's registry.
    if let Some(id) = identity_of(udf) {
        buf.push(DJ);
        serde_json::to_writer(buf, &(&id.op, &id.name, &id.config))
            .map_err(|e| err(e.to_string()))?;
    }
    Ok(())
}

fn decode_udf(name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
    let Some((&DJ, rest)) = buf.split_first() else {
        return Err(err(format!("function {name} is not a dj-fusion UDF")));
    };
    let (op, name, config): (String, String, String) =
        serde_json::from_slice(rest).map_err(|e| err(format!("malformed UDF {name}: {e}")))?;
    rebuild_udf(&UdfIdentity { op, name, config }).map_err(|e| err(e.to_string()))
}

/// Logical codec: dj-fusion's extension nodes and table, then `inner` for everything else.
#[derive(Debug)]
pub struct DjLogicalCodec {
    inner: Arc<dyn LogicalExtensionCodec>,
}

impl DjLogicalCodec {
    pub fn new(inner: Arc<dyn LogicalExtensionCodec>) -> Self {
        DjLogicalCodec { inner }
    }
}

impl Default for DjLogicalCodec {
    fn default() -> Self {
        DjLogicalCodec::new(Arc::new(DefaultLogicalExtensionCodec {}))
    }
}

impl LogicalExtensionCodec for DjLogicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[LogicalPlan],
        ctx: &TaskContext,
    ) -> Result<Extension> {
        match buf.split_first() {
            Some((&DJ, rest)) => {
                let input = inputs
                    .first()
                    .cloned()
                    .ok_or_else(|| err("extension node without input"))?;
                let node: Arc<dyn datafusion::logical_expr::UserDefinedLogicalNode> =
                    match read_dj(rest)? {
                        WireNode::OpBoundary {
                            boundary,
                            op_name,
                            kind,
                            slots,
                        } => Arc::new(OpBoundaryNode {
                            input,
                            boundary,
                            op_name,
                            kind: static_kind(kind.as_deref())?,
                            counters: decoded_counters(slots),
                        }),
                        node @ WireNode::Checkpoint { .. } => Arc::new(CheckpointNode {
                            input,
                            target: decoded_target(node).expect("checkpoint"),
                        }),
                        WireNode::Dedup(d) => Arc::new(DedupNode {
                            input,
                            index: d.index,
                            op_name: d.op_name.clone(),
                            hash_column: d.hash_column.clone(),
                            partition: d.partition,
                            barrier: d.barrier()?,
                        }),
                        WireNode::DedupKeys {
                            index,
                            op_name,
                            hash_column,
                            kind,
                            partition,
                            path,
                        } => Arc::new(KeysSinkNode::try_new(
                            input,
                            index,
                            op_name,
                            hash_column,
                            kind.into(),
                            partition,
                            path,
                        )?),
                        WireNode::DedupRemoved {
                            index,
                            op_name,
                            kind,
                            partitions,
                            dir,
                            budget_bytes,
                        } => Arc::new(RemovedSinkNode::try_new(
                            input,
                            decision((index, op_name), kind, partitions, dir, budget_bytes),
                        )?),
                        WireNode::Select(s) => Arc::new(SelectNode {
                            input,
                            index: s.index,
                            op_name: s.op_name.clone(),
                            value_column: s.value_column.clone(),
                            partition: s.partition,
                            barrier: s.barrier()?,
                        }),
                        WireNode::RowRange { .. } => {
                            return Err(err("a row-range source is a table, not a node"));
                        }
                    };
                Ok(Extension { node })
            }
            Some((&INNER, rest)) => self.inner.try_decode(rest, inputs, ctx),
            _ => Err(err("extension node with an unknown tag")),
        }
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> Result<()> {
        let any = node.node.as_any();
        if let Some(b) = any.downcast_ref::<OpBoundaryNode>() {
            return write_dj(
                &boundary_node(b.boundary, &b.op_name, Some(b.kind), &b.counters),
                buf,
            );
        }
        if let Some(c) = any.downcast_ref::<CheckpointNode>() {
            return write_dj(&checkpoint_node(&c.target)?, buf);
        }
        if let Some(d) = any.downcast_ref::<DedupNode>() {
            let node = dedup_node(d.index, &d.op_name, &d.hash_column, d.partition, &d.barrier)?;
            return write_dj(&node, buf);
        }
        if let Some(k) = any.downcast_ref::<KeysSinkNode>() {
            let node = keys_sink(
                k.index,
                &k.op_name,
                &k.hash_column,
                k.kind,
                k.partition,
                &k.path,
            )?;
            return write_dj(&node, buf);
        }
        if let Some(r) = any.downcast_ref::<RemovedSinkNode>() {
            let node = removed_sink(&r.decision)?;
            return write_dj(&node, buf);
        }
        if let Some(s) = any.downcast_ref::<SelectNode>() {
            let node = select_node(
                s.index,
                &s.op_name,
                &s.value_column,
                s.partition,
                &s.barrier,
            )?;
            return write_dj(&node, buf);
        }
        buf.push(INNER);
        self.inner.try_encode(node, buf)
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> Result<Arc<dyn TableProvider>> {
        match buf.split_first() {
            Some((&DJ, rest)) => match read_dj(rest)? {
                WireNode::RowRange { index, ranges, .. } => Ok(Arc::new(RowRangeTable::new(
                    Arc::new(index.into_index()?),
                    ranges,
                ))),
                _ => Err(err("table provider is not a row-range source")),
            },
            Some((&INNER, rest)) => self
                .inner
                .try_decode_table_provider(rest, table_ref, schema, ctx),
            _ => Err(err("table provider with an unknown tag")),
        }
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        if let Some(t) = node.downcast_ref::<RowRangeTable>() {
            if t.hash_sink().is_some() {
                return Err(err(
                    "a row-range source that content-hashes into this process cannot be sent",
                ));
            }
            let wire = WireNode::RowRange {
                index: WireIndex::from_index(t.index())?,
                ranges: t.ranges().to_vec(),
                projection: None,
            };
            return write_dj(&wire, buf);
        }
        buf.push(INNER);
        self.inner.try_encode_table_provider(table_ref, node, buf)
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        decode_udf(name, buf)
    }

    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
        encode_udf(node, buf)
    }
}

/// Physical codec: dj-fusion's execution plans, then `inner` for everything else.
#[derive(Debug)]
pub struct DjPhysicalCodec {
    inner: Arc<dyn PhysicalExtensionCodec>,
    /// When set (an executor's `--allow-root`), every local path a decoded plan names must lie
    /// under one of these directories.
    roots: Option<Vec<PathBuf>>,
}

impl DjPhysicalCodec {
    pub fn new(inner: Arc<dyn PhysicalExtensionCodec>) -> Self {
        // Executors run the plans this codec decodes: their media ops read s3:// paths too.
        crate::store::install_media_fetcher();
        DjPhysicalCodec { inner, roots: None }
    }

    /// Refuses, at decoding, any plan that names a local path outside `roots` (absolute
    /// directories) or with a `..` component: what a confined executor may read and write.
    pub fn confined_to(mut self, roots: Vec<PathBuf>) -> Self {
        self.roots = Some(roots);
        self
    }

    /// `path` (what the plan does with it: `what`) is allowed here.
    fn allow(&self, path: &Path, what: &str) -> Result<()> {
        let Some(roots) = &self.roots else {
            return Ok(());
        };
        let climbs = path
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir));
        if !path.is_absolute() || climbs || !roots.iter().any(|r| path.starts_with(r)) {
            return Err(err(format!(
                "refused a plan: its {what} {} is outside this executor's roots ({}; \
                 dj-cluster executor --allow-root)",
                path.display(),
                roots
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        Ok(())
    }

    /// Every local path `node` names is allowed here.
    fn allow_node(&self, node: &WireNode) -> Result<()> {
        match node {
            WireNode::Checkpoint { path, .. } => self.allow(path, "checkpoint"),
            WireNode::RowRange { index, .. } => {
                (index.files.iter()).try_for_each(|f| self.allow(&f.path, "input file"))
            }
            WireNode::Dedup(d) => match &d.removed_lists {
                Some(dir) => self.allow(dir, "removed-rows directory"),
                None => Ok(()),
            },
            WireNode::DedupKeys { path, .. } => self.allow(path, "key file"),
            WireNode::DedupRemoved { dir, .. } => self.allow(dir, "removed-rows directory"),
            WireNode::OpBoundary { .. } | WireNode::Select(_) => Ok(()),
        }
    }

    /// Every file a plan decoded by the inner codec scans (the staged decision's key files) is
    /// allowed here.
    fn allow_scans(&self, plan: &Arc<dyn ExecutionPlan>) -> Result<()> {
        if self.roots.is_none() {
            return Ok(());
        }
        use datafusion::datasource::physical_plan::FileScanConfig;
        use datafusion::datasource::source::DataSourceExec;
        let any: &dyn ExecutionPlan = plan.as_ref();
        if let Some(scan) = any.downcast_ref::<DataSourceExec>()
            && let Some(config) =
                (scan.data_source().as_ref() as &dyn std::any::Any).downcast_ref::<FileScanConfig>()
        {
            for group in &config.file_groups {
                for file in group.iter() {
                    let path = PathBuf::from(format!("/{}", file.object_meta.location));
                    self.allow(&path, "scanned file")?;
                }
            }
        }
        plan.children()
            .into_iter()
            .try_for_each(|child| self.allow_scans(child))
    }
}

impl Default for DjPhysicalCodec {
    fn default() -> Self {
        DjPhysicalCodec::new(Arc::new(DefaultPhysicalExtensionCodec {}))
    }
}

impl PhysicalExtensionCodec for DjPhysicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        match buf.split_first() {
            Some((&DJ, rest)) => {
                let input = || {
                    inputs
                        .first()
                        .cloned()
                        .ok_or_else(|| err("execution plan without input"))
                };
                let node = read_dj(rest)?;
                self.allow_node(&node)?;
                Ok(match node {
                    WireNode::OpBoundary {
                        boundary,
                        op_name,
                        slots,
                        ..
                    } => Arc::new(OpBoundaryExec::new(
                        input()?,
                        boundary,
                        op_name,
                        decoded_counters(slots),
                    )),
                    node @ WireNode::Checkpoint { .. } => Arc::new(CheckpointExec::new(
                        input()?,
                        decoded_target(node).expect("checkpoint"),
                    )),
                    WireNode::RowRange {
                        index,
                        ranges,
                        projection,
                    } => Arc::new(RowRangeExec::new(
                        Arc::new(index.into_index()?),
                        ranges,
                        projection.as_ref(),
                    )?),
                    WireNode::Dedup(d) => Arc::new(DedupExec::try_new(
                        input()?,
                        &d.hash_column,
                        d.op_name.clone(),
                        d.partition,
                        d.barrier()?,
                    )?),
                    WireNode::DedupKeys {
                        index,
                        op_name,
                        hash_column,
                        kind,
                        partition,
                        path,
                    } => Arc::new(KeysSinkExec::try_new(
                        input()?,
                        &hash_column,
                        index,
                        op_name,
                        kind.into(),
                        partition,
                        path,
                    )?),
                    WireNode::DedupRemoved {
                        index,
                        op_name,
                        kind,
                        partitions,
                        dir,
                        budget_bytes,
                    } => Arc::new(RemovedSinkExec::try_new(
                        input()?,
                        decision((index, op_name), kind, partitions, dir, budget_bytes),
                    )?),
                    WireNode::Select(s) => Arc::new(SelectExec::try_new(
                        input()?,
                        &s.value_column,
                        s.op_name.clone(),
                        s.partition,
                        s.barrier()?,
                    )?),
                })
            }
            Some((&INNER, rest)) => {
                let plan = self.inner.try_decode(rest, inputs, ctx, proto_converter)?;
                self.allow_scans(&plan)?;
                Ok(plan)
            }
            _ => Err(err("execution plan with an unknown tag")),
        }
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        let any = node.as_ref();
        if let Some(b) = any.downcast_ref::<OpBoundaryExec>() {
            return write_dj(
                &boundary_node(b.boundary, &b.op_name, None, &b.counters),
                buf,
            );
        }
        if let Some(c) = any.downcast_ref::<CheckpointExec>() {
            return write_dj(&checkpoint_node(c.target())?, buf);
        }
        if let Some(r) = any.downcast_ref::<RowRangeExec>() {
            if r.hash_sink().is_some() {
                return Err(err(
                    "a row-range source that content-hashes into this process cannot be sent",
                ));
            }
            let wire = WireNode::RowRange {
                index: WireIndex::from_index(r.index())?,
                ranges: r.ranges().to_vec(),
                projection: r.projection().cloned(),
            };
            return write_dj(&wire, buf);
        }
        if let Some(d) = any.downcast_ref::<DedupExec>() {
            let node = dedup_node(
                d.index(),
                &d.op_name,
                &d.hash_column(),
                d.partition(),
                d.barrier(),
            )?;
            return write_dj(&node, buf);
        }
        if let Some(k) = any.downcast_ref::<KeysSinkExec>() {
            let node = keys_sink(
                k.index,
                &k.op_name,
                &k.hash_column(),
                k.kind,
                k.partition,
                &k.path,
            )?;
            return write_dj(&node, buf);
        }
        if let Some(r) = any.downcast_ref::<RemovedSinkExec>() {
            let node = removed_sink(&r.decision)?;
            return write_dj(&node, buf);
        }
        if let Some(s) = any.downcast_ref::<SelectExec>() {
            let node = select_node(
                s.index(),
                &s.op_name,
                &s.value_column(),
                s.partition(),
                s.barrier(),
            )?;
            return write_dj(&node, buf);
        }
        buf.push(INNER);
        self.inner.try_encode(node, buf, proto_converter)
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        decode_udf(name, buf)
    }

    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
        encode_udf(node, buf)
    }
}

#[cfg(test)]
mod confinement_tests {
    use super::*;

    fn checkpoint(path: &str) -> WireNode {
        WireNode::Checkpoint {
            op_index: 0,
            op_name: "m".into(),
            partition: 0,
            path: PathBuf::from(path),
            format: StorageFormat::Arrow,
            compression: Compression::None,
            publish: None,
        }
    }

    /// A confined executor decodes plans whose paths lie under its roots, and refuses absolute
    /// paths elsewhere, relative ones and any that climb with `..` (a job id of `../..`).
    #[test]
    fn a_confined_codec_refuses_paths_outside_its_roots() {
        let free = DjPhysicalCodec::default();
        free.allow_node(&checkpoint("/etc/passwd")).unwrap();
        let codec = DjPhysicalCodec::default().confined_to(vec![PathBuf::from("/data/jobs")]);
        codec
            .allow_node(&checkpoint("/data/jobs/j1/checkpoints/c.arrow"))
            .unwrap();
        for path in [
            "/etc/passwd",
            "/data/jobsX/c.arrow",
            "data/jobs/c.arrow",
            "/data/jobs/../../etc/passwd",
            "/data/jobs/j1/../../../etc/shadow",
        ] {
            let e = codec.allow_node(&checkpoint(path)).unwrap_err().to_string();
            assert!(
                e.contains(path)
                    && e.contains("outside this executor's roots")
                    && e.contains("/data/jobs"),
                "{path}: {e}"
            );
        }
        let removed = WireNode::DedupRemoved {
            index: 1,
            op_name: "d".into(),
            kind: DedupKind::Exact.into(),
            partitions: 2,
            dir: PathBuf::from("/var/lib/x"),
            budget_bytes: 1,
        };
        let e = codec.allow_node(&removed).unwrap_err().to_string();
        assert!(e.contains("removed-rows directory /var/lib/x"), "{e}");
    }
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::util::pretty::pretty_format_batches;
    use datafusion::physical_plan::collect;
    use datafusion_proto::bytes::{
        logical_plan_from_bytes_with_extension_codec, logical_plan_to_bytes_with_extension_codec,
        physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
    };

    use super::*;
    use crate::Recipe;
    use crate::compile::{Barriers, compile_partition};
    use crate::planner;

    const RECIPE: &str = "\
dataset_path: DATA
export_path: out.jsonl
process:
  - whitespace_normalization_mapper:
  - text_length_filter:
      min_len: 12
  - words_num_filter:
      min_num: 3
";

    struct Fixture {
        dir: tempfile::TempDir,
        recipe: Recipe,
        index: Arc<InputIndex>,
    }

    fn fixture(recipe: &str) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data.jsonl");
        let rows = [
            "a  short  one",
            "this  text   has enough words",
            "tiny",
            "another   sample   that is kept",
            "two words",
        ];
        let lines: Vec<String> = rows
            .iter()
            .map(|t| serde_json::json!({ "text": t }).to_string())
            .collect();
        std::fs::write(&data, lines.join("\n") + "\n").unwrap();
        let text = recipe.replace("DATA", data.to_str().unwrap());
        let recipe = Recipe::from_str("recipe.yaml", &text, &[]).unwrap();
        let index = Arc::new(InputIndex::build(data.to_str().unwrap()).unwrap());
        Fixture { dir, recipe, index }
    }

    /// Partition 1 of 2 (rows 3..5) with a checkpoint after op 1.
    fn compiled(f: &Fixture) -> crate::compile::CompiledRecipe {
        let barriers = Barriers::new(&f.recipe.process, 2, None, None);
        let path = f.dir.path().join("ckpt.arrow");
        let checkpoint = move |op: &crate::recipe::OpConfig| {
            (op.index == 1).then(|| CheckpointTarget {
                op_index: 1,
                op_name: op.name.clone(),
                partition: 1,
                path: path.clone(),
                format: StorageFormat::Arrow,
                compression: Compression::None,
                listener: Arc::new(ReportedByRunner),
                publish: None,
                auto: None,
            })
        };
        let table = RowRangeTable::new(f.index.clone(), vec![RowRange { start: 2, end: 5 }]);
        compile_partition(
            &f.recipe,
            Arc::new(table),
            true,
            &f.recipe.process,
            &barriers.context(1, &checkpoint),
        )
        .unwrap()
    }

    fn text(batches: &[datafusion::arrow::array::RecordBatch]) -> String {
        pretty_format_batches(batches).unwrap().to_string()
    }

    #[tokio::test]
    async fn logical_plans_round_trip_and_run_the_same() {
        let f = fixture(RECIPE);
        let plan = compiled(&f).plan;
        let codec = DjLogicalCodec::default();
        let session = planner::session(1);
        let bytes = logical_plan_to_bytes_with_extension_codec(&plan, &codec).unwrap();
        let back =
            logical_plan_from_bytes_with_extension_codec(&bytes, &session.task_ctx(), &codec)
                .unwrap();
        assert_eq!(
            back.display_indent().to_string(),
            plan.display_indent().to_string()
        );
        let run = |plan: LogicalPlan| {
            let session = planner::session(1);
            async move {
                let exec = session.state().create_physical_plan(&plan).await.unwrap();
                collect(exec, session.task_ctx()).await.unwrap()
            }
        };
        let want = run(plan).await;
        std::fs::remove_file(f.dir.path().join("ckpt.arrow")).unwrap();
        let got = run(back).await;
        assert_eq!(text(&got), text(&want));
        assert!(
            text(&got).contains("another   sample   that is kept"),
            "{}",
            text(&got)
        );
        assert!(
            f.dir.path().join("ckpt.arrow").is_file(),
            "the decoded sink wrote"
        );
    }

    #[tokio::test]
    async fn physical_plans_round_trip_and_report_counts_as_metrics() {
        let f = fixture(RECIPE);
        let compiled = compiled(&f);
        let session = planner::session(1);
        let exec = session
            .state()
            .create_physical_plan(&compiled.plan)
            .await
            .unwrap();
        let codec = DjPhysicalCodec::default();
        let bytes = physical_plan_to_bytes_with_extension_codec(exec.clone(), &codec).unwrap();
        let back =
            physical_plan_from_bytes_with_extension_codec(&bytes, &session.task_ctx(), &codec)
                .unwrap();
        let shown = |p: &Arc<dyn ExecutionPlan>| {
            datafusion::physical_plan::displayable(p.as_ref())
                .indent(false)
                .to_string()
        };
        assert_eq!(shown(&back), shown(&exec));
        let got = collect(back.clone(), session.task_ctx()).await.unwrap();
        assert_eq!(got.iter().map(|b| b.num_rows()).sum::<usize>(), 1);
        // The decoded boundaries counted in their own counters and kept the counts as metrics,
        // which the runner books from the operators' display lines as Ballista's scheduler
        // reports them (`fmt_as` with the default format).
        assert_eq!(compiled.counters.rows_loaded(), 0);
        struct Line<'a>(&'a dyn ExecutionPlan);
        impl std::fmt::Display for Line<'_> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0
                    .fmt_as(datafusion::physical_plan::DisplayFormatType::Default, f)
            }
        }
        use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
        back.apply(|node| {
            if let Some(m) = node.metrics() {
                compiled
                    .counters
                    .record_executed(&Line(node.as_ref()).to_string(), &m);
            }
            Ok(TreeNodeRecursion::Continue)
        })
        .unwrap();
        assert_eq!(compiled.counters.rows_loaded(), 3);
        assert_eq!(compiled.counters.rows_out(0), 3);
        assert_eq!(
            compiled.counters.rows_out(1),
            1,
            "text_length_filter kept one of three"
        );
        assert_eq!(compiled.counters.rows_out(2), 1);
        let seconds: f64 = (0..3).map(|op| compiled.counters.op_seconds(op)).sum();
        assert!(seconds > 0.0, "the boundaries' times came back too");
    }

    /// A deduplicator is sent only once decided, and then with its decision: the decoded plan
    /// (on another process, without the barrier) keeps the same rows.
    #[tokio::test]
    async fn deduplicators_travel_with_their_decision() {
        let f = fixture(&format!(
            "{}  - document_deduplicator:\n      lowercase: true\n",
            RECIPE.replace("min_len: 12", "min_len: 1")
        ));
        let data = f.dir.path().join("data.jsonl");
        let mut lines = std::fs::read_to_string(&data).unwrap();
        lines.push_str("{\"text\": \"THIS  text   has enough words\"}\n");
        std::fs::write(&data, lines).unwrap();
        let index = Arc::new(InputIndex::build(data.to_str().unwrap()).unwrap());
        let plan = crate::compile::compile(
            &f.recipe,
            Arc::new(RowRangeTable::new(
                index,
                vec![RowRange { start: 0, end: 6 }],
            )),
        )
        .unwrap()
        .plan;
        let codec = DjLogicalCodec::default();
        let err = logical_plan_to_bytes_with_extension_codec(&plan, &codec)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("a plan is sent only after every partition's keys decided what it keeps"),
            "{err}"
        );
        // Running it locally decides the (single) partition's keep-mask.
        let session = planner::session(1);
        let exec = session.state().create_physical_plan(&plan).await.unwrap();
        let want = collect(exec, session.task_ctx()).await.unwrap();
        let bytes = logical_plan_to_bytes_with_extension_codec(&plan, &codec).unwrap();
        let back =
            logical_plan_from_bytes_with_extension_codec(&bytes, &session.task_ctx(), &codec)
                .unwrap();
        let exec = session.state().create_physical_plan(&back).await.unwrap();
        let physical = DjPhysicalCodec::default();
        let bytes = physical_plan_to_bytes_with_extension_codec(exec, &physical).unwrap();
        let exec =
            physical_plan_from_bytes_with_extension_codec(&bytes, &session.task_ctx(), &physical)
                .unwrap();
        let got = collect(exec, session.task_ctx()).await.unwrap();
        assert_eq!(text(&got), text(&want));
        assert_eq!(
            got.iter().map(|b| b.num_rows()).sum::<usize>(),
            3,
            "{}",
            text(&got)
        );
    }

    #[tokio::test]
    async fn undecided_selectors_and_local_hash_sinks_are_refused() {
        let f = fixture(&format!(
            "{RECIPE}  - random_selector:\n      select_num: 2\n"
        ));
        let plan = crate::compile::compile(
            &f.recipe,
            Arc::new(RowRangeTable::new(
                f.index.clone(),
                vec![RowRange { start: 0, end: 5 }],
            )),
        )
        .unwrap()
        .plan;
        let err = logical_plan_to_bytes_with_extension_codec(&plan, &DjLogicalCodec::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(
                "a plan is sent only after every partition's values decided what it keeps"
            ),
            "{err}"
        );

        #[derive(Debug)]
        struct Sink;
        impl crate::source::RangeHashSink for Sink {
            fn range_hashed(
                &self,
                _: usize,
                _: crate::source::RangeDigest,
            ) -> std::result::Result<(), String> {
                Ok(())
            }
        }
        let exec = RowRangeExec::new(f.index.clone(), vec![RowRange { start: 0, end: 5 }], None)
            .unwrap()
            .with_hash_sink(Some(Arc::new(Sink)));
        let err = physical_plan_to_bytes_with_extension_codec(
            Arc::new(exec),
            &DjPhysicalCodec::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("content-hashes into this process"), "{err}");
    }
}
