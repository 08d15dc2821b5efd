//! `dj-job` (list, monitor, stop) and `dj-sql` on real partitioned jobs: numbers checked against
//! the run's own report, a graceful stop that leaves the job resumable, and a forced kill.

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{ok, repo, write};

/// Relative paths, run from the job's temp dir: the tools, run from elsewhere, must find the
/// input and export through the job directory.
const RECIPE: &str = "project_name: jobtools_test
dataset_path: data.jsonl
export_path: out/result.jsonl
work_dir: jobs
np: 2
executor_type: ray_partitioned
partition:
  mode: manual
  num_of_partitions: 4
  max_concurrent_partitions: 2
checkpoint:
  strategy: every_op
process:
  - whitespace_normalization_mapper:
  - text_length_filter:
      min_len: 10
  - document_deduplicator:
      lowercase: true
  - words_num_filter:
      min_num: 3
";

struct Job {
    dir: tempfile::TempDir,
}

impl Job {
    fn new() -> Job {
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(
            repo().join("tests/golden/corpus.jsonl"),
            dir.path().join("data.jsonl"),
        )
        .unwrap();
        write(&dir.path().join("recipe.yaml"), RECIPE);
        Job { dir }
    }
    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }
    fn work_dir(&self) -> String {
        self.path("jobs").display().to_string()
    }
    fn run_cmd(&self, extra: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_dj-run"));
        c.args(["--config", "recipe.yaml"])
            .args(extra)
            .current_dir(self.dir.path());
        c
    }
    /// A run with `--json`: its report.
    fn run(&self, extra: &[&str]) -> Value {
        let out = self.run_cmd(extra).arg("--json").output().unwrap();
        serde_json::from_str(&ok(&out)).unwrap()
    }
    /// A slow run (`DJ_EVENT_DELAY_MS`) in the background, once it has logged `n` events.
    fn spawn_slow(&self, id: &str, n: usize) -> Child {
        let mut child = self
            .run_cmd(&["--job_id", id])
            .env("DJ_EVENT_DELAY_MS", "200")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let dir = self.path("jobs").join(id);
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            assert!(
                child.try_wait().unwrap().is_none(),
                "the slow job ended early"
            );
            let events: usize = std::fs::read_dir(&dir)
                .into_iter()
                .flatten()
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("events_"))
                .map(|e| {
                    std::fs::read_to_string(e.path())
                        .unwrap_or_default()
                        .lines()
                        .count()
                })
                .sum();
            if events >= n && dir.join(".lock").exists() {
                return child;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {n} events"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    /// `dj-job --work_dir jobs ARGS`, from another directory.
    fn dj_job(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_dj-job"))
            .arg("--work_dir")
            .arg(self.work_dir())
            .args(args)
            .current_dir("/")
            .output()
            .unwrap()
    }
    fn dj_job_json(&self, args: &[&str]) -> Value {
        let mut a = args.to_vec();
        a.push("--json");
        serde_json::from_str(&ok(&self.dj_job(&a))).unwrap()
    }
    fn dj_sql(&self, id: &str, args: &[&str]) -> Output {
        self.dj_sql_cmd(id, args).output().unwrap()
    }
    fn dj_sql_cmd(&self, id: &str, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_dj-sql"));
        c.arg("--work_dir")
            .arg(self.work_dir())
            .arg(id)
            .args(args)
            .current_dir("/");
        c
    }
    /// A single number from `dj-sql ID "SELECT ... AS n" --format json`.
    fn count(&self, id: &str, sql: &str) -> u64 {
        let out = ok(&self.dj_sql(id, &[sql, "--format", "json"]));
        let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        v[0]["n"]
            .as_u64()
            .unwrap_or_else(|| panic!("no n in {out}"))
    }
    fn export(&self) -> String {
        std::fs::read_to_string(self.path("out/result.jsonl")).unwrap()
    }
}

fn fails_with(o: &Output, want: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        o.status.code(),
        Some(1),
        "expected exit 1, stdout: {}\nstderr: {err}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(
        err.contains(want),
        "stderr does not contain {want:?}:\n{err}"
    );
}

