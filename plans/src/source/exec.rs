//! [`RowRangeExec`]: the leaf plan with one output partition per logical row range, and
//! [`RowRangeTable`], the table provider that puts it under a recipe's logical plan.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::Session;
use datafusion::common::stats::Precision;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{Result, Statistics};
use datafusion::datasource::{TableProvider, TableType};
use datafusion::error::DataFusionError;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::Expr;
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchReceiverStreamBuilder;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
    ReplaceChildrenOptions,
};

use super::content_hash::{ContentHasher, RangeHashSink};
use super::files::FileFormat;
use super::{InputIndex, RowRange, arrow_input, jsonl, parquet_input};

/// Scans the input as the given row ranges: output partition `i` yields exactly rows
/// `ranges[i]` in input order, whatever the file layout. With a [`RangeHashSink`], each range
/// read to its end is also content-hashed (all columns, whatever the projection) on the way.
#[derive(Debug)]
pub struct RowRangeExec {
    index: Arc<InputIndex>,
    ranges: Vec<RowRange>,
    projection: Option<Vec<usize>>,
    schema: SchemaRef,
    properties: Arc<PlanProperties>,
    hash_sink: Option<Arc<dyn RangeHashSink>>,
}

impl RowRangeExec {
    pub fn new(
        index: Arc<InputIndex>,
        ranges: Vec<RowRange>,
        projection: Option<&Vec<usize>>,
    ) -> Result<Self> {
        let schema = match projection {
            Some(p) => Arc::new(index.schema.project(p)?),
            None => index.schema.clone(),
        };
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(ranges.len()),
            EmissionType::Incremental,
            Boundedness::Bounded,
        ));
        Ok(RowRangeExec {
            index,
            ranges,
            projection: projection.cloned(),
            schema,
            properties,
            hash_sink: None,
        })
    }

    /// Hashes every range read to its end into `sink`.
    pub fn with_hash_sink(mut self, sink: Option<Arc<dyn RangeHashSink>>) -> Self {
        self.hash_sink = sink;
        self
    }

    pub fn ranges(&self) -> &[RowRange] {
        &self.ranges
    }

    pub fn index(&self) -> &Arc<InputIndex> {
        &self.index
    }

    pub(crate) fn projection(&self) -> Option<&Vec<usize>> {
        self.projection.as_ref()
    }

    pub(crate) fn hash_sink(&self) -> Option<&Arc<dyn RangeHashSink>> {
        self.hash_sink.as_ref()
    }
}

impl DisplayAs for RowRangeExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ranges: Vec<String> = self
            .ranges
            .iter()
            .map(|r| format!("[{}, {})", r.start, r.end))
            .collect();
        write!(
            f,
            "RowRangeExec: files={}, rows={}, partitions={}, ranges={}",
            self.index.files.len(),
            self.index.total_rows,
            self.ranges.len(),
            ranges.join(" ")
        )
    }
}

