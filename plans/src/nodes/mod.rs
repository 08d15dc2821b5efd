//! Custom plan nodes: [`op_boundary`] marks where each recipe op ends (and counts its rows);
//! [`dedup`] keeps the first row per hash across all partitions.

pub mod dedup;
pub mod op_boundary;

pub use dedup::{DedupExec, DedupNode};
pub use op_boundary::{Boundary, OpBoundaryExec, OpBoundaryNode, OpCounters};
