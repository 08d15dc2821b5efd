//! Selectors: global operators that pick rows of the whole dataset, and reorder them, from a
//! field's values: `topk_specified_field_selector`, `range_specified_field_selector`,
//! `frequency_specified_field_selector` and `random_selector` (seeded, as Data-Juicer's 42).
//!
//! Each selector reads one value per row ([`SelectorOp::value_udf`]) and decides, over all rows
//! in dataset order, which rows survive and in what order ([`SelectorKind::select`]).

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, Float64Builder, StringBuilder};
use arrow::datatypes::DataType;
use datafusion_common::{Result, exec_err};
use datafusion_expr::ScalarUDF;
use serde_json::{Value, json};

use crate::operator::{Operator, SelectorKind, SelectorOp};
use crate::params::{ParamError, ParamSpec, ParamType, Params};
use crate::py::numpy_rng::numpy_permutation;
use crate::spec::{ModelUse, OpKind, OpSpec};
use crate::udf::{OpUdf, UdfIdentity};
use crate::value::{cell_value, py_float};

/// A row's selector value as the barrier keeps it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SelectValue {
    Number(f64),
    /// 128-bit digest of a frequency group key.
    Group(u128),
    None,
}

/// `heapq.nlargest` / `nsmallest(k, range(n), key=values.__getitem__)`: the first `k` indices
/// by value, ties in index order.
fn top_indices(values: &[f64], indices: &[usize], k: usize, largest: bool) -> Vec<usize> {
    let mut order: Vec<usize> = indices.to_vec();
    order.sort_by(|&a, &b| {
        let (x, y) = (values[a], values[b]);
        let o = x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal);
        if largest { o.reverse() } else { o }
    });
    order.truncate(k);
    order
}

fn numbers(values: &[SelectValue]) -> Vec<f64> {
    values
        .iter()
        .map(|v| match v {
            SelectValue::Number(x) => *x,
            _ => f64::NAN,
        })
        .collect()
}

impl SelectorKind {
    /// How many of `n` rows a top-k selector keeps (the first by value, ties in dataset order),
    /// or `None` when it passes the dataset unchanged; `None` for the other kinds too.
    pub fn top_count(&self, n: usize) -> Option<usize> {
        let SelectorKind::TopK {
            top_ratio, topk, ..
        } = *self
        else {
            return None;
        };
        if n <= 1 {
            return None;
        }
        let select = match top_ratio.filter(|r| *r != 0.0) {
            None => topk.filter(|k| *k > 0)? as f64,
            Some(r) => {
                let by_ratio = r * n as f64;
                match topk.filter(|k| *k > 0) {
                    Some(k) if (k as f64) < by_ratio => k as f64,
                    _ => by_ratio,
                }
            }
        };
        Some(select as usize)
    }

    /// For a range selector: the `[lower, upper)` positions of the rows it keeps in ascending
    /// value order, or `None` when it passes the dataset unchanged; `None` for the other kinds.
    pub fn range_bounds(&self, n: usize) -> Option<(usize, usize)> {
        let SelectorKind::Range {
            lower_percentile,
            upper_percentile,
            lower_rank,
            upper_rank,
        } = *self
        else {
            return None;
        };
        if n <= 1 {
            return None;
        }
        if lower_percentile.is_none() && lower_rank.is_none() {
            return None;
        }
        if upper_percentile.is_none() && upper_rank.is_none() {
            return None;
        }
        let mut lower = 0usize;
        let mut upper = n;
        if let Some(p) = lower_percentile {
            lower = (p * n as f64) as usize;
        }
        if let Some(r) = lower_rank {
            lower = lower.max(r as usize);
        }
        if let Some(p) = upper_percentile {
            upper = (p * n as f64) as usize;
        }
        if let Some(r) = upper_rank {
            upper = upper.min(r as usize);
        }
        Some((lower, upper.max(lower)))
    }

