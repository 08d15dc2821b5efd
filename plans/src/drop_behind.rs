//! Streaming file I/O that does not fill the page cache. Exports, staged fragments, spills and
//! checkpoints are written once and read at most once, so caching their pages only costs fresh
//! memory: a [`DropBehindWriter`] starts writeback of what it wrote and, a window later, waits for
//! it and drops those pages; a [`DropBehindReader`] drops what it has read. The freed pages are
//! the next ones written, so a long write cycles through a few windows of warm pages instead of
//! touching new memory for every byte: on a VM whose host backs guest memory lazily, writing
//! 1.5 GB took 3.7 s of CPU through the page cache and 0.5 s with dropping behind.
//!
//! Only hints (`sync_file_range`, `posix_fadvise`; Linux): their errors are ignored, durability
//! still comes from the caller's fsync, and on other systems these are plain files.

use std::fs::File;
use std::io::{self, Read, Seek, Write};

/// Bytes written (or read) between two drops.
const WINDOW: u64 = 4 << 20;

/// A file written sequentially from its current position, dropping behind.
#[derive(Debug)]
pub struct DropBehindWriter {
    file: File,
    /// Offset of the next byte written.
    pos: u64,
    /// Writeback was started for everything before this offset.
    started: u64,
    /// Pages before this offset were dropped.
    dropped: u64,
    /// While set, what is written stays in the page cache (see [`DropBehindWriter::keep`]).
    keeping: bool,
}

impl DropBehindWriter {
    /// Writes `file` from its current position on.
    pub fn new(mut file: File) -> io::Result<DropBehindWriter> {
        let pos = file.stream_position()?;
        Ok(DropBehindWriter {
            file,
            pos,
            started: pos,
            dropped: pos,
            keeping: false,
        })
    }

    /// Whether what is written from now on stays in the page cache, neither written back early
    /// nor dropped: for a temporary file read back soon and deleted, whose pages then never
    /// reach the disk. Once turned off, dropping behind resumes from the current offset (each
    /// write while keeping moves it there); the pages kept before it stay.
    pub fn keep(&mut self, keeping: bool) {
        self.keeping = keeping;
    }

    /// The offset of the next byte written.
    pub fn position(&self) -> u64 {
        self.pos
    }

    pub fn into_inner(self) -> File {
        self.file
    }

    /// Appends the rest of `src` (another file, read from its current position) without copying
    /// it through user space (`copy_file_range`), dropping behind on both files, except for the
    /// pages of `src` before offset `src_kept`: those of a temporary file kept in the page cache
    /// (see [`DropBehindWriter::keep`]), which dropping would write back.
    pub fn append_file(&mut self, src: &mut File, src_kept: u64) -> io::Result<u64> {
        let mut src_pos = src.stream_position()?;
        let src_start = src_pos;
        loop {
            // std copies File to File with copy_file_range.
            let n = io::copy(&mut Read::by_ref(src).take(WINDOW), &mut self.file)?;
            if n == 0 {
                return Ok(src_pos - src_start);
            }
            src_pos += n;
            self.pos += n;
            let read_from = (src_pos - n).max(src_kept);
            if src_pos > read_from {
                drop_pages(src, read_from, src_pos - read_from);
            }
            self.behind();
        }
    }

    /// Starts writeback of what was written since the last call; waits for the writeback
    /// started a window before and drops those pages.
    fn behind(&mut self) {
        if self.keeping {
            self.started = self.pos;
            self.dropped = self.pos;
            return;
        }
        if self.pos - self.started < WINDOW {
            return;
        }
        start_writeback(&self.file, self.started, self.pos - self.started);
        let end = self.started.saturating_sub(WINDOW);
        self.started = self.pos;
        if end > self.dropped {
            wait_writeback(&self.file, self.dropped, end - self.dropped);
            drop_pages(&self.file, self.dropped, end - self.dropped);
            self.dropped = end;
        }
    }
}

impl Write for DropBehindWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.pos += n as u64;
        self.behind();
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// A file read sequentially from its current position, dropping what was read.
#[derive(Debug)]
pub struct DropBehindReader {
    file: File,
    pos: u64,
    dropped: u64,
}

impl DropBehindReader {
    pub fn new(file: File) -> io::Result<DropBehindReader> {
        DropBehindReader::keeping(file, 0)
    }

