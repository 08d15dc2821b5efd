//! fastText supervised models (`.bin` and quantized `.ftz`): loading and `predict`, as the
//! `fasttext` Python module computes it. Data-Juicer's `language_id_score_filter` uses it.
//!
//! Prediction reproduces fastText 0.9.2 bit for bit: the same tokenization (ASCII
//! whitespace, `</s>`, char and word n-grams with fastText's FNV hash), the same f32
//! arithmetic order, the same libm calls, and the same heap for top-k ties.
//!
//! ```no_run
//! let model = dj_fasttext::FastText::open(std::path::Path::new("lid.176.bin"))?;
//! let top = model.predict("das ist ein kleiner test", 1, 0.0);
//! assert_eq!(top[0].0, "__label__de");
//! # Ok::<(), dj_fasttext::FastTextError>(())
//! ```

mod args;
mod dictionary;
mod error;
mod heap;
mod io;
mod loss;
mod matrix;
mod model;
mod quant;

pub use args::LossKind;
pub use error::FastTextError;
pub use model::{FastText, Scratch};

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn model_is_send_and_sync() {
        assert_send_sync::<FastText>();
        assert_send_sync::<FastTextError>();
    }
}
