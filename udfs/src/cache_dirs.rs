//! Data-Juicer's cache directories (`utils/cache_utils.py`): where its assets (word lists) and
//! downloaded models live, from the same environment variables and with the same defaults.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// An environment lookup; tests pass a fixed map instead of the process environment.
pub(crate) type Env<'a> = &'a dyn Fn(&str) -> Option<OsString>;

pub(crate) fn process_env(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}

/// `expanduser($DATA_JUICER_CACHE_HOME or $CACHE_HOME/data_juicer)`, `CACHE_HOME` defaulting to
/// `~/.cache`. As in Python, only this path is `~`-expanded, not the per-kind overrides.
fn cache_home(env: Env<'_>) -> PathBuf {
    let home = env("DATA_JUICER_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let cache = env("CACHE_HOME").unwrap_or_else(|| "~/.cache".into());
            Path::new(&cache).join("data_juicer")
        });
    expand_user(&home, env("HOME"))
}

/// Data-Juicer's `ASSET_DIR`: `$DATA_JUICER_ASSETS_CACHE`, else `<cache home>/assets`.
pub(crate) fn asset_dir(env: Env<'_>) -> PathBuf {
    match env("DATA_JUICER_ASSETS_CACHE") {
        Some(d) => d.into(),
        None => cache_home(env).join("assets"),
    }
}

/// Data-Juicer's `DATA_JUICER_MODELS_CACHE`: the variable, else `<cache home>/models`.
pub(crate) fn models_dir(env: Env<'_>) -> PathBuf {
    match env("DATA_JUICER_MODELS_CACHE") {
        Some(d) => d.into(),
        None => cache_home(env).join("models"),
    }
}

/// `DATA_JUICER_EXTERNAL_MODELS_HOME`: extra model directories, `:`-separated, searched before
/// the models cache.
pub(crate) fn external_model_dirs(env: Env<'_>) -> Vec<PathBuf> {
    env("DATA_JUICER_EXTERNAL_MODELS_HOME")
        .map(|v| {
            std::env::split_paths(&v)
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// Python `os.path.expanduser` for `~` and `~/...` (`~user` is left alone).
pub(crate) fn expand_user(p: &Path, home: Option<OsString>) -> PathBuf {
    let (Some(home), Ok(rest)) = (home, p.strip_prefix("~")) else {
        return p.to_path_buf();
    };
    PathBuf::from(home).join(rest)
}

#[cfg(test)]
pub(crate) fn fixed_env(
    vars: &'static [(&'static str, &'static str)],
) -> impl Fn(&str) -> Option<OsString> {
    move |k: &str| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| v.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asset_dir_follows_data_juicer_env() {
        let dir = |vars| asset_dir(&fixed_env(vars));
        assert_eq!(
            dir(&[("HOME", "/h")]),
            PathBuf::from("/h/.cache/data_juicer/assets")
        );
        assert_eq!(
            dir(&[("HOME", "/h"), ("CACHE_HOME", "/c")]),
            PathBuf::from("/c/data_juicer/assets")
        );
        assert_eq!(
            dir(&[("HOME", "/h"), ("DATA_JUICER_CACHE_HOME", "~/dj")]),
            PathBuf::from("/h/dj/assets")
        );
        // The assets variable is taken verbatim (no `~` expansion), as in Python.
        assert_eq!(
            dir(&[("HOME", "/h"), ("DATA_JUICER_ASSETS_CACHE", "~/a")]),
            PathBuf::from("~/a")
        );
    }

    #[test]
    fn models_dir_follows_data_juicer_env() {
        let dir = |vars| models_dir(&fixed_env(vars));
        assert_eq!(
            dir(&[("HOME", "/h")]),
            PathBuf::from("/h/.cache/data_juicer/models")
        );
        assert_eq!(
            dir(&[("HOME", "/h"), ("DATA_JUICER_CACHE_HOME", "/d")]),
            PathBuf::from("/d/models")
        );
        assert_eq!(
            dir(&[("HOME", "/h"), ("DATA_JUICER_MODELS_CACHE", "/m")]),
            PathBuf::from("/m")
        );
        assert_eq!(
            external_model_dirs(&fixed_env(&[(
                "DATA_JUICER_EXTERNAL_MODELS_HOME",
                "/a::/b"
            )])),
            vec![PathBuf::from("/a"), PathBuf::from("/b")]
        );
    }
}
