//! The cluster on separate machines, for real, on one host: object storage (moto), the
//! scheduler, two executors and the clients each run in a network namespace of their own
//! (veth pairs on a bridge, addresses 10.77.0.x) with a private mount of `/tmp/dj-machine` (their
//! cache and work directories), so nothing but object storage is shared. Needs root and `ip`;
//! skipped with a message otherwise.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use dj_plans::store::Remote;

use crate::cluster::{RECIPE, corpus};
use crate::common::{ok, write};

const BUCKET: &str = "dj-machines";
/// Each machine's private directory (a tmpfs of its own mount namespace).
const PRIVATE: &str = "/tmp/dj-machine";

/// A bridge and one network namespace per machine, removed when dropped.
struct Machines {
    tag: String,
    bridge: String,
    names: Vec<String>,
    children: Vec<Child>,
    _logs: tempfile::TempDir,
}

fn sh(args: &[&str]) -> bool {
    Command::new(args[0])
        .args(&args[1..])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

impl Machines {
    /// Machines `names` at 10.77.0.2, .3, ... in order; `None` without root, `ip`, or the
    /// capabilities to create network and mount namespaces.
    fn start(names: &[&str]) -> Option<Machines> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 || !sh(&["ip", "netns", "list"]) {
            return None;
        }
        let tag = format!("{}", std::process::id() % 100_000);
        let bridge = format!("djbr{tag}");
        // Containers may lack the capabilities (network admin, mount namespaces): skip then.
        if !sh(&["unshare", "--mount", "--propagation", "private", "true"])
            || !sh(&["ip", "link", "add", &bridge, "type", "bridge"])
        {
            return None;
        }
        let run = |args: &[&str]| assert!(sh(args), "{args:?}");
        run(&["ip", "addr", "add", "10.77.0.1/24", "dev", &bridge]);
        run(&["ip", "link", "set", &bridge, "up"]);
        std::fs::create_dir_all(PRIVATE).unwrap();
        let mut machines = Machines {
            tag: tag.clone(),
            bridge,
            names: Vec::new(),
            children: Vec::new(),
            _logs: tempfile::tempdir().unwrap(),
        };
        for (i, name) in names.iter().enumerate() {
            let ns = format!("dj{tag}{name}");
            let (host, peer) = (format!("dv{tag}{i}"), format!("dp{tag}{i}"));
            let addr = format!("10.77.0.{}/24", i + 2);
            run(&["ip", "netns", "add", &ns]);
            machines.names.push(ns.clone());
            run(&[
                "ip", "link", "add", &host, "type", "veth", "peer", "name", &peer,
            ]);
            run(&["ip", "link", "set", &peer, "netns", &ns]);
            run(&["ip", "link", "set", &host, "master", &machines.bridge]);
            run(&["ip", "link", "set", &host, "up"]);
            run(&[
                "ip", "netns", "exec", &ns, "ip", "addr", "add", &addr, "dev", &peer,
            ]);
            run(&["ip", "netns", "exec", &ns, "ip", "link", "set", &peer, "up"]);
            run(&["ip", "netns", "exec", &ns, "ip", "link", "set", "lo", "up"]);
        }
        Some(machines)
    }

    /// `program args` on machine `name` (in its namespace, with its own `/tmp/dj-machine`).
    fn command(
        &self,
        name: &str,
        env: &[(String, String)],
        program: &str,
        args: &[&str],
    ) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &format!("dj{}{name}", self.tag)])
            .args(["unshare", "--mount", "--propagation", "private", "sh", "-c"])
            .arg(format!("mount -t tmpfs tmpfs {PRIVATE} && exec \"$@\""))
            .arg("sh")
            .arg(program)
            .args(args)
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .env("DJ_CACHE_DIR", format!("{PRIVATE}/cache"));
        c
    }

    /// Where the stderr of the process spawned on machine `name` goes.
    fn log(&self, name: &str) -> std::path::PathBuf {
        self._logs.path().join(format!("{name}.log"))
    }

    fn spawn(&mut self, name: &str, env: &[(String, String)], program: &str, args: &[&str]) {
        let log = std::fs::File::create(self.log(name)).unwrap();
        let child = self
            .command(name, env, program, args)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        self.children.push(child);
    }
}

impl Drop for Machines {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        if std::thread::panicking() {
            for e in std::fs::read_dir(self._logs.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                let text = std::fs::read_to_string(e.path()).unwrap_or_default();
                let tail = &text[text.len().saturating_sub(3000)..];
                eprintln!("--- {} ---\n{tail}", e.file_name().to_string_lossy());
            }
        }
        for ns in &self.names {
            sh(&["ip", "netns", "del", ns]);
        }
        sh(&["ip", "link", "del", &self.bridge]);
    }
}