    /// How many of `groups` value groups a frequency selector keeps (the largest, or with
    /// `reverse: false` the smallest, ties in order of first appearance), or `None` when it passes
    /// the dataset unchanged; `None` for the other kinds too. Call only with two rows or more
    /// (fewer pass unchanged).
    pub fn group_count(&self, groups: usize) -> Option<usize> {
        let SelectorKind::Frequency {
            top_ratio, topk, ..
        } = *self
        else {
            return None;
        };
        let select = match top_ratio.filter(|r| *r != 0.0) {
            None => topk.filter(|k| *k > 0)? as f64,
            Some(r) => {
                let by_ratio = r * groups as f64;
                match topk.filter(|k| *k > 0) {
                    Some(k) if (k as f64) < by_ratio => k as f64,
                    _ => by_ratio,
                }
            }
        };
        Some(select as usize)
    }

    /// The surviving rows in output order, or `None` when the dataset passes unchanged.
    pub fn select(&self, values: &[SelectValue]) -> Option<Vec<usize>> {
        let n = values.len();
        if n <= 1 {
            return None;
        }
        match *self {
            SelectorKind::TopK { reverse, .. } => {
                let select = self.top_count(n)?;
                let all: Vec<usize> = (0..n).collect();
                Some(top_indices(&numbers(values), &all, select, reverse))
            }
            SelectorKind::Range { .. } => {
                let (lower, upper) = self.range_bounds(n)?;
                let v = numbers(values);
                let all: Vec<usize> = (0..n).collect();
                let smallest = top_indices(&v, &all, upper, false);
                // The second pass ranks the subset; ties keep the subset's order.
                let sub_values: Vec<f64> = smallest.iter().map(|&i| v[i]).collect();
                let sub: Vec<usize> = (0..smallest.len()).collect();
                let picked = top_indices(&sub_values, &sub, upper - lower, true);
                Some(picked.into_iter().map(|j| smallest[j]).collect())
            }
            SelectorKind::Frequency { reverse, .. } => {
                // Groups in first-appearance order, as a Python dict keeps them.
                let mut group_of: HashMap<Option<u128>, usize> = HashMap::new();
                let mut groups: Vec<Vec<usize>> = Vec::new();
                for (i, v) in values.iter().enumerate() {
                    let key = match v {
                        SelectValue::Group(g) => Some(*g),
                        SelectValue::Number(x) => Some(x.to_bits() as u128),
                        SelectValue::None => None,
                    };
                    let g = *group_of.entry(key).or_insert_with(|| {
                        groups.push(Vec::new());
                        groups.len() - 1
                    });
                    groups[g].push(i);
                }
                let select = self.group_count(groups.len())?;
                // Python's sorted(reverse=True) is stable too: equal sizes keep group order.
                if reverse {
                    groups.sort_by_key(|g| std::cmp::Reverse(g.len()));
                } else {
                    groups.sort_by_key(Vec::len);
                }
                groups.truncate(select);
                Some(groups.concat())
            }
            SelectorKind::Random {
                select_ratio,
                select_num,
            } => {
                if select_ratio.is_none() && select_num.is_none() {
                    return None;
                }
                let k = match select_ratio.filter(|r| *r != 0.0) {
                    None => select_num? as usize,
                    Some(r) => {
                        let by_ratio = (r * n as f64) as usize;
                        match select_num {
                            Some(s) if s > 0 && (s as usize) < by_ratio => s as usize,
                            _ => by_ratio,
                        }
                    }
                };
                // random_sample: 0 means "all" (ceil(n * 1.0)), and all rows pass unchanged.
                if k == 0 || k == n {
                    return None;
                }
                let mut perm = numpy_permutation(n as u64, 42);
                perm.truncate(k.min(n));
                Some(perm.into_iter().map(|i| i as usize).collect())
            }
        }
    }
}

fn identity(p: &Params) -> UdfIdentity {
    UdfIdentity::of(p, "_value")
}

