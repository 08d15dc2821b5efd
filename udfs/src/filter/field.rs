//! Filters over a non-text field: `specified_field_filter` (the value must be one of a list) and
//! `specified_numeric_field_filter` (the value, as a number, must be in a range). Both copy the
//! field value into `__dj__stats__` under the dotted field key, as Data-Juicer does.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BooleanArray, Float64Array};
use arrow::datatypes::DataType;
use datafusion_common::{Result, exec_err};
use serde_json::{Value, json};

use crate::PY_MAXSIZE;
use crate::columns::SUFFIX_COLUMN;
use crate::operator::{FieldFilterOp, FieldStat, Operator, StatRange};
use crate::params::{ParamError, ParamSpec, ParamType, Params};
use crate::spec::{ModelUse, OpKind, OpSpec};
use crate::udf::{OpUdf, UdfIdentity};
use crate::value::{FloatError, cell_value, py_eq, py_float, py_truthy};

pub(crate) fn specified_field_spec() -> OpSpec {
    OpSpec {
        name: "specified_field_filter",
        kind: OpKind::Filter,
        model_use: ModelUse::None,
        params: || {
            vec![
                ParamSpec::new(
                    "field_key",
                    ParamType::Str,
                    json!(""),
                    "dotted path of the field, e.g. meta.language",
                ),
                ParamSpec::new(
                    "target_value",
                    ParamType::Any,
                    json!([]),
                    "values to keep (every element of a list field must be one)",
                ),
            ]
        },
        build: build_specified_field,
        doc: "Keep samples whose field value (each element, for a list) is one of target_value.",
    }
}

pub(crate) fn suffix_spec() -> OpSpec {
    OpSpec {
        name: "suffix_filter",
        kind: OpKind::Filter,
        model_use: ModelUse::None,
        params: || {
            vec![ParamSpec::new(
                "suffixes",
                ParamType::StrList,
                json!([]),
                "suffixes to keep, e.g. ['.txt', '.md'] (empty: keep all)",
            )]
        },
        build: build_suffix,
        doc: "Keep samples whose `__dj__suffix__` is one of suffixes.",
    }
}

/// Data-Juicer's `suffix_filter` reads the `__dj__suffix__` column (its loaders' `add_suffix`
/// output; Data-Juicer 1.6.1's config does not accept `add_suffix`, so the column comes with the
/// data) and compares it exactly, writing no stat.
fn build_suffix(p: &Params) -> Result<Operator, ParamError> {
    let suffixes: Vec<String> = match p.raw("suffixes") {
        Value::String(s) => vec![s.clone()],
        Value::Array(v) => v
            .iter()
            .filter_map(|x| x.as_str().map(String::from))
            .collect(),
        _ => Vec::new(),
    };
    let reversed = p.bool("reversed_range");
    let keep = Arc::new(move |args: &[ArrayRef]| -> Result<ArrayRef> {
        let values = &args[0];
        let keep: BooleanArray = (0..values.len())
            .map(|row| {
                if suffixes.is_empty() {
                    return Some(true);
                }
                let hit = matches!(cell_value(values.as_ref(), row), Value::String(s) if suffixes.contains(&s));
                Some(hit != reversed)
            })
            .collect();
        Ok(Arc::new(keep))
    });
    Ok(Operator::FieldFilter(FieldFilterOp {
        joint: None,
        field: SUFFIX_COLUMN.to_string(),
        optional: false,
        stats: Vec::new(),
        keep: OpUdf::from_fn(UdfIdentity::of(p, "_keep"), Some(DataType::Boolean), keep),
    }))
}

pub(crate) fn specified_numeric_field_spec() -> OpSpec {
    OpSpec {
        name: "specified_numeric_field_filter",
        kind: OpKind::Filter,
        model_use: ModelUse::None,
        params: || {
            vec![
                ParamSpec::new(
                    "field_key",
                    ParamType::Str,
                    json!(""),
                    "dotted path of the field, e.g. meta.score",
                ),
                ParamSpec::new(
                    "min_value",
                    ParamType::Float,
                    json!(-PY_MAXSIZE),
                    "minimum value",
                ),
                ParamSpec::new(
                    "max_value",
                    ParamType::Float,
                    json!(PY_MAXSIZE),
                    "maximum value",
                ),
            ]
        },
        build: build_specified_numeric_field,
        doc: "Keep samples whose field value is a number (or numeric string) within [min_value, max_value].",
    }
}

