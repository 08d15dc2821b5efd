//! The registry: Data-Juicer op name -> parameter schema and constructor.
//!
//! Every supported op has one [`OpSpec`] (the leaf module [`crate::spec`]), defined next to its
//! implementation and listed in [`registry`]; the registry is the only module that imports the
//! families. Data-Juicer ops refused because they need a model or data dj-fusion does not run are
//! listed in [`UNSUPPORTED_OPS`], so recipes naming them get a precise "not supported yet" error
//! instead of "unknown operator".

use std::sync::LazyLock;

pub use crate::spec::{OpKind, OpSpec};
use crate::suggest::{closest_names, format_suggestions};
use crate::{dedup, filter, mapper, selector};

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

/// Data-Juicer ops that dj-fusion refuses as not supported yet, because they need a model, data
/// or service it does not run; each with what it needs (named in the error).
pub(crate) const UNSUPPORTED_OPS: &[(&str, &str)] = &[
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
    #[error("unknown operator `{op}`{}", format_suggestions(.suggestions))]
    Unknown {
        op: String,
        suggestions: Vec<String>,
    },
}

/// Like [`lookup`], with a precise error.
pub fn resolve(name: &str) -> Result<&'static OpSpec, LookupError> {
    if let Some(spec) = lookup(name) {
        return Ok(spec);
    }
    if let Some((_, model)) = UNSUPPORTED_OPS.iter().find(|(n, _)| *n == name) {
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
