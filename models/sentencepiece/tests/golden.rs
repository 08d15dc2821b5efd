//! Exact agreement with the Python `sentencepiece` module on every fixture model.
//! Fixtures and `golden.json` come from `fixtures/make_fixtures.py`.

use std::path::{Path, PathBuf};

use dj_sentencepiece::{NO_PIECE_ID, Pieces, SentencePiece};
use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn golden() -> Value {
    let text = std::fs::read_to_string(fixtures().join("golden.json")).expect("golden.json");
    serde_json::from_str(&text).expect("golden.json parses")
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|s| s.as_str().expect("string").to_string())
        .collect()
}

/// FNV-1a 64 over the pieces joined by NUL, as `fnv1a64` in make_fixtures.py.
fn fnv1a64(pieces: &[String]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (i, piece) in pieces.iter().enumerate() {
        let sep: &[u8] = if i == 0 { b"" } else { b"\0" };
        for &b in sep.iter().chain(piece.as_bytes()) {
            h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// Long documents (past the unigram score re-basing threshold) are compared by piece
/// count and digest, to keep golden.json small.
fn check_long_documents(golden: &Value, name: &str, sp: &SentencePiece) -> Vec<String> {
    let texts = strings(&golden["long_texts"]);
    let expected = golden["long_models"][name]
        .as_array()
        .expect("long_models entry");
    assert_eq!(texts.len(), expected.len());
    let mut failures = Vec::new();
    for (i, (text, want)) in texts.iter().zip(expected).enumerate() {
        let got = sp.encode_as_pieces(text);
        let got = (got.len() as u64, fnv1a64(&got));
        let want = (
            want[0].as_u64().unwrap(),
            want[1].as_str().unwrap().to_string(),
        );
        if got != want {
            failures.push(format!("long text {i}: want {want:?}, got {got:?}"));
        }
    }
    failures
}

/// Checks one model against its golden outputs; returns the number of cases compared.
fn check_model(name: &str) -> usize {
    let golden = golden();
    let texts = strings(&golden["texts"]);
    let expected = golden["models"][name]
        .as_array()
        .unwrap_or_else(|| panic!("{name} missing from golden.json"));
    assert_eq!(expected.len(), texts.len());
    let sp = SentencePiece::open(&fixtures().join(name)).expect("model loads");
    let mut failures = Vec::new();
    let mut reused = Vec::new();
    let mut joined = Pieces::default();
    let (mut texts_of_ids, mut with_id) = (std::collections::HashMap::new(), 0usize);
    for (text, want) in texts.iter().zip(expected) {
        let want = strings(want);
        let got = sp.encode_as_pieces(text);
        if got != want {
            failures.push(format!("text {text:?}\n  want {want:?}\n  got  {got:?}"));
        }
        // The buffer-reusing entry point appends the same pieces.
        reused.clear();
        reused.push("sentinel".to_string());
        sp.encode_into(text, &mut reused);
        assert_eq!(reused[1..], got[..], "encode_into differs for {text:?}");
        // Piece ids: one per piece, and one id always names one text.
        joined.clear();
        sp.encode_joined(text, &mut joined);
        assert_eq!(joined.ids.len(), got.len(), "{name}: ids of {text:?}");
        for (piece, &id) in joined.iter().zip(&joined.ids) {
            if id != NO_PIECE_ID {
                with_id += 1;
                let known = texts_of_ids.entry(id).or_insert_with(|| piece.to_string());
                assert_eq!(known, piece, "{name}: id {id} names two texts");
            }
        }
    }
    assert!(with_id > 0, "{name}: no piece carries its id");
    failures.extend(check_long_documents(&golden, name, &sp));
    assert!(
        failures.is_empty(),
        "{name}: {} of {} cases differ:\n{}",
        failures.len(),
        texts.len(),
        failures
            .iter()
            .take(5)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    texts.len()
}

macro_rules! golden_tests {
    ($($test:ident => $file:literal,)*) => {
        $(#[test]
        fn $test() {
            assert!(check_model($file) > 300);
        })*

        #[test]
        fn every_fixture_model_has_a_test() {
            let golden = golden();
            let mut in_golden: Vec<&str> =
                golden["models"].as_object().unwrap().keys().map(String::as_str).collect();
            in_golden.sort();
            let mut tested = vec![$($file),*];
            tested.sort();
            assert_eq!(in_golden, tested);
        }
    };
}

golden_tests! {
    en_unigram_nmt_nfkc => "en.sp.model",
    zh_unigram_cjk => "zh.sp.model",
    bpe => "bpe.sp.model",
    bpe_byte_fallback_user_symbols => "bpe_byte_fallback.sp.model",
    unigram_byte_fallback => "byte_fallback.sp.model",
    identity_normalization => "identity.sp.model",
    keep_whitespace_no_dummy_prefix => "nows.sp.model",
    split_digits => "digits.sp.model",
    user_defined_symbols => "user.sp.model",
    nmt_nfkc_cf => "nfkc_cf.sp.model",
    whitespace_as_suffix => "suffix.sp.model",
    unescaped_whitespace => "noescape.sp.model",
    char_model => "char.sp.model",
    word_model => "word.sp.model",
    unigram_unused_pieces => "unused.sp.model",
    bpe_unused_pieces_resegmented => "bpe_unused.sp.model",
}

#[test]
fn shared_across_threads() {
    let sp = std::sync::Arc::new(SentencePiece::open(&fixtures().join("en.sp.model")).unwrap());
    let want = sp.encode_as_pieces("Hello world, this is a test.");
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let sp = sp.clone();
            std::thread::spawn(move || sp.encode_as_pieces("Hello world, this is a test."))
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), want);
    }
}

/// Differential check against a file written by the Python module, for ad-hoc fuzzing:
/// `SP_DIFF_JSON=/path/cases.json cargo test -p dj-sentencepiece --test golden -- --ignored`,
/// where the file holds `{"texts": [...], "models": {fixture name: [[piece, ...], ...]}}`.
#[test]
#[ignore = "needs SP_DIFF_JSON"]
fn differential_from_env() {
    let path = std::env::var("SP_DIFF_JSON").expect("SP_DIFF_JSON");
    let cases: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let texts = strings(&cases["texts"]);
    let mut bad = 0;
    for (name, outputs) in cases["models"].as_object().unwrap() {
        let sp = SentencePiece::open(&fixtures().join(name)).unwrap();
        for (text, want) in texts.iter().zip(outputs.as_array().unwrap()) {
            let (want, got) = (strings(want), sp.encode_as_pieces(text));
            if want != got {
                bad += 1;
                eprintln!("{name}: {text:?}\n  want {want:?}\n  got  {got:?}");
            }
        }
    }
    assert_eq!(bad, 0);
}
