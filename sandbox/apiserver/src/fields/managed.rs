//! `managedFields`: which field manager owns which fields, per operation (`Apply` or
//! `Update`) and subresource, as `FieldsV1` sets. Every write records its manager's entry: an
//! Update manager keeps what it owned and takes over what it changed, an Apply manager owns
//! exactly what it applied.

use serde_json::{Map, Value, json};

use crate::fields::ownership::{self, FieldPath};
use crate::fields::shape::{ListType, Shape};
use crate::meta;

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

/// Which operation a set is for: they mark objects differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetForm {
    /// What an Update adds: every object it adds carries `.` (the object itself).
    Update,
    /// What an apply sets: only list items carry `.`.
    Apply,
}

/// The `FieldsV1` set of an object an Update creates.
pub fn field_set(object: &Value, shape: Shape<'_>) -> Map<String, Value> {
    set_of(object, shape, SetForm::Update)
}

/// The `FieldsV1` set of an applied configuration: what its manager owns.
pub fn applied_set(object: &Value, shape: Shape<'_>) -> Map<String, Value> {
    set_of(object, shape, SetForm::Apply)
}

fn set_of(object: &Value, shape: Shape<'_>, form: SetForm) -> Map<String, Value> {
    let mut out = Map::new();
    let Value::Object(map) = object else {
        return out;
    };
    for (key, value) in map {
        match key.as_str() {
            "apiVersion" | "kind" => {}
            "metadata" => {
                let meta_shape = shape.field("metadata");
                let mut meta_set = Map::new();
                if let Value::Object(m) = value {
                    for (mk, mv) in m {
                        if UNOWNED_METADATA.contains(&mk.as_str()) {
                            continue;
                        }
                        meta_set.insert(format!("f:{mk}"), node(mv, meta_shape.field(mk), form));
                    }
                }
                if !meta_set.is_empty() {
                    out.insert("f:metadata".into(), Value::Object(meta_set));
                }
            }
            _ => {
                out.insert(format!("f:{key}"), node(value, shape.field(key), form));
            }
        }
    }
    out
}

/// The set entry of one value: objects by their fields (atomic maps whole), map lists by `k:`
/// item keys, sets by `v:` values, anything else (atomic lists included) as a leaf.
fn node(value: &Value, shape: Shape<'_>, form: SetForm) -> Value {
    match value {
        Value::Object(m) if !m.is_empty() && !shape.is_atomic_map() => {
            let mut set = Map::new();
            if form == SetForm::Update {
                set.insert(".".into(), json!({}));
            }
            for (k, v) in m {
                set.insert(format!("f:{k}"), node(v, shape.field(k), form));
            }
            Value::Object(set)
        }
        Value::Array(items) if !items.is_empty() => match shape.list_type() {
            ListType::Set => {
                let set: Map<String, Value> = items
                    .iter()
                    .map(|i| (format!("v:{i}"), json!({})))
                    .collect();
                Value::Object(set)
            }
            ListType::Map(keys) => {
                let item_shape = shape.items();
                let mut set = Map::new();
                for item in items {
                    let id = item_shape.identity(item, &keys);
                    if id.is_empty() {
                        continue;
                    }
                    let mut child = match node(item, item_shape, form) {
                        Value::Object(m) => m,
                        _ => Map::new(),
                    };
                    child.insert(".".into(), json!({}));
                    set.insert(format!("k:{}", Value::Object(id)), Value::Object(child));
                }
                Value::Object(set)
            }
            ListType::Atomic => json!({}),
        },
        _ => json!({}),
    }
}

/// The `FieldsV1` set of what `new` adds or changes relative to `old`: what an Update
/// manager takes ownership of. Only the differences are visited: unchanged fields cost a
/// comparison, not a set entry.
pub fn changed_fields(old: &Value, new: &Value, shape: Shape<'_>) -> Map<String, Value> {
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
            let changed = changed_entries(old_meta, owned, shape.field("metadata"));
            if !changed.is_empty() {
                out.insert("f:metadata".into(), Value::Object(changed));
            }
            continue;
        }
        insert_changed(&mut out, key, old_value, value, shape.field(key));
    }
    out
}

