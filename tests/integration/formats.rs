//! Input and output formats: every supported input layout gives the same rows in the same order;
//! parquet exports and shards round-trip.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use datafusion::arrow::array::{Int64Array, RecordBatch, StringArray};
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::parquet::file::properties::WriterProperties;

use crate::common::{load, run_recipe, write};

const ROWS: usize = 25;

fn rows() -> Vec<String> {
    (0..ROWS)
        .map(|i| {
            format!(
                "{{\"text\": \"row number {i} {}\", \"id\": {i}}}",
                "x".repeat(i % 7)
            )
        })
        .collect()
}

fn recipe(dir: &Path, dataset: &str, export: &str, extra: &str) -> std::path::PathBuf {
    let p = dir.join("r.yaml");
    write(
        &p,
        &format!(
            "dataset_path: '{dataset}'\nexport_path: '{export}'\nnp: 3\n{extra}process:\n  - text_length_filter:\n      min_len: 15\n"
        ),
    );
    p
}

fn run_to_string(dir: &Path, dataset: &str) -> String {
    let out = dir.join("out.jsonl");
    let r = recipe(dir, dataset, out.to_str().unwrap(), "");
    run_recipe(&load(&r, &[]));
    std::fs::read_to_string(out).unwrap()
}

fn reference() -> String {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    write(&input, &(rows().join("\n") + "\n"));
    run_to_string(dir.path(), input.to_str().unwrap())
}

#[test]
fn jsonl_reference_keeps_order() {
    let got = reference();
    // text_length_filter keeps texts of 15+ code points; the JSON text is `row number N xxx`.
    let want: Vec<String> = rows()
        .into_iter()
        .filter(|r| {
            let v: serde_json::Value = serde_json::from_str(r).unwrap();
            v["text"].as_str().unwrap().chars().count() >= 15
        })
        .collect();
    assert_eq!(got.lines().collect::<Vec<_>>(), want);
}

#[test]
fn compressed_split_and_array_inputs_give_the_same_rows() {
    let want = reference();
    let lines = rows();

    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("in.jsonl.gz");
    let mut e = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz).unwrap(),
        flate2::Compression::default(),
    );
    e.write_all((lines.join("\n") + "\n").as_bytes()).unwrap();
    e.finish().unwrap();
    assert_eq!(
        run_to_string(dir.path(), gz.to_str().unwrap()),
        want,
        "gzip"
    );

    let dir = tempfile::tempdir().unwrap();
    let zst = dir.path().join("in.jsonl.zst");
    std::fs::write(
        &zst,
        zstd::encode_all((lines.join("\n") + "\n").as_bytes(), 3).unwrap(),
    )
    .unwrap();
    assert_eq!(
        run_to_string(dir.path(), zst.to_str().unwrap()),
        want,
        "zstd"
    );

    // A directory of files (sorted by name), with blank lines and no trailing newline.
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    write(&data.join("a.jsonl"), &(lines[..10].join("\n\n") + "\n"));
    write(&data.join("b/c.jsonl"), &lines[10..].join("\n"));
    assert_eq!(
        run_to_string(dir.path(), data.to_str().unwrap()),
        want,
        "directory"
    );
    assert_eq!(
        run_to_string(dir.path(), &format!("{}/**/*.jsonl", data.display())),
        want,
        "glob"
    );

    let dir = tempfile::tempdir().unwrap();
    let arr = dir.path().join("in.json");
    write(&arr, &format!("[{}]", lines.join(",\n")));
    assert_eq!(
        run_to_string(dir.path(), arr.to_str().unwrap()),
        want,
        "json array"
    );
}

fn write_parquet(path: &Path, texts: &[String], ids: &[i64], row_group: usize) {
    let batch = RecordBatch::try_from_iter(vec![
        ("text", Arc::new(StringArray::from(texts.to_vec())) as _),
        ("id", Arc::new(Int64Array::from(ids.to_vec())) as _),
    ])
    .unwrap();
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(row_group))
        .build();
    let mut w = ArrowWriter::try_new(
        std::fs::File::create(path).unwrap(),
        batch.schema(),
        Some(props),
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

#[test]
fn parquet_input_with_small_row_groups_gives_the_same_rows() {
    let want = reference();
    let values: Vec<serde_json::Value> = rows()
        .iter()
        .map(|r| serde_json::from_str(r).unwrap())
        .collect();
    let texts: Vec<String> = values
        .iter()
        .map(|v| v["text"].as_str().unwrap().to_string())
        .collect();
    let ids: Vec<i64> = values.iter().map(|v| v["id"].as_i64().unwrap()).collect();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("pq");
    std::fs::create_dir_all(&data).unwrap();
    write_parquet(&data.join("part-0.parquet"), &texts[..11], &ids[..11], 4);
    write_parquet(&data.join("part-1.parquet"), &texts[11..], &ids[11..], 3);
    assert_eq!(run_to_string(dir.path(), data.to_str().unwrap()), want);
}

#[test]
fn parquet_export_and_shards() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    write(&input, &(rows().join("\n") + "\n"));
    let out = dir.path().join("out/result.parquet");
    let r = recipe(
        dir.path(),
        input.to_str().unwrap(),
        out.to_str().unwrap(),
        "keep_stats_in_res_ds: true\n",
    );
    let report = run_recipe(&load(&r, &[]));
    let file = std::fs::File::open(&out).unwrap();
    let reader =
        datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .build()
            .unwrap();
    let batches: Vec<RecordBatch> = reader.map(|b| b.unwrap()).collect();
    let n: usize = batches.iter().map(|b| b.num_rows()).sum();
    assert_eq!(n as u64, report.rows_out);
    let schema = batches[0].schema();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, ["text", "id", "__dj__stats__"]);

    // Shards: contiguous, named like Data-Juicer's, together the whole result.
    let out = dir.path().join("sharded/result.jsonl");
    let r = recipe(
        dir.path(),
        input.to_str().unwrap(),
        out.to_str().unwrap(),
        "export_shard_size: 200\n",
    );
    let report = run_recipe(&load(&r, &[]));
    let shards = &report.export_files[..report.export_files.len() - 1];
    assert!(shards.len() > 1, "{shards:?}");
    let width = shards.len().to_string().len() + 1;
    assert_eq!(
        shards[0].file_name().unwrap().to_string_lossy(),
        format!("result-{:0width$}-of-{:0width$}.jsonl", 0, shards.len())
    );
    let joined: String = shards
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert_eq!(joined, reference());
}

/// An empty input gives an empty export and a normal report, with either executor. (Data-Juicer
/// 1.6.1 fails there: its JSON loader raises `StopIteration` on an empty file.)
#[test]
fn an_empty_input_gives_an_empty_export() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("empty.jsonl");
    write(&input, "");
    let jobs = dir.path().join("jobs");
    let partitioned = format!(
        "executor_type: ray_partitioned\nwork_dir: {}\n",
        jobs.display()
    );
    for (i, extra) in ["", partitioned.as_str()].into_iter().enumerate() {
        let out = dir.path().join(format!("out{i}.jsonl"));
        let r = recipe(
            dir.path(),
            input.to_str().unwrap(),
            out.to_str().unwrap(),
            extra,
        );
        let report = run_recipe(&load(&r, &[]));
        assert_eq!((report.rows_in, report.rows_out), (0, 0), "{extra}");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "", "{extra}");
    }
}
