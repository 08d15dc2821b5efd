//! `executor_type: ray_partitioned`: a job directory, saved row boundaries and content hashes,
//! checkpoints, the event log, and strict resume.
//!
//! `--resume ID` runs the six steps of the partitioned-processing document in order: locate the
//! job directory, verify the configuration, load the saved partitioning, recreate the partitions
//! from the saved boundaries, validate every partition hash, then load checkpoints and run only
//! the unfinished work. Any failure stops with a specific error before anything is written.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use dj_plans::Recipe;
use dj_plans::source::{InputIndex, RowRange};
use serde_json::json;

use super::execute::execute;
use crate::job::checkpoints::{
    Quarantined, apply_retention, find_starts, log_quarantined, verify_starts,
};
use crate::job::context::JobCtx;
use crate::job::events::{Event, EventKind, EventLog, event_files};
use crate::job::info::{HashRecorder, PartitioningInfo, hash_partitions};
use crate::job::mirror::JobMirror;
use crate::job::reuse::{self, Reused};
use crate::job::{self, JobLock, JobPaths, PARTITIONING_INFO_FILE};
use crate::options::RunOptions;
use crate::partition::{Start, concurrency_limit};
use crate::plan::{Partitioning, auto_checkpoints, build_index, plan_partitioning};
use crate::report::{JobReport, RunReport};

const KEPT: &str = "The existing checkpoints were left unchanged.";

pub(crate) async fn run_partitioned(recipe: &Recipe, opts: &RunOptions) -> Result<RunReport> {
    let started = Instant::now();
    if let (Some(r), Some(j)) = (
        &opts.resume,
        opts.job_id.as_ref().or(recipe.job_id.as_ref()),
    ) && r != j
    {
        bail!(
            "--resume and --job_id must refer to the same job when both are provided (got --resume {r}, --job_id {j})."
        );
    }
    let user_id = opts
        .resume
        .clone()
        .or_else(|| opts.job_id.clone())
        .or_else(|| recipe.job_id.clone());
    let job_id = match &user_id {
        Some(id) => {
            job::validate_job_id(id)?;
            id.clone()
        }
        None => job::new_job_id(),
    };
    let strict = opts.resume.is_some();
    let mirror = job_mirror(recipe, &job_id)?;
    let paths = JobPaths::new(match &mirror {
        Some(m) => m.local.clone(),
        None => job::job_dir(recipe, &job_id)?,
    });
    // On object storage, the lease keeps other machines off the job (the `.lock` is per machine);
    // it is held until the job directory is published below.
    let _lease = match &mirror {
        Some(m) => Some(job::lease::JobLease::acquire(m.url(), &job_id)?),
        None => None,
    };
    if let Some(m) = &mirror {
        let fetched = m
            .pull()
            .with_context(|| format!("cannot read the job directory {}", m.url()))?;
        tracing::info!(
            "job directory {}: {fetched} files fetched to {}",
            m.url(),
            m.local.display()
        );
    }
    let start = JobStart {
        job_id,
        user_id,
        strict,
        paths,
        mirror: mirror.clone(),
        started,
    };
    let result = run_job(recipe, opts, start).await;
    // Whatever the outcome, publish what is durable here (a failed job resumes elsewhere too).
    if let Some(m) = &mirror
        && let Err(e) = m.sync()
    {
        return Err(match result {
            Ok(_) => e,
            Err(run) => {
                anyhow::anyhow!("{run:#} (also failed to publish the job directory: {e:#})")
            }
        });
    }
    result
}

/// The job directory of a recipe whose `work_dir` (or, without one, export) is on object
/// storage: worked on through a local mirror.
fn job_mirror(recipe: &Recipe, job_id: &str) -> Result<Option<Arc<JobMirror>>> {
    let work_dir = match &recipe.work_dir {
        Some(w) if dj_plans::store::is_remote(w) => w.clone(),
        None if dj_plans::store::is_remote(&recipe.export_path) => recipe
            .export_path
            .rsplit_once('/')
            .map_or_else(String::new, |(parent, _)| parent.to_string()),
        _ => return Ok(None),
    };
    let work_dir = work_dir.replace("{job_id}", job_id);
    Ok(Some(JobMirror::new(&work_dir, job_id)?))
}

