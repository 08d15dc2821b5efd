//! The partitioned executor: job directory, partitioning metadata, events, checkpoints, strict
//! resume and its refusals (which must leave every checkpoint byte-for-byte unchanged), locks,
//! and kill -9 / SIGTERM at many moments followed by a resume that gives the uninterrupted export.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{ok, repo, write};

pub(crate) const RECIPE: &str = "project_name: resume_test
dataset_path: DATA
export_path: EXPORT
work_dir: WORK
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

pub(crate) struct Job {
    pub(crate) dir: tempfile::TempDir,
}

impl Job {
    pub(crate) fn new() -> Job {
        Job::with_recipe(RECIPE)
    }
    pub(crate) fn with_recipe(recipe: &str) -> Job {
        Job::with_corpus(recipe, "tests/golden/corpus.jsonl")
    }
    /// A job over a copy of the repository's `corpus` (as `data.jsonl`).
    pub(crate) fn with_corpus(recipe: &str, corpus: &str) -> Job {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data.jsonl");
        std::fs::copy(repo().join(corpus), &data).unwrap();
        let text = recipe
            .replace("DATA", data.to_str().unwrap())
            .replace(
                "EXPORT",
                dir.path().join("out/result.jsonl").to_str().unwrap(),
            )
            .replace("WORK", dir.path().join("jobs").to_str().unwrap());
        write(&dir.path().join("recipe.yaml"), &text);
        Job { dir }
    }
    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }
    pub(crate) fn recipe(&self) -> String {
        self.path("recipe.yaml").display().to_string()
    }
    pub(crate) fn run(&self, extra: &[&str]) -> std::process::Output {
        self.command(extra).output().unwrap()
    }
    pub(crate) fn command(&self, extra: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_dj-run"));
        c.arg("--config")
            .arg(self.recipe())
            .args(extra)
            .current_dir(self.dir.path());
        c
    }
    pub(crate) fn job_dir(&self, id: &str) -> PathBuf {
        self.path("jobs").join(id)
    }
    pub(crate) fn export(&self) -> String {
        std::fs::read_to_string(self.path("out/result.jsonl")).unwrap()
    }
    pub(crate) fn checkpoints(&self, id: &str) -> BTreeMap<String, Vec<u8>> {
        let dir = self.job_dir(id).join("checkpoints");
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file())
            .map(|p| {
                (
                    p.file_name().unwrap().to_string_lossy().into_owned(),
                    std::fs::read(&p).unwrap(),
                )
            })
            .collect()
    }
}

pub(crate) fn fails_with(o: &std::process::Output, want: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success(),
        "expected failure, stdout: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(
        err.contains(want),
        "stderr does not contain {want:?}:\n{err}"
    );
}

pub(crate) fn events(dir: &Path) -> Vec<serde_json::Value> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("events_")
        })
        .collect();
    files.sort();
    files
        .iter()
        .flat_map(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Drops the `job_complete` events of a finished job: it looks like one that stopped after its
/// last checkpoint, so a resume gets past the completion check.
pub(crate) fn forget_completion(dir: &Path) {
    for f in std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()) {
        if f.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("events_")
        {
            let text = std::fs::read_to_string(&f).unwrap();
            let kept: String = text
                .lines()
                .filter(|l| !l.contains("job_complete"))
                .map(|l| format!("{l}\n"))
                .collect();
            std::fs::write(&f, kept).unwrap();
        }
    }
}

/// A fresh run: its token, and the uninterrupted export.
pub(crate) fn fresh(job: &Job) -> (String, String) {
    let out = ok(&job.run(&[]));
    let token = out
        .lines()
        .find_map(|l| l.strip_prefix("Resume token: "))
        .and_then(|l| l.split('.').next())
        .expect("a resume token is printed")
        .to_string();
    assert!(out.contains(&format!("--resume {token}")), "{out}");
    (token, job.export())
}

