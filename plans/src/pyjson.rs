//! Arrow rows -> JSON lines exactly as Data-Juicer writes them: Python `json.dumps` with
//! `ensure_ascii=False` (`", "` / `": "` separators, raw UTF-8, Python float repr).
//!
//! Data-Juicer's loader (Hugging Face `datasets`) keeps some fields as generic JSON ([`JsonTypes`]):
//! objects whose keys vary between rows, and the stats column it creates. Inside those, absent
//! keys stay absent (a null nested field is omitted) and every float has passed ujson's round
//! trip (10 significant decimals). Everywhere else values are exact and nested nulls are `null`.

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

/// One step of a path into a JSON value: an object's key, or any item of a list.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Step {
    Key(String),
    Item,
}

/// Which fields of the rows Data-Juicer holds as generic JSON (Hugging Face's `Json` type): a
/// tree of paths from the top-level columns; everything under a marked path is generic.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct JsonTypes {
    generic: bool,
    children: Vec<(Step, JsonTypes)>,
    /// The loader re-encoded the rows with ujson (it does once it found a generic field), so
    /// every other float was rounded to 10 decimals too (and read back precisely).
    #[serde(default)]
    reencoded: bool,
    /// [`JsonTypes::all`]: the canonical form content hashes are taken over, kept byte for byte
    /// as it always was (a nested field null in every row of a batch is written as `null`).
    #[serde(default)]
    canonical: bool,
}

/// How [`write_rows`] writes a batch, from its [`JsonTypes`].
#[derive(Debug, Clone, Copy)]
struct Mode {
    reencoded: bool,
    canonical: bool,
}

/// Exact values below this point (no generic path further down).
static EXACT: JsonTypes = JsonTypes {
    generic: false,
    children: Vec::new(),
    reencoded: false,
    canonical: false,
};
/// Generic JSON from this point down.
static GENERIC: JsonTypes = JsonTypes {
    generic: true,
    children: Vec::new(),
    reencoded: false,
    canonical: false,
};

impl JsonTypes {
    /// No generic field: every value exact (how dj-fusion writes its own JSON checkpoints).
    pub fn none() -> JsonTypes {
        JsonTypes::default()
    }

    /// Everything generic: every float rounded, nested nulls omitted (the canonical form of
    /// rows that content hashes are taken over).
    pub fn all() -> JsonTypes {
        JsonTypes {
            generic: true,
            children: Vec::new(),
            reencoded: false,
            canonical: true,
        }
    }

    /// Records that the loader re-encoded every row (see the field's doc).
    pub fn set_reencoded(&mut self) {
        self.reencoded = true;
    }

    /// Marks the field at `path` (its first step a top-level column) as generic JSON.
    pub fn mark(&mut self, path: &[Step]) {
        let Some((first, rest)) = path.split_first() else {
            self.generic = true;
            return;
        };
        if self.generic {
            return;
        }
        match self.children.iter_mut().find(|(s, _)| s == first) {
            Some((_, child)) => child.mark(rest),
            None => {
                let mut child = JsonTypes::default();
                child.mark(rest);
                self.children.push((first.clone(), child));
            }
        }
    }

    /// Whether top-level column `name` is generic JSON as a whole.
    pub fn is_generic_column(&self, name: &str) -> bool {
        self.key(name).generic
    }

    fn step(&self, step: &Step) -> &JsonTypes {
        if self.generic {
            return &GENERIC;
        }
        self.children
            .iter()
            .find(|(s, _)| s == step)
            .map_or(&EXACT, |(_, c)| c)
    }

    fn key(&self, name: &str) -> &JsonTypes {
        if self.generic {
            return &GENERIC;
        }
        self.children
            .iter()
            .find(|(s, _)| matches!(s, Step::Key(k) if k == name))
            .map_or(&EXACT, |(_, c)| c)
    }
}

