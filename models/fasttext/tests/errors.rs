//! Bad files give descriptive errors, never panics: wrong magic, newer versions, unsupported
//! model kinds, and truncation at every position of a real model.

use std::path::{Path, PathBuf};

use dj_fasttext::{FastText, FastTextError};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn bytes(name: &str) -> Vec<u8> {
    std::fs::read(fixture(name)).unwrap()
}

#[test]
fn missing_file() {
    let err = FastText::open(Path::new("/nonexistent/lid.176.bin"))
        .err()
        .unwrap();
    assert!(matches!(err, FastTextError::Io { .. }));
    assert!(err.to_string().contains("/nonexistent/lid.176.bin"));
}

#[test]
fn empty_file() {
    let path = std::env::temp_dir().join(format!("dj-fasttext-empty-{}.bin", std::process::id()));
    std::fs::write(&path, b"").unwrap();
    let err = FastText::open(&path).err().unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(matches!(err, FastTextError::Truncated { .. }), "{err}");
    assert!(err.to_string().contains("magic"), "{err}");
}

#[test]
fn wrong_magic() {
    let mut b = bytes("ova_q.ftz");
    b[0] ^= 0xFF;
    let err = FastText::from_bytes(&b, Path::new("bad.bin"))
        .err()
        .unwrap();
    assert!(matches!(err, FastTextError::WrongMagic { .. }), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("bad.bin") && msg.contains("magic"), "{msg}");
    let err = FastText::from_bytes(b"hello world, not a model", Path::new("t.txt"))
        .err()
        .unwrap();
    assert!(matches!(err, FastTextError::WrongMagic { .. }), "{err}");
}

#[test]
fn newer_version() {
    let mut b = bytes("ova_q.ftz");
    b[4..8].copy_from_slice(&13i32.to_le_bytes());
    let err = FastText::from_bytes(&b, Path::new("v13.bin"))
        .err()
        .unwrap();
    assert!(
        matches!(err, FastTextError::UnsupportedVersion { found: 13, .. }),
        "{err}"
    );
}

#[test]
fn unsupervised_model() {
    let mut b = bytes("ova_q.ftz");
    // args.model is the 8th int32 after magic and version.
    let at = 8 + 7 * 4;
    assert_eq!(i32::from_le_bytes(b[at..at + 4].try_into().unwrap()), 3);
    b[at..at + 4].copy_from_slice(&2i32.to_le_bytes());
    let err = FastText::from_bytes(&b, Path::new("sg.bin")).err().unwrap();
    assert!(matches!(err, FastTextError::Unsupported { .. }), "{err}");
    assert!(err.to_string().contains("skipgram"), "{err}");
}

#[test]
fn truncated_everywhere() {
    // Every prefix of a small quantized model (exercises the dictionary, prune map,
    // quantizers and norms) and a sample of prefixes of a dense one.
    for (name, step) in [("ova_q.ftz", 3), ("hs.bin", 97)] {
        let b = bytes(name);
        for len in (0..b.len()).step_by(step) {
            let err = FastText::from_bytes(&b[..len], Path::new(name)).err();
            let err = err.unwrap_or_else(|| panic!("{name} cut at {len} loaded"));
            assert!(
                matches!(err, FastTextError::Truncated { .. }),
                "{name} cut at {len}: {err}"
            );
        }
        assert!(FastText::from_bytes(&b, Path::new(name)).is_ok());
    }
}

#[test]
fn truncation_names_the_field() {
    let b = bytes("lid.176.bin");
    let err = FastText::from_bytes(&b[..20], Path::new("lid.176.bin"))
        .err()
        .unwrap();
    assert!(err.to_string().contains("args.minCount"), "{err}");
    let err = FastText::from_bytes(&b[..b.len() - 1], Path::new("lid.176.bin"))
        .err()
        .unwrap();
    assert!(err.to_string().contains("output matrix data"), "{err}");
}

#[test]
fn corrupted_bytes_never_panic() {
    // Flip bytes all over the header, args and dictionary: loading may fail or succeed,
    // prediction on whatever loads must not panic.
    let b = bytes("ova_q.ftz");
    let mut loaded = 0;
    for pos in (0..b.len().min(4000)).step_by(7) {
        for v in [0u8, 0x7F, 0xFF] {
            let mut c = b.clone();
            c[pos] = v;
            if let Ok(m) = FastText::from_bytes(&c, Path::new("c.ftz")) {
                loaded += 1;
                let _ = m.predict("hello wörld 日本 __label__x </s>", 5, 0.0);
            }
        }
    }
    assert!(loaded > 0);
}
