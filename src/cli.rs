//! The binaries' entry points: parse flags, load the recipe, run, report; errors go to stderr
//! with their context and a non-zero exit.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Parser;
use dj_plans::Recipe;
use dj_plans::recipe::Engine;

use crate::flags::{
    AnalyzeFlags, Format, Overrides, PlanCommand, PlanFlags, RUN_BIN, RunFlags, split_overrides,
};

fn init_tracing() {
    crate::logging::init();
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        // Encoding, decoding and planning recurse once per plan node: long recipes need more
        // than the default 2 MiB (Ballista's own binaries use 32 MiB too).
        .thread_stack_size(32 << 20)
        .enable_all()
        .build()?)
}

fn finish(result: Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Parses the flags `F` declares out of `args` (without the program name); the rest are recipe
/// overrides (see [`split_overrides`]).
fn parse_with_overrides<F: Parser>(args: &[String]) -> (F, Overrides) {
    let (kept, overrides) = split_overrides::<F>(args);
    let name = F::command().get_name().to_string();
    (F::parse_from(std::iter::once(name).chain(kept)), overrides)
}

fn load_recipe(path: &std::path::Path, overrides: &[(String, String)]) -> Result<Recipe> {
    let recipe = Recipe::load(path, overrides)?;
    for w in &recipe.warnings {
        eprintln!("warning: {w}");
    }
    Ok(recipe)
}

/// `dj-run` / `dj-process`.
pub fn run_main() -> ExitCode {
    crate::keep_freed_memory();
    init_tracing();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut flags, overrides) = parse_with_overrides::<RunFlags>(&args);
    flags.overrides = overrides;
    // The command to print for resuming: this one without its --job_id/--resume.
    let program = std::env::args().next().unwrap_or_else(|| RUN_BIN.into());
    let mut command = vec![program];
    let mut skip = false;
    for a in &args {
        if std::mem::take(&mut skip) {
            continue;
        }
        if a == "--job_id" || a == "--resume" {
            skip = true;
        } else if !a.starts_with("--job_id=") && !a.starts_with("--resume=") {
            command.push(a.clone());
        }
    }
    finish(run_cmd(&flags, command))
}

/// Prints what a run tells its caller: the resume token on stdout, warnings on stderr.
struct Printer;

impl crate::options::RunObserver for Printer {
    fn resume_token(&self, job_id: &str, resume_command: &[String]) {
        println!(
            "Resume token: {job_id}. Rerun the original command with --resume {job_id} to resume this job."
        );
        println!("  {}", crate::job::command_line(resume_command));
    }

    fn warning(&self, message: &str) {
        eprintln!("warning: {message}");
    }

    fn note(&self, message: &str) {
        println!("{message}");
    }
}

fn run_cmd(flags: &RunFlags, command: Vec<String>) -> Result<()> {
    let recipe = load_recipe(&flags.config, &flags.overrides)?;
    let opts = crate::options::RunOptions {
        job_id: flags.job_id.clone(),
        resume: flags.resume.clone(),
        command,
        engine: flags.engine.map(Engine::from),
        scheduler: flags.scheduler.clone(),
        memory_budget_mb: flags.memory_budget_mb,
        cluster_tls: flags
            .tls
            .clone()
            .or_else(|| std::env::var_os("DJ_CLUSTER_TLS").map(PathBuf::from)),
        observer: Some(std::sync::Arc::new(Printer)),
        progress: std::env::var("DJ_PROGRESS").map_or(true, |v| v != "0"),
        // A test hook: kill tests slow the job down to hit every moment.
        event_delay: std::env::var("DJ_EVENT_DELAY_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .map(std::time::Duration::from_millis),
    };
    let report = runtime()?
        .block_on(crate::run::run(&recipe, &opts))
        .with_context(|| format!("recipe {} failed", recipe.file))?;
    if let Some(job) = report.job.as_ref().filter(|j| j.already_complete) {
        println!(
            "Job {} is already completed - nothing to do ({})",
            job.job_id,
            job.job_dir.display()
        );
        return Ok(());
    }
    if flags.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.render());
    }
    Ok(())
}

/// `dj-plan`.
pub fn plan_main() -> ExitCode {
    init_tracing();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut flags, overrides) = parse_with_overrides::<PlanFlags>(&args);
    flags.overrides = overrides;
    finish(plan_cmd(&flags))
}

