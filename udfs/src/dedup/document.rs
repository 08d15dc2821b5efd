//! `document_deduplicator`: exact dedup on the MD5 of the (optionally normalized) text.

use std::borrow::Cow;
use std::sync::Arc;

use md5::{Digest, Md5};
use serde_json::json;

use super::md5x16::md5_many;
use crate::columns::HASH_COLUMN;
use crate::operator::{DedupOp, Operator};
use crate::params::{ParamError, ParamSpec, ParamType, Params};
use crate::spec::{ModelUse, OpKind, OpSpec};
use crate::text::{is_regex_space, py_lower, py_strip, regex_digit};
use crate::udf::{OpUdf, TextMapper, UdfIdentity};

/// Lower-case hex MD5 of the UTF-8 bytes of `s` (Python `hashlib.md5(s.encode()).hexdigest()`).
pub(crate) fn md5_hex(s: &str) -> String {
    hex(&Md5::digest(s.as_bytes()))
}

/// Lower-case hex of a digest (Python's `hexdigest()`).
pub(crate) fn hex(digest: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(2 * digest.len());
    for b in digest {
        out.push(HEX[(b >> 4) as usize] as char);
        out.push(HEX[(b & 15) as usize] as char);
    }
    out
}

/// Whether `\s+|\d+|[<string.punctuation>]` (the `regex` module's Unicode `\s` and `\d`) matches
/// the character; deleting every such match deletes exactly these characters.
#[inline]
fn is_non_character(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_punctuation() || c.is_ascii_digit() || is_regex_space(c)
    } else {
        is_regex_space(c) || regex_digit().contains(c)
    }
}

/// The text Data-Juicer hashes: optionally Python `str.lower()`, optionally with every whitespace
/// run, digit run and ASCII punctuation character removed, then Python `str.strip()`.
pub(crate) fn normalize_for_hash(
    text: &str,
    lowercase: bool,
    ignore_non_character: bool,
) -> Cow<'_, str> {
    let text = if lowercase {
        py_lower(text)
    } else {
        Cow::Borrowed(text)
    };
    let text = if ignore_non_character && text.chars().any(is_non_character) {
        Cow::Owned(text.chars().filter(|&c| !is_non_character(c)).collect())
    } else {
        text
    };
    match text {
        Cow::Borrowed(b) => Cow::Borrowed(py_strip(b)),
        Cow::Owned(o) => {
            let s = py_strip(&o);
            if s.len() == o.len() {
                Cow::Owned(o)
            } else {
                Cow::Owned(s.to_string())
            }
        }
    }
}

/// `DocumentDeduplicator.compute_hash`: MD5 hex of [`normalize_for_hash`].
pub(crate) fn document_hash(text: &str, lowercase: bool, ignore_non_character: bool) -> String {
    md5_hex(&normalize_for_hash(text, lowercase, ignore_non_character))
}

#[derive(Debug)]
struct DocumentHash {
    lowercase: bool,
    ignore_non_character: bool,
}

impl TextMapper for DocumentHash {
    fn map<'a>(&self, text: &'a str) -> Cow<'a, str> {
        Cow::Owned(document_hash(
            text,
            self.lowercase,
            self.ignore_non_character,
        ))
    }

    /// All rows' MD5s at once, sixteen per vector pass ([`md5_many`]).
    fn map_batch(&self, texts: &[Option<&str>]) -> Option<Vec<Option<String>>> {
        let normalized: Vec<Cow<'_, str>> = texts
            .iter()
            .flatten()
            .map(|t| normalize_for_hash(t, self.lowercase, self.ignore_non_character))
            .collect();
        let bytes: Vec<&[u8]> = normalized.iter().map(|t| t.as_bytes()).collect();
        let mut digests = md5_many(&bytes).into_iter();
        Some(
            texts
                .iter()
                .map(|t| t.and_then(|_| digests.next()).map(|d| hex(&d)))
                .collect(),
        )
    }
}

pub(crate) fn document_deduplicator_spec() -> OpSpec {
    OpSpec {
        name: "document_deduplicator",
        kind: OpKind::Deduplicator,
        model_use: ModelUse::None,
        params: || {
            vec![
                ParamSpec::new(
                    "lowercase",
                    ParamType::Bool,
                    json!(false),
                    "lower-case the text before hashing",
                ),
                ParamSpec::new(
                    "ignore_non_character",
                    ParamType::Bool,
                    json!(false),
                    "ignore whitespace, digits and ASCII punctuation when hashing",
                ),
            ]
        },
        build: build_document_deduplicator,
        doc: "Exact document dedup: keep the first sample of each MD5 of the (optionally \
              lower-cased, non-character-stripped) text.",
    }
}

