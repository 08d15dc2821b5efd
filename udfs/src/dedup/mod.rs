//! Deduplicators: a hash column per sample; the plan keeps the first row of each hash.

pub mod document;
