//! `perplexity_filter`: the KenLM perplexity of the text's SentencePiece pieces (stat
//! `perplexity`, rounded to 0.1 as Data-Juicer does), keeping samples within [min_ppl, max_ppl].

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use dj_sentencepiece::Pieces;
use serde_json::json;

use crate::filter::build_filter;
use crate::models::{self, KenLm, SentencePiece, with_piece_view};
use crate::operator::Operator;
use crate::params::{ParamError, ParamSpec, ParamType, Params};
use crate::spec::{ModelUse, OpKind, OpSpec};
use crate::text::{is_py_space, py_lines};
use crate::udf::{StatType, StatValue, TextStat};

pub(crate) fn perplexity_spec() -> OpSpec {
    OpSpec {
        name: "perplexity_filter",
        kind: OpKind::Filter,
        model_use: ModelUse::Always,
        params: || {
            vec![
                ParamSpec::new(
                    "lang",
                    ParamType::Str,
                    json!("en"),
                    "language of the {lang}.sp.model and {lang}.arpa.bin models",
                ),
                ParamSpec::new("min_ppl", ParamType::Float, json!(0), "minimum perplexity"),
                ParamSpec::new(
                    "max_ppl",
                    ParamType::Float,
                    json!(1500),
                    "maximum perplexity",
                ),
            ]
        },
        build: build_perplexity,
        doc: "Keep samples whose KenLM ({lang}.arpa.bin) perplexity over their SentencePiece \
              ({lang}.sp.model) pieces is within [min_ppl, max_ppl]; stat perplexity.",
    }
}

/// Python `round(x, 1)`: the nearest double to the correctly rounded one-decimal value of `x`
/// (ties to even on the exact binary value, as Python's dtoa-based rounding does).
pub(crate) fn py_round1(x: f64) -> f64 {
    if !x.is_finite() {
        return x;
    }
    format!("{x:.1}").parse().unwrap_or(x)
}

/// The perplexity filter's models, and which KenLM word each SentencePiece piece is.
#[derive(Debug)]
pub(crate) struct Perplexity {
    sp: Arc<SentencePiece>,
    lm: Arc<KenLm>,
    /// By piece id: the KenLM id of the piece's text, [`NOT_ONE_WORD`], or [`NOT_YET`].
    /// Filled as pieces are met (a fill is idempotent, so racing threads agree).
    words: Box<[AtomicU32]>,
}

const NOT_YET: u32 = u32::MAX;
/// A piece that is not exactly one word of a one-line text (empty, or holding a space, a line
/// boundary or a NUL): the text goes the way Data-Juicer's code reads.
const NOT_ONE_WORD: u32 = u32::MAX - 1;

impl Perplexity {
    /// `sp` must come from the process's model cache (see [`with_piece_view`]).
    pub(crate) fn new(sp: Arc<SentencePiece>, lm: Arc<KenLm>) -> Perplexity {
        let words = (0..sp.piece_count())
            .map(|_| AtomicU32::new(NOT_YET))
            .collect();
        Perplexity { sp, lm, words }
    }

    /// Data-Juicer's perplexity: the pieces joined by spaces, scored line by line
    /// (`str.splitlines()`) with sentence boundaries; the summed log10 probability over the
    /// number of words plus one end-of-sentence per line; `10 ** (-logits / length)` rounded to
    /// 0.1, 0.0 when there are no lines.
    ///
    /// When every piece is one word (almost always: the normalizer turns spaces into U+2581),
    /// the joined text is one line whose words are the pieces, so the pieces' KenLM ids, looked
    /// up once per piece id, are scored directly: the same sum without joining, splitting and
    /// hashing the words.
    pub(crate) fn perplexity(&self, text: &str) -> f64 {
        thread_local! {
            static IDS: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
        }
        with_piece_view(&self.sp, text, |pieces| {
            let by_ids = IDS.with(|cell| {
                let ids = &mut *cell.borrow_mut();
                let logits = self.score_words(pieces, ids);
                let words = ids.len();
                if ids.capacity() > 1 << 20 {
                    // A huge document's ids are not kept for the short ones after it.
                    *ids = Vec::new();
                }
                logits.map(|logits| match words {
                    0 => 0.0,
                    _ => py_round1(10f64.powf(-logits / (words as u64 + 1) as f64)),
                })
            });
            by_ids.unwrap_or_else(|| self.perplexity_of_joined(pieces.iter()))
        })
    }

