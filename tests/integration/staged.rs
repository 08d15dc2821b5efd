//! Exact, SimHash and MinHash dedup decided on a cluster's executors in stages: the export is the local
//! run's, the client holds no key (a 1 MB budget never spills), each stage leaves its files in
//! the job directory, and a client killed between stages resumes after the last complete one,
//! on the cluster or locally.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant, SystemTime};

use crate::budget::{SPILLED, corpus, run};
use crate::cluster::Cluster;
use crate::common::{repo, write};

const DECIDED: &str = "decided on the executors";

/// A ray_partitioned recipe of 7 partitions with a mapper, exact, SimHash and MinHash dedup and
/// a filter, over 4,000 rows with exact and near duplicates.
struct Job {
    dir: tempfile::TempDir,
}

impl Job {
    fn new() -> Job {
        let dir = tempfile::tempdir().unwrap();
        corpus(&dir.path().join("in.jsonl"), 4_000, 30);
        Job { dir }
    }
    /// The recipe exporting to `export`, with a work_dir of its own (no job reuses another's
    /// checkpoints).
    fn recipe(&self, export: &str) -> PathBuf {
        self.recipe_in(export, &self.work_dir(export))
    }
    fn recipe_in(&self, export: &str, work_dir: &Path) -> PathBuf {
        let d = self.dir.path();
        let path = d.join(format!("{export}.yaml"));
        write(
            &path,
            &format!(
                "dataset_path: {}\nexport_path: {}\nnp: 3\nexecutor_type: ray_partitioned\n\
                 work_dir: {}\npartition:\n  mode: manual\n  num_of_partitions: 7\n\
                 process:\n  - whitespace_normalization_mapper:\n  - document_deduplicator:\n\
                 \x20 - document_simhash_deduplicator: {{hamming_distance: 5}}\n\
                 \x20 - document_minhash_deduplicator:\n  - text_length_filter:\n      min_len: 5\n",
                d.join("in.jsonl").display(),
                d.join(export).display(),
                work_dir.display(),
            ),
        );
        path
    }
    fn run(&self, export: &str, args: &[&str]) -> (String, String) {
        run(self.dir.path(), &self.recipe(export), export, args)
    }
    fn work_dir(&self, export: &str) -> PathBuf {
        self.dir.path().join(format!("work-{export}"))
    }
    fn checkpoints(&self, export: &str, job_id: &str) -> PathBuf {
        self.work_dir(export).join(job_id).join("checkpoints")
    }
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The sealed key files of dedup op `op`.
fn key_files(checkpoints: &Path, op: usize) -> Vec<PathBuf> {
    let prefix = format!("dedup_keys_op_{op:04}_partition_");
    names(checkpoints)
        .into_iter()
        .filter(|n| n.starts_with(&prefix) && n.ends_with(".parquet"))
        .map(|n| checkpoints.join(n))
        .collect()
}

fn modified(files: &[PathBuf]) -> Vec<SystemTime> {
    files
        .iter()
        .map(|f| std::fs::metadata(f).unwrap().modified().unwrap())
        .collect()
}

#[test]
fn dedup_is_decided_on_the_executors_in_stages() {
    let job = Job::new();
    let (want, _) = job.run("local.jsonl", &["--engine", "local"]);
    assert!(want.lines().count() < 3_600, "the corpus has duplicates");
    for executors in [1, 2] {
        let cluster = Cluster::start(executors);
        let export = format!("cluster{executors}.jsonl");
        let id = format!("staged{executors}");
        let args = ["--engine", "ballista", "--scheduler", &cluster.scheduler];
        let args = [&args[..], &["--memory_budget_mb", "1", "--job_id", &id]].concat();
        let (got, stderr) = job.run(&export, &args);
        assert!(got == want, "{executors} executors: the export differs");
        assert_eq!(stderr.matches(DECIDED).count(), 3, "{stderr}");
        assert!(!stderr.contains(SPILLED), "the client held keys: {stderr}");
        let checkpoints = job.checkpoints(&export, &id);
        for op in [1, 2, 3] {
            assert_eq!(key_files(&checkpoints, op).len(), 7, "op {op}");
            let lists = names(&checkpoints.join(format!("dedup_removed_op_{op:04}")));
            assert_eq!(
                lists.len(),
                14,
                "op {op}: a list and its seal per partition: {lists:?}"
            );
        }
        let bins = names(&checkpoints)
            .into_iter()
            .filter(|n| n.ends_with(".bin"));
        assert_eq!(
            bins.count(),
            0,
            "no keys were saved for the client's decision"
        );
        assert!(cluster.worked(0), "the executors ran tasks");
    }
}

/// A client killed once op 1's key files are all saved resumes without computing them again;
/// one killed once op 2's (SimHash's) lists are whole resumes locally from the saved keys.
#[test]
fn a_killed_staged_dedup_resumes_after_its_last_complete_stage() {
    let job = Job::new();
    let (want, _) = job.run("local.jsonl", &["--engine", "local"]);
    let cluster = Cluster::start(2);
    let flags = ["--engine", "ballista", "--scheduler", &cluster.scheduler];
    for (id, ready, resume_engine) in [("keys", 1, "ballista"), ("lists", 2, "local")] {
        let export = format!("{id}.jsonl");
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_dj-run"))
            .arg("--config")
            .arg(job.recipe(&export))
            .args(flags)
            .args(["--job_id", id])
            .env("DJ_PROGRESS", "0")
            .current_dir(repo())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let checkpoints = job.checkpoints(&export, id);
        let done = |c: &Path| match id {
            "keys" => key_files(c, ready).len() == 7,
            _ => c.join(format!("dedup_removed_op_{ready:04}")).is_dir(),
        };
        let deadline = Instant::now() + Duration::from_secs(120);
        while !done(&checkpoints) {
            assert!(
                child.try_wait().unwrap().is_none(),
                "{id}: the run ended first"
            );
            assert!(Instant::now() < deadline, "{id}: the stage never completed");
            std::thread::sleep(Duration::from_millis(2));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let keys = key_files(&checkpoints, 1);
        let before = modified(&keys);
        let mut args = vec!["--resume", id, "--engine", resume_engine];
        if resume_engine == "ballista" {
            args.extend(["--scheduler", &cluster.scheduler]);
        }
        let (got, stderr) = job.run(&export, &args);
        assert!(got == want, "{id}: the resumed export differs: {stderr}");
        assert_eq!(
            modified(&keys),
            before,
            "{id}: op 1's keys were computed again"
        );
        ok_resumed(&stderr, id);
    }
}

fn ok_resumed(stderr: &str, id: &str) {
    assert!(!stderr.contains("error"), "{id}: {stderr}");
}

/// A local job in the work_dir of a job the cluster ran reuses its checkpoints, with the key
/// files the executors saved in stages (copied under their own names), and exports what a run
/// from scratch does.
#[test]
fn a_new_job_reuses_a_cluster_jobs_staged_keys() {
    let job = Job::new();
    let (want, _) = job.run("local.jsonl", &["--engine", "local"]);
    let work = job.dir.path().join("work-shared");
    let cluster = Cluster::start(1);
    let first = job.recipe_in("first.jsonl", &work);
    let flags = ["--engine", "ballista", "--scheduler", &cluster.scheduler];
    let (got, _) = run(
        job.dir.path(),
        &first,
        "first.jsonl",
        &[&flags[..], &["--job_id", "first"]].concat(),
    );
    assert!(got == want, "the cluster job's export differs");
    let second = job.recipe_in("second.jsonl", &work);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dj-run"))
        .arg("--config")
        .arg(&second)
        .args(["--engine", "local", "--job_id", "second"])
        .env("DJ_PROGRESS", "0")
        .current_dir(repo())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("reused from job first"), "{stdout}");
    let got = std::fs::read_to_string(job.dir.path().join("second.jsonl")).unwrap();
    assert!(got == want, "the reusing job's export differs");
    let copied = key_files(&work.join("second").join("checkpoints"), 1);
    assert_eq!(
        copied.len(),
        7,
        "op 1's staged key files were copied under their names"
    );
}
