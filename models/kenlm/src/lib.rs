//! KenLM n-gram language models (ARPA text and KenLM's binary probing and trie formats):
//! loading and sentence scoring, as the `kenlm` Python module computes it. Data-Juicer's
//! `perplexity_filter` uses it.