/// Data-Juicer's `stats_to_number`: a string via `float()`, a list by its mean, anything that
/// fails (None, empty list, a non-numeric string) sorts last: `-sys.maxsize` when selecting the
/// largest, `sys.maxsize` otherwise.
fn stats_to_number(v: &Value, reverse: bool) -> f64 {
    let fallback = if reverse {
        -(i64::MAX as f64)
    } else {
        i64::MAX as f64
    };
    match v {
        Value::Array(items) if !items.is_empty() => {
            let nums: Option<Vec<f64>> = items.iter().map(|x| py_float(x).ok()).collect();
            nums.map_or(fallback, |n| n.iter().sum::<f64>() / n.len() as f64)
        }
        Value::Array(_) | Value::Null | Value::Object(_) => fallback,
        other => py_float(other).unwrap_or(fallback),
    }
}

/// The Float64 sort value UDF. `raw_single_level`: a one-segment `field_key` is compared as the
/// raw value (Data-Juicer's topk does so), which must then be a number.
fn sort_value_udf(p: &Params, reverse: bool, raw_single_level: bool) -> Arc<ScalarUDF> {
    let op = p.op().to_string();
    let f = Arc::new(move |args: &[ArrayRef]| -> Result<ArrayRef> {
        let a = &args[0];
        let mut b = Float64Builder::with_capacity(a.len());
        for row in 0..a.len() {
            let v = cell_value(a.as_ref(), row);
            let x = if raw_single_level {
                match &v {
                    Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
                    Value::Bool(t) => *t as u8 as f64,
                    other => {
                        return exec_err!(
                            "{op}: a top-level field_key is compared as its raw value, which \
                             must be a number; row value {other} is not (Data-Juicer fails too)"
                        );
                    }
                }
            } else {
                stats_to_number(&v, reverse)
            };
            b.append_value(x);
        }
        Ok(Arc::new(b.finish()))
    });
    OpUdf::from_fn(identity(p), Some(DataType::Float64), f)
}

/// The Utf8 group key UDF of the frequency selector: values equal in Python share a key
/// (`1`, `1.0` and `true` are one group); None is null.
fn group_key_udf(p: &Params) -> Arc<ScalarUDF> {
    let op = p.op().to_string();
    let f = Arc::new(move |args: &[ArrayRef]| -> Result<ArrayRef> {
        let a = &args[0];
        let mut b = StringBuilder::new();
        for row in 0..a.len() {
            match cell_value(a.as_ref(), row) {
                Value::Null => b.append_null(),
                Value::String(s) => b.append_value(format!("s{s}")),
                Value::Bool(t) => b.append_value(format!("n{}", t as u8 as f64)),
                Value::Number(n) => match n.as_i64() {
                    Some(i) if (i as f64) as i64 == i => b.append_value(format!("n{}", i as f64)),
                    Some(i) => b.append_value(format!("i{i}")),
                    None => b.append_value(format!("n{}", n.as_f64().unwrap_or(f64::NAN))),
                },
                other => {
                    return exec_err!(
                        "{op}: row {row} of the field is {other}; it must be a string, a number or null"
                    );
                }
            }
        }
        Ok(Arc::new(b.finish()))
    });
    OpUdf::from_fn(identity(p), Some(DataType::Utf8), f)
}

fn opt_f64(p: &Params, name: &str) -> Option<f64> {
    p.float(name)
}

fn opt_positive(p: &Params, name: &str) -> Result<Option<u64>, ParamError> {
    match p.int(name) {
        None => Ok(None),
        Some(v) if v > 0 => Ok(Some(v as u64)),
        Some(v) => Err(ParamError::Invalid {
            op: p.op().to_string(),
            param: name.into(),
            message: format!("must be a positive integer, got {v}"),
        }),
    }
}