/// A job located: its id (and whether the user gave it), whether this is a strict resume, its
/// directory (a local mirror for object storage) and when the command started.
struct JobStart {
    job_id: String,
    user_id: Option<String>,
    strict: bool,
    paths: JobPaths,
    mirror: Option<Arc<JobMirror>>,
    started: Instant,
}

async fn run_job(recipe: &Recipe, opts: &RunOptions, start: JobStart) -> Result<RunReport> {
    let (job_id, paths, mirror) = (&start.job_id, &start.paths, start.mirror.as_deref());
    if start.strict {
        // Step 1: the job directory with its event log.
        if !paths.root.is_dir() || event_files(&paths.root).is_empty() {
            bail!(
                "Unable to resume job {job_id}: no job directory with an event log at {}. {KEPT}",
                paths.root.display()
            );
        }
        // Step 2: the same recipe and overrides.
        verify_config(paths, recipe)?;
    }
    paths.create_all()?;
    let _lock = JobLock::acquire(&paths.root, job_id)?;
    if let Err(e) = crate::logging::log_to_job_dir(&paths.logs) {
        tracing::warn!("cannot write logs to {}: {e}", paths.logs.display());
    }
    tracing::info!(
        "job {job_id} in {} (recipe {})",
        paths.root.display(),
        recipe.file
    );
    let index = Arc::new(build_index(recipe).await?);
    let recipe = &crate::filter_probe::ordered(recipe, &index).await?;
    // Once per job: it reads every model file.
    let chain = reuse::op_chain(recipe)?;
    let parts = if start.strict {
        match resume_partitioning(recipe, &chain, paths, job_id, &index, mirror).await? {
            Resolution::Run(parts) => *parts,
            Resolution::Completed(done) => return Ok(*done),
        }
    } else {
        plan_job_partitioning(recipe, &chain, opts, paths, job_id, &index, mirror).await?
    };
    let events = Arc::new(EventLog::create(&paths.root, job_id, opts.event_delay)?);
    record_start(recipe, &chain, opts, &start, &events, &parts)?;
    write_mapping(paths, recipe, &index, &parts.ranges, "processing")?;
    let started_at = chrono::Utc::now();

    let hash_sinks = if recipe.checkpoint.enabled {
        HashRecorder::new(
            paths.partitioning_info(),
            parts.info.clone(),
            start.mirror.clone(),
        )
        .sinks()
    } else {
        Vec::new()
    };
    let job = JobCtx {
        paths: paths.clone(),
        events: events.clone(),
        hash_sinks,
        mirror: start.mirror.clone(),
        auto: auto_checkpoints(recipe, &index, &parts.ranges),
    };
    let (ranges, starts) = (&parts.ranges, &parts.starts);
    let result = tokio::select! {
        r = execute(recipe, &index, ranges, starts, Some(&job), opts, start.started) => r,
        signal = stop_signal() => Err(Interrupted {
            signal,
            job_id: job_id.clone(),
        }
        .into()),
    };
    let mut report = match result {
        Ok(r) => r,
        Err(err) => {
            let mut e = Event::new(EventKind::JobFailed, format!("Job failed: {err:#}"));
            e.status = Some(if err.is::<Interrupted>() {
                "stopped"
            } else {
                "failed"
            });
            e.error_message = Some(format!("{err:#}"));
            e.duration = Some(start.started.elapsed().as_secs_f64());
            events.log_last(e);
            // The failure is what the user must see, even when recording it fails too (a full
            // disk fails both).
            if let Err(also) = write_mapping(paths, recipe, &index, ranges, "failed") {
                return Err(anyhow::anyhow!(
                    "{err:#} (also failed to record the failure: {also:#})"
                ));
            }
            return Err(err);
        }
    };
    let mut e = Event::new(
        EventKind::JobComplete,
        format!(
            "Job completed successfully in {:.2}s",
            report.elapsed.as_secs_f64()
        ),
    );
    e.status = Some("completed");
    e.duration = Some(report.elapsed.as_secs_f64());
    e.output_path = Some(recipe.export_path.clone());
    events.log(e);
    write_mapping(paths, recipe, &index, ranges, "completed")?;
    let summary = job::JobSummary {
        job_id: job_id.clone(),
        status: "completed".into(),
        start_time: started_at.timestamp_millis() as f64 / 1000.0,
        end_time: chrono::Utc::now().timestamp_millis() as f64 / 1000.0,
        duration: report.elapsed.as_secs_f64(),
        work_dir: paths.root.clone(),
        config_file: recipe.file.clone(),
        executor_type: "ray_partitioned".into(),
        resumption_command: job::command_line(&job::resume_command(&opts.command, job_id)),
        event_log_file: events.path().to_path_buf(),
        checkpoint_dir: paths.checkpoints.clone(),
        metadata_dir: paths.metadata.clone(),
        num_partitions: ranges.len(),
        rows_in: report.rows_in,
        rows_out: report.rows_out,
        export_files: report.export_files.clone(),
        reused_checkpoints: parts.reused.clone(),
    };
    job::write_json(&paths.summary(), &serde_json::to_value(&summary)?)?;
    apply_retention(paths, recipe, mirror)?;
    report.quarantined = parts.quarantined;
    report.job = Some(JobReport {
        job_id: job_id.clone(),
        job_dir: paths.root.clone(),
        already_complete: false,
    });
    Ok(report)
}

