//! Times the text statistics and mappers that dominate cleaning recipes on long documents, one
//! function at a time on one thread, over the `text` fields of a JSON lines file:
//!
//!     cargo run --profile bench-fast -p dj-udfs --example text_stats_speed -- FILE.jsonl
//!
//! Prints each function's seconds and MB/s (of input text), so a change to one of them can be
//! measured without the engine around it.

use std::io::BufRead;
use std::time::Instant;

use dj_udfs::filter::ratio::{alnum_ratio, special_char_ratio};
use dj_udfs::filter::repetition::char_rep_ratio;
use dj_udfs::filter::words::word_rep_ratio;
use dj_udfs::mapper::normalization::{normalize_punctuation, normalize_whitespace};

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: text_stats_speed FILE.jsonl");
    let file = std::io::BufReader::new(std::fs::File::open(&path).expect("open the input"));
    let texts: Vec<String> = file
        .lines()
        .map(|l| {
            let v: serde_json::Value =
                serde_json::from_str(&l.expect("read a line")).expect("JSON");
            v["text"].as_str().unwrap_or_default().to_string()
        })
        .collect();
    let mb = texts.iter().map(String::len).sum::<usize>() as f64 / 1e6;
    println!("{} texts, {mb:.1} MB", texts.len());
    let time = |name: &str, f: &dyn Fn(&str) -> f64| {
        let start = Instant::now();
        let sum: f64 = texts.iter().map(|t| f(t)).sum();
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{name:<24} {secs:7.3} s {:8.1} MB/s  (sum {sum:.3})",
            mb / secs
        );
    };
    time("char_rep_ratio(10)", &|t| char_rep_ratio(t, 10));
    time("word_rep_ratio(10)", &|t| word_rep_ratio(t, 10));
    time("alnum_ratio", &alnum_ratio);
    time("special_char_ratio", &special_char_ratio);
    time("normalize_whitespace", &|t| {
        normalize_whitespace(t).len() as f64
    });
    time("normalize_punctuation", &|t| {
        normalize_punctuation(t).len() as f64
    });
}
