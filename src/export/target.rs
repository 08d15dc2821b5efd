//! Where a run writes its export: a local path, or on object storage (`s3://`) a local staging
//! copy whose files are uploaded when complete, each one atomic object write.

use std::path::PathBuf;

use anyhow::{Context, Result};
use dj_plans::store::{self, Remote};

/// Where a run writes its export: a local path, or a local staging copy published to a bucket.
#[derive(Debug)]
pub(crate) struct ExportTarget {
    pub local: PathBuf,
    remote: Option<Remote>,
}

impl ExportTarget {
    pub(crate) fn new(export_path: &str) -> Result<ExportTarget> {
        if !store::is_remote(export_path) {
            return Ok(ExportTarget {
                local: PathBuf::from(store::local_path(export_path)),
                remote: None,
            });
        }
        let remote = Remote::open(export_path)?;
        let name = export_path.rsplit('/').next().unwrap_or_default();
        let local = store::url_cache_dir("exports", export_path).join(name);
        Ok(ExportTarget {
            local,
            remote: Some(remote),
        })
    }

    /// Uploads the finished export files (a remote export) and names them by their URLs.
    pub(crate) fn publish(&self, files: Vec<PathBuf>) -> Result<Vec<PathBuf>> {
        let Some(remote) = &self.remote else {
            return Ok(files);
        };
        let parent = remote.url.rsplit_once('/').map_or("", |(p, _)| p);
        let base = Remote::open(parent)?;
        let mut urls = Vec::with_capacity(files.len());
        for file in files {
            let name = file.file_name().unwrap_or_default().to_string_lossy();
            let object = base.join(&name);
            object
                .upload(&file)
                .with_context(|| format!("cannot upload the export to {}", object.url))?;
            std::fs::remove_file(&file).ok();
            urls.push(PathBuf::from(&object.url));
        }
        Ok(urls)
    }
}
