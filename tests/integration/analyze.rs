//! `dj-analyze`: Data-Juicer's `overall.csv` byte for byte, numbers against a direct
//! computation, PNGs that decode and an HTML report that references only what it ships.

use std::process::Command;

use crate::common::{ok, repo, write};

fn analyze(extra: &[&str]) -> (tempfile::TempDir, String) {
    analyze_recipe("recipe.yaml", "tests/golden/corpus.jsonl", extra)
}

/// Runs `dj-analyze` on `tests/golden/analyze/{recipe}` with `DATA` = `data` (from the repo root)
/// and the fixture models.
fn analyze_recipe(recipe: &str, data: &str, extra: &[&str]) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let recipe = std::fs::read_to_string(repo().join("tests/golden/analyze").join(recipe))
        .unwrap()
        .replace("DATA", repo().join(data).to_str().unwrap())
        .replace(
            "EXPORT",
            dir.path().join("out/result.jsonl").to_str().unwrap(),
        );
    write(&dir.path().join("recipe.yaml"), &recipe);
    let out = Command::new(env!("CARGO_BIN_EXE_dj-analyze"))
        .args(["--config", "recipe.yaml"])
        .args(extra)
        .env("DATA_JUICER_MODELS_CACHE", repo().join("data/models"))
        .current_dir(dir.path())
        .output()
        .unwrap();
    let text = ok(&out);
    (dir, text)
}

#[test]
fn overall_csv_matches_data_juicer() {
    let (dir, out) = analyze(&[]);
    let got = std::fs::read_to_string(dir.path().join("out/analysis/overall.csv")).unwrap();
    let want = std::fs::read_to_string(repo().join("tests/golden/analyze/overall.csv")).unwrap();
    assert_eq!(got, want, "{out}");
}

/// Language ID's string stat (`lang`: count, unique, top, freq) next to numeric ones, in pandas'
/// mixed layout.
#[test]
fn string_stats_match_data_juicer() {
    let (dir, out) = analyze_recipe("fields.yaml", "tests/golden/corpus.jsonl", &[]);
    let got = std::fs::read_to_string(dir.path().join("out/analysis/overall.csv")).unwrap();
    let want =
        std::fs::read_to_string(repo().join("tests/golden/analyze/fields_overall.csv")).unwrap();
    assert_eq!(got, want, "{out}");
    assert!(dir.path().join("out/analysis/lang-hist.png").exists());
}

/// Rows that carry stats already: those are read, not recomputed (the fixture's `text_len` values
/// are deliberately not the texts' lengths), a stat no filter computes is summarised too, and
/// only the missing `num_words` is computed, as Data-Juicer does.
#[test]
fn stats_the_rows_carry_are_read_not_recomputed() {
    let (dir, out) = analyze_recipe(
        "with_stats.yaml",
        "tests/golden/analyze/with_stats.jsonl",
        &[],
    );
    let an = dir.path().join("out/analysis");
    let got = std::fs::read_to_string(an.join("overall.csv")).unwrap();
    let want = std::fs::read_to_string(repo().join("tests/golden/analyze/with_stats_overall.csv"))
        .unwrap();
    assert_eq!(got, want, "{out}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(an.join("analysis.json")).unwrap()).unwrap();
    let by_key = |k: &str| {
        json["stats"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["stat"] == k)
            .unwrap()
            .clone()
    };
    let text_len = by_key("text_len");
    assert_eq!(text_len["from_input"], true);
    assert_eq!(text_len["summary"]["describe"]["min"], 1000.0);
    // The bound is applied to the stat as read: every fake length is >= 20.
    assert_eq!(text_len["filters"][0]["kept"], 40);
    assert_eq!(by_key("num_words")["from_input"], false);
    assert_eq!(by_key("custom_score")["filters"], serde_json::json!([]));
    assert_eq!(by_key("lang")["summary"]["type"], "text");
    assert!(out.contains("(read from the input)"), "{out}");
}

/// The text length stats against the lengths counted here; what the bounds keep; the files.
#[test]
fn numbers_images_and_report_check_out() {
    let (dir, _) = analyze(&["--output", "an", "--text_length_filter.min_len", "50"]);
    let an = dir.path().join("an");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(an.join("analysis.json")).unwrap()).unwrap();
    let mut lens: Vec<f64> = std::fs::read_to_string(repo().join("tests/golden/corpus.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["text"].as_str().unwrap().chars().count() as f64
        })
        .collect();
    let stat = json["stats"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["stat"] == "text_len")
        .unwrap();
    let n = lens.len() as f64;
    let mean = lens.iter().sum::<f64>() / n;
    lens.sort_by(f64::total_cmp);
    let d = &stat["summary"]["describe"];
    assert_eq!(d["count"], lens.len());
    assert!((d["mean"].as_f64().unwrap() - mean).abs() < 1e-9);
    assert_eq!(d["min"].as_f64().unwrap(), lens[0]);
    assert_eq!(d["max"].as_f64().unwrap(), *lens.last().unwrap());
    assert_eq!(d["p50"].as_f64().unwrap(), lens[lens.len() / 2]);
    let kept = lens.iter().filter(|l| **l >= 50.0).count();
    assert_eq!(stat["filters"][0]["kept"], kept);
    assert_eq!(stat["filters"][0]["min"], 50.0);
    for t in stat["summary"]["thresholds"].as_array().unwrap() {
        let v = t["value"].as_f64().unwrap();
        assert_eq!(t["kept_as_min"], lens.iter().filter(|l| **l >= v).count());
        assert_eq!(t["kept_as_max"], lens.iter().filter(|l| **l <= v).count());
    }
    // Every histogram decodes; the report embeds them and references nothing else.
    let stats = json["stats"].as_array().unwrap();
    assert_eq!(stats.len(), 5);
    for s in stats {
        let png = an.join(format!("{}-hist.png", s["stat"].as_str().unwrap()));
        let img = image::load_from_memory(&std::fs::read(&png).unwrap()).unwrap();
        assert_eq!((img.width(), img.height()), (900, 500));
    }
    let html = std::fs::read_to_string(an.join("report.html")).unwrap();
    assert_eq!(html.matches("src=\"data:image/png;base64,").count(), 5);
    assert_eq!(html.matches("src=").count(), 5, "only the embedded images");
    assert!(
        !html.contains("href=") && !html.contains("http"),
        "no external references"
    );
    assert!(
        html.contains(&format!("keeps {kept} (")),
        "the bounds' share is shown"
    );
}

