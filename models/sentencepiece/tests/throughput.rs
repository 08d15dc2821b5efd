//! Rough throughput numbers, not run by default:
//! `cargo test --release -p dj-sentencepiece --test throughput -- --ignored --nocapture`;
//! `SP_THROUGHPUT_JSONL=FILE` encodes the `text` fields of a JSON lines file instead of the
//! golden texts, `SP_THROUGHPUT_ROUNDS` sets the rounds (20) and `SP_THROUGHPUT_MODEL=FILE`
//! times that model instead of four fixtures.

use std::path::Path;
use std::time::Instant;

use dj_sentencepiece::{Pieces, SentencePiece};

#[test]
#[ignore = "timing only; run with --release --ignored"]
fn encode_throughput() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let golden: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("golden.json")).unwrap()).unwrap();
    let docs: Vec<String> = match std::env::var_os("SP_THROUGHPUT_JSONL") {
        Some(path) => std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|line| {
                let row: serde_json::Value = serde_json::from_str(line).unwrap();
                row["text"].as_str().unwrap().to_string()
            })
            .collect(),
        None => golden["long_texts"]
            .as_array()
            .unwrap()
            .iter()
            .chain(golden["texts"].as_array().unwrap())
            .map(|v| v.as_str().unwrap().to_string())
            .collect(),
    };
    let bytes: usize = docs.iter().map(String::len).sum();
    let models = match std::env::var("SP_THROUGHPUT_MODEL") {
        Ok(path) => vec![path],
        Err(_) => [
            "en.sp.model",
            "zh.sp.model",
            "bpe.sp.model",
            "word.sp.model",
        ]
        .map(|name| dir.join(name).display().to_string())
        .to_vec(),
    };
    for name in &models {
        let start = Instant::now();
        let sp = SentencePiece::open(Path::new(name)).unwrap();
        let load = start.elapsed();
        // What the filters use: one joined string per text, no String per piece.
        let mut out = Pieces::default();
        let start = Instant::now();
        let rounds = std::env::var("SP_THROUGHPUT_ROUNDS").map_or(20, |r| r.parse().unwrap());
        let mut pieces = 0;
        for _ in 0..rounds {
            for doc in &docs {
                out.clear();
                sp.encode_joined(doc, &mut out);
                pieces += out.len();
            }
        }
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{name}: load {load:?}, {:.1} MB/s, {:.2} M pieces/s",
            (bytes * rounds) as f64 / secs / 1e6,
            pieces as f64 / secs / 1e6
        );
    }
}
