//! Deduplicators: a hash column per sample (from the text, or from image or video files); the plan keeps
//! the first row of each hash (exact) or of each cluster of rows sharing a band key (MinHash LSH)
//! or with close SimHashes.

pub mod document;
#[cfg(feature = "media")]
pub mod image;
mod md5x16;
pub mod minhash;
pub mod simhash;
#[cfg(feature = "media")]
pub mod video;

/// The deduplicators, in registry order.
pub(crate) fn specs() -> Vec<crate::spec::OpSpec> {
    vec![
        document::document_deduplicator_spec(),
        minhash::document_minhash_deduplicator_spec(),
        simhash::document_simhash_deduplicator_spec(),
        #[cfg(feature = "media")]
        image::image_deduplicator_spec(),
        #[cfg(feature = "media")]
        video::video_deduplicator_spec(),
    ]
}
