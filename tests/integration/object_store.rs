//! Object storage: dataset, export and job directory on a real S3-compatible server (moto's,
//! started here on 127.0.0.1). A job killed on one machine resumes on another (an empty local
//! cache) from what it published, and the exports equal a local run's.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use dj_plans::store::Remote;

use crate::common::{ok, repo, write};

pub(crate) const BUCKET: &str = "dj-test-bucket";

/// moto's S3 server on a free port, stopped when dropped.
pub(crate) struct S3Server {
    port: u16,
    child: Child,
    /// moto's request log: a file, not a pipe nobody reads (a full pipe stalls the server).
    _log: tempfile::NamedTempFile,
}

impl S3Server {
    pub(crate) fn start() -> S3Server {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let log = tempfile::NamedTempFile::new().unwrap();
        let mut child = Command::new("python3")
            .args([
                "-m",
                "moto.server",
                "-H",
                "127.0.0.1",
                "-p",
                &port.to_string(),
            ])
            .stdout(Stdio::null())
            .stderr(log.reopen().unwrap())
            .spawn()
            .expect("python3 runs");
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = child.try_wait().unwrap() {
                let err = std::fs::read_to_string(log.path()).unwrap_or_default();
                panic!(
                    "moto's S3 server did not start ({status}): {err}\nInstall it with: pip install 'moto[server]' (.ci/run does)"
                );
            }
            assert!(Instant::now() < deadline, "moto's S3 server never listened");
            std::thread::sleep(Duration::from_millis(50));
        }
        let server = S3Server {
            port,
            child,
            _log: log,
        };
        let (status, _) = server.http("PUT", &format!("/{BUCKET}"), b"");
        assert_eq!(status, 200, "create bucket");
        server
    }

    /// A server whose bucket holds the golden corpus at `input/corpus.jsonl`; its bytes.
    fn with_corpus() -> (S3Server, Vec<u8>) {
        let s3 = S3Server::start();
        let corpus = std::fs::read(repo().join("tests/golden/corpus.jsonl")).unwrap();
        s3.put("input/corpus.jsonl", &corpus);
        (s3, corpus)
    }

    /// One plain HTTP request (moto does not check signatures): status and body.
    fn http(&self, method: &str, path: &str, body: &[u8]) -> (u16, Vec<u8>) {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            self.port,
            body.len()
        )
        .unwrap();
        s.write_all(body).unwrap();
        let mut response = Vec::new();
        s.read_to_end(&mut response).unwrap();
        let split = response
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("an HTTP response");
        let head = String::from_utf8_lossy(&response[..split]).to_string();
        let status = head.split(' ').nth(1).unwrap().parse().unwrap();
        (status, response[split + 4..].to_vec())
    }

    /// The bucket's object `key`, opened with this server's credentials.
    fn object(&self, key: &str) -> Remote {
        let endpoint = format!("http://127.0.0.1:{}", self.port);
        Remote::open_with(
            &format!("s3://{BUCKET}/{key}"),
            &[
                ("aws_endpoint_url", &endpoint),
                ("aws_access_key_id", "test"),
                ("aws_secret_access_key", "test"),
            ],
        )
        .unwrap()
    }

    pub(crate) fn put(&self, key: &str, body: &[u8]) {
        self.object(key).put(body.to_vec()).unwrap();
    }

    pub(crate) fn get(&self, key: &str) -> Option<Vec<u8>> {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("object");
        self.object(key).head().unwrap()?;
        self.object(key).download(&dest).unwrap();
        Some(std::fs::read(dest).unwrap())
    }

    pub(crate) fn keys(&self, prefix: &str) -> Vec<String> {
        let prefix = prefix.trim_end_matches('/');
        let (dir, start) = prefix.rsplit_once('/').unwrap_or(("", prefix));
        self.object(dir)
            .list()
            .unwrap()
            .into_iter()
            .map(|m| m.location.to_string())
            .filter(|k| k.starts_with(&format!("{dir}/{start}")))
            .collect()
    }

    /// `dj-run` with this server's credentials and endpoint, and `cache` as its machine's cache.
    pub(crate) fn dj_run(&self, cache: &Path, recipe: &Path, extra: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_dj-run"));
        c.arg("--config")
            .arg(recipe)
            .args(extra)
            .envs(self.env())
            .env("DJ_CACHE_DIR", cache);
        c
    }

    /// The AWS settings that reach this server (and nothing else: with credentials set, no
    /// client looks for instance metadata).
    pub(crate) fn env(&self) -> Vec<(String, String)> {
        [
            ("AWS_ACCESS_KEY_ID", "test".to_string()),
            ("AWS_SECRET_ACCESS_KEY", "test".to_string()),
            ("AWS_DEFAULT_REGION", "us-east-1".to_string()),
            (
                "AWS_ENDPOINT_URL",
                format!("http://127.0.0.1:{}", self.port),
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const RECIPE: &str = "\
dataset_path: DATA
export_path: EXPORT
work_dir: WORK
executor_type: ray_partitioned
partition:
  mode: manual
  num_of_partitions: 4
  max_concurrent_partitions: 1
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

fn recipe(dir: &Path, data: &str, export: &str, work: &str) -> std::path::PathBuf {
    let path = dir.join("recipe.yaml");
    write(
        &path,
        &RECIPE
            .replace("DATA", data)
            .replace("EXPORT", export)
            .replace("WORK", work),
    );
    path
}

/// Checkpoint files of job `job` anywhere under `dir` (a machine's cache).
fn count_checkpoints(dir: &Path, job: &str) -> usize {
    let mut n = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if e
                .file_name()
                .to_string_lossy()
                .starts_with("checkpoint_op_")
                && !p.to_string_lossy().ends_with(".blake3")
                && p.to_string_lossy().contains(&format!("/{job}/"))
            {
                n += 1;
            }
        }
    }
    n
}

/// Two machines cannot run one job: while machine A runs it, machine B is refused and told who
/// holds it; when A finds its lease taken over it stops (exit 75); B takes an expired lease over
/// and finishes the job, which leaves no lease behind.
#[test]
fn a_job_lease_keeps_a_second_machine_off() {
    let (s3, _) = S3Server::with_corpus();
    let tmp = tempfile::tempdir().unwrap();
    let remote = recipe(
        tmp.path(),
        &format!("s3://{BUCKET}/input/corpus.jsonl"),
        &format!("s3://{BUCKET}/out/leased.jsonl"),
        &format!("s3://{BUCKET}/jobs"),
    );
    let (machine_a, machine_b) = (tmp.path().join("a"), tmp.path().join("b"));
    let lease = "jobs/leased/.lease.json";
    let mut run = s3
        .dj_run(&machine_a, &remote, &["--job_id", "leased"])
        .env("DJ_EVENT_DELAY_MS", "30")
        .env("DJ_JOB_LEASE_SECONDS", "3")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !s3.keys("jobs/leased/").iter().any(|k| k == lease) {
        assert!(run.try_wait().unwrap().is_none(), "the run ended too early");
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = s3
        .dj_run(&machine_b, &remote, &["--job_id", "leased"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("job leased is running on") && err.contains(&format!("(pid {})", run.id())),
        "{err}"
    );
    assert!(
        run.try_wait().unwrap().is_none(),
        "machine A runs on undisturbed"
    );
    // Another run takes the lease over (as after an expiry): machine A stops at its next renewal
    // instead of writing next to it.
    s3.put(
        lease,
        br#"{"holder":"intruder","host":"elsewhere","pid":1,"expires_epoch":0,"ttl_seconds":3}"#,
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = run.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "machine A did not stop");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(75));
    // The intruder's lease has expired: machine B takes the job over and finishes it.
    ok(&s3
        .dj_run(&machine_b, &remote, &["--job_id", "leased"])
        .output()
        .unwrap());
    assert!(s3.get("out/leased.jsonl").is_some());
    assert!(
        !s3.keys("jobs/leased/").iter().any(|k| k == lease),
        "released"
    );
}

/// The job tools on a work directory on object storage, from a machine that does not run the
/// job: `dj-job list` and `monitor` show it running on machine A (process and host from its
/// lease), `dj-job stop` stops it there through a stop request (graceful, resumable), and
/// `dj-sql` queries the checkpoints it published.
#[test]
fn job_tools_on_an_s3_work_dir() {
    let (s3, _) = S3Server::with_corpus();
    let tmp = tempfile::tempdir().unwrap();
    let url = format!("s3://{BUCKET}/jobs");
    let remote = recipe(
        tmp.path(),
        &format!("s3://{BUCKET}/input/corpus.jsonl"),
        &format!("s3://{BUCKET}/out/tools.jsonl"),
        &url,
    );
    let mut run = s3
        .dj_run(&tmp.path().join("a"), &remote, &["--job_id", "tooled"])
        .env("DJ_EVENT_DELAY_MS", "60")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while s3
        .keys("jobs/tooled/checkpoints/checkpoint_op_0000_partition_0000.parquet")
        .is_empty()
    {
        assert!(run.try_wait().unwrap().is_none(), "the run ended too early");
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(20));
    }
    let tools = tmp.path().join("tools-machine");
    let tool = |bin: &str, args: &[&str]| {
        Command::new(bin)
            .args(args)
            .envs(s3.env())
            .env("DJ_CACHE_DIR", &tools)
            .output()
            .unwrap()
    };
    let dj_job = env!("CARGO_BIN_EXE_dj-job");
    let json = |out: &std::process::Output| -> serde_json::Value {
        serde_json::from_str(&ok(out)).unwrap()
    };
    let listed = json(&tool(dj_job, &["list", "--work_dir", &url, "--json"]));
    let job = &listed.as_array().unwrap()[0];
    assert_eq!(
        (job["job_id"].as_str(), job["status"].as_str()),
        (Some("tooled"), Some("running")),
        "{listed}"
    );
    assert_eq!(job["pid"], run.id());
    let progress = json(&tool(
        dj_job,
        &["monitor", "tooled", "--work_dir", &url, "--json"],
    ));
    assert_eq!(progress["status"], "running");
    assert!(progress["lock"]["host"].is_string(), "{}", progress["lock"]);
    // The dashboard serves the same work directory, from another machine's view of it.
    let mut envs = s3.env();
    envs.push((
        "DJ_CACHE_DIR".into(),
        tmp.path().join("dashboard").display().to_string(),
    ));
    let served = crate::dashboard::serve_with(Path::new(&url), &[], &envs);
    let (status, body) = crate::dashboard::http(&served.addr, "GET", "/api/jobs", &[]);
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("\"job_id\":\"tooled\",") && body.contains("\"running\""),
        "{body}"
    );
    let (status, body) = crate::dashboard::http(&served.addr, "GET", "/api/jobs/tooled", &[]);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("checkpoint_op_0000_partition_0000"), "{body}");
    let stopped = json(&tool(
        dj_job,
        &[
            "stop",
            "tooled",
            "--work_dir",
            &url,
            "--timeout",
            "60",
            "--json",
        ],
    ));
    assert_eq!(stopped["success"], true, "{stopped}");
    assert_eq!(stopped["status"], "stopped", "{stopped}");
    assert_eq!(stopped["resumable"], true, "{stopped}");
    let deadline = Instant::now() + Duration::from_secs(20);
    while run.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "machine A's run did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        s3.keys("jobs/tooled/.").is_empty(),
        "lease and stop request gone"
    );
    let (_, body) = crate::dashboard::http(&served.addr, "GET", "/api/jobs/tooled", &[]);
    assert!(body.contains("\"status\":\"stopped\""), "{body}");
    drop(served);
    let out = ok(&tool(
        env!("CARGO_BIN_EXE_dj-sql"),
        &[
            "--work_dir",
            &url,
            "tooled",
            "SELECT count(*) AS n FROM checkpoint_op_0000_partition_0000",
            "--format",
            "json",
        ],
    ));
    let missing = tool(dj_job, &["monitor", "nope", "--work_dir", &url]);
    assert!(!missing.status.success());
    assert!(
        String::from_utf8_lossy(&missing.stderr)
            .contains(&format!("Job directory not found: {url}/nope")),
        "{}",
        String::from_utf8_lossy(&missing.stderr)
    );
    // The first of four partitions of the 167-row corpus, through the whitespace mapper.
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[0]["n"], 42, "{out}");
}

