//! Arrow cells as Python values: what the field filters and selectors compare, with Python's
//! equality (`1 == 1.0 == True`) and Data-Juicer's number conversions.

use arrow::array::{Array, AsArray};
use arrow::datatypes::{DataType, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type};
use arrow::datatypes::{Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type};
use serde_json::{Map, Number, Value};

/// The value at `row` of `array` as JSON (null for nulls; structs become objects, lists arrays).
/// Types the JSON loader never produces (binary, temporal) become their display string.
pub(crate) fn cell_value(array: &dyn Array, row: usize) -> Value {
    if array.is_null(row) {
        return Value::Null;
    }
    macro_rules! int {
        ($t:ty) => {
            Value::from(array.as_primitive::<$t>().value(row))
        };
    }
    match array.data_type() {
        DataType::Null => Value::Null,
        DataType::Boolean => Value::Bool(array.as_boolean().value(row)),
        DataType::Int8 => int!(Int8Type),
        DataType::Int16 => int!(Int16Type),
        DataType::Int32 => int!(Int32Type),
        DataType::Int64 => int!(Int64Type),
        DataType::UInt8 => int!(UInt8Type),
        DataType::UInt16 => int!(UInt16Type),
        DataType::UInt32 => int!(UInt32Type),
        DataType::UInt64 => int!(UInt64Type),
        DataType::Float32 => float(array.as_primitive::<Float32Type>().value(row) as f64),
        DataType::Float64 => float(array.as_primitive::<Float64Type>().value(row)),
        DataType::Utf8 => Value::from(array.as_string::<i32>().value(row)),
        DataType::LargeUtf8 => Value::from(array.as_string::<i64>().value(row)),
        DataType::Utf8View => Value::from(array.as_string_view().value(row)),
        DataType::List(_) => list(array.as_list::<i32>().value(row).as_ref()),
        DataType::LargeList(_) => list(array.as_list::<i64>().value(row).as_ref()),
        DataType::Struct(_) => {
            let s = array.as_struct();
            let mut m = Map::new();
            for (name, col) in s.column_names().iter().zip(s.columns()) {
                m.insert(name.to_string(), cell_value(col.as_ref(), row));
            }
            Value::Object(m)
        }
        _ => {
            Value::from(arrow::util::display::array_value_to_string(array, row).unwrap_or_default())
        }
    }
}

fn float(f: f64) -> Value {
    Number::from_f64(f).map_or(Value::Null, Value::Number)
}

fn list(values: &dyn Array) -> Value {
    Value::Array((0..values.len()).map(|i| cell_value(values, i)).collect())
}

/// The number Python's `float(v)` gives for a bool or number (bools are ints in Python).
fn as_number(v: &Value) -> Option<f64> {
    match v {
        Value::Bool(b) => Some(*b as u8 as f64),
        Value::Number(n) => n.as_f64(),
        _ => None,
    }
}

/// Python `a == b` for JSON-shaped values: numbers and bools compare by value, strings exactly,
/// lists element-wise, dicts by key set and values.
pub(crate) fn py_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| py_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| py_eq(v, w)))
        }
        _ => match (as_number(a), as_number(b)) {
            // Exact integer comparison where both are integers (f64 loses precision past 2^53).
            (Some(x), Some(y)) => match (int_of(a), int_of(b)) {
                (Some(i), Some(j)) => i == j,
                _ => x == y,
            },
            _ => false,
        },
    }
}

fn int_of(v: &Value) -> Option<i128> {
    match v {
        Value::Bool(b) => Some(*b as i128),
        Value::Number(n) => n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from)),
        _ => None,
    }
}

/// Python truthiness (`if v:`).
pub(crate) fn py_truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// Why Python's `float(v)` fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FloatError {
    /// `ValueError`: a string that is not a number.
    Value,
    /// `TypeError`: a list, dict or None.
    Type,
}

