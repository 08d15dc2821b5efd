//! The registry: Data-Juicer op name -> parameter schema and constructor.
//!
//! Every supported op has one [`OpSpec`], defined next to its implementation and listed in
//! [`registry`]. Ops that need a downloaded model are listed in [`MODEL_OPS`] so recipes naming them
//! get a precise "not supported yet" error instead of "unknown operator".

use std::sync::LazyLock;

use crate::operator::Operator;
use crate::params::{
    ParamError, ParamSpec, Params, base_params, closest_names, filter_base_params,
};
use crate::{dedup, filter, mapper, selector};

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
        if MODEL_BASED_OPS.contains(&self.name) || TOKENIZING_OPS.contains(&self.name) {
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

/// Every supported operator, in Data-Juicer's category order. Each family's `specs()` (in its
/// `mod.rs`) lists its ops.
pub fn registry() -> &'static [OpSpec] {
    static REGISTRY: LazyLock<Vec<OpSpec>> = LazyLock::new(|| {
        let mut all = mapper::specs();
        all.extend(filter::specs());
        all.extend(dedup::specs());
        all.extend(selector::specs());
        all
    });
    &REGISTRY
}

/// Looks an op up by its Data-Juicer name.
pub fn lookup(name: &str) -> Option<&'static OpSpec> {
    registry().iter().find(|s| s.name == name)
}

/// Supported ops that always run a model (fastText, KenLM, a tokenizer) on every sample: the
/// expensive ones that auto sizing weighs as high complexity and checkpoints exist for.
pub const MODEL_BASED_OPS: &[&str] = &[
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

/// Data-Juicer ops that need a downloaded model or an external service, with what they need.
pub const MODEL_OPS: &[(&str, &str)] = &[
    ("text_action_filter", "a spaCy model"),
    ("text_entity_dependency_filter", "a spaCy model"),
    ("image_aesthetics_filter", "an aesthetics predictor model"),
    ("image_nsfw_filter", "an NSFW classifier model"),
    ("image_text_similarity_filter", "a CLIP model"),
    ("image_text_matching_filter", "a BLIP model"),
    ("image_watermark_filter", "a watermark classifier model"),
    ("sentence_split_mapper", "the nltk punkt data"),
    (
        "generate_qa_from_text_mapper",
        "a Hugging Face or vLLM language model",
    ),
    ("image_captioning_mapper", "an image captioning model"),
    ("text_embd_similarity_filter", "an embedding model"),
    ("llm_quality_score_filter", "a language model"),
    ("llm_difficulty_score_filter", "a language model"),
    ("llm_perplexity_filter", "a language model"),
];

/// Why `name` cannot be built: a model it needs, or the closest known names.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LookupError {
    #[error("operator {op} needs {model}, not supported yet")]
    NeedsModel { op: String, model: String },
    #[error("unknown operator `{op}`{}", suggest(.suggestions))]
    Unknown {
        op: String,
        suggestions: Vec<String>,
    },
}

fn suggest(s: &[String]) -> String {
    if s.is_empty() {
        String::new()
    } else {
        format!("; did you mean {}?", s.join(", "))
    }
}

/// Like [`lookup`], with a precise error.
pub fn resolve(name: &str) -> Result<&'static OpSpec, LookupError> {
    if let Some(spec) = lookup(name) {
        return Ok(spec);
    }
    if let Some((_, model)) = MODEL_OPS.iter().find(|(n, _)| *n == name) {
        return Err(LookupError::NeedsModel {
            op: name.to_string(),
            model: model.to_string(),
        });
    }
    let names: Vec<&str> = registry().iter().map(|s| s.name).collect();
    Err(LookupError::Unknown {
        op: name.to_string(),
        suggestions: closest_names(name, &names),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        let mut names: Vec<&str> = registry().iter().map(|s| s.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), registry().len());
    }

    #[test]
    fn unknown_op_suggests_closest() {
        let e = resolve("text_lenght_filter").unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown operator `text_lenght_filter`; did you mean text_length_filter?"
        );
    }

    #[test]
    fn model_op_names_its_model() {
        let e = resolve("text_action_filter").unwrap_err();
        assert_eq!(
            e.to_string(),
            "operator text_action_filter needs a spaCy model, not supported yet"
        );
    }
}
