//! dj-fusion: Data-Juicer recipes on Apache DataFusion.
//!
//! The recipe model, compiler and plan nodes live in `dj-plans`, the operators in `dj-udfs`; this
//! crate runs jobs ([`run`]), writes results in Data-Juicer's formats ([`export`]),
//! explains plans ([`explain`]) and holds the binaries' flags ([`flags`]) and entry points ([`cli`]).

pub mod autosize;
pub mod checkpoints;
pub mod cli;
pub mod cluster;
pub mod events;
pub mod explain;
pub mod export;
pub mod flags;
pub mod job;
pub mod jobtools;
pub mod logging;
pub mod partitioned;
pub mod partitioning;
pub mod progress;
pub mod ranked;
pub mod remote;
pub mod run;
pub mod sql;

/// mimalloc: the operators and the JSON reader allocate many small strings and values, often
/// freed on another thread than the one that made them (glibc's arenas contend there).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
