//! Scale-out on Apache Ballista: a scheduler and two executors run as separate `dj-cluster`
//! processes on 127.0.0.1; `dj-run --engine ballista` must give the local run's export, survive
//! an executor killed part-way, and resume across engines.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{ok, repo, write};

pub(crate) const RECIPE: &str = "\
project_name: cluster-test
dataset_path: DATA
export_path: EXPORT
work_dir: WORK
executor_type: ray_partitioned
ENGINE
partition:
  mode: manual
  num_of_partitions: 8
  max_concurrent_partitions: 2
checkpoint:
  strategy: every_n_ops
  n_ops: 2
process:
  - whitespace_normalization_mapper:
  - clean_links_mapper:
  - document_deduplicator:
      lowercase: true
  - text_length_filter:
      min_len: 40
  - words_num_filter:
      min_num: 8
  - special_characters_filter:
      max_ratio: 0.3
";

/// A scheduler and executors, killed when dropped.
pub(crate) struct Cluster {
    pub(crate) scheduler: String,
    executors: Vec<Child>,
    /// Each executor's Arrow Flight port.
    flight_ports: Vec<u16>,
    scheduler_process: Child,
    dir: tempfile::TempDir,
}

/// A process's stderr, kept in the cluster's directory and shown if the test fails.
fn log_file(dir: &tempfile::TempDir, name: &str) -> std::fs::File {
    std::fs::File::create(dir.path().join(name)).unwrap()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn wait_listening(port: u16, child: &mut Child, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "{what} exited before listening on {port}"
        );
        assert!(Instant::now() < deadline, "{what} never listened on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

impl Cluster {
    pub(crate) fn start(executors: usize) -> Cluster {
        Cluster::start_with_env(executors, &[])
    }

    /// Executors with `env` set (object-storage credentials).
    fn start_with_env(executors: usize, env: &[(String, String)]) -> Cluster {
        Cluster::start_with(executors, env, &[])
    }

    /// Executors with `env` set and `args` added to their command line.
    fn start_with(executors: usize, env: &[(String, String)], args: &[&str]) -> Cluster {
        Cluster::start_full(executors, env, &[], &|_| {
            args.iter().map(|a| a.to_string()).collect()
        })
    }

    /// A scheduler with `scheduler_args` added, and executors with `env` set and
    /// `executor_args(i)` added.
    fn start_full(
        executors: usize,
        env: &[(String, String)],
        scheduler_args: &[&str],
        executor_args: &dyn Fn(usize) -> Vec<String>,
    ) -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let scheduler = format!("127.0.0.1:{port}");
        let mut scheduler_process = Command::new(env!("CARGO_BIN_EXE_dj-cluster"))
            .args(["scheduler", "--bind", &scheduler, "--executor-timeout", "4"])
            .args(scheduler_args)
            .stdout(Stdio::null())
            .stderr(log_file(&dir, "scheduler.log"))
            .spawn()
            .unwrap();
        wait_listening(port, &mut scheduler_process, "scheduler");
        let mut cluster = Cluster {
            scheduler,
            executors: Vec::new(),
            flight_ports: Vec::new(),
            scheduler_process,
            dir,
        };
        for i in 0..executors {
            let (flight, grpc) = (free_port(), free_port());
            let work = cluster.work_dir(i);
            std::fs::create_dir_all(&work).unwrap();
            let mut child = Command::new(env!("CARGO_BIN_EXE_dj-cluster"))
                .args(["executor", "--scheduler", &cluster.scheduler])
                .args(["--port", &flight.to_string()])
                .args(["--grpc-port", &grpc.to_string()])
                .args(["--slots", "1", "--heartbeat", "1"])
                .args(executor_args(i))
                .envs(env.iter().cloned())
                .arg("--work-dir")
                .arg(&work)
                .stdout(Stdio::null())
                .stderr(log_file(&cluster.dir, &format!("executor-{i}.log")))
                .spawn()
                .unwrap();
            wait_listening(flight, &mut child, "executor");
            cluster.executors.push(child);
            cluster.flight_ports.push(flight);
        }
        // Executors register on their first heartbeat.
        std::thread::sleep(Duration::from_millis(1500));
        cluster
    }

    /// What process `name` (`scheduler`, `executor-0`...) logged so far.
    fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(format!("{name}.log"))).unwrap_or_default()
    }

    fn work_dir(&self, executor: usize) -> PathBuf {
        self.dir.path().join(format!("executor-{executor}"))
    }

    /// Whether executor `i` ran any task (Ballista keeps a directory per job it worked on).
    pub(crate) fn worked(&self, executor: usize) -> bool {
        std::fs::read_dir(self.work_dir(executor))
            .unwrap()
            .filter_map(|e| e.ok())
            .any(|e| {
                e.path().is_dir() && !e.file_name().to_string_lossy().starts_with("datafusion")
            })
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for c in self
            .executors
            .iter_mut()
            .chain([&mut self.scheduler_process])
        {
            let _ = c.kill();
            let _ = c.wait();
        }
        if std::thread::panicking() {
            // The processes' logs go with the failure.
            for e in std::fs::read_dir(self.dir.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.ends_with(".log") {
                    let text = std::fs::read_to_string(e.path()).unwrap_or_default();
                    let tail = &text[text.len().saturating_sub(4000)..];
                    eprintln!("--- {name} (last 4000 bytes) ---\n{tail}");
                }
            }
        }
    }
}

