//! Object storage: `s3://bucket/key` locations for the dataset, the export and the job directory,
//! besides local paths and `file://` URLs. Credentials and region come from the usual AWS
//! environment variables; `AWS_ENDPOINT_URL` points at an S3-compatible server (an `http://`
//! endpoint is allowed without further settings).
//!
//! Remote inputs are read from a local cache (`DJ_CACHE_DIR`, default `~/.cache/dj-fusion`):
//! each object is downloaded once per ETag, atomically, by whichever process (client or
//! executor) reads it first. Uploads are single atomic object writes.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures::TryStreamExt;
use object_store::aws::AmazonS3Builder;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload, WriteMultipart};

/// Object storage problems: which URL, what failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{url}: {message}")]
    Invalid { url: String, message: String },
    #[error("{url}: {source}")]
    Object {
        url: String,
        source: object_store::Error,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The outcome of a conditional write ([`Remote::put_if_absent`], [`Remote::put_if_match`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Conditional {
    /// Written; the new object's ETag.
    Written(Option<String>),
    /// Not written: the object exists (`put_if_absent`) or changed (`put_if_match`).
    Conflict,
}

/// An object's bytes and its ETag.
pub type Fetched = (Vec<u8>, Option<String>);

/// An object a local file was downloaded from (kept with the input index, so another process can
/// fetch the same object into its own cache).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RemoteObject {
    pub url: String,
    pub size: u64,
    pub e_tag: Option<String>,
}

/// Whether `location` names object storage (as opposed to a local path or `file://` URL).
pub fn is_remote(location: &str) -> bool {
    location.starts_with("s3://") || location.starts_with("s3a://")
}

/// `file:///a/b` as the local path `/a/b`; anything else unchanged.
pub fn local_path(location: &str) -> &str {
    location.strip_prefix("file://").unwrap_or(location)
}

/// Runs `fut` to completion on a private runtime, from sync code anywhere (inside or outside
/// a tokio runtime).
pub fn block_on<F: Future + Send>(fut: F) -> F::Output
where
    F::Output: Send,
{
    std::thread::scope(|s| {
        s.spawn(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a current-thread runtime")
                .block_on(fut)
        })
        .join()
        .expect("object storage thread panicked")
    })
}

/// Where downloaded objects are kept.
pub fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("DJ_CACHE_DIR") {
        return PathBuf::from(d);
    }
    let home = std::env::var_os("HOME").map_or_else(std::env::temp_dir, PathBuf::from);
    home.join(".cache/dj-fusion")
}

/// The local cache directory of `url` in `area` of [`cache_dir`]: one per URL, named by a short
/// hash of it (an export's staging copy, a job directory's mirror).
pub fn url_cache_dir(area: &str, url: &str) -> PathBuf {
    cache_dir()
        .join(area)
        .join(&blake3::hash(url.as_bytes()).to_hex()[..16])
}

/// A bucket and a key (or key prefix) in it.
#[derive(Clone)]
pub struct Remote {
    /// `s3://bucket/key` as given (without a trailing slash).
    pub url: String,
    pub store: Arc<dyn ObjectStore>,
    pub key: ObjectPath,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.url)
    }
}

/// Retries of a failed request (a server error, throttling, a timeout, a refused connection):
/// up to `DJ_STORE_RETRIES` (default 10) times, with exponential backoff from 100 ms doubling
/// up to 15 s, within `DJ_STORE_RETRY_TIMEOUT` seconds (default 180) of the first attempt. A
/// request that still fails is an error naming the object; what was published before stays
/// valid, so the job resumes from it.
fn retry_config() -> object_store::RetryConfig {
    let setting = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(default)
    };
    object_store::RetryConfig {
        backoff: object_store::BackoffConfig {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(15),
            base: 2.0,
        },
        max_retries: setting("DJ_STORE_RETRIES", 10) as usize,
        retry_timeout: Duration::from_secs(setting("DJ_STORE_RETRY_TIMEOUT", 180)),
    }
}

impl Remote {
    /// Opens `url` (`s3://bucket/key`) with credentials from the environment.
    pub fn open(url: &str) -> Result<Remote, StoreError> {
        Remote::open_with(url, &[])
    }

