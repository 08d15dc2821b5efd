//! What the media filters (image, audio, video) share: a stat UDF that measures every path in a
//! sample's list of media paths, and a keep UDF that applies per-file ranges with Data-Juicer's
//! `any_or_all` strategy.
//!
//! A file that cannot be read (missing, corrupt, no stream of the kind) does what Data-Juicer
//! 1.6.1 does: with `skip_op_error` (its default, per op or top-level) the sample is dropped and
//! a warning names the file; with `skip_op_error: false` the job fails naming it.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Float64Builder, Int64Builder, ListBuilder,
};
use arrow::datatypes::DataType;
use datafusion_common::{Result, exec_err};
use serde_json::json;

use crate::operator::{FieldFilterOp, FieldStat, Operator, StatRange};
use crate::params::{ParamError, ParamSpec, ParamType, Params};
use crate::udf::{OpUdf, UdfIdentity};

/// Which column of media paths a filter reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Media {
    Image,
    Audio,
    #[cfg_attr(not(feature = "media"), allow(dead_code))]
    Video,
}

impl Media {
    /// The op parameter naming the column, and its default.
    fn key_param(self) -> (&'static str, &'static str) {
        match self {
            Media::Image => ("image_key", "images"),
            Media::Audio => ("audio_key", "audios"),
            Media::Video => ("video_key", "videos"),
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Media::Image => "image",
            Media::Audio => "audio",
            Media::Video => "video",
        }
    }
}

/// `min_width`, `max_width`, `min_height`, `max_height` (1 and sys.maxsize), as the shape and
/// resolution ops declare them.
pub(crate) fn size_bounds_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::new("min_width", ParamType::Int, json!(1), "minimum width"),
        ParamSpec::new(
            "max_width",
            ParamType::Int,
            json!(crate::PY_MAXSIZE),
            "maximum width",
        ),
        ParamSpec::new("min_height", ParamType::Int, json!(1), "minimum height"),
        ParamSpec::new(
            "max_height",
            ParamType::Int,
            json!(crate::PY_MAXSIZE),
            "maximum height",
        ),
    ]
}

/// The `any_or_all` parameter, as every media filter has it.
pub(crate) fn any_or_all(media: Media) -> ParamSpec {
    ParamSpec::new(
        "any_or_all",
        ParamType::Choice(&["any", "all"]),
        json!("any"),
        match media {
            Media::Image => "keep a sample if any (or all) of its images pass",
            Media::Audio => "keep a sample if any (or all) of its audios pass",
            Media::Video => "keep a sample if any (or all) of its videos pass",
        },
    )
}

/// How a measurement is stored in the stat list: Data-Juicer's integer stats (sizes, pixels)
/// are ints, the rest floats.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Item {
    Int,
    Float,
}

/// Measures one file from its path; the error says what is wrong with it.
pub(crate) type Measure = Arc<dyn Fn(&str) -> std::result::Result<f64, String> + Send + Sync>;

/// Whether an unreadable file drops its sample (`skip_op_error`, true unless set false) rather
/// than failing the job.
pub(crate) fn skips_errors(p: &Params) -> bool {
    p.raw("skip_op_error").as_bool().unwrap_or(true)
}

/// A file an op could not `what` (`read audio`, `resize video`): with `skip_op_error` a warning
/// naming it, and the caller drops the sample; without, the job's error.
pub(crate) fn unreadable(
    op: &str,
    skip_errors: bool,
    what: &str,
    path: &str,
    error: &str,
) -> Result<()> {
    if skip_errors {
        tracing::warn!("{op}: dropped a sample: cannot {what} `{path}`: {error}");
        Ok(())
    } else {
        exec_err!(
            "{op}: cannot {what} `{path}`: {error} (skip_op_error is false; set it true to drop \
             such samples instead)"
        )
    }
}

/// The paths of sample `row` of a media column (`None` for a null list or a column that is not
/// a list).
pub(crate) fn row_paths(op: &str, paths: &ArrayRef, row: usize) -> Result<Option<Vec<String>>> {
    let list = match paths.data_type() {
        DataType::List(_) if paths.is_valid(row) => paths.as_list::<i32>().value(row),
        DataType::LargeList(_) if paths.is_valid(row) => paths.as_list::<i64>().value(row),
        _ => return Ok(None),
    };
    paths_of(op, &list).map(Some)
}

/// Strings of one sample's path list.
fn paths_of(op: &str, list: &ArrayRef) -> Result<Vec<String>> {
    let strings: Vec<Option<&str>> = match list.data_type() {
        DataType::Utf8 => list.as_string::<i32>().iter().collect(),
        DataType::LargeUtf8 => list.as_string::<i64>().iter().collect(),
        DataType::Utf8View => list.as_string_view().iter().collect(),
        other => return exec_err!("{op}: media paths must be strings, got a list of {other}"),
    };
    Ok(strings
        .into_iter()
        .map(|s| s.unwrap_or_default().to_string())
        .collect())
}

