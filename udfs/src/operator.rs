//! A built operator: what the plan compiler needs to place one recipe step in a plan, and its
//! Data-Juicer category ([`OpKind`]).

use std::sync::Arc;

use datafusion_expr::ScalarUDF;

use crate::params::Params;

/// Data-Juicer's operator categories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpKind {
    Mapper,
    Filter,
    Deduplicator,
    Selector,
}

impl OpKind {
    pub fn as_str(self) -> &'static str {
        match self {
            OpKind::Mapper => "mapper",
            OpKind::Filter => "filter",
            OpKind::Deduplicator => "deduplicator",
            OpKind::Selector => "selector",
        }
    }
}

/// One recipe step, built and ready to plan.
#[derive(Debug, Clone)]
pub enum Operator {
    /// Rewrites the text column: `text := udf(text)`.
    Mapper { udf: Arc<ScalarUDF> },
    /// Computes a stat into `__dj__stats__` then keeps the rows whose stat is in range.
    Filter(FilterOp),
    /// Computes a hash column, then a global node keeps one row per hash.
    Deduplicator(DedupOp),
    /// Copies or computes stats from a non-text field (a dotted path such as `meta.lang`, or the
    /// image list), then keeps the rows its keep UDF accepts.
    FieldFilter(FieldFilterOp),
    /// Reads a value per row; a global node keeps and reorders rows by all rows' values.
    Selector(SelectorOp),
    /// Rewrites a column of media paths, writing new files, and records the files each sample
    /// came from in `__dj__source_file__`.
    MediaMapper(MediaMapperOp),
}

impl Operator {
    pub fn kind(&self) -> OpKind {
        match self {
            Operator::Mapper { .. } => OpKind::Mapper,
            Operator::Filter(_) => OpKind::Filter,
            Operator::Deduplicator(_) => OpKind::Deduplicator,
            Operator::FieldFilter(_) => OpKind::Filter,
            Operator::Selector(_) => OpKind::Selector,
            Operator::MediaMapper(_) => OpKind::Mapper,
        }
    }
}

/// A filter: one stat computed from the text, and the range that keeps a row.
#[derive(Debug, Clone)]
pub struct FilterOp {
    /// Key inside `__dj__stats__` (Data-Juicer's StatsKeys name, e.g. `text_len`).
    pub stat_key: &'static str,
    /// Text -> stat (Int64 or Float64).
    pub stat_udf: Arc<ScalarUDF>,
    /// Text -> the stat as far as the filter's decision needs it (same type): exact for every
    /// row the range may keep, and for a row it rejects some value the range rejects (a bound
    /// found without the full work). Runs use it; `dj-analyze`, which reports every row's stat,
    /// uses `stat_udf`. `None`: `stat_udf` serves both.
    pub decide_udf: Option<Arc<ScalarUDF>>,
    pub range: StatRange,
}

/// A filter over a non-text field. Each stat is stored in `__dj__stats__` under its key (unless
/// the input already has it, as Data-Juicer skips computed stats); the keep UDF is called with the
/// stat values in order and returns a Boolean per row (null counts as not kept).
#[derive(Debug, Clone)]
pub struct FieldFilterOp {
    /// Dotted path of the field the stats read (`meta.lang` = struct field `lang` of column `meta`).
    pub field: String,
    /// A missing field is an error unless optional; an optional one reads as all-null
    /// (Data-Juicer's image filters treat a sample without `images` as having none).
    pub optional: bool,
    pub stats: Vec<FieldStat>,
    /// Stats that come from one expensive call (language ID's label and score): this UDF computes
    /// them at once from the field, as a struct, and each stat's UDF then reads its value from
    /// that struct instead of from the field.
    pub joint: Option<Arc<ScalarUDF>>,
    pub keep: Arc<ScalarUDF>,
}

/// One stat of a [`FieldFilterOp`].
#[derive(Debug, Clone)]
pub struct FieldStat {
    pub key: String,
    /// Field value (or the [`FieldFilterOp::joint`] struct) -> stat value.
    pub udf: Arc<ScalarUDF>,
}

/// Data-Juicer's `Filter.get_keep_boolean`: optional bounds, closedness, and `reversed_range`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StatRange {
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub min_closed: bool,
    pub max_closed: bool,
    /// Negate the range test (closedness flags already flipped, see [`StatRange::from_params`]).
    pub reversed: bool,
}

impl StatRange {
    /// Reads `min_closed_interval`, `max_closed_interval` and `reversed_range` from the params.
    /// As in Data-Juicer, `reversed_range` flips both closedness flags and negates the test, so
    /// a value exactly on a bound is kept both with and without `reversed_range`.
    pub(crate) fn from_params(params: &Params, min: Option<f64>, max: Option<f64>) -> StatRange {
        let reversed = params.bool("reversed_range");
        let closed = |name: &str| {
            let c = params.raw(name).as_bool().unwrap_or(true);
            if reversed { !c } else { c }
        };
        StatRange {
            min,
            max,
            min_closed: closed("min_closed_interval"),
            max_closed: closed("max_closed_interval"),
            reversed,
        }
    }

