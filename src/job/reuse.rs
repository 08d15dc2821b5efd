//! Reuse across jobs: a job whose input and leading ops match an earlier job's in the same
//! `work_dir` starts each partition from that job's newest checkpoint it may use, read in place
//! and never modified. Only what a strict resume would accept is reused: the same partition
//! boundaries and content hashes, the same op chain up to the checkpoint ([`op_chain`]: names,
//! parameters after defaults, model file contents, dj-fusion's op version, text keys and
//! checkpoint format), and every file verified against its seal. A running job is not a source.
//!
//! A filter whose bounds alone changed, and only tightened, need not compute its stat again: the
//! earlier job's checkpoint after it keeps the stat of every row it kept, which is every row the
//! tighter bounds can keep, so the partition starts from it and applies only the new bounds.
//! A filter's bounds are its parameters named `min_*`/`max_*` and the closedness and
//! `reversed_range` flags; every other parameter is part of its stat.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use dj_plans::Recipe;
use dj_plans::seal;
use dj_plans::source::RowRange;
use serde::{Deserialize, Serialize};

use super::checkpoints::{checkpoints_by_partition, global_files};
use super::info::PartitioningInfo;
use super::{JobPaths, lock_info};
use crate::partition::Start;

/// `metadata/op_chain.json`: one fingerprint per op of the job's recipe, each covering every op
/// before it, so two jobs agree on ops `0..=k` exactly when their fingerprints `k` are equal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct OpChain {
    pub(crate) ops: Vec<String>,
    /// For each filter: the fingerprint of its stat (the chain before it, its name, its
    /// parameters but the bounds, its models) and its bounds.
    #[serde(default)]
    pub(crate) stats: Vec<Option<FilterStat>>,
}

/// What a filter's checkpoint keeps: its stat, for the rows within its bounds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct FilterStat {
    pub(crate) fingerprint: String,
    pub(crate) min: Option<f64>,
    pub(crate) max: Option<f64>,
    pub(crate) min_closed: bool,
    pub(crate) max_closed: bool,
    pub(crate) reversed: bool,
}

impl FilterStat {
    /// Whether every value these bounds keep, `wider` keeps too.
    fn within(&self, wider: &FilterStat) -> bool {
        if self.reversed || wider.reversed {
            return false;
        }
        let lower = match (self.min, wider.min) {
            (_, None) => true,
            (None, Some(_)) => false,
            (Some(a), Some(b)) => a > b || (a == b && (wider.min_closed || !self.min_closed)),
        };
        let upper = match (self.max, wider.max) {
            (_, None) => true,
            (None, Some(_)) => false,
            (Some(a), Some(b)) => a < b || (a == b && (wider.max_closed || !self.max_closed)),
        };
        lower && upper
    }
}

/// Parameters that only bound a filter's stat.
fn is_bound(param: &str) -> bool {
    param.starts_with("min_") || param.starts_with("max_") || param == "reversed_range"
}

impl OpChain {
    pub(crate) fn path(paths: &JobPaths) -> PathBuf {
        paths.op_chain()
    }

    pub(crate) fn load(paths: &JobPaths) -> Option<OpChain> {
        serde_json::from_str(&std::fs::read_to_string(Self::path(paths)).ok()?).ok()
    }

    /// How many leading ops both chains share.
    pub(crate) fn common_prefix(&self, other: &OpChain) -> usize {
        self.ops
            .iter()
            .zip(&other.ops)
            .take_while(|(a, b)| a == b)
            .count()
    }
}

