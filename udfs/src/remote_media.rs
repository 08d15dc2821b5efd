//! Media files on object storage. The media ops read local files, so an `s3://` path is fetched
//! first, through the fetcher the engine installs (its object-store cache, which downloads each
//! object once per ETag); `file://` URLs are local paths.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::OnceLock;

/// Fetches an object-storage URL to a local file.
pub type Fetcher = dyn Fn(&str) -> Result<PathBuf, String> + Send + Sync;

static FETCHER: OnceLock<Box<Fetcher>> = OnceLock::new();

/// Installs the fetcher of `s3://` media (the first one installed stays).
pub fn install_fetcher(fetcher: Box<Fetcher>) {
    let _ = FETCHER.set(fetcher);
}

/// The local file behind a media path: the path itself, a `file://` URL's path, or an `s3://`
/// object fetched to the local cache. Other URL schemes are refused.
pub fn local_file(path: &str) -> Result<Cow<'_, str>, String> {
    if let Some(local) = path.strip_prefix("file://") {
        return Ok(Cow::Borrowed(local));
    }
    if !path.contains("://") {
        return Ok(Cow::Borrowed(path));
    }
    if !(path.starts_with("s3://") || path.starts_with("s3a://")) {
        return Err("only local paths, file:// and s3:// URLs are read".into());
    }
    let fetch = FETCHER
        .get()
        .ok_or("no object storage client is set up in this process")?;
    let local = fetch(path)?;
    local
        .into_os_string()
        .into_string()
        .map(Cow::Owned)
        .map_err(|p| format!("its local copy {p:?} is not UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_paths_and_file_urls_pass_other_schemes_are_refused() {
        assert_eq!(local_file("/a/b.mp4").unwrap(), "/a/b.mp4");
        assert_eq!(local_file("file:///a/b.mp4").unwrap(), "/a/b.mp4");
        assert_eq!(
            local_file("http://x/b.mp4").unwrap_err(),
            "only local paths, file:// and s3:// URLs are read"
        );
    }
}
