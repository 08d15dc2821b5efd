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

use super::external::MemoryBudget;
use super::keys::{Keys, keys_of};
use super::sorted_keys::{KeyFile, KeyFileWriter};
use super::spill::saving_error;
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
    /// What `keys` takes of the budget (none without a budget).
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
            reservation: budget.map(|b| b.reservation(name)),
            persist,
        })
    }

    /// Adds the keys of `batch`'s rows. Returns the keys held now and where this batch's rows
    /// begin among them.
    pub fn push(&mut self, batch: &RecordBatch) -> Result<(&Keys, usize)> {
        if self.disk.is_some() {
            self.keys.clear();
        }
        let mut first = self.keys.rows();
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
                // Only this batch's keys stay (the caller reads them): the allocation that held
                // the partition's share goes.
                let mut batch_keys = Keys::new();
                for i in first..self.keys.rows() {
                    batch_keys.push_row(self.keys.row(i).iter().copied());
                }
                self.keys = batch_keys;
                first = 0;
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
