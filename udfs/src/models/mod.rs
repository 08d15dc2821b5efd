//! The model files Data-Juicer's model-based text operators load: where each file is looked for
//! (a recipe's `model_dir`, then Data-Juicer's own order), and one loaded instance per file and
//! process, shared by every partition and op that uses it.

mod hf;
mod pieces;
mod word_source;

use std::any::Any;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};

pub use dj_fasttext::FastText;
pub use dj_kenlm::Model as KenLm;
pub use dj_sentencepiece::SentencePiece;
pub use hf::HfTokenizer;
pub(crate) use pieces::with_piece_view;
pub use word_source::WordSource;

use crate::cache_dirs::{Env, external_model_dirs, models_dir, process_env};
use crate::params::{ParamSpec, ParamType, Params};

/// Where Data-Juicer downloads its models from (`utils/model_utils.py`).
const MODEL_LINKS: &str = "https://dail-wlcb.oss-cn-wulanchabu.aliyuncs.com/data_juicer/models/";

/// Why a model is not available.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    #[error(
        "model file {file} not found (looked for {}); Data-Juicer downloads it from {url}: put it \
         into {} (or set DATA_JUICER_MODELS_CACHE, the recipe's model_dir or --model_dir)",
        list(.looked), .cache.display()
    )]
    NotFound {
        file: String,
        looked: Vec<PathBuf>,
        url: String,
        cache: PathBuf,
    },
    #[error(
        "Hugging Face tokenizer {name} not found (looked for {}); Data-Juicer downloads it from \
         https://huggingface.co/{name}: put its tokenizer.json there or give a local path",
        list(.looked)
    )]
    HfNotFound { name: String, looked: Vec<PathBuf> },
    /// `message` names the file (the readers' errors all start with it).
    #[error("cannot load model: {message}")]
    Load { path: PathBuf, message: String },
}

fn list(paths: &[PathBuf]) -> String {
    let v: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    v.join(", ")
}

/// The `model_dir` parameter of every op that loads a model: a directory searched first for its
/// files. A recipe's top-level `model_dir` (or `--model_dir`) fills it in for every such op.
pub(crate) fn model_dir_param() -> ParamSpec {
    ParamSpec::new(
        "model_dir",
        ParamType::Str,
        serde_json::Value::Null,
        "directory searched first for model files (default: the recipe's model_dir)",
    )
}

/// The op's `model_dir` parameter.
pub(crate) fn model_dir_of(p: &Params) -> Option<&Path> {
    p.str("model_dir").map(Path::new)
}

/// Data-Juicer's download link for `file`: its own mirror, then the upstream source
/// (`BACKUP_MODEL_LINKS`).
fn download_urls(file: &str) -> String {
    let backup = if file == "lid.176.bin" {
        Some("https://dl.fbaipublicfiles.com/fasttext/supervised-models/")
    } else if file.ends_with(".sp.model") || file.ends_with(".arpa.bin") {
        Some("https://huggingface.co/edugp/kenlm/resolve/main/wikipedia/")
    } else {
        None
    };
    match backup {
        Some(b) => format!("{MODEL_LINKS}{file} (or {b}{file})"),
        None => format!("{MODEL_LINKS}{file}"),
    }
}

/// The path of model `file`: `model_dir/file`, then, as Data-Juicer's `check_model`, `file`
/// itself (relative to the working directory), each `DATA_JUICER_EXTERNAL_MODELS_HOME` directory
/// and the models cache.
pub fn find(file: &str, model_dir: Option<&Path>) -> Result<PathBuf, ModelError> {
    find_in(file, model_dir, &process_env)
}

fn find_in(file: &str, model_dir: Option<&Path>, env: Env<'_>) -> Result<PathBuf, ModelError> {
    let cache = models_dir(env);
    let mut looked: Vec<PathBuf> = model_dir.map(|d| d.join(file)).into_iter().collect();
    looked.push(PathBuf::from(file));
    looked.extend(external_model_dirs(env).iter().map(|d| d.join(file)));
    looked.push(cache.join(file));
    if let Some(found) = looked.iter().find(|p| p.is_file()) {
        return Ok(found.clone());
    }
    Err(ModelError::NotFound {
        file: file.to_string(),
        looked,
        url: download_urls(file),
        cache,
    })
}

/// Loaded models by (type, canonical path): each file is read once per process.
type Loaded = HashMap<(std::any::TypeId, PathBuf), Arc<dyn Any + Send + Sync>>;
static LOADED: LazyLock<Mutex<Loaded>> = LazyLock::new(Default::default);

