use std::path::Path;

use serde_json::Value;

use datafusion::arrow::datatypes::DataType;

use super::events_table::events_batch;
use super::paths::{resolve, run_dirs};
use super::{OutputFormat, QueryResult, format_result};

#[test]
fn events_schema_merges_heterogeneous_keys_in_order() {
    let events: Vec<Value> = [
        r#"{"event_type": "job_start", "timestamp": 1.5, "metadata": {"n": 4, "flag": true}}"#,
        r#"{"event_type": "checkpoint_save", "timestamp": 2, "partition_id": 0, "metadata": {"rows": 7, "n": 2.5}}"#,
        r#"{"event_type": "x", "partition_id": "odd", "metadata": null, "list": [1, 2]}"#,
    ]
    .iter()
    .map(|l| serde_json::from_str(l).unwrap())
    .collect();
    let b = events_batch(&events).unwrap();
    let names: Vec<String> = b
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(
        names,
        [
            "event_type",
            "timestamp",
            "metadata",
            "partition_id",
            "list"
        ]
    );
    let s = b.schema();
    assert_eq!(s.field(1).data_type(), &DataType::Float64);
    assert_eq!(s.field(3).data_type(), &DataType::Utf8); // int and string: text
    let DataType::Struct(meta) = s.field(2).data_type() else {
        panic!("metadata is a struct")
    };
    let meta: Vec<(&str, &DataType)> = meta
        .iter()
        .map(|f| (f.name().as_str(), f.data_type()))
        .collect();
    assert_eq!(
        meta,
        [
            ("n", &DataType::Float64),
            ("flag", &DataType::Boolean),
            ("rows", &DataType::Int64)
        ]
    );
    assert_eq!(b.num_rows(), 3);
    let r = QueryResult {
        schema: b.schema(),
        batches: vec![b],
    };
    let csv = format_result(&r, OutputFormat::Csv).unwrap();
    assert!(
        csv.starts_with("event_type,timestamp,metadata,partition_id,list\n"),
        "{csv}"
    );
    assert!(csv.contains("checkpoint_save,2.0,"), "{csv}");
    let json: Value =
        serde_json::from_str(&format_result(&r, OutputFormat::Json).unwrap()).unwrap();
    assert_eq!(json[1]["metadata"]["rows"], 7);
    assert_eq!(json[2]["list"], "[1,2]");
    assert_eq!(json[2]["partition_id"], "odd");
    assert_eq!(json[1]["partition_id"], "0");
    assert!(
        events_batch(&[])
            .unwrap()
            .schema()
            .field_with_name("event_type")
            .is_ok()
    );
}

#[test]
fn run_directory_recovered_from_work_dir() {
    let job = Path::new("/srv/repo/outputs/jobs/ID");
    let summary = crate::job::JobSummary {
        work_dir: "outputs/jobs/ID".into(),
        ..Default::default()
    };
    let bases = run_dirs(job, Some(&summary), None);
    assert_eq!(bases[0], Path::new("/srv/repo"));
    let recipe: Value = serde_json::json!({"work_dir": "./outputs/jobs"});
    assert_eq!(
        run_dirs(job, None, Some(&recipe))[0],
        Path::new("/srv/repo")
    );
    let recipe: Value = serde_json::json!({"export_path": "outputs/jobs/x.jsonl"});
    assert_eq!(
        run_dirs(job, None, Some(&recipe))[0],
        Path::new("/srv/repo")
    );
    assert_eq!(resolve(&bases, "/abs/x"), Path::new("/abs/x"));
    assert_eq!(
        resolve(&bases, "data/x.jsonl"),
        Path::new("/srv/repo/data/x.jsonl")
    );
}
