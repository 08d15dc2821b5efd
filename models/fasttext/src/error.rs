//! The error type of model loading. Every message names the model file and what was wrong
//! with it, so a failing recipe says which file to fix.

use std::path::PathBuf;

/// Why a fastText model file could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum FastTextError {
    /// The file could not be opened or read.
    #[error("{path}: cannot read fastText model: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The first four bytes are not fastText's magic number.
    #[error(
        "{path}: not a fastText model file (magic number {found:#010x}, expected {expected:#010x})"
    )]
    WrongMagic {
        path: PathBuf,
        found: u32,
        expected: u32,
    },
    /// A file format version newer than fastText 0.9.x writes.
    #[error("{path}: unsupported fastText file format version {found} (supported: up to {max})")]
    UnsupportedVersion { path: PathBuf, found: i32, max: i32 },
    /// The file ends before `field` is complete.
    #[error(
        "{path}: truncated fastText model: file ends in {field} (at byte {offset}, {needed} more bytes needed)"
    )]
    Truncated {
        path: PathBuf,
        field: String,
        offset: u64,
        needed: u64,
    },
    /// A well-formed model this reader cannot predict with (e.g. an unsupervised model).
    #[error("{path}: unsupported fastText model: {what}")]
    Unsupported { path: PathBuf, what: String },
    /// The file parses but its parts contradict each other (sizes, counts, indices).
    #[error("{path}: invalid fastText model: {what}")]
    Invalid { path: PathBuf, what: String },
}