/// The fingerprints of `recipe`'s ops (see [`OpChain`]). The op implementation's version is
/// dj-udfs's crate version: a release that changes an op's results bumps it.
pub(crate) fn op_chain(recipe: &Recipe) -> Result<OpChain> {
    let s = &recipe.intermediate_storage;
    let mut prev = blake3::Hasher::new();
    prev.update(b"dj-fusion op chain 1\0");
    prev.update(dj_udfs::VERSION.as_bytes());
    prev.update(format!("\0{:?}\0{:?}\0", s.format, s.compression).as_bytes());
    prev.update(recipe.text_keys.join("\0").as_bytes());
    let mut model_digests: HashMap<PathBuf, String> = HashMap::new();
    let mut ops = Vec::with_capacity(recipe.process.len());
    let mut stats = Vec::with_capacity(recipe.process.len());
    let mut last = prev.finalize();
    for op in &recipe.process {
        let mut digests = Vec::new();
        for model in &op.models {
            let digest = match model_digests.get(&model.path) {
                Some(d) => d.clone(),
                None => {
                    let mut file = std::fs::File::open(&model.path).with_context(|| {
                        format!("cannot read model file {}", model.path.display())
                    })?;
                    let d = blake3::Hasher::new()
                        .update_reader(&mut file)
                        .with_context(|| {
                            format!("cannot read model file {}", model.path.display())
                        })?
                        .finalize()
                        .to_hex()
                        .to_string();
                    model_digests.insert(model.path.clone(), d.clone());
                    d
                }
            };
            digests.push(digest);
        }
        let fingerprint = |params: &serde_json::Value| {
            let mut h = blake3::Hasher::new();
            h.update(last.as_bytes());
            h.update(op.name.as_bytes());
            h.update(b"\0");
            h.update(params.to_string().as_bytes());
            for d in &digests {
                h.update(b"\0model\0");
                h.update(d.as_bytes());
            }
            h.finalize()
        };
        let params = op.params.to_json();
        stats.push(match &op.operator {
            dj_udfs::Operator::Filter(f) => {
                let mut stat_params = params.clone();
                if let Some(m) = stat_params.as_object_mut() {
                    m.retain(|k, _| !is_bound(k));
                }
                Some(FilterStat {
                    fingerprint: fingerprint(&stat_params).to_hex().to_string(),
                    min: f.range.min,
                    max: f.range.max,
                    min_closed: f.range.min_closed,
                    max_closed: f.range.max_closed,
                    reversed: f.range.reversed,
                })
            }
            _ => None,
        });
        last = fingerprint(&params);
        ops.push(last.to_hex().to_string());
    }
    Ok(OpChain { ops, stats })
}

/// A partition's start taken from another job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Reused {
    pub(crate) partition: usize,
    /// The op the checkpoint was written after.
    pub(crate) op: usize,
    pub(crate) op_name: String,
    pub(crate) path: PathBuf,
    pub(crate) source_job: String,
    /// Op `op` runs again on the checkpoint, applying its tighter bounds to the saved stat.
    #[serde(default)]
    pub(crate) refilter: bool,
}

impl Reused {
    /// How far it takes the partition: past op `op`, or into it (refilter) past op `op - 1`.
    fn progress(&self) -> usize {
        2 * self.op + if self.refilter { 1 } else { 2 }
    }
}

/// An earlier job that may lend checkpoints: its directory, saved partitioning and op chain.
struct Source {
    job_id: String,
    paths: JobPaths,
    info: PartitioningInfo,
    chain: OpChain,
    shared_ops: usize,
}

/// The other jobs in `work_dir` (the parent of `paths.root`) that share at least one leading op
/// and the partition layout of `ranges`, and are not running.
fn sources(paths: &JobPaths, chain: &OpChain, ranges: &[RowRange]) -> Vec<Source> {
    let Some(work_dir) = paths.root.parent() else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in std::fs::read_dir(work_dir).into_iter().flatten().flatten() {
        let root = entry.path();
        if root == paths.root || !root.is_dir() {
            continue;
        }
        let other = JobPaths::new(root.clone());
        let Some(other_chain) = OpChain::load(&other) else {
            continue;
        };
        let shared_ops = chain.common_prefix(&other_chain);
        let lock = lock_info(&root);
        if shared_ops == 0 || (lock.present && !lock.stale) {
            continue;
        }
        let Some(info) = std::fs::read_to_string(other.partitioning_info())
            .ok()
            .and_then(|t| serde_json::from_str::<PartitioningInfo>(&t).ok())
        else {
            continue;
        };
        if info.partitions.len() != ranges.len() {
            continue;
        }
        found.push(Source {
            job_id: entry.file_name().to_string_lossy().into_owned(),
            paths: other,
            info,
            chain: other_chain,
            shared_ops,
        });
    }
    found.sort_by(|a, b| a.job_id.cmp(&b.job_id));
    found
}

