//! The `events` table: one schema over every event of the job, keys in first-appearance order
//! (events have different keys; `metadata` is a struct), mixed types as JSON text.

use std::sync::Arc;

use anyhow::Result;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::{DataType, Field, Fields, Schema};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Null,
    Bool,
    Int,
    Float,
    Str,
    Obj(Vec<(String, Kind)>),
    /// Arrays and mixed types: JSON text.
    Json,
}

fn kind_of(v: &Value) -> Kind {
    match v {
        Value::Null => Kind::Null,
        Value::Bool(_) => Kind::Bool,
        Value::Number(n) if n.is_i64() => Kind::Int,
        Value::Number(_) => Kind::Float,
        Value::String(_) => Kind::Str,
        Value::Array(_) => Kind::Json,
        Value::Object(m) => Kind::Obj(m.iter().map(|(k, v)| (k.clone(), kind_of(v))).collect()),
    }
}

fn merge(a: Kind, b: Kind) -> Kind {
    match (a, b) {
        (Kind::Null, x) | (x, Kind::Null) => x,
        (Kind::Int, Kind::Float) | (Kind::Float, Kind::Int) => Kind::Float,
        (Kind::Obj(mut a), Kind::Obj(b)) => {
            merge_fields(&mut a, b);
            Kind::Obj(a)
        }
        (a, b) if a == b => a,
        _ => Kind::Json,
    }
}

fn merge_fields(into: &mut Vec<(String, Kind)>, from: Vec<(String, Kind)>) {
    for (k, kind) in from {
        match into.iter_mut().find(|(name, _)| *name == k) {
            Some((_, existing)) => *existing = merge(std::mem::replace(existing, Kind::Null), kind),
            None => into.push((k, kind)),
        }
    }
}

fn data_type(kind: &Kind) -> DataType {
    match kind {
        Kind::Bool => DataType::Boolean,
        Kind::Int => DataType::Int64,
        Kind::Float => DataType::Float64,
        Kind::Null | Kind::Str | Kind::Json => DataType::Utf8,
        Kind::Obj(fields) if fields.is_empty() => DataType::Utf8,
        Kind::Obj(fields) => DataType::Struct(to_fields(fields)),
    }
}

fn to_fields(fields: &[(String, Kind)]) -> Fields {
    fields
        .iter()
        .map(|(k, kind)| Field::new(k, data_type(kind), true))
        .collect()
}

/// `v` shaped for its column: JSON text where the column is text but the value is not.
fn normalize(v: &Value, kind: &Kind) -> Value {
    match (kind, v) {
        (_, Value::Null) => Value::Null,
        (Kind::Obj(fields), Value::Object(m)) if !fields.is_empty() => Value::Object(
            fields
                .iter()
                .filter_map(|(k, kind)| m.get(k).map(|v| (k.clone(), normalize(v, kind))))
                .collect(),
        ),
        (Kind::Null | Kind::Str | Kind::Json | Kind::Obj(_), Value::String(_)) => v.clone(),
        (Kind::Null | Kind::Str | Kind::Json | Kind::Obj(_), other) => {
            Value::String(other.to_string())
        }
        _ => v.clone(),
    }
}

/// The events as one batch.
pub(super) fn events_batch(events: &[Value]) -> Result<RecordBatch> {
    let mut fields: Vec<(String, Kind)> = vec![];
    for e in events {
        if let Kind::Obj(f) = kind_of(e) {
            merge_fields(&mut fields, f);
        }
    }
    if fields.is_empty() {
        fields = [
            ("event_type", Kind::Str),
            ("timestamp", Kind::Float),
            ("message", Kind::Str),
            ("event_id", Kind::Str),
            ("job_id", Kind::Str),
        ]
        .into_iter()
        .map(|(k, kind)| (k.to_string(), kind))
        .collect();
    }
    let schema = Arc::new(Schema::new(to_fields(&fields)));
    let kind = Kind::Obj(fields);
    let rows: Vec<Value> = events
        .iter()
        .filter(|e| e.is_object())
        .map(|e| normalize(e, &kind))
        .collect();
    let mut decoder = datafusion::arrow::json::ReaderBuilder::new(schema.clone())
        .with_batch_size(rows.len().max(1))
        .build_decoder()?;
    decoder.serialize(&rows)?;
    Ok(decoder
        .flush()?
        .unwrap_or_else(|| RecordBatch::new_empty(schema)))
}
