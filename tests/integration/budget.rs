//! Global operators under a memory budget: when a deduplicator's keys or a selector's values
//! exceed `--memory_budget_mb`, they decide from what they sorted on disk, and the export is byte
//! for byte the unbounded run's.

use std::path::Path;

use crate::common::{ok, repo, write};

const WORDS: &[&str] = &[
    "data", "juicer", "fusion", "river", "stone", "quiet", "morning", "signal", "paper", "window",
    "garden", "silver", "engine", "shadow", "orange", "market", "letter", "bridge", "winter",
    "forest", "copper", "number", "planet", "mirror", "candle", "harbor", "lesson", "meadow",
];

/// `rows` texts of `words` words: every tenth row three rows later repeats one exactly, every
/// tenth six rows later repeats one with its last word changed (a near duplicate), and every
/// seventeenth is empty. Each row's `score` takes one of 101 values.
pub(crate) fn corpus(path: &Path, rows: usize, words: usize) {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut texts: Vec<String> = Vec::with_capacity(rows);
    for i in 0..rows {
        let text = match i % 10 {
            3 if i >= 3 => texts[i - 3].clone(),
            6 if i >= 5 => {
                let mut t: Vec<&str> = texts[i - 5].split(' ').collect();
                if let Some(last) = t.last_mut() {
                    *last = "changed";
                }
                t.join(" ")
            }
            _ if i % 17 == 0 => String::new(),
            _ => (0..words)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    WORDS[(state % WORDS.len() as u64) as usize]
                })
                .collect::<Vec<_>>()
                .join(" "),
        };
        texts.push(text);
    }
    let lines: Vec<String> = (texts.iter().enumerate())
        .map(|(i, t)| {
            let score = (i * 37 % 101) as f64 / 10.0;
            serde_json::json!({"id": i, "score": score, "text": t}).to_string()
        })
        .collect();
    write(path, &(lines.join("\n") + "\n"));
}

/// Runs `recipe` with `args`, logging at info; returns the export and stderr.
pub(crate) fn run(dir: &Path, recipe: &Path, export: &str, args: &[&str]) -> (String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dj-run"))
        .arg("--config")
        .arg(recipe)
        .args(args)
        .env("DJ_LOG", "info")
        .env("DJ_PROGRESS", "0")
        .current_dir(repo())
        .output()
        .unwrap();
    ok(&out);
    let export = std::fs::read_to_string(dir.join(export)).unwrap();
    (export, String::from_utf8_lossy(&out.stderr).into_owned())
}

pub(crate) const SPILLED: &str = "exceed the memory budget";

/// Runs `op` (a `process:` entry) over `rows` rows with and without a 1 MB budget.
fn check(op: &str, rows: usize, words: usize, executor: &str) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("in.jsonl");
    corpus(&data, rows, words);
    for (budget, export) in [(None, "free.jsonl"), (Some("1"), "bounded.jsonl")] {
        let recipe = dir.path().join(format!("{export}.yaml"));
        write(
            &recipe,
            &format!(
                "dataset_path: {}\nexport_path: {}\nnp: 3\nexecutor_type: {executor}\n\
                 work_dir: {}\npartition:\n  mode: manual\n  num_of_partitions: 7\n\
                 process:\n  - {op}\n",
                data.display(),
                dir.path().join(export).display(),
                dir.path().join("work").display(),
            ),
        );
        let args: Vec<&str> = budget.map_or(vec![], |b| vec!["--memory_budget_mb", b]);
        let (_, stderr) = run(dir.path(), &recipe, export, &args);
        assert_eq!(stderr.contains(SPILLED), budget.is_some(), "{op}: {stderr}");
    }
    let free = std::fs::read_to_string(dir.path().join("free.jsonl")).unwrap();
    let bounded = std::fs::read_to_string(dir.path().join("bounded.jsonl")).unwrap();
    let kept = free.lines().count();
    assert!(kept > 0 && kept < rows, "{op}: {kept} of {rows} rows kept");
    assert!(free == bounded, "{op}: the bounded run's export differs");
}

#[test]
fn exact_dedup_over_its_budget_exports_the_same_rows() {
    // 20,000 keys take about 1.4 MB of budget in memory: over 1 MB.
    check("document_deduplicator:", 20_000, 6, "default");
}

#[test]
fn minhash_dedup_over_its_budget_exports_the_same_rows() {
    // 25 bands of 4,000 rows take about 6 MB in memory.
    check(
        "document_minhash_deduplicator:",
        4_000,
        30,
        "ray_partitioned",
    );
}

#[test]
fn top_k_selector_over_its_budget_exports_the_same_rows() {
    // 30,000 values take about 3.4 MB in memory.
    let op = "topk_specified_field_selector: {field_key: score, top_ratio: 0.4, reverse: true}";
    check(op, 30_000, 2, "ray_partitioned");
}

#[test]
fn simhash_dedup_over_its_budget_exports_the_same_rows() {
    // 20,000 values take about 1.4 MB in memory; every tenth row has a near duplicate.
    check(
        "document_simhash_deduplicator: {hamming_distance: 5}",
        20_000,
        30,
        "ray_partitioned",
    );
}

#[test]
fn frequency_selector_over_its_budget_exports_the_same_rows() {
    // 30,000 values take about 3.4 MB in memory; 101 groups of about 300 rows each.
    let op = "frequency_specified_field_selector: {field_key: score, top_ratio: 0.4}";
    check(op, 30_000, 2, "default");
}

/// On a cluster the client decides the global ops: over its budget, it sorts the keys the
/// executors computed on its disk, and the export is the local unbounded run's, with one and with
/// two executors.
#[test]
fn a_cluster_client_over_its_budget_decides_as_locally() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("in.jsonl");
    corpus(&data, 4_000, 30);
    let recipe = |export: &str| {
        let path = dir.path().join(format!("{export}.yaml"));
        write(
            &path,
            &format!(
                "dataset_path: {}\nexport_path: {}\nnp: 3\nprocess:\n  - document_deduplicator:\n\
                 \x20 - document_minhash_deduplicator:\n",
                data.display(),
                dir.path().join(export).display(),
            ),
        );
        path
    };
    let (want, _) = run(dir.path(), &recipe("local.jsonl"), "local.jsonl", &[]);
    for executors in [1, 2] {
        let cluster = crate::cluster::Cluster::start(executors);
        let export = format!("cluster{executors}.jsonl");
        let args = ["--engine", "ballista", "--scheduler", &cluster.scheduler];
        let args = [&args[..], &["--memory_budget_mb", "1"]].concat();
        let (got, stderr) = run(dir.path(), &recipe(&export), &export, &args);
        assert!(stderr.contains(SPILLED), "{executors} executors: {stderr}");
        assert!(got == want, "{executors} executors: the export differs");
        assert!(cluster.worked(0), "the executors ran tasks");
    }
}
