//! Image filters that need no model: `image_size_filter` (file size), `image_aspect_ratio_filter`
//! (width / height) and `image_shape_filter` (width and height), over the sample's image paths.
//!
//! Deviations from Data-Juicer, deliberate: dimensions come from the image header (the `image`
//! crate; PNG, JPEG, GIF, WebP, BMP, TIFF) where Data-Juicer decodes every pixel with Pillow, so a
//! file with a valid header but truncated pixel data is measured rather than failing; and the
//! `image_bytes` column is not read (sizes come from the files).

use std::sync::Arc;

use serde_json::json;

use super::media_stats::{
    Item, Media, any_or_all, file_size, measure_stat, media_filter, size_param,
};
use crate::operator::{Operator, StatRange};
use crate::params::{ParamError, ParamSpec, ParamType, Params};
use crate::spec::{ModelUse, OpKind, OpSpec};

pub(crate) fn image_size_spec() -> OpSpec {
    OpSpec {
        name: "image_size_filter",
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
                any_or_all(Media::Image),
            ]
        },
        build: build_image_size,
        doc: "Keep samples whose image file sizes are within [min_size, max_size].",
    }
}

pub(crate) fn image_aspect_ratio_spec() -> OpSpec {
    OpSpec {
        name: "image_aspect_ratio_filter",
        kind: OpKind::Filter,
        model_use: ModelUse::None,
        params: || {
            vec![
                ParamSpec::new(
                    "min_ratio",
                    ParamType::Float,
                    json!(0.333),
                    "minimum width / height",
                ),
                ParamSpec::new(
                    "max_ratio",
                    ParamType::Float,
                    json!(3.0),
                    "maximum width / height",
                ),
                any_or_all(Media::Image),
            ]
        },
        build: build_image_aspect_ratio,
        doc: "Keep samples whose images' aspect ratios (width / height) are within [min_ratio, max_ratio].",
    }
}

pub(crate) fn image_shape_spec() -> OpSpec {
    OpSpec {
        name: "image_shape_filter",
        kind: OpKind::Filter,
        model_use: ModelUse::None,
        params: || {
            let mut p = super::media_stats::size_bounds_params();
            p.push(any_or_all(Media::Image));
            p
        },
        build: build_image_shape,
        doc: "Keep samples whose images' width and height are within the given bounds.",
    }
}

fn read_dimensions(path: &str) -> Result<(u32, u32), String> {
    image::ImageReader::open(path)
        .map_err(|e| e.to_string())?
        .with_guessed_format()
        .map_err(|e| e.to_string())?
        .into_dimensions()
        .map_err(|e| e.to_string())
}

fn build_image_size(p: &Params) -> Result<Operator, ParamError> {
    let range = StatRange::from_params(
        p,
        Some(size_param(p, "min_size")?),
        Some(size_param(p, "max_size")?),
    );
    Ok(media_filter(
        p,
        Media::Image,
        vec![measure_stat(
            p,
            Media::Image,
            "image_sizes",
            Item::Int,
            Arc::new(file_size),
        )],
        vec![range],
    ))
}

fn build_image_aspect_ratio(p: &Params) -> Result<Operator, ParamError> {
    let range = StatRange::from_params(p, p.float("min_ratio"), p.float("max_ratio"));
    let ratio = |path: &str| read_dimensions(path).map(|(w, h)| w as f64 / h as f64);
    Ok(media_filter(
        p,
        Media::Image,
        vec![measure_stat(
            p,
            Media::Image,
            "aspect_ratios",
            Item::Float,
            Arc::new(ratio),
        )],
        vec![range],
    ))
}

fn build_image_shape(p: &Params) -> Result<Operator, ParamError> {
    let bound = |name: &str| p.int(name).map(|v| v as f64);
    let width = StatRange::from_params(p, bound("min_width"), bound("max_width"));
    let height = StatRange::from_params(p, bound("min_height"), bound("max_height"));
    let width_of = |path: &str| read_dimensions(path).map(|(w, _)| w as f64);
    let height_of = |path: &str| read_dimensions(path).map(|(_, h)| h as f64);
    Ok(media_filter(
        p,
        Media::Image,
        vec![
            measure_stat(
                p,
                Media::Image,
                "image_width",
                Item::Int,
                Arc::new(width_of),
            ),
            measure_stat(
                p,
                Media::Image,
                "image_height",
                Item::Int,
                Arc::new(height_of),
            ),
        ],
        vec![width, height],
    ))
}
