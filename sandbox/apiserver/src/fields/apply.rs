//! Server-side apply: the applied configuration is merged into the live object (maps
//! recursively, keyed lists by their merge key for built-ins, other lists replaced), the fields
//! this manager applied before and no longer applies are removed unless another manager claims
//! them, and a field another manager owns with another value is a conflict (409) unless
//! `force` takes it over.

use serde_json::{Map, Value};

use crate::error::{ApiError, Cause};
use crate::fields::managed::{
    applied_set, entries, entry_subresource, record, same_entry, transfer,
};
use crate::fields::ownership::{self, FieldPath};
use crate::fields::shape::{ListType, Shape};
use crate::meta;

/// Merges an applied configuration into the live object, lists by their schema's list type.
fn merge(live: &mut Value, applied: &Value, shape: Shape<'_>) {
    match (live, applied) {
        (live @ Value::Object(_), applied @ Value::Object(_)) if shape.is_atomic_map() => {
            *live = applied.clone();
        }
        (Value::Object(l), Value::Object(a)) => {
            for (k, v) in a {
                match l.get_mut(k) {
                    Some(existing) if !v.is_null() => merge(existing, v, shape.field(k)),
                    _ => {
                        l.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (Value::Array(l), Value::Array(a)) => match shape.list_type() {
            ListType::Set => {
                for item in a {
                    if !l.contains(item) {
                        l.push(item.clone());
                    }
                }
            }
            ListType::Map(keys) => {
                let items = shape.items();
                for item in a {
                    let id = items.identity(item, &keys);
                    match l.iter().position(|c| items.identity(c, &keys) == id) {
                        Some(i) => merge(&mut l[i], item, items),
                        None => l.push(item.clone()),
                    }
                }
            }
            ListType::Atomic => *l = a.clone(),
        },
        (live, applied) => *live = applied.clone(),
    }
}

/// Removes from `live` what `previous` owned, `current` no longer owns and no `other` owns.
fn prune(
    live: &mut Value,
    previous: &Map<String, Value>,
    current: Option<&Map<String, Value>>,
    others: &[&Map<String, Value>],
) {
    for (entry, sub) in previous {
        if entry == "." {
            continue;
        }
        let now = current
            .and_then(|c| c.get(entry))
            .and_then(Value::as_object);
        let still: Vec<&Map<String, Value>> = others
            .iter()
            .filter_map(|o| o.get(entry).and_then(Value::as_object))
            .collect();
        let kept = current.is_some_and(|c| c.contains_key(entry)) || !still.is_empty();
        let sub = sub.as_object();
        if let Some(field) = entry.strip_prefix("f:") {
            let Value::Object(map) = live else { continue };
            if !kept {
                map.remove(field);
            } else if let (Some(child), Some(sub)) = (map.get_mut(field), sub) {
                prune(child, sub, now, &still);
            }
        } else if let Some(key) = entry.strip_prefix("k:") {
            let (Value::Array(items), Ok(Value::Object(id))) =
                (&mut *live, serde_json::from_str::<Value>(key))
            else {
                continue;
            };
            let matches = |item: &Value| id.iter().all(|(k, v)| item.get(k) == Some(v));
            if !kept {
                items.retain(|i| !matches(i));
            } else if let (Some(item), Some(sub)) = (items.iter_mut().find(|i| matches(i)), sub) {
                prune(item, sub, now, &still);
            }
        } else if let Some(raw) = entry.strip_prefix("v:")
            && let (Value::Array(items), Ok(v)) = (&mut *live, serde_json::from_str::<Value>(raw))
            && !kept
        {
            items.retain(|i| *i != v);
        }
    }
}

/// Server-side apply of `applied` by `manager` onto `live` (which carries managedFields).
/// `subresource` is `""` or `"status"`; the caller restricts the result to what that endpoint
/// may change.
pub fn apply(
    live: &Value,
    applied: &Value,
    manager: &str,
    subresource: &str,
    shape: Shape<'_>,
    force: bool,
) -> Result<Value, ApiError> {
    let api_version = meta::str_at(applied, "/apiVersion").to_owned();
    let mut applied_body = applied.clone();
    if let Some(m) = applied_body
        .get_mut("metadata")
        .and_then(Value::as_object_mut)
    {
        m.remove("managedFields");
        m.remove("resourceVersion");
    }
    if let Some(duplicate) = duplicate_key(&applied_body, shape, &mut String::new()) {
        return Err(ApiError::untyped_apply(format!(
            "failed to create typed patch object ({}/{}; {api_version}, Kind={}): {duplicate}",
            meta::str_at(&applied_body, "/metadata/namespace"),
            meta::name_of(&applied_body),
            meta::str_at(&applied_body, "/kind"),
        )));
    }
    let mut result = live.clone();
    let current = applied_set(&applied_body, shape);
    let existing = entries(live);
    let previous = existing
        .iter()
        .find(|e| same_entry(e, manager, "Apply", subresource))
        .and_then(|e| e.get("fieldsV1"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let others: Vec<&Map<String, Value>> = existing
        .iter()
        .filter(|e| !same_entry(e, manager, "Apply", subresource))
        .filter_map(|e| e.get("fieldsV1").and_then(Value::as_object))
        .collect();
    prune(&mut result, &previous, Some(&current), &others);
    merge(&mut result, &applied_body, shape);
    let conflicts = conflicts(live, &result, &current, &existing, manager, subresource);
    if !conflicts.is_empty() && !force {
        return Err(conflict_error(&conflicts));
    }
    record(
        &mut result,
        manager,
        "Apply",
        &api_version,
        subresource,
        current,
    );
    // `force` takes the conflicting fields away from their owners.
    let taken: Vec<FieldPath> = conflicts.into_iter().map(|c| c.path).collect();
    transfer(&mut result, &taken, manager, "Apply", subresource);
    Ok(result)
}

/// The first keyed list of `value` (by its schema) that holds two items with the same key, as
/// kube-apiserver words it: `.spec.ports: duplicate entries for key [port=80,protocol="TCP"]`.
/// `path` is where `value` sits.
fn duplicate_key(value: &Value, shape: Shape<'_>, path: &mut String) -> Option<String> {
    match value {
        Value::Object(map) if !shape.is_atomic_map() => map.iter().find_map(|(k, v)| {
            let len = path.len();
            path.push('.');
            path.push_str(k);
            let found = duplicate_key(v, shape.field(k), path);
            path.truncate(len);
            found
        }),
        Value::Array(items) => {
            let ListType::Map(keys) = shape.list_type() else {
                return None;
            };
            let item_shape = shape.items();
            let mut seen: Vec<Map<String, Value>> = Vec::new();
            for item in items {
                let id = item_shape.identity(item, &keys);
                let key = id
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(",");
                if seen.contains(&id) {
                    return Some(format!("{path}: duplicate entries for key [{key}]"));
                }
                let len = path.len();
                path.push_str(&format!("[{key}]"));
                let found = duplicate_key(item, item_shape, path);
                path.truncate(len);
                if found.is_some() {
                    return found;
                }
                seen.push(id);
            }
            None
        }
        _ => None,
    }
}

/// A field another manager owns with another value.
struct Conflict {
    /// How kube-apiserver names the owner: `"m"` for an applier, `"m" using v1` for an
    /// updater, with `with subresource "status"` when it wrote there.
    owner: String,
    path: FieldPath,
}

fn owner_words(entry: &Value) -> String {
    let mut words = format!("{:?}", meta::str_at(entry, "/manager"));
    let subresource = meta::str_at(entry, "/subresource");
    if !subresource.is_empty() {
        words.push_str(&format!(" with subresource {subresource:?}"));
    }
    if meta::str_at(entry, "/operation") == "Update" {
        words.push_str(&format!(" using {}", meta::str_at(entry, "/apiVersion")));
    }
    words
}

/// The applied fields whose merged value differs from the live one while another manager owns
/// them (compared after the merge, so key fields the apply left to their defaults match).
fn conflicts(
    live: &Value,
    merged: &Value,
    applied_set: &Map<String, Value>,
    existing: &[Value],
    manager: &str,
    subresource: &str,
) -> Vec<Conflict> {
    let mut out = Vec::new();
    for path in ownership::leaves(applied_set) {
        let Some(live_value) = ownership::value_at(live, &path) else {
            continue;
        };
        if Some(live_value) == ownership::value_at(merged, &path) {
            continue;
        }
        for entry in existing.iter().filter(|e| {
            !same_entry(e, manager, "Apply", subresource) && entry_subresource(e) == subresource
        }) {
            let owned = entry.get("fieldsV1").and_then(Value::as_object);
            if owned.is_some_and(|set| ownership::is_member(set, &path)) {
                out.push(Conflict {
                    owner: owner_words(entry),
                    path: path.clone(),
                });
            }
        }
    }
    out
}

/// The apiserver's wording: `Apply failed with 1 conflict: conflict with "m": .spec.x` (an
/// updater is `"m" using v1`).
fn conflict_error(conflicts: &[Conflict]) -> ApiError {
    let causes = conflicts
        .iter()
        .map(|c| Cause {
            reason: "FieldManagerConflict".into(),
            message: format!("conflict with {}", c.owner),
            field: ownership::display(&c.path),
        })
        .collect();
    let message = if let [only] = conflicts {
        format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            only.owner,
            ownership::display(&only.path)
        )
    } else {
        let mut groups: Vec<(String, Vec<String>)> = Vec::new();
        for c in conflicts {
            let head = format!("conflicts with {}:", c.owner);
            match groups.iter_mut().find(|(h, _)| *h == head) {
                Some((_, paths)) => paths.push(ownership::display(&c.path)),
                None => groups.push((head, vec![ownership::display(&c.path)])),
            }
        }
        let body: Vec<String> = groups
            .iter()
            .map(|(head, paths)| format!("{head}\n- {}", paths.join("\n- ")))
            .collect();
        format!(
            "Apply failed with {} conflicts: {}",
            conflicts.len(),
            body.join("\n")
        )
    };
    ApiError::apply_conflicts(message, causes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fields::managed::changed_fields;
    use crate::fields::shape::{builtin_kind, schemaless_custom_kind};
    use serde_json::json;

    #[test]
    fn reapply_removes_fields_the_manager_dropped_but_keeps_others() {
        let live = json!({"apiVersion": "example.io/v1", "kind": "W", "metadata": {"name": "w"}, "spec": {}});
        let first = apply(
            &live,
            &json!({"apiVersion": "example.io/v1", "kind": "W", "metadata": {"name": "w"}, "spec": {"a": 1, "b": 2}}),
            "m1",
            "",
            schemaless_custom_kind(),
            true,
        )
        .expect("no conflicts");
        let other = apply(
            &first,
            &json!({"apiVersion": "example.io/v1", "kind": "W", "metadata": {"name": "w"}, "spec": {"b": 2, "c": 3}}),
            "m2",
            "",
            schemaless_custom_kind(),
            true,
        )
        .expect("no conflicts");
        let second = apply(
            &other,
            &json!({"apiVersion": "example.io/v1", "kind": "W", "metadata": {"name": "w"}, "spec": {"a": 5}}),
            "m1",
            "",
            schemaless_custom_kind(),
            true,
        )
        .expect("no conflicts");
        assert_eq!(second["spec"], json!({"a": 5, "b": 2, "c": 3}));
        let third = apply(
            &second,
            &json!({"apiVersion": "example.io/v1", "kind": "W", "metadata": {"name": "w"}, "spec": {"c": 3}}),
            "m2",
            "",
            schemaless_custom_kind(),
            true,
        )
        .expect("no conflicts");
        assert_eq!(third["spec"], json!({"a": 5, "c": 3}));
        let managers: Vec<&str> = third["metadata"]["managedFields"]
            .as_array()
            .expect("list")
            .iter()
            .filter_map(|e| e["manager"].as_str())
            .collect();
        assert_eq!(managers, vec!["m1", "m2"]);
    }

    #[test]
    fn conflicting_applies_fail_unless_forced_and_updates_take_ownership() {
        let lease = |holder: &str| json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"}, "spec": {"holderIdentity": holder}});
        let live = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"}, "spec": {}});
        let shape = builtin_kind("coordination.k8s.io", "Lease");
        let held = apply(&live, &lease("a"), "a", "", shape, false).expect("first apply");
        let error = apply(&held, &lease("b"), "b", "", shape, false).expect_err("conflict");
        assert_eq!((error.code, error.reason), (409, "Conflict"));
        assert_eq!(
            error.message,
            "Apply failed with 1 conflict: conflict with \"a\": .spec.holderIdentity"
        );
        assert!(
            apply(&held, &lease("a"), "b", "", shape, false).is_ok(),
            "same value: shared ownership"
        );
        let forced = apply(&held, &lease("b"), "b", "", shape, true).expect("forced");
        let managers: Vec<&str> = forced["metadata"]["managedFields"]
            .as_array()
            .expect("list")
            .iter()
            .filter_map(|e| e["manager"].as_str())
            .collect();
        assert_eq!(managers, vec!["b"], "a lost its only field");

        let mut updated = held.clone();
        updated["spec"]["holderIdentity"] = json!("c");
        let changed = changed_fields(&held, &updated, shape);
        record(
            &mut updated,
            "c",
            "Update",
            "coordination.k8s.io/v1",
            "",
            changed,
        );
        assert!(
            apply(&updated, &lease("d"), "d", "", shape, false)
                .expect_err("c owns it")
                .message
                .contains("\"c\"")
        );
    }

    #[test]
    fn apply_merges_containers_by_name() {
        let live = json!({"metadata": {"name": "d"}, "spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "1"}]}});
        let out = apply(
            &live,
            &json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "d"}, "spec": {"containers": [{"name": "b", "image": "2"}]}}),
            "m",
            "",
            builtin_kind("", "Pod"),
            true,
        )
        .expect("no conflicts");
        assert_eq!(
            out["spec"]["containers"],
            json!([{"name": "a", "image": "1"}, {"name": "b", "image": "2"}])
        );
    }

    #[test]
    fn reapplying_volume_claim_templates_keeps_one_template() {
        let sts = builtin_kind("apps", "StatefulSet");
        let applied = json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "etcd"},
            "spec": {"volumeClaimTemplates": [{"metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}});
        let mut live =
            json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "etcd"}});
        for _ in 0..5 {
            live = apply(&live, &applied, "m", "", sts, false).expect("no conflicts");
        }
        assert_eq!(live["spec"], applied["spec"]);
        let owned = &live["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"];
        assert_eq!(
            owned["f:volumeClaimTemplates"],
            json!({}),
            "atomic: owned whole"
        );
    }

    #[test]
    fn ports_are_keyed_by_port_and_defaulted_protocol() {
        let pod = builtin_kind("", "Pod");
        let live = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80, "protocol": "TCP"}]}]}});
        let out = apply(&live, &json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80, "name": "http"}]}]}}),
            "m", "", pod, true).expect("no conflicts");
        assert_eq!(
            out["spec"]["containers"][0]["ports"],
            json!([{"containerPort": 80, "protocol": "TCP", "name": "http"}])
        );
        let owned = &out["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]["f:containers"]["k:{\"name\":\"c\"}"]
            ["f:ports"];
        assert!(
            owned
                .get("k:{\"containerPort\":80,\"protocol\":\"TCP\"}")
                .is_some(),
            "{owned}"
        );
    }
}
