//! The JSON lines export of a recipe whose last op is an exact deduplicator. Each partition
//! encodes its rows' export and stats lines before the dedup barrier, into a staged fragment,
//! noting each line's size; after the barrier every partition knows where its kept lines go in the
//! one shared export file and copies them there, all partitions at once. A partition whose
//! predecessors are decided when it starts (the first, always) knows its place and its keep rule
//! from the start: it writes its kept lines there directly. This spares the spill of Arrow rows,
//! their read-back and encoding after the barrier, and the final concatenation of fragments.

use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use datafusion::execution::TaskContext;
use datafusion::physical_plan::ExecutionPlan;
use dj_plans::drop_behind::DropBehindWriter;
use dj_plans::nodes::{Boundary, DedupExec, KeySet, Keys, OpBoundaryExec, OpCounters, SpillCache};
use dj_udfs::DedupKind;
use futures::StreamExt;

use super::fragment::{Fragment, Written, cannot_stage};
use super::{JsonFragmentEncoder, Staged};

/// The sizes of one row's export line and stats line (0 when there is no stats file).
type LineSizes = [u32; 2];

/// The shared export files of a run and what the partitions tell each other to place their lines.
pub(crate) struct PlacedExport {
    /// The export lines and the stats lines, in the staging directory: the export files to be.
    pub text: PathBuf,
    pub stats: Option<PathBuf>,
    /// Per partition, its rows' line sizes, set before it arrives at the barrier, so that once
    /// the barrier has decided, every partition finds all of them.
    sizes: Vec<OnceLock<Vec<LineSizes>>>,
    /// What the held fragments keep in the page cache: they are read back right after the
    /// barrier, and from the disk that copy took most of its time.
    cache: Arc<SpillCache>,
}

/// The exact deduplicator a partition's plan ends in, under the boundary of its op, when its
/// barrier has not decided yet. Not the near-duplicate ones: they often drop most rows (MinHash
/// kept 27% of a million package descriptions), and encoding every row before the barrier then
/// costs more than the spill it replaces (21.9 s against 18.7 s there).
fn final_dedup(plan: &Arc<dyn ExecutionPlan>) -> Option<&DedupExec> {
    let boundary = plan.downcast_ref::<OpBoundaryExec>()?;
    let dedup = boundary.children().first()?.downcast_ref::<DedupExec>()?;
    let undecided = matches!(dedup.barrier().mask(dedup.partition()), Ok(None));
    let exact = dedup.barrier().kind() == DedupKind::Exact;
    (boundary.boundary == Boundary::Op(dedup.index()) && undecided && exact).then_some(dedup)
}

impl PlacedExport {
    /// The placed export for `plans` (partition `p`'s plan at `p`, all run here), when every one
    /// ends in the same undecided deduplicator; `None` otherwise. Creates the shared files in
    /// `staging`; held fragments stay in the page cache as far as `cache` grants.
    pub(crate) fn new(
        plans: &[&Arc<dyn ExecutionPlan>],
        staging: &Path,
        with_stats: bool,
        cache: &Arc<SpillCache>,
    ) -> Result<Option<Arc<PlacedExport>>> {
        let dedups: Option<Vec<&DedupExec>> = plans.iter().map(|p| final_dedup(p)).collect();
        let Some(dedups) = dedups.filter(|d| !d.is_empty()) else {
            return Ok(None);
        };
        let barrier = dedups[0].barrier();
        let one_barrier = dedups
            .iter()
            .enumerate()
            .all(|(p, d)| Arc::ptr_eq(d.barrier(), barrier) && d.partition() == p)
            && barrier.partitions() == plans.len();
        if !one_barrier {
            return Ok(None);
        }
        let create = |name: &str| -> Result<PathBuf> {
            let path = staging.join(name);
            File::create(&path).with_context(|| format!("cannot stage {}", path.display()))?;
            Ok(path)
        };
        Ok(Some(Arc::new(PlacedExport {
            text: create("export.jsonl")?,
            stats: with_stats
                .then(|| create("export.stats.jsonl"))
                .transpose()?,
            sizes: plans.iter().map(|_| OnceLock::new()).collect(),
            cache: cache.clone(),
        })))
    }

