//! Data-Juicer keeps `__dj__stats__` in a JSON column when it creates that column itself (the
//! input has none): every stat a filter computes passes a ujson round trip (10 significant
//! decimals) before filters test it or exports write it. When the input rows already carry a
//! `__dj__stats__` object, the column keeps its Arrow type and new stats stay exact. The stat
//! UDFs compute exact values; the compiler wraps a new stat in [`json_stats_udf`] when the run's
//! input has no stats of its own.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, ListArray, StructArray};
use arrow::datatypes::DataType;
use datafusion_expr::ScalarUDF;

use crate::udf::{OpUdf, UdfIdentity};

/// The pseudo-op name of [`json_stats_udf`] in a UDF identity (no recipe op has it).
pub const JSON_STATS_OP: &str = "__dj_json_stats";

/// `value -> value` with every Float64 inside (lists and structs included) passed through
/// Data-Juicer's ujson round trip.
pub fn json_stats_udf() -> Arc<ScalarUDF> {
    let id = UdfIdentity {
        op: JSON_STATS_OP.to_string(),
        name: "dj_json_stats".to_string(),
        config: "{}".to_string(),
    };
    OpUdf::from_fn(
        id,
        None,
        Arc::new(|args: &[ArrayRef]| Ok(ujson_normalize(&args[0]))),
    )
}

/// Whether `data_type` holds a Float64 anywhere, i.e. whether the round trip can change it.
pub fn has_float(data_type: &DataType) -> bool {
    match data_type {
        DataType::Float64 => true,
        DataType::List(f) | DataType::LargeList(f) => has_float(f.data_type()),
        DataType::Struct(fields) => fields.iter().any(|f| has_float(f.data_type())),
        _ => false,
    }
}

/// Rebuilds `array` with every Float64 value passed through Data-Juicer's ujson round trip.
pub(crate) fn ujson_normalize(array: &ArrayRef) -> ArrayRef {
    match array.data_type() {
        DataType::Float64 => {
            let a = array.as_primitive::<arrow::datatypes::Float64Type>();
            Arc::new(
                a.unary::<_, arrow::datatypes::Float64Type>(crate::py::pyfloat::ujson_roundtrip),
            ) as ArrayRef
        }
        DataType::List(field) => {
            let l = array.as_list::<i32>();
            let values = ujson_normalize(l.values());
            Arc::new(ListArray::new(
                field.clone(),
                l.offsets().clone(),
                values,
                l.nulls().cloned(),
            ))
        }
        DataType::Struct(fields) => {
            let s = array.as_struct();
            let cols = s.columns().iter().map(ujson_normalize).collect();
            Arc::new(StructArray::new(fields.clone(), cols, s.nulls().cloned()))
        }
        _ => array.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::Float64Array;

    #[test]
    fn floats_are_rounded_as_data_juicer_stores_them() {
        let a: ArrayRef = Arc::new(Float64Array::from(vec![Some(1.0 / 3.0), None, Some(0.5)]));
        let out = crate::test_support::invoke(&json_stats_udf(), a);
        let out: Vec<_> = out
            .as_primitive::<arrow::datatypes::Float64Type>()
            .iter()
            .collect();
        assert_eq!(out, [Some(0.33333333330000003), None, Some(0.5)]);
        assert!(has_float(&DataType::new_list(DataType::Float64, true)));
        assert!(!has_float(&DataType::Int64));
    }
}
