//! Rough throughput of the repetition ratios, not run by default:
//! `REP_THROUGHPUT_JSONL=FILE cargo test --release -p dj-udfs --test repetition_throughput --
//! --ignored --nocapture` times `char_rep_ratio` and `word_rep_ratio` (n = 10, the bench
//! recipes' `rep_len`) over the `text` fields of a JSON lines file, and prints a checksum of the
//! ratios so that two builds can be compared for equal results. `REP_THROUGHPUT_ROUNDS` sets the
//! rounds (3), `REP_THROUGHPUT_ONLY=char_rep_ratio` (or `word_rep_ratio`) times one of the two.

use std::time::Instant;

use dj_udfs::filter::repetition::char_rep_ratio;
use dj_udfs::filter::words::word_rep_ratio;

#[test]
#[ignore = "timing only; run with --release --ignored and REP_THROUGHPUT_JSONL"]
fn repetition_throughput() {
    let Some(path) = std::env::var_os("REP_THROUGHPUT_JSONL") else {
        eprintln!("REP_THROUGHPUT_JSONL is not set");
        return;
    };
    let docs: Vec<String> = std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| {
            let row: serde_json::Value = serde_json::from_str(line).unwrap();
            row["text"].as_str().unwrap().to_string()
        })
        .collect();
    let mb = docs.iter().map(String::len).sum::<usize>() as f64 / 1e6;
    let rounds = std::env::var("REP_THROUGHPUT_ROUNDS").map_or(3, |r| r.parse().unwrap());
    type Ratio = fn(&str, usize) -> f64;
    for (name, ratio) in [
        ("char_rep_ratio", char_rep_ratio as Ratio),
        ("word_rep_ratio", word_rep_ratio as Ratio),
    ] {
        if std::env::var("REP_THROUGHPUT_ONLY").is_ok_and(|only| only != name) {
            continue;
        }
        for _ in 0..rounds {
            let start = Instant::now();
            let sum: f64 = docs.iter().map(|d| ratio(d, 10)).sum();
            let secs = start.elapsed().as_secs_f64();
            println!(
                "{name}: {:.3} s, {:.1} MB/s, checksum {sum:.12}",
                secs,
                mb / secs
            );
        }
    }
}