/// What a job records as it starts: its metadata (a new run: the recipe copy, partitioning,
/// DAG and partition manifests), the resume token for the caller, and the `checkpoint_load` and
/// `job_start` events.
fn record_start(
    recipe: &Recipe,
    chain: &reuse::OpChain,
    opts: &RunOptions,
    start: &JobStart,
    events: &EventLog,
    parts: &Partitions,
) -> Result<()> {
    let (job_id, paths, strict) = (&start.job_id, &start.paths, start.strict);
    let (ranges, starts) = (&parts.ranges, &parts.starts);
    let checkpointing = recipe.checkpoint.enabled;
    log_quarantined(events, &parts.quarantined);
    if !strict {
        job::backup_config(paths, recipe)?;
        job::write_json(
            &paths.partitioning_info(),
            &serde_json::to_value(&parts.info)?,
        )?;
        job::write_json(&reuse::OpChain::path(paths), &serde_json::to_value(chain)?)?;
        job::write_json(&paths.dag_plan(), &job::dag_plan(recipe, ranges.len()))?;
        for (p, r) in ranges.iter().enumerate() {
            let manifest = json!({"partition_id": p, "start_row": r.start, "end_row": r.end, "dataset_path": recipe.dataset_path});
            job::write_json(&paths.partition_manifest(p), &manifest)?;
        }
    }
    if start.user_id.is_none() && checkpointing {
        let cmd = job::resume_command(&opts.command, job_id);
        if let Some(o) = &opts.observer {
            o.resume_token(job_id, &cmd);
        }
    }
    for (p, s) in starts.iter().enumerate() {
        if let Start::Checkpoint { op, path, .. } = s {
            let name = &recipe.process[*op].name;
            let mut e = Event::new(
                EventKind::CheckpointLoad,
                format!("Loaded checkpoint from operation {op}"),
            )
            .partition(p)
            .op(*op, name);
            if let Some(r) = parts.reused.iter().find(|r| r.partition == p) {
                e.message = format!(
                    "Loaded checkpoint from operation {op} of job {}",
                    r.source_job
                );
                e = e.meta(json!({"source_job": r.source_job}));
            }
            e.checkpoint_path = Some(path.display().to_string());
            events.log(e);
        }
    }
    if let Some(o) = &opts.observer {
        for line in reuse::summary_lines(recipe, &parts.reused, ranges.len()) {
            o.note(&line);
        }
    }
    let mut start_event = Event::new(
        EventKind::JobStart,
        if strict {
            "Resuming partitioned dataset processing"
        } else {
            "Starting partitioned dataset processing"
        },
    )
    .meta(json!({
        "num_partitions": ranges.len(),
        "checkpoint_enabled": checkpointing,
        "is_resuming": parts.resuming,
        "job_id": job_id,
        "user_provided_job_id": start.user_id.is_some(),
        "resume_requested": strict,
    }));
    start_event.total_partitions = Some(ranges.len());
    events.log(start_event);
    Ok(())
}

