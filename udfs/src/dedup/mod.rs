//! Deduplicators: a hash column per sample; the plan keeps the first row of each hash (exact) or of
//! each cluster of rows sharing a band key (MinHash LSH).

pub mod document;
pub mod minhash;

/// The deduplicators, in registry order.
pub fn specs() -> Vec<crate::registry::OpSpec> {
    vec![
        document::document_deduplicator_spec(),
        minhash::document_minhash_deduplicator_spec(),
    ]
}
