//! Test helpers shared by the op families' unit tests: build ops from the registry, run their
//! UDFs over Arrow arrays, and the large texts and hashes the tests compare against.

use std::sync::Arc;

use arrow::array::{ArrayRef, AsArray, Float64Array, Int64Array, StringArray};
use arrow::datatypes::{DataType, Field};
use datafusion_common::config::ConfigOptions;
use datafusion_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDF};
use serde_json::Value;

use crate::operator::Operator;
use crate::params::ParamError;

/// `registry::lookup(name).instantiate(params)`; `params` is a JSON object.
pub fn build(name: &str, params: Value) -> Result<Operator, ParamError> {
    let spec = crate::registry::lookup(name).unwrap_or_else(|| panic!("{name} not registered"));
    let map = params.as_object().cloned().unwrap_or_default();
    spec.instantiate(&map).map(|(_, op)| op)
}

/// Invokes a one-argument UDF on `array` as DataFusion would.
pub fn invoke(udf: &ScalarUDF, array: ArrayRef) -> ArrayRef {
    let arg_type = array.data_type().clone();
    let ret = udf.return_type(std::slice::from_ref(&arg_type)).unwrap();
    let args = ScalarFunctionArgs {
        number_rows: array.len(),
        args: vec![ColumnarValue::Array(array)],
        arg_fields: vec![Arc::new(Field::new("text", arg_type, true))],
        return_field: Arc::new(Field::new(udf.name(), ret, true)),
        config_options: Arc::new(ConfigOptions::default()),
    };
    match udf.invoke_with_args(args).unwrap() {
        ColumnarValue::Array(a) => a,
        ColumnarValue::Scalar(s) => panic!("expected an array, got {s:?}"),
    }
}

fn udf_of(op: &Operator) -> &ScalarUDF {
    match op {
        Operator::Mapper { udf } => udf,
        Operator::Filter(f) => &f.stat_udf,
        Operator::Deduplicator(d) => &d.hash_udf,
        Operator::FieldFilter(_) | Operator::Selector(_) | Operator::MediaMapper(_) => {
            panic!("no text UDF")
        }
    }
}

/// Runs a mapper / hash op over a Utf8 array and returns the strings.
pub(crate) fn map_texts(op: &Operator, texts: &[Option<&str>]) -> Vec<Option<String>> {
    let input: ArrayRef = Arc::new(StringArray::from(texts.to_vec()));
    let out = invoke(udf_of(op), input);
    assert_eq!(out.data_type(), &DataType::Utf8);
    out.as_string::<i32>()
        .iter()
        .map(|v| v.map(String::from))
        .collect()
}

/// Runs a filter's stat UDF over a Utf8 array (Float64 stats), giving the stats as a run over
/// input without stats stores them: through Data-Juicer's JSON round trip.
pub(crate) fn float_stats(op: &Operator, texts: &[Option<&str>]) -> Vec<Option<f64>> {
    let input: ArrayRef = Arc::new(StringArray::from(texts.to_vec()));
    let out = invoke(udf_of(op), input);
    let out = invoke(&crate::filter::json_stats::json_stats_udf(), out);
    let a = out
        .as_any()
        .downcast_ref::<Float64Array>()
        .expect("Float64 stat");
    a.iter().collect()
}

/// Runs a filter's stat UDF over a Utf8 array (Int64 stats).
pub(crate) fn int_stats(op: &Operator, texts: &[Option<&str>]) -> Vec<Option<i64>> {
    let input: ArrayRef = Arc::new(StringArray::from(texts.to_vec()));
    let out = invoke(udf_of(op), input);
    let a = out
        .as_any()
        .downcast_ref::<Int64Array>()
        .expect("Int64 stat");
    a.iter().collect()
}

/// ("lorem ipsum dolor sit amet, " * 4000)[:100000], a 100k-char CJK string
/// (chr(0x4e00 + (i * 7919) % 20000) for i in range(100000)) and "x" * 100000.
pub(crate) fn big_texts() -> [String; 3] {
    let lorem: String = "lorem ipsum dolor sit amet, "
        .repeat(4000)
        .chars()
        .take(100000)
        .collect();
    let cjk: String = (0..100000u32)
        .map(|i| char::from_u32(0x4e00 + (i * 7919) % 20000).unwrap())
        .collect();
    [lorem, cjk, "x".repeat(100000)]
}

/// `count` texts of `per_text` pieces each, drawn from `pieces` by a 64-bit LCG seeded with
/// `seed`: the same texts on every run, for differential tests of fast paths.
pub(crate) fn random_texts(
    pieces: &[&str],
    seed: u64,
    count: usize,
    per_text: usize,
) -> Vec<String> {
    let mut state = seed;
    (0..count)
        .map(|_| {
            (0..per_text)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    pieces[(state >> 33) as usize % pieces.len()]
                })
                .collect()
        })
        .collect()
}

pub fn udf(op: &Operator) -> &ScalarUDF {
    udf_of(op)
}

/// Lower-case hex MD5 of `s`, as the goldens record mapper outputs.
pub(crate) fn md5_hex(s: &str) -> String {
    crate::dedup::document::md5_hex(s)
}