    /// Whether a row with stat `v` is kept (reference semantics, used by tests and non-SQL paths).
    pub fn keeps(&self, v: f64) -> bool {
        let mut keep = true;
        if let Some(lo) = self.min {
            keep &= if self.min_closed { v >= lo } else { v > lo };
        }
        if let Some(hi) = self.max {
            keep &= if self.max_closed { v <= hi } else { v < hi };
        }
        if self.reversed { !keep } else { keep }
    }
}

/// A media mapper: its UDF reads the media column (or a null when the input has none) and the
/// `__dj__source_file__` column (or a null); what it returns depends on its [`MediaMapperShape`].
#[derive(Debug, Clone)]
pub struct MediaMapperOp {
    pub column: String,
    pub udf: Arc<ScalarUDF>,
    pub shape: MediaMapperShape,
}

/// How many samples a media mapper makes of one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MediaMapperShape {
    /// One: the UDF takes (media, source files) and returns per sample a struct of the new
    /// `paths`, the `source_file` list and `ok` (false: a file could not be read and the sample
    /// is dropped).
    OnePerSample,
    /// Any number, in order (a splitter that may keep the original): the UDF takes (text,
    /// media, source files) and returns per sample a list of structs of `text`, `paths` and
    /// `source_file`, one per output sample; the other columns are copied.
    Expands,
    /// One, with a new field: the UDF takes (text, media, the field or a null) and returns per
    /// sample a struct of the field's `value`, `ok` (false: the sample is dropped) and `meta`
    /// (the op is one of Data-Juicer's tagging ops: a sample without `__dj__meta__` gets it).
    AddsField { field: String },
}

/// A deduplicator: a UDF computing the hash column from the text, and how rows with related
/// hashes form clusters; one row per cluster survives.
#[derive(Debug, Clone)]
pub struct DedupOp {
    pub hash_column: &'static str,
    pub hash_udf: Arc<ScalarUDF>,
    pub kind: DedupKind,
    /// The columns the hash UDF takes.
    pub reads: DedupReads,
}

/// What a deduplicator's hash UDF reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DedupReads {
    /// The text column.
    Text,
    /// A column of media paths (absent: every hash null), then the text column if `and_text`.
    /// The hash is null for a sample with no files (such samples are all kept) and empty for
    /// one whose files cannot be read (it is dropped, as Data-Juicer's `skip_op_error` does).
    Media { column: String, and_text: bool },
}

/// How a deduplicator's hash column clusters rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DedupKind {
    /// Utf8 hash: equal hashes are duplicates; the first row in input order is kept.
    Exact,
    /// `List<Binary>` of LSH band keys (`__dj__minhash`): rows sharing any band key are
    /// connected; of each connected component the row with the smallest input index is kept.
    MinHashBands,
    /// Utf8 decimal 64-bit SimHash (`__dj__simhash`): rows whose values differ in at most
    /// `hamming_distance` bits are connected (`simhash.find_all` with `num_blocks` blocks); of
    /// each connected component the row with the smallest input index is kept.
    SimHash {
        num_blocks: usize,
        hamming_distance: usize,
    },
}

/// A built selector: the field it reads (None for `random_selector`) and its decision.
#[derive(Debug, Clone)]
pub struct SelectorOp {
    pub field: Option<String>,
    pub kind: SelectorKind,
    /// Field value -> selector value (Float64 sort value, or Utf8 group key for frequency).
    pub value_udf: Option<Arc<ScalarUDF>>,
}

/// Which rows a selector keeps, and in what order, from all rows' values (the decision itself is
/// `SelectorKind::select`, in [`crate::selector`]).
#[derive(Debug, Clone, PartialEq)]
pub enum SelectorKind {
    TopK {
        top_ratio: Option<f64>,
        topk: Option<u64>,
        reverse: bool,
    },
    Range {
        lower_percentile: Option<f64>,
        upper_percentile: Option<f64>,
        lower_rank: Option<u64>,
        upper_rank: Option<u64>,
    },
    Frequency {
        top_ratio: Option<f64>,
        topk: Option<u64>,
        reverse: bool,
    },
    Random {
        select_ratio: Option<f64>,
        select_num: Option<u64>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reversed_range_keeps_the_bounds_too() {
        let r = StatRange {
            min: Some(1.0),
            max: Some(3.0),
            min_closed: true,
            max_closed: true,
            reversed: false,
        };
        let rev = StatRange {
            min_closed: false,
            max_closed: false,
            reversed: true,
            ..r
        };
        let kept = |r: &StatRange| [0.0, 1.0, 2.0, 3.0, 4.0].map(|v| r.keeps(v));
        assert_eq!(kept(&r), [false, true, true, true, false]);
        // Data-Juicer 1.6.1 (observed in the golden corpus): bounds survive both directions.
        assert_eq!(kept(&rev), [true, true, false, true, true]);
    }
}
