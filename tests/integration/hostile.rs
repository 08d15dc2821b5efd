//! Hostile input: a line longer than the line limit (here from a small gzip file that expands
//! a thousandfold), a JSON-array element as long, and JSON nested past any sane depth each stop
//! the run with an error naming the file and line, before any output changes.

use std::io::Write;
use std::path::Path;
use std::process::Command;

use crate::common::{repo, write};

/// Runs `recipe` with `DJ_MAX_LINE_MB=max_mb`; returns whether it succeeded and its stderr.
fn run(recipe: &Path, max_mb: &str) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_dj-run"))
        .arg("--config")
        .arg(recipe)
        .env("DJ_MAX_LINE_MB", max_mb)
        .env("DJ_PROGRESS", "0")
        .current_dir(repo())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.success(), stderr)
}

fn recipe(dir: &Path, input: &Path) -> std::path::PathBuf {
    let path = dir.join("recipe.yaml");
    write(
        &path,
        &format!(
            "dataset_path: {}\nexport_path: {}\nprocess:\n  - text_length_filter:\n      min_len: 1\n",
            input.display(),
            dir.join("out.jsonl").display()
        ),
    );
    path
}

/// `content` gzipped into `path`, at the best compression (a run of one byte shrinks a
/// thousandfold).
fn write_gzip(path: &Path, content: &str) {
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(path).unwrap(),
        flate2::Compression::best(),
    );
    gz.write_all(content.as_bytes()).unwrap();
    gz.finish().unwrap();
}

#[test]
fn a_line_past_the_limit_is_refused_before_it_is_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl.gz");
    let long = "a".repeat(3 << 20);
    write_gzip(
        &input,
        &format!("{{\"text\": \"a short row\"}}\n{{\"text\": \"{long}\"}}\n"),
    );
    assert!(std::fs::metadata(&input).unwrap().len() < 10_000, "a bomb");
    let recipe = recipe(dir.path(), &input);
    let (ok, stderr) = run(&recipe, "4");
    assert!(ok, "{stderr}");
    let export = std::fs::read(dir.path().join("out.jsonl")).unwrap();
    assert_eq!(export.iter().filter(|b| **b == b'\n').count(), 2);
    let (ok, stderr) = run(&recipe, "1");
    assert!(!ok);
    assert!(
        stderr.contains("in.jsonl.gz: line 2: longer than 1 MB")
            && stderr.contains("DJ_MAX_LINE_MB"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(dir.path().join("out.jsonl")).unwrap(),
        export,
        "the earlier export is intact"
    );
}

#[test]
fn json_nested_too_deep_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("nested.jsonl");
    let depth = 100_000;
    let line = format!(
        "{{\"text\": \"ok\"}}\n{{\"text\": \"x\", \"meta\": {}{}}}\n",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    write(&input, &line);
    let (ok, stderr) = run(&recipe(dir.path(), &input), "1024");
    assert!(!ok);
    assert!(
        stderr.contains("nested.jsonl:2: malformed JSON row: recursion limit exceeded"),
        "{stderr}"
    );
}

/// A `.json` array streams one element at a time: an element past the line limit is refused
/// by its index and line (inside a gzip that expands a thousandfold), as a JSON-lines row is,
/// and under the limit the array gives the rows of the same data as lines.
#[test]
fn a_json_array_element_past_the_limit_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.json.gz");
    let mut array = String::from("[\n");
    for i in 0..1000 {
        array.push_str(&format!("{{\"text\": \"row {i}\"}},\n"));
    }
    let long = "a".repeat(3 << 20);
    array.push_str(&format!(
        "{{\"text\": \"{long}\"}},\n{{\"text\": \"last\"}}\n]\n"
    ));
    write_gzip(&input, &array);
    assert!(std::fs::metadata(&input).unwrap().len() < 20_000, "a bomb");
    let recipe = recipe(dir.path(), &input);
    let (ok, stderr) = run(&recipe, "4");
    assert!(ok, "{stderr}");
    let export = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    let rows: Vec<&str> = export.lines().collect();
    assert_eq!(rows.len(), 1002);
    assert_eq!(rows[0], r#"{"text": "row 0"}"#);
    assert_eq!(rows[1001], r#"{"text": "last"}"#);
    let (ok, stderr) = run(&recipe, "1");
    assert!(!ok);
    assert!(
        stderr.contains("in.json.gz: element 1000 of the JSON array (line 1002): longer than 1 MB")
            && stderr.contains("DJ_MAX_LINE_MB"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap(),
        export,
        "the earlier export is intact"
    );
}
