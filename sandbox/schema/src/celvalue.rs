//! JSON values as CEL rules see them: typed by the schema node (`number` fields are doubles),
//! declared property names escaped, null fields and undeclared fields absent, and only
//! `metadata.name`/`generateName` visible at the root and in embedded resources.

use crate::node::{JsonType, Node};
use cel::objects::Key;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// A CEL `optional` holding `value` (or `optional.none()`).
pub(crate) fn optional(value: Option<cel::Value>) -> cel::Value {
    let opt = match value {
        Some(v) => cel::objects::OptionalValue::of(v),
        None => cel::objects::OptionalValue::none(),
    };
    cel::Value::Opaque(Arc::new(opt))
}

/// A JSON value as CEL sees it at `node`: `number` fields are doubles even when integral, and
/// declared property names are escaped. Undeclared keys of preserved objects keep their names.
pub(crate) fn to_cel(node: Option<&Node>, v: &Value, root: bool) -> cel::Value {
    match v {
        Value::Null => cel::Value::Null,
        Value::Bool(b) => cel::Value::Bool(*b),
        Value::Number(n) => {
            let wants_double = node.is_some_and(|n| n.ty == Some(JsonType::Number));
            match (n.as_i64(), wants_double) {
                (Some(i), false) => cel::Value::Int(i),
                _ => match n.as_u64() {
                    Some(u) if !wants_double && n.as_i64().is_none() => cel::Value::UInt(u),
                    _ => cel::Value::Float(n.as_f64().unwrap_or(f64::NAN)),
                },
            }
        }
        Value::String(s) => cel::Value::String(Arc::new(s.clone())),
        Value::Array(items) => {
            let item_node = node.and_then(|n| n.items.as_deref());
            cel::Value::List(Arc::new(
                items.iter().map(|i| to_cel(item_node, i, false)).collect(),
            ))
        }
        Value::Object(map) => {
            // Objects with declared properties show only those (unknown fields kept by
            // x-kubernetes-preserve-unknown-fields are invisible to rules); maps show every key.
            let declared_only =
                node.is_some_and(|n| !n.properties.is_empty() && n.additional_schema().is_none());
            let type_meta_only = root || node.is_some_and(|n| n.embedded_resource);
            let mut out: HashMap<Key, cel::Value> = HashMap::with_capacity(map.len());
            for (k, child_value) in map {
                // Null-valued fields are absent for CEL.
                if child_value.is_null() {
                    continue;
                }
                let child_value = if type_meta_only && k == "metadata" {
                    &root_metadata(child_value)
                } else {
                    child_value
                };
                let declared = node.and_then(|n| n.properties.get(k));
                let (name, child_node) = match declared {
                    Some(prop) => match &prop.cel_key {
                        Some(escaped) => (escaped.clone(), Some(prop)),
                        None => continue,
                    },
                    None if declared_only && !(type_meta_only && is_type_meta(k)) => continue,
                    None => (Key::from(k.clone()), node.and_then(Node::additional_schema)),
                };
                out.insert(name, to_cel(child_node, child_value, false));
            }
            cel::Value::Map(cel::objects::Map::from(out))
        }
    }
}

fn is_type_meta(key: &str) -> bool {
    matches!(key, "apiVersion" | "kind" | "metadata")
}

/// Rules at the root (and in embedded resources) see only `metadata.name` and
/// `metadata.generateName`.
fn root_metadata(meta: &Value) -> Value {
    let mut out = serde_json::Map::new();
    for k in ["name", "generateName"] {
        if let Some(v) = meta.get(k) {
            out.insert(k.to_owned(), v.clone());
        }
    }
    Value::Object(out)
}

const RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// Kubernetes' escaping of property names for CEL; `None` when the name cannot be expressed.
pub(crate) fn escape(name: &str) -> Option<String> {
    if RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let mut chars = name.chars();
    let first = chars.next()?;
    if !(first.is_ascii_alphabetic() || first == '_') {
        return None;
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/'))
    {
        return None;
    }
    Some(
        name.replace("__", "__underscores__")
            .replace('.', "__dot__")
            .replace('-', "__dash__")
            .replace('/', "__slash__"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_like_kubernetes() {
        assert_eq!(escape("name").as_deref(), Some("name"));
        assert_eq!(escape("x-y").as_deref(), Some("x__dash__y"));
        assert_eq!(escape("a.b/c").as_deref(), Some("a__dot__b__slash__c"));
        assert_eq!(escape("a__b").as_deref(), Some("a__underscores__b"));
        assert_eq!(escape("namespace").as_deref(), Some("__namespace__"));
        assert_eq!(escape("1abc"), None);
        assert_eq!(escape("a b"), None);
    }
}
