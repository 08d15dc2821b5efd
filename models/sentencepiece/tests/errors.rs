//! Loading failures: missing, empty, truncated, corrupted and non-model files give errors
//! that name the file, never panics.

use std::path::{Path, PathBuf};

use dj_sentencepiece::{SentencePiece, SentencePieceError};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn write_temp(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dj-sentencepiece-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn load_err(name: &str, bytes: &[u8]) -> (SentencePieceError, String) {
    let path = write_temp(name, bytes);
    let err = match SentencePiece::open(&path) {
        Ok(_) => panic!("{name} unexpectedly loaded"),
        Err(e) => e,
    };
    let msg = err.to_string();
    assert!(msg.contains(name), "error does not name the file: {msg}");
    (err, msg)
}

#[test]
fn missing_file() {
    let err = SentencePiece::open(Path::new("/nonexistent/dir/en.sp.model"))
        .err()
        .unwrap();
    assert!(matches!(err, SentencePieceError::Io { .. }));
    assert!(err.to_string().contains("/nonexistent/dir/en.sp.model"));
}

#[test]
fn empty_file() {
    let (err, msg) = load_err("empty.model", b"");
    assert!(matches!(err, SentencePieceError::NotAModel { .. }), "{msg}");
}

#[test]
fn text_file_is_not_a_model() {
    let (err, msg) = load_err("readme.model", b"This is just a text file.\nNot a model.\n");
    assert!(matches!(err, SentencePieceError::NotAModel { .. }), "{msg}");
    let (err, msg) = load_err("json.model", br#"{"vocab": ["a", "b"]}"#);
    assert!(matches!(err, SentencePieceError::NotAModel { .. }), "{msg}");
}

#[test]
fn truncated_models() {
    let bytes = std::fs::read(fixture("en.sp.model")).unwrap();
    for cut in [
        1,
        2,
        7,
        100,
        bytes.len() / 3,
        bytes.len() / 2,
        bytes.len() - 1,
    ] {
        let (_, msg) = load_err("truncated.model", &bytes[..cut]);
        assert!(msg.contains("truncated.model"), "{msg}");
    }
}

#[test]
fn unsupported_model_type() {
    // trainer_spec { model_type: 9 } appended; the later value wins.
    let mut bytes = std::fs::read(fixture("en.sp.model")).unwrap();
    bytes.extend_from_slice(&[0x12, 0x02, 0x18, 0x09]);
    let (err, msg) = load_err("type9.model", &bytes);
    assert!(
        matches!(
            err,
            SentencePieceError::UnsupportedModelType { model_type: 9, .. }
        ),
        "{msg}"
    );
}

#[test]
fn byte_fallback_without_byte_pieces_is_invalid() {
    // trainer_spec { byte_fallback: true } on a model that has no <0xHH> pieces.
    let mut bytes = std::fs::read(fixture("en.sp.model")).unwrap();
    bytes.extend_from_slice(&[0x12, 0x03, 0x98, 0x02, 0x01]);
    let (err, msg) = load_err("nobytes.model", &bytes);
    assert!(
        matches!(err, SentencePieceError::InvalidModel { .. }),
        "{msg}"
    );
    assert!(msg.contains("byte"), "{msg}");
}

#[test]
fn duplicate_piece_is_invalid() {
    // pieces { piece: "<unk>" type: UNKNOWN } twice.
    let piece = [
        0x0a, 0x09, 0x0a, 0x05, b'<', b'u', b'n', b'k', b'>', 0x18, 0x02,
    ];
    let bytes = [piece, piece].concat();
    let err = SentencePiece::from_bytes(&bytes).err().unwrap();
    assert!(
        matches!(err, SentencePieceError::InvalidModel { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("<bytes>"), "{err}");
}

#[test]
fn corrupted_models_never_panic() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for i in 0..120 {
        let name = ["bpe_byte_fallback.sp.model", "en.sp.model", "user.sp.model"][i % 3];
        let bytes = std::fs::read(fixture(name)).unwrap();
        let mut copy = bytes.clone();
        for _ in 0..8 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let at = (state % copy.len() as u64) as usize;
            copy[at] = (state >> 32) as u8;
        }
        if let Ok(sp) = SentencePiece::from_bytes(&copy) {
            let _ = sp.encode_as_pieces("Hello wörld ｆｕｌｌ 日本語 😀 \u{3000} 123");
        }
    }
}

#[test]
fn non_finite_unigram_score_is_invalid() {
    // An extra piece { piece: "zzq" score: NaN } appended to a unigram model.
    let mut bytes = std::fs::read(fixture("en.sp.model")).unwrap();
    let mut piece = vec![0x0a, 3, b'z', b'z', b'q', 0x15];
    piece.extend_from_slice(&f32::NAN.to_le_bytes());
    bytes.extend_from_slice(&[0x0a, piece.len() as u8]);
    bytes.extend_from_slice(&piece);
    let (err, msg) = load_err("nan.model", &bytes);
    assert!(
        matches!(err, SentencePieceError::InvalidModel { .. }),
        "{msg}"
    );
    assert!(msg.contains("NaN"), "{msg}");
}

#[test]
fn corrupt_charsmap_is_invalid() {
    // normalizer_spec { precompiled_charsmap: <header claiming a 1024-byte trie, 8 bytes> }
    let mut bytes = std::fs::read(fixture("identity.sp.model")).unwrap();
    let blob = [0x00, 0x04, 0x00, 0x00, 1, 2, 3, 4];
    bytes.extend_from_slice(&[0x1a, 10, 0x12, 8]);
    bytes.extend_from_slice(&blob);
    let (err, msg) = load_err("charsmap.model", &bytes);
    assert!(
        matches!(err, SentencePieceError::InvalidModel { .. }),
        "{msg}"
    );
    assert!(msg.contains("charsmap"), "{msg}");
}

#[test]
fn messages_are_descriptive() {
    let (_, msg) = load_err("words.model", b"just some words");
    assert!(msg.contains("is not a SentencePiece model"), "{msg}");
    let bytes = std::fs::read(fixture("en.sp.model")).unwrap();
    let (_, msg) = load_err("cut.model", &bytes[..bytes.len() / 2]);
    assert!(msg.contains("truncated"), "{msg}");
}
