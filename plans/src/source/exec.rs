//! [`RowRangeExec`]: the leaf plan with one output partition per logical row range, and
//! [`RowRangeTable`], the table provider that puts it under a recipe's logical plan.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
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

use super::files::FileFormat;
use super::{InputIndex, RowRange, arrow_input, jsonl, parquet_input};

/// Scans the input as the given row ranges: output partition `i` yields exactly rows
/// `ranges[i]` in input order, whatever the file layout.
#[derive(Debug)]
pub struct RowRangeExec {
    index: Arc<InputIndex>,
    ranges: Vec<RowRange>,
    schema: SchemaRef,
    properties: Arc<PlanProperties>,
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
            schema,
            properties,
        })
    }

    pub fn ranges(&self) -> &[RowRange] {
        &self.ranges
    }

    pub fn index(&self) -> &Arc<InputIndex> {
        &self.index
    }
}

impl DisplayAs for RowRangeExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
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
        let schema = self.schema.clone();
        let mut builder = RecordBatchReceiverStreamBuilder::new(schema.clone(), 2);
        let tx = builder.tx();
        builder.spawn_blocking(move || {
            let mut file_start = 0u64;
            for file in &index.files {
                let file_end = file_start + file.rows;
                if file_end > range.start && file_start < range.end {
                    let lo = range.start.max(file_start) - file_start;
                    let hi = range.end.min(file_end) - file_start;
                    let mut emit = |b| tx.blocking_send(Ok(b)).is_ok();
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
}

impl RowRangeTable {
    pub fn new(index: Arc<InputIndex>, ranges: Vec<RowRange>) -> Self {
        RowRangeTable { index, ranges }
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
        Ok(Arc::new(RowRangeExec::new(
            self.index.clone(),
            self.ranges.clone(),
            projection,
        )?))
    }
}
