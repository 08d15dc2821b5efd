//! The human-readable reports of `dj-job`: progress (plain and detailed) and the job list.

use std::collections::BTreeMap;
use std::path::Path;

use super::job_progress::{JobProgress, JobStatus, MovedAside};
use super::list::JobListing;
use super::stop::resume_command;
use crate::job::JobPaths;

fn local_time(epoch: Option<f64>) -> String {
    epoch
        .and_then(|t| chrono::DateTime::from_timestamp_millis((t * 1000.0) as i64))
        .map(|d| {
            d.with_timezone(&chrono::Local)
                .format("%Y-%m-%d %H:%M:%S")
                .to_string()
        })
        .unwrap_or_else(|| "-".into())
}

/// `0.25s`, `12.3s`, `4m 05s`, `2h 03m`.
pub(crate) fn human_duration(secs: f64) -> String {
    if secs < 10.0 {
        format!("{secs:.2}s")
    } else if secs < 60.0 {
        format!("{secs:.1}s")
    } else if secs < 3600.0 {
        format!("{}m {:02}s", (secs / 60.0) as u64, secs as u64 % 60)
    } else {
        format!(
            "{}h {:02}m",
            (secs / 3600.0) as u64,
            (secs as u64 / 60) % 60
        )
    }
}

fn opt_num(v: Option<u64>) -> String {
    v.map_or("-".into(), |v| v.to_string())
}

/// The monitor's report.
pub(crate) fn render_progress(p: &JobProgress, detailed: bool, work_dir: &Path) -> String {
    let mut s = String::new();
    let rule = "=".repeat(72);
    let sub = "-".repeat(72);
    s.push_str(&format!(
        "{rule}\nDataJuicer Job Progress Monitor\nJob ID: {}\n{rule}\n",
        p.job_id
    ));
    render_overview(p, &mut s);
    render_overall(p, &mut s);
    let o = &p.overall;
    render_partitions(p, &mut s);
    if detailed {
        render_operations_and_checkpoints(p, &mut s);
    }
    let moved: Vec<(usize, &MovedAside)> = p
        .partitions
        .iter()
        .flat_map(|part| part.moved_aside.iter().map(|m| (part.partition_id, m)))
        .collect();
    if detailed && !moved.is_empty() {
        s.push_str("\n⚠️  MOVED ASIDE (failed verification on resume)\n");
        for (pid, m) in &moved {
            s.push_str(&format!(
                "  Partition {pid:>4}  after #{:<2} {}  {}\n       {} -> {}\n",
                m.operation_idx.map_or("?".into(), |i| i.to_string()),
                local_time(m.at),
                m.reason.as_deref().unwrap_or("?"),
                m.path,
                m.moved_to.as_deref().unwrap_or("?"),
            ));
        }
    }
    s.push_str("\n💾 CHECKPOINT SUMMARY\n");
    s.push_str(&format!(
        "  {} checkpoints recorded, {} on disk\n",
        o.checkpoints, o.checkpoints_on_disk
    ));
    if !moved.is_empty() {
        s.push_str(&format!(
            "  {} saved file(s) failed verification and were moved aside{}\n",
            moved.len(),
            if detailed {
                ""
            } else {
                " (--detailed lists them)"
            }
        ));
    }
    let latest: BTreeMap<usize, usize> = p
        .partitions
        .iter()
        .filter_map(|part| {
            part.checkpoints
                .iter()
                .filter(|c| c.exists)
                .map(|c| c.operation_idx)
                .max()
                .map(|op| (part.partition_id, op))
        })
        .collect();
    if !latest.is_empty() {
        let list: Vec<String> = latest.iter().map(|(p, op)| format!("{p}:#{op}")).collect();
        s.push_str(&format!(
            "  newest per partition (partition:op): {}\n",
            list.join(" ")
        ));
    }
    s.push_str(&format!("\n{sub}\n"));
    let wd = work_dir.display();
    match p.status {
        JobStatus::Running => s.push_str(&format!(
            "To stop this job: dj-job --work_dir {wd} stop {}\n",
            p.job_id
        )),
        JobStatus::Completed => {}
        _ if JobPaths::new(p.job_dir.clone())
            .partitioning_info()
            .is_file() =>
        {
            s.push_str(&format!(
                "To resume this job (from the directory it was started in, with its recipe file): {}\n",
                resume_command(&p.job_dir, &p.job_id)
            ))
        }
        _ => {}
    }
    s
}