/// Whether a reuse search is worth hashing the input for: some other job in `work_dir` shares
/// leading ops and the partition layout.
pub(crate) fn has_candidates(
    recipe: &Recipe,
    chain: &OpChain,
    paths: &JobPaths,
    ranges: &[RowRange],
) -> bool {
    recipe.checkpoint.enabled
        && recipe.checkpoint.reuse
        && !sources(paths, chain, ranges).is_empty()
}

/// For each partition, the newest checkpoint another job saved that this job may start from
/// (better than `starts`, its own), with every file it needs verified; nothing is written.
/// `info` holds this job's boundaries and content hashes (a partition without a hash reuses
/// nothing).
pub(crate) fn find(
    recipe: &Recipe,
    chain: &OpChain,
    paths: &JobPaths,
    info: &PartitioningInfo,
    starts: &[Start],
) -> Result<Vec<Option<Reused>>> {
    let ranges = info.saved_ranges(info.total_rows)?;
    let mut reused: Vec<Option<Reused>> = vec![None; ranges.len()];
    if !recipe.checkpoint.enabled || !recipe.checkpoint.reuse {
        return Ok(reused);
    }
    let mut verified: HashMap<PathBuf, bool> = HashMap::new();
    let mut verify = |path: &Path| -> bool {
        *verified
            .entry(path.to_path_buf())
            .or_insert_with(|| path.is_file() && seal::verify(path).is_ok())
    };
    for source in sources(paths, chain, &ranges) {
        let Ok(found) = checkpoints_by_partition(&source.paths, recipe, ranges.len()) else {
            continue;
        };
        for (p, candidates) in found.into_iter().enumerate() {
            let (mine, theirs) = (&info.partitions[p], &source.info.partitions[p]);
            let same_input = !mine.content_hash.is_empty()
                && mine.content_hash == theirs.content_hash
                && mine.row_count == theirs.row_count
                && (mine.start_row, mine.end_row) == (theirs.start_row, theirs.end_row);
            if !same_input {
                continue;
            }
            let to_beat = match (&reused[p], &starts[p]) {
                (Some(r), _) => r.progress(),
                (None, Start::Checkpoint { op, refilter, .. }) => {
                    2 * op + if *refilter { 1 } else { 2 }
                }
                (None, Start::Input) => 0,
            };
            // The first op that differs may be a filter with only tighter bounds.
            let k = source.shared_ops;
            let refilter_at = match (chain.stats.get(k), source.chain.stats.get(k)) {
                (Some(Some(mine)), Some(Some(theirs)))
                    if mine.fingerprint == theirs.fingerprint && mine.within(theirs) =>
                {
                    Some(k)
                }
                _ => None,
            };
            let usable = candidates.into_iter().find_map(|(op, path)| {
                let r = Reused {
                    partition: p,
                    op,
                    op_name: recipe.process.get(op)?.name.clone(),
                    path,
                    source_job: source.job_id.clone(),
                    refilter: Some(op) == refilter_at,
                };
                (r.progress() > to_beat
                    && (op < k || r.refilter)
                    && global_files(&source.paths, recipe, op, p)
                        .iter()
                        .all(|(_, f)| verify(f))
                    && verify(&r.path))
                .then_some(r)
            });
            if let Some(r) = usable {
                reused[p] = Some(r);
            }
        }
    }
    Ok(reused)
}

/// Copies the key and value files of the global ops up to each reused checkpoint into this
/// job's `checkpoints/`, where the deduplicators and selectors look for them (the checkpoints
/// themselves are read where they are).
pub(crate) fn adopt_global_files(
    recipe: &Recipe,
    paths: &JobPaths,
    reused: &[Reused],
) -> Result<()> {
    for r in reused {
        let source = JobPaths::new(
            paths
                .root
                .parent()
                .map_or_else(|| PathBuf::from(&r.source_job), |w| w.join(&r.source_job)),
        );
        // Under the source's own names: a key file saved in memory's format or in stages.
        for (_, from) in global_files(&source, recipe, r.op, r.partition) {
            let name = from.file_name().context("a key or value file has a name")?;
            copy_sealed(&from, &paths.checkpoints.join(name))?;
        }
    }
    Ok(())
}

