//! Hugging Face tokenizers (`tokenizer.json`): found as `transformers` finds them offline (a local
//! path, `DATA_JUICER_EXTERNAL_MODELS_HOME`, then the hub cache layout), and token counting as a
//! fast tokenizer called with `add_special_tokens=False` counts.

use std::path::{Path, PathBuf};

use super::ModelError;
use crate::cache_dirs::{Env, expand_user, external_model_dirs};

/// A loaded `tokenizer.json`, without truncation or padding (transformers turns both off for a
/// call that does not ask for them).
pub struct HfTokenizer {
    inner: tokenizers::Tokenizer,
}

impl std::fmt::Debug for HfTokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HfTokenizer").finish_non_exhaustive()
    }
}

impl HfTokenizer {
    /// Errors name the file.
    ///
    /// The `tokenizers` crate panics on some malformed files (a truncated `decoder` section:
    /// found by the fuzz target), so the JSON is checked first and the load runs under
    /// `catch_unwind`: a bad file is an error, never a crash.
    pub fn open(path: &Path) -> Result<HfTokenizer, String> {
        let err = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
        let text = std::fs::read_to_string(path).map_err(|e| err(&e))?;
        serde_json::from_str::<serde_json::Value>(&text)
            .map_err(|e| err(&format!("not a valid tokenizer.json: {e}")))?;
        let load = || -> Result<tokenizers::Tokenizer, String> {
            let mut inner: tokenizers::Tokenizer = text.parse().map_err(|e| err(&e))?;
            inner
                .with_truncation(None)
                .map_err(|e| err(&e))?
                .with_padding(None);
            inner
                .encode("Data-Juicer 1.6 \u{4e2d}\u{6587} \u{1f642}", false)
                .map_err(|e| err(&format!("the tokenizer fails on a sample text: {e}")))?;
            Ok(inner)
        };
        let inner =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(load)).map_err(|_| {
                err(&"not a valid tokenizer.json (the tokenizers library failed reading it)")
            })??;
        Ok(HfTokenizer { inner })
    }

    /// `len(tokenizer(text, add_special_tokens=False)["input_ids"])`, which is also
    /// `len(tokenizer.tokenize(text))`.
    ///
    /// Panics if the tokenizer fails on the text, which a tokenizer that loaded only does when its
    /// own definition is inconsistent (Python raises there too); [`HfTokenizer::open`] tries one
    /// text first so such a file is refused before any work.
    pub(crate) fn count_tokens(&self, text: &str) -> usize {
        match self.inner.encode(text, false) {
            Ok(enc) => enc.len(),
            Err(e) => panic!("Hugging Face tokenizer failed on a text: {e}"),
        }
    }
}

/// The hub cache directory (`huggingface_hub.constants.HF_HUB_CACHE`).
fn hub_cache(env: Env<'_>) -> PathBuf {
    if let Some(d) = env("HF_HUB_CACHE").or_else(|| env("HUGGINGFACE_HUB_CACHE")) {
        return expand_user(Path::new(&d), env("HOME"));
    }
    let hf_home = match env("HF_HOME") {
        Some(h) => PathBuf::from(h),
        None => {
            let xdg = env("XDG_CACHE_HOME").unwrap_or_else(|| "~/.cache".into());
            Path::new(&xdg).join("huggingface")
        }
    };
    expand_user(&hf_home, env("HOME")).join("hub")
}

/// `tokenizer.json` in `dir`, or `dir` itself when it is that file.
fn tokenizer_file(dir: &Path) -> Option<PathBuf> {
    if dir.is_file() {
        return Some(dir.to_path_buf());
    }
    let f = dir.join("tokenizer.json");
    f.is_file().then_some(f)
}

/// The `tokenizer.json` of `name_or_path`: a local file or directory (also under each
/// `DATA_JUICER_EXTERNAL_MODELS_HOME` directory, as Data-Juicer's `check_model_home`), else the
/// snapshot `refs/main` points to in the hub cache (`models--org--name`), else its only snapshot.
///
/// A `model_dir` is searched first, both as a parent of local paths and as a hub cache.
pub(super) fn find(
    name_or_path: &str,
    model_dir: Option<&Path>,
    env: Env<'_>,
) -> Result<PathBuf, ModelError> {
    let mut looked: Vec<PathBuf> = model_dir
        .map(|d| d.join(name_or_path))
        .into_iter()
        .collect();
    if let Some(f) = model_dir.and_then(|d| in_hub_cache(d, name_or_path, &mut looked)) {
        return Ok(f);
    }
    for dir in external_model_dirs(env) {
        looked.push(dir.join(name_or_path));
    }
    looked.push(PathBuf::from(name_or_path));
    for p in &looked {
        if let Some(f) = tokenizer_file(p) {
            return Ok(f);
        }
    }
    match in_hub_cache(&hub_cache(env), name_or_path, &mut looked) {
        Some(f) => Ok(f),
        None => Err(ModelError::HfNotFound {
            name: name_or_path.to_string(),
            looked,
        }),
    }
}