#[test]
fn fresh_run_lays_out_the_job_directory() {
    let job = Job::new();
    let (id, export) = fresh(&job);
    assert_eq!(id.len(), "20260805_115141_81270d".len());
    assert!(
        id.chars().nth(8) == Some('_') && id.chars().nth(15) == Some('_'),
        "{id}"
    );
    let dir = job.job_dir(&id);
    for f in [
        "job_summary.json",
        "dag_execution_plan.json",
        "recipe.yaml",
        "cli.yaml",
        "metadata/dataset_mapping.json",
        "partitions/partition_0003.json",
    ] {
        assert!(dir.join(f).exists(), "{f} missing");
    }
    assert!(!dir.join(".lock").exists(), "lock released at exit");
    let info: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("checkpoints/partitioning_info.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(info["num_partitions"], 4);
    assert_eq!(info["total_rows"], 167);
    assert_eq!(info["hash_algorithm"], "blake3-rows-v1");
    let bounds: Vec<(u64, u64)> = info["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["start_row"].as_u64().unwrap(),
                p["end_row"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(bounds, [(0, 42), (42, 84), (84, 126), (126, 167)]);
    let ckpts = job.checkpoints(&id);
    for op in 0..4 {
        for p in 0..4 {
            assert!(
                ckpts.contains_key(&format!("checkpoint_op_{op:04}_partition_{p:04}.parquet")),
                "op {op} partition {p}"
            );
        }
    }
    let ev = events(&dir);
    let kinds: Vec<&str> = ev
        .iter()
        .map(|e| e["event_type"].as_str().unwrap())
        .collect();
    for k in [
        "job_start",
        "partition_start",
        "op_start",
        "op_complete",
        "checkpoint_save",
        "partition_complete",
        "job_complete",
    ] {
        assert!(kinds.contains(&k), "no {k} event in {kinds:?}");
    }
    assert_eq!(
        kinds.iter().filter(|k| **k == "checkpoint_save").count(),
        16
    );
    assert!(
        ev.iter()
            .all(|e| e["job_id"] == id.as_str() && e["timestamp"].is_f64())
    );
    // Per-op durations are measured (not the partition's time split evenly): within each
    // partition they differ and add up to no more than the partition's time.
    let partitions: std::collections::BTreeSet<i64> = ev
        .iter()
        .filter_map(|e| e["partition_id"].as_i64())
        .collect();
    for p in partitions {
        let of = |kind: &str| -> Vec<f64> {
            ev.iter()
                .filter(|e| e["event_type"] == kind && e["partition_id"] == p)
                .map(|e| e["duration"].as_f64().unwrap())
                .collect()
        };
        let (ops, total) = (of("op_complete"), of("partition_complete"));
        assert!(ops.len() > 1 && total.len() == 1, "partition {p}");
        assert!(ops.iter().any(|d| *d != ops[0]), "partition {p}: {ops:?}");
        assert!(
            ops.iter().sum::<f64>() <= total[0] + 1e-3,
            "partition {p}: {ops:?} > {total:?}"
        );
    }
    // The partitioned export equals the plain executor's on the same recipe.
    let plain = job.path("plain.jsonl");
    ok(&job.run(&[
        "--executor_type",
        "default",
        "--export_path",
        plain.to_str().unwrap(),
    ]));
    assert_eq!(std::fs::read_to_string(plain).unwrap(), export);
    // A completed job is not run again.
    let out = ok(&job.run(&["--resume", &id]));
    assert!(
        out.contains(&format!("Job {id} is already completed - nothing to do")),
        "{out}"
    );
}

/// Checkpoints of later ops removed, as if the job had died: resume finishes the same export,
/// loading each partition's newest checkpoint and not recomputing finished partitions.
#[test]
fn resume_runs_only_unfinished_work() {
    let job = Job::new();
    let (id, export) = fresh(&job);
    let dir = job.job_dir(&id);
    for f in std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()) {
        if f.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("events_")
        {
            std::fs::remove_file(f).unwrap(); // forget the job_complete
        }
    }
    write(
        &dir.join("events_20000101_000000.jsonl"),
        "{\"event_type\": \"job_start\"}\n",
    );
    let ck = dir.join("checkpoints");
    // Partition 0 is finished; 1 stopped after the dedup (op 2); 2 after op 0; 3 never started.
    for (op, p) in [
        (3, 1),
        (3, 2),
        (2, 2),
        (1, 2),
        (3, 3),
        (2, 3),
        (1, 3),
        (0, 3),
    ] {
        std::fs::remove_file(ck.join(format!("checkpoint_op_{op:04}_partition_{p:04}.parquet")))
            .unwrap();
    }
    std::fs::remove_file(ck.join("dedup_keys_op_0002_partition_0003.bin")).unwrap();
    std::fs::remove_file(job.path("out/result.jsonl")).unwrap();
    ok(&job.run(&["--resume", &id]));
    assert_eq!(job.export(), export);
    assert_eq!(
        partition_ops(&dir, "checkpoint_load"),
        [(0, 3), (1, 2), (2, 0)]
    );
    let started = partition_ops(&dir, "op_start");
    assert!(
        !started.iter().any(|(p, _)| *p == 0),
        "finished partition 0 was recomputed: {started:?}"
    );
    assert!(
        started.contains(&(1, 3)) && !started.contains(&(1, 2)),
        "{started:?}"
    );
    assert!(started.contains(&(3, 0)), "{started:?}");
}

#[test]
fn strict_resume_refusals_leave_checkpoints_unchanged() {
    let job = Job::new();
    let (id, _) = fresh(&job);
    let dir = job.job_dir(&id);
    forget_completion(&dir);
    let before = job.checkpoints(&id);
    let unchanged = |what: &str| {
        assert!(
            job.checkpoints(&id) == before,
            "{what}: checkpoints changed"
        )
    };
    let info_path = dir.join("checkpoints/partitioning_info.json");
    let info = std::fs::read_to_string(&info_path).unwrap();

    fails_with(
        &job.run(&["--resume", "no_such_job"]),
        "Unable to resume job no_such_job: no job directory",
    );
    fails_with(
        &job.run(&["--resume", &id, "--job_id", "other"]),
        "--resume and --job_id must refer to the same job",
    );
    fails_with(
        &job.run(&["--resume", "../x"]),
        "must not contain path separators or '..'",
    );
    fails_with(
        &job.run(&["--resume", &id, "--executor_type", "default"]),
        "--resume is only supported by the ray_partitioned executor",
    );
    unchanged("bad arguments");

    // The recipe changed.
    let recipe = std::fs::read_to_string(job.recipe()).unwrap();
    std::fs::write(job.recipe(), recipe.replace("min_len: 10", "min_len: 11")).unwrap();
    fails_with(
        &job.run(&["--resume", &id]),
        "Config validation failed - configurations don't match: [config]",
    );
    std::fs::write(job.recipe(), &recipe).unwrap();
    fails_with(
        &job.run(&["--resume", &id, "--np", "3"]),
        "[cli] arguments differ",
    );
    unchanged("recipe changed");

    // The input changed: one row edited (same row count), then one row fewer.
    let data = job.path("data.jsonl");
    let original = std::fs::read_to_string(&data).unwrap();
    std::fs::write(
        &data,
        original.replacen("quick brown fox", "quick brown cat", 1),
    )
    .unwrap();
    fails_with(
        &job.run(&["--resume", &id]),
        "content hashes do not match the current input",
    );
    fails_with(&job.run(&["--resume", &id]), "partition 0 (rows [0, 42))");
    let fewer: String = original.lines().skip(1).map(|l| format!("{l}\n")).collect();
    std::fs::write(&data, fewer).unwrap();
    fails_with(
        &job.run(&["--resume", &id]),
        "The input changed: it has 166 rows now, the job was started on 167 rows",
    );
    std::fs::write(&data, &original).unwrap();
    unchanged("input changed");

    // Metadata: invalid boundaries, an older format without hashes, missing.
    let mut v: serde_json::Value = serde_json::from_str(&info).unwrap();
    v["partitions"][2]["start_row"] = 85.into();
    std::fs::write(&info_path, serde_json::to_string(&v).unwrap()).unwrap();
    fails_with(
        &job.run(&["--resume", &id]),
        "Saved row boundaries are invalid for partition 2: start=85",
    );
    let mut v: serde_json::Value = serde_json::from_str(&info).unwrap();
    for p in v["partitions"].as_array_mut().unwrap() {
        p.as_object_mut().unwrap().remove("content_hash");
    }
    v["hash_algorithm"] = "blake3-rows-v1".into();
    std::fs::write(&info_path, serde_json::to_string(&v).unwrap()).unwrap();
    fails_with(
        &job.run(&["--resume", &id]),
        "requires content hashes and row boundaries created by this version",
    );
    std::fs::remove_file(&info_path).unwrap();
    fails_with(
        &job.run(&["--resume", &id]),
        "Explicit resume requires saved partitioning_info.json",
    );
    let mut expect = before.clone();
    expect.remove("partitioning_info.json");
    assert!(
        job.checkpoints(&id) == expect,
        "metadata errors: checkpoints changed"
    );
}

#[test]
fn a_running_job_is_refused_and_a_stale_lock_taken_over() {
    let job = Job::new();
    let dir = job.job_dir("locked");
    write(&dir.join(".lock"), &std::process::id().to_string());
    fails_with(
        &job.run(&["--job_id", "locked"]),
        &format!(
            "job locked is already running (process {}, lock",
            std::process::id()
        ),
    );
    let mut dead = Command::new("true").spawn().unwrap();
    let pid = dead.id();
    dead.wait().unwrap();
    write(&dir.join(".lock"), &pid.to_string());
    ok(&job.run(&["--job_id", "locked"]));
    assert!(!dir.join(".lock").exists());
    // A lock whose pid now belongs to a process younger than the lock (the pid was reused after
    // the job died) is stale for dj-run as for dj-job.
    let mut younger = Command::new("sleep").arg("30").spawn().unwrap();
    write(&dir.join(".lock"), &younger.id().to_string());
    let touched = Command::new("touch")
        .args(["-d", "1 hour ago"])
        .arg(dir.join(".lock"))
        .status()
        .unwrap();
    assert!(touched.success());
    ok(&job.run(&["--job_id", "locked"]));
    younger.kill().unwrap();
    younger.wait().unwrap();
}

pub(crate) fn wait_for_events(dir: &Path, n: usize, child: &mut std::process::Child) -> bool {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        let count = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with("events_"))
            .map(|e| {
                std::fs::read_to_string(e.path())
                    .unwrap_or_default()
                    .lines()
                    .count()
            })
            .sum::<usize>();
        if count >= n {
            return true;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    panic!("timed out waiting for {n} events");
}

/// (partition, op) of every `event_type` event of a job, in log order.
pub(crate) fn partition_ops(dir: &Path, event_type: &str) -> Vec<(u64, u64)> {
    events(dir)
        .iter()
        .filter(|e| e["event_type"] == event_type)
        .map(|e| {
            (
                e["partition_id"].as_u64().unwrap(),
                e["operation_idx"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Starts `job` as `id`, kill -9s it right after its `n`-th event (of the reference run's
/// `total`) and waits for it; fails if the job ended before, as nothing would be tested.
pub(crate) fn kill_9_after_event(job: &Job, id: &str, n: usize, total: usize) {
    let mut child = job
        .command(&["--job_id", id])
        .env("DJ_EVENT_DELAY_MS", "15")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        wait_for_events(&job.job_dir(id), n, &mut child),
        "the job ended before its event {n} (of {total}): nothing was killed"
    );
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
}

/// kill -9 after the n-th event, for n across the whole run, then resume: the export is always
/// the uninterrupted one, rows and order.
#[test]
fn kill_9_at_many_moments_then_resume_gives_the_same_export() {
    let reference = Job::new();
    let (_, want) = fresh(&reference);
    let reference_dir = reference.job_dir(
        &std::fs::read_dir(reference.path("jobs"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .file_name()
            .to_string_lossy(),
    );
    let total = events(&reference_dir).len();
    assert!(
        partition_hashes(&reference_dir)
            .iter()
            .all(|h| h.len() == 64)
    );
    let moments: Vec<usize> = (1..total).step_by((total / 12).max(1)).collect();
    assert!(moments.len() >= 8, "{total} events");
    for n in moments {
        let job = Job::new();
        let id = format!("kill_{n}");
        kill_9_after_event(&job, &id, n, total);
        let info_path = job.job_dir(&id).join("checkpoints/partitioning_info.json");
        if let Ok(text) = std::fs::read_to_string(&info_path) {
            checkpoints_have_hashes(&job.job_dir(&id), &text, n);
        }
        saved_files_verify(&job.job_dir(&id), n);
        let out = job.run(&["--resume", &id]);
        ok(&out);
        assert_eq!(job.export(), want, "after kill at event {n}");
        assert_eq!(
            partition_hashes(&job.job_dir(&id)),
            partition_hashes(&reference_dir),
            "after kill at event {n}: every partition hashed, as in an uninterrupted run"
        );
    }
}

/// The saved content hashes of a job's partitions.
pub(crate) fn partition_hashes(job_dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(job_dir.join("checkpoints/partitioning_info.json")).unwrap();
    let info: serde_json::Value = serde_json::from_str(&text).unwrap();
    info["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["content_hash"].as_str().unwrap().to_string())
        .collect()
}

/// A kill at any instant leaves every checkpoint, key and value file in place whole and sealed:
/// its seal was durable before it was renamed into place.
pub(crate) fn saved_files_verify(job_dir: &Path, moment: usize) {
    let Ok(entries) = std::fs::read_dir(job_dir.join("checkpoints")) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let saved = name.starts_with("checkpoint_op_")
            || name.starts_with("dedup_keys_op_")
            || name.starts_with("select_values_op_");
        if !saved || name.ends_with(".blake3") {
            continue;
        }
        let seal = std::fs::read(format!("{}.blake3", path.display()))
            .unwrap_or_else(|_| panic!("kill at event {moment}: {name} in place without a seal"));
        let seal: serde_json::Value = serde_json::from_slice(&seal).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(seal["size"], bytes.len(), "kill at event {moment}: {name}");
        assert_eq!(
            seal["blake3"],
            blake3::hash(&bytes).to_hex().to_string(),
            "kill at event {moment}: {name}"
        );
    }
}

/// Hashes are recorded while partitions are processed, before their checkpoints: a partition
/// with a checkpoint file always has its hash saved.
fn checkpoints_have_hashes(job_dir: &Path, info: &str, moment: usize) {
    let info: serde_json::Value = serde_json::from_str(info).unwrap();
    for entry in std::fs::read_dir(job_dir.join("checkpoints")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let Some(p) = name
            .strip_prefix("checkpoint_op_")
            .and_then(|r| r.split("_partition_").nth(1))
            .and_then(|r| r.get(..4))
            .and_then(|r| r.parse::<usize>().ok())
        else {
            continue;
        };
        assert_ne!(
            info["partitions"][p]["content_hash"], "",
            "kill at event {moment}: {name} exists but partition {p} has no saved hash"
        );
    }
}

#[test]
fn sigterm_stops_gracefully_and_the_job_resumes() {
    let reference = Job::new();
    let (_, want) = fresh(&reference);
    let job = Job::new();
    let mut child = job
        .command(&["--job_id", "term"])
        .env("DJ_EVENT_DELAY_MS", "15")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(wait_for_events(&job.job_dir("term"), 20, &mut child));
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    fails_with(
        &out,
        "interrupted by SIGTERM; the job is resumable with --resume term",
    );
    let ev = events(&job.job_dir("term"));
    let last = ev.last().unwrap();
    assert_eq!(last["event_type"], "job_failed");
    assert_eq!(last["status"], "stopped");
    assert!(!job.job_dir("term").join(".lock").exists());
    ok(&job.run(&["--resume", "term"]));
    assert_eq!(job.export(), want);
}

/// Every intermediate storage format and compression checkpoints, resumes from its own files and
/// gives the same export; `cleanup_all` removes the checkpoints after success.
#[test]
fn storage_formats_resume_and_retention() {
    let reference = Job::new();
    let (_, want) = fresh(&reference);
    for (format, compression, ext) in [
        ("arrow", "none", "arrow"),
        ("jsonl", "gzip", "jsonl.gz"),
        ("jsonl", "none", "jsonl"),
        ("parquet", "gzip", "parquet"),
    ] {
        let job = Job::new();
        let id = format!("fmt_{format}_{compression}");
        let args = [
            "--job_id",
            id.as_str(),
            "--intermediate_storage.format",
            format,
            "--intermediate_storage.compression",
            compression,
        ];
        ok(&job.run(&args));
        assert_eq!(job.export(), want, "{format}/{compression}");
        let ck = job.job_dir(&id).join("checkpoints");
        let name =
            |op: usize, p: usize| ck.join(format!("checkpoint_op_{op:04}_partition_{p:04}.{ext}"));
        assert!(name(3, 0).exists(), "{format}/{compression}");
        // Drop the last two ops' checkpoints of partition 1 and the completion, then resume.
        std::fs::remove_file(name(3, 1)).unwrap();
        std::fs::remove_file(name(2, 1)).unwrap();
        forget_completion(&job.job_dir(&id));
        let mut resume = vec!["--resume", id.as_str()];
        resume.extend_from_slice(&args[2..]);
        ok(&job.run(&resume));
        assert_eq!(job.export(), want, "{format}/{compression} after resume");
    }
    let job = Job::new();
    ok(&job.run(&[
        "--job_id",
        "clean",
        "--intermediate_storage.retention_policy",
        "cleanup_all",
    ]));
    let left: Vec<String> = job.checkpoints("clean").into_keys().collect();
    assert_eq!(left, ["partitioning_info.json"]);
}

/// `--job_id` alone is Data-Juicer's soft path: a rerun with a changed recipe clears the
/// mismatched checkpoints and starts fresh instead of failing.
#[test]
fn legacy_job_id_rerun_clears_mismatched_checkpoints() {
    let job = Job::new();
    ok(&job.run(&["--job_id", "legacy"]));
    let before = job.checkpoints("legacy");
    let recipe = std::fs::read_to_string(job.recipe()).unwrap();
    std::fs::write(job.recipe(), recipe.replace("min_num: 3", "min_num: 4")).unwrap();
    let out = job.run(&["--job_id", "legacy"]);
    ok(&out);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("clearing checkpoints and starting fresh")
    );
    let after = job.checkpoints("legacy");
    assert_ne!(
        after["checkpoint_op_0003_partition_0000.parquet"],
        before["checkpoint_op_0003_partition_0000.parquet"]
    );
    // Unchanged recipe: the saved checkpoints are reused as they are.
    ok(&job.run(&["--job_id", "legacy"]));
    assert!(job.checkpoints("legacy") == after);
}

/// A partition that fails (here: its checkpoint cannot be renamed into place) is reported as
/// op_failed, partition_failed and job_failed, and the run exits non-zero.
#[test]
fn a_failing_partition_is_logged_and_fails_the_job() {
    let job = Job::new();
    let blocker = job
        .job_dir("fail")
        .join("checkpoints/checkpoint_op_0001_partition_0002.parquet");
    std::fs::create_dir_all(blocker.join("x")).unwrap();
    fails_with(
        &job.run(&["--job_id", "fail"]),
        "checkpoint_op_0001_partition_0002.parquet",
    );
    let ev = events(&job.job_dir("fail"));
    let of = |kind: &str| {
        ev.iter()
            .filter(|e| e["event_type"] == kind)
            .collect::<Vec<_>>()
    };
    assert!(
        of("partition_failed")
            .iter()
            .any(|e| e["partition_id"] == 2 && e["status"] == "failed")
    );
    assert!(of("op_failed").iter().any(|e| e["partition_id"] == 2));
    assert_eq!(of("job_failed").len(), 1);
    assert!(of("job_complete").is_empty());
    assert!(!job.path("out/result.jsonl").exists());
}

/// `max_concurrent_partitions` really bounds how many partitions run at once.
#[test]
fn max_concurrent_partitions_is_enforced() {
    for (setting, np, want) in [
        ("1", "2", 1),
        ("3", "4", 3),
        ("auto", "2", 2),
        ("auto", "8", 4),
    ] {
        let job = Job::new();
        let recipe = crate::common::load(
            Path::new(&job.recipe()),
            &[
                ("partition.num_of_partitions", "8"),
                ("partition.max_concurrent_partitions", setting),
                ("np", np),
                ("checkpoint.strategy", "disabled"),
            ],
        );
        // Respected by every run; reached by one of a few: after the dedup barrier all eight
        // partitions ask for a permit at once, but on a loaded machine the first ones can finish
        // their little work before the last ones are polled.
        let mut peaks = Vec::new();
        for _ in 0..5 {
            let report = crate::common::run_recipe(&recipe);
            assert_eq!(report.concurrency_limit, want, "{setting} with np {np}");
            assert!(
                report.peak_concurrency <= want,
                "{setting} with np {np}: {} partitions ran at once",
                report.peak_concurrency
            );
            peaks.push(report.peak_concurrency);
            if report.peak_concurrency == want {
                break;
            }
        }
        assert_eq!(
            peaks.last(),
            Some(&want),
            "{setting} with np {np}: the most partitions that ran at once, run by run"
        );
    }
}

/// Content hashes do not depend on how rows are spread over files or batches, and change with
/// row order.
#[test]
fn content_hashes_follow_rows_not_files() {
    let hashes = |job: &Job, id: &str| partition_hashes(&job.job_dir(id));
    let one = Job::new();
    ok(&one.run(&["--job_id", "h"]));
    let corpus = std::fs::read_to_string(one.path("data.jsonl")).unwrap();
    let lines: Vec<&str> = corpus.lines().collect();

    let split = Job::new();
    let dir = split.path("parts");
    write(&dir.join("a.jsonl"), &(lines[..50].join("\n") + "\n"));
    write(&dir.join("b.jsonl"), &(lines[50..].join("\n") + "\n"));
    ok(&split.run(&["--job_id", "h", "--dataset_path", dir.to_str().unwrap()]));
    assert_eq!(hashes(&one, "h"), hashes(&split, "h"));

    let swapped = Job::new();
    let mut reordered = lines.clone();
    reordered.swap(0, 1);
    std::fs::write(swapped.path("data.jsonl"), reordered.join("\n") + "\n").unwrap();
    ok(&swapped.run(&["--job_id", "h"]));
    let (a, b) = (hashes(&one, "h"), hashes(&swapped, "h"));
    assert_ne!(a[0], b[0]);
    assert_eq!(a[1..], b[1..]);
}

/// `partition.mode: auto` sizes partitions from a sample of the input, records every decision in
/// metadata/partition_sizing.json, and gives the same export.
#[test]
fn auto_partitioning_records_its_decision() {
    let reference = Job::new();
    let (_, want) = fresh(&reference);
    let job = Job::new();
    ok(&job.run(&["--job_id", "auto", "--partition.mode", "auto"]));
    assert_eq!(job.export(), want);
    let dir = job.job_dir("auto");
    let rec: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("metadata/partition_sizing.json")).unwrap(),
    )
    .unwrap();
    let info: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("checkpoints/partitioning_info.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(rec["partitions"]["count"], info["num_partitions"]);
    assert_eq!(rec["analysis"]["data"]["primary_modality"], "text");
    assert!(
        rec["reasoning"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r.as_str().unwrap().starts_with("complexity: "))
    );
    // partition.partitions_per_node feeds the cluster bound of the count.
    let per_node = Job::new();
    ok(&per_node.run(&[
        "--job_id",
        "auto",
        "--partition.mode",
        "auto",
        "--partition.partitions_per_node",
        "7",
    ]));
    assert_eq!(per_node.export(), want);
    let text = std::fs::read_to_string(
        per_node
            .job_dir("auto")
            .join("metadata/partition_sizing.json"),
    )
    .unwrap();
    assert!(text.contains("7 per node"), "{text}");
}

/// Selectors are global like dedup: their per-partition values are saved, so a job killed after
/// some partitions passed the selector (jsonl checkpoints: the order column comes back as Int64)
/// resumes to the uninterrupted export, in the selector's order.
#[test]
fn kill_9_then_resume_through_selectors() {
    let recipe = RECIPE
        .replace("  strategy: every_op", "  strategy: every_op\nintermediate_storage:\n  format: jsonl")
        .replace(
            "  - document_deduplicator:\n      lowercase: true\n",
            "  - document_deduplicator:\n      lowercase: true\n  - topk_specified_field_selector:\n      field_key: meta.id\n      topk: 60\n  - random_selector:\n      select_num: 40\n",
        );
    let reference = Job::with_recipe(&recipe);
    let (token, want) = fresh(&reference);
    assert!(want.lines().count() > 10, "{want}");
    let total = events(&reference.job_dir(&token)).len();
    // Kill points spread over the whole run, all before its last event.
    let moments: Vec<usize> = (1..=4).map(|i| i * total / 5).collect();
    assert!(moments[0] >= 1 && moments[3] < total, "{total} events");
    for n in moments {
        let job = Job::with_recipe(&recipe);
        let id = format!("kill_{n}");
        kill_9_after_event(&job, &id, n, total);
        let out = job.run(&["--resume", &id]);
        ok(&out);
        assert_eq!(job.export(), want, "after kill at event {n}");
    }
}

/// `checkpoint.strategy: auto`: sinks decide at run time and record why; the expensive op (the
/// deduplicator) gets a checkpoint where the priors decide; a job killed part-way resumes from
/// whatever was placed to the same export as every_op's.
#[test]
fn auto_checkpoints_record_why_and_resume() {
    let reference = Job::new();
    let (_, want) = fresh(&reference);
    let job = Job::new();
    ok(&job.run(&["--job_id", "auto", "--checkpoint.strategy", "auto"]));
    assert_eq!(job.export(), want);
    let saves: Vec<serde_json::Value> = events(&job.job_dir("auto"))
        .into_iter()
        .filter(|e| e["event_type"] == "checkpoint_save")
        .collect();
    assert!(!saves.is_empty());
    for e in &saves {
        let reason = e["metadata"]["reason"].as_str().unwrap_or_default();
        assert!(reason.starts_with("auto: ops "), "{e}");
        assert!(reason.contains(" > writing "), "{e}");
    }
    // The first partitions decide with the priors: after the deduplicator (op 2), not after
    // the cheap ops before it.
    assert!(saves.iter().any(|e| e["operation_idx"] == 2), "{saves:?}");
    assert!(
        !saves.iter().any(|e| e["operation_idx"] == 0
            && e["metadata"]["reason"]
                .as_str()
                .unwrap()
                .contains("(prior)")),
        "{saves:?}"
    );
    // Killed after half its events, resumed.
    let total = events(&job.job_dir("auto")).len();
    let job = Job::new();
    let mut child = job
        .command(&["--job_id", "killed", "--checkpoint.strategy", "auto"])
        .env("DJ_EVENT_DELAY_MS", "15")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(wait_for_events(
        &job.job_dir("killed"),
        total / 2,
        &mut child
    ));
    child.kill().unwrap();
    child.wait().unwrap();
    ok(&job.run(&["--resume", "killed", "--checkpoint.strategy", "auto"]));
    assert_eq!(job.export(), want);
}