/// What a job runs: its partitioning (saved or planned), where each partition starts, and the
/// saved files that failed verification and were moved aside.
struct Partitions {
    info: PartitioningInfo,
    ranges: Vec<RowRange>,
    starts: Vec<Start>,
    resuming: bool,
    quarantined: Vec<Quarantined>,
    /// Partitions that start from another job's checkpoint.
    reused: Vec<Reused>,
}

/// What a new job of `recipe` would reuse from earlier jobs in its `work_dir` (for
/// `dj-plan explain`): one line per source job and op. Reads the input once to hash it when an
/// earlier job could lend checkpoints; writes nothing.
pub(crate) async fn planned_reuse(
    recipe: &Recipe,
    index: &Arc<InputIndex>,
    ranges: &[RowRange],
) -> Result<Vec<String>> {
    if recipe.executor_type != dj_plans::ExecutorType::RayPartitioned {
        return Ok(Vec::new());
    }
    let paths = JobPaths::new(job::job_dir(recipe, "new-job")?);
    let chain = reuse::op_chain(recipe)?;
    if !reuse::has_candidates(recipe, &chain, &paths, ranges) {
        return Ok(Vec::new());
    }
    let session = dj_plans::planner::session(1);
    let limit = concurrency_limit(recipe, ranges.len());
    let hashes = hash_partitions(index, ranges, session.task_ctx(), limit).await?;
    let info = PartitioningInfo::new(index, ranges, &hashes, job::recipe_hash(recipe)?);
    let reused: Vec<Reused> = reuse::find(
        recipe,
        &chain,
        &paths,
        &info,
        &vec![Start::Input; ranges.len()],
    )?
    .into_iter()
    .flatten()
    .collect();
    Ok(reuse::summary_lines(recipe, &reused, ranges.len()))
}

/// Starts the partitions another job in the work dir lets start later than `starts` from its
/// checkpoints (see [`reuse::find`]).
fn apply_reuse(
    recipe: &Recipe,
    chain: &reuse::OpChain,
    paths: &JobPaths,
    info: &PartitioningInfo,
    starts: &mut [Start],
) -> Result<Vec<Reused>> {
    let found = reuse::find(recipe, chain, paths, info, starts)?;
    let mut reused = Vec::new();
    for r in found.into_iter().flatten() {
        starts[r.partition] = Start::Checkpoint {
            op: r.op,
            path: r.path.clone(),
            refilter: r.refilter,
        };
        reused.push(r);
    }
    reuse::adopt_global_files(recipe, paths, &reused)?;
    Ok(reused)
}

/// A strict resume either runs what is left, or finds the job complete.
enum Resolution {
    Run(Box<Partitions>),
    Completed(Box<RunReport>),
}