fn ratio(p: &Params, name: &str) -> Result<Option<f64>, ParamError> {
    match opt_f64(p, name) {
        Some(r) if !(0.0..=1.0).contains(&r) => Err(ParamError::Invalid {
            op: p.op().to_string(),
            param: name.into(),
            message: format!("must be between 0 and 1, got {r}"),
        }),
        r => Ok(r),
    }
}

fn field(p: &Params) -> Option<String> {
    p.str("field_key")
        .filter(|k| !k.is_empty())
        .map(String::from)
}

fn selector(p: &Params, kind: SelectorKind, value_udf: Option<Arc<ScalarUDF>>) -> Operator {
    Operator::Selector(SelectorOp {
        field: if value_udf.is_some() { field(p) } else { None },
        kind,
        value_udf,
    })
}

fn field_key_param() -> ParamSpec {
    ParamSpec::new(
        "field_key",
        ParamType::Str,
        json!(""),
        "dotted path of the field, e.g. meta.score",
    )
}

fn none(name: &'static str, t: ParamType, doc: &'static str) -> ParamSpec {
    ParamSpec::new(name, t, Value::Null, doc)
}

pub(crate) fn topk_spec() -> OpSpec {
    OpSpec {
        name: "topk_specified_field_selector",
        kind: OpKind::Selector,
        model_use: ModelUse::None,
        params: || {
            vec![
                field_key_param(),
                none("top_ratio", ParamType::Float, "ratio of rows to keep"),
                none("topk", ParamType::Int, "number of rows to keep"),
                ParamSpec::new("reverse", ParamType::Bool, json!(true), "descending order"),
            ]
        },
        build: |p| {
            let reverse = p.raw("reverse").as_bool().unwrap_or(true);
            let kind = SelectorKind::TopK {
                top_ratio: ratio(p, "top_ratio")?,
                topk: opt_positive(p, "topk")?,
                reverse,
            };
            let udf = field(p).map(|f| sort_value_udf(p, reverse, !f.contains('.')));
            Ok(selector(p, kind, udf))
        },
        doc: "Keep the top rows by a field's value (top_ratio or topk, whichever is fewer).",
    }
}

pub(crate) fn range_spec() -> OpSpec {
    OpSpec {
        name: "range_specified_field_selector",
        kind: OpKind::Selector,
        model_use: ModelUse::None,
        params: || {
            vec![
                field_key_param(),
                none(
                    "lower_percentile",
                    ParamType::Float,
                    "lower bound as a ratio",
                ),
                none(
                    "upper_percentile",
                    ParamType::Float,
                    "upper bound as a ratio",
                ),
                none("lower_rank", ParamType::Int, "lower bound as a rank"),
                none("upper_rank", ParamType::Int, "upper bound as a rank"),
            ]
        },
        build: |p| {
            let kind = SelectorKind::Range {
                lower_percentile: ratio(p, "lower_percentile")?,
                upper_percentile: ratio(p, "upper_percentile")?,
                lower_rank: opt_positive(p, "lower_rank")?,
                upper_rank: opt_positive(p, "upper_rank")?,
            };
            let udf = field(p).map(|_| sort_value_udf(p, true, false));
            Ok(selector(p, kind, udf))
        },
        doc: "Keep the rows whose rank by a field's value is within the given percentiles / ranks.",
    }
}

pub(crate) fn frequency_spec() -> OpSpec {
    OpSpec {
        name: "frequency_specified_field_selector",
        kind: OpKind::Selector,
        model_use: ModelUse::None,
        params: || {
            vec![
                field_key_param(),
                none(
                    "top_ratio",
                    ParamType::Float,
                    "ratio of value groups to keep",
                ),
                none("topk", ParamType::Int, "number of value groups to keep"),
                ParamSpec::new(
                    "reverse",
                    ParamType::Bool,
                    json!(true),
                    "most frequent first",
                ),
            ]
        },
        build: |p| {
            let kind = SelectorKind::Frequency {
                top_ratio: ratio(p, "top_ratio")?,
                topk: opt_positive(p, "topk")?,
                reverse: p.raw("reverse").as_bool().unwrap_or(true),
            };
            let udf = field(p).map(|_| group_key_udf(p));
            Ok(selector(p, kind, udf))
        },
        doc: "Keep the rows of the most (or least) frequent values of a field.",
    }
}

