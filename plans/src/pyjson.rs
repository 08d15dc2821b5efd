//! Arrow rows -> JSON lines exactly as Data-Juicer writes them: Python `json.dumps` with
//! `ensure_ascii=False` (`", "` / `": "` separators, raw UTF-8, Python float repr).
//!
//! Top-level nulls are written as `null`; null fields inside nested objects are omitted, since
//! Data-Juicer keeps objects with varying keys as generic JSON where absent keys stay absent.

use std::fmt::Write as _;

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::{self as dt, DataType};
use dj_udfs::py::pyfloat;

#[derive(Debug, thiserror::Error)]
#[error("column `{column}`: cannot write type {data_type} as JSON")]
pub struct UnsupportedType {
    pub column: String,
    pub data_type: DataType,
}

/// Checks up front that every column of `schema` can be written.
pub fn check_schema(schema: &dt::Schema) -> Result<(), UnsupportedType> {
    fn ok(t: &DataType) -> bool {
        match t {
            DataType::Struct(fs) => fs.iter().all(|f| ok(f.data_type())),
            DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
                ok(f.data_type())
            }
            DataType::Dictionary(_, v) => ok(v),
            t => {
                t.is_primitive() && !matches!(t, DataType::Float16)
                    || matches!(
                        t,
                        DataType::Null
                            | DataType::Boolean
                            | DataType::Utf8
                            | DataType::LargeUtf8
                            | DataType::Utf8View
                    )
            }
        }
    }
    for f in schema.fields() {
        if !ok(f.data_type()) {
            return Err(UnsupportedType {
                column: f.name().clone(),
                data_type: f.data_type().clone(),
            });
        }
    }
    Ok(())
}

/// Appends one JSON line (with `\n`) per row of `batch` to `out`.
pub fn write_rows(batch: &RecordBatch, out: &mut String) {
    let schema = batch.schema();
    for row in 0..batch.num_rows() {
        out.push('{');
        for (i, (field, col)) in schema.fields().iter().zip(batch.columns()).enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            write_str(field.name(), out);
            out.push_str(": ");
            write_value(col.as_ref(), row, out);
        }
        out.push_str("}\n");
    }
}

/// Bytes `json.dumps` escapes: `"`, `\\` and the C0 controls (all ASCII, so never inside a
/// multi-byte UTF-8 sequence: the text can be scanned byte by byte).
const NEEDS_ESCAPE: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = true;
        i += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

fn write_str(s: &str, out: &mut String) {
    out.reserve(s.len() + 2);
    out.push('"');
    let mut start = 0;
    for (i, &b) in s.as_bytes().iter().enumerate() {
        if !NEEDS_ESCAPE[b as usize] {
            continue;
        }
        out.push_str(&s[start..i]);
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x08 => out.push_str("\\b"),
            0x0c => out.push_str("\\f"),
            _ => {
                let _ = write!(out, "\\u{b:04x}");
            }
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

fn write_value(col: &dyn Array, row: usize, out: &mut String) {
    if col.is_null(row) {
        out.push_str("null");
        return;
    }
    macro_rules! int {
        ($t:ty) => {{
            let _ = write!(out, "{}", col.as_primitive::<$t>().value(row));
        }};
    }
    match col.data_type() {
        DataType::Null => out.push_str("null"),
        DataType::Boolean => out.push_str(if col.as_boolean().value(row) {
            "true"
        } else {
            "false"
        }),
        DataType::Int8 => int!(dt::Int8Type),
        DataType::Int16 => int!(dt::Int16Type),
        DataType::Int32 => int!(dt::Int32Type),
        DataType::Int64 => int!(dt::Int64Type),
        DataType::UInt8 => int!(dt::UInt8Type),
        DataType::UInt16 => int!(dt::UInt16Type),
        DataType::UInt32 => int!(dt::UInt32Type),
        DataType::UInt64 => int!(dt::UInt64Type),
        // Data-Juicer's export prints every float after its JSON round trip (10 decimals),
        // input columns and nested values included, not only stats.
        DataType::Float32 => out.push_str(&pyfloat::repr(pyfloat::ujson_roundtrip(f64::from(
            col.as_primitive::<dt::Float32Type>().value(row),
        )))),
        DataType::Float64 => out.push_str(&pyfloat::repr(pyfloat::ujson_roundtrip(
            col.as_primitive::<dt::Float64Type>().value(row),
        ))),
        DataType::Utf8 => write_str(col.as_string::<i32>().value(row), out),
        DataType::LargeUtf8 => write_str(col.as_string::<i64>().value(row), out),
        DataType::Utf8View => write_str(col.as_string_view().value(row), out),
        DataType::Struct(fields) => {
            let s = col.as_struct();
            out.push('{');
            let mut first = true;
            for (f, c) in fields.iter().zip(s.columns()) {
                if c.is_null(row) {
                    continue;
                }
                if !first {
                    out.push_str(", ");
                }
                first = false;
                write_str(f.name(), out);
                out.push_str(": ");
                write_value(c.as_ref(), row, out);
            }
            out.push('}');
        }
        DataType::List(_) => write_list(&col.as_list::<i32>().value(row), out),
        DataType::LargeList(_) => write_list(&col.as_list::<i64>().value(row), out),
        DataType::FixedSizeList(_, _) => write_list(&col.as_fixed_size_list().value(row), out),
        DataType::Dictionary(_, _) => {
            let d = col.as_any_dictionary();
            let key = d.normalized_keys()[row];
            write_value(d.values().as_ref(), key, out);
        }
        other => {
            // Other primitives (dates, decimals): their display form, as a string.
            let _ = other;
            let s = datafusion::arrow::util::display::array_value_to_string(col, row)
                .unwrap_or_default();
            write_str(&s, out);
        }
    }
}

fn write_list(values: &dyn Array, out: &mut String) {
    out.push('[');
    for i in 0..values.len() {
        if i > 0 {
            out.push_str(", ");
        }
        write_value(values, i, out);
    }
    out.push(']');
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{ArrayRef, Float64Array, Int64Array, StringArray, StructArray};
    use datafusion::arrow::datatypes::Field;
    use std::sync::Arc;

    #[test]
    fn writes_like_python_json_dumps() {
        let text: ArrayRef = Arc::new(StringArray::from(vec![Some("a\"b\\c\nd\u{1c}é/🙂"), None]));
        let id: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), Some(2)]));
        let ratio: ArrayRef = Arc::new(Float64Array::from(vec![
            Some(0.30000000000000004),
            Some(1.0),
        ]));
        let url: ArrayRef = Arc::new(StringArray::from(vec![Some("x"), None]));
        let meta: ArrayRef = Arc::new(StructArray::from(vec![
            (
                Arc::new(Field::new("id", DataType::Int64, true)),
                id.clone(),
            ),
            (Arc::new(Field::new("url", DataType::Utf8, true)), url),
        ]));
        let batch =
            RecordBatch::try_from_iter(vec![("text", text), ("meta", meta), ("r", ratio)]).unwrap();
        let mut out = String::new();
        write_rows(&batch, &mut out);
        assert_eq!(
            out,
            "{\"text\": \"a\\\"b\\\\c\\nd\\u001cé/🙂\", \"meta\": {\"id\": 1, \"url\": \"x\"}, \"r\": 0.30000000000000004}\n\
             {\"text\": null, \"meta\": {\"id\": 2}, \"r\": 1.0}\n"
        );
    }
}
