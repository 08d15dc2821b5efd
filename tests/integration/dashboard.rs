//! `dj-job serve`: the live dashboard, driven in headless Chromium over its DevTools protocol
//! while a slowed job runs, is stopped from the page and resumed; and its API's guards (token,
//! path traversal, CSRF) over plain HTTP.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{repo, write};

/// A running `dj-job serve`, killed when dropped.
pub(crate) struct Served {
    child: Child,
    pub(crate) addr: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `dj-job --work_dir WORK serve ARGS` (on a free loopback port unless ARGS bind it) and
/// reads the address it listens on.
fn serve(work_dir: &Path, args: &[&str]) -> Served {
    serve_with(work_dir, args, &[])
}

/// [`serve`] with environment variables (object storage settings).
pub(crate) fn serve_with(work_dir: &Path, args: &[&str], envs: &[(String, String)]) -> Served {
    // A benchmark serves with an optimized build.
    let bin = std::env::var("DJ_JOB_BIN").unwrap_or(env!("CARGO_BIN_EXE_dj-job").to_string());
    let mut child = Command::new(bin)
        .arg("--work_dir")
        .arg(work_dir)
        .arg("serve")
        .args(args)
        .args(if args.contains(&"--bind") {
            &[][..]
        } else {
            &["--bind", "127.0.0.1:0"][..]
        })
        .envs(envs.iter().cloned())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let addr = line
        .split("http://")
        .nth(1)
        .unwrap_or_else(|| {
            let mut err = String::new();
            let _ = stderr.read_to_string(&mut err);
            panic!("no address in {line:?}: {err}")
        })
        .trim()
        .trim_end_matches('/')
        .to_string();
    // Its warnings (refused requests) must never fill the pipe.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    Served { child, addr }
}

/// One HTTP/1.1 request; returns the status and the body.
pub(crate) fn http(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("Content-Length: 0\r\n\r\n");
    s.write_all(req.as_bytes()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    // Headers, then a body of Content-Length bytes (not every server closes the connection).
    let mut r = BufReader::new(s);
    let mut status_line = String::new();
    r.read_line(&mut status_line).unwrap();
    let status = status_line[9..12].parse().unwrap();
    let mut length = None;
    loop {
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        if line.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse::<usize>().ok();
        }
    }
    let mut body = Vec::new();
    match length {
        Some(n) => {
            body.resize(n, 0);
            r.read_exact(&mut body).unwrap();
        }
        None => {
            r.read_to_end(&mut body).unwrap();
        }
    }
    (status, String::from_utf8_lossy(&body).into_owned())
}

/// Headless Chromium on one page, driven over the DevTools protocol.
struct Browser {
    child: Child,
    ws: tungstenite::WebSocket<TcpStream>,
    next_id: u64,
    _profile: tempfile::TempDir,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Browser {
    fn open(url: &str) -> Browser {
        let profile = tempfile::tempdir().unwrap();
        let mut child = Command::new("chromium")
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--remote-debugging-port=0",
                "--window-size=1300,1200",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg(url)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("headless Chromium (Debian's chromium package; .ci/run installs it)");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let devtools = loop {
            let line = lines
                .next()
                .expect("Chromium printed no DevTools address")
                .unwrap();
            if let Some(ws) = line.split("DevTools listening on ").nth(1) {
                break ws.trim().to_string();
            }
        };
        // Keep reading its log, so that it never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        let host = devtools["ws://".len()..]
            .split('/')
            .next()
            .unwrap()
            .to_string();
        let page = Self::page_target(&host);
        let stream = TcpStream::connect(&host).unwrap();
        // A page that never answers fails the test instead of hanging it.
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        let (ws, _) = tungstenite::client(page.as_str(), stream).unwrap();
        Browser {
            child,
            ws,
            next_id: 1,
            _profile: profile,
        }
    }

    /// The DevTools WebSocket address of the browser's page.
    fn page_target(host: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let (_, body) = http(host, "GET", "/json/list", &[]);
            if let Ok(targets) = serde_json::from_str::<Vec<Value>>(&body)
                && let Some(t) = targets.iter().find(|t| t["type"] == "page")
            {
                return t["webSocketDebuggerUrl"].as_str().unwrap().to_string();
            }
            assert!(Instant::now() < deadline, "no page target: {body}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let msg = json!({"id": id, "method": method, "params": params}).to_string();
        self.ws.send(tungstenite::Message::text(msg)).unwrap();
        loop {
            let reply = self.ws.read().unwrap();
            let Ok(v) = serde_json::from_str::<Value>(reply.to_text().unwrap_or("")) else {
                continue;
            };
            if v["id"] == id {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
        }
    }

    /// The value of a JavaScript expression in the page.
    fn eval(&mut self, js: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": js, "returnByValue": true, "awaitPromise": true}),
        );
        r["result"]["value"].clone()
    }

    /// Waits until `js` is true in the page.
    fn wait_for(&mut self, what: &str, js: &str, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        while self.eval(js) != json!(true) {
            let status = self.eval("document.getElementById('job-status').textContent");
            assert!(
                Instant::now() < deadline,
                "{what}: never happened (status {status})"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn screenshot(&mut self, path: &Path) {
        let r = self.call("Page.captureScreenshot", json!({"format": "png"}));
        let png = base64_decode(r["data"].as_str().unwrap());
        std::fs::write(path, png).unwrap();
    }
}

fn base64_decode(s: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let bytes: Vec<u8> = s.bytes().filter(|c| *c != b'=').map(value).collect();
    bytes
        .chunks(4)
        .flat_map(|c| {
            let n = c.iter().fold(0u32, |acc, v| acc << 6 | *v as u32) << (6 * (4 - c.len()));
            let all = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
            all.into_iter().take(c.len() - 1)
        })
        .collect()
}

/// A job of 12 partitions and 4 ops with a checkpoint after each, whose every event takes
/// `DJ_EVENT_DELAY_MS`, under `dir`; its project name is markup.
fn slow_job(dir: &Path) -> PathBuf {
    crate::budget::corpus(&dir.join("in.jsonl"), 600, 12);
    let recipe = dir.join("recipe.yaml");
    write(
        &recipe,
        &format!(
            "project_name: '<img src=x onerror=\"document.title=1\">'\n\
             dataset_path: {}\nexport_path: {}\nnp: 2\nexecutor_type: ray_partitioned\n\
             work_dir: {}\npartition:\n  mode: manual\n  num_of_partitions: 12\n\
             \x20 max_concurrent_partitions: 2\ncheckpoint:\n  enabled: true\n  strategy: every_op\n\
             process:\n  - whitespace_normalization_mapper:\n  - text_length_filter:\n      min_len: 5\n\
             \x20 - words_num_filter:\n      min_num: 2\n  - clean_links_mapper:\n",
            dir.join("in.jsonl").display(),
            dir.join("out.jsonl").display(),
            dir.join("jobs").display(),
        ),
    );
    recipe
}

fn dj_run(recipe: &Path, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_dj-run"))
        .arg("--config")
        .arg(recipe)
        .args(args)
        .env("DJ_EVENT_DELAY_MS", "120")
        .env("DJ_PROGRESS", "0")
        .current_dir(repo())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn done_cells(b: &mut Browser) -> u64 {
    b.eval("document.querySelectorAll('#grid td.cell.done').length")
        .as_u64()
        .unwrap()
}

/// The page follows a slowed job: its partitions and ops fill in, an ETA appears, the stop
/// button stops it, and its resume continues on the same page to the end. Saves screenshots.
#[test]
fn the_dashboard_follows_stops_and_resumes_a_job_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let recipe = slow_job(dir.path());
    let jobs = dir.path().join("jobs");
    let mut run = dj_run(&recipe, &["--job_id", "dash"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !jobs.join("dash").is_dir() {
        assert!(Instant::now() < deadline, "the job never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    let served = serve(&jobs, &[]);
    let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("dashboard");
    std::fs::create_dir_all(&shots).unwrap();
    let mut b = Browser::open(&format!("http://{}/#job=dash", served.addr));
    let minute = Duration::from_secs(60);
    b.wait_for(
        "the grid of 12 partitions x 4 ops",
        "document.querySelectorAll('#grid td.cell').length === 48",
        minute,
    );
    b.wait_for(
        "a partition running",
        "document.querySelectorAll('#grid td.cell.running').length > 0",
        minute,
    );
    let first = done_cells(&mut b);
    b.wait_for(
        "more ops done",
        &format!("document.querySelectorAll('#grid td.cell.done').length > {first}"),
        minute,
    );
    b.wait_for(
        "an ETA",
        "/\\d+(s|m)/.test(document.getElementById('eta').textContent)",
        minute,
    );
    // The project name is shown as text: no element made from it, no script run.
    assert_eq!(
        b.eval("document.getElementById('project').textContent"),
        json!("(<img src=x onerror=\"document.title=1\">)")
    );
    assert_eq!(b.eval("document.querySelectorAll('img').length"), json!(0));
    assert_eq!(b.eval("document.title"), json!("dj-fusion jobs"));
    b.screenshot(&shots.join("running.png"));

    b.eval("document.getElementById('stop').click()");
    b.wait_for(
        "the stopped status",
        "document.getElementById('job-status').textContent === 'stopped'",
        minute,
    );
    assert!(
        run.wait().unwrap().code() != Some(0),
        "the stopped run failed"
    );
    assert_eq!(
        b.eval("document.getElementById('resume-bar').hidden"),
        json!(false)
    );
    let resume = b.eval("document.getElementById('resume').textContent");
    assert!(
        resume.as_str().unwrap().contains("--resume dash"),
        "{resume}"
    );
    b.screenshot(&shots.join("stopped.png"));

    let mut resumed = dj_run(&recipe, &["--resume", "dash"]);
    b.wait_for(
        "the resumed run",
        "document.getElementById('job-status').textContent === 'running' && \
         document.getElementById('job-runs').textContent === '2'",
        minute,
    );
    b.wait_for(
        "the job's end",
        "document.getElementById('job-status').textContent === 'completed'",
        Duration::from_secs(120),
    );
    assert!(resumed.wait().unwrap().success());
    assert_eq!(
        b.eval("document.querySelectorAll('#grid td.cell.done, #grid td.cell.reused').length"),
        json!(48)
    );
    assert!(
        b.eval("document.querySelectorAll('#events li').length")
            .as_u64()
            .unwrap()
            > 50,
        "the event stream"
    );
    b.screenshot(&shots.join("resumed.png"));
    for shot in ["running.png", "stopped.png", "resumed.png"] {
        let png = std::fs::read(shots.join(shot)).unwrap();
        assert_eq!(&png[1..4], b"PNG", "{shot}");
    }
}

/// Off loopback the server wants a token, and then refuses requests without it; job ids that
/// climb out of the work directory are refused; a stop needs the page's CSRF token and origin.
#[test]
fn the_dashboard_api_refuses_what_it_must() {
    let dir = tempfile::tempdir().unwrap();
    let jobs = dir.path().join("jobs");
    std::fs::create_dir_all(&jobs).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_dj-job"))
        .arg("--work_dir")
        .arg(&jobs)
        .args(["serve", "--bind", "0.0.0.0:0"])
        .env_remove("DJ_DASHBOARD_TOKEN")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("--token"), "{err}");

    let served = serve(&jobs, &["--bind", "0.0.0.0:0", "--token", "s3cret"]);
    let port = served.addr.rsplit(':').next().unwrap();
    let addr = format!("127.0.0.1:{port}");
    assert_eq!(http(&addr, "GET", "/api/jobs", &[]).0, 401);
    assert_eq!(http(&addr, "GET", "/", &[]).0, 401);
    assert_eq!(http(&addr, "GET", "/api/jobs?token=wrong", &[]).0, 401);
    assert_eq!(http(&addr, "GET", "/api/jobs?token=s3cret", &[]).0, 200);
    let auth = [("Authorization", "Bearer s3cret")];
    let (status, body) = http(&addr, "GET", "/api/jobs", &auth);
    assert_eq!((status, body.contains("[]")), (200, true), "{body}");
    for path in [
        "/api/jobs/..%2F..%2Fetc%2Fpasswd",
        "/api/jobs/..",
        "/api/jobs/..%2Fjobs/events",
        "/api/jobs/a%5C..%5Cb",
    ] {
        let (status, body) = http(&addr, "GET", path, &auth);
        assert_eq!(status, 400, "{path}: {body}");
    }
    assert_eq!(http(&addr, "GET", "/api/jobs/nosuchjob", &auth).0, 404);
    // A stop: without the CSRF token, from another origin, then as the page sends it.
    let (_, page) = http(&addr, "GET", "/", &auth);
    let csrf = page
        .split("name=\"csrf-token\" content=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap()
        .to_string();
    let stop = "/api/jobs/nosuchjob/stop";
    assert_eq!(http(&addr, "POST", stop, &auth).0, 403);
    let forged = [auth[0], ("X-CSRF-Token", "0123")];
    assert_eq!(http(&addr, "POST", stop, &forged).0, 403);
    let other = [
        auth[0],
        ("X-CSRF-Token", &csrf),
        ("Origin", "http://evil.test"),
    ];
    assert_eq!(http(&addr, "POST", stop, &other).0, 403);
    let page_origin = format!("http://{addr}");
    let same = [auth[0], ("X-CSRF-Token", &csrf), ("Origin", &page_origin)];
    assert_eq!(http(&addr, "POST", stop, &same).0, 404);
    assert_eq!(http(&addr, "POST", "/api/jobs/..%2Fx/stop", &same).0, 400);
}

/// What the page costs at scale, for `benches/dashboard.sh`: over the work directory in
/// `DJ_DASHBOARD_WORK` (job `big`, 100 partitions x 20 ops), the time of one poll (the job's
/// JSON fetched and parsed, the page updated) and of the update alone, medians of 10.
#[test]
#[ignore = "a benchmark: run by benches/dashboard.sh"]
fn dashboard_at_scale() {
    let work = PathBuf::from(std::env::var("DJ_DASHBOARD_WORK").expect("DJ_DASHBOARD_WORK"));
    let served = serve(&work, &[]);
    let mut b = Browser::open(&format!("http://{}/#job=big", served.addr));
    b.wait_for(
        "the grid",
        "document.querySelectorAll('#grid td.cell').length === 2000",
        Duration::from_secs(60),
    );
    let (mut polls, mut renders) = (Vec::new(), Vec::new());
    for _ in 0..10 {
        let ms = b.eval(
            "(async () => { lastTag = null; const t = performance.now(); await poll(); \
             return performance.now() - t; })()",
        );
        polls.push(ms.as_f64().unwrap());
        let render = b.eval("document.body.dataset.renderMs");
        renders.push(render.as_str().unwrap().parse::<f64>().unwrap());
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!(
        "page at 100 partitions x 20 ops: a poll {:.1} ms, of which the update {:.1} ms (medians of 10)",
        median(&mut polls),
        median(&mut renders)
    );
}