    /// Runs partition `p`'s plan up to its deduplicator, encodes the rows and gives their keys to
    /// the barrier. Exact dedup whose partitions before this one are decided places the kept
    /// lines as they come; otherwise they are held in `fragment` (and its stats twin) until the
    /// barrier decides, then copied to their place. Books the op's rows and compute time in
    /// `counters`.
    pub(crate) async fn stage(
        &self,
        plan: &Arc<dyn ExecutionPlan>,
        ctx: Arc<TaskContext>,
        fragment: &Path,
        encoder: &JsonFragmentEncoder,
        counters: &OpCounters,
    ) -> Result<Staged> {
        let dedup = final_dedup(plan).context("the plan no longer ends in its deduplicator")?;
        let p = dedup.partition();
        let stats_fragment = self
            .stats
            .as_ref()
            .map(|_| fragment.with_extension("stats.jsonl"));
        let mut out = self.start(dedup, fragment, stats_fragment.as_deref())?;
        tracing::debug!(
            partition = p,
            placed = matches!(out, Lines::Placed { .. }),
            "export lines placed as they come, or held until the dedup decides"
        );
        let mut input = dedup.input().execute(0, ctx)?;
        let (mut keys, mut sizes) = (dedup.gatherer()?, Vec::<LineSizes>::new());
        let (mut text, mut stats) = (String::new(), String::new());
        // The op's work: the upstream chain it polls and the keys; not the export's encoding.
        let mut compute = Duration::ZERO;
        let mut copying = None;
        loop {
            let t = Instant::now();
            let Some(batch) = input.next().await else {
                break;
            };
            let batch = batch?;
            let (batch_keys, first_key) = keys.push(&batch)?;
            compute += t.elapsed();
            let first = sizes.len();
            text.clear();
            stats.clear();
            encoder.encode(&batch, &mut text, &mut stats)?;
            sizes.extend(line_sizes(&text).map(|n| [n, 0]));
            for (row, n) in sizes[first..].iter_mut().zip(line_sizes(&stats)) {
                row[1] = n;
            }
            if sizes.len() - first != batch.num_rows() {
                bail!(
                    "partition {p}: {} rows were encoded as {} export lines",
                    batch.num_rows(),
                    sizes.len() - first
                );
            }
            // The partitions before this one are decided: it learns its place now, and the
            // lines held so far go there on another thread while it goes on.
            if matches!(out, Lines::Held { .. })
                && first_key == first
                && let Some(before) = dedup.barrier().keys_before(p)
            {
                tracing::debug!(partition = p, rows = first, "held export lines placed");
                let (placed, copy) =
                    self.place_held(out, dedup, before, batch_keys, &sizes[..first])?;
                (out, copying) = (placed, Some(copy));
            }
            out.write(&text, &stats, &sizes[first..], batch_keys, first_key)
                .with_context(|| format!("cannot write {}", self.text.display()))?;
        }
        if let Some(copy) = copying {
            copy.await??;
            remove_fragments(fragment, stats_fragment.as_deref());
        }
        let rows_in = sizes.len();
        self.sizes[p]
            .set(sizes)
            .map_err(|_| anyhow::anyhow!("partition {p} staged twice"))?;
        // A partition waiting at the barrier holds no write buffers (with 160 partitions of
        // 100K rows they took 5 MB each): the last batch's lines go, held fragments are flushed.
        drop((text, stats));
        let out = out.park().with_context(|| cannot_stage(fragment))?;
        let keep = dedup.barrier().arrive(p, keys.finish()?).await?;
        let sizes = self.sizes[p].get().expect("set above");
        if keep.len() != rows_in {
            bail!(
                "partition {p}: the dedup decision covers {} rows, not {rows_in}",
                keep.len()
            );
        }
        let kept = kept_bytes(sizes, &keep);
        let kept_rows = keep.iter().filter(|k| **k).count() as u64;
        match out {
            Parked::Placed {
                text,
                stats,
                keep: placed,
            } => {
                if placed != keep {
                    bail!("partition {p}: the lines placed differ from the dedup decision");
                }
                for out in std::iter::once(text).chain(stats) {
                    out.into_inner()
                        .map_err(|e| e.into_error())
                        .with_context(|| format!("cannot write {}", self.text.display()))?;
                }
            }
            Parked::Held {
                text: text_file,
                stats: stats_file,
            } => {
                let at = self.offset_of(p, dedup)?;
                self.copy_held(text_file, stats_file, sizes, keep, at)
                    .await??;
                remove_fragments(fragment, stats_fragment.as_deref());
            }
        }
        counters.add_offline(dedup.index(), compute.as_nanos() as u64);
        counters.add_rows_out(dedup.index(), kept_rows);
        Ok(Staged {
            path: self.text.clone(),
            stats_path: self.stats.clone(),
            rows: kept_rows,
            bytes: kept[0],
            kept: [0, 0],
            _cached: Vec::new(),
        })
    }

