//! Audio filters that need no model: `audio_size_filter` (file size, `audio_sizes`) and
//! `audio_duration_filter` (seconds, `audio_duration`; needs the `media` feature: FFmpeg), over
//! the sample's audio paths.
//!
//! `audio_duration_filter`'s bounds are integers, as Data-Juicer 1.6.1 declares them: its
//! preflight refuses `min_duration: 0.5`, and so does this one.

use std::sync::Arc;

use serde_json::json;

use super::media_stats::{
    Item, Media, any_or_all, file_size, measure_stat, media_filter, size_param,
};
use crate::operator::{Operator, StatRange};
use crate::params::{ParamError, ParamSpec, ParamType, Params};
use crate::spec::{ModelUse, OpKind, OpSpec};

pub(crate) fn audio_size_spec() -> OpSpec {
    OpSpec {
        name: "audio_size_filter",
        kind: OpKind::Filter,
        model_use: ModelUse::None,
        params: || {
            vec![
                ParamSpec::new(
                    "min_size",
                    ParamType::Str,
                    json!("0"),
                    "minimum file size, e.g. 10KB",
                ),
                ParamSpec::new(
                    "max_size",
                    ParamType::Str,
                    json!("1TB"),
                    "maximum file size",
                ),
                any_or_all(Media::Audio),
            ]
        },
        build: build_audio_size,
        doc: "Keep samples whose audio file sizes are within [min_size, max_size].",
    }
}

fn build_audio_size(p: &Params) -> Result<Operator, ParamError> {
    let range = StatRange::from_params(
        p,
        Some(size_param(p, "min_size")?),
        Some(size_param(p, "max_size")?),
    );
    Ok(media_filter(
        p,
        Media::Audio,
        vec![measure_stat(
            p,
            Media::Audio,
            "audio_sizes",
            Item::Int,
            Arc::new(file_size),
        )],
        vec![range],
    ))
}

#[cfg(feature = "media")]
pub(crate) fn audio_duration_spec() -> OpSpec {
    OpSpec {
        name: "audio_duration_filter",
        kind: OpKind::Filter,
        model_use: ModelUse::None,
        params: || {
            vec![
                ParamSpec::new(
                    "min_duration",
                    ParamType::Int,
                    json!(0),
                    "minimum duration in seconds",
                ),
                ParamSpec::new(
                    "max_duration",
                    ParamType::Int,
                    json!(crate::PY_MAXSIZE),
                    "maximum duration in seconds",
                ),
                any_or_all(Media::Audio),
            ]
        },
        build: build_audio_duration,
        doc: "Keep samples whose audio durations (seconds, all samples decoded) are within \
              [min_duration, max_duration].",
    }
}

#[cfg(feature = "media")]
fn build_audio_duration(p: &Params) -> Result<Operator, ParamError> {
    let bound = |name: &str| p.int(name).map(|v| v as f64);
    let range = StatRange::from_params(p, bound("min_duration"), bound("max_duration"));
    Ok(media_filter(
        p,
        Media::Audio,
        vec![measure_stat(
            p,
            Media::Audio,
            "audio_duration",
            Item::Float,
            Arc::new(crate::media::audio_duration),
        )],
        vec![range],
    ))
}
