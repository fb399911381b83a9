//! The three update patch formats: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and
//! strategic merge patch.
//!
//! Strategic merge patch takes each list's strategy and merge key from the kind's schema
//! (`fields::shape`, the real apiserver's OpenAPI for built-ins) and supports the `$patch`,
//! `$retainKeys`, `$setElementOrder` and `$deleteFromPrimitiveList` directives; a list without a
//! patch strategy is replaced, as the apiserver does.

use serde_json::{Map, Value};

use crate::fields::shape::{PatchStrategy, Shape};

/// A patch that cannot be applied: answered as 422 (a JSON patch that does not fit the
/// object: a failed `test`, a path or index that is not there) or 400 (a malformed patch).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    #[error("the server rejected our request due to an error in our request")]
    TestFailed,
    #[error("{0}")]
    DoesNotFit(String),
    #[error("{0}")]
    Invalid(String),
}

/// RFC 7386.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch_map) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(target_map) = target else {
        return;
    };
    for (key, value) in patch_map {
        if value.is_null() {
            target_map.remove(key);
        } else {
            merge_patch(target_map.entry(key.clone()).or_insert(Value::Null), value);
        }
    }
}

/// Unescapes one JSON pointer token.
fn token(raw: &str) -> String {
    raw.replace("~1", "/").replace("~0", "~")
}

fn split_pointer(path: &str) -> Result<Vec<String>, PatchError> {
    if path.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = path.strip_prefix('/') else {
        return Err(PatchError::Invalid(format!(
            "invalid JSON pointer {path:?}: must start with '/'"
        )));
    };
    Ok(rest.split('/').map(token).collect())
}

fn parent_mut<'a>(
    root: &'a mut Value,
    tokens: &[String],
    path: &str,
) -> Result<&'a mut Value, PatchError> {
    let mut current = root;
    for t in tokens {
        current = match current {
            Value::Object(m) => m.get_mut(t),
            Value::Array(a) => t.parse::<usize>().ok().and_then(|i| a.get_mut(i)),
            _ => None,
        }
        .ok_or_else(|| PatchError::DoesNotFit(format!("doc is missing path: {path:?}")))?;
    }
    Ok(current)
}

fn add_at(root: &mut Value, path: &str, value: Value) -> Result<(), PatchError> {
    let tokens = split_pointer(path)?;
    let Some((last, parents)) = tokens.split_last() else {
        *root = value;
        return Ok(());
    };
    match parent_mut(root, parents, path)? {
        Value::Object(m) => {
            m.insert(last.clone(), value);
            Ok(())
        }
        Value::Array(a) => {
            let index = if last == "-" {
                a.len()
            } else {
                last.parse::<usize>()
                    .ok()
                    .filter(|i| *i <= a.len())
                    .ok_or_else(|| {
                        PatchError::DoesNotFit(format!(
                            "add operation has an invalid index at {path:?}"
                        ))
                    })?
            };
            a.insert(index, value);
            Ok(())
        }
        _ => Err(PatchError::DoesNotFit(format!(
            "doc is missing path: {path:?}"
        ))),
    }
}

fn remove_at(root: &mut Value, path: &str) -> Result<Value, PatchError> {
    let tokens = split_pointer(path)?;
    let Some((last, parents)) = tokens.split_last() else {
        return Err(PatchError::Invalid(
            "cannot remove the whole document".into(),
        ));
    };
    let missing = || PatchError::DoesNotFit(format!("doc is missing path: {path:?}"));
    match parent_mut(root, parents, path)? {
        Value::Object(m) => m.remove(last).ok_or_else(missing),
        Value::Array(a) => {
            let index = last
                .parse::<usize>()
                .ok()
                .filter(|i| *i < a.len())
                .ok_or_else(missing)?;
            Ok(a.remove(index))
        }
        _ => Err(missing()),
    }
}

fn get_at<'a>(root: &'a Value, path: &str) -> Result<Option<&'a Value>, PatchError> {
    let tokens = split_pointer(path)?;
    let mut current = root;
    for t in &tokens {
        let next = match current {
            Value::Object(m) => m.get(t),
            Value::Array(a) => t.parse::<usize>().ok().and_then(|i| a.get(i)),
            _ => None,
        };
        match next {
            Some(v) => current = v,
            None => return Ok(None),
        }
    }
    Ok(Some(current))
}

