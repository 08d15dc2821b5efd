//! Differential tests against the real Data-Juicer: every recipe in tests/golden/recipes was run
//! through py-data-juicer 1.6.1 (tests/golden/regenerate.sh); our export and stats file must be
//! byte-for-byte the same.

use std::path::Path;

use crate::common::{load, repo, run_recipe};

fn check(name: &str, overrides: &[(&str, &str)]) {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join(format!("{name}.jsonl"));
    let export_s = export.to_str().unwrap().to_string();
    // The fixture models stand in for Data-Juicer's model cache (the goldens were made with them).
    let models = repo().join("data/models").display().to_string();
    let mut o: Vec<(&str, &str)> = vec![("export_path", &export_s), ("model_dir", &models)];
    o.extend_from_slice(overrides);
    let recipe = load(
        &repo().join(format!("tests/golden/recipes/{name}.yaml")),
        &o,
    );
    run_recipe(&recipe);
    let expected_dir = repo().join("tests/golden/expected");
    compare(&expected_dir.join(format!("{name}.jsonl")), &export);
    let expected_stats = expected_dir.join(format!("{name}_stats.jsonl"));
    let stats = dir.path().join(format!("{name}_stats.jsonl"));
    assert_eq!(
        expected_stats.exists(),
        stats.exists(),
        "{name}: stats file presence differs"
    );
    if expected_stats.exists() {
        compare(&expected_stats, &stats);
    }
}

