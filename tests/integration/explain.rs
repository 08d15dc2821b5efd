//! Snapshot tests of `dj-plan explain` for every recipe in configs/. Set UPDATE_SNAPSHOTS=1 to
//! rewrite tests/snapshots/ after an intended plan change (and review the diff).

use crate::common::{ok, repo};

#[test]
fn explain_snapshots_of_configs() {
    let root = repo();
    let mut names: Vec<_> = std::fs::read_dir(root.join("configs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    names.sort();
    assert!(!names.is_empty());
    let mut failures = Vec::new();
    for path in names {
        let rel = path.strip_prefix(&root).unwrap();
        // The published recipes load models and word lists: the shipped fixtures stand in for
        // Data-Juicer's caches.
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_dj-plan"))
            .args([
                "explain",
                rel.to_str().unwrap(),
                "--model_dir",
                "data/models",
            ])
            .env("DATA_JUICER_ASSETS_CACHE", root.join("data/assets"))
            .current_dir(&root)
            .output()
            .unwrap();
        // Media paths are made absolute under the dataset's directory: the clone's path.
        let text = ok(&out).replace(root.to_str().unwrap(), "<repo>");
        let snap = root.join("tests/snapshots").join(format!(
            "{}.explain.txt",
            path.file_stem().unwrap().to_string_lossy()
        ));
        if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
            std::fs::write(&snap, &text).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&snap).unwrap_or_default();
        if want != text {
            failures.push(format!(
                "{} differs from {}:\n{text}",
                rel.display(),
                snap.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
