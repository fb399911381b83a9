//! Status diffing: turn "the status the object should have" into the smallest JSON merge patch
//! of `.status`, or nothing at all when the object already has it (no write, no event, no new
//! resourceVersion). Also filters the late-initialization patch of `spec`.

use serde_json::{Map, Value, json};

/// A merge patch (RFC 7386) that turns `current` into `desired`, or `None` when they are equal.
/// Keys missing from `desired` become `null` (removed); objects are diffed recursively; arrays and
/// scalars are replaced whole. `null` values inside `desired` are treated as absent, since a merge
/// patch cannot store a `null`.
pub(crate) fn diff(current: &Value, desired: &Value) -> Option<Value> {
    match (current, desired) {
        (Value::Object(cur), Value::Object(des)) => {
            let mut patch = Map::new();
            for (k, cur_v) in cur {
                if des.get(k).is_none_or(Value::is_null) && !cur_v.is_null() {
                    patch.insert(k.clone(), Value::Null);
                }
            }
            for (k, des_v) in des {
                if des_v.is_null() {
                    continue;
                }
                match cur.get(k) {
                    Some(cur_v) => {
                        if let Some(sub) = diff(cur_v, des_v) {
                            patch.insert(k.clone(), sub);
                        }
                    }
                    None => {
                        patch.insert(k.clone(), strip_nulls(des_v));
                    }
                }
            }
            (!patch.is_empty()).then_some(Value::Object(patch))
        }
        (cur, des) if cur == des => None,
        (_, des) => Some(strip_nulls(des)),
    }
}

