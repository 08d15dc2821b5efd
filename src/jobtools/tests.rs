use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use serde_json::{Value, json};

use super::dir::epoch_now;
use super::job_progress::{JobStatus, OpRef, PartitionStatus, job_progress, progress_at};
use super::list::list_jobs;
use super::report::{human_duration, render_list, render_progress};
use super::stop::stop_job;
use super::*;
use crate::job::events::{load_events, python_json};
use crate::job::{JobPaths, lock_info};

/// A hand-written job directory.
struct Dir {
    tmp: tempfile::TempDir,
}

impl Dir {
    fn new() -> Dir {
        Dir {
            tmp: tempfile::tempdir().unwrap(),
        }
    }
    fn job(&self, id: &str) -> PathBuf {
        let d = self.tmp.path().join(id);
        std::fs::create_dir_all(paths(&d).checkpoints).unwrap();
        d
    }
}

fn paths(dir: &Path) -> JobPaths {
    JobPaths::new(dir.to_path_buf())
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Two partitions of 6 and 4 rows, ops `m` (mapper) and `f` (filter).
fn layout(dir: &Path) {
    write(
        &paths(dir).partitioning_info(),
        r#"{"num_partitions": 2, "total_rows": 10, "dataset_path": "data/in.jsonl",
           "partitions": [{"partition_id": 0, "row_count": 6, "start_row": 0, "end_row": 6, "content_hash": "a"},
                          {"partition_id": 1, "row_count": 4, "start_row": 6, "end_row": 10, "content_hash": "b"}]}"#,
    );
    write(
        &paths(dir).dataset_mapping(),
        r#"{"original_dataset_path": "data/in.jsonl", "original_dataset_size": 10, "partition_size": 6, "partitions": []}"#,
    );
    write(
        &dir.join("r.yaml"),
        "dataset_path: data/in.jsonl\nexport_path: out/x.jsonl\nprocess:\n  - m:\n  - f:\n      min_len: 3\n",
    );
    write(&paths(dir).cli_args(), "arguments:\n- --np\n- '2'\n");
}

fn ev(kind: &str, t: f64, extra: Value) -> String {
    let mut v = json!({"event_type": kind, "timestamp": t, "message": "", "job_id": "j"});
    if let (Some(m), Value::Object(x)) = (v.as_object_mut(), extra) {
        m.extend(x);
    }
    python_json(&v) + "\n"
}

/// Partition `p` runs both ops: `m` 100.0→ +2s (rows in→in), `f` in→out; checkpoint after f.
fn partition_run(p: usize, t: f64, rows_in: u64, rows_out: u64) -> String {
    let mut s = String::new();
    s += &ev("partition_start", t, json!({"partition_id": p}));
    for (i, n) in [(0, "m"), (1, "f")] {
        s += &ev(
            "op_start",
            t,
            json!({"partition_id": p, "operation_idx": i, "operation_name": n}),
        );
    }
    s += &ev(
        "op_complete",
        t + 2.0,
        json!({"partition_id": p, "operation_idx": 0, "operation_name": "m", "duration": 1.0, "input_rows": rows_in, "output_rows": rows_in, "status": "success"}),
    );
    s += &ev(
        "op_complete",
        t + 2.0,
        json!({"partition_id": p, "operation_idx": 1, "operation_name": "f", "duration": 1.0, "input_rows": rows_in, "output_rows": rows_out, "status": "success"}),
    );
    s += &ev(
        "checkpoint_save",
        t + 2.0,
        json!({"partition_id": p, "operation_idx": 1, "operation_name": "f", "output_rows": rows_out,
               "checkpoint_path": format!("elsewhere/checkpoints/checkpoint_op_0001_partition_{p:04}.parquet")}),
    );
    s += &ev(
        "partition_complete",
        t + 2.0,
        json!({"partition_id": p, "output_rows": rows_out, "duration": 2.0}),
    );
    s
}

fn completed_job(dir: &Path) {
    layout(dir);
    let mut s = ev("job_start", 1000.0, json!({"total_partitions": 2}));
    s += &partition_run(0, 1000.0, 6, 3);
    s += &partition_run(1, 1002.0, 4, 4);
    s += &ev("job_complete", 1005.0, json!({"status": "completed"}));
    write(&paths(dir).events_file("20260101_000000"), &s);
    write(
        &paths(dir)
            .checkpoints
            .join("checkpoint_op_0001_partition_0000.parquet"),
        "x",
    );
    write(
        &paths(dir)
            .checkpoints
            .join("checkpoint_op_0001_partition_0001.parquet"),
        "x",
    );
}