/// Copies a sealed file and its seal (the seal first, as saves write them), each atomically.
fn copy_sealed(from: &Path, to: &Path) -> Result<()> {
    for (a, b) in [
        (seal::seal_path(from), seal::seal_path(to)),
        (from.to_path_buf(), to.to_path_buf()),
    ] {
        let bytes = std::fs::read(&a).with_context(|| format!("cannot read {}", a.display()))?;
        super::write_atomic(&b, &bytes)?;
    }
    Ok(())
}

/// One line per (source job, op) group: "ops 1-6 reused from job X for 8/8 partitions".
pub(crate) fn summary_lines(recipe: &Recipe, reused: &[Reused], partitions: usize) -> Vec<String> {
    let mut groups: Vec<((String, usize, bool), usize)> = Vec::new();
    for r in reused {
        let key = (r.source_job.clone(), r.op, r.refilter);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => *n += 1,
            None => groups.push((key, 1)),
        }
    }
    groups
        .into_iter()
        .map(|((job, op, refilter), n)| {
            let name = &recipe.process[op].name;
            let before = match op {
                0 => String::new(),
                1 => "op 1 and ".to_string(),
                _ => format!("ops 1-{op} and "),
            };
            let ops = match (op, refilter) {
                (0, false) => format!("op 1 ({name})"),
                (_, false) => format!("ops 1-{} (through {name})", op + 1),
                (_, true) => format!(
                    "{before}op {}'s stat ({name}, only its new bounds applied)",
                    op + 1
                ),
            };
            format!("{ops} reused from job {job} for {n}/{partitions} partitions")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(text: &str) -> OpChain {
        op_chain(&Recipe::from_str("r.yaml", text, &[]).unwrap()).unwrap()
    }

    /// The chain changes from the first op that differs (a parameter, a model file's bytes) and
    /// stays equal before it; the checkpoint format changes all of it.
    #[test]
    fn op_chains_cover_parameters_models_and_format() {
        let models = tempfile::tempdir().unwrap();
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/models");
        for f in ["en.arpa.bin", "en.sp.model"] {
            std::fs::copy(root.join(f), models.path().join(f)).unwrap();
        }
        let recipe = |min_len: u32, format: &str| {
            format!(
                "dataset_path: x.jsonl\nmodel_dir: {}\nreorder_filters: false\nintermediate_storage:\n  format: {format}\nprocess:\n  - whitespace_normalization_mapper:\n  - perplexity_filter:\n      lang: en\n  - text_length_filter:\n      min_len: {min_len}\n",
                models.path().display()
            )
        };
        let base = chain(&recipe(10, "parquet"));
        assert_eq!(base.ops.len(), 3);
        assert_eq!(base, chain(&recipe(10, "parquet")), "deterministic");
        assert_eq!(base.common_prefix(&chain(&recipe(11, "parquet"))), 2);
        assert_eq!(base.common_prefix(&chain(&recipe(10, "jsonl"))), 0);
        let arpa = models.path().join("en.arpa.bin");
        let mut bytes = std::fs::read(&arpa).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&arpa, bytes).unwrap();
        assert_eq!(base.common_prefix(&chain(&recipe(10, "parquet"))), 1);
    }

    /// A filter's stat fingerprint ignores its bounds, not its other parameters; tighter bounds
    /// are within looser ones, with closedness and `reversed_range` taken into account.
    #[test]
    fn filter_stats_ignore_bounds_and_nest() {
        let recipe = |params: &str| {
            format!("dataset_path: x.jsonl\nprocess:\n  - character_repetition_filter:\n{params}")
        };
        let stat = |params: &str| chain(&recipe(params)).stats[0].clone().unwrap();
        let loose = stat("      rep_len: 10\n      max_ratio: 0.5\n");
        let tight = stat("      rep_len: 10\n      max_ratio: 0.4\n      min_ratio: 0.1\n");
        assert_eq!(loose.fingerprint, tight.fingerprint);
        assert!(tight.within(&loose) && !loose.within(&tight) && loose.within(&loose));
        let other = stat("      rep_len: 5\n      max_ratio: 0.4\n");
        assert_ne!(other.fingerprint, loose.fingerprint);
        let open =
            stat("      rep_len: 10\n      max_ratio: 0.5\n      max_closed_interval: false\n");
        assert!(open.within(&loose) && !loose.within(&open));
        let reversed =
            stat("      rep_len: 10\n      max_ratio: 0.4\n      reversed_range: true\n");
        assert!(!reversed.within(&loose));
    }
}
