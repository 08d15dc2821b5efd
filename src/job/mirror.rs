//! Job directories on object storage (`s3://`): a job directory there is built in a local
//! mirror whose durable files are uploaded as they become durable (partition hashes before
//! checkpoints, checkpoints as they are saved, the event log with them) and which a run on any
//! machine first fills from the bucket; `dj-job` and `dj-sql` read read-only views of it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use anyhow::{Context, Result};
use dj_plans::store::{self, Remote};

use super::{EVENTS_PREFIX, JobPaths, PARTITIONING_INFO_FILE};

/// A job directory kept in a bucket, worked on through a local mirror.
#[derive(Debug)]
pub(crate) struct JobMirror {
    pub local: PathBuf,
    remote: Remote,
    /// What this machine last published or fetched, per file (`.mirror.json` in the mirror).
    manifest: Mutex<BTreeMap<String, Copy>>,
    /// Checkpoint sinks upload their own files (plans run on a cluster): [`JobMirror::sync`]
    /// leaves checkpoints alone.
    sinks_publish: std::sync::atomic::AtomicBool,
    /// Held through a whole [`JobMirror::sync`]: partitions sync as their checkpoints land, and
    /// without it an earlier sync's slower upload of a file (the event log) could land after
    /// the final sync's newer one and leave the bucket with the older copy.
    syncing: Mutex<()>,
}

/// One file as this machine last published or fetched it: the object's ETag, and the local
/// file's length and modification time then.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Copy {
    e_tag: Option<String>,
    len: u64,
    modified_ns: u128,
}

fn local_stamp(path: &Path) -> Option<(u64, u128)> {
    let meta = std::fs::metadata(path).ok().filter(|m| m.is_file())?;
    let modified = meta
        .modified()
        .ok()?
        .duration_since(SystemTime::UNIX_EPOCH)
        .ok()?;
    Some((meta.len(), modified.as_nanos()))
}

/// A read-only local copy of job `job_id` of the remote `work_dir` for `dj-job` and `dj-sql`:
/// its small files (events, summary, recipe, partitioning), and with `checkpoints` its checkpoints
/// and keys too; plus a snapshot of its lease (`.lease.json`: who runs it). Returns its directory.
pub(crate) fn job_view(work_dir: &str, job_id: &str, checkpoints: bool) -> Result<PathBuf> {
    let m = JobMirror::in_area(work_dir, job_id, "views")?;
    if m.remote.list()?.is_empty() {
        anyhow::bail!(
            "Job directory not found: {} (--work_dir is the directory holding job directories)",
            m.url()
        );
    }
    m.pull_where(|rel| {
        checkpoints
            || !rel.starts_with(&JobPaths::checkpoint_relative(""))
            || rel.ends_with(".json")
    })
    .with_context(|| format!("cannot read the job directory {}", m.url()))?;
    let lease = m.remote.join(crate::job::lease::LEASE_FILE);
    let snapshot = m.local.join(crate::job::lease::LEASE_FILE);
    match lease.get()? {
        Some((bytes, _)) => dj_plans::atomic::write_atomic(&snapshot, &bytes)?,
        None => match std::fs::remove_file(&snapshot) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
            _ => {}
        },
    }
    Ok(m.local.clone())
}

/// The ids of the job directories (those with a partitioning record or an event log) under the
/// remote `work_dir`, sorted.
pub(crate) fn remote_job_ids(work_dir: &str) -> Result<Vec<String>> {
    let base = Remote::open(work_dir)?;
    let prefix = format!("{}/", base.key.as_ref());
    let mut ids = std::collections::BTreeSet::new();
    for meta in base.list()? {
        let Some(rel) = meta.location.as_ref().strip_prefix(&prefix) else {
            continue;
        };
        if let Some((id, rest)) = rel.split_once('/')
            && (rest == JobPaths::checkpoint_relative(PARTITIONING_INFO_FILE)
                || rest.starts_with(EVENTS_PREFIX))
        {
            ids.insert(id.to_string());
        }
    }
    Ok(ids.into_iter().collect())
}

