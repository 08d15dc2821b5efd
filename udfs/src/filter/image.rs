//! Image filters that need no model: `image_size_filter` (file size), `image_aspect_ratio_filter`
//! (width / height) and `image_shape_filter` (width and height), over the sample's image paths.
//!
//! Deviations from Data-Juicer, deliberate: dimensions come from the image header (the `image`
//! crate; PNG, JPEG, GIF, WebP, BMP, TIFF) where Data-Juicer decodes every pixel with Pillow, so a
//! file with a valid header but truncated pixel data is measured rather than failing; the
//! `image_bytes` column is not read (sizes come from the files); and with `skip_op_error: true`
//! only the sample whose image cannot be read is dropped, where Data-Juicer drops its whole batch.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Float64Builder, Int64Builder, ListBuilder,
};
use arrow::datatypes::DataType;
use datafusion_common::{Result, exec_err};
use serde_json::json;

use crate::PY_MAXSIZE;
use crate::operator::{FieldFilterOp, FieldStat, Operator, StatRange};
use crate::params::{ParamError, ParamSpec, ParamType, Params};
use crate::spec::{ModelUse, OpKind, OpSpec};
use crate::udf::{OpUdf, UdfIdentity};

const ANY_OR_ALL: ParamType = ParamType::Choice(&["any", "all"]);

fn any_or_all() -> ParamSpec {
    ParamSpec::new(
        "any_or_all",
        ANY_OR_ALL,
        json!("any"),
        "keep a sample if any (or all) of its images pass",
    )
}

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
                any_or_all(),
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
                any_or_all(),
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
            vec![
                ParamSpec::new("min_width", ParamType::Int, json!(1), "minimum width"),
                ParamSpec::new(
                    "max_width",
                    ParamType::Int,
                    json!(PY_MAXSIZE),
                    "maximum width",
                ),
                ParamSpec::new("min_height", ParamType::Int, json!(1), "minimum height"),
                ParamSpec::new(
                    "max_height",
                    ParamType::Int,
                    json!(PY_MAXSIZE),
                    "maximum height",
                ),
                any_or_all(),
            ]
        },
        build: build_image_shape,
        doc: "Keep samples whose images' width and height are within the given bounds.",
    }
}

/// Data-Juicer's `size_to_bytes`: the digits of `size` (all of them, so `1.5KB` is 15 KiB, as
/// there) shifted by the unit; KB and KiB both mean 1024.
pub(crate) fn size_to_bytes(size: &str) -> Result<i128, String> {
    let digits: String = size.chars().filter(|c| c.is_ascii_digit()).collect();
    if digits.is_empty() {
        return Err(format!(
            "Your input `size` does not contain numbers: {size}"
        ));
    }
    let n: i128 = digits.parse::<f64>().map_err(|e| e.to_string())? as i128;
    let unit: String = size
        .chars()
        .filter(|c| c.is_alphabetic())
        .collect::<String>()
        .to_lowercase();
    let shift = match unit.as_str() {
        "" => 0,
        "kb" | "kib" => 10,
        "mb" | "mib" => 20,
        "gb" | "gib" => 30,
        "tb" | "tib" => 40,
        "pb" | "pib" => 50,
        "eb" | "eib" => 60,
        "zb" | "zib" => 70,
        "yb" | "yib" => 80,
        other => {
            return Err(format!(
                "unidentifiable unit {other}: expected one of KB, MB, GB, TB, PB, EB, ZB, YB, \
                 KiB, ..., YiB (case insensitive)"
            ));
        }
    };
    n.checked_shl(shift)
        .ok_or_else(|| format!("{size} is too large"))
}

/// What one image contributes to a stat, read from its path.
#[derive(Clone, Copy)]
enum Measure {
    FileSize,
    AspectRatio,
    Width,
    Height,
}

fn read_dimensions(path: &str) -> std::result::Result<(u32, u32), String> {
    image::ImageReader::open(path)
        .map_err(|e| e.to_string())?
        .with_guessed_format()
        .map_err(|e| e.to_string())?
        .into_dimensions()
        .map_err(|e| e.to_string())
}

