//! The special columns: every `__dj__…` column name the operators and plans add, read or drop,
//! in one place. Names Data-Juicer also uses are spelt as it spells them.

/// Struct column holding per-sample stats (`Fields.stats`).
pub const STATS_COLUMN: &str = "__dj__stats__";
/// Column holding per-sample meta data (`Fields.meta`).
pub const META_COLUMN: &str = "__dj__meta__";
/// The files a sample's media came from, before a mapper rewrote them (`Fields.source_file`).
pub const SOURCE_FILE_COLUMN: &str = "__dj__source_file__";
/// A media mapper's per-sample result between its projections.
pub const MEDIA_MAPPED_COLUMN: &str = "__dj__media_mapped";
/// Column holding the file suffix of a sample (`Fields.suffix`).
pub const SUFFIX_COLUMN: &str = "__dj__suffix__";

/// Document hash of `document_deduplicator` (`HashKeys.hash`).
pub const HASH_COLUMN: &str = "__dj__hash";
/// LSH band keys of `document_minhash_deduplicator` (`HashKeys.minhash`).
pub const MINHASH_COLUMN: &str = "__dj__minhash";
/// SimHash of `document_simhash_deduplicator` (`HashKeys.simhash`).
pub const SIMHASH_COLUMN: &str = "__dj__simhash";
/// Image hash of Data-Juicer's image deduplicators (`HashKeys.imagehash`).
pub const IMAGEHASH_COLUMN: &str = "__dj__imagehash";
/// Video hash of Data-Juicer's video deduplicators (`HashKeys.videohash`).
pub const VIDEOHASH_COLUMN: &str = "__dj__videohash";
/// Every deduplicator's hash column.
pub const HASH_COLUMNS: &[&str] = &[
    HASH_COLUMN,
    MINHASH_COLUMN,
    SIMHASH_COLUMN,
    IMAGEHASH_COLUMN,
    VIDEOHASH_COLUMN,
];

/// Each row's selector value while a selector runs.
pub const SELECT_KEY_COLUMN: &str = "__dj__select_key";
/// Output rank of each row after a selector; the export sorts by it. Never exported.
pub const ORDER_COLUMN: &str = "__dj__order";
/// A field filter's joint stats between two projections.
pub const JOINT_STATS_COLUMN: &str = "__dj__joint_stats";
