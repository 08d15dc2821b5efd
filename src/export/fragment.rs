//! A staged JSON lines fragment: written once, read back once soon after, then deleted. Its
//! first bytes stay in the page cache while the run's [`SpillCache`] grants them, so that they
//! never reach the disk and read back from memory; past the grant it drops behind.

use std::fs::File;
use std::io::{BufWriter, Seek, Write};
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use dj_plans::drop_behind::{DropBehindReader, DropBehindWriter};
use dj_plans::nodes::{CacheGrant, SpillCache};

/// A fragment being written.
pub(crate) struct Fragment {
    writer: BufWriter<DropBehindWriter>,
    cache: Option<Arc<SpillCache>>,
    kept: u64,
    grant: Option<CacheGrant>,
}

/// A written fragment: its first `kept` bytes are in the page cache under `grant`.
pub(crate) struct Written {
    pub(crate) file: File,
    pub(crate) kept: u64,
    pub(crate) grant: Option<CacheGrant>,
}

impl Written {
    /// A reader from the start, dropping behind past the kept bytes (dropping pages not yet
    /// written back would start their writeback), and the grant, which the caller drops once it
    /// has read them.
    pub(crate) fn read_back(self) -> std::io::Result<(DropBehindReader, Option<CacheGrant>)> {
        let Written {
            mut file,
            kept,
            grant,
        } = self;
        file.rewind()?;
        Ok((DropBehindReader::keeping(file, kept)?, grant))
    }
}

pub(crate) fn cannot_stage(path: &Path) -> String {
    format!("cannot stage {}", path.display())
}

impl Fragment {
    /// Creates (or truncates) `path`, readable for [`Written::read_back`]; without a cache,
    /// every byte drops behind.
    pub(crate) fn create(path: &Path, cache: Option<Arc<SpillCache>>) -> Result<Fragment> {
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .and_then(DropBehindWriter::new)
            .with_context(|| cannot_stage(path))?;
        let mut writer = BufWriter::with_capacity(1 << 20, file);
        writer.get_mut().keep(cache.is_some());
        Ok(Fragment {
            writer,
            cache,
            kept: 0,
            grant: None,
        })
    }

    pub(crate) fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.writer.write_all(bytes)?;
        if let Some(cache) = &self.cache
            && !cache.keep_written(&mut self.writer, &mut self.kept, &mut self.grant)
        {
            self.cache = None;
        }
        Ok(())
    }

    /// Flushes: the file, the bytes kept in the page cache and their grant.
    pub(crate) fn finish(self) -> std::io::Result<Written> {
        let file = (self.writer.into_inner().map_err(|e| e.into_error())?).into_inner();
        Ok(Written {
            file,
            kept: self.kept,
            grant: self.grant,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    /// A fragment keeps its first bytes while the cache grants them and stops at the first
    /// write it cannot grant; what it wrote reads back whole either way, and the cache gets
    /// its bytes back when the grant is dropped.
    #[test]
    fn fragments_keep_what_the_cache_grants() {
        let dir = tempfile::tempdir().unwrap();
        let line = "x".repeat(999) + "\n";
        for (limit, want_kept) in [(10_000, 5_000), (2_500, 2_000), (0, 0)] {
            let cache = SpillCache::new(limit);
            let path = dir.path().join(format!("part-{limit}.jsonl"));
            let mut fragment = Fragment::create(&path, Some(cache.clone())).unwrap();
            for _ in 0..5 {
                fragment.write_all(line.as_bytes()).unwrap();
            }
            let written = fragment.finish().unwrap();
            assert_eq!(written.kept, want_kept, "limit {limit}");
            assert_eq!(std::fs::read_to_string(&path).unwrap(), line.repeat(5));
            let (mut reader, grant) = written.read_back().unwrap();
            let mut back = String::new();
            reader.read_to_string(&mut back).unwrap();
            assert_eq!(back, line.repeat(5));
            let mut other = None;
            assert!(!cache.grant(limit - want_kept as usize + 1, &mut other));
            drop(grant);
            assert!(cache.grant(limit, &mut other), "limit {limit}: given back");
        }
    }
}