/// Asks the run holding job `job_id`'s lease to stop (see [`crate::job::lease::STOP_FILE`]).
pub(crate) fn request_stop(work_dir: &str, job_id: &str, force: bool) -> Result<()> {
    let request = crate::job::lease::StopRequest {
        force,
        requested_epoch: SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64()),
    };
    Remote::open(&job_url(work_dir, job_id))?
        .join(crate::job::lease::STOP_FILE)
        .put(serde_json::to_vec(&request)?)?;
    Ok(())
}

/// The lease of job `job_id` of the remote `work_dir`: who holds it, if anyone.
pub(crate) fn lease_holder(work_dir: &str, job_id: &str) -> Result<Option<Vec<u8>>> {
    Ok(Remote::open(&job_url(work_dir, job_id))?
        .join(crate::job::lease::LEASE_FILE)
        .get()?
        .map(|(bytes, _)| bytes))
}

/// The URL of job `job_id`'s directory under the remote `work_dir` (which may already end with
/// the job id, as a `work_dir` with `{job_id}` does once filled in).
fn job_url(work_dir: &str, job_id: &str) -> String {
    let base = work_dir.trim_end_matches('/');
    if base.ends_with(job_id) {
        base.to_string()
    } else {
        format!("{base}/{job_id}")
    }
}

/// Files never published: hidden ones (the per-machine `.lock`, `.mirror.json`, temporary
/// files being written) and the local diagnostic logs.
fn private(rel: &str) -> bool {
    rel.starts_with("logs/") || rel.split('/').any(|part| part.starts_with('.'))
}

impl JobMirror {
    /// The mirror of job `job_id` under the remote `work_dir`.
    pub(crate) fn new(work_dir: &str, job_id: &str) -> Result<Arc<JobMirror>> {
        JobMirror::in_area(work_dir, job_id, "jobs")
    }

    /// The copy of the job in `$DJ_CACHE_DIR/{area}/`: `jobs` for the runs' mirrors, `views` for
    /// the read-only copies `dj-job` and `dj-sql` fetch (apart, so that a tool never writes into
    /// the mirror a run on this machine works in).
    fn in_area(work_dir: &str, job_id: &str, area: &str) -> Result<Arc<JobMirror>> {
        let job_url = job_url(work_dir, job_id);
        let remote = Remote::open(&job_url)?;
        let local = store::url_cache_dir(area, &job_url).join(job_id);
        let manifest = std::fs::read(local.join(".mirror.json"))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default();
        Ok(Arc::new(JobMirror {
            local,
            remote,
            manifest: Mutex::new(manifest),
            sinks_publish: std::sync::atomic::AtomicBool::new(false),
            syncing: Mutex::new(()),
        }))
    }

    pub(crate) fn url(&self) -> &str {
        &self.remote.url
    }

    /// Records `rel` as published or fetched with `e_tag`, its local file then stamped `stamp`
    /// (length and modification time).
    fn record(&self, rel: &str, e_tag: Option<String>, stamp: (u64, u128)) -> Result<()> {
        let (len, modified_ns) = stamp;
        let mut manifest = self.manifest.lock().unwrap_or_else(|e| e.into_inner());
        manifest.insert(
            rel.to_string(),
            Copy {
                e_tag,
                len,
                modified_ns,
            },
        );
        let bytes = serde_json::to_vec(&*manifest)?;
        std::fs::create_dir_all(&self.local)?;
        dj_plans::atomic::write_atomic(&self.local.join(".mirror.json"), &bytes)
            .with_context(|| format!("cannot write {}/.mirror.json", self.local.display()))
    }

    /// Brings the mirror up to date with the bucket: downloads every published file this
    /// machine lacks or whose object changed since this machine last published or fetched it
    /// (another machine ran the job since). Returns how many files were fetched.
    pub(crate) fn pull(&self) -> Result<usize> {
        self.pull_where(|_| true)
    }

