//! What an operator is, independent of which ops exist: its kind and its [`OpSpec`] (name,
//! parameters, constructor). A leaf module, so the op families and the registry that lists them
//! both depend on it and not on each other.

use crate::operator::Operator;
use crate::params::{ParamError, ParamSpec, Params, base_params, filter_base_params};

/// Data-Juicer's operator categories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpKind {
    Mapper,
    Filter,
    Deduplicator,
    Selector,
}

impl OpKind {
    pub fn as_str(self) -> &'static str {
        match self {
            OpKind::Mapper => "mapper",
            OpKind::Filter => "filter",
            OpKind::Deduplicator => "deduplicator",
            OpKind::Selector => "selector",
        }
    }
}

/// One operator: its Data-Juicer name, kind, own parameters (base parameters are added by
/// [`OpSpec::all_params`]), constructor and a one-line description.
pub struct OpSpec {
    pub name: &'static str,
    pub kind: OpKind,
    pub params: fn() -> Vec<ParamSpec>,
    pub build: fn(&Params) -> Result<Operator, ParamError>,
    pub doc: &'static str,
}

impl std::fmt::Debug for OpSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpSpec")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .finish()
    }
}

impl OpSpec {
    /// The op's own parameters followed by the base parameters of its kind.
    pub fn all_params(&self) -> Vec<ParamSpec> {
        let mut p = (self.params)();
        if self.model_use() != ModelUse::None {
            p.push(crate::models::model_dir_param());
        }
        p.extend(base_params());
        if self.kind == OpKind::Filter {
            p.extend(filter_base_params());
        }
        p
    }

    /// Validates `given` and builds the operator.
    pub fn instantiate(
        &self,
        given: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<(Params, Operator), ParamError> {
        let params = Params::validate(self.name, &self.all_params(), given)?;
        let op = (self.build)(&params)?;
        Ok((params, op))
    }
}

/// How an op uses a model file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelUse {
    /// No model.
    None,
    /// A model (fastText, KenLM, a tokenizer) on every sample: the expensive ops that auto sizing
    /// weighs as high complexity and checkpoints exist for.
    Always,
    /// A model with some parameters only (`tokenization: true`).
    WithSomeParams,
}

impl OpSpec {
    /// Whether and how the op loads a model (which also gives it the `model_dir` parameter).
    pub fn model_use(&self) -> ModelUse {
        if MODEL_BASED_OPS.contains(&self.name) {
            ModelUse::Always
        } else if TOKENIZING_OPS.contains(&self.name) {
            ModelUse::WithSomeParams
        } else {
            ModelUse::None
        }
    }
}

/// Supported ops that always run a model (fastText, KenLM, a tokenizer) on every sample: the
/// expensive ones that auto sizing weighs as high complexity and checkpoints exist for.
const MODEL_BASED_OPS: &[&str] = &[
    "language_id_score_filter",
    "perplexity_filter",
    "token_num_filter",
];

/// Ops that load a model with some parameters (`tokenization: true`): with [`MODEL_BASED_OPS`],
/// the ops that take the `model_dir` parameter.
const TOKENIZING_OPS: &[&str] = &[
    "words_num_filter",
    "word_repetition_filter",
    "stopwords_filter",
    "flagged_words_filter",
    "alphanumeric_filter",
    "remove_words_with_incorrect_substrings_mapper",
    "document_minhash_deduplicator",
];