    /// Partition `dedup.partition()`'s lines: placed from the start when the partitions before
    /// it are decided, else held in `fragment` (and `stats_fragment`).
    fn start(
        &self,
        dedup: &DedupExec,
        fragment: &Path,
        stats_fragment: Option<&Path>,
    ) -> Result<Lines> {
        let p = dedup.partition();
        Ok(match dedup.barrier().keys_before(p) {
            Some(before) => {
                let at = self.offset_of(p, dedup)?;
                self.placed(at, before, KeySet::default(), Vec::new())?
            }
            None => Lines::Held {
                text: Fragment::create(fragment, Some(self.cache.clone()))?,
                stats: stats_fragment
                    .map(|f| Fragment::create(f, Some(self.cache.clone())))
                    .transpose()?,
            },
        })
    }

    /// The held lines of `dedup`'s partition placed, once the partitions before it are decided
    /// (their keys `before`): the lines go on placed after the kept ones of `sizes` (the rows
    /// so far, whose keys are the first of `keys`), which are copied to their place on a
    /// blocking thread.
    fn place_held(
        &self,
        held: Lines,
        dedup: &DedupExec,
        before: Arc<KeySet>,
        keys: &Keys,
        sizes: &[LineSizes],
    ) -> Result<(Lines, tokio::task::JoinHandle<Result<()>>)> {
        let Lines::Held { text, stats } = held else {
            bail!("partition {}: its lines are not held", dedup.partition());
        };
        let mut here = KeySet::default();
        let keep: Vec<bool> = (0..sizes.len())
            .map(|i| {
                keys.row(i)
                    .iter()
                    .all(|k| !before.contains(k) && here.insert(*k))
            })
            .collect();
        let at = self.offset_of(dedup.partition(), dedup)?;
        let kept = kept_bytes(sizes, &keep);
        let placed = self.placed(
            [at[0] + kept[0], at[1] + kept[1]],
            before,
            here,
            keep.clone(),
        )?;
        let cannot = || format!("cannot write {}", self.text.display());
        let text = text.finish().with_context(cannot)?;
        let stats = stats
            .map(Fragment::finish)
            .transpose()
            .with_context(cannot)?;
        Ok((placed, self.copy_held(text, stats, sizes, keep, at)))
    }

    /// Lines written to the export and stats files from offsets `at` on, filtered as exact
    /// dedup will decide after the keys `before` and those of the rows so far (`here`, whose
    /// decisions are `keep`).
    fn placed(
        &self,
        [text_at, stats_at]: [u64; 2],
        before: Arc<KeySet>,
        here: KeySet,
        keep: Vec<bool>,
    ) -> Result<Lines> {
        Ok(Lines::Placed {
            text: place(&self.text, text_at)?,
            stats: (self.stats.as_deref())
                .map(|s| place(s, stats_at))
                .transpose()?,
            before,
            here,
            keep,
        })
    }

