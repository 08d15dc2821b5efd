//! Model-based operators end to end: Data-Juicer's published refinement recipes (configs/, copied
//! verbatim but for paths) give its exports on the shipped samples with the fixture models, and a
//! missing model stops a job before any work with a message saying where to get it.

use std::process::Command;

use crate::common::repo;

fn dj_run_env(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dj-run"));
    cmd.args(args).current_dir(repo());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// The three published recipes, as a user runs them: `--model_dir data/models`, the fixture
/// flagged-words list as Data-Juicer's asset cache; export and stats file byte for byte.
#[test]
fn published_recipes_match_data_juicer() {
    let root = repo();
    let assets = root.join("data/assets").display().to_string();
    for name in [
        "redpajama-c4-refine",
        "pile-philpaper-refine",
        "stack-code-refine",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let export = dir.path().join(format!("{name}.jsonl"));
        let config = format!("configs/{name}.yaml");
        let out = dj_run_env(
            &[
                "--config",
                &config,
                "--export_path",
                export.to_str().unwrap(),
                "--work_dir",
                dir.path().join("work").to_str().unwrap(),
                "--model_dir",
                "data/models",
            ],
            &[("DATA_JUICER_ASSETS_CACHE", &assets)],
        );
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        for (got, want) in [
            (export.clone(), format!("{name}.jsonl")),
            (
                dir.path().join(format!("{name}_stats.jsonl")),
                format!("{name}_stats.jsonl"),
            ),
        ] {
            let want_path = root.join("tests/golden/published").join(&want);
            let (g, w) = (
                std::fs::read_to_string(&got).unwrap(),
                std::fs::read_to_string(&want_path).unwrap(),
            );
            let first_diff = g.lines().zip(w.lines()).position(|(a, b)| a != b);
            assert!(
                g == w,
                "{name}: {} differs from {} (first differing line {:?}; {} vs {} lines)",
                got.display(),
                want_path.display(),
                first_diff.map(|i| i + 1),
                g.lines().count(),
                w.lines().count()
            );
        }
    }
}

/// Without the model, nothing starts: no job directory, no export, and the message names the
/// file, every place looked and Data-Juicer's download address.
#[test]
fn a_missing_model_fails_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("no-models");
    std::fs::create_dir_all(&empty).unwrap();
    let export = dir.path().join("out.jsonl");
    let work = dir.path().join("work");
    let out = dj_run_env(
        &[
            "--config",
            "configs/redpajama-c4-refine.yaml",
            "--export_path",
            export.to_str().unwrap(),
            "--work_dir",
            work.to_str().unwrap(),
        ],
        &[
            ("DATA_JUICER_MODELS_CACHE", empty.to_str().unwrap()),
            ("DATA_JUICER_EXTERNAL_MODELS_HOME", ""),
        ],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let cached = empty.join("lid.176.bin").display().to_string();
    for part in [
        "language_id_score_filter",
        "model file lid.176.bin not found",
        cached.as_str(),
        "https://dl.fbaipublicfiles.com/fasttext/supervised-models/lid.176.bin",
    ] {
        assert!(err.contains(part), "missing {part:?} in: {err}");
    }
    assert!(!export.exists() && !work.exists(), "work started: {err}");
}

/// A model file that changed since the job started makes the job's recipe another one: a strict
/// resume refuses it and leaves the checkpoints as they were.
#[test]
fn resume_refuses_a_changed_model() {
    use crate::resume::{Job, fails_with, fresh};
    let job = Job::with_recipe(
        "project_name: model_resume
dataset_path: DATA
export_path: EXPORT
work_dir: WORK
model_dir: MODELS
np: 2
executor_type: ray_partitioned
partition:
  mode: manual
  num_of_partitions: 2
checkpoint:
  strategy: every_op
process:
  - perplexity_filter:
      max_ppl: 100000
  - words_num_filter:
      tokenization: true
      min_num: 2
",
    );
    let models = job.path("models");
    std::fs::create_dir_all(&models).unwrap();
    for f in ["en.sp.model", "en.arpa.bin"] {
        std::fs::copy(repo().join("data/models").join(f), models.join(f)).unwrap();
    }
    let recipe = std::fs::read_to_string(job.recipe())
        .unwrap()
        .replace("MODELS", models.to_str().unwrap());
    std::fs::write(job.recipe(), recipe).unwrap();
    let (id, _) = fresh(&job);
    let before = job.checkpoints(&id);
    assert!(!before.is_empty());
    crate::resume::forget_completion(&job.job_dir(&id));
    // Another KenLM model under the same name.
    std::fs::copy(
        repo().join("models/kenlm/tests/fixtures/small.probing.bin"),
        models.join("en.arpa.bin"),
    )
    .unwrap();
    fails_with(
        &job.run(&["--resume", &id]),
        "Use the same config file, CLI arguments and model files for resumption",
    );
    assert_eq!(job.checkpoints(&id), before);
}
