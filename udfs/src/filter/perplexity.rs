//! `perplexity_filter`: the KenLM perplexity of the text's SentencePiece pieces (stat
//! `perplexity`, rounded to 0.1 as Data-Juicer does), keeping samples within [min_ppl, max_ppl].

use std::cell::RefCell;
use std::sync::Arc;

use serde_json::json;

use crate::filter::build_filter;
use crate::models::{self, KenLm, SentencePiece, with_pieces};
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

/// Data-Juicer's perplexity: the pieces joined by spaces, scored line by line
/// (`str.splitlines()`) with sentence boundaries; the summed log10 probability over the number of
/// words plus one end-of-sentence per line; `10 ** (-logits / length)` rounded to 0.1, 0.0 when
/// there are no lines. `sp` must come from the process's model cache (see [`with_pieces`]).
pub(crate) fn perplexity(sp: &Arc<SentencePiece>, lm: &KenLm, text: &str) -> f64 {
    thread_local! {
        static JOINED: RefCell<String> = const { RefCell::new(String::new()) };
    }
    JOINED.with(|cell| {
        let joined = &mut *cell.borrow_mut();
        joined.clear();
        with_pieces(sp, text, |pieces| {
            for (i, p) in pieces.enumerate() {
                if i > 0 {
                    joined.push(' ');
                }
                joined.push_str(p);
            }
        });
        let (mut logits, mut length) = (0.0f64, 0u64);
        for line in py_lines(joined) {
            logits += lm.score(line, true, true) as f64;
            length += line.split(is_py_space).filter(|w| !w.is_empty()).count() as u64 + 1;
        }
        if length == 0 {
            return 0.0;
        }
        py_round1(10f64.powf(-logits / length as f64))
    })
}

#[derive(Debug)]
struct Perplexity {
    sp: Arc<SentencePiece>,
    lm: Arc<KenLm>,
}

impl TextStat for Perplexity {
    fn stat_type(&self) -> StatType {
        StatType::Float64
    }
    fn compute(&self, text: &str) -> StatValue {
        StatValue::Float(perplexity(&self.sp, &self.lm, text))
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
        Arc::new(Perplexity { sp, lm }),
        p.float("min_ppl"),
        p.float("max_ppl"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

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
