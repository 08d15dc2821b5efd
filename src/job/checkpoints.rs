//! The saved work in a job's `checkpoints/` folder: checkpoints, dedup key files and selector
//! value files, each with its seal ([`dj_plans::seal`]). Finds where each partition can resume,
//! verifies every file a resume would read (moving failed ones aside into `corrupt/`), and
//! applies the retention policy.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::Result;
use dj_plans::Recipe;
use dj_plans::nodes::checkpoint::parse_checkpoint_file_name;
use dj_plans::nodes::dedup::keys_file_name;
use dj_plans::nodes::select::values_file_name;
use dj_plans::nodes::staged::keys_parquet_name;
use dj_plans::recipe::RetentionPolicy;
use dj_plans::seal::{self, SEAL_SUFFIX};
use dj_udfs::Operator;
use serde_json::json;

use super::mirror::JobMirror;
use crate::job::JobPaths;
use crate::job::events::{Event, EventKind, EventLog};
use crate::partition::Start;

/// A saved file that failed verification and was moved aside.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Quarantined {
    pub partition: usize,
    pub op_index: usize,
    pub op_name: String,
    /// Where the file was, and where it is now.
    pub path: PathBuf,
    pub moved_to: PathBuf,
    pub reason: String,
}

impl Quarantined {
    /// The `checkpoint_invalid` event recording it.
    pub(crate) fn event(&self) -> Event {
        let mut e = Event::new(
            EventKind::CheckpointInvalid,
            format!(
                "Moved aside {} of partition {} after operation {}: {}",
                file_name(&self.path),
                self.partition,
                self.op_index,
                self.reason
            ),
        )
        .partition(self.partition)
        .op(self.op_index, &self.op_name)
        .meta(json!({
            "checkpoint_path": self.path.display().to_string(),
            "moved_to": self.moved_to.display().to_string(),
            "reason": self.reason,
        }));
        e.status = Some("corrupt");
        e.checkpoint_path = Some(self.path.display().to_string());
        e.error_message = Some(self.reason.clone());
        e
    }

