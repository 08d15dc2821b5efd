//! dj-plans: the Data-Juicer recipe model and its compilation to DataFusion plans.

/// Atomic file writes: a temporary name, fsynced and renamed into place.
pub mod atomic;
/// Plan codecs, so a compiled plan runs in other processes (Ballista's scheduler and executors).
pub mod codec;
/// Recipe -> DataFusion `LogicalPlan`: a projection, filter or global node per op.
pub mod compile;
/// Streaming file reads and writes that drop their pages from the page cache behind them.
pub mod drop_behind;
/// Custom plan nodes: op boundaries, checkpoints, global dedup and selectors.
pub mod nodes;
/// Session setup and the extension planner mapping the custom nodes to execution plans.
pub mod planner;
/// Arrow rows -> JSON lines exactly as Data-Juicer writes them.
pub mod pyjson;
/// The Data-Juicer recipe model: YAML and CLI overrides -> a validated [`Recipe`].
pub mod recipe;
/// BLAKE3 seals of the files a job reads back (checkpoints, key and value files).
pub mod seal;
/// The row-boundary partition source: the input as ordered row ranges.
pub mod source;
/// Object storage (`s3://`) locations besides local paths, with a local cache of remote inputs.
pub mod store;
/// YAML key paths -> line numbers, for recipe errors.
mod yaml_lines;

pub use recipe::{ExecutorType, OpConfig, Recipe, RecipeError};
