//! `dj-run` as a user meets it: summary output, and bad input giving a specific error, a non-zero
//! exit and no (or an untouched) export.

use crate::common::{dj_run, write};

fn recipe(dir: &std::path::Path, dataset: &str, export: &str, process: &str) -> std::path::PathBuf {
    let path = dir.join("recipe.yaml");
    write(
        &path,
        &format!("dataset_path: {dataset}\nexport_path: {export}\nnp: 2\nprocess:\n{process}"),
    );
    path
}

const FILTER: &str = "  - text_length_filter:\n      min_len: 3\n";

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn prints_rows_per_op_and_writes_export() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    write(
        &input,
        "{\"text\": \"hello world\"}\n{\"text\": \"hi\"}\n{\"text\": \"hello world\"}\n",
    );
    let out = dir.path().join("out/out.jsonl");
    let process = format!("{FILTER}  - document_deduplicator:\n");
    let r = recipe(
        dir.path(),
        input.to_str().unwrap(),
        out.to_str().unwrap(),
        &process,
    );
    let o = dj_run(&["--config", r.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("rows in: 3  rows out: 1"), "{stdout}");
    let line = |op: &str| {
        stdout
            .lines()
            .find(|l| l.contains(op))
            .unwrap_or_default()
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    assert_eq!(
        line("text_length_filter"),
        [
            "#0",
            "text_length_filter",
            "in",
            "3",
            "kept",
            "2",
            "removed",
            "1"
        ]
    );
    assert_eq!(
        line("document_deduplicator"),
        [
            "#1",
            "document_deduplicator",
            "in",
            "2",
            "kept",
            "1",
            "removed",
            "1"
        ]
    );
    assert!(stdout.contains("elapsed: "), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "{\"text\": \"hello world\"}\n"
    );
}

#[test]
fn dotted_overrides_change_the_recipe() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    write(&input, "{\"text\": \"abcd\"}\n{\"text\": \"abcdefgh\"}\n");
    let out = dir.path().join("out.jsonl");
    let r = recipe(
        dir.path(),
        input.to_str().unwrap(),
        out.to_str().unwrap(),
        FILTER,
    );
    let o = dj_run(&[
        "--config",
        r.to_str().unwrap(),
        "--text_length_filter.min_len",
        "6",
        "--np=1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "{\"text\": \"abcdefgh\"}\n"
    );
}

#[test]
fn missing_input_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.jsonl");
    let r = recipe(
        dir.path(),
        "/nonexistent/data.jsonl",
        out.to_str().unwrap(),
        FILTER,
    );
    let o = dj_run(&["--config", r.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("input not found: /nonexistent/data.jsonl"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
}

#[test]
fn malformed_row_names_file_and_line_and_keeps_old_export() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("bad.jsonl");
    write(
        &input,
        "{\"text\": \"ok row\"}\n\n{\"text\": \"broken\" \n{\"text\": \"fine\"}\n",
    );
    let out = dir.path().join("out.jsonl");
    write(&out, "previous result\n");
    let r = recipe(
        dir.path(),
        input.to_str().unwrap(),
        out.to_str().unwrap(),
        FILTER,
    );
    let o = dj_run(&["--config", r.to_str().unwrap()]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains(&format!("{}:3: malformed JSON row: ", input.display())),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "previous result\n");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        leftovers.len(),
        3,
        "temporary files left behind: {leftovers:?}"
    );
}

#[test]
fn missing_text_column_lists_columns() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    write(&input, "{\"content\": \"x\", \"id\": 1}\n");
    let out = dir.path().join("out.jsonl");
    let r = recipe(
        dir.path(),
        input.to_str().unwrap(),
        out.to_str().unwrap(),
        FILTER,
    );
    let o = dj_run(&["--config", r.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("process entry 1 (text_length_filter): text column `text` is not in the input; its columns are: content, id"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
}

#[test]
fn missing_field_of_a_field_filter_names_what_exists() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    write(
        &input,
        "{\"text\": \"hello there\", \"meta\": {\"lang\": \"en\"}}\n",
    );
    let out = dir.path().join("out.jsonl");
    let r = recipe(
        dir.path(),
        input.to_str().unwrap(),
        out.to_str().unwrap(),
        "  - specified_field_filter:\n      field_key: meta.language\n      target_value: [en]\n",
    );
    let o = dj_run(&["--config", r.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("process entry 1 (specified_field_filter): field `meta.language` is not in the input (`meta.language` is missing; available: lang)"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
}

#[test]
fn unwritable_export_path_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    write(&input, "{\"text\": \"hello\"}\n");
    let blocker = dir.path().join("file");
    write(&blocker, "not a directory");
    let out = blocker.join("out.jsonl");
    let r = recipe(
        dir.path(),
        input.to_str().unwrap(),
        out.to_str().unwrap(),
        FILTER,
    );
    let o = dj_run(&["--config", r.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains(&format!(
            "cannot create export directory {}",
            blocker.display()
        )),
        "{}",
        stderr(&o)
    );
}

#[test]
fn unknown_operator_is_a_recipe_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.jsonl");
    let r = recipe(
        dir.path(),
        "x.jsonl",
        out.to_str().unwrap(),
        "  - text_length_filtr:\n",
    );
    let o = dj_run(&["--config", r.to_str().unwrap()]);
    assert!(!o.status.success());
    let want = format!(
        "{}:5: process entry 1: unknown operator `text_length_filtr`; did you mean text_length_filter?",
        r.display()
    );
    assert!(stderr(&o).contains(&want), "{}", stderr(&o));
}

#[test]
fn explain_json_has_plans_labelled_with_ops() {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_dj-plan"))
        .args(["explain", "configs/partitioned.yaml", "--format", "json"])
        .current_dir(crate::common::repo())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["executor_type"], "ray_partitioned");
    assert_eq!(v["partitions"].as_array().unwrap().len(), 4);
    assert_eq!(v["ops"][4], "#4 document_deduplicator (deduplicator)");
    let physical: Vec<&str> = v["physical_plan"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(physical[0].starts_with("CheckpointExec: #5 special_characters_filter -> checkpoint_op_0005_partition_0000.parquet"), "{physical:?}");
    assert!(physical.iter().any(|l| {
        l.trim_start()
            .starts_with("DedupExec: #4 document_deduplicator")
    }));
    let logical: Vec<&str> = v["logical_plan"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(
        logical
            .iter()
            .any(|l| l.trim_start() == "DjOp: #2 text_length_filter (filter)"),
        "{logical:?}"
    );
}