    /// The log10 probability of the pieces as one sentence, their KenLM ids left in `ids`;
    /// `None` when some piece is not one word.
    fn score_words(&self, pieces: &Pieces, ids: &mut Vec<u32>) -> Option<f64> {
        ids.clear();
        for (piece, &sp_id) in pieces.iter().zip(&pieces.ids) {
            let word = match self.words.get(sp_id as usize) {
                Some(slot) => match slot.load(Ordering::Relaxed) {
                    NOT_YET => {
                        let word = self.word_of(piece);
                        slot.store(word, Ordering::Relaxed);
                        word
                    }
                    word => word,
                },
                None => self.word_of(piece),
            };
            if word == NOT_ONE_WORD {
                return None;
            }
            ids.push(word);
        }
        Some(self.lm.score_ids(ids, true, true) as f64)
    }

    fn word_of(&self, piece: &str) -> u32 {
        if piece.is_empty() || piece.contains('\0') || piece.chars().any(is_py_space) {
            NOT_ONE_WORD
        } else {
            self.lm.index(piece.as_bytes())
        }
    }

    /// Data-Juicer's code as it reads: join, split lines, score each.
    fn perplexity_of_joined<'a>(&self, pieces: impl Iterator<Item = &'a str>) -> f64 {
        let mut joined = String::new();
        for (i, p) in pieces.enumerate() {
            if i > 0 {
                joined.push(' ');
            }
            joined.push_str(p);
        }
        let (mut logits, mut length) = (0.0f64, 0u64);
        for line in py_lines(&joined) {
            logits += self.lm.score(line, true, true) as f64;
            length += line.split(is_py_space).filter(|w| !w.is_empty()).count() as u64 + 1;
        }
        if length == 0 {
            return 0.0;
        }
        py_round1(10f64.powf(-logits / length as f64))
    }
}

impl TextStat for Perplexity {
    fn stat_type(&self) -> StatType {
        StatType::Float64
    }
    fn compute(&self, text: &str) -> StatValue {
        StatValue::Float(self.perplexity(text))
    }
}

fn build_perplexity(p: &Params) -> Result<Operator, ParamError> {
    let lang = p
        .str("lang")
        .ok_or_else(|| p.invalid("lang", "must be a language name, got null"))?;
    let model_err = |e: models::ModelError| p.model_error(e);
    let (sp, _) = models::sentencepiece(lang, models::model_dir_of(p)).map_err(model_err)?;
    let (lm, _) = models::kenlm(lang, models::model_dir_of(p)).map_err(model_err)?;
    Ok(build_filter(
        p,
        "perplexity",
        Arc::new(Perplexity::new(sp, lm)),
        p.float("min_ppl"),
        p.float("max_ppl"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scoring_piece_ids_equals_scoring_the_joined_pieces() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/models");
        let (sp, _) = models::sentencepiece("en", Some(&dir)).unwrap();
        let (lm, _) = models::kenlm("en", Some(&dir)).unwrap();
        let op = Perplexity::new(sp.clone(), lm);
        let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/golden");
        let mut texts: Vec<String> = ["corpus.jsonl", "corpus_unicode.jsonl", "corpus_words.jsonl"]
            .iter()
            .flat_map(|f| {
                std::fs::read_to_string(golden.join(f))
                    .unwrap()
                    .lines()
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .filter_map(|line| {
                serde_json::from_str::<serde_json::Value>(&line).ok()?["text"]
                    .as_str()
                    .map(str::to_string)
            })
            .collect();
        assert!(texts.len() > 50);
        // Pieces that are not one word: line boundaries, Python-only spaces, NUL, nothing.
        texts.extend(
            [
                "",
                " ",
                "a\nb",
                "tab\tand\x0bvt",
                "nb\u{a0}sp",
                "nul\0byte",
                "ls\u{2028}x",
                "\u{1c}fs",
                "x\r\ny",
            ]
            .map(str::to_string),
        );
        let (mut by_ids, mut joined) = (0, 0);
        for text in &texts {
            let want = with_piece_view(&sp, text, |p| op.perplexity_of_joined(p.iter()));
            assert_eq!(op.perplexity(text).to_bits(), want.to_bits(), "{text:?}");
            let mut ids = Vec::new();
            match with_piece_view(&sp, text, |p| op.score_words(p, &mut ids)) {
                Some(_) => by_ids += 1,
                None => joined += 1,
            }
        }
        assert!(
            by_ids > 50 && joined > 0,
            "{by_ids} by ids, {joined} joined"
        );
    }

    #[test]
    fn rounds_as_python() {
        // (x, round(x, 1)) from CPython 3.11.
        for (x, want) in [
            (0.25, 0.2),
            (0.35, 0.3),
            (0.75, 0.8),
            (2.25, 2.2),
            (1234.5678, 1234.6),
            (0.05, 0.1),
            (0.0, 0.0),
            (99999.95, 99999.9),
            (1e300, 1e300),
        ] {
            assert_eq!(py_round1(x), want, "round({x}, 1)");
        }
    }
}
