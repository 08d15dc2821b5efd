//! `video_deduplicator`: exact dedup on the MD5 of a sample's video packets (every packet of
//! every video stream of each distinct file, in the sample's order), optionally paired with the
//! MD5 of its text (`consider_text`), as Data-Juicer 1.6.1 computes `__dj__videohash`.
//!
//! Samples without videos are all kept (their hash is empty), unless `consider_text` pairs the
//! empty video hash with the text hash, which makes them duplicates of each other by text, as in
//! Data-Juicer. A file that cannot be read drops its sample with a warning (`skip_op_error`, the
//! default) or fails the job naming it.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, StringBuilder};
use arrow::datatypes::DataType;
use datafusion_common::Result;
use md5::{Digest, Md5};
use serde_json::json;

use super::document::{document_hash, hex};
use crate::columns::VIDEOHASH_COLUMN;
use crate::filter::media_stats::{row_paths, skips_errors, unreadable};
use crate::media::feed_video_packets;
use crate::operator::{DedupKind, DedupOp, DedupReads, Operator};
use crate::params::{ParamError, ParamSpec, ParamType, Params};
use crate::spec::{ModelUse, OpKind, OpSpec};
use crate::udf::{OpUdf, UdfIdentity};

pub(crate) fn video_deduplicator_spec() -> OpSpec {
    OpSpec {
        name: "video_deduplicator",
        kind: OpKind::Deduplicator,
        model_use: ModelUse::None,
        params: || {
            vec![ParamSpec::new(
                "consider_text",
                ParamType::Bool,
                json!(false),
                "pair the video hash with the text's MD5",
            )]
        },
        build: build_video_deduplicator,
        doc: "Keep the first sample of each set with the same video packets (and text, with consider_text).",
    }
}

/// The MD5 hex of the video packets of `paths`' distinct files, in first-seen order.
fn videos_md5(paths: &[String]) -> std::result::Result<String, (String, String)> {
    let mut md5 = Md5::new();
    let mut seen: Vec<&str> = Vec::with_capacity(paths.len());
    for path in paths {
        if seen.contains(&path.as_str()) {
            continue;
        }
        seen.push(path);
        crate::remote_media::local_file(path)
            .and_then(|local| feed_video_packets(&local, &mut |data| md5.update(data)))
            .map_err(|e| (path.clone(), e))?;
    }
    Ok(hex(&md5.finalize()))
}

fn build_video_deduplicator(p: &Params) -> std::result::Result<Operator, ParamError> {
    let consider_text = p.bool("consider_text");
    let skip_errors = skips_errors(p);
    let op = p.op().to_string();
    let f = Arc::new(move |args: &[ArrayRef]| -> Result<ArrayRef> {
        let paths = &args[0];
        let texts = match args.get(1) {
            Some(t) => Some(arrow::compute::cast(t, &DataType::Utf8)?),
            None => None,
        };
        let texts = texts.as_ref().map(|t| t.as_string::<i32>());
        let mut out = StringBuilder::new();
        for row in 0..paths.len() {
            let files = row_paths(&op, paths, row)?.unwrap_or_default();
            let video_hash = if files.is_empty() {
                String::new()
            } else {
                match videos_md5(&files) {
                    Ok(hash) => hash,
                    Err((path, e)) => {
                        unreadable(&op, skip_errors, "read video", &path, &e)?;
                        out.append_value("");
                        continue;
                    }
                }
            };
            match texts {
                Some(texts) => {
                    let text = texts.is_valid(row).then(|| texts.value(row));
                    let text_hash = document_hash(text.unwrap_or_default(), false, false);
                    out.append_value(format!("{video_hash}\t{text_hash}"));
                }
                None if video_hash.is_empty() => out.append_null(),
                None => out.append_value(video_hash),
            }
        }
        Ok(Arc::new(out.finish()))
    });
    Ok(Operator::Deduplicator(DedupOp {
        hash_column: VIDEOHASH_COLUMN,
        hash_udf: OpUdf::from_fn(UdfIdentity::of(p, ""), Some(DataType::Utf8), f),
        kind: DedupKind::Exact,
        reads: DedupReads::Media {
            column: p.str("video_key").unwrap_or("videos").to_string(),
            and_text: consider_text,
        },
    }))
}