/// `--job`: the rows a job saved after the latest op it shares with the recipe, with the stats it
/// computed read from its checkpoints, summarise exactly as the same rows exported with their
/// stats and analyzed as an input; a job that does not exist is named in the error.
#[test]
fn a_job_is_analyzed_from_its_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    let recipe = |name: &str, ops: &str, extra: &str| {
        let text = format!(
            "project_name: {name}\ndataset_path: {}\nexport_path: {}\nwork_dir: {}\nnp: 2\n\
             executor_type: ray_partitioned\npartition:\n  mode: manual\n  num_of_partitions: 3\n\
             checkpoint:\n  enabled: true\n  strategy: every_op\n{extra}process:\n{ops}",
            repo().join("tests/golden/corpus.jsonl").display(),
            dir.path().join(name).join("out.jsonl").display(),
            dir.path().join("work").display(),
        );
        let path = dir.path().join(format!("{name}.yaml"));
        write(&path, &text);
        path
    };
    let first3 = "  - whitespace_normalization_mapper:\n  - text_length_filter:\n      min_len: 20\n  \
                  - alphanumeric_filter:\n      min_ratio: 0.5\n";
    let run = |config: &std::path::Path, job: &str| {
        ok(&Command::new(env!("CARGO_BIN_EXE_dj-run"))
            .args(["--config", config.to_str().unwrap(), "--job_id", job])
            .output()
            .unwrap())
    };
    let analyze = |config: &std::path::Path, args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_dj-analyze"))
            .args(["--config", config.to_str().unwrap()])
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    run(
        &recipe(
            "job",
            &format!("{first3}  - words_num_filter:\n      min_num: 5\n"),
            "",
        ),
        "first",
    );
    // The next iteration changes the last filter's bound: the job shares ops 0-2 with it.
    let next = recipe(
        "next",
        &format!("{first3}  - words_num_filter:\n      min_num: 8\n"),
        "",
    );
    let out = analyze(&next, &["--job", "first", "--output", "from_job"]);
    let text = ok(&out);
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("from_job/analysis.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        json["dataset_path"],
        "job first after op #2 alphanumeric_filter (3 partitions)"
    );
    let from_input: Vec<_> = json["stats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["stat"].as_str().unwrap(),
                s["from_input"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        from_input,
        [
            ("text_len", true),
            ("alnum_ratio", true),
            ("num_words", false)
        ],
        "{text}"
    );
    // The same rows, exported with their stats by a job of the first three ops, analyzed as input.
    let prefix = recipe("prefix", first3, "keep_stats_in_res_ds: true\n");
    run(&prefix, "prefix");
    let export = dir.path().join("prefix/out.jsonl");
    ok(&analyze(
        &next,
        &[
            "--dataset_path",
            export.to_str().unwrap(),
            "--output",
            "from_export",
        ],
    ));
    let read = |d: &str| std::fs::read_to_string(dir.path().join(d).join("overall.csv")).unwrap();
    assert_eq!(read("from_job"), read("from_export"));
    let out = analyze(&next, &["--job", "nope"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no job `nope`"), "{err}");
}
