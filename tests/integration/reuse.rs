//! Reuse across jobs: a new job in the same `work_dir` starts each partition from an earlier
//! job's checkpoint when its input and leading ops are the same, and only then; its export is
//! always a fresh run's.

use std::process::Command;

use crate::common::{ok, write};
use crate::resume::{Job, RECIPE, events, kill_9_after_event};

/// The export of `recipe` (with `extra` flags) run from scratch in a directory of its own, with
/// reuse turned off.
fn fresh_export(recipe: &str, data: Option<&[u8]>, extra: &[&str]) -> String {
    let job = Job::with_recipe(recipe);
    if let Some(data) = data {
        std::fs::write(job.path("data.jsonl"), data).unwrap();
    }
    let out = ok(&job.run(&[extra, &["--checkpoint.reuse", "false"]].concat()));
    assert!(!out.contains("reused"), "{out}");
    job.export()
}

fn reused_lines(out: &str) -> Vec<&str> {
    out.lines()
        .filter(|l| l.contains(" reused from job "))
        .collect()
}

/// Tightening the last filter's threshold reuses every partition's checkpoint after that filter,
/// read in place, and applies only the new bound to the saved stat; loosening it reuses the
/// checkpoints of the op before. The job records where each came from, and exports what a fresh
/// run exports.
#[test]
fn a_threshold_change_on_the_last_op_reuses_the_rest() {
    let job = Job::new();
    ok(&job.run(&["--job_id", "first"]));
    let first_files = job.checkpoints("first");
    let out = ok(&job.run(&["--job_id", "second", "--words_num_filter.min_num", "5"]));
    assert_eq!(
        reused_lines(&out),
        [
            "ops 1-3 and op 4's stat (words_num_filter, only its new bounds applied) reused from job first for 4/4 partitions"
        ],
        "{out}"
    );
    let loads: Vec<serde_json::Value> = events(&job.job_dir("second"))
        .into_iter()
        .filter(|e| e["event_type"] == "checkpoint_load")
        .collect();
    assert_eq!(loads.len(), 4);
    for e in &loads {
        assert_eq!(e["metadata"]["source_job"], "first", "{e}");
        assert_eq!(e["operation_idx"], 3, "{e}");
        assert!(
            e["checkpoint_path"]
                .as_str()
                .unwrap()
                .contains("jobs/first/checkpoints/"),
            "{e}"
        );
    }
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(job.job_dir("second").join("job_summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(summary["reused_checkpoints"].as_array().unwrap().len(), 4);
    // Only the changed op's bound ran: its checkpoints are the job's own, with the dedup keys.
    let own: Vec<String> = job
        .checkpoints("second")
        .into_keys()
        .filter(|n| n.starts_with("checkpoint_op_"))
        .filter(|n| !n.ends_with(".blake3"))
        .collect();
    assert!(
        own.iter().all(|n| n.starts_with("checkpoint_op_0003_")),
        "{own:?}"
    );
    assert_eq!(own.len(), 4);
    // The source's files are untouched.
    assert_eq!(job.checkpoints("first"), first_files);
    let want = fresh_export(RECIPE, None, &["--words_num_filter.min_num", "5"]);
    assert_eq!(job.export(), want);
    // Looser: the rows the old bound removed are needed, so the stat is computed again.
    let out = ok(&job.run(&["--job_id", "looser", "--words_num_filter.min_num", "1"]));
    assert_eq!(
        reused_lines(&out),
        ["ops 1-3 (through document_deduplicator) reused from job first for 4/4 partitions"],
        "{out}"
    );
    assert_eq!(
        job.export(),
        fresh_export(RECIPE, None, &["--words_num_filter.min_num", "1"])
    );
    // `dj-plan explain` shows the reuse before a run.
    let explain = Command::new(env!("CARGO_BIN_EXE_dj-plan"))
        .args(["explain", &job.recipe(), "--words_num_filter.min_num", "6"])
        .current_dir(job.dir.path())
        .output()
        .unwrap();
    let text = ok(&explain);
    assert!(
        text.contains(
            "reuse (checkpoints of earlier jobs, verified):\n  ops 1-3 and op 4's stat (words_num_filter, only its new bounds applied) reused from job first for 4/4 partitions\n"
        ),
        "{text}"
    );
}

/// Every difference strict resume would refuse prevents reuse of what it affects: a changed
/// input row (its partition only), an earlier op's parameter (reuse stops before it), the op
/// order and the checkpoint format (nothing is reused). The exports are always fresh runs'.
#[test]
fn mismatches_prevent_reuse() {
    // One byte of partition 0's first row.
    let job = Job::new();
    ok(&job.run(&["--job_id", "first"]));
    let data = std::fs::read(job.path("data.jsonl")).unwrap();
    let mut changed = data.clone();
    let at = changed.iter().position(|&b| b == b'a').unwrap();
    changed[at] = b'b';
    std::fs::write(job.path("data.jsonl"), &changed).unwrap();
    let out = ok(&job.run(&["--job_id", "changed_input"]));
    assert_eq!(
        reused_lines(&out),
        ["ops 1-4 (through words_num_filter) reused from job first for 3/4 partitions"],
        "{out}"
    );
    assert_eq!(job.export(), fresh_export(RECIPE, Some(&changed), &[]));

    // An earlier op's parameter: only the ops before it.
    let job = Job::new();
    ok(&job.run(&["--job_id", "first"]));
    let out = ok(&job.run(&[
        "--job_id",
        "param",
        "--document_deduplicator.lowercase",
        "false",
    ]));
    assert_eq!(
        reused_lines(&out),
        ["ops 1-2 (through text_length_filter) reused from job first for 4/4 partitions"],
        "{out}"
    );
    assert_eq!(
        job.export(),
        fresh_export(
            RECIPE,
            None,
            &["--document_deduplicator.lowercase", "false"]
        )
    );
    // A tighter bound of an earlier filter: its saved stat, then the ops after it.
    let out = ok(&job.run(&["--job_id", "tighter", "--text_length_filter.min_len", "30"]));
    assert_eq!(
        reused_lines(&out),
        [
            "op 1 and op 2's stat (text_length_filter, only its new bounds applied) reused from job first for 4/4 partitions"
        ],
        "{out}"
    );
    assert_eq!(
        job.export(),
        fresh_export(RECIPE, None, &["--text_length_filter.min_len", "30"])
    );

    // The checkpoint format.
    let out = ok(&job.run(&[
        "--job_id",
        "format",
        "--intermediate_storage.format",
        "jsonl",
    ]));
    assert!(reused_lines(&out).is_empty(), "{out}");

    // The op order: the first two ops swapped.
    let swapped = RECIPE.replace(
        "  - whitespace_normalization_mapper:\n  - text_length_filter:\n      min_len: 10\n",
        "  - text_length_filter:\n      min_len: 10\n  - whitespace_normalization_mapper:\n",
    );
    assert_ne!(swapped, RECIPE);
    let text = std::fs::read_to_string(job.path("recipe.yaml"))
        .unwrap()
        .replace(
            "  - whitespace_normalization_mapper:\n  - text_length_filter:\n      min_len: 10\n",
            "  - text_length_filter:\n      min_len: 10\n  - whitespace_normalization_mapper:\n",
        );
    write(&job.path("swapped.yaml"), &text);
    let out = ok(&Command::new(env!("CARGO_BIN_EXE_dj-run"))
        .args(["--config", "swapped.yaml", "--job_id", "swapped"])
        .current_dir(job.dir.path())
        .output()
        .unwrap());
    assert!(reused_lines(&out).is_empty(), "{out}");
    assert_eq!(job.export(), fresh_export(&swapped, None, &[]));
}

/// A job killed part-way lends the checkpoints it saved; the new job exports what a fresh run
/// exports.
#[test]
fn a_killed_job_lends_what_it_saved() {
    let reference = Job::new();
    ok(&reference.run(&["--job_id", "reference"]));
    let total = events(&reference.job_dir("reference")).len();
    let job = Job::new();
    kill_9_after_event(&job, "killed", total * 2 / 3, total);
    let out = ok(&job.run(&["--job_id", "next"]));
    assert!(
        reused_lines(&out)
            .iter()
            .all(|l| l.contains("reused from job killed for ")),
        "{out}"
    );
    assert!(!reused_lines(&out).is_empty(), "{out}");
    assert_eq!(job.export(), reference.export());
}