    /// Copies the kept lines (by `keep`) of held fragments, rows sized `sizes`, to offsets `at`
    /// of the export and stats files, on a blocking thread.
    fn copy_held(
        &self,
        text: Written,
        stats: Option<Written>,
        sizes: &[LineSizes],
        keep: Vec<bool>,
        [text_at, stats_at]: [u64; 2],
    ) -> tokio::task::JoinHandle<Result<()>> {
        let (text_dest, stats_dest) = (self.text.clone(), self.stats.clone());
        let (sizes_text, sizes_stats): (Vec<u32>, Vec<u32>) =
            sizes.iter().map(|s| (s[0], s[1])).unzip();
        tokio::task::spawn_blocking(move || -> Result<()> {
            copy_kept(text, &sizes_text, &keep, &text_dest, text_at)?;
            if let (Some(file), Some(dest)) = (stats, &stats_dest) {
                copy_kept(file, &sizes_stats, &keep, dest, stats_at)?;
            }
            Ok(())
        })
    }

    /// Where partition `p`'s kept lines start in the export and the stats file: after the kept
    /// lines of every partition before it.
    fn offset_of(&self, p: usize, dedup: &DedupExec) -> Result<[u64; 2]> {
        let mut at = [0u64; 2];
        for q in 0..p {
            let keep = dedup
                .barrier()
                .mask(q)?
                .context("the dedup barrier has not decided")?;
            let sizes = self.sizes[q]
                .get()
                .with_context(|| format!("partition {q} gave no line sizes"))?;
            let kept = kept_bytes(sizes, &keep);
            at[0] += kept[0];
            at[1] += kept[1];
        }
        Ok(at)
    }
}

/// The sizes of the newline-terminated lines of `s`.
fn line_sizes(s: &str) -> impl Iterator<Item = u32> + '_ {
    let mut start = 0;
    memchr::memchr_iter(b'\n', s.as_bytes()).map(move |end| {
        let n = (end + 1 - start) as u32;
        start = end + 1;
        n
    })
}

/// The bytes of the kept rows' lines.
fn kept_bytes(sizes: &[LineSizes], keep: &[bool]) -> [u64; 2] {
    sizes
        .iter()
        .zip(keep)
        .filter(|(_, k)| **k)
        .fold([0, 0], |[a, b], (s, _)| [a + s[0] as u64, b + s[1] as u64])
}

/// Deletes a partition's held fragments once they are copied.
fn remove_fragments(text: &Path, stats: Option<&Path>) {
    for path in std::iter::once(text).chain(stats) {
        let _ = std::fs::remove_file(path);
    }
}

/// Where a partition's encoded lines go until the barrier decides.
enum Lines {
    /// Straight to their place, filtered as exact dedup will decide: a row is kept unless its
    /// key is among the keys `before` it or those kept `here`, in order (as [`dj_plans::nodes::keep_first`]).
    Placed {
        text: BufWriter<DropBehindWriter>,
        stats: Option<BufWriter<DropBehindWriter>>,
        before: Arc<KeySet>,
        here: KeySet,
        keep: Vec<bool>,
    },
    /// Held back, all of them.
    Held {
        text: Fragment,
        stats: Option<Fragment>,
    },
}

/// A partition's lines while it waits for the barrier: [`Lines`] without its write buffers.
enum Parked {
    Placed {
        text: BufWriter<DropBehindWriter>,
        stats: Option<BufWriter<DropBehindWriter>>,
        keep: Vec<bool>,
    },
    /// The held fragments, written.
    Held {
        text: Written,
        stats: Option<Written>,
    },
}

