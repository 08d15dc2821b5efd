//! One partition's dedup keys, gathered as its rows stream past the dedup: in memory while they
//! fit the partition's fair share of the memory budget, then as `(key, row)` pairs on disk
//! ([`KeyFile`]), so that a partition of millions of rows (the default executor cuts the input
//! into `np` of them) holds no more than its share. In a job directory the keys are persisted as
//! they come, sealed when the partition ends, for a resume.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use datafusion::arrow::array::RecordBatch;
use datafusion::common::Result;
use datafusion::execution::memory_pool::MemoryReservation;
use dj_udfs::DedupKind;

use super::dedup::{keys_of, saving_error};
use super::external::MemoryBudget;
use super::keys::Keys;
use super::sorted_keys::{KeyFile, KeyFileWriter};
use crate::drop_behind::DropBehindWriter;
use crate::seal::{HashingWriter, SealedFile};

/// A partition's keys once its rows have all passed: held in memory, or on disk past the budget.
pub struct GatheredKeys(pub(crate) Gathered);

pub(crate) enum Gathered {
    Memory(Keys),
    Disk(KeyFile),
}

impl GatheredKeys {
    pub fn rows(&self) -> usize {
        match &self.0 {
            Gathered::Memory(keys) => keys.rows(),
            Gathered::Disk(file) => file.rows(),
        }
    }
}

impl From<Keys> for GatheredKeys {
    fn from(keys: Keys) -> Self {
        GatheredKeys(Gathered::Memory(keys))
    }
}

/// Gathers one partition's keys, batch by batch (see the module docs).
pub struct KeyGatherer {
    kind: DedupKind,
    hash_index: usize,
    /// Every row's keys while in memory; on disk, only the last batch's (already written).
    keys: Keys,
    disk: Option<KeyFileWriter>,
    /// What `keys` takes of the budget (none without a budget, or for SimHash, which decides in
    /// memory only).
    reservation: Option<MemoryReservation>,
    persist: Option<Persisted>,
}

/// The key file of a job directory, written as the keys come.
struct Persisted {
    path: PathBuf,
    sealed: SealedFile,
    out: BufWriter<HashingWriter<DropBehindWriter>>,
}

impl KeyGatherer {
    /// A gatherer of `kind` keys from column `hash_index`, within `budget` (as consumer `name`),
    /// persisting them to `persist`.
    pub(crate) fn new(
        kind: DedupKind,
        hash_index: usize,
        budget: Option<&MemoryBudget>,
        name: String,
        persist: Option<PathBuf>,
    ) -> Result<KeyGatherer> {
        let bounded = !matches!(kind, DedupKind::SimHash { .. });
        let persist = persist
            .map(|path| {
                let (sealed, file) =
                    SealedFile::create(&path).map_err(|e| saving_error(&path, e))?;
                Ok::<_, datafusion::error::DataFusionError>(Persisted {
                    path,
                    sealed,
                    out: BufWriter::new(file),
                })
            })
            .transpose()?;
        Ok(KeyGatherer {
            kind,
            hash_index,
            keys: Keys::new(),
            disk: None,
            reservation: budget.filter(|_| bounded).map(|b| b.reservation(name)),
            persist,
        })
    }

    /// Adds the keys of `batch`'s rows. Returns the keys held now and where this batch's rows
    /// begin among them.
    pub fn push(&mut self, batch: &RecordBatch) -> Result<(&Keys, usize)> {
        if self.disk.is_some() {
            self.keys.clear();
        }
        let first = self.keys.rows();
        keys_of(self.kind, batch, self.hash_index, &mut self.keys)?;
        if let Some(p) = &mut self.persist {
            write_rows(&mut p.out, &self.keys, first).map_err(|e| saving_error(&p.path, e))?;
        }
        match (&mut self.disk, &mut self.reservation) {
            (Some(disk), _) => disk.append(&self.keys)?,
            (None, Some(reservation))
                if reservation.try_resize(self.keys.heap_bytes()).is_err() =>
            {
                let mut disk = KeyFileWriter::default();
                disk.append(&self.keys)?;
                reservation.free();
                self.disk = Some(disk);
            }
            _ => {}
        }
        Ok((&self.keys, first))
    }