#[test]
fn progress_of_a_completed_job() {
    let d = Dir::new();
    let job = d.job("done");
    completed_job(&job);
    let p = job_progress(&job).unwrap();
    assert_eq!(p.status, JobStatus::Completed);
    assert_eq!(p.job_id, "done");
    assert_eq!(p.ops, ["m", "f"]);
    assert_eq!(p.runs, 1);
    assert_eq!(p.elapsed_seconds, Some(5.0));
    assert_eq!(p.pid, None);
    assert!(!p.lock.present);
    let o = &p.overall;
    assert_eq!(
        (
            o.total_partitions,
            o.completed_partitions,
            o.pending_partitions
        ),
        (2, 2, 0)
    );
    assert_eq!(o.progress_percentage, 100.0);
    assert_eq!(
        (o.total_samples, o.processed_samples, o.output_rows),
        (10, 10, 7)
    );
    assert_eq!(o.throughput_rows_per_second, Some(2.0)); // 10 rows in 5 s
    assert_eq!(o.estimated_remaining_seconds, Some(0.0));
    assert_eq!((o.checkpoints, o.checkpoints_on_disk), (2, 2));
    let p0 = &p.partitions[0];
    assert_eq!(p0.status, PartitionStatus::Completed);
    assert_eq!(p0.sample_count, Some(6));
    assert_eq!(p0.output_rows, Some(3));
    assert_eq!(p0.duration_seconds, Some(2.0));
    assert_eq!(p0.current_op, None);
    assert_eq!(p0.completed_ops.len(), 2);
    let f = &p0.completed_ops[1];
    assert_eq!((f.idx, f.name.as_str()), (1, "f"));
    assert_eq!(f.throughput_rows_per_second, Some(6.0));
    assert_eq!(f.reduction_ratio, Some(0.5));
    assert_eq!(p.partitions[1].completed_ops[1].reduction_ratio, Some(0.0));
    let c = &p0.checkpoints[0];
    assert_eq!(c.rows, Some(3));
    assert!(c.exists);
    assert_eq!(
        c.path,
        paths(&job)
            .checkpoints
            .join("checkpoint_op_0001_partition_0000.parquet")
    );
    let text = render_progress(&p, true, d.tmp.path());
    for want in [
        "COMPLETED",
        "100.0% (2/2 partitions)",
        "10/10 processed, 7 rows out",
        "OPERATION DETAILS",
        "reduction 50.0%",
        "6.0 rows/s",
    ] {
        assert!(text.contains(want), "{want:?} not in\n{text}");
    }
}

