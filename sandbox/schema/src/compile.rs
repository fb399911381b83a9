//! Compiling one `openAPIV3Schema` node into a [`Node`]: keywords parsed and checked, patterns
//! and CEL rules compiled, the flags that let requests skip subtrees computed, and defaults
//! checked the way the apiserver checks them when a CRD is created.

use crate::celvalue::escape;
use crate::defaults;
use crate::error::SchemaError;
use crate::node::{Additional, Bound, JsonType, ListType, Node, Pattern};
use crate::prune;
use crate::rule::Rule;
use crate::validate;
use regex::Regex;
use serde_json::{Map, Number, Value};

/// Compiles the schema `value` found at `path` (used in error messages).
pub(crate) fn compile_node(value: &Value, path: &str) -> Result<Node, SchemaError> {
    let obj = value
        .as_object()
        .ok_or_else(|| invalid(path, "must be an object"))?;
    let mut node = Node::default();
    if obj.contains_key("$ref") {
        return Err(invalid(
            path,
            "$ref is not allowed in a CRD schema; inline the referenced schema",
        ));
    }
    if let Some(t) = obj.get("type") {
        let s = t
            .as_str()
            .ok_or_else(|| invalid(&format!("{path}.type"), "must be a string"))?;
        node.ty = Some(JsonType::parse(s).ok_or_else(|| {
            invalid(
                &format!("{path}.type"),
                &format!(
                    "unsupported type {s:?}: must be one of object, array, string, integer, number, boolean"
                ),
            )
        })?);
    }
    node.nullable = flag(obj, "nullable", path)?;
    node.format = string(obj, "format", path)?;
    node.int_or_string = flag(obj, "x-kubernetes-int-or-string", path)?;
    node.preserve_unknown = flag(obj, "x-kubernetes-preserve-unknown-fields", path)?;
    node.embedded_resource = flag(obj, "x-kubernetes-embedded-resource", path)?;
    node.unique_items = flag(obj, "uniqueItems", path)?;
    node.default = obj.get("default").cloned();

    if let Some(props) = obj.get("properties") {
        let props = props
            .as_object()
            .ok_or_else(|| invalid(&format!("{path}.properties"), "must be an object"))?;
        for (name, schema) in props {
            let mut child = compile_node(schema, &format!("{path}.properties[{name}]"))?;
            child.cel_key = escape(name).map(cel::objects::Key::from);
            node.properties.insert(name.clone(), child);
        }
    }
    node.additional = match obj.get("additionalProperties") {
        None => Additional::Unspecified,
        Some(Value::Bool(b)) => Additional::Allowed(*b),
        Some(schema) => Additional::Schema(Box::new(compile_node(
            schema,
            &format!("{path}.additionalProperties"),
        )?)),
    };
    if let Some(items) = obj.get("items") {
        if items.is_array() {
            return Err(invalid(
                &format!("{path}.items"),
                "must be a single schema; tuple items are not allowed in structural schemas",
            ));
        }
        node.items = Some(Box::new(compile_node(items, &format!("{path}.items"))?));
    }
    if let Some(req) = obj.get("required") {
        let list = req
            .as_array()
            .ok_or_else(|| invalid(&format!("{path}.required"), "must be a list of strings"))?;
        for r in list {
            let name = r
                .as_str()
                .ok_or_else(|| invalid(&format!("{path}.required"), "must be a list of strings"))?;
            node.required.push(name.to_owned());
        }
    }
    if let Some(e) = obj.get("enum") {
        let list = e
            .as_array()
            .ok_or_else(|| invalid(&format!("{path}.enum"), "must be a list"))?;
        node.enumeration = Some(list.clone());
    } else if let Some(c) = obj.get("const") {
        // Not a Kubernetes keyword, but schemars emits it for documented enum variants.
        node.enumeration = Some(vec![c.clone()]);
    }
    node.minimum = bound(obj, "minimum", "exclusiveMinimum", path)?;
    node.maximum = bound(obj, "maximum", "exclusiveMaximum", path)?;
    node.multiple_of = number(obj, "multipleOf", path)?;
    node.min_length = count(obj, "minLength", path)?;
    node.max_length = count(obj, "maxLength", path)?;
    node.min_items = count(obj, "minItems", path)?;
    node.max_items = count(obj, "maxItems", path)?;
    node.min_properties = count(obj, "minProperties", path)?;
    node.max_properties = count(obj, "maxProperties", path)?;
    if let Some(p) = string(obj, "pattern", path)? {
        let regex = Regex::new(&p).map_err(|e| SchemaError::InvalidPattern {
            path: format!("{path}.pattern"),
            pattern: p.clone(),
            message: e.to_string(),
        })?;
        node.pattern = Some(Pattern { source: p, regex });
    }
    node.all_of = branches(obj, "allOf", path)?;
    node.any_of = branches(obj, "anyOf", path)?;
    node.one_of = branches(obj, "oneOf", path)?;
    if let Some(not) = obj.get("not") {
        node.not = Some(Box::new(compile_node(not, &format!("{path}.not"))?));
    }
    node.list_type = match string(obj, "x-kubernetes-list-type", path)?.as_deref() {
        None | Some("atomic") => ListType::Atomic,
        Some("set") => ListType::Set,
        Some("map") => ListType::Map,
        Some(other) => {
            return Err(invalid(
                &format!("{path}.x-kubernetes-list-type"),
                &format!("unsupported value {other:?}: must be atomic, set or map"),
            ));
        }
    };
    if let Some(keys) = obj.get("x-kubernetes-list-map-keys") {
        let list = keys.as_array().ok_or_else(|| {
            invalid(
                &format!("{path}.x-kubernetes-list-map-keys"),
                "must be a list of strings",
            )
        })?;
        for k in list {
            let k = k.as_str().ok_or_else(|| {
                invalid(
                    &format!("{path}.x-kubernetes-list-map-keys"),
                    "must be a list of strings",
                )
            })?;
            node.list_map_keys.push(k.to_owned());
        }
    }
    if node.list_type == ListType::Map && node.list_map_keys.is_empty() {
        return Err(invalid(
            &format!("{path}.x-kubernetes-list-map-keys"),
            "must not be empty if x-kubernetes-list-type is map",
        ));
    }
    if let Some(rules) = obj.get("x-kubernetes-validations") {
        let list = rules.as_array().ok_or_else(|| {
            invalid(
                &format!("{path}.x-kubernetes-validations"),
                "must be a list",
            )
        })?;
        for (i, rule) in list.iter().enumerate() {
            node.rules.push(Rule::compile(
                rule,
                &format!("{path}.x-kubernetes-validations[{i}]"),
            )?);
        }
    }
    node.rules_below = !node.rules.is_empty() || node.any_child(|c| c.rules_below);
    node.sticky_below = !node.required.is_empty()
        || !node.all_of.is_empty()
        || !node.any_of.is_empty()
        || !node.one_of.is_empty()
        || node.not.is_some()
        || node.embedded_resource
        || node.any_child(|c| c.sticky_below);
    node.list_types_below =
        node.list_type != ListType::Atomic || node.any_child(|c| c.list_types_below);
    if let Some(default) = &node.default {
        check_default(&node, default, path)?;
    }
    Ok(node)
}

