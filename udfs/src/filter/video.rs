//! Video filters that need no model, through FFmpeg (the `media` feature):
//! `video_duration_filter` (`video_duration`, seconds), `video_resolution_filter`
//! (`video_width`, `video_height`) and `video_aspect_ratio_filter` (`video_aspect_ratios`,
//! width / height), over the sample's video paths. Each reads the file's first video stream.

use std::sync::Arc;

use serde_json::{Value, json};

use super::media_stats::{Item, Media, any_or_all, measure_stat, media_filter};
use crate::PY_MAXSIZE;
use crate::media::{VideoInfo, video_info};
use crate::operator::{Operator, StatRange};
use crate::params::{ParamError, ParamSpec, ParamType, Params};
use crate::spec::{ModelUse, OpKind, OpSpec};

pub(crate) fn video_duration_spec() -> OpSpec {
    OpSpec {
        name: "video_duration_filter",
        kind: OpKind::Filter,
        model_use: ModelUse::None,
        params: || {
            vec![
                ParamSpec::new(
                    "min_duration",
                    ParamType::Float,
                    json!(0),
                    "minimum duration in seconds",
                ),
                ParamSpec::new(
                    "max_duration",
                    ParamType::Float,
                    json!(PY_MAXSIZE),
                    "maximum duration in seconds",
                ),
                any_or_all(Media::Video),
                ParamSpec::new(
                    "video_backend",
                    ParamType::Choice(&["ffmpeg", "av"]),
                    json!("ffmpeg"),
                    "how the duration is read: ffprobe's stream duration (6 decimals, else the \
                     container's) or PyAV's exact stream duration",
                ),
            ]
        },
        build: build_video_duration,
        doc: "Keep samples whose video durations (seconds) are within [min_duration, max_duration].",
    }
}

pub(crate) fn video_resolution_spec() -> OpSpec {
    OpSpec {
        name: "video_resolution_filter",
        kind: OpKind::Filter,
        model_use: ModelUse::None,
        params: || {
            let mut p = super::media_stats::size_bounds_params();
            p.push(any_or_all(Media::Video));
            p
        },
        build: build_video_resolution,
        doc: "Keep samples whose videos' width and height are within the given bounds.",
    }
}

/// `min_ratio` "9/21" and `max_ratio` "21/9", as the aspect-ratio filter and mapper declare them.
pub(crate) fn ratio_bounds_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::new(
            "min_ratio",
            ParamType::Str,
            json!("9/21"),
            "minimum width / height, a fraction such as \"9/21\" or \"9:21\"",
        ),
        ParamSpec::new(
            "max_ratio",
            ParamType::Str,
            json!("21/9"),
            "maximum width / height, a fraction such as \"21/9\" or \"21:9\"",
        ),
    ]
}

pub(crate) fn video_aspect_ratio_spec() -> OpSpec {
    OpSpec {
        name: "video_aspect_ratio_filter",
        kind: OpKind::Filter,
        model_use: ModelUse::None,
        params: || {
            let mut p = ratio_bounds_params();
            p.push(any_or_all(Media::Video));
            p
        },
        build: build_video_aspect_ratio,
        doc: "Keep samples whose videos' aspect ratios (width / height) are within \
              [min_ratio, max_ratio].",
    }
}

fn measure(f: fn(&VideoInfo) -> Result<f64, String>) -> super::media_stats::Measure {
    Arc::new(move |path: &str| video_info(path).and_then(|info| f(&info)))
}

fn build_video_duration(p: &Params) -> Result<Operator, ParamError> {
    let range = StatRange::from_params(p, p.float("min_duration"), p.float("max_duration"));
    let read = match p.str("video_backend") {
        Some("av") => measure(VideoInfo::av_duration),
        _ => measure(|info| Ok(info.ffprobe_duration())),
    };
    Ok(media_filter(
        p,
        Media::Video,
        vec![measure_stat(
            p,
            Media::Video,
            "video_duration",
            Item::Float,
            read,
        )],
        vec![range],
    ))
}

fn build_video_resolution(p: &Params) -> Result<Operator, ParamError> {
    let bound = |name: &str| p.int(name).map(|v| v as f64);
    let width = StatRange::from_params(p, bound("min_width"), bound("max_width"));
    let height = StatRange::from_params(p, bound("min_height"), bound("max_height"));
    Ok(media_filter(
        p,
        Media::Video,
        vec![
            measure_stat(
                p,
                Media::Video,
                "video_width",
                Item::Int,
                measure(|info| Ok(info.width as f64)),
            ),
            measure_stat(
                p,
                Media::Video,
                "video_height",
                Item::Int,
                measure(|info| Ok(info.height as f64)),
            ),
        ],
        vec![width, height],
    ))
}

fn build_video_aspect_ratio(p: &Params) -> Result<Operator, ParamError> {
    let fraction = |name: &str| {
        parse_fraction(p.raw(name)).map_err(|message| ParamError::Invalid {
            op: p.op().to_string(),
            param: name.into(),
            message,
        })
    };
    let (min, max) = (fraction("min_ratio")?, fraction("max_ratio")?);
    let mut range = StatRange::from_params(p, None, None);
    // Python compares the float stat with the Fraction exactly; the double bound that gives the
    // same answer for every double depends on whether the bound is inclusive.
    range.min = Some(if range.min_closed {
        ceil_to_f64(min)
    } else {
        floor_to_f64(min)
    });
    range.max = Some(if range.max_closed {
        floor_to_f64(max)
    } else {
        ceil_to_f64(max)
    });
    let ratio = measure(|info| {
        if info.height == 0 {
            return Err("its video stream has height 0".into());
        }
        Ok(info.width as f64 / info.height as f64)
    });
    Ok(media_filter(
        p,
        Media::Video,
        vec![measure_stat(
            p,
            Media::Video,
            "video_aspect_ratios",
            Item::Float,
            ratio,
        )],
        vec![range],
    ))
}

