//! Media files that rows reference by path: where Data-Juicer's loader finds them (relative paths
//! join the dataset's directory), and the fingerprints a partition's content hash covers, so a
//! strict resume notices a changed file behind an unchanged row.

use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;

use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::record_batch::RecordBatch;
use serde::{Deserialize, Serialize};

/// The directory Data-Juicer's loader joins relative media paths to: the dataset path made
/// absolute (`os.path.abspath`, as its config does) if it is a directory, else its parent; none
/// for a glob or a path that does not exist.
pub fn dataset_dir(dataset_path: &str) -> Option<String> {
    if crate::store::is_remote(dataset_path) {
        return remote_dataset_dir(dataset_path);
    }
    let dataset_path = crate::store::local_path(dataset_path);
    let path = std::path::Path::new(dataset_path);
    if !path.exists() {
        return None;
    }
    let abs = dj_udfs::py::os_path::abspath(dataset_path)?;
    if path.is_dir() {
        return Some(abs);
    }
    Some(match abs.rfind('/') {
        Some(0) | None => "/".to_string(),
        Some(i) => abs[..i].to_string(),
    })
}

/// The object-storage "directory" of a remote dataset: the parent of one object (a last
/// segment with an extension), the prefix itself otherwise; none for a glob, as locally.
fn remote_dataset_dir(url: &str) -> Option<String> {
    if url.contains(['*', '?', '[']) {
        return None;
    }
    let url = url.trim_end_matches('/');
    let (parent, last) = url.rsplit_once('/')?;
    if parent.ends_with(":/") {
        // `s3://bucket`: the bucket is the directory.
        return Some(url.to_string());
    }
    Some(if last.contains('.') { parent } else { url }.to_string())
}

/// A media path as Data-Juicer's loader rewrites it: absolute paths and URLs stay, relative ones
/// join the dataset's directory.
pub fn resolve(dir: &str, path: &str) -> String {
    if path.starts_with('/') || path.contains("://") {
        path.to_string()
    } else {
        dj_udfs::py::os_path::join(dir, path)
    }
}

/// How many bytes of each end of a file its fingerprint reads.
const SAMPLED_BYTES: u64 = 64 * 1024;

/// The media columns whose files an operator of the recipe reads, and the directory relative
/// paths join. Files are fingerprinted by size, modification time and a BLAKE3 of their first
/// and last 64 KiB: reading every byte of a video corpus again on each resume would cost about
/// what decoding it does, while an edit that keeps the size, the mtime and both ends unchanged
/// is all this misses. Objects on `s3://` are covered by their size and ETag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MediaRefs {
    pub columns: Vec<String>,
    pub dir: Option<String>,
}

impl MediaRefs {
    /// Appends a fingerprint of every file the batch's media columns reference, row by row.
    pub(crate) fn fingerprint(&self, batch: &RecordBatch, out: &mut blake3::Hasher) {
        let schema = batch.schema();
        let columns: Vec<&ArrayRef> = self
            .columns
            .iter()
            .filter_map(|c| schema.index_of(c).ok())
            .map(|i| batch.column(i))
            .collect();
        let dir = self.dir.as_deref().unwrap_or("");
        for row in 0..batch.num_rows() {
            for column in &columns {
                for path in paths_at(column, row) {
                    let path = if dir.is_empty() {
                        path
                    } else {
                        resolve(dir, &path)
                    };
                    out.update(file_fingerprint(&path).as_bytes());
                }
            }
        }
    }
}

/// The paths in one row of a media column (a list of strings of any Arrow string type); none
/// for a null row or a column of another type (the operators refuse those themselves).
fn paths_at(column: &ArrayRef, row: usize) -> Vec<String> {
    if column.is_null(row) {
        return Vec::new();
    }
    let items = match column.data_type() {
        DataType::List(_) => column.as_list::<i32>().value(row),
        DataType::LargeList(_) => column.as_list::<i64>().value(row),
        _ => return Vec::new(),
    };
    let strings: Vec<Option<&str>> = match items.data_type() {
        DataType::Utf8 => items.as_string::<i32>().iter().collect(),
        DataType::LargeUtf8 => items.as_string::<i64>().iter().collect(),
        DataType::Utf8View => items.as_string_view().iter().collect(),
        _ => return Vec::new(),
    };
    strings.into_iter().flatten().map(str::to_string).collect()
}

