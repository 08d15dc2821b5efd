//! Shared helpers: loading recipes with overrides and running them in-process.

use std::path::{Path, PathBuf};

use dj_fusion::{RunReport, run};
use dj_plans::Recipe;

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn load(recipe: &Path, overrides: &[(&str, &str)]) -> Recipe {
    let o: Vec<(String, String)> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Recipe::load(recipe, &o).unwrap_or_else(|e| panic!("{}: {e}", recipe.display()))
}

pub fn run_recipe(recipe: &Recipe) -> RunReport {
    run_with(recipe, &Default::default())
}

pub fn run_with(recipe: &Recipe, opts: &dj_fusion::RunOptions) -> RunReport {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(run(recipe, opts))
        .unwrap_or_else(|e| panic!("{}: {e:#}", recipe.file))
}

/// Runs the `dj-run` binary with `args` from the repository root.
pub fn dj_run(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_dj-run"))
        .args(args)
        .current_dir(repo())
        .output()
        .unwrap()
}

pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The command's stdout, after asserting it succeeded (showing both streams if not).
pub fn ok(o: &std::process::Output) -> String {
    assert!(
        o.status.success(),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}
