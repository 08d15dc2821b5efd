//! Checksums of the files a job reads back: checkpoints, dedup key files and selector value
//! files. Each is sealed when saved by a sidecar `<name>.blake3` holding its size and BLAKE3
//! digest, made durable before the file is renamed into place, and verified before the file is
//! used; a file that fails is moved aside into `corrupt/`, never deleted.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::atomic::{AtomicFile, write_atomic};
use crate::drop_behind::DropBehindWriter;

/// Suffix of a file's checksum record.
pub const SEAL_SUFFIX: &str = ".blake3";

/// Folder (next to the files) that failed files are moved into.
pub const QUARANTINE_DIR: &str = "corrupt";

/// What was saved of a file: its size and BLAKE3 digest (hex).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Seal {
    pub size: u64,
    pub blake3: String,
}

/// Why a file cannot be trusted.
#[derive(Debug, thiserror::Error)]
pub enum IntegrityError {
    #[error("{}: no checksum record {} (written by an older version, or removed)", path.display(), seal.display())]
    MissingSeal { path: PathBuf, seal: PathBuf },
    #[error("{}: unreadable checksum record {}: {reason}", path.display(), seal.display())]
    BadSeal {
        path: PathBuf,
        seal: PathBuf,
        reason: String,
    },
    #[error("{}: {actual} bytes, but {expected} bytes were saved", path.display())]
    Size {
        path: PathBuf,
        expected: u64,
        actual: u64,
    },
    #[error("{}: BLAKE3 {actual} differs from the saved {expected}", path.display())]
    Digest {
        path: PathBuf,
        expected: String,
        actual: String,
    },
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
}

/// The checksum record of `file`: `<file>.blake3`.
pub fn seal_path(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_os_string();
    name.push(SEAL_SUFFIX);
    PathBuf::from(name)
}

/// A writer that hashes and counts every byte it passes on.
#[derive(Debug)]
pub(crate) struct HashingWriter<W> {
    inner: W,
    hasher: blake3::Hasher,
    len: u64,
}

impl<W> HashingWriter<W> {
    pub fn new(inner: W) -> Self {
        HashingWriter {
            inner,
            hasher: blake3::Hasher::new(),
            len: 0,
        }
    }

    /// The inner writer and the seal of everything written through it.
    pub(crate) fn into_parts(self) -> (W, Seal) {
        let seal = Seal {
            size: self.len,
            blake3: self.hasher.finalize().to_hex().to_string(),
        };
        (self.inner, seal)
    }
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A file being written under a temporary name, hashed as it is written.
pub(crate) struct SealedFile {
    atomic: AtomicFile,
}

impl SealedFile {
    /// Starts writing `dest` (see [`AtomicFile::create`]); write to the returned writer, then
    /// [`SealedFile::commit`] it.
    pub fn create(dest: &Path) -> io::Result<(SealedFile, HashingWriter<DropBehindWriter>)> {
        let (atomic, file) = AtomicFile::create(dest)?;
        Ok((
            SealedFile { atomic },
            HashingWriter::new(DropBehindWriter::new(file)?),
        ))
    }