fn op_rows_out(report: &Value, op: usize) -> u64 {
    report["ops"][op]["rows_out"].as_u64().unwrap()
}

#[test]
fn list_monitor_and_sql_on_a_completed_job() {
    let job = Job::new();
    let report = job.run(&["--job_id", "done"]);
    let rows_out = report["rows_out"].as_u64().unwrap();
    assert_eq!(report["rows_in"], 167);
    assert!(rows_out > 0 && rows_out < 167, "{report}");

    // list
    let jobs = job.dj_job_json(&["list"]);
    let jobs = jobs.as_array().unwrap();
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    assert_eq!(jobs[0]["job_id"], "done");
    assert_eq!(jobs[0]["status"], "completed");
    assert_eq!(jobs[0]["pid"], Value::Null);
    assert_eq!(jobs[0]["stale_lock"], false);
    assert_eq!(jobs[0]["completed_partitions"], 4);
    let text = ok(&job.dj_job(&["list"]));
    assert!(
        text.contains("done") && text.contains("Status: completed"),
        "{text}"
    );

    // monitor
    let m = job.dj_job_json(&["monitor", "done"]);
    assert_eq!(m["status"], "completed");
    assert_eq!(m["runs"], 1);
    let o = &m["overall"];
    assert_eq!(o["total_partitions"], 4);
    assert_eq!(o["completed_partitions"], 4);
    assert_eq!(o["progress_percentage"], 100.0);
    assert_eq!(o["total_samples"], 167);
    assert_eq!(o["processed_samples"], 167);
    assert_eq!(o["output_rows"], rows_out);
    assert_eq!(o["estimated_remaining_seconds"], 0.0);
    assert_eq!(o["checkpoints"], 16);
    assert_eq!(o["checkpoints_on_disk"], 16);
    assert!(o["throughput_rows_per_second"].as_f64().unwrap() > 0.0);
    let parts = m["partitions"].as_array().unwrap();
    let samples: Vec<u64> = parts
        .iter()
        .map(|p| p["sample_count"].as_u64().unwrap())
        .collect();
    assert_eq!(samples, [42, 42, 42, 41]);
    for p in parts {
        assert_eq!(p["status"], "completed", "{p}");
        assert_eq!(p["completed_ops"].as_array().unwrap().len(), 4);
        assert_eq!(p["checkpoints"].as_array().unwrap().len(), 4);
        assert_eq!(p["current_op"], Value::Null);
    }
    // Per op, the partitions' rows add up to the run's report.
    for op in 0..4 {
        let sum: u64 = parts
            .iter()
            .map(|p| p["completed_ops"][op]["output_rows"].as_u64().unwrap())
            .sum();
        assert_eq!(sum, op_rows_out(&report, op), "op {op}");
    }
    let text = ok(&job.dj_job(&["monitor", "done", "--detailed"]));
    for want in [
        "Job ID: done",
        "COMPLETED",
        "100.0% (4/4 partitions)",
        "167/167 processed",
        "OPERATION DETAILS",
        "document_deduplicator",
        "checkpoint_op_0003_partition_0003.parquet",
    ] {
        assert!(text.contains(want), "{want:?} not in:\n{text}");
    }
    // --watch on a finished job shows it once and ends.
    let text = ok(&job.dj_job(&["monitor", "done", "--watch", "--interval", "0.2"]));
    assert!(text.contains("stopped watching"), "{text}");

    // SQL: checkpoints, views, export, events, input.
    assert_eq!(
        job.count("done", "SELECT count(*) AS n FROM checkpoint_op_0003"),
        rows_out
    );
    assert_eq!(
        job.count("done", "SELECT count(*) AS n FROM checkpoint_op_0001"),
        op_rows_out(&report, 1)
    );
    let p2 = parts[2]["checkpoints"][1]["rows"].as_u64().unwrap();
    assert_eq!(
        job.count(
            "done",
            "SELECT count(*) AS n FROM checkpoint_op_0001_partition_0002"
        ),
        p2
    );
    assert_eq!(
        job.count("done", "SELECT count(*) AS n FROM export"),
        rows_out
    );
    assert_eq!(
        job.count(
            "done",
            "SELECT count(*) AS n FROM events WHERE event_type = 'checkpoint_save'"
        ),
        16
    );
    assert_eq!(
        job.count(
            "done",
            "SELECT count(*) AS n FROM events WHERE event_type = 'op_complete' AND partition_id = 3"
        ),
        4
    );
    assert_eq!(job.count("done", "SELECT count(*) AS n FROM input"), 167);
    assert_eq!(
        job.count("done", "SELECT count(*) AS n FROM input_partition_0003"),
        41
    );
    // The export is the last checkpoint's rows, the partitions in order.
    assert_eq!(
        job.count(
            "done",
            "SELECT count(*) AS n FROM (SELECT text FROM export EXCEPT ALL SELECT text FROM checkpoint_op_0003)"
        ),
        0
    );
    // csv, table, several statements.
    let csv = ok(&job.dj_sql(
        "done",
        &[
            "SELECT count(*) AS n FROM export; SELECT 'a;b' AS s",
            "--format",
            "csv",
        ],
    ));
    assert_eq!(csv, format!("n\n{rows_out}\ns\na;b\n"));
    let table = ok(&job.dj_sql("done", &["SELECT count(*) AS n FROM checkpoint_op_0002"]));
    assert!(table.contains("| n "), "{table}");
    assert!(
        table.contains(&format!("| {} ", op_rows_out(&report, 2))),
        "{table}"
    );

    // Interactive, from a pipe.
    let mut child = job
        .dj_sql_cmd("done", &["--format", "csv"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            b"\\d\nSELECT count(*) AS n\n  FROM export;\nSELECT count(*) AS m FROM events\n  WHERE event_type = 'job_complete'; \\d export\n\\d export\n\\q\nSELECT 1 AS after_quit;\n",
        )
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = ok(&out);
    for want in [
        "checkpoint_op_0003_partition_0000",
        "checkpoint view",
        "events",
        "input_partition_0001",
        &format!("n\n{rows_out}\n"),
        "m\n1\n",
        "column",
        "text",
    ] {
        assert!(stdout.contains(want), "{want:?} not in:\n{stdout}");
    }
    assert!(!stdout.contains("after_quit"), "{stdout}");

    // Errors: exit 1 with the reason.
    fails_with(&job.dj_sql("done", &["SELECT nope FROM export"]), "nope");
    fails_with(
        &job.dj_sql("missing", &["SELECT 1"]),
        "Job directory not found",
    );
    fails_with(
        &job.dj_job(&["monitor", "missing"]),
        "Job directory not found",
    );
    fails_with(
        &job.dj_job(&["stop", "done"]),
        "job done is not running (no lock file; status: completed)",
    );
    fails_with(&job.dj_job(&["monitor", "../x"]), "path separators");
}

/// Arrow IPC and gzipped JSON-lines checkpoints are tables too.
#[test]
fn sql_reads_every_checkpoint_format() {
    let job = Job::new();
    for (id, format, compression) in [
        ("arrow", "arrow", "none"),
        ("gz", "jsonl", "gzip"),
        ("jsonl", "jsonl", "none"),
    ] {
        let report = job.run(&[
            "--job_id",
            id,
            "--intermediate_storage.format",
            format,
            "--intermediate_storage.compression",
            compression,
        ]);
        for op in 0..4 {
            assert_eq!(
                job.count(
                    id,
                    &format!("SELECT count(*) AS n FROM checkpoint_op_{op:04}")
                ),
                op_rows_out(&report, op),
                "{id} op {op}"
            );
        }
        assert_eq!(
            job.count(
                id,
                "SELECT count(*) AS n FROM checkpoint_op_0000_partition_0000"
            ),
            42,
            "{id}"
        );
        // The filter's stats struct is queryable: every kept row has text_len >= min_len.
        assert_eq!(
            job.count(
                id,
                "SELECT count(*) AS n FROM checkpoint_op_0001 WHERE get_field(__dj__stats__, 'text_len') >= 10"
            ),
            op_rows_out(&report, 1),
            "{id}"
        );
    }
}

fn status_of(v: &Value) -> &str {
    v["status"].as_str().unwrap()
}

#[test]
fn stop_a_running_job_gracefully_then_resume_and_force_kill() {
    use std::os::unix::process::ExitStatusExt;
    let job = Job::new();
    job.run(&["--job_id", "reference"]);
    let want = job.export();

    // Graceful stop of a slow running job.
    let child = job.spawn_slow("slow", 6);
    let m = job.dj_job_json(&["monitor", "slow"]);
    assert_eq!(status_of(&m), "running", "{m}");
    assert_eq!(m["pid"], child.id());
    assert!(m["overall"]["completed_partitions"].as_u64().unwrap() < 4);
    let listed = job.dj_job_json(&["list"]);
    let slow = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["job_id"] == "slow")
        .unwrap();
    assert_eq!(status_of(slow), "running");
    assert_eq!(slow["pid"], child.id());
    // A watcher redraws until the job ends.
    let watcher = Command::new(env!("CARGO_BIN_EXE_dj-job"))
        .args(["--work_dir", &job.work_dir(), "monitor", "slow", "--watch"])
        .args(["--interval", "0.2"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));

    let r = job.dj_job_json(&["stop", "slow", "--timeout", "60"]);
    assert_eq!(r["success"], true, "{r}");
    assert_eq!(r["signal"], "SIGTERM");
    assert_eq!(r["process_exited"], true);
    assert_eq!(r["lock_released"], true);
    assert_eq!(
        r["stale_lock_removed"], false,
        "the run released its own lock"
    );
    assert_eq!(r["stop_event_logged"], true);
    assert_eq!(status_of(&r), "stopped");
    assert_eq!(r["resumable"], true);
    assert!(
        r["resume_command"]
            .as_str()
            .unwrap()
            .ends_with("--resume slow"),
        "{r}"
    );
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("interrupted by SIGTERM"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!job.path("jobs/slow/.lock").exists());
    let watched = watcher.wait_with_output().unwrap();
    let watched = ok(&watched);
    assert!(
        watched.matches("DataJuicer Job Progress Monitor").count() >= 2,
        "{watched}"
    );
    assert!(
        watched.contains("Job slow is stopped: stopped watching."),
        "{watched}"
    );
    let m = job.dj_job_json(&["monitor", "slow"]);
    assert_eq!(status_of(&m), "stopped");
    assert_eq!(m["pid"], Value::Null);
    fails_with(&job.dj_job(&["stop", "slow"]), "job slow is not running");
    // Resumable: --resume finishes it to the uninterrupted export.
    ok(&job.run_cmd(&["--resume", "slow"]).output().unwrap());
    assert_eq!(job.export(), want);
    let m = job.dj_job_json(&["monitor", "slow"]);
    assert_eq!(status_of(&m), "completed");
    assert_eq!(m["runs"], 2);
    assert_eq!(m["overall"]["progress_percentage"], 100.0);

    // --force kills at once; the stale lock goes and the stop is logged.
    let mut child = job.spawn_slow("forced", 6);
    let pid = child.id();
    let r = job.dj_job_json(&["stop", "forced", "--force"]);
    assert_eq!(r["success"], true, "{r}");
    assert_eq!(r["signal"], "SIGKILL");
    assert_eq!(r["pid"], pid);
    assert_eq!(r["stale_lock_removed"], true);
    assert_eq!(r["stop_event_logged"], true);
    assert_eq!(status_of(&r), "stopped");
    assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
    assert!(!job.path("jobs/forced/.lock").exists());
    let text = ok(&job.dj_job(&["monitor", "forced"]));
    assert!(
        text.contains("STOPPED") && text.contains("--resume forced"),
        "{text}"
    );
    ok(&job.run_cmd(&["--resume", "forced"]).output().unwrap());
    assert_eq!(job.export(), want);
    assert_eq!(
        status_of(&job.dj_job_json(&["monitor", "forced"])),
        "completed"
    );
}
