//! What an operator is, independent of which ops exist: its [`OpSpec`] (name, kind, parameters,
//! model use, constructor). Below the op families and the registry that lists them, so both
//! depend on it and not on each other.

pub use crate::operator::OpKind;
use crate::operator::Operator;
use crate::params::{ParamError, ParamSpec, Params, base_params, filter_base_params};

/// One operator: its Data-Juicer name, kind, whether it uses a model, own parameters (base
/// parameters are added by [`OpSpec::all_params`]), constructor and a one-line description.
pub struct OpSpec {
    pub name: &'static str,
    pub kind: OpKind,
    /// Whether and how the op loads a model (which also gives it the `model_dir` parameter).
    pub model_use: ModelUse,
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
    /// Whether and how the op loads a model (which also gives it the `model_dir` parameter).
    pub fn model_use(&self) -> ModelUse {
        self.model_use
    }

    /// Whether the op works on audio or video files (`audio_*`, `video_*`): the seed document's
    /// `*_audio_*` and `*_vision_*` categories, which cost per row what decoding a file costs,
    /// and after which checkpoints pay.
    pub fn reads_audio_or_video(&self) -> bool {
        self.name.starts_with("audio_") || self.name.starts_with("video_")
    }

    /// The op's own parameters followed by the base parameters of its kind.
    pub fn all_params(&self) -> Vec<ParamSpec> {
        let mut p = (self.params)();
        if self.model_use != ModelUse::None {
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
