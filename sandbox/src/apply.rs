//! Server-side apply and `managedFields`.
//!
//! Each write records, per field manager and operation (`Apply` or `Update`), the set of fields
//! it sent, in the `FieldsV1` format. An apply merges the applied configuration into the live
//! object (maps recursively, keyed lists by their merge key for built-ins, other lists replaced)
//! and removes the fields this manager applied before, no longer applies, and no other manager
//! claims — the part of SSA that controllers depend on.
//!
//! Simplification (documented in the README): ownership conflicts are never reported, so `force`
//! is accepted and has no effect, and an apply does not take fields away from other managers.

use serde_json::{Map, Value, json};

use crate::error::{ApiError, Cause};
use crate::meta;
use crate::ownership::{self, FieldPath};
use crate::patch::merge_key;

/// Identity fields that no manager owns.
const UNOWNED_METADATA: &[&str] = &[
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "generateName",
    "selfLink",
];

/// The `FieldsV1` set of an object (or patch body).
pub fn field_set(object: &Value, custom: bool) -> Map<String, Value> {
    let mut out = Map::new();
    let Value::Object(map) = object else {
        return out;
    };
    for (key, value) in map {
        match key.as_str() {
            "apiVersion" | "kind" => {}
            "metadata" => {
                let mut meta_set = Map::new();
                if let Value::Object(m) = value {
                    for (mk, mv) in m {
                        if UNOWNED_METADATA.contains(&mk.as_str()) {
                            continue;
                        }
                        meta_set.insert(format!("f:{mk}"), node(mk, mv, custom));
                    }
                }
                if !meta_set.is_empty() {
                    out.insert("f:metadata".into(), Value::Object(meta_set));
                }
            }
            _ => {
                out.insert(format!("f:{key}"), node(key, value, custom));
            }
        }
    }
    out
}

fn node(field: &str, value: &Value, custom: bool) -> Value {
    match value {
        Value::Object(m) if !m.is_empty() => {
            let mut set = Map::new();
            set.insert(".".into(), json!({}));
            for (k, v) in m {
                set.insert(format!("f:{k}"), node(k, v, custom));
            }
            Value::Object(set)
        }
        Value::Array(items) if field == "finalizers" => {
            let set: Map<String, Value> = items
                .iter()
                .map(|i| (format!("v:{i}"), json!({})))
                .collect();
            Value::Object(set)
        }
        Value::Array(items) if !custom && !items.is_empty() => {
            let refs: Vec<&Value> = items.iter().collect();
            let Some(key) = merge_key(field, &refs) else {
                return json!({});
            };
            let mut set = Map::new();
            for item in items {
                let Some(id) = item.get(key) else { continue };
                let mut child = match node("", item, custom) {
                    Value::Object(m) => m,
                    _ => Map::new(),
                };
                child.insert(".".into(), json!({}));
                set.insert(format!("k:{}", json!({ key: id })), Value::Object(child));
            }
            Value::Object(set)
        }
        _ => json!({}),
    }
}

/// The `FieldsV1` set of what `new` adds or changes relative to `old`: what an Update
/// manager takes ownership of. Only the differences are visited: unchanged fields cost a
/// comparison, not a set entry.
pub fn changed_fields(old: &Value, new: &Value, custom: bool) -> Map<String, Value> {
    let mut out = Map::new();
    let Value::Object(new_map) = new else {
        return out;
    };
    for (key, value) in new_map {
        let old_value = old.get(key);
        if matches!(key.as_str(), "apiVersion" | "kind") || old_value == Some(value) {
            continue;
        }
        if key == "metadata" {
            let Value::Object(new_meta) = value else {
                continue;
            };
            let empty = Map::new();
            let old_meta = old_value.and_then(Value::as_object).unwrap_or(&empty);
            let owned = new_meta
                .iter()
                .filter(|(k, _)| !UNOWNED_METADATA.contains(&k.as_str()));
            let changed = changed_entries(old_meta, owned, custom);
            if !changed.is_empty() {
                out.insert("f:metadata".into(), Value::Object(changed));
            }
            continue;
        }
        insert_changed(&mut out, key, old_value, value, custom);
    }
    out
}