    /// Makes the seal durable, then the file (fsynced, renamed into place): a file in place
    /// always has a durable seal (a crash in between leaves at worst a seal without its file, or
    /// a new seal over an old file, which then fails verification and is not used).
    pub fn commit(self, writer: HashingWriter<DropBehindWriter>) -> io::Result<Seal> {
        let (file, seal) = writer.into_parts();
        let file = file.into_inner();
        let record = serde_json::to_vec(&seal).map_err(io::Error::other)?;
        write_atomic(&seal_path(self.atomic.dest()), &record)?;
        self.atomic.commit(file)?;
        Ok(seal)
    }
}

/// The recorded seal of `file`, if it has a readable one.
pub fn read_seal(file: &Path) -> Option<Seal> {
    serde_json::from_slice(&std::fs::read(seal_path(file)).ok()?).ok()
}

/// Writes `bytes` to `dest` atomically, with its seal.
#[cfg(test)]
pub(crate) fn write_sealed(dest: &Path, bytes: &[u8]) -> io::Result<Seal> {
    let (sealed, mut w) = SealedFile::create(dest)?;
    w.write_all(bytes)?;
    sealed.commit(w)
}

/// Reads `path`'s seal and checks the file's size and digest against it.
pub fn verify(path: &Path) -> Result<Seal, IntegrityError> {
    let seal_file = seal_path(path);
    let io_err = |source| IntegrityError::Io {
        path: path.to_path_buf(),
        source,
    };
    let record = match std::fs::read(&seal_file) {
        Ok(r) => r,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(IntegrityError::MissingSeal {
                path: path.to_path_buf(),
                seal: seal_file,
            });
        }
        Err(e) => return Err(io_err(e)),
    };
    let seal: Seal = serde_json::from_slice(&record).map_err(|e| IntegrityError::BadSeal {
        path: path.to_path_buf(),
        seal: seal_file.clone(),
        reason: e.to_string(),
    })?;
    let mut file = File::open(path).map_err(io_err)?;
    let actual = file.metadata().map_err(io_err)?.len();
    if actual != seal.size {
        return Err(IntegrityError::Size {
            path: path.to_path_buf(),
            expected: seal.size,
            actual,
        });
    }
    let digest = blake3::Hasher::new()
        .update_reader(&mut file)
        .map_err(io_err)?
        .finalize()
        .to_hex()
        .to_string();
    if digest != seal.blake3 {
        return Err(IntegrityError::Digest {
            path: path.to_path_buf(),
            expected: seal.blake3,
            actual: digest,
        });
    }
    Ok(seal)
}

/// Moves `path` and its seal (if any) into the `corrupt/` folder beside them, under a name not
/// yet taken there; returns the file's new path.
pub fn quarantine(path: &Path) -> io::Result<PathBuf> {
    let dir = path
        .parent()
        .ok_or_else(|| io::Error::other("no parent directory"))?
        .join(QUARANTINE_DIR);
    std::fs::create_dir_all(&dir)?;
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::other("no file name"))?
        .to_string_lossy()
        .into_owned();
    let mut dest = dir.join(&name);
    let mut n = 1;
    while dest.exists() || seal_path(&dest).exists() {
        dest = dir.join(format!("{name}.{n}"));
        n += 1;
    }
    let seal = seal_path(path);
    if seal.exists() {
        std::fs::rename(&seal, seal_path(&dest))?;
    }
    if path.exists() {
        std::fs::rename(path, &dest)?;
    }
    File::open(&dir)?.sync_all()?;
    if let Some(parent) = path.parent() {
        File::open(parent)?.sync_all()?;
    }
    Ok(dest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_file_verifies_and_any_change_is_caught() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("checkpoint_op_0001_partition_0000.parquet");
        let seal = write_sealed(&path, b"Improved the document").unwrap();
        assert_eq!(seal.size, 21);
        assert_eq!(
            seal.blake3,
            blake3::hash(b"Improved the document").to_hex().to_string()
        );
        assert_eq!(verify(&path).unwrap(), seal);

        std::fs::write(&path, b"Improved thE document").unwrap();
        assert!(matches!(verify(&path), Err(IntegrityError::Digest { .. })));
        std::fs::write(&path, b"Improved the docu").unwrap();
        let e = verify(&path).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("{}: 17 bytes, but 21 bytes were saved", path.display())
        );
        std::fs::write(seal_path(&path), b"{").unwrap();
        assert!(matches!(verify(&path), Err(IntegrityError::BadSeal { .. })));
        std::fs::remove_file(seal_path(&path)).unwrap();
        assert!(matches!(
            verify(&path),
            Err(IntegrityError::MissingSeal { .. })
        ));
    }

    #[test]
    fn quarantine_moves_aside_and_never_overwrites() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dedup_keys_op_0002_partition_0001.bin");
        for round in 0..2 {
            write_sealed(&path, format!("keys {round}").as_bytes()).unwrap();
            let moved = quarantine(&path).unwrap();
            assert!(!path.exists() && !seal_path(&path).exists());
            assert_eq!(
                std::fs::read_to_string(&moved).unwrap(),
                format!("keys {round}")
            );
            assert!(seal_path(&moved).exists());
        }
        let kept: Vec<_> = std::fs::read_dir(dir.path().join(QUARANTINE_DIR))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(kept.len(), 4, "{kept:?}");
    }

    #[test]
    fn nothing_is_in_place_until_committed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.arrow");
        let (sealed, mut w) = SealedFile::create(&path).unwrap();
        w.write_all(b"half").unwrap();
        drop((sealed, w));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