/// Deterministic English-like documents: some too short or too symbol-heavy for the filters.
pub(crate) fn corpus(rows: usize) -> String {
    const WORDS: [&str; 16] = [
        "data",
        "juicer",
        "cleans",
        "text",
        "for",
        "language",
        "models",
        "with",
        "fast",
        "operators",
        "and",
        "the",
        "pipeline",
        "keeps",
        "quality",
        "samples",
    ];
    let mut state = 0x2545_f491_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut out = String::new();
    let mut texts: Vec<Vec<&str>> = Vec::new();
    for i in 0..rows {
        let n = (next() % 90) as usize + 2;
        let mut text: Vec<&str> = (0..n).map(|_| WORDS[(next() % 16) as usize]).collect();
        // Duplicates across partitions for the deduplicator.
        if i % 7 == 3 && i >= 700 {
            text = texts[i - 700].clone();
        }
        texts.push(text.clone());
        if i % 17 == 0 {
            text.push("#$%^&*()!@#$%^&*()!@#$%^&*()");
        }
        if i % 13 == 0 {
            text.push("see https://example.com/page");
        }
        let line = serde_json::json!({"text": text.join("  "), "meta": {"id": i}});
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
}

struct Job {
    dir: tempfile::TempDir,
}

impl Job {
    fn new(engine_keys: &str) -> Job {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data.jsonl");
        write(&data, &corpus(6000));
        let text = RECIPE
            .replace("DATA", data.to_str().unwrap())
            .replace(
                "EXPORT",
                dir.path().join("out/result.jsonl").to_str().unwrap(),
            )
            .replace("WORK", dir.path().join("jobs").to_str().unwrap())
            .replace("ENGINE", engine_keys);
        write(&dir.path().join("recipe.yaml"), &text);
        Job { dir }
    }
    fn command(&self, extra: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_dj-run"));
        c.arg("--config")
            .arg(self.dir.path().join("recipe.yaml"))
            .args(extra)
            .current_dir(self.dir.path());
        c
    }
    fn run(&self, extra: &[&str]) -> Output {
        self.command(extra).output().unwrap()
    }
    fn export(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("out/result.jsonl")).unwrap()
    }
    fn job_dir(&self, id: &str) -> PathBuf {
        self.dir.path().join("jobs").join(id)
    }
}

/// The local run's report (what `dj-run` prints).
fn local_report() -> String {
    let job = Job::new("");
    ok(&job.run(&[]))
}

fn local_export() -> String {
    let job = Job::new("");
    ok(&job.run(&[]));
    job.export()
}