/// The stat UDF: a list per sample, one value per image path; no images (empty, null or no
/// image column) gives an empty list. An unreadable image fails the job naming its path, or
/// with `skip_op_error` gives a null stat (the sample is dropped).
fn measure_stat(p: &Params, key: &str, measure: Measure) -> FieldStat {
    let op = p.op().to_string();
    let skip_errors = p.raw("skip_op_error").as_bool().unwrap_or(false);
    let f = Arc::new(move |args: &[ArrayRef]| -> Result<ArrayRef> {
        let paths = &args[0];
        let list_of = |row: usize| -> Option<ArrayRef> {
            match paths.data_type() {
                DataType::List(_) if paths.is_valid(row) => Some(paths.as_list::<i32>().value(row)),
                DataType::LargeList(_) if paths.is_valid(row) => {
                    Some(paths.as_list::<i64>().value(row))
                }
                _ => None,
            }
        };
        let mut ints = ListBuilder::new(Int64Builder::new());
        let mut floats = ListBuilder::new(Float64Builder::new());
        for row in 0..paths.len() {
            let mut values: Vec<f64> = Vec::new();
            let mut failed = false;
            if let Some(list) = list_of(row) {
                let strings: Vec<Option<&str>> = match list.data_type() {
                    DataType::Utf8 => list.as_string::<i32>().iter().collect(),
                    DataType::LargeUtf8 => list.as_string::<i64>().iter().collect(),
                    DataType::Utf8View => list.as_string_view().iter().collect(),
                    other => {
                        return exec_err!(
                            "{op}: image paths must be strings, got a list of {other}"
                        );
                    }
                };
                for path in strings {
                    let path = path.unwrap_or_default();
                    let value = match measure {
                        Measure::FileSize => std::fs::metadata(path)
                            .map(|m| m.len() as f64)
                            .map_err(|e| e.to_string()),
                        Measure::AspectRatio => {
                            read_dimensions(path).map(|(w, h)| w as f64 / h as f64)
                        }
                        Measure::Width => read_dimensions(path).map(|(w, _)| w as f64),
                        Measure::Height => read_dimensions(path).map(|(_, h)| h as f64),
                    };
                    match value {
                        Ok(v) => values.push(v),
                        Err(_) if skip_errors => failed = true,
                        Err(e) => {
                            return exec_err!("{op}: cannot read image `{path}`: {e}");
                        }
                    }
                }
            }
            match measure {
                Measure::AspectRatio => {
                    if failed {
                        floats.append_null();
                    } else {
                        floats.values().append_slice(&values);
                        floats.append(true);
                    }
                }
                _ => {
                    if failed {
                        ints.append_null();
                    } else {
                        values
                            .iter()
                            .for_each(|v| ints.values().append_value(*v as i64));
                        ints.append(true);
                    }
                }
            }
        }
        Ok(match measure {
            Measure::AspectRatio => Arc::new(floats.finish()) as ArrayRef,
            _ => Arc::new(ints.finish()),
        })
    });
    let item = match measure {
        Measure::AspectRatio => DataType::Float64,
        _ => DataType::Int64,
    };
    FieldStat {
        key: key.to_string(),
        udf: OpUdf::from_fn(
            UdfIdentity::of(p, &format!("_{key}")),
            Some(DataType::new_list(item, true)),
            f,
        ),
    }
}

/// Per-image values of list column `stat` at `row` as f64 (None for a null list).
fn row_values(stat: &ArrayRef, row: usize) -> Option<Vec<f64>> {
    if stat.is_null(row) {
        return None;
    }
    let list = stat.as_list::<i32>().value(row);
    Some(match list.data_type() {
        DataType::Int64 => list
            .as_primitive::<arrow::datatypes::Int64Type>()
            .iter()
            .map(|v| v.unwrap_or_default() as f64)
            .collect(),
        _ => list
            .as_primitive::<arrow::datatypes::Float64Type>()
            .iter()
            .map(|v| v.unwrap_or(f64::NAN))
            .collect(),
    })
}

