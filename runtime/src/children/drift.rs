//! Drift between a rendered child and the live object: which field of ours someone changed.
//! Pure.

use serde_json::Value;

/// The first field where `live` differs from `desired`, as a path like
/// `spec.template.spec.containers[name=etcd].image`, or `None` when every field of `desired` is present
/// in `live` with the same value. Fields only in `live` (defaults, other managers' fields,
/// status) are not drift, and neither are items another writer added to a list keyed by
/// `name` (an env entry, a sidecar container, a volume: server-side apply merges those lists by
/// name, so they are not ours); other lists must match item for item. Empty objects, empty
/// lists and nulls in `desired` match absent fields, and a number matches the same number
/// written as a string (int-or-string fields).
pub fn drift(desired: &Value, live: &Value) -> Option<String> {
    drift_at(desired, live, String::new())
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

/// Whether every item of a desired list is an object with a string `name`: such lists are
/// merged by name by server-side apply.
fn keyed_by_name(items: &[Value]) -> bool {
    !items.is_empty() && items.iter().all(|i| i["name"].is_string())
}

fn drift_at(desired: &Value, live: &Value, path: String) -> Option<String> {
    let here = || {
        if path.is_empty() {
            "(root)".to_owned()
        } else {
            path.clone()
        }
    };
    match (desired, live) {
        (Value::Object(d), Value::Object(l)) => d.iter().find_map(|(k, dv)| {
            let child_path = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            match l.get(k) {
                Some(lv) => drift_at(dv, lv, child_path),
                None if is_empty(dv) => None,
                None => Some(child_path),
            }
        }),
        (Value::Array(d), Value::Array(l)) if keyed_by_name(d) => d.iter().find_map(|dv| {
            let name = &dv["name"];
            let item_path = format!("{path}[name={}]", name.as_str().unwrap_or_default());
            match l.iter().find(|lv| lv["name"] == *name) {
                Some(lv) => drift_at(dv, lv, item_path),
                None => Some(item_path),
            }
        }),
        (Value::Array(d), Value::Array(l)) => {
            if d.len() != l.len() {
                return Some(here());
            }
            d.iter()
                .zip(l)
                .enumerate()
                .find_map(|(i, (dv, lv))| drift_at(dv, lv, format!("{path}[{i}]")))
        }
        (Value::Number(n), Value::String(s)) | (Value::String(s), Value::Number(n)) => {
            (n.to_string() != *s).then(here)
        }
        (d, Value::Null) if is_empty(d) => None,
        (d, l) => (d != l).then(here),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn no_drift_when_live_has_extra_fields() {
        let desired = json!({"spec": {"replicas": 3, "selector": {"a": "b"}}});
        let live = json!({"spec": {"replicas": 3, "selector": {"a": "b"}, "revisionHistoryLimit": 10}, "status": {}});
        assert_eq!(drift(&desired, &live), None);
    }

    #[test]
    fn drift_names_the_first_differing_path() {
        let desired = json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "x:2"}]}}}});
        let live = json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "x:1"}]}}}});
        assert_eq!(
            drift(&desired, &live).as_deref(),
            Some("spec.template.spec.containers[name=c].image")
        );
        assert_eq!(
            drift(&json!({"a": {"b": 1}}), &json!({})).as_deref(),
            Some("a")
        );
        assert_eq!(
            drift(&json!({"l": [1, 2]}), &json!({"l": [1]})).as_deref(),
            Some("l")
        );
    }

    #[test]
    fn items_another_writer_added_to_a_named_list_are_not_drift() {
        let desired = json!({"env": [{"name": "A", "value": "1"}], "args": ["x"]});
        let live = json!({"env": [{"name": "INJECTED", "value": "y"}, {"name": "A", "value": "1"}], "args": ["x"]});
        assert_eq!(drift(&desired, &live), None);
        let changed = json!({"env": [{"name": "A", "value": "2"}], "args": ["x"]});
        assert_eq!(
            drift(&desired, &changed).as_deref(),
            Some("env[name=A].value")
        );
        let gone = json!({"env": [{"name": "B", "value": "1"}], "args": ["x"]});
        assert_eq!(drift(&desired, &gone).as_deref(), Some("env[name=A]"));
        let extra_arg = json!({"env": [{"name": "A", "value": "1"}], "args": ["x", "y"]});
        assert_eq!(
            drift(&desired, &extra_arg).as_deref(),
            Some("args"),
            "a list without keys is atomic"
        );
    }

    #[test]
    fn empty_desired_values_match_absent_ones_and_numbers_match_strings() {
        assert_eq!(
            drift(&json!({"a": {}, "b": [], "c": null}), &json!({})),
            None
        );
        assert_eq!(
            drift(&json!({"port": 8080}), &json!({"port": "8080"})),
            None
        );
        assert!(drift(&json!({"port": 8080}), &json!({"port": "http"})).is_some());
    }
}
