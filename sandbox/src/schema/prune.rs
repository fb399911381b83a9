//! Pruning as kube-apiserver does it on every write of a custom resource: fields the schema
//! does not declare are dropped unless `x-kubernetes-preserve-unknown-fields` is set, and a
//! `null` in a field that is neither `nullable` nor defaulted is removed. `apiVersion`, `kind`
//! and `metadata` survive at the root and in `x-kubernetes-embedded-resource` objects.

use super::node::{Additional, Node};
use serde_json::Value;

pub(crate) fn prune(node: &Node, value: &mut Value, resource_root: bool) {
    match value {
        Value::Object(map) => {
            let keeps_type_meta = resource_root || node.embedded_resource;
            map.retain(|key, v| {
                if keeps_type_meta && matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
                    return true;
                }
                let schema = match node.properties.get(key) {
                    Some(prop) => Some(prop),
                    None => match &node.additional {
                        Additional::Schema(s) => Some(s.as_ref()),
                        Additional::Allowed(true) => return true,
                        Additional::Allowed(false) | Additional::Unspecified => {
                            return node.preserve_unknown;
                        }
                    },
                };
                match schema {
                    Some(s) if v.is_null() => s.nullable || s.default.is_some(),
                    Some(s) => {
                        prune(s, v, false);
                        true
                    }
                    None => true,
                }
            });
        }
        Value::Array(items) => {
            if let Some(schema) = &node.items {
                for item in items.iter_mut() {
                    prune(schema, item, false);
                }
            }
        }
        _ => {}
    }
}