#[test]
fn dataset_export_and_job_directory_on_s3_resume_on_another_machine() {
    let (s3, corpus) = S3Server::with_corpus();
    let tmp = tempfile::tempdir().unwrap();

    // The local reference.
    let data = tmp.path().join("corpus.jsonl");
    std::fs::write(&data, &corpus).unwrap();
    let local_export = tmp.path().join("local/result.jsonl");
    let local = recipe(
        &tmp.path().join("local"),
        data.to_str().unwrap(),
        local_export.to_str().unwrap(),
        tmp.path().join("local/jobs").to_str().unwrap(),
    );
    let out = Command::new(env!("CARGO_BIN_EXE_dj-run"))
        .arg("--config")
        .arg(&local)
        .output()
        .unwrap();
    ok(&out);
    let want = std::fs::read(&local_export).unwrap();
    let want_stats = std::fs::read(tmp.path().join("local/result_stats.jsonl")).unwrap();

    let remote = recipe(
        &tmp.path().join("remote"),
        &format!("s3://{BUCKET}/input/corpus.jsonl"),
        &format!("s3://{BUCKET}/out/result.jsonl"),
        &format!("s3://{BUCKET}/jobs"),
    );
    let machine_a = tmp.path().join("machine-a");
    let out = ok(&s3
        .dj_run(&machine_a, &remote, &["--job_id", "whole"])
        .output()
        .unwrap());
    assert!(
        out.contains(&format!("wrote s3://{BUCKET}/out/result.jsonl")),
        "{out}"
    );
    assert_eq!(s3.get("out/result.jsonl").unwrap(), want);
    assert_eq!(s3.get("out/result_stats.jsonl").unwrap(), want_stats);
    let keys = s3.keys("jobs/whole/");
    for want in [
        "jobs/whole/checkpoints/partitioning_info.json",
        "jobs/whole/checkpoints/checkpoint_op_0000_partition_0000.parquet",
        "jobs/whole/checkpoints/checkpoint_op_0003_partition_0003.parquet",
        "jobs/whole/job_summary.json",
    ] {
        assert!(keys.iter().any(|k| k == want), "{want} not in {keys:?}");
    }
    assert!(
        keys.iter().any(|k| k.starts_with("jobs/whole/events_")),
        "{keys:?}"
    );
    assert!(
        !keys.iter().any(|k| k.contains("/.")),
        "no lock or temporary file: {keys:?}"
    );

    // Killed on machine A, resumed on machine B, which has nothing but the bucket.
    let mut run = s3
        .dj_run(&machine_a, &remote, &["--job_id", "moved"])
        .env("DJ_EVENT_DELAY_MS", "20")
        .env("DJ_JOB_LEASE_SECONDS", "2")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while count_checkpoints(&machine_a.join("jobs"), "moved") < 5 {
        assert!(run.try_wait().unwrap().is_none(), "the run ended too early");
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(5));
    }
    run.kill().unwrap();
    run.wait().unwrap();
    // Machine A's lease expires (it is not renewed any more) before machine B may take over.
    std::thread::sleep(Duration::from_millis(2500));
    assert!(
        s3.keys("jobs/moved/checkpoints/checkpoint_op_")
            .iter()
            .filter(|k| !k.ends_with(".blake3"))
            .count()
            >= 4,
        "checkpoints were published as they were saved"
    );
    s3.put("out/result.jsonl", b"stale");
    let machine_b = tmp.path().join("machine-b");
    let out = ok(&s3
        .dj_run(&machine_b, &remote, &["--resume", "moved"])
        .output()
        .unwrap());
    // Machine B redid only what machine A had not checkpointed and published.
    let first_op_rows: u64 = out
        .lines()
        .find(|l| l.trim_start().starts_with("#0"))
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{out}"));
    assert!(first_op_rows < 167, "{out}");
    assert_eq!(s3.get("out/result.jsonl").unwrap(), want);
    // Back on machine A, whose mirror stopped at the kill: it fetches what B published since.
    let out = ok(&s3
        .dj_run(&machine_a, &remote, &["--resume", "moved"])
        .output()
        .unwrap());
    assert!(out.contains("Job moved is already completed"), "{out}");
    let mirrored = std::fs::read_dir(machine_a.join("jobs"))
        .unwrap()
        .map(|e| {
            e.unwrap()
                .path()
                .join("moved/checkpoints/partitioning_info.json")
        })
        .find(|p| p.is_file())
        .expect("machine A's mirror of the job");
    assert_eq!(
        std::fs::read(mirrored).unwrap(),
        s3.get("jobs/moved/checkpoints/partitioning_info.json")
            .unwrap(),
        "the hashes machine B recorded replaced machine A's older copy"
    );

    // A bucket that does not exist: a clear error naming it, nothing written.
    let missing = recipe(
        &tmp.path().join("missing"),
        "s3://no-such-bucket/input/corpus.jsonl",
        tmp.path().join("missing/out.jsonl").to_str().unwrap(),
        tmp.path().join("missing/jobs").to_str().unwrap(),
    );
    let out = s3.dj_run(&machine_a, &missing, &[]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("s3://no-such-bucket/input/corpus.jsonl"),
        "{err}"
    );
    assert!(!tmp.path().join("missing/out.jsonl").exists());
}