/// Python's `float(v)`: numbers, bools and numeric strings (surrounding whitespace, `_` between
/// digits, `inf`/`nan` in any case) convert; other strings are a `ValueError`, containers a
/// `TypeError`.
pub(crate) fn py_float(v: &Value) -> Result<f64, FloatError> {
    match v {
        Value::String(s) => parse_py_float(s).ok_or(FloatError::Value),
        other => as_number(other).ok_or(FloatError::Type),
    }
}

fn parse_py_float(s: &str) -> Option<f64> {
    let t = s.trim_matches(|c: char| c.is_whitespace());
    let body = t.strip_prefix(['+', '-']).unwrap_or(t);
    let lower = body.to_ascii_lowercase();
    if matches!(lower.as_str(), "inf" | "infinity" | "nan") {
        let f = if lower == "nan" {
            f64::NAN
        } else {
            f64::INFINITY
        };
        return Some(if t.starts_with('-') { -f } else { f });
    }
    // Underscores are allowed only between digits.
    let bytes = t.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'_' {
            let digit = |j: Option<&u8>| j.is_some_and(|c| c.is_ascii_digit());
            if i == 0 || !digit(bytes.get(i - 1)) || !digit(bytes.get(i + 1)) {
                return None;
            }
        }
    }
    let cleaned: String = t.chars().filter(|&c| c != '_').collect();
    // Rust's parser accepts "inf"/"nan" spellings handled above and nothing Python rejects,
    // except a bare "." or exponent-only forms, which both reject.
    if !cleaned
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    cleaned.parse::<f64>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{ArrayRef, Int64Array, ListArray, StringArray, StructArray};
    use arrow::datatypes::{Field, Int64Type as I64};
    use serde_json::json;
    use std::sync::Arc;

    #[test]
    fn python_equality() {
        assert!(py_eq(&json!(1), &json!(1.0)));
        assert!(py_eq(&json!(true), &json!(1)));
        assert!(!py_eq(&json!("1"), &json!(1)));
        assert!(py_eq(&json!([1, "a"]), &json!([1.0, "a"])));
        assert!(!py_eq(&json!(null), &json!(0)));
        assert!(py_eq(&json!({"a": 1}), &json!({"a": true})));
    }

    #[test]
    fn python_float_conversion() {
        assert_eq!(py_float(&json!(" 3.5 ")), Ok(3.5));
        assert_eq!(py_float(&json!("1_000")), Ok(1000.0));
        assert_eq!(py_float(&json!("1e3")), Ok(1000.0));
        assert_eq!(py_float(&json!("-Inf")), Ok(f64::NEG_INFINITY));
        assert_eq!(py_float(&json!(true)), Ok(1.0));
        assert_eq!(py_float(&json!("1__0")), Err(FloatError::Value));
        assert_eq!(py_float(&json!("abc")), Err(FloatError::Value));
        assert_eq!(py_float(&json!([1])), Err(FloatError::Type));
        assert!(!py_truthy(&json!(0.0)) && !py_truthy(&json!("")) && py_truthy(&json!("0")));
    }

    #[test]
    fn cells_of_nested_columns() {
        let ids: ArrayRef = Arc::new(Int64Array::from(vec![Some(7), None]));
        let src: ArrayRef = Arc::new(StringArray::from(vec!["web", "book"]));
        let meta = StructArray::from(vec![
            (Arc::new(Field::new("id", DataType::Int64, true)), ids),
            (Arc::new(Field::new("src", DataType::Utf8, true)), src),
        ]);
        assert_eq!(cell_value(&meta, 0), json!({"id": 7, "src": "web"}));
        assert_eq!(cell_value(&meta, 1), json!({"id": null, "src": "book"}));
        let l =
            ListArray::from_iter_primitive::<I64, _, _>(vec![Some(vec![Some(1), Some(2)]), None]);
        assert_eq!(cell_value(&l, 0), json!([1, 2]));
        assert_eq!(cell_value(&l, 1), json!(null));
    }
}