/// The stat UDF: a list per sample, one value per path; no files (empty, null or no column)
/// gives an empty list. An unreadable file gives a null stat (the sample is dropped) or, with
/// `skip_op_error: false`, fails the job naming its path.
pub(crate) fn measure_stat(
    p: &Params,
    media: Media,
    key: &str,
    item: Item,
    measure: Measure,
) -> FieldStat {
    let op = p.op().to_string();
    let skip_errors = skips_errors(p);
    let f = Arc::new(move |args: &[ArrayRef]| -> Result<ArrayRef> {
        let paths = &args[0];
        let mut ints = ListBuilder::new(Int64Builder::new());
        let mut floats = ListBuilder::new(Float64Builder::new());
        for row in 0..paths.len() {
            let mut values: Vec<f64> = Vec::new();
            let mut failed = false;
            if let Some(row_paths) = row_paths(&op, paths, row)? {
                for path in row_paths {
                    match crate::remote_media::local_file(&path).and_then(|p| measure(&p)) {
                        Ok(v) => values.push(v),
                        Err(e) => {
                            let what = format!("read {}", media.noun());
                            unreadable(&op, skip_errors, &what, &path, &e)?;
                            failed = true;
                        }
                    }
                }
            }
            match (item, failed) {
                (Item::Float, true) => floats.append_null(),
                (Item::Int, true) => ints.append_null(),
                (Item::Float, false) => {
                    floats.values().append_slice(&values);
                    floats.append(true);
                }
                (Item::Int, false) => {
                    values
                        .iter()
                        .for_each(|v| ints.values().append_value(*v as i64));
                    ints.append(true);
                }
            }
        }
        Ok(match item {
            Item::Float => Arc::new(floats.finish()) as ArrayRef,
            Item::Int => Arc::new(ints.finish()),
        })
    });
    let item_type = match item {
        Item::Float => DataType::Float64,
        Item::Int => DataType::Int64,
    };
    FieldStat {
        key: key.to_string(),
        udf: OpUdf::from_fn(
            UdfIdentity::of(p, &format!("_{key}")),
            Some(DataType::new_list(item_type, true)),
            f,
        ),
    }
}

/// Per-file values of list column `stat` at `row` as f64 (None for a null list).
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

/// The keep UDF: per file, every stat within its range; then any / all files; a sample with
/// no files is kept, one whose stat failed (null) is not.
fn keep_udf(p: &Params, ranges: Vec<StatRange>) -> Arc<datafusion_expr::ScalarUDF> {
    let any = p.str("any_or_all") != Some("all");
    let f = Arc::new(move |args: &[ArrayRef]| -> Result<ArrayRef> {
        let rows = args.first().map_or(0, |a| a.len());
        let keep: BooleanArray = (0..rows)
            .map(|row| {
                let per_stat: Option<Vec<Vec<f64>>> =
                    args.iter().map(|a| row_values(a, row)).collect();
                let per_stat = per_stat?;
                let files = per_stat.first().map_or(0, Vec::len);
                if files == 0 {
                    return Some(true);
                }
                let file_ok = |i: usize| {
                    per_stat
                        .iter()
                        .zip(&ranges)
                        .all(|(values, r)| values.get(i).is_some_and(|v| r.keeps(*v)))
                };
                Some(if any {
                    (0..files).any(file_ok)
                } else {
                    (0..files).all(file_ok)
                })
            })
            .map(|k| Some(k.unwrap_or(false)))
            .collect();
        Ok(Arc::new(keep))
    });
    OpUdf::from_fn(UdfIdentity::of(p, "_keep"), Some(DataType::Boolean), f)
}

/// A filter over the media column: `stats[i]` is kept within `ranges[i]`.
pub(crate) fn media_filter(
    p: &Params,
    media: Media,
    stats: Vec<FieldStat>,
    ranges: Vec<StatRange>,
) -> Operator {
    let (param, default) = media.key_param();
    Operator::FieldFilter(FieldFilterOp {
        joint: None,
        field: p.str(param).unwrap_or(default).to_string(),
        optional: true,
        stats,
        keep: keep_udf(p, ranges),
    })
}

/// A size parameter (`"10KB"`) in bytes.
pub(crate) fn size_param(p: &Params, name: &str) -> std::result::Result<f64, ParamError> {
    size_to_bytes(p.str(name).unwrap_or_default())
        .map(|b| b as f64)
        .map_err(|message| ParamError::Invalid {
            op: p.op().to_string(),
            param: name.into(),
            message,
        })
}

/// A file's size in bytes.
pub(crate) fn file_size(path: &str) -> std::result::Result<f64, String> {
    std::fs::metadata(path)
        .map(|m| m.len() as f64)
        .map_err(|e| e.to_string())
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
