//! UDFs across process boundaries: a dj-fusion UDF is identified by its op's name and canonical
//! parameters ([`UdfIdentity`]), so a plan codec ships that identity and the receiving process
//! rebuilds the very same UDF from the registry instead of looking up a bare function name.

use std::sync::Arc;

use datafusion_expr::ScalarUDF;

use crate::operator::Operator;
use crate::registry::lookup;
use crate::udf::{OpUdf, UdfIdentity};

/// Why a shipped UDF identity cannot be rebuilt.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("no operator builds a UDF named {0}")]
    UnknownUdf(String),
    #[error("UDF {udf}: parameters are not a JSON object: {config}")]
    BadConfig { udf: String, config: String },
    #[error("UDF {udf}: {source}")]
    Params {
        udf: String,
        source: crate::params::ParamError,
    },
    #[error("operator {op} with these parameters has no UDF named {udf}")]
    Missing { op: String, udf: String },
}

/// The identity of `udf` if it is one of dj-fusion's operator UDFs.
pub fn identity_of(udf: &ScalarUDF) -> Option<&UdfIdentity> {
    udf.inner().downcast_ref::<OpUdf>().map(OpUdf::identity)
}

/// Every UDF an operator instance evaluates.
pub(crate) fn operator_udfs(op: &Operator) -> Vec<Arc<ScalarUDF>> {
    match op {
        Operator::Mapper { udf } => vec![udf.clone()],
        Operator::Filter(f) => std::iter::once(f.stat_udf.clone())
            .chain(f.decide_udf.clone())
            .collect(),
        Operator::Deduplicator(d) => vec![d.hash_udf.clone()],
        Operator::FieldFilter(f) => f
            .stats
            .iter()
            .map(|s| s.udf.clone())
            .chain(f.joint.clone())
            .chain([f.keep.clone()])
            .collect(),
        Operator::Selector(s) => s.value_udf.iter().cloned().collect(),
        Operator::MediaMapper(m) => vec![m.udf.clone()],
    }
}

/// Rebuilds the UDF `id` names: its op from the registry, by name, with the shipped parameters.
pub fn rebuild_udf(id: &UdfIdentity) -> Result<Arc<ScalarUDF>, WireError> {
    if id.op == crate::filter::json_stats::JSON_STATS_OP {
        return Ok(crate::filter::json_stats::json_stats_udf());
    }
    let spec = lookup(&id.op).ok_or_else(|| WireError::UnknownUdf(id.name.clone()))?;
    let given: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&id.config)
        .map_err(|_| WireError::BadConfig {
            udf: id.name.clone(),
            config: id.config.clone(),
        })?;
    let (_, op) = spec
        .instantiate(&given)
        .map_err(|source| WireError::Params {
            udf: id.name.clone(),
            source,
        })?;
    operator_udfs(&op)
        .into_iter()
        .find(|u| identity_of(u) == Some(id))
        .ok_or_else(|| WireError::Missing {
            op: spec.name.to_string(),
            udf: id.name.clone(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every op that builds with its defaults: each of its UDFs survives the round trip as an
    /// equal UDF (same identity, so DataFusion treats both as the same expression).
    #[test]
    fn every_default_op_udf_round_trips() {
        let mut checked = 0;
        for spec in crate::registry() {
            let Ok((_, op)) = spec.instantiate(&serde_json::Map::new()) else {
                continue;
            };
            for udf in operator_udfs(&op) {
                let id = identity_of(&udf)
                    .unwrap_or_else(|| panic!("{}: UDF {} has no identity", spec.name, udf.name()));
                let back = rebuild_udf(id).unwrap();
                assert_eq!(*back, *udf, "{}", spec.name);
                checked += 1;
            }
        }
        assert!(checked >= 39, "only {checked} UDFs checked");
    }

    #[test]
    fn parameters_travel_with_the_udf() {
        let spec = lookup("text_length_filter").unwrap();
        let given = serde_json::json!({"min_len": 7, "max_len": 90});
        let (_, op) = spec.instantiate(given.as_object().unwrap()).unwrap();
        let udf = operator_udfs(&op).remove(0);
        let id = identity_of(&udf).unwrap();
        assert!(id.config.contains("\"min_len\":7"), "{}", id.config);
        assert_eq!(*rebuild_udf(id).unwrap(), *udf);
    }

    /// A filter's second form of its stat (`words_num_filter` with tokenization and a maximum)
    /// travels as its own UDF and comes back as it left.
    #[test]
    fn a_deciding_stat_travels_too() {
        let models = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/models");
        let spec = lookup("words_num_filter").unwrap();
        let given = serde_json::json!({"tokenization": true, "max_num": 100, "model_dir": models});
        let (_, op) = spec.instantiate(given.as_object().unwrap()).unwrap();
        let udfs = operator_udfs(&op);
        assert_eq!(udfs.len(), 2);
        assert_eq!(udfs[1].name(), "words_num_filter_decide");
        for udf in udfs {
            let id = identity_of(&udf).unwrap();
            assert_eq!(*rebuild_udf(id).unwrap(), *udf);
        }
    }

    #[test]
    fn unknown_names_and_bad_parameters_are_refused() {
        let err = rebuild_udf(&UdfIdentity {
            op: "no_such_op".into(),
            name: "no_such_op".into(),
            config: "{}".into(),
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "no operator builds a UDF named no_such_op");
        let err = rebuild_udf(&UdfIdentity {
            op: "text_length_filter".into(),
            name: "text_length_filter".into(),
            config: r#"{"min_len": "seven"}"#.into(),
        })
        .unwrap_err();
        assert!(
            err.to_string().starts_with("UDF text_length_filter: "),
            "{err}"
        );
    }
}