/// The set entries of the fields in `new` that differ from `old`.
fn changed_entries<'a>(
    old: &Map<String, Value>,
    new: impl Iterator<Item = (&'a String, &'a Value)>,
    custom: bool,
) -> Map<String, Value> {
    let mut out = Map::new();
    for (key, value) in new {
        let old_value = old.get(key);
        if old_value != Some(value) {
            insert_changed(&mut out, key, old_value, value, custom);
        }
    }
    out
}

/// Adds the entry of a changed field: objects on both sides by their changed fields (none
/// left, no entry), anything else as a whole.
fn insert_changed(
    out: &mut Map<String, Value>,
    key: &str,
    old: Option<&Value>,
    new: &Value,
    custom: bool,
) {
    match (old, new) {
        (Some(Value::Object(old_map)), Value::Object(new_map)) => {
            let changed = changed_entries(old_map, new_map.iter(), custom);
            if !changed.is_empty() {
                out.insert(format!("f:{key}"), Value::Object(changed));
            }
        }
        _ => {
            out.insert(format!("f:{key}"), node(key, new, custom));
        }
    }
}

/// Merges an applied configuration into the live object.
fn merge(live: &mut Value, applied: &Value, field: &str, custom: bool) {
    match (live, applied) {
        (Value::Object(l), Value::Object(a)) => {
            for (k, v) in a {
                match l.get_mut(k) {
                    Some(existing) if !v.is_null() => merge(existing, v, k, custom),
                    _ => {
                        l.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (Value::Array(l), Value::Array(a)) if field == "finalizers" => {
            for item in a {
                if !l.contains(item) {
                    l.push(item.clone());
                }
            }
        }
        (Value::Array(l), Value::Array(a)) if !custom => {
            let refs: Vec<&Value> = a.iter().chain(l.iter()).collect();
            match merge_key(field, &refs) {
                Some(key) => {
                    for item in a {
                        match l
                            .iter()
                            .position(|c| c.get(key).is_some() && c.get(key) == item.get(key))
                        {
                            Some(i) => merge(&mut l[i], item, "", custom),
                            None => l.push(item.clone()),
                        }
                    }
                }
                None => *l = a.clone(),
            }
        }
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

fn union(into: &mut Map<String, Value>, from: &Map<String, Value>) {
    for (k, v) in from {
        match (into.get_mut(k), v) {
            (Some(Value::Object(a)), Value::Object(b)) => union(a, b),
            _ => {
                into.insert(k.clone(), v.clone());
            }
        }
    }
}

fn entries(object: &Value) -> Vec<Value> {
    object
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn same_entry(entry: &Value, manager: &str, operation: &str, subresource: &str) -> bool {
    entry.get("manager").and_then(Value::as_str) == Some(manager)
        && entry.get("operation").and_then(Value::as_str) == Some(operation)
        && entry
            .get("subresource")
            .and_then(Value::as_str)
            .unwrap_or_default()
            == subresource
}

/// Records (replacing) the entry of one manager and operation.
pub fn record(
    object: &mut Value,
    manager: &str,
    operation: &str,
    api_version: &str,
    subresource: &str,
    mut fields: Map<String, Value>,
) {
    // An Update manager keeps what it owned and takes over what it changed; an Apply manager
    // owns exactly what it applied.
    let changed = if operation == "Update" {
        ownership::leaves(&fields)
    } else {
        Vec::new()
    };
    // The list is taken out of the object and put back, not copied.
    let mut list = match meta::metadata_mut(object).remove("managedFields") {
        Some(Value::Array(list)) => list,
        _ => Vec::new(),
    };
    if operation == "Update"
        && let Some(Value::Object(previous)) = list
            .iter_mut()
            .find(|e| same_entry(e, manager, operation, subresource))
            .and_then(|e| e.get_mut("fieldsV1"))
            .map(Value::take)
    {
        let mut merged = previous;
        union(&mut merged, &fields);
        fields = merged;
    }
    list.retain(|e| !same_entry(e, manager, operation, subresource));
    if !fields.is_empty() {
        let mut entry = json!({
            "manager": manager,
            "operation": operation,
            "apiVersion": api_version,
            "time": meta::now_time(),
            "fieldsType": "FieldsV1",
            "fieldsV1": fields,
        });
        if !subresource.is_empty() {
            entry["subresource"] = json!(subresource);
        }
        list.push(entry);
    }
    meta::metadata_mut(object).insert("managedFields".into(), Value::Array(list));
    transfer(object, &changed, manager, operation, subresource);
}

/// Server-side apply of `applied` by `manager` onto `live` (which carries managedFields).
/// `subresource` is `""` or `"status"`; the caller restricts the result to what that endpoint
/// may change.
pub fn apply(
    live: &Value,
    applied: &Value,
    manager: &str,
    subresource: &str,
    custom: bool,
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
    let mut result = live.clone();
    let current = field_set(&applied_body, custom);
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
    let conflicts = conflicts(
        live,
        &applied_body,
        &current,
        &existing,
        manager,
        subresource,
    );
    if !conflicts.is_empty() && !force {
        return Err(conflict_error(&conflicts));
    }
    prune(&mut result, &previous, Some(&current), &others);
    merge(&mut result, &applied_body, "", custom);
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

/// A field another manager owns with another value.
struct Conflict {
    manager: String,
    api_version: String,
    path: FieldPath,
}

fn conflicts(
    live: &Value,
    applied: &Value,
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
        if Some(live_value) == ownership::value_at(applied, &path) {
            continue;
        }
        for entry in existing.iter().filter(|e| {
            !same_entry(e, manager, "Apply", subresource) && entry_subresource(e) == subresource
        }) {
            let owned = entry.get("fieldsV1").and_then(Value::as_object);
            if owned.is_some_and(|set| ownership::owns(set, &path)) {
                out.push(Conflict {
                    manager: meta::str_at(entry, "/manager").to_owned(),
                    api_version: meta::str_at(entry, "/apiVersion").to_owned(),
                    path: path.clone(),
                });
            }
        }
    }
    out
}

/// The apiserver's wording: `Apply failed with 1 conflict: conflict with "m" using v1: .spec.x`.
fn conflict_error(conflicts: &[Conflict]) -> ApiError {
    let causes = conflicts
        .iter()
        .map(|c| Cause {
            reason: "FieldManagerConflict".into(),
            message: format!("conflict with {:?} using {}", c.manager, c.api_version),
            field: ownership::display(&c.path),
        })
        .collect();
    let message = if let [only] = conflicts {
        format!(
            "Apply failed with 1 conflict: conflict with {:?} using {}: {}",
            only.manager,
            only.api_version,
            ownership::display(&only.path)
        )
    } else {
        let mut groups: Vec<(String, Vec<String>)> = Vec::new();
        for c in conflicts {
            let head = format!("conflicts with {:?} using {}:", c.manager, c.api_version);
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

fn entry_subresource(entry: &Value) -> &str {
    entry
        .get("subresource")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Removes `paths` from every manager but `(manager, operation)` on the same subresource, and
/// drops managers left owning nothing.
fn transfer(
    object: &mut Value,
    paths: &[FieldPath],
    manager: &str,
    operation: &str,
    subresource: &str,
) {
    if paths.is_empty() {
        return;
    }
    let Some(Value::Array(list)) = object.pointer_mut("/metadata/managedFields") else {
        return;
    };
    for entry in list.iter_mut() {
        if same_entry(entry, manager, operation, subresource)
            || entry_subresource(entry) != subresource
        {
            continue;
        }
        if let Some(Value::Object(set)) = entry.get_mut("fieldsV1") {
            for path in paths {
                ownership::disown(set, path);
            }
        }
    }
    list.retain(|e| {
        e.get("fieldsV1")
            .and_then(Value::as_object)
            .is_some_and(|s| !s.is_empty())
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_set_uses_merge_keys_for_builtins() {
        let set = field_set(
            &json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x", "labels": {"a": "b"}},
                    "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}}),
            false,
        );
        let containers = &set["f:spec"]["f:template"]["f:spec"]["f:containers"];
        assert!(
            containers.get("k:{\"name\":\"c\"}").is_some(),
            "{containers}"
        );
        assert_eq!(set["f:metadata"]["f:labels"]["f:a"], json!({}));
        assert!(set["f:metadata"].get("f:name").is_none());
    }

    #[test]
    fn reapply_removes_fields_the_manager_dropped_but_keeps_others() {
        let live = json!({"apiVersion": "example.io/v1", "kind": "W", "metadata": {"name": "w"}, "spec": {}});
        let first = apply(
            &live,
            &json!({"apiVersion": "example.io/v1", "kind": "W", "metadata": {"name": "w"}, "spec": {"a": 1, "b": 2}}),
            "m1",
            "",
            true,
            true,
        )
        .expect("no conflicts");
        let other = apply(
            &first,
            &json!({"apiVersion": "example.io/v1", "kind": "W", "metadata": {"name": "w"}, "spec": {"b": 2, "c": 3}}),
            "m2",
            "",
            true,
            true,
        )
        .expect("no conflicts");
        let second = apply(
            &other,
            &json!({"apiVersion": "example.io/v1", "kind": "W", "metadata": {"name": "w"}, "spec": {"a": 5}}),
            "m1",
            "",
            true,
            true,
        )
        .expect("no conflicts");
        assert_eq!(second["spec"], json!({"a": 5, "b": 2, "c": 3}));
        let third = apply(
            &second,
            &json!({"apiVersion": "example.io/v1", "kind": "W", "metadata": {"name": "w"}, "spec": {"c": 3}}),
            "m2",
            "",
            true,
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
        let held = apply(&live, &lease("a"), "a", "", false, false).expect("first apply");
        let error = apply(&held, &lease("b"), "b", "", false, false).expect_err("conflict");
        assert_eq!((error.code, error.reason), (409, "Conflict"));
        assert_eq!(
            error.message,
            "Apply failed with 1 conflict: conflict with \"a\" using coordination.k8s.io/v1: .spec.holderIdentity"
        );
        assert!(
            apply(&held, &lease("a"), "b", "", false, false).is_ok(),
            "same value: shared ownership"
        );
        let forced = apply(&held, &lease("b"), "b", "", false, true).expect("forced");
        let managers: Vec<&str> = forced["metadata"]["managedFields"]
            .as_array()
            .expect("list")
            .iter()
            .filter_map(|e| e["manager"].as_str())
            .collect();
        assert_eq!(managers, vec!["b"], "a lost its only field");

        let mut updated = held.clone();
        updated["spec"]["holderIdentity"] = json!("c");
        let changed = changed_fields(&held, &updated, false);
        record(
            &mut updated,
            "c",
            "Update",
            "coordination.k8s.io/v1",
            "",
            changed,
        );
        assert!(
            apply(&updated, &lease("d"), "d", "", false, false)
                .expect_err("c owns it")
                .message
                .contains("\"c\"")
        );
    }

    #[test]
    fn changed_fields_only_names_what_changed() {
        let old = json!({"metadata": {"name": "x", "labels": {"a": "1"}}, "spec": {"a": 1, "b": {"c": 1, "d": 2}}});
        let new = json!({"metadata": {"name": "x", "labels": {"a": "1"}}, "spec": {"a": 1, "b": {"c": 1, "d": 3}}});
        let set = changed_fields(&old, &new, true);
        assert_eq!(Value::Object(set), json!({"f:spec": {"f:b": {"f:d": {}}}}));
    }

    /// The definition `changed_fields` must match: the whole field set of `new`, less what
    /// equals `old` (the straightforward form, which visits every field).
    fn changed_fields_by_definition(old: &Value, new: &Value, custom: bool) -> Map<String, Value> {
        fn prune_unchanged(set: &mut Map<String, Value>, old: &Value, new: &Value) {
            set.retain(|entry, sub| {
                let Some(field) = entry.strip_prefix("f:") else {
                    return old != new;
                };
                let (o, n) = (old.get(field), new.get(field));
                if o == n {
                    return false;
                }
                if let (Some(o @ Value::Object(_)), Some(n @ Value::Object(_)), Value::Object(c)) =
                    (o, n, &mut *sub)
                {
                    prune_unchanged(c, o, n);
                    c.remove(".");
                    return !c.is_empty();
                }
                true
            });
        }
        let mut out = field_set(new, custom);
        prune_unchanged(&mut out, old, new);
        out
    }

    #[test]
    fn changed_fields_match_their_definition() {
        let objects = [
            json!({}),
            json!({"metadata": "odd"}),
            json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "x", "resourceVersion": "1",
                "labels": {"a": "1"}, "finalizers": ["f"], "annotations": {"n": "1"}},
                "spec": {"a": 1, "b": {"c": {"d": [1, 2]}, "e": {}}, "containers": [{"name": "w", "image": "1"}]},
                "status": {"conditions": [{"type": "Ready"}]}}),
            json!({"apiVersion": "v2", "metadata": {"name": "x", "resourceVersion": "2",
                "labels": {"a": "2", "b": "1"}, "finalizers": ["f", "g"]},
                "spec": {"a": {"now": "object"}, "b": {"c": {}, "e": {"x": null}}, "containers": [{"name": "w", "image": "2"}]},
                "status": {"conditions": [{"type": "Ready", "status": "True"}], "phase": "Up"}}),
            json!({"metadata": {"name": "x", "labels": {}}, "spec": {"b": {"c": {"d": [1, 2]}, "e": {}}}}),
        ];
        for old in &objects {
            for new in &objects {
                for custom in [true, false] {
                    assert_eq!(
                        changed_fields(old, new, custom),
                        changed_fields_by_definition(old, new, custom),
                        "old {old}, new {new}, custom {custom}"
                    );
                }
            }
        }
    }

    #[test]
    fn changed_fields_edge_cases() {
        // An object emptied by the update is no field of the updater's.
        let set = changed_fields(
            &json!({"spec": {"a": {"x": 1}}}),
            &json!({"spec": {"a": {}}}),
            true,
        );
        assert!(set.is_empty(), "{set:?}");
        // Without old metadata every owned metadata field is new; identity fields never count.
        let new = json!({"apiVersion": "v1", "kind": "K",
            "metadata": {"name": "x", "resourceVersion": "5", "labels": {"a": "1"}}, "spec": {"a": 1}});
        assert_eq!(
            Value::Object(changed_fields(&json!({}), &new, true)),
            json!({"f:metadata": {"f:labels": {".": {}, "f:a": {}}}, "f:spec": {".": {}, "f:a": {}}})
        );
        let mut touched = new.clone();
        touched["metadata"]["resourceVersion"] = json!("6");
        assert!(changed_fields(&new, &touched, true).is_empty());
        // Lists are claimed whole: keyed by their merge key for built-ins, finalizers by value.
        let old = json!({"metadata": {"finalizers": ["a"]}, "spec": {"containers": [{"name": "web", "image": "a"}]}});
        let new = json!({"metadata": {"finalizers": ["a", "b"]}, "spec": {"containers": [{"name": "web", "image": "b"}]}});
        assert_eq!(
            Value::Object(changed_fields(&old, &new, false)),
            json!({
                "f:metadata": {"f:finalizers": {"v:\"a\"": {}, "v:\"b\"": {}}},
                "f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {".": {}, "f:image": {}, "f:name": {}}}}
            })
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
            false,
            true,
        )
        .expect("no conflicts");
        assert_eq!(
            out["spec"]["containers"],
            json!([{"name": "a", "image": "1"}, {"name": "b", "image": "2"}])
        );
    }
}
