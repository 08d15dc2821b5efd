//! The staged decision against the in-memory one: same removed rows for exact, MinHash and
//! SimHash keys (long chains, a hub, rows without keys), 1/3/7 partitions and 1/2/5 threads of
//! work.

use super::*;
use crate::nodes::dedup::decide_in_memory;
use crate::nodes::keys::Keys;
use crate::nodes::sorted_keys::tests::{corpus, simhash_corpus, split};

/// Writes `parts`' key files into `dir`, runs the decision plan on a session of `threads`
/// partitions, and returns each partition's keep-mask from its removed list.
async fn staged_masks(
    kind: DedupKind,
    parts: &[Keys],
    dir: &Path,
    threads: usize,
) -> Vec<Vec<bool>> {
    let mut files = Vec::new();
    for (p, keys) in parts.iter().enumerate() {
        let path = dir.join(keys_parquet_name(3, p));
        let mut w = KeysWriter::create(&path, p).unwrap();
        // In two halves, as batches come.
        let (a, b) = halves(keys);
        w.write(&a).unwrap();
        w.write(&b).unwrap();
        assert_eq!(w.commit().unwrap(), keys.rows() as u64);
        files.push(path);
    }
    let removed = dir.join(removed_dir_name(3));
    // A SimHash search sorts within 64 KB: on disk.
    let plan = decision_plan(&files, (3, "dedup"), kind, parts.len(), &removed, 64 << 10);
    let plan = plan.unwrap();
    let ctx = crate::planner::session(threads);
    let out = ctx
        .execute_logical_plan(plan)
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let count = out[0]
        .column(0)
        .as_any()
        .downcast_ref::<datafusion::arrow::array::UInt64Array>();
    let mut total = 0;
    let masks: Vec<Vec<bool>> = parts
        .iter()
        .enumerate()
        .map(|(p, keys)| {
            let gone = read_removed(&removed, p).unwrap();
            total += gone.len() as u64;
            let mut keep = vec![true; keys.rows()];
            for r in gone {
                keep[r as usize] = false;
            }
            keep
        })
        .collect();
    assert_eq!(count.unwrap().value(0), total);
    let left: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(
        !left.iter().any(|n| n.to_string_lossy().contains(".tmp")),
        "{left:?}"
    );
    masks
}

fn halves(keys: &Keys) -> (Keys, Keys) {
    let mid = keys.rows() / 2;
    let (mut a, mut b) = (Keys::new(), Keys::new());
    for i in 0..keys.rows() {
        let half = if i < mid { &mut a } else { &mut b };
        half.push_row(keys.row(i).iter().copied());
    }
    (a, b)
}

#[tokio::test]
async fn staged_decisions_match_the_in_memory_ones() {
    let simhash = DedupKind::SimHash {
        num_blocks: 6,
        hamming_distance: 4,
    };
    for (kind, rows) in [
        (DedupKind::Exact, corpus(3000, 1)),
        (DedupKind::MinHashBands, corpus(3000, 4)),
        (simhash, simhash_corpus(3000)),
    ] {
        for partitions in [1, 3, 7] {
            let parts = split(&rows, partitions);
            let expected = decide_in_memory(kind, &parts).unwrap();
            assert!(
                expected.iter().flatten().any(|k| !k),
                "the corpus has duplicates"
            );
            for threads in [1, 2, 5] {
                let dir = tempfile::tempdir().unwrap();
                let masks = staged_masks(kind, &parts, dir.path(), threads).await;
                assert_eq!(
                    masks, expected,
                    "{kind:?}, {partitions} partitions, {threads} threads"
                );
            }
        }
    }
}

#[tokio::test]
async fn a_chain_through_every_partition_keeps_only_its_first_row() {
    // Row i shares a band with row i + 1, across every partition boundary.
    let rows: Vec<Vec<u128>> = (0..40u128)
        .map(|i| vec![(1 << 64) | i, (1 << 64) | (i + 1)])
        .collect();
    let parts = split(&rows, 4);
    let dir = tempfile::tempdir().unwrap();
    let masks = staged_masks(DedupKind::MinHashBands, &parts, dir.path(), 3).await;
    let kept: Vec<usize> = masks
        .iter()
        .flatten()
        .enumerate()
        .filter(|(_, k)| **k)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(kept, [0]);
    assert_eq!(
        masks,
        decide_in_memory(DedupKind::MinHashBands, &parts).unwrap()
    );
}

#[test]
fn a_tampered_list_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let removed = dir.path().join(removed_dir_name(1));
    let ids = [row_id(0, 2), row_id(1, 0), row_id(1, 5)];
    removed::write_lists_for_test(&removed, 2, &ids);
    assert_eq!(read_removed(&removed, 0).unwrap(), [2]);
    assert_eq!(read_removed(&removed, 1).unwrap(), [0, 5]);
    let file = removed.join(removed_file_name(1));
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[4] ^= 1;
    std::fs::write(&file, bytes).unwrap();
    let e = read_removed(&removed, 1).unwrap_err().to_string();
    assert!(
        e.contains("partition_0001.parquet") && e.contains("BLAKE3"),
        "{e}"
    );
}

#[test]
fn key_files_round_trip_with_rows_without_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(keys_parquet_name(2, 5));
    let mut keys = Keys::new();
    for row in [&[][..], &[7, 1u128 << 100], &[], &[u128::MAX], &[], &[]] {
        keys.push_row(row.iter().copied());
    }
    let mut w = KeysWriter::create(&path, 5).unwrap();
    w.write(&keys).unwrap();
    w.commit().unwrap();
    assert_eq!(read_keys_file(&path).unwrap(), keys);
    std::fs::write(&path, b"not parquet").unwrap();
    let e = read_keys_file(&path).unwrap_err().to_string();
    assert!(
        e.contains("dedup_keys_op_0002_partition_0005.parquet"),
        "{e}"
    );
}
