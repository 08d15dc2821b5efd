//! `video_resize_resolution_mapper` and `video_resize_aspect_ratio_mapper`: videos outside the
//! bounds are written again, scaled (see [`crate::transcode`]), and the sample points at the new
//! files; `__dj__source_file__` records the files it came from.
//!
//! New files go where Data-Juicer puts them, with names stable across a resume (see
//! [`crate::mapper::produced`]). Deliberate deviation: `__dj__source_file__` holds the original
//! paths, as Data-Juicer's code means to (1.6.1 aliases the two lists, so it records the new
//! paths). Sources on object storage need `save_dir` or `DJ_PRODUCED_DATA_DIR`.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BooleanBuilder, ListBuilder, StringBuilder, StructArray};
use arrow::datatypes::{DataType, Field, Fields};
use datafusion_common::Result;
use serde_json::json;

use crate::filter::media_stats::{row_paths, skips_errors, unreadable};
use crate::filter::video::{parse_fraction, ratio_bounds_params};
use crate::mapper::produced::{produced_path, save_dir_param};
use crate::operator::{MediaMapperOp, MediaMapperShape, Operator};
use crate::params::{ParamError, ParamSpec, ParamType, Params};
use crate::spec::{ModelUse, OpKind, OpSpec};
use crate::udf::{OpUdf, UdfIdentity};

pub(crate) fn video_resize_resolution_spec() -> OpSpec {
    OpSpec {
        name: "video_resize_resolution_mapper",
        kind: OpKind::Mapper,
        model_use: ModelUse::None,
        params: || {
            let mut p = crate::filter::media_stats::size_bounds_params();
            p.extend(vec![
                ParamSpec::new(
                    "force_original_aspect_ratio",
                    ParamType::Str,
                    json!("disable"),
                    "disable, decrease or increase",
                ),
                ParamSpec::new(
                    "force_divisible_by",
                    ParamType::Int,
                    json!(2),
                    "both sides divisible by it (a positive even number)",
                ),
                save_dir_param(),
            ]);
            p
        },
        build: build_resolution,
        doc: "Resize videos whose width or height is out of bounds.",
    }
}

pub(crate) fn video_resize_aspect_ratio_spec() -> OpSpec {
    OpSpec {
        name: "video_resize_aspect_ratio_mapper",
        kind: OpKind::Mapper,
        model_use: ModelUse::None,
        params: || {
            let mut p = ratio_bounds_params();
            p.push(ParamSpec::new(
                "strategy",
                ParamType::Str,
                json!("increase"),
                "increase or decrease",
            ));
            p.push(save_dir_param());
            p
        },
        build: build_aspect_ratio,
        doc: "Resize videos whose aspect ratio is out of bounds.",
    }
}

/// The new size of a `width` x `height` video, or none if it stays.
type Target =
    Arc<dyn Fn(i64, i64) -> std::result::Result<Option<(u32, u32)>, String> + Send + Sync>;

fn invalid(p: &Params, param: &str, message: String) -> ParamError {
    ParamError::Invalid {
        op: p.op().to_string(),
        param: param.into(),
        message,
    }
}

fn build_resolution(p: &Params) -> std::result::Result<Operator, ParamError> {
    let int = |name: &str| p.raw(name).as_i64().unwrap_or(1);
    let (min_w, max_w, min_h, max_h) = (
        int("min_width"),
        int("max_width"),
        int("min_height"),
        int("max_height"),
    );
    let mode = p
        .str("force_original_aspect_ratio")
        .unwrap_or("disable")
        .to_lowercase();
    if !["disable", "decrease", "increase"].contains(&mode.as_str()) {
        return Err(invalid(
            p,
            "force_original_aspect_ratio",
            format!(
                "[{mode}] is not supported; can only be one of ['disable', 'decrease', 'increase']"
            ),
        ));
    }
    let divisible = int("force_divisible_by");
    if divisible < 1 {
        return Err(invalid(
            p,
            "force_divisible_by",
            "must be a positive integer".into(),
        ));
    }
    if (divisible <= 1 || divisible % 2 == 1) && mode != "disable" {
        return Err(invalid(
            p,
            "force_divisible_by",
            format!("[{divisible}] must be a positive even number"),
        ));
    }
    let target: Target = Arc::new(move |w, h| {
        Ok(resolution_target(
            w,
            h,
            (min_w, max_w, min_h, max_h),
            &mode,
            divisible,
        ))
    });
    Ok(media_mapper(p, target))
}