/// Python's `Fraction(str(value).replace(":", "/"))` for what recipes hold: `"16/9"`,
/// `"16:9"`, an integer, or a decimal (`"1.5"`, `0.75`), as (numerator, denominator > 0).
pub(crate) fn parse_fraction(value: &Value) -> Result<(i128, i128), String> {
    let text = match value {
        Value::String(s) => s.trim().replace(':', "/"),
        Value::Number(n) => n.to_string(),
        other => return Err(format!("expected a fraction such as \"9/21\", got {other}")),
    };
    let bad = || format!("expected a fraction such as \"9/21\" or \"9:21\", got {text:?}");
    let decimal = |s: &str| -> Option<(i128, i128)> {
        let s = s.trim();
        let (neg, s) = s.strip_prefix('-').map_or((false, s), |r| (true, r));
        let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
        if whole.is_empty() && frac.is_empty()
            || !whole
                .chars()
                .chain(frac.chars())
                .all(|c| c.is_ascii_digit())
            || frac.len() > 18
        {
            return None;
        }
        let digits: i128 = format!("{whole}{frac}").parse().ok()?;
        let scale = 10i128.pow(frac.len() as u32);
        Some((if neg { -digits } else { digits }, scale))
    };
    let (p, q) = match text.split_once('/') {
        Some((a, b)) => {
            let (a, b) = (a.trim(), b.trim());
            let num: i128 = a.parse().map_err(|_| bad())?;
            let den: i128 = b.parse().map_err(|_| bad())?;
            (num, den)
        }
        None => decimal(&text).ok_or_else(bad)?,
    };
    if q == 0 {
        return Err(format!("{text:?} divides by zero"));
    }
    Ok(if q < 0 { (-p, -q) } else { (p, q) })
}

/// Whether the double `x` is below, at or above the rational `p / q` (q > 0), exactly.
pub(crate) fn cmp_exact(x: f64, (p, q): (i128, i128)) -> std::cmp::Ordering {
    let approx = x.partial_cmp(&(p as f64 / q as f64));
    // x = m * 2^e exactly; compare m * 2^e * q with p in integers when that fits.
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = (bits & ((1 << 52) - 1)) as i128;
    let (m, e) = if exp == 0 {
        (frac, -1074)
    } else {
        (frac | (1 << 52), exp - 1075)
    };
    let m = if x < 0.0 { -m } else { m };
    let exact = if e >= 0 {
        m.checked_mul(q)
            .and_then(|v| v.checked_mul(1i128.checked_shl(e as u32)?))
            .map(|lhs| lhs.cmp(&p))
    } else {
        1i128
            .checked_shl((-e) as u32)
            .filter(|s| *s > 0)
            .and_then(|s| p.checked_mul(s))
            .and_then(|rhs| m.checked_mul(q).map(|lhs| lhs.cmp(&rhs)))
    };
    exact.or(approx).unwrap_or(std::cmp::Ordering::Equal)
}

/// The smallest double at or above `p / q`.
fn ceil_to_f64(r: (i128, i128)) -> f64 {
    let d = r.0 as f64 / r.1 as f64;
    if cmp_exact(d, r).is_lt() {
        d.next_up()
    } else {
        d
    }
}

/// The largest double at or below `p / q`.
fn floor_to_f64(r: (i128, i128)) -> f64 {
    let d = r.0 as f64 / r.1 as f64;
    if cmp_exact(d, r).is_gt() {
        d.next_down()
    } else {
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_parse_as_python_reads_them() {
        assert_eq!(parse_fraction(&json!("9/21")), Ok((9, 21)));
        assert_eq!(parse_fraction(&json!("16:9")), Ok((16, 9)));
        assert_eq!(parse_fraction(&json!(2)), Ok((2, 1)));
        assert_eq!(parse_fraction(&json!("1.5")), Ok((15, 10)));
        assert_eq!(parse_fraction(&json!(0.75)), Ok((75, 100)));
        assert!(parse_fraction(&json!("wide")).unwrap_err().contains("9/21"));
        assert!(parse_fraction(&json!("1/0")).unwrap_err().contains("zero"));
    }

    #[test]
    fn bounds_compare_like_python_float_against_fraction() {
        // 16/9 is not a double: the nearest one is below it.
        let r = (16, 9);
        let nearest = 16.0 / 9.0;
        assert!(cmp_exact(nearest, r).is_lt());
        assert_eq!(floor_to_f64(r), nearest);
        assert_eq!(ceil_to_f64(r), nearest.next_up());
        // In Python `16/9 >= Fraction(16, 9)` is False, so a 640x360 video fails min 16/9.
        let min = StatRange {
            min: Some(ceil_to_f64(r)),
            max: None,
            min_closed: true,
            max_closed: true,
            reversed: false,
        };
        assert!(!min.keeps(640.0 / 360.0));
        assert!(min.keeps(1.7777777778));
        // Exact bounds stay themselves.
        assert_eq!(floor_to_f64((3, 4)), 0.75);
        assert_eq!(ceil_to_f64((3, 4)), 0.75);
        assert!(cmp_exact(0.75, (3, 4)).is_eq());
        assert!(cmp_exact(1e300, (1, 3)).is_gt());
    }
}