/// RFC 6902. A `test` against a missing path matches `null`, as the apiserver's library does.
pub fn json_patch(target: &mut Value, patch: &Value) -> Result<(), PatchError> {
    let Value::Array(ops) = patch else {
        return Err(PatchError::Invalid(
            "a JSON patch must be a list of operations".into(),
        ));
    };
    let mut work = target.clone();
    for op in ops {
        let kind = op.get("op").and_then(Value::as_str).unwrap_or_default();
        let path = op.get("path").and_then(Value::as_str).unwrap_or_default();
        let value = || {
            op.get("value").cloned().ok_or_else(|| {
                PatchError::Invalid(format!("missing value for {kind} operation at {path:?}"))
            })
        };
        let from = || {
            op.get("from")
                .and_then(Value::as_str)
                .ok_or_else(|| PatchError::Invalid(format!("missing from for {kind} operation")))
        };
        match kind {
            "add" => add_at(&mut work, path, value()?)?,
            "remove" => {
                remove_at(&mut work, path)?;
            }
            "replace" => {
                remove_at(&mut work, path)?;
                add_at(&mut work, path, value()?)?;
            }
            "move" => {
                let moved = remove_at(&mut work, from()?)?;
                add_at(&mut work, path, moved)?;
            }
            "copy" => {
                let copied = get_at(&work, from()?)?.cloned().ok_or_else(|| {
                    PatchError::DoesNotFit(format!(
                        "doc is missing from path: {:?}",
                        from().unwrap_or_default()
                    ))
                })?;
                add_at(&mut work, path, copied)?;
            }
            "test" => {
                let expected = value()?;
                let actual = get_at(&work, path)?.cloned().unwrap_or(Value::Null);
                if actual != expected {
                    return Err(PatchError::TestFailed);
                }
            }
            other => return Err(PatchError::Invalid(format!("Unexpected kind: {other}"))),
        }
    }
    *target = work;
    Ok(())
}

