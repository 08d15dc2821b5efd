//! Error type for loading KenLM models: every message names the file and where in it
//! the problem is (ARPA line number, binary byte offset or header field).

use std::path::PathBuf;

/// Why a model could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum KenlmError {
    /// The file could not be opened, read or memory-mapped.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// An ARPA text file is malformed or violates a rule kenlm enforces.
    #[error("{path}: line {line}: {message}")]
    Arpa {
        path: PathBuf,
        line: usize,
        message: String,
    },
    /// A KenLM binary file is malformed, truncated or of an unsupported kind.
    #[error("{path}: {message}")]
    Binary { path: PathBuf, message: String },
}