/// The apiserver refuses a CRD whose `default` would not survive pruning or validation.
/// Nested defaults are applied to the default first, so a default of `{}` for an object whose
/// required fields have defaults of their own is fine.
fn check_default(node: &Node, default: &Value, path: &str) -> Result<(), SchemaError> {
    if default.is_null() {
        return Ok(());
    }
    let mut value = default.clone();
    let mut unknown = Vec::new();
    prune::prune(node, &mut value, false, "default", true, &mut unknown);
    if let Some(field) = unknown.first() {
        return Err(invalid(
            path,
            &format!("{field}: must not have unknown fields"),
        ));
    }
    defaults::apply(node, &mut value);
    match validate::validate(node, &value, None, "default", false).first() {
        Some(error) => Err(invalid(path, &error.to_string())),
        None => Ok(()),
    }
}

fn invalid(path: &str, message: &str) -> SchemaError {
    SchemaError::InvalidSchema {
        path: path.to_owned(),
        message: message.to_owned(),
    }
}

fn flag(obj: &Map<String, Value>, key: &str, path: &str) -> Result<bool, SchemaError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(invalid(&format!("{path}.{key}"), "must be a boolean")),
    }
}

fn string(obj: &Map<String, Value>, key: &str, path: &str) -> Result<Option<String>, SchemaError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(invalid(&format!("{path}.{key}"), "must be a string")),
    }
}

fn number(obj: &Map<String, Value>, key: &str, path: &str) -> Result<Option<Number>, SchemaError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(Some(n.clone())),
        Some(_) => Err(invalid(&format!("{path}.{key}"), "must be a number")),
    }
}

fn count(obj: &Map<String, Value>, key: &str, path: &str) -> Result<Option<u64>, SchemaError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_u64()
            .map(Some)
            .ok_or_else(|| invalid(&format!("{path}.{key}"), "must be a non-negative integer")),
        Some(_) => Err(invalid(
            &format!("{path}.{key}"),
            "must be a non-negative integer",
        )),
    }
}

fn bound(
    obj: &Map<String, Value>,
    key: &str,
    exclusive_key: &str,
    path: &str,
) -> Result<Option<Bound>, SchemaError> {
    let Some(value) = number(obj, key, path)? else {
        return Ok(None);
    };
    let exclusive = flag(obj, exclusive_key, path)?;
    Ok(Some(Bound { value, exclusive }))
}

fn branches(obj: &Map<String, Value>, key: &str, path: &str) -> Result<Vec<Node>, SchemaError> {
    let Some(list) = obj.get(key) else {
        return Ok(Vec::new());
    };
    let list = list
        .as_array()
        .ok_or_else(|| invalid(&format!("{path}.{key}"), "must be a list of schemas"))?;
    list.iter()
        .enumerate()
        .map(|(i, s)| compile_node(s, &format!("{path}.{key}[{i}]")))
        .collect()
}
