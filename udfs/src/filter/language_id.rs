//! `language_id_score_filter`: the fastText language-id model's top label and its probability
//! (stats `lang` and `lang_score`), keeping samples in the wanted languages whose score reaches
//! `min_score`.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Float64Builder, StringBuilder, StructArray,
};
use arrow::datatypes::{DataType, Field, Fields};
use datafusion_common::{Result, exec_err};
use serde_json::{Value, json};

use crate::models::{self, FastText};
use crate::operator::{FieldFilterOp, FieldStat, Operator, StatRange};
use crate::params::{ParamError, ParamSpec, ParamType, Params};
use crate::spec::{ModelUse, OpKind, OpSpec};
use crate::text::py_lower;
use crate::udf::{OpUdf, UdfIdentity, split_if_spare};

/// The model Data-Juicer's `prepare_fasttext_model` loads.
const MODEL_FILE: &str = "lid.176.bin";

pub(crate) fn language_id_spec() -> OpSpec {
    OpSpec {
        name: "language_id_score_filter",
        kind: OpKind::Filter,
        model_use: ModelUse::Always,
        params: || {
            vec![
                ParamSpec::new(
                    "lang",
                    ParamType::StrList,
                    json!(""),
                    "language(s) to keep, e.g. en or [en, de]; empty keeps any language",
                ),
                ParamSpec::new(
                    "min_score",
                    ParamType::Float,
                    json!(0.8),
                    "minimum language-id probability",
                ),
            ]
        },
        build: build_language_id,
        doc: "Keep samples whose fastText (lid.176.bin) top language is one of lang and whose \
              probability is at least min_score; stats lang and lang_score.",
    }
}

/// The line fastText is asked about, as Data-Juicer makes it: `text.lower().replace("\n", " ")`.
fn prediction_line(text: &str, line: &mut String) {
    line.clear();
    for c in py_lower(text).chars() {
        line.push(if c == '\n' { ' ' } else { c });
    }
}

fn lang_fields() -> Fields {
    Fields::from(vec![
        Field::new("lang", DataType::Utf8, true),
        Field::new("lang_score", DataType::Float64, true),
    ])
}

/// text -> struct {lang, lang_score} for every row (null text gives null stats).
fn predict_array(model: &FastText, texts: &ArrayRef) -> Result<ArrayRef> {
    let values: Box<dyn Iterator<Item = Option<&str>>> = match texts.data_type() {
        DataType::Utf8 => Box::new(texts.as_string::<i32>().iter()),
        DataType::LargeUtf8 => Box::new(texts.as_string::<i64>().iter()),
        DataType::Utf8View => Box::new(texts.as_string_view().iter()),
        other => return exec_err!("language_id_score_filter: expected a text column, got {other}"),
    };
    let mut langs = StringBuilder::with_capacity(texts.len(), texts.len() * 2);
    let mut scores = Float64Builder::with_capacity(texts.len());
    let (mut line, mut top) = (String::new(), Vec::with_capacity(1));
    for text in values {
        let Some(text) = text else {
            langs.append_null();
            scores.append_null();
            continue;
        };
        prediction_line(text, &mut line);
        model.predict_into(&line, 1, 0.0, &mut top);
        // The top label without `__label__` and its probability (an f32, widened as Python
        // does). Text with no prediction (no known token) gets "" and 0.0, where Data-Juicer
        // would fail on the empty result.
        let (lang, score) = top.first().copied().unwrap_or(("", 0.0));
        langs.append_value(lang.strip_prefix("__label__").unwrap_or(lang));
        scores.append_value(score as f64);
    }
    let columns: Vec<ArrayRef> = vec![Arc::new(langs.finish()), Arc::new(scores.finish())];
    Ok(Arc::new(StructArray::try_new(
        lang_fields(),
        columns,
        None,
    )?))
}

/// The `lang` and `lang_score` stat UDFs: field `i` of the joint struct.
fn struct_field_stat(p: &Params, key: &str, i: usize, ty: DataType) -> FieldStat {
    let f = Arc::new(move |args: &[ArrayRef]| -> Result<ArrayRef> {
        let Some(s) = args[0].as_struct_opt() else {
            return exec_err!("language_id_score_filter: expected its joint stats struct");
        };
        Ok(s.column(i).clone())
    });
    FieldStat {
        key: key.to_string(),
        udf: OpUdf::from_fn(UdfIdentity::of(p, &format!("_{key}")), Some(ty), f),
    }
}

/// `lang: ""` or `[]` keeps every language (Python's `not lang`).
fn wanted_languages(p: &Params) -> Option<Vec<String>> {
    match p.raw("lang") {
        Value::String(s) if s.is_empty() => None,
        Value::Array(a) if a.is_empty() => None,
        Value::Null => None,
        _ => p.str_list("lang"),
    }
}

fn build_language_id(p: &Params) -> Result<Operator, ParamError> {
    let (model, _) =
        models::fasttext(MODEL_FILE, models::model_dir_of(p)).map_err(|e| p.model_error(e))?;
    let langs = wanted_languages(p);
    let range = StatRange::from_params(p, p.float("min_score"), None);
    let joint = Arc::new(move |args: &[ArrayRef]| {
        let model = model.clone();
        split_if_spare(&args[0], move |texts| predict_array(&model, texts))
    });
    let keep = Arc::new(move |args: &[ArrayRef]| -> Result<ArrayRef> {
        // Stats read from an input file may come as other string or number types.
        let lang = arrow::compute::cast(&args[0], &DataType::Utf8)?;
        let score = arrow::compute::cast(&args[1], &DataType::Float64)?;
        let (lang, score) = (
            lang.as_string::<i32>(),
            score.as_primitive::<arrow::datatypes::Float64Type>(),
        );
        let keep: BooleanArray = (0..lang.len())
            .map(|row| {
                if lang.is_null(row) || score.is_null(row) {
                    return Some(false);
                }
                let wanted = langs
                    .as_ref()
                    .is_none_or(|l| l.iter().any(|x| x == lang.value(row)));
                Some(wanted && range.keeps(score.value(row)))
            })
            .collect();
        Ok(Arc::new(keep))
    });
    Ok(Operator::FieldFilter(FieldFilterOp {
        field: p.str("text_key").unwrap_or("text").to_string(),
        optional: false,
        stats: vec![
            struct_field_stat(p, "lang", 0, DataType::Utf8),
            struct_field_stat(p, "lang_score", 1, DataType::Float64),
        ],
        joint: Some(OpUdf::from_fn(
            UdfIdentity::of(p, ""),
            Some(DataType::Struct(lang_fields())),
            joint,
        )),
        keep: OpUdf::from_fn(UdfIdentity::of(p, "_keep"), Some(DataType::Boolean), keep),
    }))
}
