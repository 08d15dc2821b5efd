//! Input discovery: `dataset_path` as a file, a directory (recursive, sorted) or a glob, and each
//! file's format and compression from its name.

use std::path::{Path, PathBuf};

use super::SourceError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileFormat {
    /// One JSON object per line (`.jsonl`, or `.json` not starting with `[`).
    Jsonl,
    /// A `.json` file holding one array of objects (loaded whole).
    JsonArray,
    Parquet,
    /// An Arrow IPC file (`.arrow`), as checkpoints in the `arrow` format are written.
    ArrowIpc,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

/// Format and compression from a file name, or `None` if it is not a supported input.
pub(crate) fn classify(path: &Path) -> Option<(FileFormat, Compression)> {
    let name = path.file_name()?.to_str()?.to_ascii_lowercase();
    let (stem, compression) = if let Some(s) = name.strip_suffix(".gz") {
        (s, Compression::Gzip)
    } else if let Some(s) = name
        .strip_suffix(".zst")
        .or_else(|| name.strip_suffix(".zstd"))
    {
        (s, Compression::Zstd)
    } else {
        (name.as_str(), Compression::None)
    };
    if stem.ends_with(".jsonl") {
        Some((FileFormat::Jsonl, compression))
    } else if stem.ends_with(".json") {
        // Refined to JsonArray by the indexer after looking at the first byte.
        Some((FileFormat::Jsonl, compression))
    } else if stem.ends_with(".parquet") && compression == Compression::None {
        Some((FileFormat::Parquet, compression))
    } else if stem.ends_with(".arrow") && compression == Compression::None {
        Some((FileFormat::ArrowIpc, compression))
    } else {
        None
    }
}

/// One input file found for a dataset: its local path, format, compression, and the object it
/// was downloaded from when the dataset is on object storage.
pub(crate) type Found = (
    PathBuf,
    FileFormat,
    Compression,
    Option<crate::store::RemoteObject>,
);

/// The input files of `dataset_path`, in order: local paths, `file://` URLs and object storage
/// (`s3://`).
pub(crate) fn discover_all(dataset_path: &str) -> Result<Vec<Found>, SourceError> {
    if crate::store::is_remote(dataset_path) {
        let fetched =
            crate::store::fetch_dataset(dataset_path).map_err(|e| SourceError::Invalid {
                path: dataset_path.into(),
                message: e.to_string(),
            })?;
        let (found, remotes): (Vec<PathBuf>, Vec<_>) = fetched
            .into_iter()
            // Like a directory walk: a prefix's objects of other kinds are skipped.
            .filter(|(p, _)| classify(p).is_some())
            .map(|(p, r)| (p, Some(r)))
            .unzip();
        if found.is_empty() {
            return Err(SourceError::NotFound(dataset_path.to_string()));
        }
        let classified = classify_all(Path::new(dataset_path), found)?;
        return Ok(classified
            .into_iter()
            .zip(remotes)
            .map(|((p, f, c), r)| (p, f, c, r))
            .collect());
    }
    let dataset_path = crate::store::local_path(dataset_path);
    let path = Path::new(dataset_path);
    let mut found = Vec::new();
    if dataset_path.contains(['*', '?', '[']) && !path.exists() {
        let entries = glob::glob(dataset_path).map_err(|e| SourceError::Invalid {
            path: path.to_path_buf(),
            message: format!("invalid glob pattern: {e}"),
        })?;
        for entry in entries {
            let p = entry
                .map_err(|e| SourceError::io(e.path(), std::io::Error::other(e.to_string())))?;
            if p.is_file() {
                found.push(p);
            }
        }
        found.sort();
    } else if path.is_dir() {
        walk(path, &mut found)?;
        found.sort();
        found.retain(|p| classify(p).is_some());
    } else if path.is_file() {
        found.push(path.to_path_buf());
    } else {
        return Err(SourceError::NotFound(dataset_path.to_string()));
    }
    if found.is_empty() {
        return Err(SourceError::NotFound(dataset_path.to_string()));
    }
    Ok(classify_all(path, found)?
        .into_iter()
        .map(|(p, f, c)| (p, f, c, None))
        .collect())
}

fn classify_all(
    path: &Path,
    found: Vec<PathBuf>,
) -> Result<Vec<(PathBuf, FileFormat, Compression)>, SourceError> {
    let mut out = Vec::with_capacity(found.len());
    for p in found {
        let Some((format, compression)) = classify(&p) else {
            return Err(SourceError::Invalid {
                path: p,
                message: "unsupported input format; expected .jsonl, .json or .parquet (.jsonl/.json may end in .gz or .zst)".into(),
            });
        };
        out.push((p, format, compression));
    }
    let json = out
        .iter()
        .filter(|f| matches!(f.1, FileFormat::Jsonl | FileFormat::JsonArray))
        .count();
    if json != 0 && json != out.len() {
        return Err(SourceError::Invalid {
            path: path.to_path_buf(),
            message: "mixes JSON and binary (parquet/arrow) files; use one kind per dataset".into(),
        });
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), SourceError> {
    for entry in std::fs::read_dir(dir).map_err(|e| SourceError::io(dir, e))? {
        let entry = entry.map_err(|e| SourceError::io(dir, e))?;
        let p = entry.path();
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        if p.is_dir() {
            walk(&p, out)?;
        } else {
            out.push(p);
        }
    }
    Ok(())
}

/// Opens a file for sequential reading, decompressing if needed.
pub(crate) fn open(
    path: &Path,
    compression: Compression,
) -> Result<Box<dyn std::io::Read + Send>, SourceError> {
    let f = std::fs::File::open(path).map_err(|e| SourceError::io(path, e))?;
    Ok(match compression {
        Compression::None => Box::new(f),
        Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(std::io::BufReader::new(
            f,
        ))),
        Compression::Zstd => {
            Box::new(zstd::stream::read::Decoder::new(f).map_err(|e| SourceError::io(path, e))?)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_by_name() {
        assert_eq!(
            classify(Path::new("a.jsonl")),
            Some((FileFormat::Jsonl, Compression::None))
        );
        assert_eq!(
            classify(Path::new("a.jsonl.gz")),
            Some((FileFormat::Jsonl, Compression::Gzip))
        );
        assert_eq!(
            classify(Path::new("a.JSON.zst")),
            Some((FileFormat::Jsonl, Compression::Zstd))
        );
        assert_eq!(
            classify(Path::new("a.parquet")),
            Some((FileFormat::Parquet, Compression::None))
        );
        assert_eq!(classify(Path::new("a.csv")), None);
    }
}
