//! Operator parameters: a typed schema per op and validation of the values a recipe gives.
//!
//! Values arrive as JSON (the recipe crate converts YAML to it), are checked against the op's
//! [`ParamSpec`]s and Data-Juicer's base-op parameters, and are read back with typed getters.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::suggest::{closest_names, format_suggestions};

/// What went wrong with one parameter of one op.
#[derive(Debug, thiserror::Error)]
pub enum ParamError {
    #[error("unknown parameter `{param}` of {op}{}", format_suggestions(.suggestions))]
    Unknown {
        op: String,
        param: String,
        suggestions: Vec<String>,
    },
    #[error("parameter `{param}` of {op} must be {expected}, got {got}")]
    WrongType {
        op: String,
        param: String,
        expected: String,
        got: String,
    },
    #[error("parameter `{param}` of {op}: {message}")]
    Invalid {
        op: String,
        param: String,
        message: String,
    },
    /// A model file the op needs is missing or unreadable (`source` is a
    /// [`crate::models::ModelError`]).
    #[error("operator {op}: {source}")]
    Model {
        op: String,
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl ParamError {
    /// The parameter this error is about.
    pub fn param(&self) -> &str {
        match self {
            ParamError::Unknown { param, .. }
            | ParamError::WrongType { param, .. }
            | ParamError::Invalid { param, .. } => param,
            // Not about one parameter: errors point at the op's entry.
            ParamError::Model { .. } => "",
        }
    }
}

/// The type a parameter accepts.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamType {
    Bool,
    /// An integer; Data-Juicer's `sys.maxsize` defaults are `i64::MAX`.
    Int,
    /// A number (an integer is accepted).
    Float,
    Str,
    /// One of a fixed set of strings.
    Choice(&'static [&'static str]),
    /// A list of strings (a single string is accepted as a one-element list).
    StrList,
    /// Any JSON value (ignored base-op parameters such as `num_proc`).
    Any,
}

impl ParamType {
    fn describe(&self) -> String {
        match self {
            ParamType::Bool => "a boolean".into(),
            ParamType::Int => "an integer".into(),
            ParamType::Float => "a number".into(),
            ParamType::Str => "a string".into(),
            ParamType::Choice(c) => format!("one of {}", c.join(", ")),
            ParamType::StrList => "a list of strings".into(),
            ParamType::Any => "any value".into(),
        }
    }

    fn accepts(&self, v: &Value) -> bool {
        match self {
            ParamType::Bool => v.is_boolean(),
            ParamType::Int => v.is_i64() || v.is_u64(),
            ParamType::Float => v.is_number(),
            ParamType::Str => v.is_string(),
            ParamType::Choice(c) => v.as_str().is_some_and(|s| c.contains(&s)),
            ParamType::StrList => {
                v.is_string() || v.as_array().is_some_and(|a| a.iter().all(Value::is_string))
            }
            ParamType::Any => true,
        }
    }
}

/// One parameter of an operator: name, type, default (`Value::Null` = Python `None`), and doc.
#[derive(Debug, Clone)]
pub struct ParamSpec {
    pub name: &'static str,
    pub ty: ParamType,
    pub default: Value,
    pub doc: &'static str,
}

impl ParamSpec {
    pub fn new(name: &'static str, ty: ParamType, default: Value, doc: &'static str) -> Self {
        ParamSpec {
            name,
            ty,
            default,
            doc,
        }
    }
}

/// Parameters every Data-Juicer op accepts (`OP._BASE_PARAMS`). Only `text_key` changes results
/// here; the rest (batching, resources, Ray options) are accepted so recipes carry over unchanged.
pub(crate) fn base_params() -> Vec<ParamSpec> {
    use ParamType::*;
    let s = |v: &str| Value::String(v.to_string());
    let mut p = vec![ParamSpec::new(
        "text_key",
        Str,
        s("text"),
        "column holding the text",
    )];
    for (name, default) in [
        ("image_key", "images"),
        ("audio_key", "audios"),
        ("video_key", "videos"),
        ("image_bytes_key", "image_bytes"),
        ("system_key", "system"),
        ("instruction_key", "instruction"),
        ("prompt_key", "prompt"),
        ("query_key", "query"),
        ("response_key", "response"),
        ("history_key", "history"),
    ] {
        p.push(ParamSpec::new(
            name,
            Str,
            s(default),
            "data key (accepted, unused by text ops)",
        ));
    }
    for name in [
        "index_key",
        "work_dir",
        "input_columns",
        "output_columns",
        "adaptive_batching",
        "auto_op_parallelism",
        "batch_mode",
        "accelerator",
        "num_proc",
        "turbo",
        "cpu_required",
        "gpu_required",
        "mem_required",
        "num_cpus",
        "num_gpus",
        "memory",
        "runtime_env",
        "ray_execution_mode",
    ] {
        p.push(ParamSpec::new(
            name,
            Any,
            Value::Null,
            "execution hint (accepted, no effect)",
        ));
    }
    p.push(ParamSpec::new(
        "skip_op_error",
        Any,
        Value::Null,
        "media ops: drop a sample whose file cannot be read (default) rather than fail",
    ));
    p.push(ParamSpec::new(
        "batch_size",
        Int,
        Value::from(1000),
        "rows per batch (no effect)",
    ));
    p
}

/// Extra base parameters of filters (`Filter._BASE_PARAMS`).
pub(crate) fn filter_base_params() -> Vec<ParamSpec> {
    use ParamType::*;
    vec![
        ParamSpec::new("stats_export_path", Any, Value::Null, "accepted, no effect"),
        ParamSpec::new(
            "min_closed_interval",
            Bool,
            Value::Bool(true),
            "min bound inclusive",
        ),
        ParamSpec::new(
            "max_closed_interval",
            Bool,
            Value::Bool(true),
            "max bound inclusive",
        ),
        ParamSpec::new(
            "reversed_range",
            Bool,
            Value::Bool(false),
            "keep the complement",
        ),
    ]
}

