//! The dashboard's JSON API: `GET /api/jobs`, `GET /api/jobs/ID`, `GET /api/jobs/ID/events?since=N`
//! and `POST /api/jobs/ID/stop?force=BOOL`. Each reads the job directories afresh (on object
//! storage, through the local views `dj-job monitor` uses), off the async threads.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use axum::Json;
use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::Dashboard;
use crate::job::events::load_events;
use crate::jobtools::dir::{effective_recipe, epoch_now, job_path, remote_work_dir};
use crate::jobtools::job_progress::{JobProgress, progress_at};
use crate::jobtools::list::{list_jobs, list_remote_jobs};
use crate::jobtools::stop::{resume_command, stop_job, stop_remote_job};

/// Events returned by one call at most (the page asks again from where it stopped).
const EVENTS_PER_CALL: usize = 500;
/// How long a stop waits for the job to end before it reports.
const STOP_WAIT: Duration = Duration::from_secs(30);

/// A JSON error: `{"error": message}`.
pub(super) fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({ "error": message }))).into_response()
}

/// Runs `f` on the blocking pool; its error is a 404 when the job is missing, else a 400 (a bad
/// id) or 500.
async fn blocking<T: Serialize + Send + 'static>(
    f: impl FnOnce() -> Result<T> + Send + 'static,
) -> Response {
    match tokio::task::spawn_blocking(f).await {
        Ok(Ok(v)) => Json(v).into_response(),
        Ok(Err(e)) => {
            let message = format!("{e:#}");
            let status = if message.contains("invalid job id") {
                StatusCode::BAD_REQUEST
            } else if message.contains("is not running") {
                StatusCode::CONFLICT
            } else if message.contains("not found") {
                StatusCode::NOT_FOUND
            } else {
                StatusCode::INTERNAL_SERVER_ERROR
            };
            error(status, &message)
        }
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

/// `GET /api/jobs`: every job, newest first, with its status, rows, elapsed time and ETA.
pub(super) async fn jobs(State(d): State<Arc<Dashboard>>) -> Response {
    blocking(move || match remote_work_dir(&d.work_dir) {
        Some(url) => list_remote_jobs(url),
        None => list_jobs(&d.work_dir),
    })
    .await
}

/// A checkpoint file as the page shows it.
#[derive(Debug, Serialize)]
struct CheckpointFile {
    partition_id: usize,
    operation_idx: usize,
    operation_name: Option<String>,
    /// Relative to the job directory.
    path: String,
    /// `parquet`, `arrow` or `jsonl`, from the name.
    format: String,
    bytes: Option<u64>,
    rows: Option<u64>,
    saved_at: Option<f64>,
    exists: bool,
    /// A seal (BLAKE3 and length) sits beside it.
    sealed: bool,
}

/// `GET /api/jobs/ID`: the job's progress (as `dj-job monitor --json`), its checkpoints' files,
/// the command that resumes it, and the dataset's mean row size (for MB/s).
#[derive(Debug, Serialize)]
struct JobDetail {
    /// The recipe's `project_name` (user text).
    project_name: Option<String>,
    progress: JobProgress,
    checkpoints: Vec<CheckpointFile>,
    resume_command: String,
    mean_row_bytes: Option<f64>,
}

pub(super) async fn job(
    State(d): State<Arc<Dashboard>>,
    UrlPath(id): UrlPath<String>,
    headers: HeaderMap,
) -> Response {
    let detail = tokio::task::spawn_blocking(move || -> Result<Vec<u8>> {
        let dir = job_path(&d.work_dir, &id)?;
        Ok(serde_json::to_vec(&detail(&dir, &id)?)?)
    })
    .await;
    match detail {
        // Unchanged since the page's last look: no body.
        Ok(Ok(body)) => {
            let tag = format!("\"{}\"", &blake3::hash(&body).to_hex()[..32]);
            let seen = headers
                .get(header::IF_NONE_MATCH)
                .is_some_and(|v| v.as_bytes() == tag.as_bytes());
            let status = if seen {
                StatusCode::NOT_MODIFIED
            } else {
                StatusCode::OK
            };
            let body = if seen { Vec::new() } else { body };
            let headers = [
                (header::CONTENT_TYPE, "application/json".to_string()),
                (header::ETAG, tag),
                (header::CACHE_CONTROL, "no-cache".to_string()),
            ];
            (status, headers, body).into_response()
        }
        Ok(Err(e)) => {
            let message = format!("{e:#}");
            let status = if message.contains("invalid job id") {
                StatusCode::BAD_REQUEST
            } else {
                StatusCode::NOT_FOUND
            };
            error(status, &message)
        }
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

fn detail(dir: &Path, id: &str) -> Result<JobDetail> {
    let progress = progress_at(dir, epoch_now())?;
    let mut checkpoints = Vec::new();
    for p in &progress.partitions {
        for c in &p.checkpoints {
            let path = if c.path.is_absolute() {
                c.path.clone()
            } else {
                dir.join(&c.path)
            };
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            let format = name
                .as_deref()
                .and_then(|n| n.rsplit('.').next())
                .unwrap_or("")
                .to_string();
            checkpoints.push(CheckpointFile {
                partition_id: p.partition_id,
                operation_idx: c.operation_idx,
                operation_name: c.operation_name.clone(),
                path: path
                    .strip_prefix(dir)
                    .unwrap_or(&path)
                    .display()
                    .to_string(),
                format,
                bytes: size_of(&path),
                rows: c.rows,
                saved_at: c.saved_at,
                exists: c.exists,
                sealed: dj_plans::seal::seal_path(&path).exists(),
            });
        }
    }
    let mean_row_bytes = progress
        .dataset_path
        .as_deref()
        .and_then(|d| size_of(Path::new(d)))
        .zip(progress.total_samples.filter(|n| *n > 0))
        .map(|(bytes, rows)| bytes as f64 / rows as f64);
    let project_name =
        effective_recipe(dir).and_then(|r| r["project_name"].as_str().map(str::to_string));
    Ok(JobDetail {
        project_name,
        resume_command: resume_command(dir, id),
        progress,
        checkpoints,
        mean_row_bytes,
    })
}

/// A file's size, or a directory's files' sizes added up.
fn size_of(path: &Path) -> Option<u64> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.is_file() {
        return Some(meta.len());
    }
    let mut total = 0;
    for entry in std::fs::read_dir(path).ok()?.flatten() {
        total += size_of(&entry.path()).unwrap_or(0);
    }
    Some(total)
}

#[derive(Debug, Deserialize)]
pub(super) struct Since {
    #[serde(default)]
    since: usize,
}

/// `GET /api/jobs/ID/events?since=N`: the job's events from the N-th on (in file order, at
/// most [`EVENTS_PER_CALL`]), and where the next call starts.
pub(super) async fn events(
    State(d): State<Arc<Dashboard>>,
    UrlPath(id): UrlPath<String>,
    Query(q): Query<Since>,
) -> Response {
    blocking(move || {
        let dir = job_path(&d.work_dir, &id)?;
        let all = load_events(&dir);
        let from = q.since.min(all.len());
        let events: Vec<Value> = all.into_iter().skip(from).take(EVENTS_PER_CALL).collect();
        Ok(json!({ "since": from, "next": from + events.len(), "events": events }))
    })
    .await
}

#[derive(Debug, Deserialize)]
pub(super) struct StopQuery {
    #[serde(default)]
    force: bool,
}

/// `POST /api/jobs/ID/stop?force=BOOL`: a graceful stop (SIGTERM, or a stop request on object
/// storage), or a forced one; as `dj-job stop --json` reports it. Needs the page's CSRF token in
/// `X-CSRF-Token`, and an `Origin`, when sent, of this very server.
pub(super) async fn stop(
    State(d): State<Arc<Dashboard>>,
    UrlPath(id): UrlPath<String>,
    Query(q): Query<StopQuery>,
    headers: HeaderMap,
) -> Response {
    let csrf = headers.get("x-csrf-token").and_then(|v| v.to_str().ok());
    if !csrf.is_some_and(|t| super::same_secret(t, &d.csrf)) {
        return error(StatusCode::FORBIDDEN, "a stop needs the page's CSRF token");
    }
    if !same_origin(&headers) {
        return error(
            StatusCode::FORBIDDEN,
            "a stop must come from this dashboard's page",
        );
    }
    blocking(move || {
        crate::job::validate_job_id(&id)?;
        match remote_work_dir(&d.work_dir) {
            Some(url) => stop_remote_job(url, &id, q.force, STOP_WAIT),
            None => stop_job(&job_path(&d.work_dir, &id)?, q.force, STOP_WAIT),
        }
    })
    .await
}

/// No `Origin`, or one naming the `Host` the request came to.
fn same_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) else {
        return true;
    };
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    let origin_host = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"));
    host.is_some() && origin_host == host
}