/// The partitioning a strict resume continues (steps 3-5): the saved boundaries, every saved
/// content hash validated, the checkpoints verified; or the report of a job that had completed.
async fn resume_partitioning(
    recipe: &Recipe,
    chain: &reuse::OpChain,
    paths: &JobPaths,
    job_id: &str,
    index: &Arc<InputIndex>,
    mirror: Option<&JobMirror>,
) -> Result<Resolution> {
    let session = dj_plans::planner::session(1);
    // Steps 3-5: saved partitioning, saved boundaries, every hash validated.
    let text = std::fs::read_to_string(paths.partitioning_info()).map_err(|_| {
        anyhow::anyhow!("Explicit resume requires saved {PARTITIONING_INFO_FILE}; existing checkpoints were left unchanged.")
    })?;
    let info: PartitioningInfo = serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not valid partitioning metadata. {KEPT}",
            paths.partitioning_info().display()
        )
    })?;
    if info.recipe_hash != job::recipe_hash(recipe)? {
        bail!(
            "The recipe's hash differs from the one the job was started with. Use the same config file, CLI arguments and model files for resumption; a job started by a dj-fusion that ran its filters in another order cannot resume here. {KEPT}"
        );
    }
    let ranges = info.saved_ranges(index.total_rows)?;
    // A partition gets its hash when its input has been read once, before any of its
    // checkpoints is written; one without a hash has never been read to its end.
    let starts = find_starts(paths, recipe, ranges.len())?;
    if let Some(p) = info.partitions.iter().find(|p| {
        p.content_hash.is_empty() && matches!(starts[p.partition_id], Start::Checkpoint { .. })
    }) {
        bail!(
            "Explicit resume requires content hashes and row boundaries created by this version: partition {} has checkpoints but no saved content hash. {KEPT}",
            p.partition_id
        );
    }
    let hashed: Vec<usize> = info
        .partitions
        .iter()
        .filter(|p| !p.content_hash.is_empty())
        .map(|p| p.partition_id)
        .collect();
    let hashes = hash_partitions(
        index,
        &hashed.iter().map(|&p| ranges[p]).collect::<Vec<_>>(),
        session.task_ctx(),
        concurrency_limit(recipe, ranges.len()),
    )
    .await?;
    info.validate_hashes(&hashed.into_iter().zip(hashes).collect::<Vec<_>>())?;
    // Validated as any resume: a completed job whose input changed is refused too.
    if let Some(done) = completed(paths, job_id) {
        return Ok(Resolution::Completed(Box::new(done)));
    }
    let (mut starts, quarantined) = verify_starts(paths, recipe, ranges.len(), mirror)?;
    let reused = apply_reuse(recipe, chain, paths, &info, &mut starts)?;
    Ok(Resolution::Run(Box::new(Partitions {
        info,
        ranges,
        starts,
        resuming: true,
        quarantined,
        reused,
    })))
}

/// The partitioning of a new run, or of a `--job_id` rerun: planned from the recipe; a rerun
/// reuses the checkpoints when its partitions and recipe match the saved ones, else clears them.
async fn plan_job_partitioning(
    recipe: &Recipe,
    chain: &reuse::OpChain,
    opts: &RunOptions,
    paths: &JobPaths,
    job_id: &str,
    index: &Arc<InputIndex>,
    mirror: Option<&JobMirror>,
) -> Result<Partitions> {
    let session = dj_plans::planner::session(1);
    let checkpointing = recipe.checkpoint.enabled;
    let Partitioning { ranges, sizing } = plan_partitioning(recipe, index).await?;
    if let Some(rec) = &sizing {
        job::write_json(&paths.partition_sizing(), &serde_json::to_value(rec)?)?;
    }
    // The legacy `--job_id` path: reuse matching checkpoints, or clear them and start fresh.
    let saved: Option<PartitioningInfo> = std::fs::read_to_string(paths.partitioning_info())
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    // A fresh run hashes each partition while processing it (see `HashRecorder`); a rerun over
    // saved metadata, or one that may reuse another job's checkpoints, needs them first.
    let hashes = if checkpointing
        && (saved.is_some() || reuse::has_candidates(recipe, chain, paths, &ranges))
    {
        hash_partitions(
            index,
            &ranges,
            session.task_ctx(),
            concurrency_limit(recipe, ranges.len()),
        )
        .await?
    } else {
        ranges.iter().map(|r| (r.len(), String::new())).collect()
    };
    let info = PartitioningInfo::new(index, &ranges, &hashes, job::recipe_hash(recipe)?);
    let own_match = match saved {
        Some(s) if s.matches(&info) => true,
        Some(_) => {
            tracing::warn!(
                "Partition validation FAILED - partitions don't match saved info. Clearing checkpoints and starting fresh."
            );
            opts.warn(&format!(
                "job {job_id}: saved partitions or recipe differ; clearing checkpoints and starting fresh"
            ));
            std::fs::remove_dir_all(&paths.checkpoints)?;
            std::fs::create_dir_all(&paths.checkpoints)?;
            false
        }
        None => false,
    };
    let (mut starts, quarantined) = if own_match {
        verify_starts(paths, recipe, ranges.len(), mirror)?
    } else {
        (vec![Start::Input; ranges.len()], Vec::new())
    };
    let reused = apply_reuse(recipe, chain, paths, &info, &mut starts)?;
    Ok(Partitions {
        info,
        ranges,
        starts,
        resuming: own_match,
        quarantined,
        reused,
    })
}

