//! `token_num_filter`: the number of tokens of a Hugging Face tokenizer (stat `num_token`),
//! keeping samples within [min_num, max_num].

use std::sync::Arc;

use serde_json::json;

use crate::PY_MAXSIZE;
use crate::filter::build_filter;
use crate::models::{self, HfTokenizer};
use crate::operator::Operator;
use crate::params::{ParamError, ParamSpec, ParamType, Params};
use crate::spec::{ModelUse, OpKind, OpSpec};
use crate::udf::{StatType, StatValue, TextStat};

pub(crate) fn token_num_spec() -> OpSpec {
    OpSpec {
        name: "token_num_filter",
        kind: OpKind::Filter,
        model_use: ModelUse::Always,
        params: || {
            vec![
                ParamSpec::new(
                    "hf_tokenizer",
                    ParamType::Str,
                    json!("EleutherAI/pythia-6.9b-deduped"),
                    "Hugging Face tokenizer: a hub name (from the local HF cache) or a local path",
                ),
                ParamSpec::new(
                    "min_num",
                    ParamType::Int,
                    json!(10),
                    "minimum number of tokens",
                ),
                ParamSpec::new(
                    "max_num",
                    ParamType::Int,
                    json!(PY_MAXSIZE),
                    "maximum number of tokens",
                ),
            ]
        },
        build: build_token_num,
        doc: "Keep samples whose number of tokens (hf_tokenizer, without special tokens) is \
              within [min_num, max_num]; stat num_token.",
    }
}

#[derive(Debug)]
struct TokenNum {
    tokenizer: Arc<HfTokenizer>,
}

impl TextStat for TokenNum {
    fn stat_type(&self) -> StatType {
        StatType::Int64
    }
    fn compute(&self, text: &str) -> StatValue {
        StatValue::Int(self.tokenizer.count_tokens(text) as i64)
    }
}

fn build_token_num(p: &Params) -> Result<Operator, ParamError> {
    let name = p
        .str("hf_tokenizer")
        .ok_or_else(|| p.invalid("hf_tokenizer", "must be a tokenizer name or path, got null"))?;
    let (tokenizer, _) =
        models::hf_tokenizer(name, models::model_dir_of(p)).map_err(|e| p.model_error(e))?;
    Ok(build_filter(
        p,
        "num_token",
        Arc::new(TokenNum { tokenizer }),
        p.int("min_num").map(|v| v as f64),
        p.int("max_num").map(|v| v as f64),
    ))
}
