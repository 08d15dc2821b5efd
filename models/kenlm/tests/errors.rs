//! Bad inputs: each must fail with a message naming the file and the place of the
//! problem, and corrupt model bodies must never panic while scoring.

use std::path::{Path, PathBuf};

use dj_kenlm::{KenlmError, Model};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A temporary directory for one test's files, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(test: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("dj-kenlm-{test}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn open_err(path: &Path) -> KenlmError {
    match Model::open(path) {
        Ok(m) => panic!("{} loaded ({m:?}) but should fail", path.display()),
        Err(e) => {
            let name = path.file_name().unwrap().to_str().unwrap();
            assert!(
                e.to_string().contains(name),
                "message does not name the file: {e}"
            );
            e
        }
    }
}

fn arpa_line(e: &KenlmError) -> usize {
    match e {
        KenlmError::Arpa { line, .. } => *line,
        other => panic!("expected an ARPA error, got {other:?}"),
    }
}

fn binary_message(e: KenlmError) -> String {
    match e {
        KenlmError::Binary { message, .. } => message,
        other => panic!("expected a binary-format error, got {other:?}"),
    }
}

const GOOD: &str = "\\data\\\nngram 1=4\nngram 2=2\n\n\\1-grams:\n-1\t<unk>\n-99\t<s>\t-0.5\n-0.5\t</s>\n-0.3\tword\t-0.2\n\n\\2-grams:\n-0.1\t<s> word\n-0.2\tword </s>\n\n\\end\\\n";

#[test]
fn good_handwritten_arpa_loads() {
    let tmp = Scratch::new("good_handwritten_arpa_loads");
    let model = Model::open(&tmp.file("good.arpa", GOOD.as_bytes())).unwrap();
    assert_eq!(model.order(), 2);
    // p(word | <s>) + p(</s> | word), summed in f32.
    assert_eq!(model.score("word", true, true), -0.1f32 + -0.2f32);
    // Unknown word: p(<unk>) + backoff(<s>), then p(</s>) with no backoff charged for <unk>.
    assert_eq!(
        model.score("zzz", true, true),
        (-1.0f32 + -0.5f32) + -0.5f32
    );
}

#[test]
fn bad_arpa_lines_report_their_line() {
    let tmp = Scratch::new("bad_arpa_lines_report_their_line");
    let cases: [(&str, &str, usize, &str); 7] = [
        ("bad_prob.arpa", "-0.3\tword\t-0.2\n", 9, "bad number"),
        ("no_tab.arpa", "-0.3 word\t-0.2\n", 9, "tab"),
        ("positive.arpa", "0.3\tword\t-0.2\n", 9, "positive"),
        ("bad_backoff.arpa", "-0.3\tword\t-0.2 x\n", 9, "newline"),
        ("unknown_word.arpa", "", 12, "not seen in the unigrams"),
        ("missing_end.arpa", "", 15, "\\end\\"),
        ("bad_header.arpa", "", 11, "2-grams"),
    ];
    for (name, replacement, line, needle) in cases {
        let text = match name {
            "bad_prob.arpa" => GOOD.replace("-0.3\tword\t-0.2\n", "abc\tword\t-0.2\n"),
            "unknown_word.arpa" => GOOD.replace("-0.1\t<s> word", "-0.1\t<s> nope"),
            "missing_end.arpa" => GOOD.replace("\\end\\", "\\ending\\"),
            "bad_header.arpa" => GOOD.replace("\\2-grams:", "\\3-grams:"),
            _ => GOOD.replace("-0.3\tword\t-0.2\n", replacement),
        };
        let err = open_err(&tmp.file(name, text.as_bytes()));
        assert_eq!(arpa_line(&err), line, "{name}: {err}");
        assert!(err.to_string().contains(needle), "{name}: {err}");
        assert!(
            err.to_string().contains(&format!("line {line}")),
            "{name}: {err}"
        );
    }
}

#[test]
fn kenlm_rejections_are_errors() {
    let tmp = Scratch::new("kenlm_rejections_are_errors");
    for (file, needle) in [
        ("tiny_order1.arpa", "bigram"),
        ("tiny_positive.arpa", "positive"),
        ("tiny_missing_context.arpa", "context"),
    ] {
        let err = open_err(&fixture(file));
        assert!(err.to_string().contains(needle), "{err}");
    }
    let no_eos = GOOD
        .replace("-0.5\t</s>\n", "-0.5\tend\n")
        .replace("word </s>", "word end");
    let err = open_err(&tmp.file("no_eos.arpa", no_eos.as_bytes()));
    assert!(err.to_string().contains("</s>"), "{err}");
    let err = open_err(&tmp.file("empty.arpa", b""));
    assert_eq!(arpa_line(&err), 1);
    let err = open_err(&tmp.file("gzip.arpa", &[0x1f, 0x8b, 8, 0, 0, 0]));
    assert!(err.to_string().contains("gzip"), "{err}");
}