    /// [`JobMirror::pull`] of the files `wanted` accepts (by path relative to the job directory).
    fn pull_where(&self, wanted: impl Fn(&str) -> bool) -> Result<usize> {
        let mut fetched = 0;
        let prefix = format!("{}/", self.remote.key.as_ref());
        for meta in self.remote.list()? {
            let Some(rel) = meta.location.as_ref().strip_prefix(&prefix) else {
                continue;
            };
            if private(rel) || !wanted(rel) {
                continue;
            }
            let dest = self.local.join(rel);
            let known = self
                .manifest
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(rel)
                .and_then(|c| c.e_tag.clone());
            if dest.exists() && (known.is_none() || known == meta.e_tag) {
                continue;
            }
            self.remote
                .join(rel)
                .download(&dest)
                .with_context(|| format!("cannot download {}/{rel}", self.remote.url))?;
            if let Some(stamp) = local_stamp(&dest) {
                self.record(rel, meta.e_tag.clone(), stamp)?;
            }
            fetched += 1;
        }
        Ok(fetched)
    }

    fn relative(&self, path: &Path) -> Result<String> {
        Ok(path
            .strip_prefix(&self.local)
            .with_context(|| format!("{} is outside the job directory", path.display()))?
            .to_string_lossy()
            .replace('\\', "/"))
    }

    /// The published object of `path`, a file of the job directory (a checkpoint an executor
    /// wrote and published), downloaded first when this machine lacks it.
    pub(crate) fn fetch(&self, path: &Path) -> Result<store::RemoteObject> {
        let rel = self.relative(path)?;
        let object = self.remote.join(&rel);
        let mut e_tag = None;
        if !path.is_file() {
            let Some(meta) = object.head()? else {
                anyhow::bail!(
                    "{} is neither here nor published at {}",
                    path.display(),
                    object.url
                );
            };
            object
                .download(path)
                .with_context(|| format!("cannot download {}", object.url))?;
            // Known as published: a later sync does not upload it again.
            if let Some(stamp) = local_stamp(path) {
                self.record(&rel, meta.e_tag.clone(), stamp)?;
            }
            e_tag = meta.e_tag;
        }
        Ok(store::RemoteObject {
            url: object.url.clone(),
            size: std::fs::metadata(path)?.len(),
            e_tag,
        })
    }

    /// Publishes one file of the local job directory.
    pub(crate) fn push(&self, path: &Path) -> Result<()> {
        let rel = self.relative(path)?;
        let object = self.remote.join(&rel);
        self.push_with(path, |path| {
            object
                .upload(path)
                .with_context(|| format!("cannot publish {}", object.url))
        })
    }

    /// [`JobMirror::push`] through `upload`. The file's stamp is taken before the upload: a
    /// write during it (an event appended while a checkpoint's sync uploads the event log) leaves
    /// the file newer than its record, so the next sync uploads it again. Stamped after the
    /// upload, the file looked published with content the bucket never got (a stopped run's last
    /// event went missing that way).
    fn push_with(
        &self,
        path: &Path,
        upload: impl FnOnce(&Path) -> Result<Option<String>>,
    ) -> Result<()> {
        let rel = self.relative(path)?;
        if private(&rel) {
            return Ok(());
        }
        let Some(stamp) = local_stamp(path) else {
            return Ok(());
        };
        let e_tag = upload(path)?;
        self.record(&rel, e_tag, stamp)
    }

    /// Whether `path` (`rel` in the job directory) is as this machine last published or
    /// fetched it.
    fn unchanged(&self, rel: &str, path: &Path) -> bool {
        let Some((len, modified_ns)) = local_stamp(path) else {
            return true;
        };
        self.manifest
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(rel)
            .is_some_and(|c| c.len == len && c.modified_ns == modified_ns)
    }

