//! `dj-analyze`: Data-Juicer's `overall.csv` byte for byte, numbers against a direct
//! computation, PNGs that decode and an HTML report that references only what it ships.

use std::process::Command;

use crate::common::{ok, repo, write};

fn analyze(extra: &[&str]) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let recipe = std::fs::read_to_string(repo().join("tests/golden/analyze/recipe.yaml"))
        .unwrap()
        .replace(
            "DATA",
            repo().join("tests/golden/corpus.jsonl").to_str().unwrap(),
        )
        .replace(
            "EXPORT",
            dir.path().join("out/result.jsonl").to_str().unwrap(),
        );
    write(&dir.path().join("recipe.yaml"), &recipe);
    let out = Command::new(env!("CARGO_BIN_EXE_dj-analyze"))
        .args(["--config", "recipe.yaml"])
        .args(extra)
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
    let d = &stat["describe"];
    assert_eq!(d["count"], lens.len());
    assert!((d["mean"].as_f64().unwrap() - mean).abs() < 1e-9);
    assert_eq!(d["min"].as_f64().unwrap(), lens[0]);
    assert_eq!(d["max"].as_f64().unwrap(), *lens.last().unwrap());
    assert_eq!(d["p50"].as_f64().unwrap(), lens[lens.len() / 2]);
    let kept = lens.iter().filter(|l| **l >= 50.0).count();
    assert_eq!(stat["kept_by_bounds"], kept);
    assert_eq!(stat["min"], 50.0);
    for t in stat["thresholds"].as_array().unwrap() {
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
        html.contains(&format!("keep {kept} (")),
        "the bounds' share is shown"
    );
}
