//! Content hash of a row range (`blake3-rows-v1`): BLAKE3 over each row's canonical serialization —
//! the row as one Data-Juicer JSON line, columns in schema order — in row order. It does not depend
//! on batch boundaries or on how rows are spread over files, and changes with any row or its order.
//! When the recipe's operators read media files, a second BLAKE3 covers their fingerprints in row
//! order ([`MediaRefs`]) and the digest is that of both.
//!
//! [`RangeHashSink`] lets [`super::RowRangeExec`] hash the rows it streams to the plan, so a
//! checkpointed job needs no separate pass over its input to record partition hashes.

use std::fmt;

use datafusion::arrow::record_batch::RecordBatch;

use super::media::MediaRefs;
use crate::pyjson;

/// The name recorded next to the hashes, so a reader can tell how they were made.
pub const HASH_ALGORITHM: &str = "blake3-rows-v1";

/// Incremental [`HASH_ALGORITHM`] hash of consecutive batches.
pub struct ContentHasher {
    hasher: blake3::Hasher,
    rows: u64,
    line: String,
    media: Option<(MediaRefs, blake3::Hasher)>,
}

impl Default for ContentHasher {
    fn default() -> Self {
        ContentHasher::new(None)
    }
}

impl ContentHasher {
    /// A hasher of rows and, if given, of the media files they reference.
    pub fn new(media: Option<MediaRefs>) -> Self {
        ContentHasher {
            hasher: blake3::Hasher::new(),
            rows: 0,
            line: String::new(),
            media: media.map(|m| (m, blake3::Hasher::new())),
        }
    }

    pub fn update(&mut self, batch: &RecordBatch) {
        if let Some((refs, hasher)) = &mut self.media {
            refs.fingerprint(batch, hasher);
        }
        self.rows += batch.num_rows() as u64;
        self.line.clear();
        // The canonical form content hashes have always been taken over (every float rounded,
        // nested nulls dropped): saved jobs' hashes stay valid.
        pyjson::write_rows(batch, &mut self.line, &pyjson::JsonTypes::all());
        self.hasher.update(self.line.as_bytes());
    }

    /// Rows hashed so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Rows hashed and the hex digest.
    pub fn finish(self) -> RangeDigest {
        let rows = self.hasher.finalize();
        let hash = match self.media {
            None => rows,
            Some((_, media)) => {
                let mut both = blake3::Hasher::new();
                both.update(rows.as_bytes());
                both.update(media.finalize().as_bytes());
                both.finalize()
            }
        };
        RangeDigest {
            rows: self.rows,
            hash: hash.to_hex().to_string(),
        }
    }
}

/// The row count and content hash of one row range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeDigest {
    pub rows: u64,
    pub hash: String,
}

/// Receives the digest of each range a [`super::RowRangeExec`] has read to its end.
pub trait RangeHashSink: fmt::Debug + Send + Sync {
    /// Called on the reader thread after the last row of range `range` was read and before its
    /// stream ends, so anything the plan writes after the end of its input (checkpoints, saved
    /// keys) comes after the digest is recorded. An error fails the stream.
    fn range_hashed(&self, range: usize, digest: RangeDigest) -> Result<(), String>;
}
