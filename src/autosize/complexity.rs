//! How expensive a recipe's ops are, by op name (Data-Juicer's keyword rule, plus the ops that run a
//! model on every sample).

use serde::Serialize;

/// Processing cost class of an op, from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum OpComplexity {
    High,
    Medium,
    Low,
}

impl OpComplexity {
    pub(crate) fn weight(self) -> f64 {
        match self {
            OpComplexity::High => 0.3,
            OpComplexity::Medium => 0.2,
            OpComplexity::Low => 0.1,
        }
    }
}

/// High if the lower-cased name contains embedding, similarity, model, neural, vision or audio;
/// else medium if it contains filter, deduplicator or mapper; else low. Unlike Data-Juicer, ops
/// that run a model on every sample ([`dj_udfs::spec::ModelUse::Always`]: language ID,
/// perplexity, token counting) and ops that decode audio or video are high too, as the seed
/// document's categories put model inference and media processing.
pub(crate) fn op_complexity(name: &str) -> OpComplexity {
    let lower = name.to_lowercase();
    let has = |kws: &[&str]| kws.iter().any(|k| lower.contains(k));
    let runs_model = dj_udfs::lookup(name).is_some_and(|s| {
        s.model_use() == dj_udfs::spec::ModelUse::Always || s.reads_audio_or_video()
    });
    if runs_model
        || has(&[
            "embedding",
            "similarity",
            "model",
            "neural",
            "vision",
            "audio",
        ])
    {
        OpComplexity::High
    } else if has(&["filter", "deduplicator", "mapper"]) {
        OpComplexity::Medium
    } else {
        OpComplexity::Low
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct OpKind {
    pub name: String,
    pub complexity: OpComplexity,
}

/// The pipeline's complexity multiplier `1 + 0.3 high + 0.2 medium + 0.1 low`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Complexity {
    pub high: usize,
    pub medium: usize,
    pub low: usize,
    pub ops: Vec<OpKind>,
    pub score: f64,
}

pub(crate) fn pipeline_complexity<S: AsRef<str>>(op_names: &[S]) -> Complexity {
    let ops: Vec<OpKind> = op_names
        .iter()
        .map(|n| OpKind {
            name: n.as_ref().to_string(),
            complexity: op_complexity(n.as_ref()),
        })
        .collect();
    let count = |c| ops.iter().filter(|o| o.complexity == c).count();
    let (high, medium, low) = (
        count(OpComplexity::High),
        count(OpComplexity::Medium),
        count(OpComplexity::Low),
    );
    let w = OpComplexity::weight;
    let score = 1.0
        + (high as f64 * w(OpComplexity::High)
            + medium as f64 * w(OpComplexity::Medium)
            + low as f64 * w(OpComplexity::Low));
    Complexity {
        high,
        medium,
        low,
        ops,
        score,
    }
}