/// The keep UDF: per image, every stat within its range; then any / all images; a sample with
/// no images is kept, one whose stat failed (null) is not.
fn keep_udf(p: &Params, ranges: Vec<StatRange>) -> Arc<datafusion_expr::ScalarUDF> {
    let any = p.str("any_or_all") != Some("all");
    let f = Arc::new(move |args: &[ArrayRef]| -> Result<ArrayRef> {
        let rows = args.first().map_or(0, |a| a.len());
        let keep: BooleanArray = (0..rows)
            .map(|row| {
                let per_stat: Option<Vec<Vec<f64>>> =
                    args.iter().map(|a| row_values(a, row)).collect();
                let per_stat = per_stat?;
                let images = per_stat.first().map_or(0, Vec::len);
                if images == 0 {
                    return Some(true);
                }
                let image_ok = |i: usize| {
                    per_stat
                        .iter()
                        .zip(&ranges)
                        .all(|(values, r)| values.get(i).is_some_and(|v| r.keeps(*v)))
                };
                Some(if any {
                    (0..images).any(image_ok)
                } else {
                    (0..images).all(image_ok)
                })
            })
            .map(|k| Some(k.unwrap_or(false)))
            .collect();
        Ok(Arc::new(keep))
    });
    OpUdf::from_fn(UdfIdentity::of(p, "_keep"), Some(DataType::Boolean), f)
}

fn image_filter(p: &Params, stats: Vec<FieldStat>, ranges: Vec<StatRange>) -> Operator {
    Operator::FieldFilter(FieldFilterOp {
        joint: None,
        field: p.str("image_key").unwrap_or("images").to_string(),
        optional: true,
        stats,
        keep: keep_udf(p, ranges),
    })
}

fn size_param(p: &Params, name: &str) -> Result<f64, ParamError> {
    size_to_bytes(p.str(name).unwrap_or_default())
        .map(|b| b as f64)
        .map_err(|message| ParamError::Invalid {
            op: p.op().to_string(),
            param: name.into(),
            message,
        })
}

fn build_image_size(p: &Params) -> Result<Operator, ParamError> {
    let range = StatRange::from_params(
        p,
        Some(size_param(p, "min_size")?),
        Some(size_param(p, "max_size")?),
    );
    Ok(image_filter(
        p,
        vec![measure_stat(p, "image_sizes", Measure::FileSize)],
        vec![range],
    ))
}

fn build_image_aspect_ratio(p: &Params) -> Result<Operator, ParamError> {
    let range = StatRange::from_params(p, p.float("min_ratio"), p.float("max_ratio"));
    Ok(image_filter(
        p,
        vec![measure_stat(p, "aspect_ratios", Measure::AspectRatio)],
        vec![range],
    ))
}

fn build_image_shape(p: &Params) -> Result<Operator, ParamError> {
    let bound = |name: &str| p.int(name).map(|v| v as f64);
    let width = StatRange::from_params(p, bound("min_width"), bound("max_width"));
    let height = StatRange::from_params(p, bound("min_height"), bound("max_height"));
    Ok(image_filter(
        p,
        vec![
            measure_stat(p, "image_width", Measure::Width),
            measure_stat(p, "image_height", Measure::Height),
        ],
        vec![width, height],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_like_data_juicer() {
        assert_eq!(size_to_bytes("0"), Ok(0));
        assert_eq!(size_to_bytes("10KB"), Ok(10 << 10));
        assert_eq!(size_to_bytes("2 MiB"), Ok(2 << 20));
        assert_eq!(size_to_bytes("1TB"), Ok(1 << 40));
        // Every digit counts, the point too is dropped: Data-Juicer reads "1.5KB" as 15 KiB.
        assert_eq!(size_to_bytes("1.5KB"), Ok(15 << 10));
        assert!(
            size_to_bytes("KB")
                .unwrap_err()
                .contains("does not contain numbers")
        );
        assert!(
            size_to_bytes("5 parsecs")
                .unwrap_err()
                .contains("unidentifiable unit")
        );
    }
}