/// The set entries of the fields in `new` that differ from `old`.
fn changed_entries<'a>(
    old: &Map<String, Value>,
    new: impl Iterator<Item = (&'a String, &'a Value)>,
    shape: Shape<'_>,
) -> Map<String, Value> {
    let mut out = Map::new();
    for (key, value) in new {
        let old_value = old.get(key);
        if old_value != Some(value) {
            insert_changed(&mut out, key, old_value, value, shape.field(key));
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
    shape: Shape<'_>,
) {
    match (old, new) {
        (Some(Value::Object(old_map)), Value::Object(new_map)) if !shape.is_atomic_map() => {
            let changed = changed_entries(old_map, new_map.iter(), shape);
            if !changed.is_empty() {
                out.insert(format!("f:{key}"), Value::Object(changed));
            }
        }
        _ => {
            out.insert(format!("f:{key}"), node(new, shape, SetForm::Update));
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

pub fn entries(object: &Value) -> Vec<Value> {
    object
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

pub fn same_entry(entry: &Value, manager: &str, operation: &str, subresource: &str) -> bool {
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
    sort_entries(&mut list);
    meta::metadata_mut(object).insert("managedFields".into(), Value::Array(list));
    transfer(object, &changed, manager, operation, subresource);
}

/// Orders entries as kube-apiserver stores them: Apply before Update, then by time (to the
/// second), manager and subresource; so their order does not depend on which write came last.
fn sort_entries(list: &mut [Value]) {
    let key = |e: &Value| {
        let text = |k: &str| {
            e.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        (
            text("operation"),
            text("time"),
            text("manager"),
            text("subresource"),
        )
    };
    list.sort_by_key(key);
}

pub fn entry_subresource(entry: &Value) -> &str {
    entry
        .get("subresource")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Removes `paths` from every manager but `(manager, operation)` on the same subresource, and
/// drops managers left owning nothing.
pub fn transfer(
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
    use crate::fields::shape::{builtin_kind, schemaless_custom_kind};

    #[test]
    fn field_set_uses_merge_keys_for_builtins() {
        let set = field_set(
            &json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x", "labels": {"a": "b"}},
                    "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}}),
            builtin_kind("apps", "Deployment"),
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
    fn changed_fields_only_names_what_changed() {
        let old = json!({"metadata": {"name": "x", "labels": {"a": "1"}}, "spec": {"a": 1, "b": {"c": 1, "d": 2}}});
        let new = json!({"metadata": {"name": "x", "labels": {"a": "1"}}, "spec": {"a": 1, "b": {"c": 1, "d": 3}}});
        let set = changed_fields(&old, &new, schemaless_custom_kind());
        assert_eq!(Value::Object(set), json!({"f:spec": {"f:b": {"f:d": {}}}}));
    }

    /// The definition `changed_fields` must match: the whole field set of `new`, less what
    /// equals `old` (the straightforward form, which visits every field).
    fn changed_fields_by_definition(
        old: &Value,
        new: &Value,
        shape: Shape<'_>,
    ) -> Map<String, Value> {
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
        let mut out = field_set(new, shape);
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
                for shape in [schemaless_custom_kind(), builtin_kind("", "Pod")] {
                    assert_eq!(
                        changed_fields(old, new, shape),
                        changed_fields_by_definition(old, new, shape),
                        "old {old}, new {new}, shape {shape:?}"
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
            schemaless_custom_kind(),
        );
        assert!(set.is_empty(), "{set:?}");
        // Without old metadata every owned metadata field is new; identity fields never count.
        let new = json!({"apiVersion": "v1", "kind": "K",
            "metadata": {"name": "x", "resourceVersion": "5", "labels": {"a": "1"}}, "spec": {"a": 1}});
        assert_eq!(
            Value::Object(changed_fields(&json!({}), &new, schemaless_custom_kind())),
            json!({"f:metadata": {"f:labels": {".": {}, "f:a": {}}}, "f:spec": {".": {}, "f:a": {}}})
        );
        let mut touched = new.clone();
        touched["metadata"]["resourceVersion"] = json!("6");
        assert!(changed_fields(&new, &touched, schemaless_custom_kind()).is_empty());
        // Lists are claimed as their schema says: containers by name, finalizers by value.
        let old = json!({"metadata": {"finalizers": ["a"]}, "spec": {"containers": [{"name": "web", "image": "a"}]}});
        let new = json!({"metadata": {"finalizers": ["a", "b"]}, "spec": {"containers": [{"name": "web", "image": "b"}]}});
        assert_eq!(
            Value::Object(changed_fields(&old, &new, builtin_kind("", "Pod"))),
            json!({
                "f:metadata": {"f:finalizers": {"v:\"a\"": {}, "v:\"b\"": {}}},
                "f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {".": {}, "f:image": {}, "f:name": {}}}}
            })
        );
    }
}