    /// Like [`Remote::open`], with explicit settings over the environment's (keys as in
    /// `AWS_*` variables, lower-case: `aws_endpoint_url`, `aws_access_key_id`, ...).
    pub fn open_with(url: &str, settings: &[(&str, &str)]) -> Result<Remote, StoreError> {
        let invalid = |message: String| StoreError::Invalid {
            url: url.to_string(),
            message,
        };
        let rest = url
            .split_once("://")
            .map(|(_, r)| r)
            .ok_or_else(|| invalid("not a URL".into()))?;
        let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(invalid("no bucket name".into()));
        }
        let mut builder = AmazonS3Builder::from_env().with_bucket_name(bucket);
        if std::env::var_os("AWS_DEFAULT_REGION").is_none()
            && std::env::var_os("AWS_REGION").is_none()
        {
            builder = builder.with_region("us-east-1");
        }
        for (key, value) in settings {
            let key = key
                .parse()
                .map_err(|e| invalid(format!("setting {key}: {e}")))?;
            builder = builder.with_config(key, *value);
        }
        let endpoint = settings
            .iter()
            .find(|(k, _)| *k == "aws_endpoint_url")
            .map(|(_, v)| v.to_string())
            .or_else(|| std::env::var("AWS_ENDPOINT_URL").ok())
            .or_else(|| std::env::var("AWS_ENDPOINT").ok());
        if endpoint.is_some_and(|e| e.starts_with("http://")) {
            builder = builder.with_allow_http(true);
        }
        builder = builder.with_retry(retry_config());
        let store = builder
            .build()
            .map_err(|e| invalid(format!("cannot open the bucket: {e}")))?;
        let key = key.trim_end_matches('/');
        Ok(Remote {
            url: format!("s3://{bucket}/{key}")
                .trim_end_matches('/')
                .to_string(),
            store: Arc::new(store),
            key: ObjectPath::from(key),
        })
    }

    /// The location `rel` (a `/`-separated relative path) under this one.
    pub fn join(&self, rel: &str) -> Remote {
        let mut key = self.key.clone();
        for part in rel.split('/').filter(|p| !p.is_empty()) {
            key = key.clone().join(part);
        }
        Remote {
            url: format!("{}/{}", self.url, rel.trim_matches('/')),
            store: self.store.clone(),
            key,
        }
    }

    /// The location `name` next to this one (under the same parent key).
    pub fn sibling(&self, name: &str) -> Remote {
        let parts: Vec<_> = self.key.parts().collect();
        let parent = ObjectPath::from_iter(parts[..parts.len().saturating_sub(1)].iter().cloned());
        let url = self
            .url
            .rsplit_once('/')
            .map_or(self.url.as_str(), |(d, _)| d);
        Remote {
            url: format!("{url}/{}", name.trim_matches('/')),
            store: self.store.clone(),
            key: parent,
        }
        .join_key(name)
    }

    fn join_key(mut self, rel: &str) -> Remote {
        for part in rel.split('/').filter(|p| !p.is_empty()) {
            self.key = self.key.clone().join(part);
        }
        self
    }

    fn object_error(&self, source: object_store::Error) -> StoreError {
        StoreError::Object {
            url: self.url.clone(),
            source,
        }
    }

    /// Every object whose key is this key or starts with `key/`, sorted by key.
    pub fn list(&self) -> Result<Vec<object_store::ObjectMeta>, StoreError> {
        block_on(async {
            let prefix = (!self.key.as_ref().is_empty()).then_some(&self.key);
            let mut all: Vec<_> = self
                .store
                .list(prefix)
                .try_collect()
                .await
                .map_err(|e| self.object_error(e))?;
            if let Ok(meta) = self.store.head(&self.key).await {
                all.retain(|m| m.location != meta.location);
                all.push(meta);
            }
            all.sort_by(|a, b| a.location.cmp(&b.location));
            Ok(all)
        })
    }

    /// The object's metadata, or `None` if it does not exist.
    pub fn head(&self) -> Result<Option<object_store::ObjectMeta>, StoreError> {
        block_on(async {
            match self.store.head(&self.key).await {
                Ok(m) => Ok(Some(m)),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(self.object_error(e)),
            }
        })
    }

    /// Downloads the object to `dest` atomically (temporary file, fsync, rename).
    pub fn download(&self, dest: &Path) -> Result<(), StoreError> {
        let io = |path: &Path, source| StoreError::Io {
            path: path.to_path_buf(),
            source,
        };
        let dir = dest.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        let (tmp, mut file) = crate::atomic::AtomicFile::create(dest).map_err(|e| io(dest, e))?;
        block_on(async {
            let got = self
                .store
                .get(&self.key)
                .await
                .map_err(|e| self.object_error(e))?;
            let mut stream = got.into_stream();
            while let Some(bytes) = stream.try_next().await.map_err(|e| self.object_error(e))? {
                std::io::Write::write_all(&mut file, &bytes).map_err(|e| io(dest, e))?;
            }
            Ok::<_, StoreError>(())
        })?;
        tmp.commit(file).map_err(|e| io(dest, e))
    }

    /// Uploads the local file `src` as this object: one atomic object write (multipart for
    /// large files), visible only once complete. Returns the object's ETag.
    pub fn upload(&self, src: &Path) -> Result<Option<String>, StoreError> {
        let io = |source| StoreError::Io {
            path: src.to_path_buf(),
            source,
        };
        let size = std::fs::metadata(src).map_err(io)?.len();
        block_on(async {
            if size <= 8 << 20 {
                let bytes = std::fs::read(src).map_err(io)?;
                let put = self
                    .store
                    .put(&self.key, PutPayload::from(bytes))
                    .await
                    .map_err(|e| self.object_error(e))?;
                return Ok(put.e_tag);
            }
            let upload = self
                .store
                .put_multipart(&self.key)
                .await
                .map_err(|e| self.object_error(e))?;
            let mut writer = WriteMultipart::new(upload);
            let mut file = std::fs::File::open(src).map_err(io)?;
            let mut buf = vec![0u8; 8 << 20];
            loop {
                let n = std::io::Read::read(&mut file, &mut buf).map_err(io)?;
                if n == 0 {
                    break;
                }
                writer
                    .wait_for_capacity(4)
                    .await
                    .map_err(|e| self.object_error(e))?;
                writer.write(&buf[..n]);
            }
            let put = writer.finish().await.map_err(|e| self.object_error(e))?;
            Ok(put.e_tag)
        })
    }

    /// Writes `bytes` as this object.
    pub fn put(&self, bytes: Vec<u8>) -> Result<(), StoreError> {
        block_on(async {
            self.store
                .put(&self.key, PutPayload::from(bytes))
                .await
                .map(|_| ())
                .map_err(|e| self.object_error(e))
        })
    }

    /// Writes `bytes` as this object only if there is none (S3 `If-None-Match: *`).
    pub fn put_if_absent(&self, bytes: Vec<u8>) -> Result<Conditional, StoreError> {
        self.put_conditional(bytes, object_store::PutMode::Create)
    }

    /// Writes `bytes` as this object only if it still has ETag `e_tag` (S3 `If-Match`).
    pub fn put_if_match(&self, bytes: Vec<u8>, e_tag: &str) -> Result<Conditional, StoreError> {
        let version = object_store::UpdateVersion {
            e_tag: Some(e_tag.to_string()),
            version: None,
        };
        self.put_conditional(bytes, object_store::PutMode::Update(version))
    }

    fn put_conditional(
        &self,
        bytes: Vec<u8>,
        mode: object_store::PutMode,
    ) -> Result<Conditional, StoreError> {
        let opts = object_store::PutOptions {
            mode,
            ..Default::default()
        };
        block_on(async {
            match self
                .store
                .put_opts(&self.key, PutPayload::from(bytes), opts)
                .await
            {
                Ok(put) => Ok(Conditional::Written(put.e_tag)),
                Err(
                    object_store::Error::AlreadyExists { .. }
                    | object_store::Error::Precondition { .. }
                    | object_store::Error::NotFound { .. },
                ) => Ok(Conditional::Conflict),
                Err(e) => Err(self.object_error(e)),
            }
        })
    }

    /// The object's bytes and ETag, or `None` if it does not exist.
    pub fn get(&self) -> Result<Option<Fetched>, StoreError> {
        block_on(async {
            let got = match self.store.get(&self.key).await {
                Ok(g) => g,
                Err(object_store::Error::NotFound { .. }) => return Ok(None),
                Err(e) => return Err(self.object_error(e)),
            };
            let e_tag = got.meta.e_tag.clone();
            let bytes = got.bytes().await.map_err(|e| self.object_error(e))?;
            Ok(Some((bytes.to_vec(), e_tag)))
        })
    }

    /// Deletes the object (absent is fine).
    pub fn delete(&self) -> Result<(), StoreError> {
        block_on(async {
            match self.store.delete(&self.key).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                Err(e) => Err(self.object_error(e)),
            }
        })
    }
}