/// `path size mtime_ns blake3(first and last 64 KiB)` (`url size etag` for an object), or
/// `path -` for a file that cannot be read (a missing file is part of the content too: its row
/// fails or is dropped).
fn file_fingerprint(path: &str) -> String {
    if crate::store::is_remote(path) {
        // An object is fingerprinted by its size and ETag (one HEAD request, no download).
        let head = crate::store::Remote::open(path).and_then(|r| r.head());
        return match head {
            Ok(Some(meta)) => format!(
                "{path}\t{}\t{}\n",
                meta.size,
                meta.e_tag.as_deref().unwrap_or("")
            ),
            _ => format!("{path}\t-\n"),
        };
    }
    let path = crate::store::local_path(path);
    if path.contains("://") {
        return format!("{path}\turl\n");
    }
    let sampled = || -> std::io::Result<String> {
        let mut file = std::fs::File::open(path)?;
        let meta = file.metadata()?;
        let size = meta.len();
        let mut hasher = blake3::Hasher::new();
        let mut buf = vec![0u8; SAMPLED_BYTES.min(size) as usize];
        file.read_exact(&mut buf)?;
        hasher.update(&buf);
        if size > SAMPLED_BYTES {
            let tail = SAMPLED_BYTES.min(size - SAMPLED_BYTES);
            file.seek(SeekFrom::Start(size - tail))?;
            buf.resize(tail as usize, 0);
            file.read_exact(&mut buf)?;
            hasher.update(&buf);
        }
        let mtime_ns = meta.mtime() as i128 * 1_000_000_000 + meta.mtime_nsec() as i128;
        Ok(format!(
            "{path}\t{size}\t{mtime_ns}\t{}\n",
            hasher.finalize().to_hex()
        ))
    };
    sampled().unwrap_or_else(|_| format!("{path}\t-\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_resolve_as_data_juicers_loader_does() {
        assert_eq!(resolve("/data", "a/b.mp4"), "/data/a/b.mp4");
        assert_eq!(resolve("/data/", "b.mp4"), "/data/b.mp4");
        assert_eq!(resolve("/data", "/abs/c.wav"), "/abs/c.wav");
        assert_eq!(resolve("/data", "s3://bucket/c.wav"), "s3://bucket/c.wav");
        assert_eq!(resolve("s3://b/data", "m/c.wav"), "s3://b/data/m/c.wav");
        assert_eq!(dataset_dir("s3://b/data/x.jsonl").unwrap(), "s3://b/data");
        assert_eq!(dataset_dir("s3://b/data/").unwrap(), "s3://b/data");
        assert_eq!(dataset_dir("s3://b/x.jsonl").unwrap(), "s3://b");
        assert_eq!(dataset_dir("s3://b").unwrap(), "s3://b");
        assert_eq!(dataset_dir("s3://b/data/*.jsonl"), None);
    }

    #[test]
    fn fingerprints_change_with_content_size_and_mtime() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("clip.bin");
        let p = path.to_str().unwrap();
        let mut bytes = vec![7u8; 200_000];
        std::fs::write(&path, &bytes).unwrap();
        let first = file_fingerprint(p);
        assert_eq!(file_fingerprint(p), first, "stable");
        // Same size, same mtime, a changed last byte: the sampled tail sees it.
        let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
        bytes[199_999] = 8;
        std::fs::write(&path, &bytes).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        assert_ne!(file_fingerprint(p), first);
        // A touched file with the same bytes counts as changed (mtime).
        let second = file_fingerprint(p);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(mtime + std::time::Duration::from_secs(5))
            .unwrap();
        assert_ne!(file_fingerprint(p), second);
        std::fs::remove_file(&path).unwrap();
        assert_eq!(file_fingerprint(p), format!("{p}\t-\n"));
    }
}
