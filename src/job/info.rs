//! `checkpoints/partitioning_info.json`: the saved row boundaries and content hashes of every
//! logical partition, and the checks a strict resume runs against them.
//!
//! Content hashes ([`HASH_ALGORITHM`], see `dj_plans::source::content_hash`) are recorded while
//! the processing pass reads each partition ([`HashRecorder`]), before any of its checkpoints is
//! written; a resume re-hashes the input of partitions that have one, to validate it.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::{Result, bail};
use datafusion::physical_plan::ExecutionPlan;
use dj_plans::source::{
    ContentHasher, HASH_ALGORITHM, InputIndex, RangeDigest, RangeHashSink, RowRange, RowRangeExec,
};
use futures::StreamExt;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PartitionInfo {
    pub partition_id: usize,
    pub row_count: u64,
    #[serde(default)]
    pub content_hash: String,
    #[serde(default)]
    pub start_row: Option<u64>,
    #[serde(default)]
    pub end_row: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PartitioningInfo {
    pub num_partitions: usize,
    pub total_rows: u64,
    #[serde(default = "yes")]
    pub deterministic: bool,
    #[serde(default)]
    pub hash_algorithm: String,
    #[serde(default)]
    pub recipe_hash: String,
    #[serde(default)]
    pub dataset_path: String,
    pub partitions: Vec<PartitionInfo>,
}

fn yes() -> bool {
    true
}

/// Row count and content hash of each range, `concurrency` partitions at a time (the job's
/// partition concurrency, which bounds the batches in memory).
pub(crate) async fn hash_partitions(
    index: &Arc<InputIndex>,
    ranges: &[RowRange],
    ctx: Arc<datafusion::execution::TaskContext>,
    concurrency: usize,
) -> Result<Vec<(u64, String)>> {
    let exec = Arc::new(RowRangeExec::new(index.clone(), ranges.to_vec(), None)?);
    let tasks = futures::stream::iter(0..ranges.len())
        .map(|p| {
            let (exec, ctx) = (exec.clone(), ctx.clone());
            tokio::spawn(async move {
                let mut stream = exec.execute(p, ctx)?;
                let mut hasher = ContentHasher::new(exec.index().media.clone());
                while let Some(batch) = stream.next().await {
                    hasher.update(&batch?);
                }
                let RangeDigest { rows, hash } = hasher.finish();
                anyhow::Ok((rows, hash))
            })
        })
        .buffered(concurrency.max(1));
    let results: Vec<_> = tasks.collect().await;
    results.into_iter().map(|r| r?).collect()
}

impl PartitioningInfo {
    pub(crate) fn new(
        index: &InputIndex,
        ranges: &[RowRange],
        hashes: &[(u64, String)],
        recipe_hash: String,
    ) -> Self {
        PartitioningInfo {
            num_partitions: ranges.len(),
            total_rows: index.total_rows,
            deterministic: true,
            hash_algorithm: HASH_ALGORITHM.into(),
            recipe_hash,
            dataset_path: index.dataset_path.clone(),
            partitions: ranges
                .iter()
                .zip(hashes)
                .enumerate()
                .map(|(i, (r, (rows, hash)))| PartitionInfo {
                    partition_id: i,
                    row_count: *rows,
                    content_hash: hash.clone(),
                    start_row: Some(r.start),
                    end_row: Some(r.end),
                })
                .collect(),
        }
    }

    /// Resume steps 3 and 4: the saved metadata is of this format, complete and consistent, and
    /// its boundaries cover the current input. Returns the saved ranges.
    pub(crate) fn saved_ranges(&self, current_rows: u64) -> Result<Vec<RowRange>> {
        const KEPT: &str = "Existing checkpoints were left unchanged.";
        if self.hash_algorithm != HASH_ALGORITHM {
            bail!(
                "Explicit resume cannot validate the saved partition hash algorithm: saved={}, supported={HASH_ALGORITHM}. {KEPT}",
                if self.hash_algorithm.is_empty() {
                    "<none>"
                } else {
                    &self.hash_algorithm
                }
            );
        }
        if self
            .partitions
            .iter()
            .any(|p| p.start_row.is_none() || p.end_row.is_none())
        {
            bail!(
                "Explicit resume requires content hashes and row boundaries created by this version. {KEPT}"
            );
        }
        if self.partitions.len() != self.num_partitions {
            bail!(
                "Saved partition metadata is incomplete: expected={}, actual={}. {KEPT}",
                self.num_partitions,
                self.partitions.len()
            );
        }
        let mut expected_start = 0;
        let mut ranges = Vec::with_capacity(self.partitions.len());
        for (i, p) in self.partitions.iter().enumerate() {
            let (s, e) = (p.start_row.unwrap(), p.end_row.unwrap());
            if p.partition_id != i || s != expected_start || e < s || e - s != p.row_count {
                bail!(
                    "Saved row boundaries are invalid for partition {i}: start={s}, end={e}, rows={}, expected_start={expected_start}. {KEPT}",
                    p.row_count
                );
            }
            expected_start = e;
            ranges.push(RowRange { start: s, end: e });
        }
        if expected_start != self.total_rows {
            bail!(
                "Saved row boundaries do not cover the saved total row count: boundaries_end={expected_start}, total_rows={}. {KEPT}",
                self.total_rows
            );
        }
        if current_rows != self.total_rows {
            bail!(
                "The input changed: it has {current_rows} rows now, the job was started on {} rows. Refusing to resume; {}",
                self.total_rows,
                KEPT.to_lowercase()
            );
        }
        Ok(ranges)
    }

    /// Resume step 5: the current hash of each `(partition, (rows, hash))` equals the saved one.
    pub(crate) fn validate_hashes(&self, current: &[(usize, (u64, String))]) -> Result<()> {
        let bad: Vec<String> = current
            .iter()
            .filter_map(|(p, cur)| Some((self.partitions.get(*p)?, cur)))
            .filter(|(saved, (rows, hash))| saved.row_count != *rows || saved.content_hash != *hash)
            .map(|(saved, (rows, hash))| {
                format!(
                    "partition {} (rows [{}, {})): saved {} rows hash {}, current {} rows hash {}",
                    saved.partition_id,
                    saved.start_row.unwrap_or(0),
                    saved.end_row.unwrap_or(0),
                    saved.row_count,
                    short(&saved.content_hash),
                    rows,
                    short(hash)
                )
            })
            .collect();
        if !bad.is_empty() {
            bail!(
                "Saved partition content hashes do not match the current input ({}). Refusing to resume; existing checkpoints were left unchanged.",
                bad.join("; ")
            );
        }
        Ok(())
    }
}

impl PartitioningInfo {
    /// The legacy `--job_id` check: `current` (fully hashed) has the same layout, recipe and
    /// input as this saved metadata. A saved partition without a hash never finished reading
    /// its input, so it has no checkpoint to protect and matches any content.
    pub(crate) fn matches(&self, current: &PartitioningInfo) -> bool {
        fn layout(i: &PartitioningInfo) -> (usize, u64, bool, &str, &str, &str) {
            (
                i.num_partitions,
                i.total_rows,
                i.deterministic,
                &i.hash_algorithm,
                &i.recipe_hash,
                &i.dataset_path,
            )
        }
        layout(self) == layout(current)
            && self.partitions.len() == current.partitions.len()
            && self
                .partitions
                .iter()
                .zip(&current.partitions)
                .all(|(s, c)| {
                    s.partition_id == c.partition_id
                        && s.row_count == c.row_count
                        && s.start_row == c.start_row
                        && s.end_row == c.end_row
                        && (s.content_hash.is_empty() || s.content_hash == c.content_hash)
                })
    }
}

/// Writes each partition's content hash into `partitioning_info.json` (atomically, one rewrite
/// per hash) as the processing pass produces it, so a job pays no separate pass over its input.
#[derive(Debug)]
pub(crate) struct HashRecorder {
    path: PathBuf,
    info: Mutex<PartitioningInfo>,
    /// A job directory on object storage: each hash is published before the partition can
    /// write a checkpoint.
    mirror: Option<Arc<super::mirror::JobMirror>>,
}

impl HashRecorder {
    pub(crate) fn new(
        path: PathBuf,
        info: PartitioningInfo,
        mirror: Option<Arc<super::mirror::JobMirror>>,
    ) -> Arc<HashRecorder> {
        Arc::new(HashRecorder {
            path,
            info: Mutex::new(info),
            mirror,
        })
    }

    /// One sink per partition that has no hash yet; `None` for the others.
    pub(crate) fn sinks(self: &Arc<Self>) -> Vec<Option<Arc<dyn RangeHashSink>>> {
        let info = self.info.lock().unwrap_or_else(|e| e.into_inner());
        info.partitions
            .iter()
            .map(|p| {
                p.content_hash.is_empty().then(|| {
                    Arc::new(PartitionHashSink {
                        recorder: self.clone(),
                        partition: p.partition_id,
                    }) as Arc<dyn RangeHashSink>
                })
            })
            .collect()
    }

    fn record(&self, partition: usize, digest: RangeDigest) -> Result<()> {
        let mut info = self.info.lock().unwrap_or_else(|e| e.into_inner());
        let Some(p) = info.partitions.get_mut(partition) else {
            bail!("no partition {partition} in {}", self.path.display());
        };
        if p.row_count != digest.rows {
            bail!(
                "partition {partition} read {} rows, its saved range has {}",
                digest.rows,
                p.row_count
            );
        }
        p.content_hash = digest.hash;
        crate::job::write_json(&self.path, &serde_json::to_value(&*info)?)?;
        match &self.mirror {
            Some(m) => m.push(&self.path),
            None => Ok(()),
        }
    }
}

#[derive(Debug)]
struct PartitionHashSink {
    recorder: Arc<HashRecorder>,
    partition: usize,
}

impl RangeHashSink for PartitionHashSink {
    fn range_hashed(&self, _range: usize, digest: RangeDigest) -> Result<(), String> {
        self.recorder.record(self.partition, digest).map_err(|e| {
            format!(
                "cannot record the content hash of partition {}: {e:#}",
                self.partition
            )
        })
    }
}

fn short(h: &str) -> &str {
    &h[..h.len().min(16)]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info() -> PartitioningInfo {
        PartitioningInfo {
            num_partitions: 2,
            total_rows: 5,
            deterministic: true,
            hash_algorithm: HASH_ALGORITHM.into(),
            recipe_hash: String::new(),
            dataset_path: String::new(),
            partitions: vec![
                PartitionInfo {
                    partition_id: 0,
                    row_count: 2,
                    content_hash: "a".into(),
                    start_row: Some(0),
                    end_row: Some(2),
                },
                PartitionInfo {
                    partition_id: 1,
                    row_count: 3,
                    content_hash: "b".into(),
                    start_row: Some(2),
                    end_row: Some(5),
                },
            ],
        }
    }

    #[test]
    fn valid_boundaries_give_ranges() {
        assert_eq!(
            info().saved_ranges(5).unwrap(),
            vec![RowRange { start: 0, end: 2 }, RowRange { start: 2, end: 5 }]
        );
    }

    #[test]
    fn each_bad_metadata_has_its_message() {
        let mut i = info();
        i.partitions[1].start_row = Some(3);
        assert!(
            i.saved_ranges(5)
                .unwrap_err()
                .to_string()
                .starts_with("Saved row boundaries are invalid for partition 1: start=3")
        );
        let mut i = info();
        i.partitions[1].end_row = None;
        assert!(
            i.saved_ranges(5)
                .unwrap_err()
                .to_string()
                .starts_with("Explicit resume requires content hashes and row boundaries")
        );
        let mut i = info();
        i.hash_algorithm = "sha256-sequence-v1".into();
        assert!(
            i.saved_ranges(5)
                .unwrap_err()
                .to_string()
                .contains("saved=sha256-sequence-v1, supported=blake3-rows-v1")
        );
        let mut i = info();
        i.total_rows = 6;
        assert!(
            i.saved_ranges(6)
                .unwrap_err()
                .to_string()
                .starts_with("Saved row boundaries do not cover")
        );
        assert!(
            info()
                .saved_ranges(7)
                .unwrap_err()
                .to_string()
                .starts_with("The input changed: it has 7 rows now")
        );
        let e = info()
            .validate_hashes(&[(0, (2, "a".into())), (1, (3, "c".into()))])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("partition 1 (rows [2, 5)): saved 3 rows hash b, current 3 rows hash c"),
            "{e}"
        );
        // Only the partitions given are checked.
        info().validate_hashes(&[(0, (2, "a".into()))]).unwrap();
    }

    #[test]
    fn a_saved_partition_without_hash_matches_any_content() {
        let mut saved = info();
        saved.partitions[1].content_hash.clear();
        let mut current = info();
        assert!(saved.matches(&current));
        current.partitions[1].content_hash = "z".into();
        assert!(saved.matches(&current));
        current.partitions[0].content_hash = "z".into();
        assert!(!saved.matches(&current));
        let mut moved = info();
        moved.partitions[0].end_row = Some(3);
        assert!(!info().matches(&moved));
    }

    #[test]
    fn recorder_writes_each_hash_as_it_arrives() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(crate::job::PARTITIONING_INFO_FILE);
        let mut start = info();
        start.partitions[1].content_hash.clear();
        let recorder = HashRecorder::new(path.clone(), start, None);
        let sinks = recorder.sinks();
        assert!(sinks[0].is_none(), "partition 0 already has its hash");
        let sink = sinks[1].as_ref().unwrap();
        let wrong = RangeDigest {
            rows: 2,
            hash: "q".into(),
        };
        let e = sink.range_hashed(0, wrong).unwrap_err();
        assert!(
            e.contains("partition 1 read 2 rows, its saved range has 3"),
            "{e}"
        );
        assert!(!path.exists());
        let digest = RangeDigest {
            rows: 3,
            hash: "b".into(),
        };
        sink.range_hashed(0, digest).unwrap();
        let saved: PartitioningInfo =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(saved, info());
    }
}