/// What the fault proxy does with PUT requests (uploads).
#[derive(Default)]
struct Faults {
    /// Answer the first PUT of every object with 503, then let it through.
    flaky: bool,
    /// Once this many PUTs went through, answer every PUT with 503.
    outage_after: Option<usize>,
    seen: std::collections::HashSet<String>,
    passed: usize,
    injected: usize,
}

/// An HTTP proxy on 127.0.0.1 in front of moto that answers some uploads with
/// `503 Service Unavailable`, as an overloaded or failing S3 endpoint does.
struct FaultProxy {
    port: u16,
    faults: std::sync::Arc<std::sync::Mutex<Faults>>,
}

impl FaultProxy {
    fn start(upstream: u16, faults: Faults) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let faults = std::sync::Arc::new(std::sync::Mutex::new(faults));
        let shared = faults.clone();
        // The thread ends with the test binary; it only ever serves this test's requests.
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let faults = shared.clone();
                std::thread::spawn(move || {
                    let _ = proxy_one(conn, upstream, &faults);
                });
            }
        });
        FaultProxy { port, faults }
    }

    fn injected(&self) -> usize {
        self.faults.lock().unwrap().injected
    }
}

/// Serves one request on `client` (then closes it): answered with 503, or forwarded to moto.
fn proxy_one(
    client: TcpStream,
    upstream: u16,
    faults: &std::sync::Mutex<Faults>,
) -> std::io::Result<()> {
    use std::io::BufRead;
    let mut reader = std::io::BufReader::new(client.try_clone()?);
    let mut head = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let end = line == "\r\n";
        head.push(line);
        if end {
            break;
        }
    }
    let mut words = head[0].split_whitespace();
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let len: usize = head
        .iter()
        .find_map(|h| {
            let (k, v) = h.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    reader.read_exact(&mut body)?;
    let inject = method == "PUT" && {
        let mut f = faults.lock().unwrap();
        let inject = (f.flaky && f.seen.insert(target.to_string()))
            || f.outage_after.is_some_and(|n| f.passed >= n);
        if inject {
            f.injected += 1;
        } else {
            f.passed += 1;
        }
        inject
    };
    let mut client = client;
    if inject {
        return client.write_all(
            b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        );
    }
    let mut up = TcpStream::connect(("127.0.0.1", upstream))?;
    for h in &head {
        if h == "\r\n" {
            up.write_all(b"Connection: close\r\n\r\n")?;
        } else if !h.to_ascii_lowercase().starts_with("connection:") {
            up.write_all(h.as_bytes())?;
        }
    }
    up.write_all(&body)?;
    let mut response = Vec::new();
    up.read_to_end(&mut response)?;
    client.write_all(&response)
}

/// Uploads that fail: a failing PUT is retried with backoff (a flaky endpoint costs nothing);
/// an outage fails the job with an error naming the object, and the job then resumes on
/// another machine from what was published, to the export of a run without faults.
#[test]
fn failed_uploads_are_retried_and_an_outage_leaves_the_job_resumable() {
    let (s3, _) = S3Server::with_corpus();
    let tmp = tempfile::tempdir().unwrap();
    let remote = |name: &str| {
        recipe(
            &tmp.path().join(name),
            &format!("s3://{BUCKET}/input/corpus.jsonl"),
            &format!("s3://{BUCKET}/out/{name}.jsonl"),
            &format!("s3://{BUCKET}/jobs"),
        )
    };
    let through = |proxy: &FaultProxy, cache: &Path, recipe: &Path, args: &[&str]| {
        s3.dj_run(cache, recipe, args)
            .env(
                "AWS_ENDPOINT_URL",
                format!("http://127.0.0.1:{}", proxy.port),
            )
            .env("DJ_STORE_RETRIES", "3")
            .output()
            .unwrap()
    };
    let reference = remote("reference");
    ok(&s3
        .dj_run(&tmp.path().join("ref-cache"), &reference, &[])
        .output()
        .unwrap());
    let want = s3.get("out/reference.jsonl").unwrap();

    // Every object's first upload fails: each is retried, the job completes.
    let proxy = FaultProxy::start(
        s3.port,
        Faults {
            flaky: true,
            ..Default::default()
        },
    );
    let flaky = remote("flaky");
    ok(&through(
        &proxy,
        &tmp.path().join("flaky-cache"),
        &flaky,
        &["--job_id", "flaky"],
    ));
    assert_eq!(s3.get("out/flaky.jsonl").unwrap(), want);
    assert!(proxy.injected() >= 10, "{} faults", proxy.injected());
    let published = s3.keys("jobs/flaky/checkpoints/checkpoint_op_");
    assert_eq!(
        published.len(),
        32,
        "16 checkpoints and their seals: {published:?}"
    );

    // The endpoint fails for good after some uploads: the job fails naming the object, and a
    // machine with only the bucket finishes it.
    let mut strict = 0;
    // (The first upload is the job's lease.)
    for after in [0, 5, 13, 31] {
        let proxy = FaultProxy::start(
            s3.port,
            Faults {
                outage_after: Some(after),
                ..Default::default()
            },
        );
        let id = format!("outage_{after}");
        let name = format!("outage{after}");
        let r = remote(&name);
        let out = through(
            &proxy,
            &tmp.path().join(format!("{id}-a")),
            &r,
            &["--job_id", &id],
        );
        assert!(
            !out.status.success(),
            "outage after {after} uploads: the job succeeded"
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("503") && err.contains(&format!("s3://{BUCKET}/")),
            "outage after {after}: {err}"
        );
        eprintln!(
            "outage after {after} uploads ({} failed attempts): {}",
            proxy.injected(),
            err.lines().last().unwrap_or_default()
        );
        // Each failing upload was tried 1 + DJ_STORE_RETRIES times.
        assert!(
            proxy.injected() >= 4,
            "{} attempts failed",
            proxy.injected()
        );
        let published_config = s3
            .keys(&format!("jobs/{id}/"))
            .iter()
            .any(|k| k.ends_with("/recipe.yaml"))
            && s3
                .get(&format!("jobs/{id}/checkpoints/partitioning_info.json"))
                .is_some();
        let flag = if published_config {
            strict += 1;
            "--resume"
        } else {
            "--job_id"
        };
        let out = s3
            .dj_run(&tmp.path().join(format!("{id}-b")), &r, &[flag, &id])
            .output()
            .unwrap();
        ok(&out);
        assert_eq!(
            s3.get(&format!("out/{name}.jsonl")).unwrap(),
            want,
            "outage after {after}: {flag} on another machine"
        );
    }
    assert!(
        strict >= 2,
        "only {strict} outages left a strictly resumable job"
    );
}

/// Rows of a dataset on S3 reference clips next to it (`media/...`): the video ops read them
/// from the bucket and give a local run's export (paths aside); the partitions' content hashes
/// cover the objects, so a strict resume refuses a clip replaced in the bucket.
#[cfg(feature = "media")]
#[test]
fn media_next_to_an_s3_dataset_are_read_from_the_bucket() {
    let s3 = S3Server::start();
    let golden = repo().join("tests/golden");
    for entry in std::fs::read_dir(golden.join("media")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        s3.put(
            &format!("videos/media/{name}"),
            &std::fs::read(&path).unwrap(),
        );
    }
    let corpus = std::fs::read(golden.join("corpus_video_dedup.jsonl")).unwrap();
    s3.put("videos/corpus.jsonl", &corpus);
    let tmp = tempfile::tempdir().unwrap();
    let process = "process:
  - video_duration_filter:
      min_duration: 1
  - video_deduplicator:
  - video_resolution_filter:
      min_width: 150
";
    let local = tmp.path().join("local.yaml");
    write(
        &local,
        &format!(
            "dataset_path: {}\nexport_path: {}\nnp: 1\n{process}",
            golden.join("corpus_video_dedup.jsonl").display(),
            tmp.path().join("local.jsonl").display()
        ),
    );
    ok(&Command::new(env!("CARGO_BIN_EXE_dj-run"))
        .arg("--config")
        .arg(&local)
        .output()
        .unwrap());
    let want = std::fs::read_to_string(tmp.path().join("local.jsonl"))
        .unwrap()
        .replace(golden.to_str().unwrap(), &format!("s3://{BUCKET}/videos"));
    assert!(want.lines().count() >= 3, "{want}");

    let remote = tmp.path().join("remote.yaml");
    write(
        &remote,
        &format!(
            "dataset_path: s3://{BUCKET}/videos/corpus.jsonl\nexport_path: {}\nwork_dir: {}
executor_type: ray_partitioned
partition:
  mode: manual
  num_of_partitions: 2
checkpoint:
  strategy: every_op
{process}",
            tmp.path().join("remote.jsonl").display(),
            tmp.path().join("jobs").display()
        ),
    );
    let cache = tmp.path().join("cache");
    let out = ok(&s3
        .dj_run(&cache, &remote, &["--job_id", "clips"])
        .output()
        .unwrap());
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("remote.jsonl")).unwrap(),
        want,
        "{out}"
    );

    // The same rows over a clip replaced in the bucket are different input.
    crate::resume::forget_completion(&tmp.path().join("jobs/clips"));
    let mut clip = std::fs::read(golden.join("media/bars_176x144.mkv")).unwrap();
    clip.push(0);
    s3.put("videos/media/bars_176x144.mkv", &clip);
    crate::resume::fails_with(
        &s3.dj_run(&cache, &remote, &["--resume", "clips"])
            .output()
            .unwrap(),
        "content hashes do not match the current input",
    );
}
