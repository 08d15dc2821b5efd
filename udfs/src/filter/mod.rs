//! Filters: a stat per sample into `__dj__stats__`, and a range that keeps samples.

pub mod audio;
pub mod field;
mod gram_count;
pub mod image;
pub mod json_stats;
pub mod language_id;
pub mod length;
pub mod lines;
pub(crate) mod media_stats;
pub mod perplexity;
pub mod ratio;
mod repeat_filter;
pub mod repetition;
pub mod token_num;
#[cfg(feature = "media")]
pub mod video;
mod word_ids;
pub mod wordlist;
pub mod words;

/// The filters, in registry order.
pub(crate) fn specs() -> Vec<crate::spec::OpSpec> {
    vec![
        length::text_length_spec(),
        length::words_num_spec(),
        ratio::alphanumeric_spec(),
        ratio::special_characters_spec(),
        repetition::character_repetition_spec(),
        words::word_repetition_spec(),
        wordlist::stopwords_spec(),
        wordlist::flagged_words_spec(),
        lines::average_line_length_spec(),
        lines::maximum_line_length_spec(),
        language_id::language_id_spec(),
        perplexity::perplexity_spec(),
        token_num::token_num_spec(),
        field::suffix_spec(),
        field::specified_field_spec(),
        field::specified_numeric_field_spec(),
        image::image_size_spec(),
        image::image_aspect_ratio_spec(),
        image::image_shape_spec(),
        audio::audio_size_spec(),
        #[cfg(feature = "media")]
        audio::audio_duration_spec(),
        #[cfg(feature = "media")]
        video::video_duration_spec(),
        #[cfg(feature = "media")]
        video::video_resolution_spec(),
        #[cfg(feature = "media")]
        video::video_aspect_ratio_spec(),
    ]
}

use std::sync::Arc;

use crate::operator::{FilterOp, Operator, StatRange};
use crate::params::Params;
use crate::udf::{OpUdf, TextStat, UdfIdentity};

/// Builds a filter whose stat UDF is named after the op (so plans read as the recipe does).
pub(crate) fn build_filter(
    params: &Params,
    stat_key: &'static str,
    stat: Arc<dyn TextStat>,
    min: Option<f64>,
    max: Option<f64>,
) -> Operator {
    Operator::Filter(FilterOp {
        stat_key,
        stat_udf: OpUdf::stat(UdfIdentity::of(params, ""), stat),
        decide_udf: None,
        range: StatRange::from_params(params, min, max),
    })
}

/// [`build_filter`] with a second form of the stat for runs, `decide`, made from the op's range:
/// exact wherever the range may keep a row (see [`FilterOp::decide_udf`]); `None` from `decide`
/// when the range gives it nothing to spare.
pub(crate) fn build_filter_deciding(
    params: &Params,
    stat_key: &'static str,
    stat: Arc<dyn TextStat>,
    min: Option<f64>,
    max: Option<f64>,
    decide: impl FnOnce(&StatRange) -> Option<Arc<dyn TextStat>>,
) -> Operator {
    let mut op = build_filter(params, stat_key, stat, min, max);
    if let Operator::Filter(f) = &mut op {
        f.decide_udf =
            decide(&f.range).map(|stat| OpUdf::stat(UdfIdentity::of(params, "_decide"), stat));
    }
    op
}
