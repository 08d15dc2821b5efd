//! dj-fusion: Data-Juicer recipes on Apache DataFusion.
//!
//! The recipe model, compiler and plan nodes live in `dj-plans`, the operators in `dj-udfs`; this
//! crate runs jobs (`run`), writes results in Data-Juicer's formats (`export`), explains plans
//! (`explain`) and holds the binaries' flags (`flags`) and entry points (`cli`). Its modules are
//! private: the binaries' entry points and [`run()`] (for the integration tests) are its whole
//! interface, so the compiler reports what nothing uses.

#![warn(unreachable_pub)]

mod analyze;
mod autosize;
mod cli;
mod cluster;
mod execute;
mod explain;
mod export;
mod flags;
mod job;
mod jobtools;
mod logging;
mod partitioned;
mod progress;
mod ranked;
mod remote;
mod run;
mod sql;

pub use cli::{analyze_main, cluster_main, plan_main, run_main};
pub use execute::{JobReport, OpReport, RunObserver, RunOptions, RunReport};
pub use job::checkpoints::Quarantined;
pub use jobtools::job_main;
pub use run::run;
pub use sql::sql_main;

/// mimalloc: the operators and the JSON reader allocate many small strings and values, often
/// freed on another thread than the one that made them (glibc's arenas contend there).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