#[test]
fn progress_of_a_running_job_with_eta() {
    let d = Dir::new();
    let job = d.job("run");
    layout(&job);
    let now = epoch_now();
    let t = now - 10.0;
    let mut s = ev("job_start", t, json!({}));
    s += &partition_run(0, t, 6, 3);
    s += &ev("partition_start", t + 3.0, json!({"partition_id": 1}));
    for (i, n) in [(0, "m"), (1, "f")] {
        s += &ev(
            "op_start",
            t + 3.0,
            json!({"partition_id": 1, "operation_idx": i, "operation_name": n}),
        );
    }
    write(&paths(&job).events_file("20260101_000000"), &s);
    // This test process holds the lock: the job is running.
    write(&paths(&job).lock(), &std::process::id().to_string());
    let p = progress_at(&job, now).unwrap();
    assert_eq!(p.status, JobStatus::Running);
    assert_eq!(p.pid, Some(std::process::id() as i32));
    let o = &p.overall;
    assert_eq!((o.completed_partitions, o.processing_partitions), (1, 1));
    assert_eq!(o.progress_percentage, 50.0);
    assert_eq!(o.processed_samples, 6);
    let elapsed = p.elapsed_seconds.unwrap();
    assert!((elapsed - 10.0).abs() < 1e-6, "{elapsed}");
    // 10 s for one partition, one left.
    assert!((o.estimated_remaining_seconds.unwrap() - 10.0).abs() < 1e-6);
    assert!((o.throughput_rows_per_second.unwrap() - 0.6).abs() < 1e-6); // elapsed is 10 s up to float rounding of the timestamps
    let p1 = &p.partitions[1];
    assert_eq!(p1.status, PartitionStatus::Processing);
    assert_eq!(
        p1.current_op,
        Some(OpRef {
            idx: 0,
            name: "m".into()
        })
    );
    // The checkpoint event's file is not on disk.
    assert_eq!((o.checkpoints, o.checkpoints_on_disk), (1, 0));
    let text = render_progress(&p, false, d.tmp.path());
    assert!(text.contains("To stop this job"), "{text}");
    assert!(text.contains("ETA:             10.0"), "{text}"); // 10.0s, or 10.00s just under 10 s

    // Once op 0's checkpoint of partition 1 is durable, the partition is at op 1.
    s += &ev(
        "checkpoint_save",
        t + 4.0,
        json!({"partition_id": 1, "operation_idx": 0, "operation_name": "m", "output_rows": 4}),
    );
    write(&paths(&job).events_file("20260101_000000"), &s);
    let p = progress_at(&job, now).unwrap();
    let p1 = &p.partitions[1];
    assert_eq!(p1.current_op.as_ref().map(|o| o.idx), Some(1));
    assert_eq!(p1.checkpoints[0].rows, Some(4));
    assert_eq!(p.overall.checkpoints, 2);
}

#[test]
fn dead_stopped_and_failed_jobs() {
    let d = Dir::new();
    // Killed mid-run: a lock of a dead process, no job_complete/job_failed.
    let job = d.job("dead");
    layout(&job);
    let mut s = ev("job_start", 100.0, json!({}));
    s += &partition_run(0, 100.0, 6, 3);
    s += &ev("partition_start", 103.0, json!({"partition_id": 1}));
    s += "{\"event_type\": \"op_sta"; // torn by the kill
    write(&paths(&job).events_file("20260101_000000"), &s);
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead_pid = child.id();
    child.wait().unwrap();
    write(&paths(&job).lock(), &dead_pid.to_string());
    let p = job_progress(&job).unwrap();
    assert_eq!(p.status, JobStatus::Dead);
    assert!(p.lock.present && p.lock.stale);
    assert_eq!(p.lock.pid, Some(dead_pid as i32));
    assert_eq!(p.pid, None);
    assert_eq!(p.partitions[1].status, PartitionStatus::Interrupted);
    assert_eq!(p.overall.interrupted_partitions, 1);
    assert_eq!(p.overall.estimated_remaining_seconds, None);
    assert_eq!(p.elapsed_seconds, Some(3.0));
    let err = stop_job(&job, false, Duration::from_secs(1)).unwrap_err();
    assert!(
        format!("{err}").contains("job dead is not running: its lock names process"),
        "{err}"
    );

    // Stopped by SIGTERM, then resumed: the second run starts partition 1 again.
    let job = d.job("stopped");
    layout(&job);
    let mut s = ev("job_start", 100.0, json!({}));
    s += &partition_run(0, 100.0, 6, 3);
    s += &ev("partition_start", 103.0, json!({"partition_id": 1}));
    s += &ev(
        "job_failed",
        104.0,
        json!({"status": "stopped", "error_message": "interrupted by SIGTERM"}),
    );
    write(&paths(&job).events_file("20260101_000000"), &s);
    let p = job_progress(&job).unwrap();
    assert_eq!(p.status, JobStatus::Stopped);
    assert_eq!(p.error_message.as_deref(), Some("interrupted by SIGTERM"));
    assert_eq!(p.partitions[1].status, PartitionStatus::Interrupted);
    assert!(
        render_progress(&p, false, d.tmp.path())
            .contains("dj-run --config r.yaml --np 2 --resume stopped")
    );
    let err = stop_job(&job, true, Duration::from_secs(1)).unwrap_err();
    assert!(
        format!("{err}").contains("job stopped is not running (no lock file; status: stopped)"),
        "{err}"
    );
    let mut s2 = ev(
        "checkpoint_load",
        200.0,
        json!({"partition_id": 0, "operation_idx": 1, "operation_name": "f"}),
    );
    s2 += &ev("job_start", 200.0, json!({}));
    write(&paths(&job).events_file("20260101_000500"), &s2);
    let p = job_progress(&job).unwrap();
    assert_eq!(p.runs, 2);
    assert_eq!(p.start_time, Some(100.0));
    assert_eq!(p.run_start_time, Some(200.0));
    assert_eq!(p.status, JobStatus::Dead);
    assert_eq!(p.partitions[0].status, PartitionStatus::Completed);
    assert_eq!(p.partitions[0].resumed_from_op.as_ref().unwrap().idx, 1);
    assert_eq!(p.partitions[1].status, PartitionStatus::Pending);

    // A failed partition fails the job.
    let job = d.job("failed");
    layout(&job);
    let mut s = ev("job_start", 100.0, json!({}));
    s += &ev("partition_start", 100.0, json!({"partition_id": 0}));
    s += &ev(
        "op_failed",
        101.0,
        json!({"partition_id": 0, "operation_idx": 1, "operation_name": "f", "error_message": "disk full"}),
    );
    s += &ev(
        "partition_failed",
        101.0,
        json!({"partition_id": 0, "status": "failed", "error_message": "disk full"}),
    );
    s += &ev(
        "job_failed",
        101.5,
        json!({"status": "failed", "error_message": "partition 0 failed"}),
    );
    write(&paths(&job).events_file("20260101_000000"), &s);
    let p = job_progress(&job).unwrap();
    assert_eq!(p.status, JobStatus::Failed);
    let p0 = &p.partitions[0];
    assert_eq!(p0.status, PartitionStatus::Failed);
    assert_eq!(p0.error_message.as_deref(), Some("disk full"));
    assert_eq!(p0.failed_op.as_ref().unwrap().name, "f");
    assert_eq!(p.partitions[1].status, PartitionStatus::Pending);
    assert_eq!(
        (
            p.overall.failed_partitions,
            p.overall.pending_partitions,
            p.overall.progress_percentage
        ),
        (1, 1, 0.0)
    );
}

