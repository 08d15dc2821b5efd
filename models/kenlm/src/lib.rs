//! KenLM n-gram language models (ARPA text and KenLM's binary probing and trie formats):
//! loading and sentence scoring, as the `kenlm` Python module computes it. Data-Juicer's
//! `perplexity_filter` uses it.
//!
//! ```no_run
//! let model = dj_kenlm::Model::open(std::path::Path::new("en.arpa.bin"))?;
//! let log10_prob = model.score("this is a sentence .", true, true);
//! # Ok::<(), dj_kenlm::KenlmError>(())
//! ```

mod arpa;
mod binary;
mod bytes;
mod error;
mod hash;
mod model;
mod search;
mod vocab;

pub use error::KenlmError;
pub use model::Model;

#[cfg(test)]
mod tests {
    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn model_is_send_and_sync() {
        assert_send_sync::<crate::Model>();
    }
}
