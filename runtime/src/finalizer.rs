//! The `ferroplane.io/managed-resource` finalizer: added before anything is created outside the
//! cluster, removed only when the external resource is confirmed gone or deliberately orphaned.
//!
//! Both writes are merge patches of `metadata.finalizers` carrying the object's
//! `resourceVersion` as a precondition, so a concurrent change to the list (another controller's
//! finalizer) makes the write fail with 409 instead of being overwritten.

use ferroplane_apis::common::names::FINALIZER;
use kube::api::ObjectMeta;
use serde_json::{Value, json};

/// Does the object carry our finalizer?
pub fn has(meta: &ObjectMeta) -> bool {
    meta.finalizers
        .as_ref()
        .is_some_and(|f| f.iter().any(|x| x == FINALIZER))
}

/// Merge patch adding our finalizer, or `None` when it is already there.
pub fn add_patch(meta: &ObjectMeta) -> Option<Value> {
    if has(meta) {
        return None;
    }
    let mut list = meta.finalizers.clone().unwrap_or_default();
    list.push(FINALIZER.to_owned());
    Some(json!({"metadata": {"finalizers": list, "resourceVersion": meta.resource_version}}))
}

/// Merge patch removing our finalizer, or `None` when it is not there. An emptied list is sent
/// as `null` so the field disappears, as the API server stores it.
pub fn remove_patch(meta: &ObjectMeta) -> Option<Value> {
    if !has(meta) {
        return None;
    }
    let list: Vec<String> = meta
        .finalizers
        .iter()
        .flatten()
        .filter(|f| *f != FINALIZER)
        .cloned()
        .collect();
    let list = if list.is_empty() {
        Value::Null
    } else {
        json!(list)
    };
    Some(json!({"metadata": {"finalizers": list, "resourceVersion": meta.resource_version}}))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(finalizers: Option<Vec<&str>>) -> ObjectMeta {
        ObjectMeta {
            finalizers: finalizers.map(|v| v.into_iter().map(String::from).collect()),
            resource_version: Some("42".into()),
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn add_keeps_others_and_is_conditional() {
        let p = add_patch(&meta(Some(vec!["other.io/x"]))).expect("patch");
        assert_eq!(
            p,
            json!({"metadata": {"finalizers": ["other.io/x", FINALIZER], "resourceVersion": "42"}})
        );
        assert_eq!(add_patch(&meta(Some(vec![FINALIZER]))), None);
        assert!(add_patch(&meta(None)).is_some());
    }

    #[test]
    fn remove_keeps_others_and_nulls_empty() {
        assert_eq!(
            remove_patch(&meta(Some(vec!["other.io/x", FINALIZER]))),
            Some(json!({"metadata": {"finalizers": ["other.io/x"], "resourceVersion": "42"}}))
        );
        assert_eq!(
            remove_patch(&meta(Some(vec![FINALIZER]))),
            Some(json!({"metadata": {"finalizers": null, "resourceVersion": "42"}}))
        );
        assert_eq!(remove_patch(&meta(Some(vec!["other.io/x"]))), None);
    }
}