#[test]
fn summary_and_events_load() {
    let d = Dir::new();
    let job = d.job("done");
    assert_eq!(load_job_summary(&job).unwrap(), None);
    completed_job(&job);
    write(
        &paths(&job).summary(),
        r#"{"status": "completed", "rows_out": 7}"#,
    );
    assert_eq!(load_job_summary(&job).unwrap().unwrap().rows_out, 7);
    assert_eq!(load_events(&job).len(), 16);
    let err = job_progress(&d.tmp.path().join("nope")).unwrap_err();
    assert!(format!("{err}").starts_with("Job directory not found: "));
    assert!(job_progress(&d.tmp.path().join("nope")).is_err());
    std::fs::create_dir_all(d.tmp.path().join("plain")).unwrap();
    let err = job_progress(&d.tmp.path().join("plain")).unwrap_err();
    assert!(format!("{err}").contains("is not a job directory"), "{err}");
}

#[test]
fn list_jobs_newest_first_with_locks() {
    let d = Dir::new();
    completed_job(&d.job("a_done"));
    let live = d.job("b_live");
    layout(&live);
    write(
        &paths(&live).events_file("20260101_000000"),
        &ev("job_start", 2000.0, json!({})),
    );
    write(&paths(&live).lock(), &std::process::id().to_string());
    let stale = d.job("c_stale");
    write(
        &paths(&stale).events_file("20260101_000000"),
        &ev("job_start", 1500.0, json!({})),
    );
    write(&paths(&stale).lock(), "999999999");
    std::fs::create_dir_all(d.tmp.path().join("not_a_job/x")).unwrap();
    write(&d.tmp.path().join("file.txt"), "x");
    let jobs = list_jobs(d.tmp.path()).unwrap();
    let ids: Vec<&str> = jobs.iter().map(|j| j.job_id.as_str()).collect();
    assert_eq!(ids, ["b_live", "c_stale", "a_done"]);
    assert_eq!(jobs[0].status, JobStatus::Running);
    assert_eq!(jobs[0].pid, Some(std::process::id() as i32));
    assert!(!jobs[0].stale_lock);
    assert_eq!(
        (jobs[0].completed_partitions, jobs[0].total_partitions),
        (0, 2)
    );
    assert_eq!(jobs[1].status, JobStatus::Dead);
    assert!(jobs[1].stale_lock && jobs[1].pid.is_none());
    assert_eq!(jobs[2].status, JobStatus::Completed);
    assert_eq!(jobs[2].progress_percentage, 100.0);
    let text = render_list(&jobs, d.tmp.path());
    assert!(
        text.contains("b_live") && text.contains("stale lock"),
        "{text}"
    );
    assert!(list_jobs(&d.tmp.path().join("missing")).is_err());
}