/// The job overview lines: status, process or lock, dataset, sizes, times, last event, error.
fn render_overview(p: &JobProgress, s: &mut String) {
    s.push_str("\n📊 JOB OVERVIEW\n");
    s.push_str(&format!(
        "  Status:          {} {}\n",
        p.status.icon(),
        p.status.as_str().to_uppercase()
    ));
    s.push_str(&format!("  Job directory:   {}\n", p.job_dir.display()));
    match (p.pid, &p.lock) {
        (Some(pid), _) => s.push_str(&format!("  Process:         {pid}\n")),
        (None, l) if l.present => s.push_str(&format!(
            "  Lock:            stale (process {} is gone)\n",
            opt_num(l.pid.map(|p| p as u64))
        )),
        _ => {}
    }
    if let Some(d) = &p.dataset_path {
        s.push_str(&format!("  Dataset:         {d}\n"));
    }
    s.push_str(&format!(
        "  Total samples:   {}\n",
        opt_num(p.total_samples)
    ));
    if let Some(ps) = p.partition_size {
        s.push_str(&format!("  Partition size:  {ps}\n"));
    }
    if !p.ops.is_empty() {
        s.push_str(&format!("  Operations:      {}\n", p.ops.len()));
    }
    s.push_str(&format!(
        "  Start time:      {}\n",
        local_time(p.start_time)
    ));
    if p.runs > 1 {
        s.push_str(&format!(
            "  Runs:            {} (latest started {})\n",
            p.runs,
            local_time(p.run_start_time)
        ));
    }
    if let Some(e) = p.elapsed_seconds {
        let label = if p.status == JobStatus::Running {
            "Elapsed:"
        } else {
            "Duration:"
        };
        s.push_str(&format!("  {label:<17}{}\n", human_duration(e)));
    }
    if let Some(e) = &p.last_event {
        s.push_str(&format!(
            "  Last event:      {} at {}\n",
            e.event_type,
            local_time(e.timestamp)
        ));
    }
    if let Some(err) = &p.error_message {
        s.push_str(&format!("  Error:           {err}\n"));
    }
}

/// The overall progress lines: partitions, samples, throughput and ETA.
fn render_overall(p: &JobProgress, s: &mut String) {
    let o = &p.overall;
    s.push_str("\n🎯 OVERALL PROGRESS\n");
    s.push_str(&format!(
        "  Progress:        {:.1}% ({}/{} partitions)\n",
        o.progress_percentage, o.completed_partitions, o.total_partitions
    ));
    s.push_str(&format!(
        "  Partitions:      {} completed, {} processing, {} pending, {} failed, {} interrupted\n",
        o.completed_partitions,
        o.processing_partitions,
        o.pending_partitions,
        o.failed_partitions,
        o.interrupted_partitions
    ));
    s.push_str(&format!(
        "  Samples:         {}/{} processed, {} rows out\n",
        o.processed_samples, o.total_samples, o.output_rows
    ));
    if let Some(t) = o.throughput_rows_per_second {
        s.push_str(&format!("  Throughput:      {t:.1} rows/s\n"));
    }
    match o.estimated_remaining_seconds {
        Some(eta) if p.status == JobStatus::Running => s.push_str(&format!(
            "  ETA:             {} ({:.1} min)\n",
            human_duration(eta),
            eta / 60.0
        )),
        None if p.status == JobStatus::Running => {
            s.push_str("  ETA:             unknown until a partition completes\n")
        }
        _ => {}
    }
}