    /// From now on checkpoint files are published by the sinks that write them.
    pub(crate) fn checkpoints_published_by_sinks(&self) {
        self.sinks_publish
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Removes a published file (retention of the local copy's deletions).
    pub(crate) fn remove(&self, rel: &str) -> Result<()> {
        Ok(self.remote.join(rel).delete()?)
    }

    /// Publishes every file of the local job directory that changed since it was last
    /// published; checkpoints last, so a published checkpoint never precedes the partition
    /// hash and saved keys it depends on, and seals before the files they seal.
    pub(crate) fn sync(&self) -> Result<()> {
        let _one_at_a_time = self.syncing.lock().unwrap_or_else(|e| e.into_inner());
        let mut files = Vec::new();
        let mut stack = vec![self.local.clone()];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    files.push(path);
                }
            }
        }
        let is_checkpoint = |p: &Path| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                dj_plans::nodes::checkpoint::parse_checkpoint_file_name(n).is_some()
            })
        };
        if self
            .sinks_publish
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            files.retain(|p| !is_checkpoint(p));
        }
        // A seal goes before its file, so a published file always has its seal.
        let is_seal = |p: &Path| p.to_string_lossy().ends_with(dj_plans::seal::SEAL_SUFFIX);
        files.sort_by_key(|p| (is_checkpoint(p), !is_seal(p), p.clone()));
        for path in files {
            let rel = self.relative(&path)?;
            if !self.unchanged(&rel, &path) {
                self.push(&path)?;
            }
        }
        Ok(())
    }
}

/// The checkpoint listener of a job on object storage: logs the event, then publishes.
#[derive(Debug)]
pub(crate) struct Publishing {
    pub events: Arc<crate::job::events::EventLog>,
    pub mirror: Arc<JobMirror>,
}

impl dj_plans::nodes::CheckpointListener for Publishing {
    fn saved(&self, checkpoint: &dj_plans::nodes::SavedCheckpoint) {
        self.events.saved(checkpoint);
        if let Err(e) = self.mirror.sync() {
            // The checkpoint is durable here; the next sync (at the latest when the run ends)
            // publishes it.
            tracing::warn!(
                "cannot publish checkpoint {}: {e:#}",
                checkpoint.path.display()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use datafusion::object_store::memory::InMemory;
    use datafusion::object_store::path::Path as ObjectPath;

    use super::*;

    fn mirror(local: &Path) -> JobMirror {
        JobMirror {
            local: local.to_path_buf(),
            remote: Remote {
                url: "s3://bucket/jobs/j".into(),
                store: Arc::new(InMemory::new()),
                key: ObjectPath::from("jobs/j"),
            },
            manifest: Mutex::default(),
            sinks_publish: std::sync::atomic::AtomicBool::new(false),
            syncing: Mutex::new(()),
        }
    }

    /// An event appended while the event log is being uploaded (by another thread's sync) is
    /// published by the next sync: the upload's record does not cover it.
    #[test]
    fn a_write_during_an_upload_is_published_by_the_next_sync() {
        let dir = tempfile::tempdir().unwrap();
        let m = mirror(dir.path());
        let log = dir.path().join("events_1.jsonl");
        std::fs::write(&log, "{\"event\":\"job_start\"}\n").unwrap();
        let object = m.remote.join("events_1.jsonl");
        m.push_with(&log, |path| {
            let tag = object.upload(path)?;
            // The stop event lands after the upload read the file. Its modification time
            // must differ from the first write's even on a coarse clock: the length does.
            let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
            f.write_all(b"{\"event\":\"job_failed\",\"status\":\"stopped\"}\n")
                .unwrap();
            Ok(tag)
        })
        .unwrap();
        assert!(!m.unchanged("events_1.jsonl", &log));
        m.sync().unwrap();
        let published = dir.path().join("published.jsonl");
        object.download(&published).unwrap();
        assert_eq!(
            std::fs::read_to_string(&published).unwrap(),
            std::fs::read_to_string(&log).unwrap()
        );
        assert!(m.unchanged("events_1.jsonl", &log));
    }
}
