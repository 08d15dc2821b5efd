//! SentencePiece models (`.model`, unigram and BPE): loading, normalization and
//! `encode_as_pieces`, as the `sentencepiece` Python module computes it. Data-Juicer's
//! tokenized word filters and `perplexity_filter` use it.