/// The one shared instance of the model at `path`, loading it on first use. Loading happens under
/// the lock so concurrent builders of the same op never read a file twice.
fn shared<T, E>(path: &Path, load: impl FnOnce(&Path) -> Result<T, E>) -> Result<Arc<T>, ModelError>
where
    T: Any + Send + Sync,
    E: std::fmt::Display,
{
    let canonical = path.canonicalize().map_err(|e| ModelError::Load {
        path: path.to_path_buf(),
        message: format!("{}: {e}", path.display()),
    })?;
    let key = (std::any::TypeId::of::<T>(), canonical);
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(m) = loaded.get(&key) {
        return Ok(Arc::clone(m)
            .downcast::<T>()
            .expect("keyed by the model's type"));
    }
    let model = Arc::new(load(path).map_err(|e| ModelError::Load {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?);
    loaded.insert(key, model.clone());
    Ok(model)
}

/// A model file an op uses, for `dj-plan explain`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelUse {
    pub kind: &'static str,
    pub path: PathBuf,
}

thread_local! {
    /// The models loaded while [`collect_uses`] runs on this thread.
    static USES: std::cell::RefCell<Option<Vec<ModelUse>>> = const { std::cell::RefCell::new(None) };
}

/// Runs `build` (an op constructor) and returns the model files it loaded, so a recipe can say
/// which model each op uses.
pub fn collect_uses<R>(build: impl FnOnce() -> R) -> (R, Vec<ModelUse>) {
    let outer = USES.with(|u| u.borrow_mut().replace(Vec::new()));
    let r = build();
    let uses = USES.with(|u| std::mem::replace(&mut *u.borrow_mut(), outer));
    (r, uses.unwrap_or_default())
}

fn used(kind: &'static str, path: PathBuf) -> ModelUse {
    let u = ModelUse { kind, path };
    USES.with(|cell| {
        if let Some(v) = cell.borrow_mut().as_mut() {
            v.push(u.clone());
        }
    });
    u
}

/// The fastText model `file` (Data-Juicer's `lid.176.bin` by default).
pub fn fasttext(
    file: &str,
    model_dir: Option<&Path>,
) -> Result<(Arc<FastText>, ModelUse), ModelError> {
    let path = find(file, model_dir)?;
    let model = shared(&path, FastText::open)?;
    Ok((model, used("fastText", path)))
}

/// The SentencePiece model of `lang` (`{lang}.sp.model`).
pub(crate) fn sentencepiece(
    lang: &str,
    model_dir: Option<&Path>,
) -> Result<(Arc<SentencePiece>, ModelUse), ModelError> {
    sentencepiece_file(&format!("{lang}.sp.model"), model_dir)
}

/// The SentencePiece model `file` (a path, or a name looked for like every model file).
pub(crate) fn sentencepiece_file(
    file: &str,
    model_dir: Option<&Path>,
) -> Result<(Arc<SentencePiece>, ModelUse), ModelError> {
    let path = find(file, model_dir)?;
    let model = shared(&path, SentencePiece::open)?;
    Ok((model, used("SentencePiece", path)))
}

/// The KenLM model of `lang` (`{lang}.arpa.bin`), memory-mapped when binary.
pub fn kenlm(lang: &str, model_dir: Option<&Path>) -> Result<(Arc<KenLm>, ModelUse), ModelError> {
    let path = find(&format!("{lang}.arpa.bin"), model_dir)?;
    let model = shared(&path, KenLm::open)?;
    Ok((model, used("KenLM", path)))
}

/// The Hugging Face tokenizer `name_or_path` (a hub name in the HF cache, or a local path).
pub(crate) fn hf_tokenizer(
    name_or_path: &str,
    model_dir: Option<&Path>,
) -> Result<(Arc<HfTokenizer>, ModelUse), ModelError> {
    let path = hf::find(name_or_path, model_dir, &process_env)?;
    let model = shared(&path, HfTokenizer::open)?;
    Ok((model, used("Hugging Face tokenizer", path)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache_dirs::fixed_env;

    #[test]
    fn a_missing_model_names_where_it_was_looked_for_and_where_to_get_it() {
        let env = fixed_env(&[
            ("HOME", "/nohome"),
            ("DATA_JUICER_EXTERNAL_MODELS_HOME", "/ext"),
        ]);
        let e = find_in("en.arpa.bin", Some(Path::new("/md")), &env).unwrap_err();
        assert_eq!(
            e.to_string(),
            "model file en.arpa.bin not found (looked for /md/en.arpa.bin, en.arpa.bin, \
             /ext/en.arpa.bin, /nohome/.cache/data_juicer/models/en.arpa.bin); Data-Juicer \
             downloads it from https://dail-wlcb.oss-cn-wulanchabu.aliyuncs.com/data_juicer/models/en.arpa.bin \
             (or https://huggingface.co/edugp/kenlm/resolve/main/wikipedia/en.arpa.bin): put it \
             into /nohome/.cache/data_juicer/models (or set DATA_JUICER_MODELS_CACHE, the \
             recipe's model_dir or --model_dir)"
        );
    }

    #[test]
    fn model_dir_comes_first_then_the_cache() {
        let dir = std::env::temp_dir().join(format!("dj-models-find-{}", std::process::id()));
        let (md, cache) = (dir.join("md"), dir.join("cache"));
        std::fs::create_dir_all(&md).unwrap();
        std::fs::create_dir_all(&cache).unwrap();
        std::fs::write(cache.join("x.sp.model"), b"c").unwrap();
        let cache_var: &'static str = Box::leak(cache.display().to_string().into_boxed_str());
        let env = fixed_env(Box::leak(Box::new([(
            "DATA_JUICER_MODELS_CACHE",
            cache_var,
        )])));
        assert_eq!(
            find_in("x.sp.model", Some(&md), &env).unwrap(),
            cache.join("x.sp.model")
        );
        std::fs::write(md.join("x.sp.model"), b"m").unwrap();
        assert_eq!(
            find_in("x.sp.model", Some(&md), &env).unwrap(),
            md.join("x.sp.model")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_unreadable_model_is_named_once() {
        let dir = std::env::temp_dir().join(format!("dj-models-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("lid.176.bin"), b"not a model").unwrap();
        let Err(e) = fasttext("lid.176.bin", Some(&dir)) else {
            panic!("a non-model loaded")
        };
        let e = e.to_string();
        let path = dir.join("lid.176.bin").display().to_string();
        assert!(
            e.starts_with(&format!("cannot load model: {path}: ")),
            "{e}"
        );
        assert_eq!(e.matches(&path).count(), 1, "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