/// The list's report.
pub(crate) fn render_list(jobs: &[JobListing], work_dir: &Path) -> String {
    if jobs.is_empty() {
        return format!("No jobs in {}\n", work_dir.display());
    }
    let mut s = format!("📋 DataJuicer Jobs ({}):\n", work_dir.display());
    let w = jobs.iter().map(|j| j.job_id.len()).max().unwrap_or(0);
    for j in jobs {
        let mut line = format!(
            "{} {:<w$} | Status: {:<9} | Partitions: {}/{} ({:.0}%) | Started: {}",
            j.status.icon(),
            j.job_id,
            j.status.as_str(),
            j.completed_partitions,
            j.total_partitions,
            j.progress_percentage,
            local_time(j.start_time)
        );
        if let Some(pid) = j.pid {
            line.push_str(&format!(" | PID: {pid}"));
        }
        if j.stale_lock {
            line.push_str(" | stale lock");
        }
        s.push_str(&line);
        s.push('\n');
    }
    s
}

/// One line per partition: status, samples, rows out, ops, checkpoints, current op, error.
fn render_partitions(p: &JobProgress, s: &mut String) {
    s.push_str("\n📦 PARTITION STATUS\n");
    for part in &p.partitions {
        let mut line = format!(
            "  {} Partition {:>4}: {:<11} samples {:>8}",
            part.status.icon(),
            part.partition_id,
            part.status.as_str(),
            opt_num(part.sample_count)
        );
        if let Some(out) = part.output_rows {
            line.push_str(&format!("  out {out:>8}"));
        }
        let total_ops = if p.ops.is_empty() {
            String::new()
        } else {
            format!("/{}", p.ops.len())
        };
        line.push_str(&format!(
            "  ops {}{total_ops}  checkpoints {}",
            part.completed_ops.len(),
            part.checkpoints.len()
        ));
        if let Some(op) = &part.current_op {
            line.push_str(&format!("  current: #{} {}", op.idx, op.name));
        }
        if let Some(op) = &part.resumed_from_op {
            line.push_str(&format!("  resumed after #{}", op.idx));
        }
        if let Some(d) = part.duration_seconds {
            line.push_str(&format!("  {}", human_duration(d)));
        }
        s.push_str(&line);
        s.push('\n');
        if let Some(err) = &part.error_message {
            s.push_str(&format!("       error: {err}\n"));
        }
    }
}

/// `--detailed`: every completed op of every partition, then every checkpoint.
fn render_operations_and_checkpoints(p: &JobProgress, s: &mut String) {
    s.push_str("\n🔧 OPERATION DETAILS\n");
    for part in &p.partitions {
        if part.completed_ops.is_empty() {
            continue;
        }
        s.push_str(&format!("  Partition {}:\n", part.partition_id));
        let w = part
            .completed_ops
            .iter()
            .map(|o| o.name.len())
            .max()
            .unwrap_or(0);
        for op in &part.completed_ops {
            s.push_str(&format!(
                "    #{:<2} {:<w$}  {:>9}  {:>12}  {:>8} → {:<8}  reduction {}\n",
                op.idx,
                op.name,
                op.duration_seconds
                    .map_or("-".into(), |d| format!("{d:.3}s")),
                op.throughput_rows_per_second
                    .map_or("-".into(), |t| format!("{t:.1} rows/s")),
                opt_num(op.input_rows),
                opt_num(op.output_rows),
                op.reduction_ratio
                    .map_or("-".into(), |r| format!("{:.1}%", r * 100.0)),
            ));
        }
    }
    s.push_str("\n💾 CHECKPOINTS\n");
    for part in &p.partitions {
        for c in &part.checkpoints {
            s.push_str(&format!(
                "  Partition {:>4}  after #{:<2} {:<32} rows {:>8}  {}  {}{}\n",
                part.partition_id,
                c.operation_idx,
                c.operation_name.as_deref().unwrap_or("?"),
                opt_num(c.rows),
                local_time(c.saved_at),
                c.path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                if c.exists { "" } else { " (removed)" }
            ));
        }
    }
}