impl Lines {
    /// The lines once all are written, ready to wait at the barrier.
    fn park(self) -> Result<Parked> {
        Ok(match self {
            Lines::Placed {
                text, stats, keep, ..
            } => Parked::Placed { text, stats, keep },
            Lines::Held { text, stats } => Parked::Held {
                text: text.finish()?,
                stats: stats.map(Fragment::finish).transpose()?,
            },
        })
    }

    /// Writes the lines of one batch: `text` and `stats` hold one line per row, sized `sizes`;
    /// the rows' keys are `keys` from row `first` on.
    fn write(
        &mut self,
        text: &str,
        stats: &str,
        sizes: &[LineSizes],
        keys: &Keys,
        first: usize,
    ) -> std::io::Result<()> {
        match self {
            Lines::Placed {
                text: text_out,
                stats: stats_out,
                before,
                here,
                keep,
            } => {
                let from = keep.len();
                keep.extend((first..keys.rows()).map(|i| {
                    keys.row(i)
                        .iter()
                        .all(|k| !before.contains(k) && here.insert(*k))
                }));
                let keep = &keep[from..];
                write_kept(text.as_bytes(), sizes.iter().map(|s| s[0]), keep, text_out)?;
                if let Some(out) = stats_out {
                    write_kept(stats.as_bytes(), sizes.iter().map(|s| s[1]), keep, out)?;
                }
                Ok(())
            }
            Lines::Held {
                text: text_out,
                stats: stats_out,
            } => {
                text_out.write_all(text.as_bytes())?;
                if let Some(out) = stats_out {
                    out.write_all(stats.as_bytes())?;
                }
                Ok(())
            }
        }
    }
}

/// A writer into the shared file `dest` from offset `at` on, dropping behind.
fn place(dest: &Path, at: u64) -> Result<BufWriter<DropBehindWriter>> {
    let mut file = File::options()
        .write(true)
        .open(dest)
        .with_context(|| format!("cannot write {}", dest.display()))?;
    file.seek(SeekFrom::Start(at))
        .with_context(|| format!("cannot write {}", dest.display()))?;
    Ok(BufWriter::with_capacity(
        1 << 20,
        DropBehindWriter::new(file)?,
    ))
}

/// Writes the lines of `buf` (sized `sizes`) whose `keep` is set; consecutive kept lines in one
/// write.
fn write_kept(
    buf: &[u8],
    sizes: impl IntoIterator<Item = u32>,
    keep: &[bool],
    out: &mut impl Write,
) -> std::io::Result<()> {
    let (mut run_start, mut pos) = (0usize, 0usize);
    for (size, kept) in sizes.into_iter().zip(keep) {
        if !kept {
            out.write_all(&buf[run_start..pos])?;
            run_start = pos + size as usize;
        }
        pos += size as usize;
    }
    out.write_all(&buf[run_start..pos])
}

/// Bytes read from a fragment at a time (at least one line).
const CHUNK: usize = 4 << 20;

