//! Mappers: rewrite the text column, `text := f(text)`, or (the video resizers, splitter and
//! frame extractor) a column of media paths, writing new files.

pub mod chinese_convert;
pub mod clean;
pub mod clean_more;
pub mod fix_unicode;
pub mod html;
pub mod latex;
pub mod normalization;
#[cfg(feature = "media")]
pub(crate) mod produced;
pub mod remove;
#[cfg(feature = "media")]
pub mod video_frames;
#[cfg(feature = "media")]
pub mod video_resize;
#[cfg(feature = "media")]
pub mod video_split;

use std::sync::Arc;

/// Data-Juicer's `SpecialTokens.video`: where a sample's text places its next video.
#[cfg(feature = "media")]
pub(crate) const VIDEO_TOKEN: &str = "<__dj__video>";
/// Data-Juicer's `SpecialTokens.eoc`: the end of a chunk of a sample's text.
#[cfg(feature = "media")]
pub(crate) const EOC_TOKEN: &str = "<|__dj__eoc|>";

use crate::operator::Operator;
use crate::params::Params;
use crate::spec::OpSpec;
use crate::udf::{OpUdf, TextMapper, UdfIdentity};

/// The mappers, in registry order.
pub(crate) fn specs() -> Vec<OpSpec> {
    vec![
        normalization::whitespace_normalization_spec(),
        normalization::punctuation_normalization_spec(),
        clean::clean_email_spec(),
        clean::clean_links_spec(),
        html::clean_html_spec(),
        clean_more::clean_ip_spec(),
        clean_more::clean_copyright_spec(),
        clean_more::replace_content_spec(),
        latex::remove_header_spec(),
        latex::remove_bibliography_spec(),
        latex::remove_comments_spec(),
        latex::expand_macro_spec(),
        remove::remove_long_words_spec(),
        remove::remove_repeat_sentences_spec(),
        remove::remove_specific_chars_spec(),
        remove::remove_table_text_spec(),
        remove::remove_incorrect_substrings_spec(),
        remove::remove_non_chinese_spec(),
        fix_unicode::fix_unicode_spec(),
        chinese_convert::chinese_convert_spec(),
        #[cfg(feature = "media")]
        video_resize::video_resize_resolution_spec(),
        #[cfg(feature = "media")]
        video_resize::video_resize_aspect_ratio_spec(),
        #[cfg(feature = "media")]
        video_split::video_split_by_duration_spec(),
        #[cfg(feature = "media")]
        video_frames::video_extract_frames_spec(),
    ]
}

/// Builds a mapper whose UDF is named after the op and identified by its parameters.
pub(crate) fn build_mapper(params: &Params, mapper: Arc<dyn TextMapper>) -> Operator {
    Operator::Mapper {
        udf: OpUdf::mapper(UdfIdentity::of(params, ""), mapper),
    }
}
