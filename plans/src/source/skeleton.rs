//! Rows reduced to their shape for indexing: [`Skeleton`] deserializes a JSON row with every
//! string replaced by `""` and every number by one of its kind, validating what it skips, so
//! schema inference and the generic-JSON scan see each row's types without copying its texts.

use std::path::Path;

use serde_json::Value;

use super::SourceError;

/// The row on `line` parsed and checked to be an object, as its [`Skeleton`]: what schema
/// inference needs, without copying the texts.
pub(super) fn parse_object(bytes: &[u8], path: &Path, line: u64) -> Result<Value, SourceError> {
    let Skeleton(v) = serde_json::from_slice(bytes).map_err(|e| SourceError::BadRow {
        path: path.to_path_buf(),
        line,
        message: e.to_string(),
    })?;
    if !v.is_object() {
        return Err(SourceError::BadRow {
            path: path.to_path_buf(),
            line,
            message: format!("expected a JSON object, got {}", kind(&v)),
        });
    }
    Ok(v)
}

/// A JSON value with every string replaced by `""` and every number by one of its kind (`0`,
/// `0.0`, or `u64::MAX` past `i64`): the same types for schema inference, rows of one shape
/// equal, and no allocation per string, which for long texts was most of the time (and fresh
/// memory) spent indexing the input. Strings are not even unescaped: each member is first
/// skipped as a raw value (validated, UTF-8 included, without a copy), and only what is not a
/// string is parsed.
pub(super) struct Skeleton(pub(super) Value);

/// The last few distinct row skeletons seen. A row shaped like one of them adds nothing to what
/// is inferred from the rows (the schema, the generic JSON fields): each shape is looked at once
/// instead of once per row, which for short rows was most of the indexing time.
#[derive(Default)]
pub(super) struct RecentShapes(std::collections::VecDeque<Value>);

impl RecentShapes {
    const KEPT: usize = 8;

    /// Whether `v` is none of the recent shapes; if so, it becomes one.
    pub(super) fn is_new(&mut self, v: &Value) -> bool {
        if self.0.contains(v) {
            return false;
        }
        if self.0.len() == Self::KEPT {
            self.0.pop_front();
        }
        self.0.push_back(v.clone());
        true
    }
}

/// A JSON string parsed (unescaped into serde_json's buffer) and dropped.
struct Unescaped;

impl<'de> serde::Deserialize<'de> for Unescaped {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Unescaped, D::Error> {
        struct Dropped;
        impl serde::de::Visitor<'_> for Dropped {
            type Value = Unescaped;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E>(self, _: &str) -> Result<Unescaped, E> {
                Ok(Unescaped)
            }
        }
        d.deserialize_str(Dropped)
    }
}

/// An object member or array element of a [`Skeleton`].
struct Member(Value);

impl<'de> serde::Deserialize<'de> for Member {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Member, D::Error> {
        use serde::de::Error;
        let raw = <&serde_json::value::RawValue>::deserialize(d)?;
        let text = raw.get();
        if text.starts_with('"') {
            // Skipping checks escapes, not that `\u` escapes pair their surrogates, which
            // parsing the string does (a lone surrogate is refused, as before).
            static ESCAPE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
                std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\\u"));
            if ESCAPE.find(text.as_bytes()).is_some() {
                serde_json::from_str::<Unescaped>(text).map_err(D::Error::custom)?;
            }
            return Ok(Member(Value::String(String::new())));
        }
        // Each nested value is parsed on its own, with serde_json's depth limit starting over:
        // count the levels here, so that deep nesting is still refused, not a stack overflow.
        thread_local! {
            static DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
        }
        let depth = DEPTH.get();
        if depth >= MAX_NESTING {
            return Err(D::Error::custom("recursion limit exceeded"));
        }
        DEPTH.set(depth + 1);
        let parsed = serde_json::from_str::<Skeleton>(text);
        DEPTH.set(depth);
        parsed
            .map(|Skeleton(v)| Member(v))
            .map_err(D::Error::custom)
    }
}

/// serde_json's own limit on nested arrays and objects.
const MAX_NESTING: usize = 128;

impl<'de> serde::Deserialize<'de> for Skeleton {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Skeleton, D::Error> {
        d.deserialize_any(SkeletonVisitor).map(Skeleton)
    }
}

struct SkeletonVisitor;

impl<'de> serde::de::Visitor<'de> for SkeletonVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Value, E> {
        Ok(Value::from(0))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(if i64::try_from(v).is_ok() {
            0
        } else {
            u64::MAX
        }))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Value, E> {
        Ok(Value::from(0.0))
    }
    fn visit_str<E>(self, _: &str) -> Result<Value, E> {
        Ok(Value::String(String::new()))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Member(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some((key, Member(v))) = map.next_entry::<String, Member>()? {
            object.insert(key, v);
        }
        Ok(Value::Object(object))
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Skeletons keep every type and replace each string by `""` and each number by one of its
    /// kind, strings skipped or parsed;
    /// what serde_json refuses is still refused, deep nesting included (no stack overflow).
    #[test]
    fn skeletons_keep_types_and_refuse_what_serde_json_refuses() {
        let skeleton = |row: &str| serde_json::from_str::<Skeleton>(row).map(|Skeleton(v)| v);
        let row = r#"{"text": "a\nb \u00e9 \ud83d\ude00", "n": 3, "f": 1.5, "b": true,
            "z": null, "meta": {"tags": ["x", 1, {"k": "v"}], "e": {}}, "l": []}"#;
        assert_eq!(
            skeleton(row).unwrap(),
            serde_json::json!({"text": "", "n": 0, "f": 0.0, "b": true, "z": null,
                "meta": {"tags": ["", 0, {"k": ""}], "e": {}}, "l": []})
        );
        let numbers = skeleton(r#"{"a": -7, "b": 9223372036854775808, "c": 2e3}"#).unwrap();
        assert_eq!(
            numbers,
            serde_json::json!({"a": 0, "b": u64::MAX, "c": 0.0})
        );
        assert!(numbers["a"].is_i64() && !numbers["b"].is_i64() && numbers["c"].is_f64());
        for (bad, why) in [
            (
                r#"{"text": "\ud800 alone"}"#,
                "unexpected end of hex escape",
            ),
            (r#"{"tags": ["\udc00"]}"#, "lone leading surrogate"),
            (r#"{"text": "bad \x escape"}"#, "invalid escape"),
            ("{\"text\": \"tab\there\"}", "control character"),
        ] {
            let err = skeleton(bad).unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
        let invalid_utf8 = b"{\"text\": \"\xff\"}";
        let err = serde_json::from_slice::<Skeleton>(invalid_utf8)
            .map(|Skeleton(v)| v)
            .unwrap_err();
        assert!(
            err.to_string().contains("invalid unicode code point"),
            "{err}"
        );
        let deep = format!(
            "{{\"meta\": {}{}}}",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let err = skeleton(&deep).unwrap_err().to_string();
        assert!(err.starts_with("recursion limit exceeded"), "{err}");
        let fine = format!("{{\"meta\": {}{}}}", "[".repeat(100), "]".repeat(100));
        assert!(skeleton(&fine).is_ok());
    }
}