    /// The warning logged (on stderr, and in the job's `logs/`).
    pub fn warning(&self) -> String {
        format!(
            "{} failed verification ({}); moved to {}. Partition {} resumes from an earlier checkpoint or its input.",
            self.path.display(),
            self.reason,
            self.moved_to.display(),
            self.partition
        )
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The key and value files partition `p` needs to resume after op `op`: one per global op
/// (deduplicator or selector) up to and including it.
pub(super) fn global_files(
    paths: &JobPaths,
    recipe: &Recipe,
    op: usize,
    p: usize,
) -> Vec<(usize, PathBuf)> {
    recipe.process[..=op]
        .iter()
        .filter_map(|o| {
            match o.operator {
                Operator::Deduplicator(_) => {
                    // Saved in memory's format, or in stages by a cluster (see
                    // `cluster::staged`); the first when neither is there (missing).
                    let bin = paths.checkpoints.join(keys_file_name(o.index, p));
                    let staged = paths.checkpoints.join(keys_parquet_name(o.index, p));
                    Some(if !bin.exists() && staged.exists() {
                        staged
                    } else {
                        bin
                    })
                }
                Operator::Selector(_) => Some(paths.checkpoints.join(values_file_name(o.index, p))),
                _ => None,
            }
            .map(|path| (o.index, path))
        })
        .collect()
}

/// Per partition, its checkpoints newest first (op index, path).
pub(crate) fn checkpoints_by_partition(
    paths: &JobPaths,
    recipe: &Recipe,
    partitions: usize,
) -> Result<Vec<Vec<(usize, PathBuf)>>> {
    let mut found = vec![Vec::new(); partitions];
    for entry in std::fs::read_dir(&paths.checkpoints)? {
        let path = entry?.path();
        let Some((op, p)) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(parse_checkpoint_file_name)
        else {
            continue;
        };
        if p < partitions && op < recipe.process.len() && path.is_file() {
            found[p].push((op, path));
        }
    }
    for f in &mut found {
        f.sort_by_key(|c| std::cmp::Reverse(c.0));
    }
    Ok(found)
}

/// The newest checkpoint of each partition whose global ops' files all exist, without reading
/// any file: what a resume would start from if every file verifies.
pub(crate) fn find_starts(
    paths: &JobPaths,
    recipe: &Recipe,
    partitions: usize,
) -> Result<Vec<Start>> {
    let found = checkpoints_by_partition(paths, recipe, partitions)?;
    Ok(found
        .into_iter()
        .enumerate()
        .map(|(p, candidates)| {
            candidates
                .into_iter()
                .find(|(op, _)| {
                    global_files(paths, recipe, *op, p)
                        .iter()
                        .all(|(_, f)| f.is_file())
                })
                .map_or(Start::Input, |(op, path)| Start::Checkpoint {
                    op,
                    path,
                    refilter: false,
                })
        })
        .collect())
}

/// Where each partition resumes: its newest checkpoint that verifies against its seal and whose
/// global ops' key and value files verify too. A file that fails is moved aside (and its object
/// removed from a job directory on object storage, where the moved copy is published instead);
/// the partition then falls back to an earlier checkpoint or its input.
pub(crate) fn verify_starts(
    paths: &JobPaths,
    recipe: &Recipe,
    partitions: usize,
    mirror: Option<&JobMirror>,
) -> Result<(Vec<Start>, Vec<Quarantined>)> {
    let found = checkpoints_by_partition(paths, recipe, partitions)?;
    let mut verified: HashMap<PathBuf, bool> = HashMap::new();
    let mut quarantined = Vec::new();
    let mut check = |path: &Path, p: usize, op: usize| -> Result<bool> {
        if let Some(ok) = verified.get(path) {
            return Ok(*ok);
        }
        let ok = match seal::verify(path) {
            Ok(_) => true,
            Err(e) => {
                let moved_to = seal::quarantine(path).map_err(|io| {
                    anyhow::anyhow!(
                        "{e}; moving it aside into {} failed: {io}",
                        paths.checkpoints.join(seal::QUARANTINE_DIR).display()
                    )
                })?;
                if let Some(m) = mirror {
                    let rel = JobPaths::checkpoint_relative(&file_name(path));
                    m.remove(&format!("{rel}{SEAL_SUFFIX}"))?;
                    m.remove(&rel)?;
                }
                let q = Quarantined {
                    partition: p,
                    op_index: op,
                    op_name: recipe.process[op].name.clone(),
                    path: path.to_path_buf(),
                    moved_to,
                    reason: reason(&e),
                };
                tracing::warn!("{}", q.warning());
                quarantined.push(q);
                false
            }
        };
        verified.insert(path.to_path_buf(), ok);
        Ok(ok)
    };
    let mut starts = vec![Start::Input; partitions];
    for (p, candidates) in found.into_iter().enumerate() {
        for (op, path) in candidates {
            let mut usable = true;
            for (g, file) in global_files(paths, recipe, op, p) {
                if !file.is_file() || !check(&file, p, g)? {
                    usable = false;
                    break;
                }
            }
            if usable && check(&path, p, op)? {
                starts[p] = Start::Checkpoint {
                    op,
                    path,
                    refilter: false,
                };
                break;
            }
        }
    }
    Ok((starts, quarantined))
}

/// The failure without the path (the event and warning name the file already).
fn reason(e: &seal::IntegrityError) -> String {
    use seal::IntegrityError as E;
    match e {
        E::MissingSeal { .. } => {
            "no checksum record (written by an older version, or removed)".into()
        }
        E::BadSeal { reason, .. } => format!("unreadable checksum record: {reason}"),
        E::Size {
            expected, actual, ..
        } => format!("{actual} bytes, but {expected} bytes were saved"),
        E::Digest {
            expected, actual, ..
        } => format!("BLAKE3 {actual} differs from the saved {expected}"),
        E::Io { source, .. } => format!("cannot read it: {source}"),
    }
}

/// Logs each moved-aside file as a `checkpoint_invalid` event.
pub(crate) fn log_quarantined(events: &EventLog, quarantined: &[Quarantined]) {
    for q in quarantined {
        events.log(q.event());
    }
}

/// Whether `name` (in `checkpoints/`) is saved work or its seal: what retention removes.
fn is_saved_work(name: &str) -> bool {
    let name = name.strip_suffix(SEAL_SUFFIX).unwrap_or(name);
    parse_checkpoint_file_name(name).is_some()
        || ((name.ends_with(".bin") || name.ends_with(".parquet"))
            && name.starts_with("dedup_keys_op_"))
        || (name.ends_with(".bin") && name.starts_with("select_values_op_"))
}

/// Whether `name` (in `checkpoints/`) is a staged dedup's removed-rows directory (whole, or
/// still being written): what retention removes with the saved work.
fn is_removed_lists(name: &str) -> bool {
    name.starts_with("dedup_removed_op_")
}

/// `intermediate_storage.retention_policy` after a successful run: `keep_all` keeps the saved
/// work; `keep_failed_only` and `cleanup_all` remove it (the job did not fail). Files moved aside
/// as corrupt are kept.
pub(crate) fn apply_retention(
    paths: &JobPaths,
    recipe: &Recipe,
    mirror: Option<&JobMirror>,
) -> Result<()> {
    let s = &recipe.intermediate_storage;
    if s.retention_policy == RetentionPolicy::KeepAll || s.preserve_intermediate_data {
        return Ok(());
    }
    for entry in std::fs::read_dir(&paths.checkpoints)? {
        let path = entry?.path();
        let name = file_name(&path);
        if path.is_file() && is_saved_work(&name) {
            std::fs::remove_file(&path)?;
            if let Some(m) = mirror {
                m.remove(&JobPaths::checkpoint_relative(&name))?;
            }
        } else if path.is_dir() && is_removed_lists(&name) {
            std::fs::remove_dir_all(&path)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saved_work_is_every_checkpoint_key_and_value_file_and_seal() {
        for name in [
            "checkpoint_op_0001_partition_0000.parquet",
            "checkpoint_op_0001_partition_0000.jsonl.gz.blake3",
            "dedup_keys_op_0002_partition_0003.bin",
            "dedup_keys_op_0002_partition_0003.bin.blake3",
            "dedup_keys_op_0002_partition_0003.parquet",
            "dedup_keys_op_0002_partition_0003.parquet.blake3",
            "select_values_op_0004_partition_0000.bin",
            "select_values_op_0004_partition_0000.bin.blake3",
        ] {
            assert!(is_saved_work(name), "{name}");
        }
        for name in [
            crate::job::PARTITIONING_INFO_FILE,
            ".checkpoint_op_0001_partition_0000.parquet.tmp-7",
            "notes.txt",
        ] {
            assert!(!is_saved_work(name), "{name}");
        }
    }
}