/// What of a media mapper's export is not comparable: the hash in the names of the files it
/// writes (Data-Juicer's covers its process id and the time) and `__dj__source_file__` (1.6.1
/// records the new paths there, dj-fusion the sources; tests/integration/media.rs checks ours).
fn unproduced(text: &str) -> String {
    let hash = regex::Regex::new("__dj_hash_#[0-9a-f]+#").unwrap();
    let sources = regex::Regex::new(r#""__dj__source_file__": \[[^\]]*\]"#).unwrap();
    let text = hash.replace_all(text, "__dj_hash_#<hash>#");
    sources
        .replace_all(&text, r#""__dj__source_file__": <sources>"#)
        .into_owned()
}

fn compare(expected: &Path, actual: &Path) {
    // Data-Juicer writes media paths made absolute under the checkout it ran in (/work/main).
    let e = std::fs::read_to_string(expected)
        .unwrap()
        .replace("\"/work/main/", &format!("\"{}/", repo().display()));
    let a = std::fs::read_to_string(actual)
        .unwrap_or_else(|_| panic!("{} was not written", actual.display()));
    let (e, a) = (unproduced(&e), unproduced(&a));
    let (el, al): (Vec<&str>, Vec<&str>) = (e.lines().collect(), a.lines().collect());
    for (i, (x, y)) in el.iter().zip(&al).enumerate() {
        assert_eq!(x, y, "{}: line {} differs", expected.display(), i + 1);
    }
    assert_eq!(
        el.len(),
        al.len(),
        "{}: row count differs",
        expected.display()
    );
    assert_eq!(e, a, "{}: bytes differ", expected.display());
}

/// Every recipe in tests/golden/recipes (new goldens need no test edit); all mismatches are
/// reported together.
#[test]
fn every_golden_recipe_matches_data_juicer() {
    let mut names: Vec<String> = std::fs::read_dir(repo().join("tests/golden/recipes"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 26, "{names:?}");
    let failures: Vec<String> = names
        .iter()
        .filter_map(|name| {
            std::panic::catch_unwind(|| check(name, &[]))
                .err()
                .map(|e| {
                    let msg = e
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()));
                    format!("{name}: {}", msg.unwrap_or_default())
                })
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} golden recipes differ:\n{}",
        failures.len(),
        names.len(),
        failures.join("\n")
    );
}

/// Row order and global dedup hold whatever the partitioning: the same golden output with the
/// input cut into 3 and 7 row-range partitions.
#[test]
fn pipeline_is_partitioning_independent() {
    check("pipeline", &[("np", "3")]);
    check("pipeline", &[("np", "7")]);
    check("document_deduplicator__params", &[("np", "5")]);
    // One partition at a time: each finds every partition before it decided and places its
    // kept lines in the export as they come, instead of holding them until its barrier.
    let work = tempfile::tempdir().unwrap();
    check(
        "pipeline",
        &[
            ("work_dir", work.path().to_str().unwrap()),
            ("executor_type", "ray_partitioned"),
            ("partition.mode", "manual"),
            ("partition.num_of_partitions", "4"),
            ("partition.max_concurrent_partitions", "1"),
            ("checkpoint.strategy", "disabled"),
        ],
    );
}

/// Image and video hashes decide across partitions too, exported as Data-Juicer exports them:
/// the same golden output with the input cut into partitions, one of them at a time.
#[test]
fn media_dedups_are_partitioning_independent() {
    check("image_deduplicator", &[("np", "4")]);
    check("image_deduplicator__consider_text", &[("np", "3")]);
    check("video_deduplicator__consider_text", &[("np", "3")]);
    let work = tempfile::tempdir().unwrap();
    check(
        "image_deduplicator__whash",
        &[
            ("work_dir", work.path().to_str().unwrap()),
            ("executor_type", "ray_partitioned"),
            ("partition.mode", "manual"),
            ("partition.num_of_partitions", "5"),
            ("partition.max_concurrent_partitions", "1"),
            ("checkpoint.strategy", "every_op"),
        ],
    );
}

/// Selectors decide over all partitions and the export follows their order: the same golden
/// output with the input cut into several partitions.
#[test]
fn selectors_are_partitioning_independent() {
    check("selector_pipeline", &[("np", "3")]);
    check("topk_specified_field_selector", &[("np", "4")]);
    check("range_specified_field_selector", &[("np", "3")]);
    check("frequency_specified_field_selector", &[("np", "5")]);
}

/// SimHash clusters span partitions: the same golden output with the input cut into several
/// row-range partitions, and through the partitioned executor (keys persisted per partition),
/// also when some partitions resume past the dedup from their checkpoint and persisted keys
/// while the others recompute theirs.
#[test]
fn simhash_dedup_is_partitioning_independent() {
    check("document_simhash_deduplicator", &[("np", "4")]);
    check("document_simhash_deduplicator__wide", &[("np", "7")]);

    let name = "document_simhash_deduplicator__wide";
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join(format!("{name}.jsonl"));
    let work = dir.path().join("jobs");
    let (export_s, work_s) = (export.to_str().unwrap(), work.to_str().unwrap());
    let recipe = load(
        &repo().join(format!("tests/golden/recipes/{name}.yaml")),
        &[
            ("export_path", export_s),
            ("work_dir", work_s),
            ("executor_type", "ray_partitioned"),
            ("partition.mode", "manual"),
            ("partition.num_of_partitions", "5"),
            ("checkpoint.strategy", "every_op"),
            ("job_id", "simhash"),
        ],
    );
    let opts = |resume: bool| dj_fusion::RunOptions {
        job_id: (!resume).then(|| "simhash".to_string()),
        resume: resume.then(|| "simhash".to_string()),
        ..Default::default()
    };
    crate::common::run_with(&recipe, &opts(false));
    let expected = repo().join(format!("tests/golden/expected/{name}.jsonl"));
    compare(&expected, &export);
    let job = work.join("simhash");
    let ck = job.join("checkpoints");
    for p in 0..5 {
        assert!(
            ck.join(format!("dedup_keys_op_0000_partition_{p:04}.bin"))
                .exists()
        );
    }
    // Forget that the job completed, and partitions 1 and 3 ever ran.
    for f in std::fs::read_dir(&job).unwrap().map(|e| e.unwrap().path()) {
        if f.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("events_")
        {
            std::fs::remove_file(f).unwrap();
        }
    }
    crate::common::write(
        &job.join("events_20000101_000000.jsonl"),
        "{\"event_type\": \"job_start\"}\n",
    );
    for f in std::fs::read_dir(&ck).unwrap().map(|e| e.unwrap().path()) {
        let n = f.file_name().unwrap().to_string_lossy().into_owned();
        if n.contains("partition_0001") || n.contains("partition_0003") {
            std::fs::remove_file(f).unwrap();
        }
    }
    std::fs::remove_file(&export).unwrap();
    crate::common::run_with(&recipe, &opts(true));
    compare(&expected, &export);
    let mut loaded: Vec<u64> = std::fs::read_dir(&job)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|f| {
            f.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("events_")
        })
        .flat_map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            text.lines()
                .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
                .filter(|e| e["event_type"] == "checkpoint_load")
                .map(|e| e["partition_id"].as_u64().unwrap())
                .collect::<Vec<_>>()
        })
        .collect();
    loaded.sort_unstable();
    assert_eq!(loaded, [0, 2, 4], "partitions resumed past the dedup");
}
