//! Atomic file writes: data goes to a temporary name in the destination's directory, is fsynced,
//! renamed into place and the directory fsynced. Until [`AtomicFile::commit`] the destination is
//! untouched, and an uncommitted temporary file is removed when dropped.

use std::fs::File;
use std::io::{self, Seek, Write};
use std::path::{Path, PathBuf};

/// A file being written under a temporary name next to its destination.
#[derive(Debug)]
pub struct AtomicFile {
    tmp: PathBuf,
    dest: PathBuf,
    committed: bool,
}

impl AtomicFile {
    /// Creates `.<name>.tmp-<pid>` next to `dest`; write to the returned file, then commit.
    pub fn create(dest: &Path) -> io::Result<(AtomicFile, File)> {
        let name = dest
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = dest.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
        let file = File::create(&tmp)?;
        Ok((
            AtomicFile {
                tmp,
                dest: dest.to_path_buf(),
                committed: false,
            },
            file,
        ))
    }

    /// Takes over the already written file `tmp` (on the destination's filesystem) as the
    /// temporary file of `dest`, opened for writing at its end: it is renamed into place on
    /// commit and removed if dropped uncommitted. (Not `O_APPEND`: `copy_file_range`, which
    /// appends other files without copying through user space, refuses such a file.)
    pub fn adopt(tmp: &Path, dest: &Path) -> io::Result<(AtomicFile, File)> {
        let mut file = File::options().write(true).open(tmp)?;
        file.seek(io::SeekFrom::End(0))?;
        Ok((
            AtomicFile {
                tmp: tmp.to_path_buf(),
                dest: dest.to_path_buf(),
                committed: false,
            },
            file,
        ))
    }

    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// Makes `file` (the one [`AtomicFile::create`] returned, fully written) durable under the
    /// destination name.
    pub fn commit(mut self, file: File) -> io::Result<()> {
        file.sync_all()?;
        drop(file);
        std::fs::rename(&self.tmp, &self.dest)?;
        self.committed = true;
        if let Some(dir) = self.dest.parent().filter(|d| !d.as_os_str().is_empty()) {
            File::open(dir)?.sync_all()?;
        }
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Writes `bytes` to `dest` atomically.
pub fn write_atomic(dest: &Path, bytes: &[u8]) -> io::Result<()> {
    let (atomic, mut file) = AtomicFile::create(dest)?;
    file.write_all(bytes)?;
    atomic.commit(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_replaces_and_drop_discards() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out.txt");
        std::fs::write(&dest, "old").unwrap();
        let (a, mut f) = AtomicFile::create(&dest).unwrap();
        f.write_all(b"half").unwrap();
        drop((a, f));
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "old");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "temporary file left behind"
        );
        write_atomic(&dest, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn adopted_file_is_appended_then_renamed() {
        let dir = tempfile::tempdir().unwrap();
        let (dest, part) = (dir.path().join("out.txt"), dir.path().join("part"));
        std::fs::write(&part, "first ").unwrap();
        let (a, mut f) = AtomicFile::adopt(&part, &dest).unwrap();
        f.write_all(b"second").unwrap();
        a.commit(f).unwrap();
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "first second");
        assert!(!part.exists());
        std::fs::write(&part, "x").unwrap();
        drop(AtomicFile::adopt(&part, &dest).unwrap());
        assert!(!part.exists(), "an uncommitted adopted file is removed");
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "first second");
    }
}