fn plan_cmd(flags: &PlanFlags) -> Result<()> {
    match &flags.command {
        PlanCommand::Explain { recipe, format } => {
            let recipe = load_recipe(recipe, &flags.overrides)?;
            let explained = runtime()?.block_on(crate::explain::explain(&recipe))?;
            match format {
                Format::Text => print!("{}", explained.render_text()),
                Format::Json => println!("{}", serde_json::to_string_pretty(&explained)?),
            }
        }
    }
    Ok(())
}

/// `dj-cluster`.
pub fn cluster_main() -> ExitCode {
    init_tracing();
    let flags = crate::flags::ClusterFlags::parse();
    finish(runtime().and_then(|rt| {
        rt.block_on(async {
            match flags.command {
                crate::flags::ClusterCommand::Scheduler {
                    bind,
                    executor_timeout,
                    tls,
                    insecure,
                } => {
                    let ip = bind.ip().to_string();
                    crate::cluster::check_bind("scheduler", &ip, tls.is_some(), insecure)?;
                    crate::cluster::run_scheduler(crate::cluster::SchedulerOptions {
                        bind,
                        executor_timeout_seconds: executor_timeout,
                        tls: crate::cluster::load_tls(tls.as_deref())?,
                    })
                    .await
                }
                crate::flags::ClusterCommand::Executor {
                    scheduler,
                    bind_host,
                    port,
                    grpc_port,
                    slots,
                    work_dir,
                    heartbeat,
                    tls,
                    insecure,
                    allow_roots,
                } => {
                    crate::cluster::check_bind("executor", &bind_host, tls.is_some(), insecure)?;
                    crate::cluster::run_executor(crate::cluster::ExecutorOptions {
                        allow_roots,
                        scheduler,
                        bind_host,
                        port,
                        grpc_port,
                        slots: slots.unwrap_or_else(|| {
                            std::thread::available_parallelism().map_or(1, |n| n.get())
                        }),
                        work_dir,
                        heartbeat_seconds: heartbeat,
                        tls: crate::cluster::load_tls(tls.as_deref())?,
                    })
                    .await
                }
                crate::flags::ClusterCommand::Certs { out, names, days } => {
                    for dir in crate::cluster::tls::generate(&out, &names, days)? {
                        println!("{}", dir.display());
                    }
                    Ok(())
                }
            }
        })
    }))
}

/// `dj-analyze`.
pub fn analyze_main() -> ExitCode {
    crate::keep_freed_memory();
    init_tracing();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut flags, overrides) = parse_with_overrides::<AnalyzeFlags>(&args);
    flags.overrides = overrides;
    finish(analyze_cmd(&flags))
}

fn analyze_cmd(flags: &AnalyzeFlags) -> Result<()> {
    let recipe = load_recipe(&flags.config, &flags.overrides)?;
    let analysis = runtime()?
        .block_on(crate::analyze::analyze(&recipe, flags.job.as_deref()))
        .with_context(|| format!("cannot analyze recipe {}", recipe.file))?;
    let dir = flags
        .output
        .clone()
        .unwrap_or_else(|| crate::analyze::default_output(&recipe));
    let files = crate::analyze::write_report(&analysis, &dir)?;
    println!("{}: {} rows", analysis.dataset_path, analysis.rows);
    for s in &analysis.stats {
        let summary = match &s.summary {
            crate::analyze::Summary::Numeric { describe, .. } => format!(
                "{} values, mean {:.4}, median {:.4}",
                describe.count, describe.mean, describe.p50
            ),
            crate::analyze::Summary::Text(t) => format!(
                "{} values, {} distinct, most often {:?} ({})",
                t.count, t.unique, t.top, t.freq
            ),
        };
        let source = if s.from_input {
            " (read from the input)"
        } else {
            ""
        };
        println!("{:<28} {summary}{source}", s.stat);
        for f in &s.filters {
            println!(
                "{:<28}   #{} {} keeps {}/{}",
                "", f.op_index, f.op, f.kept, analysis.rows
            );
        }
    }
    for line in &analysis.skipped {
        println!("not analyzed: {line}");
    }
    for f in files {
        println!("wrote {}", f.display());
    }
    Ok(())
}
