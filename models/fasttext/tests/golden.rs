//! Every fixture model against the reference Python module's answers (tests/fixtures/
//! golden.json, written by fixtures/make_fixtures.py): labels equal, probabilities equal to
//! the bit.

use std::path::{Path, PathBuf};

use dj_fasttext::FastText;
use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn golden() -> Value {
    let raw = std::fs::read_to_string(fixtures().join("golden.json")).expect("golden.json");
    serde_json::from_str(&raw).expect("golden.json parses")
}

/// Checks one model; returns the number of cases compared.
fn check_model(name: &str) -> usize {
    let golden = golden();
    let entry = &golden["models"][name];
    let texts = golden["texts"][entry["texts"].as_str().unwrap()]
        .as_array()
        .unwrap();
    let label_names = entry["labels"].as_array().unwrap();
    let cases = entry["cases"].as_array().expect("cases for model");
    assert!(!cases.is_empty());
    let model = FastText::open(&fixtures().join(name)).unwrap();
    let names: Vec<&str> = label_names.iter().map(|l| l.as_str().unwrap()).collect();
    assert_eq!(model.labels(), names.as_slice());
    let mut failures = Vec::new();
    for case in cases {
        let text = texts[case["text"].as_u64().unwrap() as usize]
            .as_str()
            .unwrap();
        let k = case["k"].as_i64().unwrap();
        let k = if k < 0 { usize::MAX } else { k as usize };
        let threshold = case["threshold"].as_f64().unwrap() as f32;
        let want: Vec<(String, u32)> = case["labels"]
            .as_array()
            .unwrap()
            .iter()
            .zip(case["prob_bits"].as_array().unwrap())
            .map(|(l, b)| {
                let name = label_names[l.as_u64().unwrap() as usize].as_str().unwrap();
                (name.to_string(), b.as_u64().unwrap() as u32)
            })
            .collect();
        let got: Vec<(String, u32)> = model
            .predict(text, k, threshold)
            .into_iter()
            .map(|(l, p)| (l, p.to_bits()))
            .collect();
        if got != want {
            let shown: String = text.chars().take(60).collect();
            failures.push(format!(
                "{name} text {:?} k={k} threshold={threshold}:\n  want {:?}\n  got  {:?}",
                shown,
                pretty(&want),
                pretty(&got)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures[..failures.len().min(10)].join("\n")
    );
    cases.len()
}

fn pretty(v: &[(String, u32)]) -> Vec<(String, f32)> {
    v.iter()
        .map(|(l, b)| (l.clone(), f32::from_bits(*b)))
        .collect()
}

macro_rules! golden_tests {
    ($($test:ident => $file:literal,)*) => {$(
        #[test]
        fn $test() {
            assert!(check_model($file) > 0);
        }
    )*};
}

golden_tests! {
    lid_176_bin_hs => "lid.176.bin",
    lid_176_ftz_pruned_qnorm => "lid.176.ftz",
    softmax_bin => "softmax.bin",
    softmax_ftz_short_last_subquantizer => "softmax_q.ftz",
    hs_bin => "hs.bin",
    ns_bin => "ns.bin",
    ova_bin => "ova.bin",
    ova_ftz_pruned_qnorm => "ova_q.ftz",
    word_bigrams_without_subwords => "wng2.bin",
    word_trigrams_ns => "wng3_ns.bin",
    topic_300_labels_bin => "topic.bin",
    topic_quantized_output => "topic_qout.ftz",
    version_11_ignores_char_ngrams => "ns_v11.bin",
}

#[test]
fn every_golden_model_has_a_test() {
    let golden = golden();
    let names: Vec<&String> = golden["models"].as_object().unwrap().keys().collect();
    assert_eq!(names.len(), 13, "update golden_tests! for {names:?}");
}

#[test]
fn predict_into_matches_predict() {
    let model = FastText::open(&fixtures().join("lid.176.bin")).unwrap();
    let mut out = Vec::new();
    for text in ["das ist ein test", "", "これはテストです", "hello world"] {
        model.predict_into(text, 3, 0.0, &mut out);
        let owned: Vec<(String, f32)> = out.iter().map(|(l, p)| (l.to_string(), *p)).collect();
        assert_eq!(owned, model.predict(text, 3, 0.0));
    }
}

#[test]
fn model_info() {
    let model = FastText::open(&fixtures().join("lid.176.ftz")).unwrap();
    assert!(model.is_quantized());
    assert_eq!(model.dim(), 16);
    assert_eq!(model.loss(), dj_fasttext::LossKind::HierarchicalSoftmax);
    assert!(model.labels().iter().any(|l| l == "__label__de"));
    assert!(model.predict("anything", 0, 0.0).is_empty());
}

#[test]
fn text_after_a_newline_is_ignored() {
    // Python refuses '\n'; fastText's line reader stops at the first one.
    let model = FastText::open(&fixtures().join("softmax.bin")).unwrap();
    for (with_newline, first_line) in [
        ("das ist gut\nthis is english", "das ist gut"),
        ("\nanything", ""),
        ("日本語\n", "日本語"),
    ] {
        assert_eq!(
            model.predict(with_newline, 5, 0.0),
            model.predict(first_line, 5, 0.0)
        );
    }
}

#[test]
fn large_k_means_all_labels() {
    let model = FastText::open(&fixtures().join("ova.bin")).unwrap();
    let n = model.labels().len();
    let all = model.predict("hello world", usize::MAX, 0.0);
    assert_eq!(all.len(), n);
    assert_eq!(model.predict("hello world", n, 0.0), all);
    assert_eq!(model.predict("hello world", n + 1, 0.0), all);
}
