//! fastText supervised models (`.bin` and quantized `.ftz`): loading and `predict`, as the
//! `fasttext` Python module computes it. Data-Juicer's `language_id_score_filter` uses it.