    /// Reads `file`, leaving the pages before offset `kept` in the page cache: dropping pages
    /// not yet written back would start their writeback, which a temporary file deleted after
    /// reading never needs.
    pub fn keeping(mut file: File, kept: u64) -> io::Result<DropBehindReader> {
        let pos = file.stream_position()?;
        Ok(DropBehindReader {
            file,
            pos,
            dropped: pos.max(kept),
        })
    }
}

impl Read for DropBehindReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read(buf)?;
        self.pos += n as u64;
        if self.pos >= self.dropped + WINDOW {
            drop_pages(&self.file, self.dropped, self.pos - self.dropped);
            self.dropped = self.pos;
        }
        Ok(n)
    }
}

#[cfg(target_os = "linux")]
mod sys {
    use std::fs::File;
    use std::os::fd::AsRawFd;

    fn range(offset: u64, len: u64) -> (libc::off64_t, libc::off64_t) {
        (offset as libc::off64_t, len as libc::off64_t)
    }

    pub(super) fn start_writeback(file: &File, offset: u64, len: u64) {
        let (offset, len) = range(offset, len);
        // SAFETY: a valid descriptor; the call only schedules I/O.
        unsafe {
            libc::sync_file_range(file.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE)
        };
    }

    pub(super) fn wait_writeback(file: &File, offset: u64, len: u64) {
        let (offset, len) = range(offset, len);
        // SAFETY: a valid descriptor; the call only waits for I/O.
        unsafe {
            libc::sync_file_range(
                file.as_raw_fd(),
                offset,
                len,
                libc::SYNC_FILE_RANGE_WAIT_BEFORE
                    | libc::SYNC_FILE_RANGE_WRITE
                    | libc::SYNC_FILE_RANGE_WAIT_AFTER,
            )
        };
    }

    pub(super) fn drop_pages(file: &File, offset: u64, len: u64) {
        let (offset, len) = range(offset, len);
        // SAFETY: a valid descriptor; advice never changes the file's contents.
        unsafe { libc::posix_fadvise(file.as_raw_fd(), offset, len, libc::POSIX_FADV_DONTNEED) };
    }
}

#[cfg(not(target_os = "linux"))]
mod sys {
    pub(super) fn start_writeback(_: &std::fs::File, _: u64, _: u64) {}
    pub(super) fn wait_writeback(_: &std::fs::File, _: u64, _: u64) {}
    pub(super) fn drop_pages(_: &std::fs::File, _: u64, _: u64) {}
}

use sys::{drop_pages, start_writeback, wait_writeback};

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(len: usize, seed: u8) -> Vec<u8> {
        (0..len)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
            .collect()
    }

    /// Writes over many windows, appends and reads back exactly what was written.
    #[test]
    fn round_trip_over_windows() {
        let dir = tempfile::tempdir().unwrap();
        let a = bytes(3 * WINDOW as usize + 12_345, 1);
        let b = bytes(WINDOW as usize + 77, 2);
        let path = dir.path().join("a");
        let mut w = DropBehindWriter::new(File::create(&path).unwrap()).unwrap();
        for chunk in a.chunks(1_000_003) {
            w.write_all(chunk).unwrap();
        }
        let src_path = dir.path().join("b");
        std::fs::write(&src_path, &b).unwrap();
        let mut src = File::open(&src_path).unwrap();
        src.seek(io::SeekFrom::Start(7)).unwrap();
        assert_eq!(w.append_file(&mut src, 0).unwrap(), b.len() as u64 - 7);
        w.write_all(b"tail").unwrap();
        w.into_inner().sync_all().unwrap();

        let mut want = a.clone();
        want.extend_from_slice(&b[7..]);
        want.extend_from_slice(b"tail");
        let mut got = Vec::new();
        DropBehindReader::new(File::open(&path).unwrap())
            .unwrap()
            .read_to_end(&mut got)
            .unwrap();
        assert!(
            got == want,
            "{} bytes read, {} written",
            got.len(),
            want.len()
        );
    }

    /// A writer over a file already written continues at its position.
    #[test]
    fn continues_at_the_position() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a");
        std::fs::write(&path, b"head,").unwrap();
        let mut f = File::options().write(true).open(&path).unwrap();
        f.seek(io::SeekFrom::End(0)).unwrap();
        let mut w = DropBehindWriter::new(f).unwrap();
        w.write_all(b"body").unwrap();
        drop(w.into_inner());
        assert_eq!(std::fs::read(&path).unwrap(), b"head,body");
    }
}
