//! How `dj-sql` prints a result: an aligned table, CSV (nested values as text) or JSON.

use std::sync::Arc;

use anyhow::Result;
use clap::ValueEnum;
use datafusion::arrow::array::{ArrayRef, RecordBatch, StringBuilder};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};

use super::QueryResult;

/// How `dj-sql` prints results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum OutputFormat {
    /// An aligned table.
    Table,
    /// CSV with a header (nested values as text).
    Csv,
    /// A JSON array of objects (nulls explicit).
    Json,
}

/// Nested columns as text (CSV has no nested values).
fn flatten_nested(batch: &RecordBatch) -> Result<RecordBatch> {
    let opts = FormatOptions::default();
    let mut fields = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    for (f, col) in batch.schema().fields().iter().zip(batch.columns()) {
        if f.data_type().is_nested() {
            let fmt = ArrayFormatter::try_new(col.as_ref(), &opts)?;
            let mut b = StringBuilder::new();
            for i in 0..col.len() {
                if col.is_null(i) {
                    b.append_null();
                } else {
                    b.append_value(fmt.value(i).to_string());
                }
            }
            fields.push(Field::new(f.name(), DataType::Utf8, true));
            columns.push(Arc::new(b.finish()));
        } else {
            fields.push(f.as_ref().clone());
            columns.push(col.clone());
        }
    }
    Ok(RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        columns,
    )?)
}

/// A result as an aligned table, CSV or JSON.
pub(crate) fn format_result(r: &QueryResult, format: OutputFormat) -> Result<String> {
    match format {
        OutputFormat::Table => {
            let table = datafusion::arrow::util::pretty::pretty_format_batches_with_schema(
                r.schema.clone(),
                &r.batches,
            )?;
            Ok(format!("{table}\n"))
        }
        OutputFormat::Csv => {
            let mut out = Vec::new();
            {
                let mut w = datafusion::arrow::csv::WriterBuilder::new()
                    .with_header(true)
                    .build(&mut out);
                let empty = RecordBatch::new_empty(r.schema.clone());
                let batches = if r.batches.is_empty() {
                    std::slice::from_ref(&empty)
                } else {
                    &r.batches[..]
                };
                for b in batches {
                    w.write(&flatten_nested(b)?)?;
                }
            }
            Ok(String::from_utf8(out)?)
        }
        OutputFormat::Json => {
            let mut out = Vec::new();
            {
                let mut w = datafusion::arrow::json::WriterBuilder::new()
                    .with_explicit_nulls(true)
                    .build::<_, datafusion::arrow::json::writer::JsonArray>(&mut out);
                for b in &r.batches {
                    w.write(b)?;
                }
                w.finish()?;
            }
            Ok(String::from_utf8(out)? + "\n")
        }
    }
}
