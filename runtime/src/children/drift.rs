//! Drift between a rendered child and the live object: which field of ours someone changed.
//! Pure.

use serde_json::Value;

/// The first field where `live` differs from `desired`, as a path like
/// `spec.template.spec.containers[0].image`, or `None` when every field of `desired` is present
/// in `live` with the same value. Fields only in `live` (defaults, other managers' fields,
/// status) are not drift. Empty objects, empty lists and nulls in `desired` match absent
/// fields, and a number matches the same number written as a string (int-or-string fields).
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
            Some("spec.template.spec.containers[0].image")
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