fn field_key(p: &Params) -> Result<String, ParamError> {
    let key = p.str("field_key").unwrap_or_default();
    if key.is_empty() {
        // Data-Juicer fails too (an assertion on the empty key) when it computes the stat.
        return Err(ParamError::Invalid {
            op: p.op().to_string(),
            param: "field_key".into(),
            message: "must name a field (a dotted path such as meta.language)".into(),
        });
    }
    Ok(key.to_string())
}

/// The stat of both filters: the field value itself (the compiler applies Data-Juicer's JSON
/// round trip, see [`super::json_stats`]).
fn copy_stat(p: &Params, key: String) -> FieldStat {
    let f = Arc::new(|args: &[ArrayRef]| Ok(args[0].clone()));
    FieldStat {
        key,
        udf: OpUdf::from_fn(UdfIdentity::of(p, ""), None, f),
    }
}

fn build_specified_field(p: &Params) -> Result<Operator, ParamError> {
    let key = field_key(p)?;
    let targets: Vec<Value> = match p.raw("target_value") {
        Value::Array(v) => v.clone(),
        Value::Null => Vec::new(),
        other => {
            return Err(ParamError::Invalid {
                op: p.op().to_string(),
                param: "target_value".into(),
                message: format!("expected a list of values, got {other}"),
            });
        }
    };
    let reversed = p.bool("reversed_range");
    let keep = Arc::new(move |args: &[ArrayRef]| -> Result<ArrayRef> {
        let values = &args[0];
        let keep: BooleanArray = (0..values.len())
            .map(|row| {
                if targets.is_empty() {
                    return Some(true);
                }
                let v = cell_value(values.as_ref(), row);
                let in_targets = |x: &Value| targets.iter().any(|t| py_eq(x, t));
                let all = match &v {
                    Value::Array(items) => items.iter().all(in_targets),
                    single => in_targets(single),
                };
                Some(all != reversed)
            })
            .collect();
        Ok(Arc::new(keep))
    });
    Ok(Operator::FieldFilter(FieldFilterOp {
        joint: None,
        field: key.clone(),
        optional: false,
        stats: vec![copy_stat(p, key)],
        keep: OpUdf::from_fn(UdfIdentity::of(p, "_keep"), Some(DataType::Boolean), keep),
    }))
}

fn build_specified_numeric_field(p: &Params) -> Result<Operator, ParamError> {
    let key = field_key(p)?;
    let range = StatRange::from_params(p, p.float("min_value"), p.float("max_value"));
    let op = p.op().to_string();
    let field = key.clone();
    let keep = Arc::new(move |args: &[ArrayRef]| -> Result<ArrayRef> {
        let values = &args[0];
        let mut out = Vec::with_capacity(values.len());
        if let Some(f) = values.as_any().downcast_ref::<Float64Array>() {
            // Fast path: a float column needs no JSON conversion (0.0 and null are falsy).
            out.extend(
                f.iter()
                    .map(|v| Some(v.is_some_and(|x| x != 0.0 && range.keeps(x)))),
            );
            return Ok(Arc::new(BooleanArray::from(out)));
        }
        for row in 0..values.len() {
            let v = cell_value(values.as_ref(), row);
            // Data-Juicer's is_number: falsy values (0, "", None) are not numbers.
            let keep = if !py_truthy(&v) {
                false
            } else {
                match py_float(&v) {
                    Ok(x) => range.keeps(x),
                    Err(FloatError::Value) => false,
                    Err(FloatError::Type) => {
                        return exec_err!(
                            "{op}: field `{field}` holds {v}, which Python's float() rejects \
                             (TypeError; Data-Juicer stops here too)"
                        );
                    }
                }
            };
            out.push(Some(keep));
        }
        Ok(Arc::new(BooleanArray::from(out)))
    });
    Ok(Operator::FieldFilter(FieldFilterOp {
        joint: None,
        field: key.clone(),
        optional: false,
        stats: vec![copy_stat(p, key)],
        keep: OpUdf::from_fn(UdfIdentity::of(p, "_keep"), Some(DataType::Boolean), keep),
    }))
}
