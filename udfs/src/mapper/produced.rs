//! Files that media mappers write: where Data-Juicer's `transfer_filename` puts them, and how
//! they appear (atomically, under a temporary name in the same directory, synced, renamed).
//!
//! New files go to `save_dir`, else `$DJ_PRODUCED_DATA_DIR/{op}`, else `{the source's
//! directory}/__dj__produced_data__/{op}`, named `{stem}__dj_hash_#{hash}#{ext}`. Deliberate
//! deviation: the hash covers the op's parameters and the source file's path, size and
//! modification time, where Data-Juicer's also covers the process id and the time, so the names
//! are stable: a resumed job finds the files its first run wrote (and does not write them
//! again), and a changed source gets a new name.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::params::ParamSpec;
use crate::py::os_path;

const PRODUCED_DIR: &str = "__dj__produced_data__";

/// The `save_dir` parameter the mappers that write files share.
pub(crate) fn save_dir_param() -> ParamSpec {
    ParamSpec::new(
        "save_dir",
        crate::params::ParamType::Any,
        serde_json::Value::Null,
        "directory of the new files (default: next to the sources)",
    )
}

/// Where a file `op` makes from `source` (read from `local`, its local file) goes, as
/// Data-Juicer's `transfer_filename` places it; `params` is the op's parameters as JSON,
/// without `save_dir`.
pub(crate) fn produced_path(
    op: &str,
    save_dir: Option<&str>,
    source: &str,
    local: &str,
    params: &str,
) -> Result<PathBuf, String> {
    let dir = match save_dir {
        Some(dir) => os_path::abspath(dir).ok_or("the working directory is unreadable")?,
        None => match std::env::var("DJ_PRODUCED_DATA_DIR") {
            Ok(env) if !env.is_empty() => os_path::join(
                &os_path::abspath(&env).ok_or("the working directory is unreadable")?,
                op,
            ),
            _ => {
                if source.contains("://") {
                    return Err(
                        "a new file made from a file on object storage needs save_dir or DJ_PRODUCED_DATA_DIR"
                            .into(),
                    );
                }
                let mut dir = os_path::dirname(source).to_string();
                let token = format!("/{PRODUCED_DIR}/");
                if let Some(i) = dir.find(&token) {
                    dir.truncate(i);
                }
                os_path::join(&dir, &format!("{PRODUCED_DIR}/{op}"))
            }
        },
    };
    let meta = std::fs::metadata(local).map_err(|e| e.to_string())?;
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let mut hasher = Sha256::new();
    hasher.update(format!("{op}\n{params}\n{source}\n{}\n{mtime}", meta.len()).as_bytes());
    let hash = crate::dedup::document::hex(&hasher.finalize());
    let file = source.rsplit('/').next().unwrap_or(source);
    let (stem, ext) = split_ext(file);
    // A file Data-Juicer (or this op) produced gets its hash replaced, not another appended.
    let stem = stem.find("__dj_hash_#").map_or(stem, |i| &stem[..i]);
    Ok(PathBuf::from(os_path::join(
        &dir,
        &format!("{stem}__dj_hash_#{hash}#{ext}"),
    )))
}

/// `os.path.splitext` of a file name: the extension is from the last dot on, unless the name
/// starts with it.
pub(crate) fn split_ext(file: &str) -> (&str, &str) {
    let leading = file.len() - file.trim_start_matches('.').len();
    match file.rfind('.') {
        Some(i) if i > leading => (&file[..i], &file[i..]),
        _ => (file, ""),
    }
}

/// Data-Juicer's `add_suffix_to_filename`: `suffix` goes before the extension.
pub(crate) fn add_suffix(path: &Path, suffix: &str) -> PathBuf {
    let file = path
        .file_name()
        .and_then(|f| f.to_str())
        .unwrap_or_default();
    let (stem, ext) = split_ext(file);
    path.with_file_name(format!("{stem}{suffix}{ext}"))
}

/// Makes `dst` with `write`, which is given a temporary path in the same directory (with the
/// same extension) to write; the file is synced and renamed into place, so `dst` is either
/// absent or whole. What writers killed before their rename left is removed first.
pub(crate) fn write_atomically(
    dst: &Path,
    write: impl FnOnce(&Path) -> Result<(), String>,
) -> Result<(), String> {
    let dir = dst.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let name = dst.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let ext = dst.extension().and_then(|e| e.to_str()).unwrap_or("tmp");
    remove_stale_temporaries(dir, name, ext);
    // Unique per writer: partitions of one process may write the same file at once (the last
    // rename wins; both files are whole).
    static WRITERS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let writer = WRITERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".{name}.{}-{writer}.tmp.{ext}", std::process::id()));
    let written = write(&tmp).and_then(|()| {
        std::fs::File::open(&tmp)
            .and_then(|f| f.sync_all())
            .and_then(|()| std::fs::rename(&tmp, dst))
            .and_then(|()| std::fs::File::open(dir)?.sync_all())
            .map_err(|e| format!("cannot write {}: {e}", dst.display()))
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Removes what writers of `name` killed before their rename left (`.{name}.{pid}-{n}.tmp.{ext}`
/// of a process no longer running here).
fn remove_stale_temporaries(dir: &Path, name: &str, ext: &str) {
    let (prefix, suffix) = (format!(".{name}."), format!(".tmp.{ext}"));
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let file = entry.file_name();
        let Some(pid) = file
            .to_str()
            .and_then(|f| f.strip_prefix(&prefix))
            .and_then(|f| f.strip_suffix(&suffix))
            .and_then(|p| p.split('-').next()?.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes_go_before_the_last_extension_as_python_puts_them() {
        let s = |p: &str| add_suffix(Path::new(p), "_0").display().to_string();
        assert_eq!(s("/d/abc.mp4"), "/d/abc_0.mp4");
        assert_eq!(s("/d/ds.tar.gz"), "/d/ds.tar_0.gz");
        assert_eq!(s("/d/x__dj_hash_#ab#.avi"), "/d/x__dj_hash_#ab#_0.avi");
        assert_eq!(s("/d/.hidden"), "/d/.hidden_0");
        assert_eq!(s("/d/noext"), "/d/noext_0");
    }

    #[test]
    fn a_failed_write_leaves_nothing_and_a_good_one_the_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let dst = dir.path().join("out.mp4");
        let err = write_atomically(&dst, |tmp| {
            std::fs::write(tmp, b"partial").unwrap();
            Err("encoder failed".into())
        });
        assert_eq!(err, Err("encoder failed".to_string()));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        write_atomically(&dst, |tmp| {
            assert_eq!(tmp.extension().unwrap(), "mp4");
            std::fs::write(tmp, b"whole").map_err(|e| e.to_string())
        })
        .unwrap();
        assert_eq!(std::fs::read(&dst).unwrap(), b"whole");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