fn build_document_deduplicator(p: &Params) -> Result<Operator, ParamError> {
    let id = UdfIdentity::of(p, "");
    let hash = DocumentHash {
        lowercase: p.bool("lowercase"),
        ignore_non_character: p.bool("ignore_non_character"),
    };
    Ok(Operator::Deduplicator(DedupOp {
        hash_column: HASH_COLUMN,
        hash_udf: OpUdf::mapper(id, Arc::new(hash)),
        kind: crate::DedupKind::Exact,
        reads: crate::DedupReads::Text,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{build, map_texts};
    use serde_json::json;

    const MODES: [(bool, bool); 4] = [(false, false), (true, false), (false, true), (true, true)];

    /// (text, DocumentDeduplicator(lowercase, ignore_non_character).compute_hash for the four
    /// MODES), Data-Juicer 1.6.1.
    const CASES: &[(&str, [&str; 4])] = &[
        (
            "",
            [
                "d41d8cd98f00b204e9800998ecf8427e",
                "d41d8cd98f00b204e9800998ecf8427e",
                "d41d8cd98f00b204e9800998ecf8427e",
                "d41d8cd98f00b204e9800998ecf8427e",
            ],
        ),
        (
            "   ",
            [
                "d41d8cd98f00b204e9800998ecf8427e",
                "d41d8cd98f00b204e9800998ecf8427e",
                "d41d8cd98f00b204e9800998ecf8427e",
                "d41d8cd98f00b204e9800998ecf8427e",
            ],
        ),
        (
            "Hello World",
            [
                "b10a8db164e0754105b7a99be72e3fe5",
                "5eb63bbbe01eeed093cb22bb8f5acdc3",
                "68e109f0f40ca72a15e05cc22786f8e6",
                "fc5e038d38a57032085441e7fe7010b0",
            ],
        ),
        (
            "hello world",
            [
                "5eb63bbbe01eeed093cb22bb8f5acdc3",
                "5eb63bbbe01eeed093cb22bb8f5acdc3",
                "fc5e038d38a57032085441e7fe7010b0",
                "fc5e038d38a57032085441e7fe7010b0",
            ],
        ),
        (
            " Hello World\n",
            [
                "b10a8db164e0754105b7a99be72e3fe5",
                "5eb63bbbe01eeed093cb22bb8f5acdc3",
                "68e109f0f40ca72a15e05cc22786f8e6",
                "fc5e038d38a57032085441e7fe7010b0",
            ],
        ),
        (
            "HELLO, WORLD!!!",
            [
                "07c8c4dd78473345b27ee72ed68bc903",
                "df225e3e7edfa95a7645b42f3f5eb27c",
                "e81e26d88d62aba9ab55b632f25f117d",
                "fc5e038d38a57032085441e7fe7010b0",
            ],
        ),
        (
            "Hello 123 World",
            [
                "d2e74159c98ebff0e216a103d3a0d2d6",
                "bdcf33e6dce868a580cbc6686476c4e7",
                "68e109f0f40ca72a15e05cc22786f8e6",
                "fc5e038d38a57032085441e7fe7010b0",
            ],
        ),
        (
            "数据处理",
            [
                "cfc089f7d2c4bd1de60b70fd7f8fd40a",
                "cfc089f7d2c4bd1de60b70fd7f8fd40a",
                "cfc089f7d2c4bd1de60b70fd7f8fd40a",
                "cfc089f7d2c4bd1de60b70fd7f8fd40a",
            ],
        ),
        (
            "数据 处理 ２０２４",
            [
                "74a3c5af7963f1c0e11254a112c395d1",
                "74a3c5af7963f1c0e11254a112c395d1",
                "cfc089f7d2c4bd1de60b70fd7f8fd40a",
                "cfc089f7d2c4bd1de60b70fd7f8fd40a",
            ],
        ),
        (
            "\u{130}stanbul ΣΑΣ",
            [
                "709218bd5174d6a6301713a9b35a72a3",
                "45a6b66728d30759052348e02b2c4811",
                "4914d985dcfdc25bdb7cac8d0a3bb524",
                "3d793c5c9a4299c987884cb1a0145392",
            ],
        ),
        (
            "x\u{1c}y\u{1f}",
            [
                "23b62264f63b53089ab60ff3bbad2c66",
                "23b62264f63b53089ab60ff3bbad2c66",
                "23b62264f63b53089ab60ff3bbad2c66",
                "23b62264f63b53089ab60ff3bbad2c66",
            ],
        ),
        (
            "\u{1c}\u{1d}pad\u{1e}\u{1f}",
            [
                "4dca00da67c692296690e90c50c96b79",
                "4dca00da67c692296690e90c50c96b79",
                "4dca00da67c692296690e90c50c96b79",
                "4dca00da67c692296690e90c50c96b79",
            ],
        ),
        (
            "e\u{301}\u{a0}\u{3000}tab\tnl\n",
            [
                "2c5d9ecece90e48c46aa1c085304a5ec",
                "2c5d9ecece90e48c46aa1c085304a5ec",
                "84bbac7494ebdada54aec65b16c85c92",
                "84bbac7494ebdada54aec65b16c85c92",
            ],
        ),
        (
            "١٢٣abc٣",
            [
                "faa442f408bdc773177f0b42571290df",
                "faa442f408bdc773177f0b42571290df",
                "900150983cd24fb0d6963f7d28e17f72",
                "900150983cd24fb0d6963f7d28e17f72",
            ],
        ),
        (
            "a_b-c.d",
            [
                "715d067d89589a56ca6195055c1ab2db",
                "715d067d89589a56ca6195055c1ab2db",
                "e2fc714c4727ee9395f324cd2e7f331f",
                "e2fc714c4727ee9395f324cd2e7f331f",
            ],
        ),
        (
            "‘’“”…",
            [
                "eb5be10a3a2657b49e98bc49dba366a9",
                "eb5be10a3a2657b49e98bc49dba366a9",
                "eb5be10a3a2657b49e98bc49dba366a9",
                "eb5be10a3a2657b49e98bc49dba366a9",
            ],
        ),
        (
            "\u{11bf0}\u{16d70} new digits",
            [
                "99765c6515d731c773f8a7ddc5c214fe",
                "99765c6515d731c773f8a7ddc5c214fe",
                "ca661940f512b64bdef2b9c96b57285b",
                "ca661940f512b64bdef2b9c96b57285b",
            ],
        ),
        (
            "\u{11de0}\u{11de9} unicode 17 digits",
            [
                "fcc6a43225f24b2b6c453af6e36acda8",
                "fcc6a43225f24b2b6c453af6e36acda8",
                "d2af6c48b46740d544b94d520bf3f3e7",
                "d2af6c48b46740d544b94d520bf3f3e7",
            ],
        ),
        (
            "ABC\u{1c89}D",
            [
                "96c5869f8969c32604e6b30ed90de40b",
                "bf5f4ff3ee0c333c92e1532979b4637f",
                "96c5869f8969c32604e6b30ed90de40b",
                "bf5f4ff3ee0c333c92e1532979b4637f",
            ],
        ),
        (
            "😀 Emoji 😀",
            [
                "f3fa2384923c322573c842b50b08dde0",
                "cdcc885b468b2725a3361ca07165f179",
                "ad496d018904108c45fdac730f4d403d",
                "e6cae3905e008f8a73c3d92098cdf270",
            ],
        ),
        (
            "ΌΣΟΣ σ ΣΑ",
            [
                "c74313a4966670171cffdf7b4e52a3c0",
                "5512cad22d8abefdb37fa285ec242a1b",
                "87d5ad2f835c8ee50f471919a4c8b136",
                "f9233f09bc0bda8cbced90218d961fc2",
            ],
        ),
        (
            "ﬁ ß ẞ",
            [
                "25ba4a2ac208597b0450d3044b721fc2",
                "bc34e8fa8efdc779029566a17abb4cbb",
                "8c1abf0037736bcc24e8eb6b2694fade",
                "0aaa8a85014359bc1570589f6db609a7",
            ],
        ),
        (
            "Ⅷ½²",
            [
                "d168d5311b8c3708ea334ce811d2c0c3",
                "41eae6c08695f14284ba8915a91b35cd",
                "d168d5311b8c3708ea334ce811d2c0c3",
                "41eae6c08695f14284ba8915a91b35cd",
            ],
        ),
        (
            "\u{200b}zw\u{200b}",
            [
                "de04c44206e631d7361f8f739d775157",
                "de04c44206e631d7361f8f739d775157",
                "de04c44206e631d7361f8f739d775157",
                "de04c44206e631d7361f8f739d775157",
            ],
        ),
        (
            "\u{2028}\u{2029}\u{85} ends",
            [
                "31c392473637538a57de1321641f2e27",
                "31c392473637538a57de1321641f2e27",
                "31c392473637538a57de1321641f2e27",
                "31c392473637538a57de1321641f2e27",
            ],
        ),
    ];

    #[test]
    fn hashes_match_data_juicer() {
        for (text, want) in CASES {
            for ((lower, ignore), want) in MODES.iter().zip(want) {
                assert_eq!(
                    document_hash(text, *lower, *ignore),
                    *want,
                    "lowercase={lower} ignore={ignore} {text:?}"
                );
            }
        }
    }

    #[test]
    fn long_texts() {
        let want: [[&str; 3]; 4] = [
            [
                "3c7f5e6aa8e380b6bcf5632a4ccbffca",
                "933451e6a9a4ec5edc13110b123b98ba",
                "d5816f35916d1d9482fb0f1ec201101d",
            ],
            [
                "3c7f5e6aa8e380b6bcf5632a4ccbffca",
                "933451e6a9a4ec5edc13110b123b98ba",
                "d5816f35916d1d9482fb0f1ec201101d",
            ],
            [
                "670599b646ccb2d4ac7b1256ae09cd8f",
                "933451e6a9a4ec5edc13110b123b98ba",
                "d5816f35916d1d9482fb0f1ec201101d",
            ],
            [
                "670599b646ccb2d4ac7b1256ae09cd8f",
                "933451e6a9a4ec5edc13110b123b98ba",
                "d5816f35916d1d9482fb0f1ec201101d",
            ],
        ];
        let bigs = crate::test_support::big_texts();
        for ((lower, ignore), want) in MODES.iter().zip(want) {
            for (text, want) in bigs.iter().zip(want) {
                assert_eq!(document_hash(text, *lower, *ignore), want);
            }
        }
    }

    #[test]
    fn normalization() {
        assert!(matches!(
            normalize_for_hash(" a ", false, false),
            Cow::Borrowed("a")
        ));
        assert_eq!(
            normalize_for_hash("Hello, World 42!", true, true),
            "helloworld"
        );
        // U+001C survives the \s removal (not \s in the regex module) and then str.strip() drops it.
        assert_eq!(normalize_for_hash("\u{1c}a b\u{1c}", false, true), "ab");
        assert_eq!(md5_hex(""), "d41d8cd98f00b204e9800998ecf8427e");
    }

    /// A column long enough for the vector lanes, with nulls, hashes row by row as one text.
    #[test]
    fn batch_hashes_equal_row_hashes() {
        let texts: Vec<String> = (0..70)
            .map(|i| format!(" Text {i} ").repeat(i * 7))
            .collect();
        let column: Vec<Option<&str>> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| (i % 9 != 4).then_some(t.as_str()))
            .collect();
        for (lowercase, ignore) in MODES {
            let params = json!({"lowercase": lowercase, "ignore_non_character": ignore});
            let op = build("document_deduplicator", params).unwrap();
            let want: Vec<Option<String>> = column
                .iter()
                .map(|t| t.map(|t| document_hash(t, lowercase, ignore)))
                .collect();
            assert_eq!(map_texts(&op, &column), want);
        }
    }

    #[test]
    fn through_udf_and_params() {
        let op = build("document_deduplicator", json!({"lowercase": true})).unwrap();
        let Operator::Deduplicator(d) = &op else {
            panic!()
        };
        assert_eq!(d.hash_column, "__dj__hash");
        let out = map_texts(&op, &[Some("Hello World"), Some("hello world "), None]);
        assert_eq!(
            out,
            vec![
                Some("5eb63bbbe01eeed093cb22bb8f5acdc3".to_string()),
                Some("5eb63bbbe01eeed093cb22bb8f5acdc3".to_string()),
                None
            ]
        );
        let e = build("document_deduplicator", json!({"lowercase": "yes"})).unwrap_err();
        assert!(matches!(e, ParamError::WrongType { .. }));
        let e = build(
            "document_deduplicator",
            json!({"ignore_non_characters": true}),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown parameter `ignore_non_characters` of document_deduplicator; did you mean ignore_non_character?"
        );
        // Filter-only base params are not accepted by a deduplicator.
        assert!(build("document_deduplicator", json!({"reversed_range": true})).is_err());
    }
}
