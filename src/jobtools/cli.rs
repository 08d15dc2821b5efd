//! The `dj-job` binary: flags, commands and the watch loop.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Result, bail};
use clap::Parser;
use clap::Subcommand;
use serde::Serialize;

use super::dir::{job_path, remote_work_dir};
use super::job_progress::{JobStatus, job_progress};
use super::list::{list_jobs, list_remote_jobs};
use super::report::{render_list, render_progress};
use super::stop::{stop_job, stop_remote_job};

/// Monitor, stop and list the partitioned executor's jobs.
#[derive(Debug, Parser)]
#[command(name = "dj-job", version)]
pub(crate) struct JobFlags {
    /// The directory holding the job directories (the recipe's work_dir, e.g.
    /// outputs/partitioned/jobs).
    #[arg(
        long = "work_dir",
        alias = "work-dir",
        global = true,
        default_value = "."
    )]
    pub work_dir: PathBuf,
    /// Print the result as JSON.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: JobCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum JobCommand {
    /// Show a job's progress: overview, overall progress, per-partition status.
    Monitor {
        job_id: String,
        /// Add per-op durations, throughput and reduction, and every checkpoint.
        #[arg(long)]
        detailed: bool,
        /// Redraw every --interval seconds until Ctrl+C or the job ends.
        #[arg(long)]
        watch: bool,
        /// Seconds between redraws with --watch.
        #[arg(long, default_value_t = 10.0)]
        interval: f64,
    },
    /// Stop a running job: SIGTERM (it logs the stop, releases its lock and stays resumable),
    /// or SIGKILL with --force.
    Stop {
        job_id: String,
        /// Kill at once (SIGKILL) instead of a graceful stop.
        #[arg(long)]
        force: bool,
        /// Seconds to wait for the process to exit.
        #[arg(long, default_value_t = 30.0)]
        timeout: f64,
    },
    /// List the jobs under --work_dir.
    List,
    /// Serve a live dashboard of every job under --work_dir (a page and its JSON API).
    Serve {
        /// Address to listen on; anything but loopback needs --token.
        #[arg(long, default_value = "127.0.0.1:8265")]
        bind: String,
        /// A secret every request must carry (`Authorization: Bearer TOKEN`, or `?token=TOKEN`
        /// in the page's address); default: the DJ_DASHBOARD_TOKEN environment variable.
        #[arg(long)]
        token: Option<String>,
    },
}

fn print_json<T: Serialize>(v: &T, pretty: bool) -> Result<()> {
    let text = if pretty {
        serde_json::to_string_pretty(v)?
    } else {
        serde_json::to_string(v)?
    };
    println!("{text}");
    Ok(())
}

/// `dj-job`.
pub fn job_main() -> ExitCode {
    let flags = JobFlags::parse();
    match job_cmd(&flags) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Runs one `dj-job` command; `Ok(false)` when it ran but did not succeed (a stop that timed out).
fn job_cmd(flags: &JobFlags) -> Result<bool> {
    match &flags.command {
        JobCommand::List => {
            let jobs = match remote_work_dir(&flags.work_dir) {
                Some(url) => list_remote_jobs(url)?,
                None => list_jobs(&flags.work_dir)?,
            };
            if flags.json {
                print_json(&jobs, true)?;
            } else {
                print!("{}", render_list(&jobs, &flags.work_dir));
            }
            Ok(true)
        }
        JobCommand::Stop {
            job_id,
            force,
            timeout,
        } => {
            if !timeout.is_finite() || *timeout < 0.0 {
                bail!("--timeout must be a number of seconds >= 0, got {timeout}");
            }
            let timeout = Duration::from_secs_f64(*timeout);
            let r = match remote_work_dir(&flags.work_dir) {
                Some(url) => {
                    crate::job::validate_job_id(job_id)?;
                    stop_remote_job(url, job_id, *force, timeout)?
                }
                None => stop_job(&job_path(&flags.work_dir, job_id)?, *force, timeout)?,
            };
            if flags.json {
                print_json(&r, true)?;
            } else if r.success {
                println!("{}", r.message);
            } else {
                eprintln!("error: {}", r.message);
            }
            Ok(r.success)
        }
        JobCommand::Serve { bind, token } => {
            let token = token
                .clone()
                .or_else(|| std::env::var("DJ_DASHBOARD_TOKEN").ok())
                .filter(|t| !t.is_empty());
            super::serve::serve_main(&flags.work_dir, bind, token)?;
            Ok(true)
        }
        JobCommand::Monitor {
            job_id,
            detailed,
            watch,
            interval,
        } => {
            let dir = job_path(&flags.work_dir, job_id)?;
            if !watch {
                let p = job_progress(&dir)?;
                if flags.json {
                    print_json(&p, true)?;
                } else {
                    print!("{}", render_progress(&p, *detailed, &flags.work_dir));
                }
                return Ok(true);
            }
            if !interval.is_finite() || *interval <= 0.0 {
                bail!("--interval must be a positive number of seconds, got {interval}");
            }
            watch_progress(job_id, flags, *detailed, Duration::from_secs_f64(*interval))?;
            Ok(true)
        }
    }
}

/// `monitor --watch`: redraw until Ctrl+C or the job is no longer running.
/// Prints the job's progress every `interval` until it is no longer running (a job on object
/// storage is fetched again each time).
fn watch_progress(
    job_id: &str,
    flags: &JobFlags,
    detailed: bool,
    interval: Duration,
) -> Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let tty = std::io::stdout().is_terminal();
    rt.block_on(async {
        let ctrl_c = tokio::signal::ctrl_c();
        tokio::pin!(ctrl_c);
        loop {
            let p = job_progress(&job_path(&flags.work_dir, job_id)?)?;
            if flags.json {
                // One JSON object a line, a snapshot each interval.
                print_json(&p, false)?;
            } else {
                if tty {
                    print!("\x1b[2J\x1b[H");
                }
                print!("{}", render_progress(&p, detailed, &flags.work_dir));
                if p.status == JobStatus::Running {
                    println!(
                        "Watching every {}s; Ctrl+C to stop watching.",
                        interval.as_secs_f64()
                    );
                }
            }
            std::io::stdout().flush()?;
            if p.status != JobStatus::Running {
                if !flags.json {
                    println!("Job {} is {}: stopped watching.", p.job_id, p.status);
                }
                return Ok(());
            }
            tokio::select! {
                _ = tokio::time::sleep(interval) => {}
                _ = &mut ctrl_c => {
                    if !flags.json {
                        println!("\nStopped watching.");
                    }
                    return Ok(());
                }
            }
        }
    })
}