fn strip_nulls(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), strip_nulls(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The part of `.status` the framework writes: the provider's fields (only those it reported,
/// other status fields are left alone), `conditions` and `observedGeneration`.
/// Returns the merge patch for `.status`, or `None` when nothing changes.
pub(crate) fn status_patch(
    current_status: Option<&Value>,
    provider_fields: &Map<String, Value>,
    conditions: Value,
    observed_generation: Option<i64>,
) -> Option<Value> {
    let empty = Map::new();
    let current = current_status.and_then(Value::as_object).unwrap_or(&empty);
    let mut patch = Map::new();
    for (field, desired) in provider_fields {
        if field == "conditions" || field == "observedGeneration" {
            continue;
        }
        let cur = current.get(field).unwrap_or(&Value::Null);
        if let Some(p) = diff(cur, desired) {
            patch.insert(field.clone(), p);
        }
    }
    if current.get("conditions").unwrap_or(&Value::Null) != &conditions {
        patch.insert("conditions".into(), conditions);
    }
    if let Some(g) = observed_generation
        && current.get("observedGeneration").and_then(Value::as_i64) != Some(g)
    {
        patch.insert("observedGeneration".into(), Value::from(g));
    }
    (!patch.is_empty()).then_some(Value::Object(patch))
}

/// The status field a kind's cache may go without (`observation_digests`).
pub(crate) const AT_PROVIDER: &str = "atProvider";

/// A JSON patch (RFC 6902) of an object whose `.status` exists that makes the changes of the
/// status merge patch `merge` (from [`status_patch`] over `provider_fields`) and sets `field` to
/// `value` whole, on version `resource_version` only: the version the patch leaves in the
/// object is the precondition of the write (a conflict when another came since), as a merge
/// patch's `metadata.resourceVersion` is. Each field `merge` changes is set whole, from
/// `provider_fields` when it is one of them.
pub(crate) fn replacing_patch(
    resource_version: &str,
    merge: Option<&Value>,
    provider_fields: &Map<String, Value>,
    field: &str,
    value: &Value,
) -> Vec<Value> {
    let pointer = |key: &str| format!("/status/{}", key.replace('~', "~0").replace('/', "~1"));
    let mut ops = vec![json!({
        "op": "replace", "path": "/metadata/resourceVersion", "value": resource_version,
    })];
    for (key, change) in merge.and_then(Value::as_object).into_iter().flatten() {
        if change.is_null() {
            ops.push(json!({"op": "remove", "path": pointer(key)}));
        } else {
            let whole = provider_fields
                .get(key)
                .filter(|v| !v.is_null())
                .unwrap_or(change);
            ops.push(json!({"op": "add", "path": pointer(key), "value": strip_nulls(whole)}));
        }
    }
    ops.push(json!({"op": "add", "path": pointer(field), "value": strip_nulls(value)}));
    ops
}

/// The part of a late-initialization patch that fills fields unset in `spec` (absent or
/// `null`), or `None` when it fills nothing. Late-initialization never overwrites or removes
/// what the user wrote, whatever the provider sends.
pub(crate) fn late_init_patch(spec: &Value, patch: &Value) -> Option<Value> {
    let (Value::Object(spec_map), Value::Object(patch_map)) = (spec, patch) else {
        return None;
    };
    let mut out = Map::new();
    for (k, v) in patch_map {
        if v.is_null() {
            continue;
        }
        match spec_map.get(k) {
            None | Some(Value::Null) => {
                out.insert(k.clone(), strip_nulls(v));
            }
            Some(existing @ Value::Object(_)) => {
                if let Some(sub) = late_init_patch(existing, v) {
                    out.insert(k.clone(), sub);
                }
            }
            Some(_) => {}
        }
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Applies a JSON merge patch (RFC 7386) to `target` in place.
    fn apply_merge_patch(target: &mut Value, patch: &Value) {
        let Value::Object(patch_map) = patch else {
            *target = patch.clone();
            return;
        };
        if !target.is_object() {
            *target = Value::Object(Map::new());
        }
        if let Value::Object(target_map) = target {
            for (k, v) in patch_map {
                if v.is_null() {
                    target_map.remove(k);
                } else {
                    apply_merge_patch(target_map.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
        }
    }

    #[test]
    fn a_replacing_patch_sets_each_changed_field_whole_on_one_version() {
        let fields =
            json!({"atProvider": {"a": 1}, "endpoint": {"host": "h", "port": 2, "tls": null}})
                .as_object()
                .cloned()
                .expect("object");
        let merge =
            json!({"endpoint": {"port": 2}, "gone": null, "conditions": [{"type": "Ready"}]});
        let ops = replacing_patch(
            "42",
            Some(&merge),
            &fields,
            "atProvider",
            &json!({"b": 2, "c": null}),
        );
        assert_eq!(
            ops,
            vec![
                json!({"op": "replace", "path": "/metadata/resourceVersion", "value": "42"}),
                json!({"op": "add", "path": "/status/conditions", "value": [{"type": "Ready"}]}),
                json!({"op": "add", "path": "/status/endpoint", "value": {"host": "h", "port": 2}}),
                json!({"op": "remove", "path": "/status/gone"}),
                json!({"op": "add", "path": "/status/atProvider", "value": {"b": 2}}),
            ]
        );
    }

    #[test]
    fn diff_equal_is_none() {
        let v = json!({"a": 1, "b": {"c": [1, 2]}});
        assert_eq!(diff(&v, &v), None);
    }

    #[test]
    fn diff_sets_removes_and_recurses() {
        let cur = json!({"status": "Running", "publicIp": "1.2.3.4", "nested": {"x": 1, "y": 2}});
        let des = json!({"status": "Stopped", "nested": {"x": 1, "y": 3}, "cpu": 2});
        let patch = diff(&cur, &des).expect("changed");
        assert_eq!(
            patch,
            json!({"status": "Stopped", "publicIp": null, "nested": {"y": 3}, "cpu": 2})
        );
        let mut applied = cur.clone();
        apply_merge_patch(&mut applied, &patch);
        assert_eq!(applied, des);
    }

    #[test]
    fn nulls_in_desired_mean_absent() {
        let cur = json!({"a": 1});
        assert_eq!(diff(&cur, &json!({"a": 1, "b": null})), None);
        assert_eq!(diff(&cur, &json!({"a": null})), Some(json!({"a": null})));
    }

    #[test]
    fn status_patch_only_when_changed() {
        let conditions = json!([{"type": "Ready", "status": "True"}]);
        let current = json!({"atProvider": {"id": "i-1"}, "conditions": conditions, "observedGeneration": 2, "other": 5});
        let mut fields = Map::new();
        fields.insert("atProvider".into(), json!({"id": "i-1"}));
        assert_eq!(
            status_patch(Some(&current), &fields, conditions.clone(), Some(2)),
            None
        );
        // A new generation is recorded; unrelated status fields are not touched.
        assert_eq!(
            status_patch(Some(&current), &fields, conditions.clone(), Some(3)),
            Some(json!({"observedGeneration": 3}))
        );
        fields.insert("atProvider".into(), json!({"id": "i-1", "ip": "10.0.0.2"}));
        assert_eq!(
            status_patch(Some(&current), &fields, conditions, Some(2)),
            Some(json!({"atProvider": {"ip": "10.0.0.2"}}))
        );
    }

    #[test]
    fn status_patch_from_nothing() {
        let mut fields = Map::new();
        fields.insert("availableReplicas".into(), json!(0));
        let p = status_patch(None, &fields, json!([]), Some(1)).expect("patch");
        assert_eq!(
            p,
            json!({"availableReplicas": 0, "conditions": [], "observedGeneration": 1})
        );
    }

    #[test]
    fn late_init_fills_only_unset_fields() {
        let spec = json!({"forProvider": {"zoneId": "a", "tags": null, "disk": {"size": 40}}});
        // Set fields are never overwritten, removed or reached into.
        assert_eq!(
            late_init_patch(&spec, &json!({"forProvider": {"zoneId": "b"}})),
            None
        );
        assert_eq!(
            late_init_patch(&spec, &json!({"forProvider": {"zoneId": null}})),
            None
        );
        assert_eq!(
            late_init_patch(
                &spec,
                &json!({"forProvider": {"zoneId": "b", "hostName": "h", "tags": {"a": "1"}, "disk": {"size": 20, "category": "cloud_essd"}}})
            ),
            Some(
                json!({"forProvider": {"hostName": "h", "tags": {"a": "1"}, "disk": {"category": "cloud_essd"}}})
            )
        );
    }
}
