//! Property-based fuzzing of what reads untrusted bytes: the recipe reader (YAML and command-line
//! overrides), the JSON-lines and JSON-array readers (generic JSON, floats, encodings), the seal
//! reader and the model readers (fastText, KenLM ARPA and binary, SentencePiece protobuf,
//! Hugging Face `tokenizer.json`), which then also predict, score or encode. The Python-regex translation's target is in `udfs/src/py/regex.rs`. Each starts from the shipped fixtures and mutates them
//! (flipped, inserted, deleted and duplicated bytes, truncations); any input may be refused, none
//! may panic. `PROPTEST_CASES` runs more cases than CI's default (64 per target); a case that
//! fails is shrunk by proptest and belongs below as a regression test.

use std::path::Path;

use proptest::prelude::*;
use proptest::test_runner::Config;

use crate::common::repo;

/// One mutation of a byte string.
#[derive(Debug, Clone)]
enum Edit {
    Flip(usize, u8),
    Insert(usize, u8),
    Delete(usize, usize),
    Duplicate(usize, usize),
    Truncate(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Edit::Flip(i, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Edit::Insert(i, b)),
        (any::<usize>(), 1usize..64).prop_map(|(i, n)| Edit::Delete(i, n)),
        (any::<usize>(), 1usize..256).prop_map(|(i, n)| Edit::Duplicate(i, n)),
        any::<usize>().prop_map(Edit::Truncate),
    ]
}

fn apply(mut bytes: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
    for e in edits {
        let len = bytes.len().max(1);
        match *e {
            Edit::Flip(i, b) if !bytes.is_empty() => bytes[i % len] ^= b | 1,
            Edit::Insert(i, b) => bytes.insert(i % (bytes.len() + 1), b),
            Edit::Delete(i, n) if !bytes.is_empty() => {
                let at = i % len;
                let end = (at + n).min(bytes.len());
                bytes.drain(at..end);
            }
            Edit::Duplicate(i, n) if !bytes.is_empty() => {
                let at = i % len;
                let piece = bytes[at..(at + n).min(bytes.len())].to_vec();
                bytes.splice(at..at, piece);
            }
            Edit::Truncate(i) => bytes.truncate(i % (bytes.len() + 1)),
            _ => {}
        }
    }
    bytes
}

fn fixture(rel: &str) -> Vec<u8> {
    std::fs::read(repo().join(rel)).unwrap()
}

fn config() -> Config {
    Config {
        // CI's bound; PROPTEST_CASES=10000 runs more by hand.
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(64),
        failure_persistence: None,
        ..Config::default()
    }
}

const RECIPES: [&str; 4] = [
    "configs/demo.yaml",
    "configs/partitioned.yaml",
    "configs/dedup.yaml",
    "configs/redpajama-c4-refine.yaml",
];