/// Appends one JSON line (with `\n`) per row of `batch` to `out`; `types` says which fields
/// are generic JSON.
pub fn write_rows(batch: &RecordBatch, out: &mut String, types: &JsonTypes) {
    let mode = Mode {
        reencoded: types.reencoded,
        canonical: types.canonical,
    };
    let schema = batch.schema();
    let scopes: Vec<&JsonTypes> = schema
        .fields()
        .iter()
        .map(|f| types.key(f.name()))
        .collect();
    for row in 0..batch.num_rows() {
        out.push('{');
        for (i, (field, col)) in schema.fields().iter().zip(batch.columns()).enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            write_str(field.name(), out);
            out.push_str(": ");
            write_value(col.as_ref(), row, out, scopes[i], mode);
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
    let bytes = s.as_bytes();
    let mut start = 0;
    while let Some(i) = next_escape(bytes, start) {
        out.push_str(&s[start..i]);
        match bytes[i] {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x08 => out.push_str("\\b"),
            0x0c => out.push_str("\\f"),
            b => {
                let _ = write!(out, "\\u{b:04x}");
            }
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// The position of the first byte at or after `from` that [`NEEDS_ESCAPE`]. Long texts are
/// mostly plain: sixteen bytes are tested at once (SSE2, which every x86-64 CPU has).
#[inline]
fn next_escape(bytes: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of x86-64; each load reads 16 bytes inside `bytes`.
        unsafe {
            let (control_max, quote, backslash) = (
                _mm_set1_epi8(0x1f),
                _mm_set1_epi8(b'"' as i8),
                _mm_set1_epi8(b'\\' as i8),
            );
            while i + 16 <= bytes.len() {
                let v = _mm_loadu_si128(bytes.as_ptr().add(i).cast());
                // Unsigned `v <= 0x1f` as `max(v, 0x1f) == 0x1f`.
                let control = _mm_cmpeq_epi8(_mm_max_epu8(v, control_max), control_max);
                let special = _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash));
                let hits = _mm_movemask_epi8(_mm_or_si128(control, special));
                if hits != 0 {
                    return Some(i + hits.trailing_zeros() as usize);
                }
                i += 16;
            }
        }
    }
    bytes[i..]
        .iter()
        .position(|&b| NEEDS_ESCAPE[usize::from(b)])
        .map(|at| i + at)
}

fn write_value(col: &dyn Array, row: usize, out: &mut String, scope: &JsonTypes, mode: Mode) {
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
        DataType::Float32 => write_float(
            f64::from(col.as_primitive::<dt::Float32Type>().value(row)),
            scope.generic,
            mode.reencoded,
            out,
        ),
        DataType::Float64 => write_float(
            col.as_primitive::<dt::Float64Type>().value(row),
            scope.generic,
            mode.reencoded,
            out,
        ),
        DataType::Utf8 => write_str(col.as_string::<i32>().value(row), out),
        DataType::LargeUtf8 => write_str(col.as_string::<i64>().value(row), out),
        DataType::Utf8View => write_str(col.as_string_view().value(row), out),
        DataType::Struct(fields) => {
            let s = col.as_struct();
            out.push('{');
            let mut first = true;
            for (f, c) in fields.iter().zip(s.columns()) {
                // Generic JSON keeps each row's own keys: a null there is an absent key. (A field
                // null in every row is a `NullArray`, whose `is_null` is false.)
                if scope.generic
                    && (c.is_null(row) || (!mode.canonical && c.data_type() == &DataType::Null))
                {
                    continue;
                }
                if !first {
                    out.push_str(", ");
                }
                first = false;
                write_str(f.name(), out);
                out.push_str(": ");
                write_value(c.as_ref(), row, out, scope.key(f.name()), mode);
            }
            out.push('}');
        }
        DataType::List(_) => write_list(&col.as_list::<i32>().value(row), out, scope, mode),
        DataType::LargeList(_) => write_list(&col.as_list::<i64>().value(row), out, scope, mode),
        DataType::FixedSizeList(_, _) => {
            write_list(&col.as_fixed_size_list().value(row), out, scope, mode)
        }
        DataType::Dictionary(_, _) => {
            let d = col.as_any_dictionary();
            let key = d.normalized_keys()[row];
            write_value(d.values().as_ref(), key, out, scope, mode);
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

/// A float as Python prints it: after ujson's round trip inside generic JSON, after its
/// 10-decimal re-encoding elsewhere when the loader re-encoded the rows, else exact.
fn write_float(v: f64, generic: bool, reencoded: bool, out: &mut String) {
    let v = if generic {
        pyfloat::ujson_roundtrip(v)
    } else if reencoded {
        pyfloat::ujson_reencode(v)
    } else {
        v
    };
    out.push_str(&pyfloat::repr(v));
}

fn write_list(values: &dyn Array, out: &mut String, scope: &JsonTypes, mode: Mode) {
    let item = scope.step(&Step::Item);
    out.push('[');
    for i in 0..values.len() {
        if i > 0 {
            out.push_str(", ");
        }
        write_value(values, i, out, item, mode);
    }
    out.push(']');
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{ArrayRef, Float64Array, Int64Array, StringArray, StructArray};
    use datafusion::arrow::datatypes::Field;
    use std::sync::Arc;

    /// The vector scan finds the same escapes as the byte table, wherever they fall in a
    /// 16-byte block, in texts with multi-byte characters around them.
    #[test]
    fn escapes_are_found_at_every_offset() {
        for special in [b'"', b'\\', b'\n', 0x00, 0x1f, 0x7f, b' '] {
            for len in [0, 1, 15, 16, 17, 31, 33, 64] {
                for at in 0..len {
                    let mut text = "é".repeat(len).into_bytes();
                    text.truncate(len);
                    let mut bytes: Vec<u8> = text.iter().map(|&b| b | 0x80).collect();
                    bytes[at] = special;
                    let want = bytes[..].iter().position(|&b| NEEDS_ESCAPE[usize::from(b)]);
                    for from in [0, at.min(3), at] {
                        let want = want.filter(|&w| w >= from);
                        assert_eq!(next_escape(&bytes, from), want, "{special} {len} {at}");
                    }
                }
            }
        }
        let mut out = String::new();
        write_str("a\"b\\c\n\u{1}é\u{7f}", &mut out);
        assert_eq!(out, "\"a\\\"b\\\\c\\n\\u0001é\u{7f}\"");
    }

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
        let mut types = JsonTypes::none();
        types.mark(&[Step::Key("meta".into())]);
        write_rows(&batch, &mut out, &types);
        assert_eq!(
            out,
            "{\"text\": \"a\\\"b\\\\c\\nd\\u001cé/🙂\", \"meta\": {\"id\": 1, \"url\": \"x\"}, \"r\": 0.30000000000000004}\n\
             {\"text\": null, \"meta\": {\"id\": 2}, \"r\": 1.0}\n"
        );
    }

    /// Floats are exact outside generic JSON (`0.7` stays `0.7`), rounded by ujson's round trip
    /// inside it (`0.7000000000000001`); a null nested field is `null` in an exact object and
    /// absent in a generic one; a list's items can be generic on their own.
    #[test]
    fn generic_json_rounds_floats_and_drops_absent_keys() {
        let x: ArrayRef = Arc::new(Float64Array::from(vec![Some(0.7)]));
        let n: ArrayRef = Arc::new(Int64Array::from(vec![None::<i64>]));
        let obj = || -> ArrayRef {
            Arc::new(StructArray::from(vec![
                (
                    Arc::new(Field::new("x", DataType::Float64, true)),
                    x.clone(),
                ),
                (Arc::new(Field::new("n", DataType::Int64, true)), n.clone()),
            ]))
        };
        let batch = RecordBatch::try_from_iter(vec![
            ("score", x.clone()),
            ("plain", obj()),
            ("meta", obj()),
        ])
        .unwrap();
        let mut types = JsonTypes::none();
        types.mark(&[Step::Key("meta".into())]);
        let mut out = String::new();
        write_rows(&batch, &mut out, &types);
        assert_eq!(
            out,
            "{\"score\": 0.7, \"plain\": {\"x\": 0.7, \"n\": null}, \"meta\": {\"x\": 0.7000000000000001}}\n"
        );
        // Once the loader re-encoded the rows, the other floats have 10 decimals too.
        types.set_reencoded();
        let third: ArrayRef = Arc::new(Float64Array::from(vec![Some(1.0 / 3.0)]));
        let b = RecordBatch::try_from_iter(vec![("s", third)]).unwrap();
        out.clear();
        write_rows(&b, &mut out, &types);
        assert_eq!(out, "{\"s\": 0.3333333333}\n");
        out.clear();
        write_rows(&batch, &mut out, &JsonTypes::all());
        assert!(
            out.starts_with(
                "{\"score\": 0.7000000000000001, \"plain\": {\"x\": 0.7000000000000001}"
            )
        );
        // A nested field null in every row (a `NullArray`): absent in generic JSON, but the
        // canonical form content hashes are taken over keeps writing it as it always did.
        let nulls: ArrayRef = Arc::new(datafusion::arrow::array::NullArray::new(1));
        let with_null: ArrayRef = Arc::new(StructArray::from(vec![
            (
                Arc::new(Field::new("x", DataType::Float64, true)),
                x.clone(),
            ),
            (Arc::new(Field::new("u", DataType::Null, true)), nulls),
        ]));
        let b = RecordBatch::try_from_iter(vec![("meta", with_null)]).unwrap();
        let mut generic = JsonTypes::none();
        generic.mark(&[Step::Key("meta".into())]);
        out.clear();
        write_rows(&b, &mut out, &generic);
        assert_eq!(out, "{\"meta\": {\"x\": 0.7000000000000001}}\n");
        out.clear();
        write_rows(&b, &mut out, &JsonTypes::all());
        assert_eq!(
            out,
            "{\"meta\": {\"x\": 0.7000000000000001, \"u\": null}}\n"
        );
        let mut nested = JsonTypes::none();
        nested.mark(&[Step::Key("a".into()), Step::Item]);
        assert!(!nested.is_generic_column("a"));
        assert!(nested.key("a").step(&Step::Item).generic);
    }
}
