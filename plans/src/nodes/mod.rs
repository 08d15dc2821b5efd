//! Custom plan nodes: [`op_boundary`] marks where each recipe op ends (and counts its rows);
//! [`checkpoint`] writes a partition's rows after an op; [`dedup`] keeps the first row per hash
//! across all partitions.

pub mod checkpoint;
pub mod dedup;
pub mod op_boundary;

pub use checkpoint::{
    CheckpointExec, CheckpointListener, CheckpointNode, CheckpointTarget, SavedCheckpoint,
};
pub use dedup::{Concurrency, DedupBarrier, DedupExec, DedupNode};
pub use op_boundary::{Boundary, OpBoundaryExec, OpBoundaryNode, OpCounters};
