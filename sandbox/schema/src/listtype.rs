//! `x-kubernetes-list-type` checks: items of a `set` list must be unique, items of a `map` list
//! must be objects with unique `x-kubernetes-list-map-keys`. Runs after value validation, as in
//! the apiserver, with field paths in `field.Path` style (`spec.ports[1]`, `spec.labels[key]`).
//! Also how an item of a `map` list finds its old version, for ratcheting and transition rules.

use crate::error::FieldError;
use crate::field_path::{child, index, key};
use crate::json_equal::json_equal;
use crate::node::{ListType, Node};
use serde_json::{Map, Value};

pub(crate) fn validate(
    node: &Node,
    value: &Value,
    path: &str,
    root: bool,
    errs: &mut Vec<FieldError>,
) {
    if !node.list_types_below {
        return;
    }
    match value {
        Value::Object(map) => {
            for (name, v) in map {
                if root && name == "metadata" {
                    continue;
                }
                if let Some(prop) = node.properties.get(name) {
                    validate(prop, v, &child(path, name), false, errs);
                } else if let Some(schema) = node.additional_schema() {
                    validate(schema, v, &key(path, name), false, errs);
                }
            }
        }
        Value::Array(items) => {
            match node.list_type {
                ListType::Atomic => {}
                ListType::Set => {
                    for (i, item) in items.iter().enumerate() {
                        if items[..i].iter().any(|prev| json_equal(prev, item)) {
                            errs.push(FieldError::duplicate(index(path, i), item.clone()));
                        }
                    }
                }
                ListType::Map => check_map_list(node, items, path, errs),
            }
            if let Some(schema) = &node.items {
                for (i, item) in items.iter().enumerate() {
                    validate(schema, item, &index(path, i), false, errs);
                }
            }
        }
        _ => {}
    }
}

fn check_map_list(node: &Node, items: &[Value], path: &str, errs: &mut Vec<FieldError>) {
    let mut seen: Vec<Value> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let Some(obj) = item.as_object() else {
            if !item.is_null() {
                errs.push(FieldError::invalid(
                    index(path, i),
                    item.clone(),
                    "must be an object for an array of list-type map",
                ));
            }
            continue;
        };
        let identity = map_key(&node.list_map_keys, obj);
        if seen.iter().any(|s| json_equal(s, &identity)) {
            errs.push(FieldError::duplicate(index(path, i), identity));
        } else {
            seen.push(identity);
        }
    }
}

/// The identity of a map-list item: the single key's value, or a map of all key values.
fn map_key(keys: &[String], item: &Map<String, Value>) -> Value {
    if let [only] = keys {
        return item.get(only).cloned().unwrap_or(Value::Null);
    }
    let mut identity = Map::new();
    for k in keys {
        identity.insert(k.clone(), item.get(k).cloned().unwrap_or(Value::Null));
    }
    Value::Object(identity)
}

/// The old version of a list item: only items of `x-kubernetes-list-type: map` lists have one,
/// found by their keys.
pub(crate) fn correlate_item<'a>(
    node: &Node,
    item: &Value,
    old: Option<&'a Value>,
) -> Option<&'a Value> {
    if node.list_type != ListType::Map {
        return None;
    }
    let id = map_key(&node.list_map_keys, item.as_object()?);
    old?.as_array()?.iter().find(|o| {
        o.as_object()
            .is_some_and(|oo| json_equal(&map_key(&node.list_map_keys, oo), &id))
    })
}
