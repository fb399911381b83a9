//! Pruning as kube-apiserver does it on every write of a custom resource: fields the schema
//! does not declare are dropped unless `x-kubernetes-preserve-unknown-fields` is set, and a
//! `null` in a field that is neither `nullable` nor defaulted is removed. `apiVersion`, `kind`
//! and `metadata` survive at the root and in `x-kubernetes-embedded-resource` objects.

use crate::field_path::child;
use crate::node::{Additional, Node};
use serde_json::Value;
use std::fmt::Write as _;

/// Prunes `value`; the paths of dropped unknown fields (not of dropped nulls) go to `unknown`,
/// in the form `fieldValidation` reports them (`spec.list[0].field`), those holding `null`
/// only with `report_nulls`.
pub(crate) fn prune(
    node: &Node,
    value: &mut Value,
    resource_root: bool,
    path: &str,
    report_nulls: bool,
    unknown: &mut Vec<String>,
) {
    let mut path = path.to_owned();
    walk(node, value, resource_root, &mut path, report_nulls, unknown);
}

/// `prune` with the path in one buffer, extended and cut back on the way: a path is only
/// copied for a field that is reported.
fn walk(
    node: &Node,
    value: &mut Value,
    resource_root: bool,
    path: &mut String,
    report_nulls: bool,
    unknown: &mut Vec<String>,
) {
    match value {
        Value::Object(map) => {
            let keeps_type_meta = resource_root || node.embedded_resource;
            map.retain(|key, v| {
                if keeps_type_meta && matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
                    return true;
                }
                let schema = match node.properties.get(key) {
                    Some(prop) => prop,
                    None => match &node.additional {
                        Additional::Schema(s) => s.as_ref(),
                        Additional::Allowed(true) => return true,
                        Additional::Allowed(false) | Additional::Unspecified => {
                            if !node.preserve_unknown && (report_nulls || !v.is_null()) {
                                unknown.push(child(path, key));
                            }
                            return node.preserve_unknown;
                        }
                    },
                };
                if v.is_null() {
                    return schema.nullable || schema.default.is_some();
                }
                if v.is_object() || v.is_array() {
                    let len = path.len();
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(key);
                    walk(schema, v, false, path, report_nulls, unknown);
                    path.truncate(len);
                }
                true
            });
        }
        Value::Array(items) => {
            if let Some(schema) = &node.items {
                for (i, item) in items.iter_mut().enumerate() {
                    if item.is_object() || item.is_array() {
                        let len = path.len();
                        // Writing to a String cannot fail.
                        let _ = write!(path, "[{i}]");
                        walk(schema, item, false, path, report_nulls, unknown);
                        path.truncate(len);
                    }
                }
            }
        }
        _ => {}
    }
}