/// The cache file for `object`: one directory per URL and ETag, keeping the object's file name
/// (its extension tells the input format).
fn cache_path(object: &RemoteObject) -> PathBuf {
    let mut h = blake3::Hasher::new();
    h.update(object.url.as_bytes());
    h.update(b"\0");
    h.update(object.e_tag.as_deref().unwrap_or("").as_bytes());
    h.update(&object.size.to_le_bytes());
    let name = object.url.rsplit('/').next().unwrap_or("object");
    cache_dir()
        .join("objects")
        .join(&h.finalize().to_hex()[..24])
        .join(name)
}

/// The local copy of `object`, downloading it unless the cache has it already.
pub(crate) fn ensure_local(object: &RemoteObject) -> Result<PathBuf, StoreError> {
    let path = cache_path(object);
    let cached = std::fs::metadata(&path).is_ok_and(|m| m.len() == object.size);
    if !cached {
        Remote::open(&object.url)?.download(&path)?;
    }
    Ok(path)
}

/// Lets the media ops read `s3://` paths (see [`dj_udfs::remote_media`]): each object is fetched
/// into the cache once per ETag, and looked up once per process.
pub fn install_media_fetcher() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| dj_udfs::remote_media::install_fetcher(Box::new(fetch_media)));
}

fn fetch_media(url: &str) -> Result<PathBuf, String> {
    type Cache = std::sync::Mutex<std::collections::HashMap<String, PathBuf>>;
    static FETCHED: std::sync::LazyLock<Cache> = std::sync::LazyLock::new(Default::default);
    let fetched = || FETCHED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(path) = fetched().get(url) {
        return Ok(path.clone());
    }
    let remote = Remote::open(url).map_err(|e| e.to_string())?;
    let meta = remote
        .head()
        .map_err(|e| e.to_string())?
        .ok_or("no such object")?;
    let object = RemoteObject {
        url: url.to_string(),
        size: meta.size,
        e_tag: meta.e_tag,
    };
    let path = ensure_local(&object).map_err(|e| e.to_string())?;
    fetched().insert(url.to_string(), path.clone());
    Ok(path)
}

