//! dj-plans: the Data-Juicer recipe model and its compilation to DataFusion plans.
//!
//! [`recipe`] loads and validates recipes; [`source`] is the row-boundary partition source;
//! [`compile`] turns a recipe into a `LogicalPlan`; [`nodes`] holds the custom plan nodes (op
//! boundaries, global dedup) and [`planner`] maps them to execution plans.

pub mod atomic;
pub mod codec;
pub mod compile;
pub mod drop_behind;
pub mod nodes;
pub mod planner;
pub mod pyjson;
pub mod recipe;
pub mod seal;
pub mod source;
pub mod store;
mod yaml_lines;

pub use recipe::{ExecutorType, OpConfig, Recipe, RecipeError};