/// `VideoResizeResolutionMapper.process_single`'s arithmetic, Python's int/float mix included.
fn resolution_target(
    w: i64,
    h: i64,
    (min_w, max_w, min_h, max_h): (i64, i64, i64, i64),
    mode: &str,
    divisible: i64,
) -> Option<(u32, u32)> {
    if w >= min_w && w <= max_w && h >= min_h && h <= max_h {
        return None;
    }
    let ratio = w as f64 / h as f64;
    let (mut width, mut height) = (w as f64, h as f64);
    if width < min_w as f64 {
        height = min_w as f64 / ratio;
        width = min_w as f64;
    }
    if width > max_w as f64 {
        height = max_w as f64 / ratio;
        width = max_w as f64;
    }
    if height < min_h as f64 {
        width = min_h as f64 * ratio;
        height = min_h as f64;
    }
    if height > max_h as f64 {
        width = max_h as f64 * ratio;
        height = max_h as f64;
    }
    let d = if mode == "disable" { 2 } else { divisible };
    let fit = |v: f64, lo: i64, hi: i64| -> i64 {
        let v = v.max(lo as f64) as i64; // int(max(v, lo))
        let v = (v as f64 / d as f64).ceil() as i64 * d;
        let v = v.min(hi);
        (v as f64 / d as f64) as i64 * d
    };
    let (iw, ih) = (fit(width, min_w, max_w), fit(height, min_h, max_h));
    let (mut width, mut height) = (iw as f64, ih as f64);
    let current = iw as f64 / ih as f64;
    if mode == "increase" {
        if current < ratio {
            width = ih as f64 * ratio;
        } else if current > ratio {
            height = iw as f64 / ratio;
        }
    } else if mode == "decrease" {
        if current < ratio {
            height = iw as f64 / ratio;
        } else if current > ratio {
            width = ih as f64 * ratio;
        }
    }
    let round = |v: f64| (v / d as f64).round_ties_even() as i64 * d;
    Some((round(width).max(0) as u32, round(height).max(0) as u32))
}

fn build_aspect_ratio(p: &Params) -> std::result::Result<Operator, ParamError> {
    let ratio =
        |name: &str| parse_fraction(p.raw(name)).map_err(|message| invalid(p, name, message));
    let (min, max) = (ratio("min_ratio")?, ratio("max_ratio")?);
    let strategy = p.str("strategy").unwrap_or("increase").to_lowercase();
    if !["decrease", "increase"].contains(&strategy.as_str()) {
        return Err(invalid(
            p,
            "strategy",
            format!("[{strategy}] is not supported; can only be one of ['decrease', 'increase']"),
        ));
    }
    let target: Target = Arc::new(move |w, h| aspect_target(w, h, min, max, &strategy));
    Ok(media_mapper(p, target))
}

/// `rescale` of `video_resize_aspect_ratio_mapper`, in exact rationals; its assertions fail
/// the file, as they raise there.
fn aspect_target(
    w: i64,
    h: i64,
    min: (i128, i128),
    max: (i128, i128),
    strategy: &str,
) -> std::result::Result<Option<(u32, u32)>, String> {
    let (w, h) = (w as i128, h as i128);
    // a/b < c/d with b, d > 0
    let lt = |(a, b): (i128, i128), (c, d): (i128, i128)| a * d < c * b;
    if h <= 0 {
        return Err("its video has no height".into());
    }
    let ratio = (w, h);
    if !lt(ratio, min) && !lt(max, ratio) {
        return Ok(None);
    }
    let ceil_div = |a: i128, b: i128| a.div_euclid(b) + i128::from(a.rem_euclid(b) != 0);
    let (mut sw, mut sh) = (w, h);
    let increase = strategy == "increase";
    if lt(ratio, min) {
        if increase {
            sw = ceil_div(h * min.0, min.1);
            sw += sw.rem_euclid(2);
        } else {
            sh = (w * min.1).div_euclid(min.0);
            sh -= sh.rem_euclid(2);
        }
    } else if increase {
        sh = ceil_div(w * max.1, max.0);
        sh += sh.rem_euclid(2);
    } else {
        sw = (h * max.0).div_euclid(max.1);
        sw -= sw.rem_euclid(2);
    }
    if sh == 0 || lt((sw, sh), min) || lt(max, (sw, sh)) {
        return Err(format!(
            "no {sw}x{sh} size keeps its aspect ratio within the bounds (Data-Juicer's assertion)"
        ));
    }
    Ok(Some((sw.max(2) as u32, sh.max(2) as u32)))
}

/// One video: its new path, or itself if it fits.
fn resize_one(
    op: &str,
    save_dir: Option<&str>,
    params: &str,
    target: &Target,
    path: &str,
) -> std::result::Result<String, String> {
    let local = crate::remote_media::local_file(path)?;
    let info = crate::media::video_info(&local)?;
    let Some((width, height)) = target(info.width, info.height)? else {
        return Ok(path.to_string());
    };
    let out = produced_path(op, save_dir, path, &local, params)?;
    if !out.exists() {
        crate::transcode::write_scaled(&local, &out, width, height)?;
    }
    out.into_os_string()
        .into_string()
        .map_err(|p| format!("the new path {p:?} is not UTF-8"))
}