fn checkpoint_count(job_dir: &Path) -> usize {
    std::fs::read_dir(job_dir.join("checkpoints"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    name.starts_with("checkpoint_op_") && !name.ends_with(".blake3")
                })
                .count()
        })
        .unwrap_or(0)
}

fn wait_for_checkpoints(job_dir: &Path, n: usize, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while checkpoint_count(job_dir) < n {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the run ended ({status}) before {n} checkpoints existed");
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {n} checkpoints"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn event_types(job_dir: &Path) -> Vec<String> {
    events(job_dir)
        .iter()
        .map(|e| e["event_type"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn events(job_dir: &Path) -> Vec<serde_json::Value> {
    let mut events = Vec::new();
    for entry in std::fs::read_dir(job_dir).unwrap() {
        let path = entry.unwrap().path();
        if path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("events_")
        {
            for line in std::fs::read_to_string(path).unwrap().lines() {
                events.push(serde_json::from_str(line).unwrap());
            }
        }
    }
    events
}

/// The cluster's export equals the local one; the work is spread over both executors; the job
/// directory has what a local job has (hashes, checkpoints and their events, per-op counts); and
/// killing an executor part-way still ends, at once or after one resume, with the same export.
#[test]
fn cluster_runs_match_local() {
    let want = local_export();
    let cluster = Cluster::start(2);
    let scheduler = cluster.scheduler.clone();
    let flags = ["--engine", "ballista", "--scheduler", scheduler.as_str()];

    let job = Job::new("");
    let out = ok(&job.run(&[&flags[..], &["--job_id", "whole"]].concat()));
    assert_eq!(job.export(), want);
    assert!(
        cluster.worked(0) && cluster.worked(1),
        "both executors ran tasks"
    );
    // Per-op counts came back from the executors: the filters removed rows.
    assert!(out.contains("rows in: 6000"), "{out}");
    assert!(!out.contains("rows out: 6000 "), "{out}");
    let dir = job.job_dir("whole");
    assert_eq!(
        checkpoint_count(&dir),
        24,
        "8 partitions x checkpoints after ops 1, 3 and 5"
    );
    let types = event_types(&dir);
    assert_eq!(types.iter().filter(|t| *t == "checkpoint_save").count(), 24);
    // The rows before the deduplicator were computed once, in its keys pass, and kept as the
    // checkpoint after op 1 (which the strategy saves anyway); the ops of that pass are reported
    // with true counts, as locally.
    let local_out = local_report();
    for op in [
        "#0  whitespace_normalization_mapper",
        "#1  clean_links_mapper",
    ] {
        let line = |text: &str| {
            text.lines()
                .find(|l| l.trim_start().starts_with(op))
                .map(str::to_string)
                .unwrap_or_else(|| panic!("{op}: {text}"))
        };
        assert_eq!(line(&out), line(&local_out));
    }
    // The deduplicator removed duplicates across partitions, as locally.
    let dedup = out
        .lines()
        .find(|l| l.contains("document_deduplicator"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(!dedup.trim_end().ends_with("removed          0"), "{dedup}");
    assert_eq!(
        types.iter().filter(|t| *t == "partition_complete").count(),
        8
    );
    // Per-op times came back with the task results too: measured per op (not the partition's
    // time split evenly), the deduplicator's work included.
    let ev = events(&dir);
    let op_seconds = |name: &str| -> f64 {
        ev.iter()
            .filter(|e| e["event_type"] == "op_complete" && e["operation_name"] == name)
            .map(|e| e["duration"].as_f64().unwrap())
            .sum()
    };
    assert!(op_seconds("document_deduplicator") > 0.0);
    assert_ne!(
        op_seconds("whitespace_normalization_mapper"),
        op_seconds("text_length_filter")
    );
    let info = std::fs::read_to_string(dir.join("checkpoints/partitioning_info.json")).unwrap();
    let info: serde_json::Value = serde_json::from_str(&info).unwrap();
    for p in info["partitions"].as_array().unwrap() {
        assert_eq!(p["content_hash"].as_str().unwrap().len(), 64, "{p}");
    }
}

/// A lost executor in each phase of a run: while the deduplicator's keys pass runs (it saves the
/// rows before the dedup, the checkpoints after op 1) and while the final plans write theirs
/// (after op 3). Each time the job completes, or resumes, to the local export.
#[test]
fn a_lost_executor_in_the_dedup_and_checkpoint_phases() {
    let want = local_export();
    for (phase, op) in [("dedup keys", 1), ("final checkpoints", 3)] {
        let mut cluster = Cluster::start(2);
        let scheduler = cluster.scheduler.clone();
        let flags = ["--engine", "ballista", "--scheduler", scheduler.as_str()];
        let job = Job::new("");
        let mut run = job
            .command(&[&flags[..], &["--job_id", "killed"]].concat())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let dir = job.job_dir("killed");
        let deadline = Instant::now() + Duration::from_secs(120);
        let prefix = format!("checkpoint_op_{op:04}_");
        while !std::fs::read_dir(dir.join("checkpoints"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        {
            assert!(
                run.try_wait().unwrap().is_none(),
                "{phase}: the run ended first"
            );
            assert!(
                Instant::now() < deadline,
                "{phase}: no checkpoint after op {op}"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        cluster.executors[0].kill().unwrap();
        cluster.executors[0].wait().unwrap();
        if !run.wait().unwrap().success() {
            ok(&job.run(&[&flags[..], &["--resume", "killed"]].concat()));
        }
        assert_eq!(job.export(), want, "an executor lost in the {phase} phase");
    }
}

/// A job started on the cluster and killed resumes locally, and a local one resumes on the
/// cluster; both give the uninterrupted export. The recipe's `engine` key chooses the cluster,
/// and `--engine` overrides it without changing the recipe hash.
#[test]
fn jobs_resume_across_engines() {
    let want = local_export();
    let cluster = Cluster::start(2);
    let keys = format!("engine: ballista\nscheduler: {}", cluster.scheduler);

    let job = Job::new(&keys);
    let mut run = job
        .command(&["--job_id", "from-cluster"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_checkpoints(&job.job_dir("from-cluster"), 4, &mut run);
    run.kill().unwrap();
    run.wait().unwrap();
    let out = ok(&job.run(&["--resume", "from-cluster", "--engine", "local"]));
    assert_eq!(job.export(), want, "cluster start, local resume: {out}");

    let job = Job::new(&keys);
    let mut run = job
        .command(&["--job_id", "from-local", "--engine", "local"])
        .env("DJ_EVENT_DELAY_MS", "20")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_checkpoints(&job.job_dir("from-local"), 4, &mut run);
    run.kill().unwrap();
    run.wait().unwrap();
    let out = ok(&job.run(&["--resume", "from-local"]));
    assert_eq!(job.export(), want, "local start, cluster resume: {out}");
    assert!(
        event_types(&job.job_dir("from-local"))
            .iter()
            .any(|t| t == "checkpoint_load"),
        "the cluster resumed from checkpoints"
    );
}

/// Selectors on the cluster: each partition computes its values there, the client ranks all
/// rows, and the plans carry each partition's ranks. The golden selector recipe (a filter, two
/// selectors and a mapper after them), in 3 partitions, gives Data-Juicer's export and stats.
#[test]
fn selectors_run_on_the_cluster() {
    let cluster = Cluster::start(2);
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("selector_pipeline.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_dj-run"))
        .args(["--config", "tests/golden/recipes/selector_pipeline.yaml"])
        .args(["--export_path", export.to_str().unwrap(), "--np", "3"])
        .args(["--engine", "ballista", "--scheduler", &cluster.scheduler])
        .current_dir(repo())
        .output()
        .unwrap();
    ok(&out);
    for (got, want) in [
        ("selector_pipeline.jsonl", "selector_pipeline.jsonl"),
        (
            "selector_pipeline_stats.jsonl",
            "selector_pipeline_stats.jsonl",
        ),
    ] {
        assert_eq!(
            std::fs::read_to_string(dir.path().join(got)).unwrap(),
            std::fs::read_to_string(repo().join("tests/golden/expected").join(want)).unwrap(),
            "{got}"
        );
    }
    assert!(
        cluster.worked(0) || cluster.worked(1),
        "the executors ran tasks"
    );
}

#[test]
fn auto_checkpoints_and_a_missing_scheduler_are_refused_before_any_work() {
    let job = Job::new("engine: ballista");
    let out = job.run(&["--checkpoint.strategy", "auto"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--engine ballista does not run checkpoint.strategy: auto"),
        "{err}"
    );
    assert!(!job.dir.path().join("jobs").exists(), "no job directory");

    let job = Job::new("engine: ballista");
    let port = free_port();
    let out = job.run(&["--scheduler", &format!("127.0.0.1:{port}")]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "cannot reach the Ballista scheduler at 127.0.0.1:{port}"
        )),
        "{err}"
    );
    assert!(!job.dir.path().join("jobs").exists(), "no job directory");
    assert!(!job.dir.path().join("out").exists(), "no export");
}

/// The cluster with the dataset, the export and the job directory on S3 (moto's server): the
/// export is the local run's, and the checkpoints the executors wrote are published.
#[test]
fn cluster_reads_and_writes_object_storage() {
    let want = local_export();
    let s3 = crate::object_store::S3Server::start();
    // The executors publish the checkpoints they write: they get the credentials too.
    let cluster = Cluster::start_with_env(2, &s3.env());
    let job = Job::new("");
    let data = std::fs::read(job.dir.path().join("data.jsonl")).unwrap();
    s3.put("cluster/data.jsonl", &data);
    let bucket = crate::object_store::BUCKET;
    let recipe = job.dir.path().join("recipe.yaml");
    let text = std::fs::read_to_string(&recipe).unwrap();
    let text = text
        .replace(
            job.dir.path().join("data.jsonl").to_str().unwrap(),
            &format!("s3://{bucket}/cluster/data.jsonl"),
        )
        .replace(
            job.dir.path().join("out/result.jsonl").to_str().unwrap(),
            &format!("s3://{bucket}/cluster/out/result.jsonl"),
        )
        .replace(
            job.dir.path().join("jobs").to_str().unwrap(),
            &format!("s3://{bucket}/cluster/jobs"),
        );
    write(&recipe, &text);
    let out = ok(&s3
        .dj_run(
            &job.dir.path().join("cache"),
            &recipe,
            &[
                "--engine",
                "ballista",
                "--scheduler",
                &cluster.scheduler,
                "--job_id",
                "s3",
            ],
        )
        .output()
        .unwrap());
    assert!(
        out.contains(&format!("wrote s3://{bucket}/cluster/out/result.jsonl")),
        "{out}"
    );
    assert_eq!(
        String::from_utf8(s3.get("cluster/out/result.jsonl").unwrap()).unwrap(),
        want
    );
    assert!(
        cluster.worked(0) && cluster.worked(1),
        "both executors ran tasks"
    );
    // Each checkpoint was published with its seal.
    let keys = s3.keys("cluster/jobs/s3/checkpoints/checkpoint_op_");
    assert_eq!(keys.iter().filter(|k| !k.ends_with(".blake3")).count(), 24);
    assert_eq!(keys.iter().filter(|k| k.ends_with(".blake3")).count(), 24);
}

/// Executors confined with `--allow-root` run a job whose paths all lie under their root as the
/// local run does, and refuse, before it runs, a job whose input, checkpoints and key files lie
/// elsewhere.
#[test]
fn confined_executors_refuse_paths_outside_their_roots() {
    let want = local_export();
    let inside = Job::new("");
    let root = inside.dir.path().to_str().unwrap().to_string();
    let cluster = Cluster::start_with(1, &[], &["--allow-root", &root]);
    let flags = [
        "--engine",
        "ballista",
        "--scheduler",
        cluster.scheduler.as_str(),
    ];
    ok(&inside.run(&flags));
    assert_eq!(inside.export(), want);
    let outside = Job::new("");
    let out = outside.run(&flags);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("outside this executor's roots") && stderr.contains(&root),
        "{stderr}"
    );
    assert!(
        !outside.dir.path().join("out/result.jsonl").exists(),
        "no export from a refused plan"
    );
}

/// `dj-cluster certs` output for `names`, under `dir/out`.
fn certs(out: &Path, names: &[&str]) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_dj-cluster"));
    c.arg("certs").arg("--out").arg(out);
    for n in names {
        c.args(["--name", n]);
    }
    ok(&c.output().unwrap());
}

/// Polls `what` until it holds `needle` (logs are written as the processes go).
fn wait_for_text(what: impl Fn() -> String, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = what();
        if text.contains(needle) || Instant::now() > deadline {
            return text;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A cluster whose members all have credentials from one CA runs over mutual TLS to the local
/// export, the executors exchanging data too; a client without credentials, one whose
/// certificate comes from another CA, and a plain connection to an executor are each refused,
/// and the member they tried logs why.
#[test]
fn a_tls_cluster_runs_members_and_refuses_strangers() {
    let want = local_export();
    let keys = tempfile::tempdir().unwrap();
    let ours = keys.path().join("ours");
    certs(&ours, &["scheduler", "executor-0", "executor-1", "client"]);
    // A stranger who knows the cluster's CA certificate (it is public) but whose own
    // certificate another CA signed.
    let theirs = keys.path().join("theirs");
    certs(&theirs, &["stranger"]);
    let stranger = keys.path().join("stranger");
    std::fs::create_dir(&stranger).unwrap();
    std::fs::copy(ours.join("ca.pem"), stranger.join("ca.pem")).unwrap();
    for f in ["cert.pem", "key.pem"] {
        std::fs::copy(theirs.join("stranger").join(f), stranger.join(f)).unwrap();
    }
    let member = |name: &str| ours.join(name).to_str().unwrap().to_string();
    let cluster = Cluster::start_full(2, &[], &["--tls", &member("scheduler")], &|i| {
        vec!["--tls".to_string(), member(&format!("executor-{i}"))]
    });
    let flags = [
        "--engine",
        "ballista",
        "--scheduler",
        cluster.scheduler.as_str(),
    ];

    let job = Job::new("");
    let client = member("client");
    ok(&job.run(&[&flags[..], &["--tls", &client, "--job_id", "members"]].concat()));
    assert_eq!(job.export(), want);
    assert!(
        cluster.worked(0) && cluster.worked(1),
        "both executors ran tasks"
    );

    // No credentials: refused before any job directory exists.
    let plain = Job::new("");
    let out = plain.run(&[&flags[..], &["--job_id", "plain"]].concat());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("does not accept this client") && err.contains("--tls DIR"),
        "{err}"
    );
    assert!(!plain.job_dir("plain").exists());
    let log = wait_for_text(|| cluster.log("scheduler"), "does not speak TLS");
    assert!(
        log.contains("scheduler: refused a connection from 127.0.0.1")
            && log.contains("does not speak TLS"),
        "{log}"
    );

    // Another CA's certificate: refused by the scheduler.
    let out = plain.run(&[&flags[..], &["--tls", stranger.to_str().unwrap()]].concat());
    assert!(!out.status.success());
    let log = wait_for_text(|| cluster.log("scheduler"), "not from this cluster's CA");
    assert!(
        log.contains("its certificate is not from this cluster's CA"),
        "{log}"
    );
    assert!(!plain.dir.path().join("out/result.jsonl").exists());

    // The executors' Flight services (results, shuffle data) refuse plain callers too.
    let mut s = TcpStream::connect(("127.0.0.1", cluster.flight_ports[0])).unwrap();
    std::io::Write::write_all(&mut s, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").unwrap();
    let log = wait_for_text(|| cluster.log("executor-0"), "Flight service: refused");
    assert!(
        log.contains("executor's Arrow Flight service: refused a connection from 127.0.0.1"),
        "{log}"
    );
}