/// The objects of a remote dataset, downloaded: `url` is one object, a prefix (every object
/// under it, like a directory), or a glob over keys (`s3://b/data/*.jsonl`).
pub(crate) fn fetch_dataset(url: &str) -> Result<Vec<(PathBuf, RemoteObject)>, StoreError> {
    let pattern_at = url.find(['*', '?', '[']);
    let (base, pattern) = match pattern_at {
        Some(i) => {
            let base = &url[..url[..i].rfind('/').unwrap_or(i)];
            let pattern = glob::Pattern::new(url).map_err(|e| StoreError::Invalid {
                url: url.to_string(),
                message: format!("invalid glob pattern: {e}"),
            })?;
            (base, Some(pattern))
        }
        None => (url, None),
    };
    let remote = Remote::open(base)?;
    let bucket_url = remote.url[..remote.url.len() - remote.key.as_ref().len()]
        .trim_end_matches('/')
        .to_string();
    let mut out = Vec::new();
    for meta in remote.list()? {
        let object = RemoteObject {
            url: format!("{bucket_url}/{}", meta.location),
            size: meta.size,
            e_tag: meta.e_tag.clone(),
        };
        if pattern.as_ref().is_some_and(|p| !p.matches(&object.url)) {
            continue;
        }
        let path = ensure_local(&object)?;
        out.push((path, object));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations() {
        assert!(is_remote("s3://b/k"));
        assert!(!is_remote("/data/x.jsonl"));
        assert!(!is_remote("file:///data/x.jsonl"));
        assert_eq!(local_path("file:///data/x.jsonl"), "/data/x.jsonl");
        assert_eq!(local_path("data/x.jsonl"), "data/x.jsonl");
        let r = Remote::open("s3://bucket/a/b/").unwrap();
        assert_eq!(r.url, "s3://bucket/a/b");
        assert_eq!(r.key.as_ref(), "a/b");
        let c = r.join("jobs/x/events.jsonl");
        assert_eq!(c.url, "s3://bucket/a/b/jobs/x/events.jsonl");
        assert_eq!(c.key.as_ref(), "a/b/jobs/x/events.jsonl");
        let err = Remote::open("s3:///key").unwrap_err().to_string();
        assert_eq!(err, "s3:///key: no bucket name");
    }

    #[test]
    fn cache_paths_keep_the_file_name_and_change_with_the_etag() {
        let a = RemoteObject {
            url: "s3://b/data/part-1.jsonl.gz".into(),
            size: 10,
            e_tag: Some("\"1\"".into()),
        };
        let b = RemoteObject {
            e_tag: Some("\"2\"".into()),
            ..a.clone()
        };
        assert!(cache_path(&a).ends_with("part-1.jsonl.gz"));
        assert_ne!(cache_path(&a), cache_path(&b));
    }
}