fn struct_fields() -> Fields {
    let list = DataType::new_list(DataType::Utf8, true);
    Fields::from(vec![
        Field::new("paths", list.clone(), true),
        Field::new("source_file", list, true),
        Field::new("ok", DataType::Boolean, false),
    ])
}

fn media_mapper(p: &Params, target: Target) -> Operator {
    let op = p.op().to_string();
    let skip_errors = skips_errors(p);
    let save_dir = p.str("save_dir").map(str::to_string);
    let params = {
        let mut json = p.to_json();
        if let Some(o) = json.as_object_mut() {
            o.remove("save_dir");
        }
        json.to_string()
    };
    let f = Arc::new(move |args: &[ArrayRef]| -> Result<ArrayRef> {
        let (media, sources) = (&args[0], &args[1]);
        let mut paths = ListBuilder::new(StringBuilder::new());
        let mut source_files = ListBuilder::new(StringBuilder::new());
        let mut ok = BooleanBuilder::new();
        for row in 0..media.len() {
            let files = row_paths(&op, media, row)?.unwrap_or_default();
            if files.is_empty() {
                // No video: the list stays as it was and the sources are emptied, as there.
                if media.is_null(row) {
                    paths.append_null();
                } else {
                    paths.append(true);
                }
                source_files.append(true);
                ok.append_value(true);
                continue;
            }
            let mut new = Vec::with_capacity(files.len());
            let mut failed = false;
            for path in &files {
                match resize_one(&op, save_dir.as_deref(), &params, &target, path) {
                    Ok(n) => new.push(n),
                    Err(e) => {
                        unreadable(&op, skip_errors, "resize video", path, &e)?;
                        failed = true;
                        break;
                    }
                }
            }
            let kept = row_paths(&op, sources, row)?.filter(|s| !s.is_empty());
            for s in kept.as_ref().unwrap_or(&files) {
                source_files.values().append_value(s);
            }
            source_files.append(true);
            for n in &new {
                paths.values().append_value(n);
            }
            paths.append(!failed);
            ok.append_value(!failed);
        }
        let fields = struct_fields();
        Ok(Arc::new(StructArray::new(
            fields,
            vec![
                Arc::new(paths.finish()),
                Arc::new(source_files.finish()),
                Arc::new(ok.finish()),
            ],
            None,
        )) as ArrayRef)
    });
    Operator::MediaMapper(MediaMapperOp {
        column: p.str("video_key").unwrap_or("videos").to_string(),
        udf: OpUdf::from_fn(
            UdfIdentity::of(p, ""),
            Some(DataType::Struct(struct_fields())),
            f,
        ),
        shape: MediaMapperShape::OnePerSample,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PY_MAXSIZE;

    const MAX: i64 = PY_MAXSIZE;

    #[test]
    fn resolution_targets_follow_data_juicers_arithmetic() {
        // Values worked out with Data-Juicer 1.6.1's process_single arithmetic.
        let bounds = (1, 200, 1, MAX);
        assert_eq!(
            resolution_target(320, 240, bounds, "disable", 2),
            Some((200, 150))
        );
        assert_eq!(
            resolution_target(640, 360, bounds, "disable", 2),
            Some((200, 112))
        );
        assert_eq!(resolution_target(176, 144, bounds, "disable", 2), None);
        assert_eq!(
            resolution_target(200, 400, (1, MAX, 1, 300), "decrease", 4),
            Some((152, 300))
        );
        assert_eq!(
            resolution_target(96, 64, (128, MAX, 1, MAX), "increase", 4),
            Some((132, 88))
        );
    }

    #[test]
    fn aspect_targets_are_exact_and_even() {
        let (min, max) = ((9, 21), (21, 9));
        assert_eq!(aspect_target(320, 240, min, max, "increase"), Ok(None));
        // 1000x200 (5:1) > 21/9: increase the height to ceil(1000 * 9 / 21) = 429, then even.
        assert_eq!(
            aspect_target(1000, 200, min, max, "increase"),
            Ok(Some((1000, 430)))
        );
        // decrease the width to floor(200 * 21 / 9) = 466, even.
        assert_eq!(
            aspect_target(1000, 200, min, max, "decrease"),
            Ok(Some((466, 200)))
        );
        assert_eq!(
            aspect_target(100, 400, (1, 1), (2, 1), "increase"),
            Ok(Some((400, 400)))
        );
    }
}