/// `tokenizer.json` of repository `name` in hub cache `cache`, or `None` (with the path tried
/// added to `looked`).
fn in_hub_cache(cache: &Path, name: &str, looked: &mut Vec<PathBuf>) -> Option<PathBuf> {
    let repo = cache.join(format!("models--{}", name.replace('/', "--")));
    let snapshots = repo.join("snapshots");
    let by_ref = std::fs::read_to_string(repo.join("refs").join("main"))
        .ok()
        .map(|rev| snapshots.join(rev.trim()));
    let only = || {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(&snapshots)
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        (dirs.len() == 1).then(|| dirs.remove(0))
    };
    if let Some(snapshot) = by_ref.or_else(only) {
        if let Some(f) = tokenizer_file(&snapshot) {
            return Some(f);
        }
        looked.push(snapshot.join("tokenizer.json"));
    } else {
        looked.push(snapshots.join("<revision>").join("tokenizer.json"));
    }
    None
}

#[cfg(test)]
mod tests {
    /// A regression test from the fuzz target: a file cut inside its `decoder` section made the
    /// `tokenizers` crate panic.
    #[test]
    fn a_truncated_tokenizer_is_an_error_not_a_panic() {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join(
            "../data/models/models--EleutherAI--pythia-6.9b-deduped/snapshots/0000000000000000000000000000000000f1x7e5/tokenizer.json",
        );
        let text = std::fs::read_to_string(&fixture).unwrap();
        let cut = text.find("\"decoder\"").unwrap() + 30;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokenizer.json");
        std::fs::write(&path, &text[..cut]).unwrap();
        let e = HfTokenizer::open(&path).unwrap_err();
        assert!(
            e.contains("tokenizer.json: not a valid tokenizer.json: EOF"),
            "{e}"
        );
        // Valid JSON whose decoder is no decoder.
        let broken = text.replacen("\"decoder\": {", "\"decoder\": 7, \"was\": {", 1);
        std::fs::write(&path, broken).unwrap();
        assert!(HfTokenizer::open(&path).is_err());
        HfTokenizer::open(&fixture).unwrap();
    }

    use super::*;
    use crate::cache_dirs::fixed_env;

    #[test]
    fn hub_cache_follows_huggingface_env() {
        let dir = |vars| hub_cache(&fixed_env(vars));
        assert_eq!(
            dir(&[("HOME", "/h")]),
            PathBuf::from("/h/.cache/huggingface/hub")
        );
        assert_eq!(
            dir(&[("HOME", "/h"), ("HF_HOME", "/hf")]),
            PathBuf::from("/hf/hub")
        );
        assert_eq!(
            dir(&[("HOME", "/h"), ("HF_HOME", "/hf"), ("HF_HUB_CACHE", "/c")]),
            PathBuf::from("/c")
        );
        assert_eq!(
            dir(&[("HOME", "/h"), ("XDG_CACHE_HOME", "/x")]),
            PathBuf::from("/x/huggingface/hub")
        );
    }

    #[test]
    fn a_hub_name_resolves_through_refs_main() {
        let root = std::env::temp_dir().join(format!("dj-hf-find-{}", std::process::id()));
        let repo = root.join("models--Org--tok");
        std::fs::create_dir_all(repo.join("snapshots/abc")).unwrap();
        std::fs::create_dir_all(repo.join("snapshots/old")).unwrap();
        std::fs::create_dir_all(repo.join("refs")).unwrap();
        std::fs::write(repo.join("refs/main"), "abc").unwrap();
        std::fs::write(repo.join("snapshots/abc/tokenizer.json"), "{}").unwrap();
        let var: &'static str = Box::leak(root.display().to_string().into_boxed_str());
        let env = fixed_env(Box::leak(Box::new([("HF_HUB_CACHE", var)])));
        assert_eq!(
            find("Org/tok", None, &env).unwrap(),
            repo.join("snapshots/abc/tokenizer.json")
        );
        assert_eq!(
            find("Org/tok", Some(&root), &fixed_env(&[])).unwrap(),
            repo.join("snapshots/abc/tokenizer.json")
        );
        let e = find("Org/other", None, &env).unwrap_err().to_string();
        assert!(
            e.starts_with("Hugging Face tokenizer Org/other not found (looked for Org/other, "),
            "{e}"
        );
        assert!(e.contains("https://huggingface.co/Org/other"), "{e}");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