impl ExecutionPlan for RowRangeExec {
    fn name(&self) -> &str {
        "RowRangeExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn replace_children(
        self: Arc<Self>,
        _children: Vec<Arc<dyn ExecutionPlan>>,
        _options: ReplaceChildrenOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    #[allow(deprecated)]
    fn with_new_children(
        self: Arc<Self>,
        _children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    fn execute(
        &self,
        partition: usize,
        _context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let range = *self.ranges.get(partition).ok_or_else(|| {
            DataFusionError::Internal(format!(
                "RowRangeExec has {} partitions, asked for {partition}",
                self.ranges.len()
            ))
        })?;
        let index = self.index.clone();
        let sink = self.hash_sink.clone();
        // A hashed range is read whole and projected after hashing.
        let (schema, projection) = match &sink {
            Some(_) => (index.schema.clone(), self.projection.clone()),
            None => (self.schema.clone(), None),
        };
        let mut builder = RecordBatchReceiverStreamBuilder::new(self.schema.clone(), 2);
        let tx = builder.tx();
        builder.spawn_blocking(move || {
            let mut hasher = sink
                .as_ref()
                .map(|_| ContentHasher::new(index.media.clone()));
            let mut file_start = 0u64;
            for file in &index.files {
                let file_end = file_start + file.rows;
                if file_end > range.start && file_start < range.end {
                    let lo = range.start.max(file_start) - file_start;
                    let hi = range.end.min(file_end) - file_start;
                    let mut emit = |b: RecordBatch| {
                        let b = match (&mut hasher, &projection) {
                            (None, _) => b,
                            (Some(h), p) => {
                                h.update(&b);
                                match p {
                                    Some(p) => match b.project(p) {
                                        Ok(b) => b,
                                        Err(e) => {
                                            let _ = tx.blocking_send(Err(e.into()));
                                            return false;
                                        }
                                    },
                                    None => b,
                                }
                            }
                        };
                        tx.blocking_send(Ok(b)).is_ok()
                    };
                    // A file of object storage this machine lacks is fetched into its cache
                    // when first read (not when the plan is decoded: the scheduler plans
                    // without reading data).
                    let fetched;
                    let file = match &file.remote {
                        Some(remote) if !file.path.is_file() => {
                            let mut f = file.clone();
                            f.path = crate::store::ensure_local(remote)
                                .map_err(|e| DataFusionError::External(Box::new(e)))?;
                            fetched = f;
                            &fetched
                        }
                        _ => file,
                    };
                    let r = match file.format {
                        FileFormat::Parquet => {
                            parquet_input::read_range(file, &schema, lo, hi, &mut emit)
                        }
                        FileFormat::ArrowIpc => {
                            arrow_input::read_range(file, &schema, lo, hi, &mut emit)
                        }
                        FileFormat::Jsonl | FileFormat::JsonArray => {
                            jsonl::read_range(file, &schema, lo, hi, &mut emit)
                        }
                    };
                    r.map_err(|e| DataFusionError::External(Box::new(e)))?;
                }
                file_start = file_end;
            }
            // A stream dropped early (its consumer stopped) has not read the whole range.
            if let (Some(sink), Some(hasher)) = (sink, hasher)
                && hasher.rows() == range.len()
            {
                sink.range_hashed(partition, hasher.finish())
                    .map_err(DataFusionError::Execution)?;
            }
            Ok(())
        });
        Ok(builder.build())
    }

    fn partition_statistics(&self, partition: Option<usize>) -> Result<Arc<Statistics>> {
        let rows = match partition {
            Some(p) => self.ranges.get(p).map(|r| r.len()).unwrap_or(0),
            None => self.ranges.iter().map(|r| r.len()).sum(),
        };
        let mut s = Statistics::new_unknown(&self.schema);
        s.num_rows = Precision::Exact(rows as usize);
        Ok(Arc::new(s))
    }
}

/// The recipe input as a table whose scan is a [`RowRangeExec`] over fixed ranges.
#[derive(Debug)]
pub struct RowRangeTable {
    index: Arc<InputIndex>,
    ranges: Vec<RowRange>,
    hash_sink: Option<Arc<dyn RangeHashSink>>,
}

impl RowRangeTable {
    pub fn new(index: Arc<InputIndex>, ranges: Vec<RowRange>) -> Self {
        RowRangeTable {
            index,
            ranges,
            hash_sink: None,
        }
    }

    /// Scans hash every range they read to its end into `sink`.
    pub fn with_hash_sink(mut self, sink: Option<Arc<dyn RangeHashSink>>) -> Self {
        self.hash_sink = sink;
        self
    }

    pub fn index(&self) -> &Arc<InputIndex> {
        &self.index
    }

    pub fn ranges(&self) -> &[RowRange] {
        &self.ranges
    }

    pub(crate) fn hash_sink(&self) -> Option<&Arc<dyn RangeHashSink>> {
        self.hash_sink.as_ref()
    }
}

#[async_trait]
impl TableProvider for RowRangeTable {
    fn schema(&self) -> SchemaRef {
        self.index.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        _limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(
            RowRangeExec::new(self.index.clone(), self.ranges.clone(), projection)?
                .with_hash_sink(self.hash_sink.clone()),
        ))
    }
}