pub(crate) fn random_spec() -> OpSpec {
    OpSpec {
        name: "random_selector",
        kind: OpKind::Selector,
        model_use: ModelUse::None,
        params: || {
            vec![
                none("select_ratio", ParamType::Float, "ratio of rows to keep"),
                none("select_num", ParamType::Int, "number of rows to keep"),
            ]
        },
        build: |p| {
            let kind = SelectorKind::Random {
                select_ratio: ratio(p, "select_ratio")?,
                select_num: opt_positive(p, "select_num")?,
            };
            Ok(Operator::Selector(SelectorOp {
                field: None,
                kind,
                value_udf: None,
            }))
        },
        doc: "Keep a random sample of rows (Data-Juicer's seed 42, its shuffle order).",
    }
}

/// The selectors, in registry order.
pub(crate) fn specs() -> Vec<OpSpec> {
    vec![frequency_spec(), random_spec(), range_spec(), topk_spec()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nums(v: &[f64]) -> Vec<SelectValue> {
        v.iter().map(|x| SelectValue::Number(*x)).collect()
    }

    #[test]
    fn topk_orders_by_value_then_index() {
        let k = SelectorKind::TopK {
            top_ratio: None,
            topk: Some(3),
            reverse: true,
        };
        assert_eq!(
            k.select(&nums(&[1.0, 5.0, 3.0, 5.0, 0.0])),
            Some(vec![1, 3, 2])
        );
        let asc = SelectorKind::TopK {
            top_ratio: Some(0.5),
            topk: None,
            reverse: false,
        };
        // 0.5 * 5 = 2.5 -> 2 rows.
        assert_eq!(
            asc.select(&nums(&[1.0, 5.0, 3.0, 5.0, 0.0])),
            Some(vec![4, 0])
        );
        let unchanged = SelectorKind::TopK {
            top_ratio: None,
            topk: None,
            reverse: true,
        };
        assert_eq!(unchanged.select(&nums(&[1.0, 2.0])), None);
    }

    #[test]
    fn range_takes_smallest_upper_then_largest_of_those() {
        let r = SelectorKind::Range {
            lower_percentile: Some(0.2),
            upper_percentile: Some(0.8),
            lower_rank: None,
            upper_rank: None,
        };
        // n=5: lower 1, upper 4: the 4 smallest (idx 4,0,2,1), then the 3 largest of those.
        assert_eq!(
            r.select(&nums(&[1.0, 5.0, 3.0, 6.0, 0.0])),
            Some(vec![1, 2, 0])
        );
    }

    #[test]
    fn frequency_keeps_biggest_groups_in_first_appearance_order() {
        let f = SelectorKind::Frequency {
            top_ratio: None,
            topk: Some(2),
            reverse: true,
        };
        let v = [
            SelectValue::Group(1),
            SelectValue::Group(2),
            SelectValue::Group(2),
            SelectValue::None,
            SelectValue::Group(1),
            SelectValue::Group(3),
        ];
        // Groups 1 and 2 both have two rows: group 1 first (it appeared first).
        assert_eq!(f.select(&v), Some(vec![0, 4, 1, 2]));
    }

    #[test]
    fn stats_to_number_like_data_juicer() {
        assert_eq!(stats_to_number(&json!("2.5"), true), 2.5);
        assert_eq!(stats_to_number(&json!([1, 2, 6]), true), 3.0);
        assert_eq!(stats_to_number(&json!(null), true), -(i64::MAX as f64));
        assert_eq!(stats_to_number(&json!("x"), false), i64::MAX as f64);
    }
}