/// Copies the lines of `src` (sized `sizes`) whose `keep` is set to `dest` at offset `at`,
/// dropping the pages of both files behind (but `src`'s kept ones).
fn copy_kept(src: Written, sizes: &[u32], keep: &[bool], dest: &Path, at: u64) -> Result<()> {
    let cannot = || format!("cannot write export lines to {}", dest.display());
    let (mut src, _grant) = src.read_back().with_context(cannot)?;
    let mut out = place(dest, at)?;
    let mut buf = Vec::new();
    let mut row = 0;
    while row < sizes.len() {
        let first = row;
        let mut bytes = 0usize;
        while row < sizes.len() && (row == first || bytes + sizes[row] as usize <= CHUNK) {
            bytes += sizes[row] as usize;
            row += 1;
        }
        if buf.len() < bytes {
            buf.resize(bytes, 0);
        }
        src.read_exact(&mut buf[..bytes]).with_context(cannot)?;
        let (sizes, keep) = (&sizes[first..row], &keep[first..row]);
        write_kept(&buf[..bytes], sizes.iter().copied(), keep, &mut out).with_context(cannot)?;
    }
    out.into_inner()
        .map_err(|e| e.into_error())
        .with_context(cannot)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::{RecordBatch, StringArray};
    use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
    use datafusion::execution::SendableRecordBatchStream;
    use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
    use datafusion::physical_plan::streaming::StreamingTableExec;
    use dj_plans::nodes::DedupBarrier;
    use tokio::sync::{Notify, Semaphore};

    use super::*;

    #[test]
    fn line_sizes_are_the_lines_with_their_newlines() {
        let sizes: Vec<u32> = line_sizes("{\"a\":1}\n\n{\"b\":\"x\\ny\"}\n").collect();
        assert_eq!(sizes, vec![8, 1, 13]);
    }

    /// Kept lines land at their offset, dropped ones nowhere, across chunk boundaries.
    #[test]
    fn kept_lines_are_copied_to_their_place() {
        let dir = tempfile::tempdir().unwrap();
        let lines: Vec<String> = (0..3000)
            .map(|i| format!("{}\n", "x".repeat(i % 7 + (i % 500) * 40)))
            .collect();
        let keep: Vec<bool> = (0..lines.len())
            .map(|i| i % 3 != 1 && i % 11 != 0)
            .collect();
        let src_path = dir.path().join("src");
        std::fs::write(&src_path, lines.concat()).unwrap();
        let dest = dir.path().join("dest");
        std::fs::write(&dest, b"HEAD|").unwrap();
        let sizes: Vec<u32> = lines.iter().map(|l| l.len() as u32).collect();
        assert!(sizes.iter().map(|s| *s as usize).sum::<usize>() > 2 * CHUNK);
        let src = Written {
            file: File::open(&src_path).unwrap(),
            kept: 0,
            grant: None,
        };
        copy_kept(src, &sizes, &keep, &dest, 5).unwrap();
        let want: String = lines
            .iter()
            .zip(&keep)
            .filter(|(_, k)| **k)
            .map(|(l, _)| l.as_str())
            .collect();
        let got = std::fs::read(&dest).unwrap();
        assert_eq!(&got[..5], b"HEAD|");
        assert!(got[5..] == *want.as_bytes(), "kept lines differ");
        let sizes2: Vec<LineSizes> = sizes.iter().map(|s| [*s, 1]).collect();
        let kept = keep.iter().filter(|k| **k).count() as u64;
        assert_eq!(kept_bytes(&sizes2, &keep), [want.len() as u64, kept]);
    }

    /// A partition's batches, each after its gate (if any) opens; `asked` gets a permit whenever
    /// a batch is asked for, i.e. once the consumer is done with the one before.
    #[derive(Debug)]
    struct Gated {
        schema: SchemaRef,
        batches: Vec<(Option<Arc<Notify>>, RecordBatch)>,
        asked: Arc<Semaphore>,
    }

    impl datafusion::physical_plan::streaming::PartitionStream for Gated {
        fn schema(&self) -> &SchemaRef {
            &self.schema
        }
        fn execute(&self, _: Arc<TaskContext>) -> SendableRecordBatchStream {
            let (batches, asked) = (self.batches.clone(), self.asked.clone());
            let stream = futures::stream::iter(batches).then(move |(gate, batch)| {
                let asked = asked.clone();
                async move {
                    asked.add_permits(1);
                    if let Some(gate) = gate {
                        gate.notified().await;
                    }
                    Ok(batch)
                }
            });
            Box::pin(RecordBatchStreamAdapter::new(self.schema.clone(), stream))
        }
    }

    /// Partition 1 holds its first batch's lines while partition 0 runs; once partition 0 is
    /// decided, partition 1's next batch places them (they are in the export before its last
    /// batch comes) and every later line. The export is both partitions' first lines per text.
    #[tokio::test]
    async fn held_lines_go_to_their_place_once_the_partitions_before_are_decided() {
        let dir = tempfile::tempdir().unwrap();
        let schema = Arc::new(Schema::new(vec![Field::new("text", DataType::Utf8, true)]));
        let batch = |texts: &[&str]| {
            let column = Arc::new(StringArray::from(texts.to_vec()));
            RecordBatch::try_new(schema.clone(), vec![column]).unwrap()
        };
        let barrier = DedupBarrier::new(0, DedupKind::Exact, 2, None, None);
        let asked = Arc::new(Semaphore::new(0));
        let gates = [Arc::new(Notify::new()), Arc::new(Notify::new())];
        let plan = |p: usize, batches: Vec<(Option<Arc<Notify>>, RecordBatch)>| {
            let stream = Arc::new(Gated {
                schema: schema.clone(),
                batches,
                // Partition 0's asks are not waited for.
                asked: if p == 1 {
                    asked.clone()
                } else {
                    Arc::new(Semaphore::new(0))
                },
            });
            let source =
                StreamingTableExec::try_new(schema.clone(), vec![stream], None, [], false, None)
                    .unwrap();
            let dedup =
                DedupExec::try_new(Arc::new(source), "text", "dedup".into(), p, barrier.clone())
                    .unwrap();
            let counters = OpCounters::new(1);
            Arc::new(OpBoundaryExec::new(
                Arc::new(dedup),
                Boundary::Op(0),
                "dedup".into(),
                counters,
            )) as Arc<dyn ExecutionPlan>
        };
        let plans = [
            plan(0, vec![(None, batch(&["a", "b", "a", "c"]))]),
            plan(
                1,
                vec![
                    (None, batch(&["b", "d", "d", "e"])),
                    (Some(gates[0].clone()), batch(&["f", "a", "g"])),
                    (Some(gates[1].clone()), batch(&["e", "h"])),
                ],
            ),
        ];
        let spec =
            crate::export::ExportSpec::new(&dir.path().join("out.jsonl"), 0, false, false).unwrap();
        let encoder = Arc::new(JsonFragmentEncoder::new(&spec, &schema).unwrap().unwrap());
        let refs: Vec<&Arc<dyn ExecutionPlan>> = plans.iter().collect();
        let cache = SpillCache::new(1 << 30);
        let placed = PlacedExport::new(&refs, dir.path(), false, &cache)
            .unwrap()
            .unwrap();
        let stage = |p: usize| {
            let (placed, plan, encoder) = (placed.clone(), plans[p].clone(), encoder.clone());
            let fragment = dir.path().join(format!("part-{p}.jsonl"));
            tokio::spawn(async move {
                let ctx = Arc::new(TaskContext::default());
                let counters = OpCounters::new(1);
                placed
                    .stage(&plan, ctx, &fragment, &encoder, &counters)
                    .await
                    .unwrap()
                    .rows
            })
        };
        let line = |t: &str| format!("{{\"text\": \"{t}\"}}\n");
        let lines = |ts: &[&str]| ts.iter().map(|t| line(t)).collect::<String>();
        let export = || std::fs::read_to_string(&placed.text).unwrap();
        // Partition 1 holds its first batch and waits for its second.
        let one = stage(1);
        let next_asked = || async { asked.acquire().await.unwrap().forget() };
        next_asked().await;
        next_asked().await;
        assert!(dir.path().join("part-1.jsonl").exists());
        assert_eq!(stage(0).await.unwrap(), 3);
        assert_eq!(export(), lines(&["a", "b", "c"]));
        gates[0].notify_one();
        next_asked().await;
        // Partition 1 waits for its last batch: its first one's kept lines are in place.
        let want = lines(&["a", "b", "c", "d", "e"]);
        for _ in 0..1000 {
            if export() == want {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(export(), want);
        gates[1].notify_one();
        assert_eq!(one.await.unwrap(), 5);
        assert_eq!(export(), lines(&["a", "b", "c", "d", "e", "f", "g", "h"]));
        assert!(!dir.path().join("part-1.jsonl").exists());
    }
}
