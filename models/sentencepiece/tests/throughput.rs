//! Rough throughput numbers, not run by default:
//! `cargo test --release -p dj-sentencepiece --test throughput -- --ignored --nocapture`.

use std::path::Path;
use std::time::Instant;

use dj_sentencepiece::SentencePiece;

#[test]
#[ignore = "timing only; run with --release --ignored"]
fn encode_throughput() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let golden: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("golden.json")).unwrap()).unwrap();
    let docs: Vec<String> = golden["long_texts"]
        .as_array()
        .unwrap()
        .iter()
        .chain(golden["texts"].as_array().unwrap())
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    let bytes: usize = docs.iter().map(String::len).sum();
    for name in [
        "en.sp.model",
        "zh.sp.model",
        "bpe.sp.model",
        "word.sp.model",
    ] {
        let start = Instant::now();
        let sp = SentencePiece::open(&dir.join(name)).unwrap();
        let load = start.elapsed();
        let mut out = Vec::new();
        let start = Instant::now();
        let rounds = 20;
        let mut pieces = 0;
        for _ in 0..rounds {
            for doc in &docs {
                out.clear();
                sp.encode_into(doc, &mut out);
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
