//! Where a job's relative paths point: the directory the job was run from is recovered from
//! where the job directory is (`work_dir`), with the current directory as the fallback.

use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::Value;

use crate::job::JobSummary;

pub(super) fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

pub(super) fn path_str(p: &Path) -> Result<String> {
    let abs = std::path::absolute(p)?;
    abs.to_str()
        .map(str::to_string)
        .with_context(|| format!("path is not UTF-8: {}", abs.display()))
}

fn normal_components(p: &Path) -> Vec<Component<'_>> {
    p.components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect()
}

/// `full` without the trailing components `suffix`, if it ends with them.
fn strip_suffix(full: &Path, suffix: &Path) -> Option<PathBuf> {
    let f = normal_components(full);
    let s = normal_components(suffix);
    if s.is_empty() || s.len() > f.len() || f[f.len() - s.len()..] != s[..] {
        return None;
    }
    Some(f[..f.len() - s.len()].iter().collect())
}

/// Candidate directories the job was run from, most likely first; the current directory last.
pub(super) fn run_dirs(
    job_dir: &Path,
    summary: Option<&JobSummary>,
    recipe: Option<&Value>,
) -> Vec<PathBuf> {
    let mut bases = Vec::new();
    let Ok(abs) = std::path::absolute(job_dir) else {
        return vec![PathBuf::from(".")];
    };
    let id = file_name(&abs);
    let relative = |s: &str| Path::new(s).is_relative().then(|| PathBuf::from(s));
    if let Some(w) = summary
        .and_then(|s| s.work_dir.to_str())
        .filter(|w| !w.is_empty())
        .and_then(relative)
    {
        bases.extend(strip_suffix(&abs, &w));
    }
    if let Some(r) = recipe {
        match r["work_dir"].as_str() {
            Some(w) => {
                let w = w.replace("{job_id}", &id);
                if let Some(w) = relative(&w) {
                    let w = if w.file_name().is_some_and(|n| n == id.as_str()) {
                        w
                    } else {
                        w.join(&id)
                    };
                    bases.extend(strip_suffix(&abs, &w));
                }
            }
            None => {
                if let Some(parent) = r["export_path"]
                    .as_str()
                    .and_then(relative)
                    .and_then(|e| e.parent().map(Path::to_path_buf))
                {
                    bases.extend(strip_suffix(&abs, &parent.join(&id)));
                }
            }
        }
    }
    if let Ok(cwd) = std::env::current_dir() {
        bases.push(cwd);
    }
    bases.dedup();
    bases
}

/// `p` resolved against the first candidate directory where it exists (globs: where the
/// directory before the first wildcard exists).
pub(super) fn resolve(bases: &[PathBuf], p: &str) -> PathBuf {
    let path = Path::new(p);
    if path.is_absolute() || bases.is_empty() {
        return path.to_path_buf();
    }
    let probe = match p.find(['*', '?', '[']) {
        Some(i) => Path::new(&p[..i])
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default(),
        None => path.to_path_buf(),
    };
    bases
        .iter()
        .find(|b| b.join(&probe).exists())
        .unwrap_or(&bases[0])
        .join(path)
}
