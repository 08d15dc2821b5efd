//! Snapshot tests of `dj-plan explain` for every recipe in configs/. Set UPDATE_SNAPSHOTS=1 to
//! rewrite tests/snapshots/ after an intended plan change (and review the diff).

use dj_fusion::explain::explain;

use crate::common::{load, repo};

#[test]
fn explain_snapshots_of_configs() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let root = repo();
    std::env::set_current_dir(&root).unwrap();
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
        let recipe = load(rel, &[]);
        let text = rt.block_on(explain(&recipe)).unwrap().render_text();
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
