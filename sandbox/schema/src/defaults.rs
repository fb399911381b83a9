//! Structural defaulting as kube-apiserver applies it: a property's `default` fills a missing
//! field, or a `null` in a field that is not `nullable`; defaults apply recursively, including
//! inside values that were themselves just defaulted, list items and `additionalProperties`.

use crate::node::Node;
use serde_json::Value;

pub(crate) fn apply(node: &Node, value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (name, prop) in &node.properties {
                let Some(default) = &prop.default else {
                    continue;
                };
                let missing_or_null = match map.get(name) {
                    None => true,
                    Some(v) => v.is_null() && !prop.nullable,
                };
                if missing_or_null {
                    map.insert(name.clone(), default.clone());
                }
            }
            let additional = node.additional_schema();
            for (key, child) in map.iter_mut() {
                if let Some(prop) = node.properties.get(key) {
                    apply(prop, child);
                } else if let Some(schema) = additional {
                    fill_null(schema, child);
                    apply(schema, child);
                }
            }
        }
        Value::Array(items) => {
            if let Some(schema) = &node.items {
                for item in items.iter_mut() {
                    fill_null(schema, item);
                    apply(schema, item);
                }
            }
        }
        _ => {}
    }
}

fn fill_null(schema: &Node, value: &mut Value) {
    if value.is_null()
        && !schema.nullable
        && let Some(default) = &schema.default
    {
        *value = default.clone();
    }
}
