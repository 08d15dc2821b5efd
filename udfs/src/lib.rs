//! Data-Juicer operators for dj-fusion.
//!
//! Each operator is a pure function over text (tested on its own) plus a DataFusion UDF wrapper that
//! applies it to whole Arrow string arrays. [`registry`] maps Data-Juicer op names to their parameter
//! schema and constructor, so a recipe's `process:` list can be validated and built.

pub(crate) mod cache_dirs;
pub mod columns;
pub mod dedup;
pub mod filter;
#[cfg(feature = "media")]
pub mod frames;
pub mod lanes;
pub mod mapper;
#[cfg(feature = "media")]
pub mod media;
pub mod models;
pub mod operator;
pub mod params;
pub mod py;
pub mod registry;
pub mod remote_media;
pub mod selector;
pub mod spare;
pub mod spec;
pub mod suggest;
#[cfg(test)]
pub(crate) mod test_support;
pub mod text;
#[cfg(feature = "media")]
pub mod transcode;
pub mod udf;
pub mod value;
pub mod wire;

pub use operator::{
    DedupKind, DedupOp, DedupReads, FieldFilterOp, FieldStat, FilterOp, MediaMapperOp,
    MediaMapperShape, Operator, SelectorKind, SelectorOp, StatRange,
};
pub use params::{ParamError, ParamSpec, ParamType, Params};
pub use registry::{lookup, registry};
pub use spec::{OpKind, OpSpec};

/// The operators' implementation version: a release that changes any op's results bumps it, so
/// checkpoints of earlier releases are not reused across jobs.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Python's `sys.maxsize`, Data-Juicer's default upper bound.
pub const PY_MAXSIZE: i64 = i64::MAX;