/// Validated parameter values of one op instance, defaults filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    op: String,
    values: BTreeMap<String, Value>,
}

impl Params {
    /// Checks `given` against `specs`: unknown names and ill-typed values are errors. An integer
    /// given for a float parameter is accepted, as Python does, and so is a whole float for an
    /// integer one.
    pub fn validate(
        op: &str,
        specs: &[ParamSpec],
        given: &serde_json::Map<String, Value>,
    ) -> Result<Params, ParamError> {
        let mut values = BTreeMap::new();
        for spec in specs {
            values.insert(spec.name.to_string(), spec.default.clone());
        }
        for (name, value) in given {
            let Some(spec) = specs.iter().find(|s| s.name == name) else {
                let names: Vec<&str> = specs.iter().map(|s| s.name).collect();
                return Err(ParamError::Unknown {
                    op: op.to_string(),
                    param: name.clone(),
                    suggestions: closest_names(name, &names),
                });
            };
            // A whole number written as a float (`max_len: 5e5`, which YAML reads as a float) is
            // an integer: Data-Juicer takes it for one, and its published recipes use that form.
            let value = &match value.as_f64() {
                Some(f)
                    if spec.ty == ParamType::Int
                        && !value.is_i64()
                        && !value.is_u64()
                        && f.fract() == 0.0
                        && f.abs() < 9.2e18 =>
                {
                    Value::from(f as i64)
                }
                _ => value.clone(),
            };
            // `None` is always accepted: it selects the op's built-in behaviour.
            if !value.is_null() && !spec.ty.accepts(value) {
                return Err(ParamError::WrongType {
                    op: op.to_string(),
                    param: name.clone(),
                    expected: spec.ty.describe(),
                    got: describe_value(value),
                });
            }
            values.insert(name.clone(), value.clone());
        }
        Ok(Params {
            op: op.to_string(),
            values,
        })
    }

    pub fn op(&self) -> &str {
        &self.op
    }

    /// The values as a canonical JSON object (sorted keys): the op instance's identity in UDFs
    /// and serialized plans.
    pub fn to_json(&self) -> Value {
        Value::Object(
            self.values
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        )
    }

    pub fn raw(&self, name: &str) -> &Value {
        self.values.get(name).unwrap_or(&Value::Null)
    }

    pub fn bool(&self, name: &str) -> bool {
        self.raw(name).as_bool().unwrap_or(false)
    }

    pub fn int(&self, name: &str) -> Option<i64> {
        let v = self.raw(name);
        v.as_i64()
            .or_else(|| v.as_u64().map(|u| u.min(i64::MAX as u64) as i64))
    }

    pub fn float(&self, name: &str) -> Option<f64> {
        self.raw(name).as_f64()
    }

    pub fn str(&self, name: &str) -> Option<&str> {
        self.raw(name).as_str()
    }

    pub(crate) fn str_list(&self, name: &str) -> Option<Vec<String>> {
        match self.raw(name) {
            Value::String(s) => Some(vec![s.clone()]),
            Value::Array(a) => Some(
                a.iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect(),
            ),
            _ => None,
        }
    }

    /// A model the op needs is not available.
    pub(crate) fn model_error(
        &self,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> ParamError {
        ParamError::Model {
            op: self.op.clone(),
            source: Box::new(source),
        }
    }

    /// An error about parameter `name` of this op, for constructors' own checks.
    pub fn invalid(&self, name: &str, message: impl Into<String>) -> ParamError {
        ParamError::Invalid {
            op: self.op.clone(),
            param: name.to_string(),
            message: message.into(),
        }
    }
}

fn describe_value(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) => format!("string {s:?}"),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "a mapping".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn specs() -> Vec<ParamSpec> {
        vec![
            ParamSpec::new("min_len", ParamType::Int, json!(10), ""),
            ParamSpec::new("max_ratio", ParamType::Float, json!(0.5), ""),
        ]
    }

    #[test]
    fn defaults_are_filled_and_ints_accepted_as_floats() {
        let given = json!({"max_ratio": 1}).as_object().unwrap().clone();
        let p = Params::validate("x_filter", &specs(), &given).unwrap();
        assert_eq!(p.int("min_len"), Some(10));
        assert_eq!(p.float("max_ratio"), Some(1.0));
    }

    #[test]
    fn unknown_parameter_suggests_closest() {
        let given = json!({"min_lenn": 3}).as_object().unwrap().clone();
        let e = Params::validate("x_filter", &specs(), &given).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown parameter `min_lenn` of x_filter; did you mean min_len?"
        );
    }

    #[test]
    fn wrong_type_names_expected_and_got() {
        let given = json!({"min_len": "ten"}).as_object().unwrap().clone();
        let e = Params::validate("x_filter", &specs(), &given).unwrap_err();
        assert_eq!(
            e.to_string(),
            "parameter `min_len` of x_filter must be an integer, got string \"ten\""
        );
    }

    #[test]
    fn a_whole_float_is_an_integer_and_a_fraction_is_not() {
        let given = json!({"min_len": 5e5}).as_object().unwrap().clone();
        let p = Params::validate("x_filter", &specs(), &given).unwrap();
        assert_eq!(p.int("min_len"), Some(500000));
        let given = json!({"min_len": 2.5}).as_object().unwrap().clone();
        let e = Params::validate("x_filter", &specs(), &given).unwrap_err();
        assert_eq!(
            e.to_string(),
            "parameter `min_len` of x_filter must be an integer, got number 2.5"
        );
    }
}
