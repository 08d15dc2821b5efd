//! Deduplicators: a hash column per sample; the plan keeps the first row of each hash.

pub mod document;

/// The deduplicators, in registry order.
pub fn specs() -> Vec<crate::registry::OpSpec> {
    vec![document::document_deduplicator_spec()]
}