/// Strategic merge patch for built-in kinds: lists follow their schema's
/// `x-kubernetes-patch-strategy` and `x-kubernetes-patch-merge-key`.
pub fn strategic_merge_patch(
    target: &mut Value,
    patch: &Value,
    shape: Shape<'_>,
) -> Result<(), PatchError> {
    let Value::Object(patch_map) = patch else {
        return Err(PatchError::Invalid(
            "a strategic merge patch must be an object".into(),
        ));
    };
    if patch_map.get("$patch").and_then(Value::as_str) == Some("replace") {
        let mut replacement = patch.clone();
        strip_directives(&mut replacement);
        *target = replacement;
        return Ok(());
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(target_map) = target else {
        return Ok(());
    };
    if let Some(Value::Array(retain)) = patch_map.get("$retainKeys") {
        let keep: Vec<&str> = retain.iter().filter_map(Value::as_str).collect();
        target_map.retain(|k, _| keep.contains(&k.as_str()));
    }
    for (key, value) in patch_map {
        if key.starts_with("$setElementOrder/") || key == "$retainKeys" || key == "$patch" {
            continue;
        }
        if let Some(field) = key.strip_prefix("$deleteFromPrimitiveList/") {
            if let (Some(Value::Array(list)), Value::Array(remove)) =
                (target_map.get_mut(field), value)
            {
                list.retain(|v| !remove.contains(v));
            }
            continue;
        }
        if value.is_null() {
            target_map.remove(key);
            continue;
        }
        let field = shape.field(key);
        match (target_map.get_mut(key), value) {
            (Some(Value::Array(current)), Value::Array(items)) => match field.patch_strategy() {
                PatchStrategy::MergeByKey(merge_key) => {
                    merge_list(current, items, merge_key, field.items())?
                }
                PatchStrategy::MergeScalars => {
                    for item in items {
                        if !current.contains(item) {
                            current.push(item.clone());
                        }
                    }
                }
                PatchStrategy::Replace => {
                    let mut replacement = value.clone();
                    strip_directives(&mut replacement);
                    *current = match replacement {
                        Value::Array(a) => a,
                        _ => Vec::new(),
                    };
                }
            },
            (Some(existing @ Value::Object(_)), Value::Object(_)) => {
                strategic_merge_patch(existing, value, field)?
            }
            // A new sub-object is patched into an empty one, so its `null`s delete nothing instead
            // of being stored (kubectl's three-way patch of a Secret's stringData sends them).
            (_, Value::Object(_)) => {
                let mut fresh = Value::Object(Map::new());
                strategic_merge_patch(&mut fresh, value, field)?;
                target_map.insert(key.clone(), fresh);
            }
            _ => {
                let mut replacement = value.clone();
                strip_directives(&mut replacement);
                target_map.insert(key.clone(), replacement);
            }
        }
    }
    Ok(())
}

fn merge_list(
    current: &mut Vec<Value>,
    items: &[Value],
    key: &str,
    item_shape: Shape<'_>,
) -> Result<(), PatchError> {
    if items
        .iter()
        .any(|i| i.get("$patch").and_then(Value::as_str) == Some("replace"))
    {
        let mut replacement: Vec<Value> = items
            .iter()
            .filter(|i| i.get("$patch").is_none())
            .cloned()
            .collect();
        replacement.iter_mut().for_each(strip_directives);
        *current = replacement;
        return Ok(());
    }
    for item in items {
        let Some(id) = item.get(key) else {
            return Err(PatchError::Invalid(format!(
                "map: {item} does not contain declared merge key: {key}"
            )));
        };
        let position = current.iter().position(|c| c.get(key) == Some(id));
        let delete = item.get("$patch").and_then(Value::as_str) == Some("delete");
        match (position, delete) {
            (Some(i), true) => {
                current.remove(i);
            }
            (None, true) => {}
            (Some(i), false) => strategic_merge_patch(&mut current[i], item, item_shape)?,
            (None, false) => {
                let mut added = item.clone();
                strip_directives(&mut added);
                current.push(added);
            }
        }
    }
    Ok(())
}

fn strip_directives(value: &mut Value) {
    match value {
        Value::Object(m) => {
            m.retain(|k, _| !k.starts_with('$'));
            m.values_mut().for_each(strip_directives);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_directives),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fields::shape::builtin_kind;
    use serde_json::json;

    #[test]
    fn merge_patch_removes_nulls_and_replaces_lists() {
        let mut doc = json!({"a": {"b": 1, "c": 2}, "l": [1, 2]});
        merge_patch(&mut doc, &json!({"a": {"b": null, "d": 3}, "l": [3]}));
        assert_eq!(doc, json!({"a": {"c": 2, "d": 3}, "l": [3]}));
    }

    #[test]
    fn json_patch_supports_test_against_missing_and_append() {
        let mut doc = json!({"metadata": {"name": "x"}});
        json_patch(
            &mut doc,
            &json!([
                {"op": "test", "path": "/metadata/finalizers", "value": null},
                {"op": "add", "path": "/metadata/finalizers", "value": []},
                {"op": "add", "path": "/metadata/finalizers/-", "value": "f"}
            ]),
        )
        .expect("applies");
        assert_eq!(doc["metadata"]["finalizers"], json!(["f"]));
        let failed = json_patch(
            &mut doc,
            &json!([{"op": "test", "path": "/metadata/finalizers", "value": null}]),
        );
        assert_eq!(failed, Err(PatchError::TestFailed));
        assert_eq!(
            doc["metadata"]["finalizers"],
            json!(["f"]),
            "a failed patch changes nothing"
        );
        json_patch(
            &mut doc,
            &json!([{"op": "remove", "path": "/metadata/finalizers/0"}]),
        )
        .expect("applies");
        assert_eq!(doc["metadata"]["finalizers"], json!([]));
        assert!(json_patch(&mut doc, &json!([{"op": "remove", "path": "/nope"}])).is_err());
    }

    #[test]
    fn strategic_merge_patch_drops_nulls_inside_new_objects() {
        let mut doc = json!({"data": {"a": "b25l"}});
        strategic_merge_patch(
            &mut doc,
            &json!({"stringData": {"a": null, "b": "wrong"}}),
            builtin_kind("", "Secret"),
        )
        .expect("applies");
        assert_eq!(
            doc,
            json!({"data": {"a": "b25l"}, "stringData": {"b": "wrong"}})
        );
    }

    #[test]
    fn strategic_merge_patch_merges_containers_by_name() {
        let mut doc = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "a", "image": "a:1", "env": [{"name": "X", "value": "1"}]},
            {"name": "b", "image": "b:1"}
        ]}}}});
        strategic_merge_patch(
            &mut doc,
            &json!({"spec": {"template": {"spec": {
                "$setElementOrder/containers": [{"name": "a"}, {"name": "b"}],
                "containers": [
                    {"name": "a", "image": "a:2", "env": [{"name": "Y", "value": "2"}]},
                    {"name": "b", "$patch": "delete"}
                ]
            }}}}),
            builtin_kind("apps", "Deployment"),
        )
        .expect("applies");
        assert_eq!(
            doc,
            json!({"spec": {"template": {"spec": {"containers": [
                {"name": "a", "image": "a:2", "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}]}
            ]}}}})
        );
    }

    #[test]
    fn strategic_merge_patch_finalizers_are_a_set_and_args_are_replaced() {
        let pod = builtin_kind("", "Pod");
        let mut doc = json!({"metadata": {"finalizers": ["a"]},
                             "spec": {"containers": [{"name": "c", "args": ["x", "y"]}]}});
        strategic_merge_patch(
            &mut doc,
            &json!({"metadata": {"finalizers": ["a", "b"]},
                    "spec": {"containers": [{"name": "c", "args": ["z"]}]}}),
            pod,
        )
        .expect("applies");
        assert_eq!(
            doc,
            json!({"metadata": {"finalizers": ["a", "b"]},
                   "spec": {"containers": [{"name": "c", "args": ["z"]}]}})
        );
        strategic_merge_patch(
            &mut doc,
            &json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}),
            pod,
        )
        .expect("applies");
        assert_eq!(doc["metadata"]["finalizers"], json!(["b"]));
    }

    #[test]
    fn strategic_merge_patch_replaces_volume_claim_templates_as_the_schema_says() {
        let mut doc = json!({"spec": {"volumeClaimTemplates": [{"metadata": {"name": "data"}}]}});
        let patch = json!({"spec": {"volumeClaimTemplates": [{"metadata": {"name": "data"}}]}});
        for _ in 0..3 {
            strategic_merge_patch(&mut doc, &patch, builtin_kind("apps", "StatefulSet"))
                .expect("applies");
        }
        assert_eq!(doc, patch);
    }
}