proptest! {
    #![proptest_config(config())]

    #[test]
    fn the_recipe_reader_never_panics(
        which in 0..RECIPES.len(),
        edits in prop::collection::vec(edit(), 0..8),
        keys in prop::collection::vec("[a-z_.]{1,30}", 0..3),
        values in prop::collection::vec("\\PC{0,20}", 0..3),
    ) {
        let text = String::from_utf8_lossy(&apply(fixture(RECIPES[which]), &edits)).into_owned();
        let overrides: Vec<(String, String)> = keys.into_iter().zip(values).collect();
        let _ = dj_plans::Recipe::from_str("fuzz.yaml", &text, &overrides);
    }

    #[test]
    fn the_json_lines_reader_never_panics(
        which in 0..3usize,
        as_array in any::<bool>(),
        edits in prop::collection::vec(edit(), 1..8),
    ) {
        let name = ["data/demo.jsonl", "data/c4_sample.jsonl", "data/stack_sample.jsonl"][which];
        let mut bytes = fixture(name);
        // A few rows are enough, and keep each case fast.
        let cut = bytes.iter().enumerate().filter(|(_, b)| **b == b'\n').nth(20).map_or(bytes.len(), |(i, _)| i + 1);
        bytes.truncate(cut);
        // The same rows as a `.json` array, which is read element by element.
        let (bytes, file) = if as_array {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let rows: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
            (format!("[{}]", rows.join(",\n")).into_bytes(), "in.json")
        } else {
            (bytes, "in.jsonl")
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(file);
        std::fs::write(&path, apply(bytes, &edits)).unwrap();
        let _ = dj_plans::source::InputIndex::build(path.to_str().unwrap());
    }

    #[test]
    fn the_seal_reader_never_panics(edits in prop::collection::vec(edit(), 1..6)) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("data.bin");
        std::fs::write(&file, b"some checkpoint bytes").unwrap();
        let seal = format!(
            "{{\"size\": 21, \"blake3\": \"{}\"}}",
            blake3::hash(b"some checkpoint bytes").to_hex()
        );
        let mutated = apply(seal.into_bytes(), &edits);
        std::fs::write(dj_plans::seal::seal_path(&file), mutated).unwrap();
        let _ = dj_plans::seal::read_seal(&file);
        let _ = dj_plans::seal::verify(&file);
        assert!(Path::new(&file).exists());
    }

    #[test]
    fn the_model_readers_never_panic(
        which in 0..7usize,
        edits in prop::collection::vec(edit(), 1..6),
    ) {
        let name = [
            "models/fasttext/tests/fixtures/ova_q.ftz",
            "models/fasttext/tests/fixtures/softmax.bin",
            "models/kenlm/tests/fixtures/en.arpa.bin",
            "models/sentencepiece/tests/fixtures/en.sp.model",
            "models/kenlm/tests/fixtures/tiny_order5.arpa",
            "models/kenlm/tests/fixtures/tiny_order5.trie-q4a4.bin",
            "data/models/models--EleutherAI--pythia-6.9b-deduped/snapshots/0000000000000000000000000000000000f1x7e5/tokenizer.json",
        ][which];
        let bytes = apply(fixture(name), &edits);
        let text = "the quick brown fox jumps over the lazy dog";
        match which {
            0 | 1 => {
                if let Ok(m) = dj_fasttext::FastText::from_bytes(&bytes, Path::new(name)) {
                    let _ = m.predict(text, 2, 0.0);
                }
            }
            2 | 4 | 5 => {
                let dir = tempfile::tempdir().unwrap();
                let path = dir.path().join(if which == 4 { "lm.arpa" } else { "lm.bin" });
                std::fs::write(&path, &bytes).unwrap();
                if let Ok(m) = dj_kenlm::Model::open(&path) {
                    let _ = m.score(text, true, true);
                }
            }
            3 => {
                if let Ok(m) = dj_sentencepiece::SentencePiece::from_bytes(&bytes) {
                    let _ = m.encode_as_pieces(text);
                }
            }
            _ => {
                // Loading tries a sample text, so a tokenizer that loads encodes.
                let dir = tempfile::tempdir().unwrap();
                let path = dir.path().join("tokenizer.json");
                std::fs::write(&path, &bytes).unwrap();
                let _ = dj_udfs::models::HfTokenizer::open(&path);
            }
        }
    }
}

/// A killed job's saved files, mutated, then resumed: `dj-run --resume` refuses or redoes the
/// work, and never panics. Runs a process per case, so fewer cases (a quarter).
#[test]
fn a_resume_from_mutated_job_files_never_panics() {
    let dir = tempfile::tempdir().unwrap();
    let recipe = dir.path().join("r.yaml");
    let text = std::fs::read_to_string(repo().join("configs/partitioned.yaml")).unwrap();
    let text = text
        .replace(
            "data/demo.jsonl",
            repo().join("data/demo.jsonl").to_str().unwrap(),
        )
        .replace("outputs/", &format!("{}/", dir.path().display()));
    std::fs::write(&recipe, text).unwrap();
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_dj-run"))
            .arg("--config")
            .arg(&recipe)
            .args(args)
            .env("DJ_PROGRESS", "0")
            .output()
            .unwrap()
    };
    assert!(run(&["--job_id", "fz"]).status.success());
    let job = dir.path().join("partitioned/jobs/fz");
    let events = std::fs::read_dir(&job)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("events_")
        })
        .unwrap();
    let targets = [
        job.join("checkpoints/partitioning_info.json"),
        events,
        job.join("checkpoints/checkpoint_op_0001_partition_0000.parquet.blake3"),
        job.join("job_summary.json"),
    ];
    let originals: Vec<Vec<u8>> = targets.iter().map(|t| std::fs::read(t).unwrap()).collect();
    let mut cases = config();
    cases.cases = (cases.cases / 4).max(8);
    let mut runner = proptest::test_runner::TestRunner::new(cases);
    let strategy = (0..targets.len(), prop::collection::vec(edit(), 1..6));
    runner
        .run(&strategy, |(which, edits)| {
            for (t, o) in targets.iter().zip(&originals) {
                std::fs::write(t, o).unwrap();
            }
            std::fs::write(&targets[which], apply(originals[which].clone(), &edits)).unwrap();
            let out = run(&["--resume", "fz"]);
            let stderr = String::from_utf8_lossy(&out.stderr);
            prop_assert!(
                matches!(out.status.code(), Some(0 | 1)) && !stderr.contains("panicked"),
                "{}: {:?}\n{stderr}",
                targets[which].display(),
                out.status
            );
            Ok(())
        })
        .unwrap();
}
