//! Scores every fixture model (ARPA, probing, trie, quantized and pointer-compressed
//! trie) and compares against the `kenlm` Python module's results bit for bit.

use std::path::{Path, PathBuf};

use dj_kenlm::Model;
use serde_json::Value;

const COMBOS: [(bool, bool); 4] = [(true, true), (true, false), (false, true), (false, false)];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn golden() -> Value {
    let text = std::fs::read_to_string(fixtures().join("golden.json")).expect("golden.json");
    serde_json::from_str(&text).expect("golden.json parses")
}

#[test]
fn every_fixture_matches_python_kenlm_bit_for_bit() {
    let golden = golden();
    let sentences: Vec<&str> = golden["sentences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    let models = golden["models"].as_array().unwrap();
    assert!(models.len() >= 20, "golden.json lists too few models");
    let mut failures = Vec::new();
    let mut checked = 0usize;
    for entry in models {
        let file = entry["file"].as_str().unwrap();
        let path = fixtures().join(file);
        if let Some(reason) = entry.get("error") {
            match Model::open(&path) {
                Ok(_) => failures.push(format!("{file}: loaded, but kenlm refuses it: {reason}")),
                Err(e) => assert!(
                    e.to_string().contains(file),
                    "{file}: error does not name the file: {e}"
                ),
            }
            continue;
        }
        let model = match Model::open(&path) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{file}: failed to load: {e}"));
                continue;
            }
        };
        assert_eq!(
            model.order() as u64,
            entry["order"].as_u64().unwrap(),
            "{file}: order"
        );
        let scores = entry["scores"].as_array().unwrap();
        assert_eq!(scores.len(), sentences.len());
        for (sentence, expected) in sentences.iter().zip(scores) {
            for (k, &(bos, eos)) in COMBOS.iter().enumerate() {
                let want = expected[k].as_u64().unwrap() as u32;
                let got = model.score(sentence, bos, eos);
                checked += 1;
                if got.to_bits() != want {
                    failures.push(format!(
                        "{file}: score({sentence:?}, bos={bos}, eos={eos}) = {got:?} ({:#x}), kenlm {:?} ({want:#x})",
                        got.to_bits(),
                        f32::from_bits(want)
                    ));
                }
            }
        }
    }
    assert!(checked > 10_000, "only {checked} scores checked");
    assert!(
        failures.is_empty(),
        "{} mismatches, first ones:\n{}",
        failures.len(),
        failures[..failures.len().min(25)].join("\n")
    );
}

#[test]
fn formats_agree_and_are_not_trivial() {
    // Guards against a golden file that would pass with a constant scorer.
    let dir = fixtures();
    let arpa = Model::open(&dir.join("small.arpa")).unwrap();
    let probing = Model::open(&dir.join("small.probing.bin")).unwrap();
    let s = "the package provides a library for";
    assert_eq!(
        arpa.score(s, true, true).to_bits(),
        probing.score(s, true, true).to_bits()
    );
    assert_ne!(arpa.score(s, true, true), arpa.score(s, false, false));
    assert!(arpa.score(s, true, true) < 0.0);
    assert_eq!(arpa.score("", false, false), 0.0);
}

#[test]
fn scoring_looked_up_ids_equals_scoring_the_words() {
    let golden = golden();
    let mut checked = 0usize;
    for entry in golden["models"].as_array().unwrap() {
        if entry.get("error").is_some() {
            continue;
        }
        let model = Model::open(&fixtures().join(entry["file"].as_str().unwrap())).unwrap();
        for sentence in golden["sentences"].as_array().unwrap() {
            let sentence = sentence.as_str().unwrap();
            // The id path is for words without whitespace or NUL, as the perplexity filter
            // hands it SentencePiece pieces.
            if sentence.contains('\0') {
                continue;
            }
            let ids: Vec<u32> = sentence
                .split([' ', '\t', '\n', '\r', '\x0b', '\x0c'])
                .filter(|w| !w.is_empty())
                .map(|w| model.index(w.as_bytes()))
                .collect();
            for &(bos, eos) in &COMBOS {
                assert_eq!(
                    model.score_ids(&ids, bos, eos).to_bits(),
                    model.score(sentence, bos, eos).to_bits(),
                    "{sentence:?} bos={bos} eos={eos}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 1_000, "only {checked} sentences compared");
}