fn wait_listening(addr: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(addr).is_err() {
        assert!(Instant::now() < deadline, "nothing listens at {addr}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn s3_env() -> Vec<(String, String)> {
    [
        ("AWS_ACCESS_KEY_ID", "test"),
        ("AWS_SECRET_ACCESS_KEY", "test"),
        ("AWS_DEFAULT_REGION", "us-east-1"),
        ("AWS_ENDPOINT_URL", "http://10.77.0.2:5000"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

fn object(key: &str) -> Remote {
    Remote::open_with(
        &format!("s3://{BUCKET}/{key}"),
        &[
            ("aws_endpoint_url", "http://10.77.0.2:5000"),
            ("aws_access_key_id", "test"),
            ("aws_secret_access_key", "test"),
        ],
    )
    .unwrap()
}

/// A 6,000-document checkpointed recipe with a deduplicator, its dataset, export and work
/// directory on object storage, run by a client machine on a scheduler and two executors: the
/// export is the local run's; the job directory (checkpoints, events, summary) is published; the
/// per-op counts are the local run's; a job killed on the client machine resumes on another to
/// the same export; and that machine lists the jobs and queries their checkpoints. The members
/// talk over mutual TLS (`dj-cluster certs`); a machine without credentials is refused.
#[test]
fn a_cluster_of_separate_machines_shares_only_object_storage() {
    let Some(mut m) = Machines::start(&["s3", "sched", "ex1", "ex2", "client", "other"]) else {
        eprintln!(
            "skipped: separate machines need root, `ip` and the capabilities for network and mount namespaces"
        );
        return;
    };
    m.spawn(
        "s3",
        &[],
        "python3",
        &["-m", "moto.server", "-H", "10.77.0.2", "-p", "5000"],
    );
    wait_listening("10.77.0.2:5000");
    let mut s = TcpStream::connect("10.77.0.2:5000").unwrap();
    write!(
        s,
        "PUT /{BUCKET} HTTP/1.1\r\nHost: 10.77.0.2:5000\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    let data = corpus(6000);
    object("input/data.jsonl")
        .put(data.clone().into_bytes())
        .unwrap();

    // The reference: the same recipe run locally on local files.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("data.jsonl"), &data).unwrap();
    let recipe = |name: &str, data: &str, export: &str, work: &str| {
        let path = tmp.path().join(name);
        write(
            &path,
            &RECIPE
                .replace("DATA", data)
                .replace("EXPORT", export)
                .replace("WORK", work)
                .replace("ENGINE", ""),
        );
        path
    };
    let local = recipe(
        "local.yaml",
        tmp.path().join("data.jsonl").to_str().unwrap(),
        tmp.path().join("out/result.jsonl").to_str().unwrap(),
        tmp.path().join("jobs").to_str().unwrap(),
    );
    let local_out = ok(&Command::new(env!("CARGO_BIN_EXE_dj-run"))
        .arg("--config")
        .arg(&local)
        .output()
        .unwrap());
    let want = std::fs::read(tmp.path().join("out/result.jsonl")).unwrap();

    // Every member has credentials from the cluster's CA: the cluster runs over mutual TLS.
    let certs = tmp.path().join("certs");
    let cluster = env!("CARGO_BIN_EXE_dj-cluster");
    ok(&Command::new(cluster)
        .args(["certs", "--out", certs.to_str().unwrap()])
        .args([
            "--name", "sched", "--name", "ex1", "--name", "ex2", "--name", "client",
        ])
        .output()
        .unwrap());
    let tls = |member: &str| certs.join(member).to_str().unwrap().to_string();
    let client_tls = tls("client");
    let sched_tls = tls("sched");
    m.spawn(
        "sched",
        &[],
        cluster,
        &[
            "scheduler",
            "--bind",
            "10.77.0.3:50050",
            "--tls",
            &sched_tls,
        ],
    );
    wait_listening("10.77.0.3:50050");
    for (name, host) in [("ex1", "10.77.0.4"), ("ex2", "10.77.0.5")] {
        let work = format!("{PRIVATE}/work");
        let member_tls = tls(name);
        let args = [
            "executor",
            "--scheduler",
            "10.77.0.3:50050",
            "--bind-host",
            host,
            "--port",
            "50051",
            "--grpc-port",
            "50052",
            "--slots",
            "1",
            "--work-dir",
            &work,
            "--tls",
            &member_tls,
        ];
        m.spawn(name, &s3_env(), cluster, &args);
        wait_listening(&format!("{host}:50051"));
    }
    let remote = recipe(
        "remote.yaml",
        &format!("s3://{BUCKET}/input/data.jsonl"),
        &format!("s3://{BUCKET}/out/result.jsonl"),
        &format!("s3://{BUCKET}/jobs"),
    );
    let run = |machine: &str, args: &[&str]| -> Output {
        m.command(
            machine,
            &s3_env(),
            env!("CARGO_BIN_EXE_dj-run"),
            &[&["--config", remote.to_str().unwrap()], args].concat(),
        )
        .output()
        .unwrap()
    };
    // A machine without credentials is refused before it makes a job, and the scheduler logs
    // the refusal.
    let refused = run(
        "other",
        &[
            "--engine",
            "ballista",
            "--scheduler",
            "10.77.0.3:50050",
            "--job_id",
            "intruder",
        ],
    );
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && err.contains("does not accept this client"),
        "{err}"
    );
    assert!(object("jobs/intruder/").list().unwrap().is_empty());
    let sched_log = std::fs::read_to_string(m.log("sched")).unwrap();
    assert!(
        sched_log.contains("scheduler: refused a connection from 10.77.0.7"),
        "{sched_log}"
    );
    let out = ok(&run(
        "client",
        &[
            "--engine",
            "ballista",
            "--scheduler",
            "10.77.0.3:50050",
            "--tls",
            &client_tls,
            "--job_id",
            "apart",
        ],
    ));
    let (got, _) = object("out/result.jsonl")
        .get()
        .unwrap()
        .expect("the export");
    assert!(
        got == want,
        "the cluster's export differs from the local one"
    );
    // The per-op table: counts as locally.
    let table = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.trim_start().starts_with('#'))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(table(&out), table(&local_out), "{out}");
    for key in [
        "jobs/apart/job_summary.json",
        "jobs/apart/checkpoints/partitioning_info.json",
        "jobs/apart/checkpoints/checkpoint_op_0005_partition_0007.parquet",
    ] {
        assert!(object(key).head().unwrap().is_some(), "{key} published");
    }
    // The published event log has each op's true figures.
    let events: Vec<serde_json::Value> = object("jobs/apart/")
        .list()
        .unwrap()
        .into_iter()
        .filter(|o| o.location.as_ref().contains("/events_"))
        .flat_map(|o| {
            let key = o
                .location
                .as_ref()
                .strip_prefix(&format!("{BUCKET}/"))
                .unwrap_or(o.location.as_ref())
                .to_string();
            let (bytes, _) = object(&key).get().unwrap().unwrap();
            String::from_utf8(bytes)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect::<Vec<_>>()
        })
        .collect();
    for op in [
        "whitespace_normalization_mapper",
        "document_deduplicator",
        "words_num_filter",
    ] {
        let done: Vec<_> = events
            .iter()
            .filter(|e| e["event_type"] == "op_complete" && e["operation_name"] == op)
            .collect();
        assert_eq!(done.len(), 8, "{op}: one op_complete per partition");
        assert!(
            done.iter()
                .map(|e| e["output_rows"].as_u64().unwrap())
                .sum::<u64>()
                > 0,
            "{op}"
        );
        assert!(
            done.iter()
                .map(|e| e["duration"].as_f64().unwrap())
                .sum::<f64>()
                > 0.0,
            "{op}"
        );
    }

    // Killed on the client machine part-way, resumed on another one with only the bucket.
    let mut killed = m
        .command(
            "client",
            &[
                s3_env(),
                vec![
                    ("DJ_EVENT_DELAY_MS".into(), "20".into()),
                    ("DJ_JOB_LEASE_SECONDS".into(), "2".into()),
                ],
            ]
            .concat(),
            env!("CARGO_BIN_EXE_dj-run"),
            &[
                "--config",
                remote.to_str().unwrap(),
                "--engine",
                "ballista",
                "--scheduler",
                "10.77.0.3:50050",
                "--tls",
                &client_tls,
                "--job_id",
                "moved",
            ],
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let published = || {
        object("jobs/moved/checkpoints/")
            .list()
            .map(|l| {
                l.iter()
                    .filter(|o| o.location.as_ref().ends_with(".parquet"))
                    .count()
            })
            .unwrap_or(0)
    };
    while published() < 3 {
        assert!(killed.try_wait().unwrap().is_none(), "the run ended first");
        assert!(Instant::now() < deadline, "no checkpoints published");
        std::thread::sleep(Duration::from_millis(20));
    }
    killed.kill().unwrap();
    killed.wait().unwrap();
    object("out/result.jsonl").put(b"stale".to_vec()).unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    let resumed = ok(&run(
        "other",
        &[
            "--engine",
            "ballista",
            "--scheduler",
            "10.77.0.3:50050",
            "--tls",
            &client_tls,
            "--resume",
            "moved",
        ],
    ));
    let (got, _) = object("out/result.jsonl")
        .get()
        .unwrap()
        .expect("the export");
    assert!(got == want, "the resumed export differs: {resumed}");

    // Another machine, with nothing but the bucket: the job is listed, its checkpoints queried.
    let tool = |program: &str, args: &[&str]| {
        ok(&m
            .command("other", &s3_env(), program, args)
            .output()
            .unwrap())
    };
    let listed = tool(
        env!("CARGO_BIN_EXE_dj-job"),
        &[
            "list",
            "--work_dir",
            &format!("s3://{BUCKET}/jobs"),
            "--json",
        ],
    );
    assert!(
        listed.contains("\"apart\"") && listed.contains("\"completed\""),
        "{listed}"
    );
    let counted = tool(
        env!("CARGO_BIN_EXE_dj-sql"),
        &[
            "--work_dir",
            &format!("s3://{BUCKET}/jobs"),
            "apart",
            "SELECT count(*) AS n FROM checkpoint_op_0005",
            "--format",
            "json",
        ],
    );
    let n: serde_json::Value = serde_json::from_str(&counted).unwrap();
    assert_eq!(
        n[0]["n"].as_u64().unwrap() as usize,
        std::str::from_utf8(&want).unwrap().lines().count()
    );
}