    /// The rows gathered so far.
    pub fn rows(&self) -> usize {
        match &self.disk {
            Some(disk) => disk.rows(),
            None => self.keys.rows(),
        }
    }

    /// The partition's keys, its key file (if persisted) sealed in place.
    pub fn finish(self) -> Result<GatheredKeys> {
        if let Some(p) = self.persist {
            let out = p
                .out
                .into_inner()
                .map_err(|e| saving_error(&p.path, e.into_error()))?;
            p.sealed.commit(out).map_err(|e| saving_error(&p.path, e))?;
        }
        Ok(GatheredKeys(match self.disk {
            Some(disk) => Gathered::Disk(disk.finish()?),
            None => Gathered::Memory(self.keys),
        }))
    }
}

/// The key file format: per row a little-endian u32 key count, then its 16-byte keys; here the
/// rows of `keys` from `first` on.
pub(crate) fn write_rows(out: &mut impl Write, keys: &Keys, first: usize) -> std::io::Result<()> {
    for i in first..keys.rows() {
        let row = keys.row(i);
        out.write_all(&(row.len() as u32).to_le_bytes())?;
        for k in row {
            out.write_all(&k.to_le_bytes())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::array::StringArray;
    use datafusion::arrow::datatypes::{DataType, Field, Schema};

    use super::*;
    use crate::nodes::dedup::{decide_in_memory, read_keys};
    use crate::nodes::sorted_keys::decide_sorted;

    /// Three batches of hashes with repeats and nulls.
    fn batches() -> Vec<RecordBatch> {
        let schema = Arc::new(Schema::new(vec![Field::new("h", DataType::Utf8, true)]));
        (0..3)
            .map(|b| {
                let hashes: StringArray = (0..500)
                    .map(|i| ((b * 500 + i) % 13 != 0).then(|| format!("k{}", (b * 500 + i) % 97)))
                    .collect();
                RecordBatch::try_new(schema.clone(), vec![Arc::new(hashes)]).unwrap()
            })
            .collect()
    }

    /// Over its share of the budget a partition's keys go to disk as they come, and decide as
    /// the keys held in memory do; the persisted key file holds every row either way.
    #[test]
    fn keys_past_the_budget_go_to_disk_and_decide_the_same() {
        let dir = tempfile::tempdir().unwrap();
        for kind in [DedupKind::Exact, DedupKind::MinHashBands] {
            let mut all = Keys::new();
            for batch in batches() {
                keys_of(kind, &batch, 0, &mut all).unwrap();
            }
            let want = decide_in_memory(kind, std::slice::from_ref(&all)).unwrap();
            for (budget, on_disk) in [(None, false), (Some(1024), true)] {
                let budget = budget.map(|b| MemoryBudget::new(b).unwrap());
                let path = dir.path().join(format!("{kind:?}-{on_disk}.bin"));
                let mut gatherer = KeyGatherer::new(
                    kind,
                    0,
                    budget.as_deref(),
                    "test".into(),
                    Some(path.clone()),
                )
                .unwrap();
                for batch in batches() {
                    let (held, first) = gatherer.push(&batch).unwrap();
                    assert_eq!(held.rows() - first, batch.num_rows());
                }
                assert_eq!(gatherer.rows(), 1500);
                let gathered = gatherer.finish().unwrap();
                assert_eq!(gathered.rows(), 1500);
                assert_eq!(read_keys(&path).unwrap(), all, "{kind:?}");
                crate::seal::verify(&path).unwrap();
                match gathered.0 {
                    Gathered::Memory(keys) => {
                        assert!(!on_disk);
                        assert_eq!(keys, all);
                    }
                    Gathered::Disk(file) => {
                        assert!(on_disk);
                        let sort_budget = MemoryBudget::new(1 << 20).unwrap();
                        let got = decide_sorted(kind, &sort_budget, None, vec![file]).unwrap();
                        assert_eq!(got, want, "{kind:?}");
                    }
                }
            }
        }
    }
}