#[test]
fn missing_file_is_io_error() {
    let err = Model::open(Path::new("/nonexistent/dir/model.bin")).unwrap_err();
    assert!(matches!(err, KenlmError::Io { .. }));
    assert!(err.to_string().contains("/nonexistent/dir/model.bin"));
}

#[test]
fn truncated_binaries_are_rejected() {
    let tmp = Scratch::new("truncated_binaries_are_rejected");
    for name in [
        "small.probing.bin",
        "small.trie.bin",
        "small.trie-q8.bin",
        "small.trie-a22.bin",
    ] {
        let bytes = std::fs::read(fixture(name)).unwrap();
        // (Cutting only the trailing vocabulary strings is tolerated, as kenlm does.)
        for keep in [100, 200, bytes.len() / 2, bytes.len() * 3 / 4] {
            let err = open_err(&tmp.file(&format!("trunc-{keep}-{name}"), &bytes[..keep]));
            let message = binary_message(err);
            assert!(
                message.contains("truncated") || message.contains("<unk>"),
                "{name} cut at {keep}: {message}"
            );
        }
    }
}

#[test]
fn wrong_magic_and_header_fields_are_rejected() {
    let tmp = Scratch::new("wrong_magic_and_header_fields_are_rejected");
    let bytes = std::fs::read(fixture("small.probing.bin")).unwrap();
    let mut old = bytes.clone();
    old[49] = b'4'; // "format version 5" -> 4
    assert!(binary_message(open_err(&tmp.file("v4.bin", &old))).contains("version 4"));

    let mut sanity = bytes.clone();
    sanity[60] ^= 0x40; // the 1.0f test value
    assert!(binary_message(open_err(&tmp.file("sanity.bin", &sanity))).contains("test values"));

    let mut incomplete = bytes.clone();
    incomplete[..46].copy_from_slice(b"mmap lm http://kheafield.com/code incomplete\n\0");
    assert!(
        binary_message(open_err(&tmp.file("incomplete.bin", &incomplete)))
            .contains("did not finish")
    );

    let mut kind = bytes.clone();
    kind[96] = 9; // model_type
    assert!(binary_message(open_err(&tmp.file("kind.bin", &kind))).contains("model_type = 9"));

    let mut multiplier = bytes.clone();
    multiplier[92..96].copy_from_slice(&0.5f32.to_le_bytes());
    assert!(
        binary_message(open_err(&tmp.file("mult.bin", &multiplier))).contains("probing_multiplier")
    );

    let mut order = bytes;
    order[88] = 7;
    assert!(binary_message(open_err(&tmp.file("order.bin", &order))).contains("order"));

    // Not binary at all: random text goes to the ARPA parser.
    let err = open_err(&tmp.file("junk.bin", b"hello there\nthis is not a model\n"));
    assert_eq!(arpa_line(&err), 1);
}

#[test]
fn corrupt_bodies_never_panic() {
    let tmp = Scratch::new("corrupt_bodies_never_panic");
    let sentences = [
        "the package provides a library",
        "qwzx",
        "",
        "a b c x y z the cat sat",
        "</s> <s> <unk>",
    ];
    let mut loaded = 0;
    for name in [
        "small.probing.bin",
        "small.trie.bin",
        "small.trie-q8.bin",
        "small.trie-a22.bin",
        "tiny_order5.trie-q4a4.bin",
        "tiny_pruned.probing.bin",
    ] {
        let clean = std::fs::read(fixture(name)).unwrap();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for round in 0..12 {
            let mut bytes = clean.clone();
            // Scribble over the body (past the header) with xorshift noise.
            for _ in 0..(bytes.len() / 50).max(8) {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let at = 140 + (state as usize) % (bytes.len() - 140);
                bytes[at] = (state >> 32) as u8;
            }
            let path = tmp.file(&format!("corrupt-{round}-{name}"), &bytes);
            if let Ok(model) = Model::open(&path) {
                loaded += 1;
                for s in sentences {
                    for (bos, eos) in [(true, true), (false, false)] {
                        let _ = model.score(s, bos, eos);
                    }
                }
            }
        }
    }
    assert!(
        loaded > 20,
        "only {loaded} corrupted models loaded; scoring was barely exercised"
    );
}