/// A job whose latest event file records `job_complete` is done: nothing to run.
fn completed(paths: &JobPaths, job_id: &str) -> Option<RunReport> {
    let latest = event_files(&paths.root).pop()?;
    let text = std::fs::read_to_string(latest).ok()?;
    let done = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .any(|v| EventKind::of(&v) == Some(EventKind::JobComplete));
    done.then(|| RunReport {
        rows_in: 0,
        rows_out: 0,
        partitions: 0,
        ops: vec![],
        export_files: vec![],
        elapsed: Default::default(),
        job: Some(JobReport {
            job_id: job_id.to_string(),
            job_dir: paths.root.clone(),
            already_complete: true,
        }),
        resumed_partitions: 0,
        concurrency_limit: 0,
        peak_concurrency: 0,
        quarantined: Vec::new(),
    })
}

/// Step 2: the recipe text and the overrides equal those the job was started with.
fn verify_config(paths: &JobPaths, recipe: &Recipe) -> Result<()> {
    let (saved_text, saved_args) = job::saved_config(paths, recipe)?;
    let mut diffs = Vec::new();
    if saved_text.trim() != recipe.source_text.trim() {
        diffs.push(format!(
            "[config] {} differs from the saved copy in {}",
            recipe.file,
            paths.root.display()
        ));
    }
    let current: Vec<String> = job::comparable_overrides(recipe)
        .iter()
        .flat_map(|(k, v)| [format!("--{k}"), v.clone()])
        .collect();
    if saved_args != current {
        diffs.push(format!(
            "[cli] arguments differ: saved {:?}, current {:?}",
            saved_args, current
        ));
    }
    if !diffs.is_empty() {
        bail!(
            "Config validation failed - configurations don't match: {}. Use the same config file and CLI arguments for resumption. {KEPT}",
            diffs.join("; ")
        );
    }
    Ok(())
}

/// `metadata/dataset_mapping.json`, as Data-Juicer's job utilities read it.
fn write_mapping(
    paths: &JobPaths,
    recipe: &Recipe,
    index: &InputIndex,
    ranges: &[RowRange],
    status: &str,
) -> Result<()> {
    let partitions: Vec<_> = ranges
        .iter()
        .enumerate()
        .map(|(p, r)| json!({"partition_id": p, "processing_status": status, "sample_count": r.len(), "start_row": r.start, "end_row": r.end}))
        .collect();
    job::write_json(
        &paths.dataset_mapping(),
        &json!({
            "original_dataset_path": recipe.dataset_path,
            "original_dataset_size": index.total_rows,
            "partition_size": ranges.first().map(|r| r.len()).unwrap_or(0),
            "partitions": partitions,
        }),
    )
}

/// A run stopped by SIGINT or SIGTERM: logged as `stopped`, and resumable.
#[derive(Debug, thiserror::Error)]
#[error("interrupted by {signal}; the job is resumable with --resume {job_id}")]
pub(crate) struct Interrupted {
    pub signal: &'static str,
    pub job_id: String,
}

/// Resolves on SIGINT or SIGTERM with the signal's name.
async fn stop_signal() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).expect("installing a SIGTERM handler");
    let mut int = signal(SignalKind::interrupt()).expect("installing a SIGINT handler");
    tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
    }
}