/// A job "run" by a child process: `sh` ignoring SIGTERM or not.
fn child_job(d: &Dir, id: &str, ignore_term: bool) -> (PathBuf, std::process::Child) {
    let job = d.job(id);
    layout(&job);
    write(
        &paths(&job).events_file("20260101_000000"),
        &ev("job_start", epoch_now(), json!({})),
    );
    let script = if ignore_term {
        "trap '' TERM; exec sleep 30"
    } else {
        "exec sleep 30"
    };
    let child = std::process::Command::new("sh")
        .args(["-c", script])
        .spawn()
        .unwrap();
    write(&paths(&job).lock(), &child.id().to_string());
    (job, child)
}

#[test]
fn stop_graceful_force_and_timeout() {
    use std::os::unix::process::ExitStatusExt;
    let d = Dir::new();
    // Graceful: SIGTERM ends it; the lock it left is removed as stale.
    let (job, mut child) = child_job(&d, "term", false);
    assert_eq!(job_progress(&job).unwrap().status, JobStatus::Running);
    let r = stop_job(&job, false, Duration::from_secs(10)).unwrap();
    assert!(r.success && r.process_exited, "{r:?}");
    assert_eq!(r.signal, "SIGTERM");
    assert!(r.stale_lock_removed && r.lock_released);
    assert!(!r.stop_event_logged);
    assert_eq!(r.status, JobStatus::Dead);
    assert!(r.resumable);
    assert_eq!(
        r.resume_command.as_deref(),
        Some("dj-run --config r.yaml --np 2 --resume term")
    );
    assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGTERM));
    assert!(!paths(&job).lock().exists());

    // SIGTERM ignored: the stop times out and says so; --force then kills it.
    let (job, mut child) = child_job(&d, "stubborn", true);
    std::thread::sleep(Duration::from_millis(200)); // let sh install the trap
    let r = stop_job(&job, false, Duration::from_millis(300)).unwrap();
    assert!(!r.success && !r.process_exited, "{r:?}");
    assert!(r.message.contains("still running") && r.message.contains("--force"));
    assert_eq!(r.status, JobStatus::Running);
    let r = stop_job(&job, true, Duration::from_secs(10)).unwrap();
    assert!(r.success && r.process_exited, "{r:?}");
    assert_eq!(r.signal, "SIGKILL");
    assert!(r.stale_lock_removed && r.stop_event_logged);
    assert_eq!(r.status, JobStatus::Stopped);
    assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
    let last = load_events(&job).pop().unwrap();
    assert_eq!(last["event_type"], "job_failed");
    assert_eq!(last["status"], "stopped");
    let err = stop_job(&job, true, Duration::from_secs(1)).unwrap_err();
    assert!(format!("{err}").contains("is not running"), "{err}");
}

#[test]
fn a_reused_pid_is_not_the_job() {
    let d = Dir::new();
    let job = d.job("old");
    write(
        &paths(&job).events_file("20260101_000000"),
        &ev("job_start", 1.0, json!({})),
    );
    write(&paths(&job).lock(), &std::process::id().to_string());
    // The lock is older than this (live) process: its pid was reused.
    let old = std::fs::File::options()
        .write(true)
        .open(paths(&job).lock())
        .unwrap();
    old.set_modified(UNIX_EPOCH + Duration::from_secs(1_000_000))
        .unwrap();
    let l = lock_info(&job);
    assert!(l.present && l.stale, "{l:?}");
    assert_eq!(job_progress(&job).unwrap().status, JobStatus::Dead);
}

#[test]
fn durations_read_well() {
    assert_eq!(human_duration(0.25), "0.25s");
    assert_eq!(human_duration(12.34), "12.3s");
    assert_eq!(human_duration(245.0), "4m 05s");
    assert_eq!(human_duration(7380.0), "2h 03m");
}
