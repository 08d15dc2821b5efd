//! Which fields of a JSON input Data-Juicer's loader keeps as generic JSON. Hugging Face
//! `datasets` (4.x, `on_mixed_types="use_json"`) scans the first 10 MiB chunk of the first file:
//! an object field whose rows have different key sets (or an empty object), and a field holding
//! objects or lists next to other kinds, become its `Json` type, and once there is one, every
//! row is re-encoded with ujson (10 decimals) before Arrow reads it. The writer then keeps those
//! values' own keys and rounded floats ([`crate::pyjson::JsonTypes`]).

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde_json::Value;

use super::SourceError;
use super::files::{Compression, FileFormat, open};
use super::jsonl::ChunkShapes;
use super::skeleton::{RecentShapes, Skeleton};
use crate::pyjson::{JsonTypes, Step};

use super::JSON_SCAN_CHUNK as CHUNK;

/// The generic JSON fields of a JSON input whose first file is `path`. The rows are parsed as
/// [`Skeleton`]s: the scan looks at keys and kinds, never at a string's contents, and at each
/// shape once (repeats change nothing it finds).
pub(crate) fn detect(
    path: &Path,
    format: FileFormat,
    compression: Compression,
) -> Result<JsonTypes, SourceError> {
    let mut reader = BufReader::new(open(path, compression)?);
    let mut chunk = Vec::new();
    (&mut reader)
        .take(CHUNK)
        .read_to_end(&mut chunk)
        .map_err(|e| SourceError::io(path, e))?;
    if let Some(rest) = chunk.strip_prefix(b"\xEF\xBB\xBF") {
        chunk = rest.to_vec();
    }
    let examples: Vec<Value> = if format == FileFormat::JsonArray || chunk.first() == Some(&b'[') {
        // `datasets` converts a JSON array to lines as a whole before the scan: every element
        // is an example. Read one at a time; the skeletons hold no text.
        drop(reader);
        let mut elements = super::jsonl::array_elements(path, compression)?;
        let (mut items, mut recent) = (Vec::new(), RecentShapes::default());
        loop {
            match elements.next_element() {
                Ok(Some(_)) => match serde_json::from_slice(&elements.buf) {
                    Ok(Skeleton(v)) if recent.is_new(&v) => items.push(v),
                    Ok(_) => {}
                    Err(_) => return Ok(JsonTypes::none()),
                },
                Ok(None) => break items,
                Err(_) => return Ok(JsonTypes::none()),
            }
        }
    } else {
        reader
            .read_until(b'\n', &mut chunk)
            .map_err(|e| SourceError::io(path, e))?;
        // Python's `bytes.splitlines`; a line that does not parse (a blank one included)
        // makes `datasets` skip the scan.
        let text = chunk.strip_suffix(b"\n").unwrap_or(&chunk);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        let (mut rows, mut recent) = (Vec::new(), RecentShapes::default());
        for line in text.split(|b| *b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            match serde_json::from_slice(line) {
                Ok(Skeleton(v)) if recent.is_new(&v) => rows.push(v),
                Ok(_) => {}
                Err(_) => return Ok(JsonTypes::none()),
            }
        }
        rows
    };
    Ok(from_examples(&examples))
}

/// The generic JSON fields of a JSON lines file from the shapes of its first [`CHUNK`] bytes'
/// rows, found while indexing it: none when a blank line is among them (`datasets` then skips
/// the scan), as [`detect`] finds.
pub(crate) fn from_chunk(chunk: &ChunkShapes) -> JsonTypes {
    if chunk.blank {
        return JsonTypes::none();
    }
    from_examples(&chunk.shapes)
}

fn from_examples(examples: &[Value]) -> JsonTypes {
    let mut types = JsonTypes::none();
    for path in mixed_paths(examples) {
        types.mark(&path);
        types.set_reencoded();
    }
    types
}

/// An object's keys as a set (sorted).
fn keys(v: &Value) -> Vec<&String> {
    let mut k: Vec<&String> = v.as_object().expect("object").keys().collect();
    k.sort();
    k
}

/// `datasets.utils.json.find_mixed_struct_types_field_paths` (without the root).
fn mixed_paths(examples: &[Value]) -> Vec<Vec<Step>> {
    let mut found = Vec::new();
    let first: Vec<&Value> = examples.iter().filter(|v| !v.is_null()).collect();
    if first.is_empty() {
        return found;
    }
    let mut queue: VecDeque<(Vec<Step>, Vec<&Value>)> = VecDeque::from([(Vec::new(), first)]);
    while let Some((path, content)) = queue.pop_front() {
        if content.iter().all(|v| v.is_object()) {
            let first_keys = keys(content[0]);
            if !path.is_empty()
                && (first_keys.is_empty() || content.iter().any(|v| keys(v) != first_keys))
            {
                found.push(path);
                continue;
            }
            let mut fields: Vec<&String> = Vec::new();
            for v in &content {
                for k in v.as_object().expect("object").keys() {
                    if !fields.contains(&k) {
                        fields.push(k);
                    }
                }
            }
            for field in fields {
                let values: Vec<&Value> = content
                    .iter()
                    .filter_map(|v| v.get(field.as_str()))
                    .filter(|v| !v.is_null())
                    .collect();
                if !values.is_empty() {
                    let mut p = path.clone();
                    p.push(Step::Key(field.clone()));
                    queue.push_back((p, values));
                }
            }
        } else if content.iter().all(|v| v.is_array()) {
            let items: Vec<&Value> = content
                .iter()
                .flat_map(|v| v.as_array().expect("array"))
                .filter(|v| !v.is_null())
                .collect();
            if !items.is_empty() {
                let mut p = path.clone();
                p.push(Step::Item);
                queue.push_back((p, items));
            }
        } else if content.iter().any(|v| v.is_object() || v.is_array()) {
            found.push(path);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn paths(rows: Value) -> Vec<Vec<Step>> {
        mixed_paths(rows.as_array().unwrap())
    }

    fn key(k: &str) -> Step {
        Step::Key(k.into())
    }

    /// What `find_mixed_struct_types_field_paths` gives for the same rows.
    #[test]
    fn finds_the_fields_hugging_face_keeps_as_json() {
        // Constant keys: a struct; varying keys below `meta`: `meta` is JSON.
        assert!(paths(json!([{"meta": {"a": 1}}, {"meta": {"a": 2.5}}])).is_empty());
        assert_eq!(
            paths(json!([{"meta": {"a": 1}}, {"meta": {"a": 1, "url": "x"}}])),
            [vec![key("meta")]]
        );
        // Top-level keys may vary (the root is never JSON); an empty object is JSON.
        assert_eq!(
            paths(json!([{"t": "x"}, {"t": "y", "s": {}}])),
            [vec![key("s")]]
        );
        // Lists of objects with varying keys: the items are JSON; null items and fields skipped.
        assert_eq!(
            paths(json!([{"l": [{"a": 1}, null]}, {"l": [{"b": 1}], "n": null}])),
            [vec![key("l"), Step::Item]]
        );
        // Objects next to scalars.
        assert_eq!(paths(json!([{"x": {"a": 1}}, {"x": 3}])), [vec![key("x")]]);
        assert!(paths(json!([{"x": 1}, {"x": "s"}])).is_empty());
    }
}
