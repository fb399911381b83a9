//! Field ownership between managers, on `FieldsV1` sets: the conflicts a server-side apply
//! reports, and the transfers that `force` and Update operations make.
//!
//! A field is addressed by its path of set entries (`f:spec`, `k:{"name":"web"}`, `v:"x"`).

use serde_json::{Map, Value};

/// One field path, as set entries.
pub type FieldPath = Vec<String>;

/// The leaves of a set: fields owned without owned children.
pub fn leaves(set: &Map<String, Value>) -> Vec<FieldPath> {
    let mut out = Vec::new();
    collect(set, &mut Vec::new(), &mut out);
    out
}

fn collect(set: &Map<String, Value>, prefix: &mut FieldPath, out: &mut Vec<FieldPath>) {
    for (entry, sub) in set.iter().filter(|(e, _)| *e != ".") {
        prefix.push(entry.clone());
        let children = sub.as_object().filter(|m| m.keys().any(|k| k != "."));
        match children {
            Some(children) => collect(children, prefix, out),
            None => out.push(prefix.clone()),
        }
        prefix.pop();
    }
}

/// Whether `set` owns `path` or a field inside it.
pub fn owns(set: &Map<String, Value>, path: &[String]) -> bool {
    let Some((first, rest)) = path.split_first() else {
        return true;
    };
    match set.get(first) {
        Some(Value::Object(sub)) => owns(sub, rest),
        Some(_) => rest.is_empty(),
        None => false,
    }
}

/// Removes `path` from `set`, and parents left without children.
pub fn disown(set: &mut Map<String, Value>, path: &[String]) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    if rest.is_empty() {
        set.remove(first);
        return;
    }
    if let Some(Value::Object(sub)) = set.get_mut(first) {
        disown(sub, rest);
        if sub.keys().all(|k| k == ".") {
            set.remove(first);
        }
    }
}

/// The value a path addresses in an object, if present.
pub fn value_at<'a>(object: &'a Value, path: &[String]) -> Option<&'a Value> {
    let Some((first, rest)) = path.split_first() else {
        return Some(object);
    };
    let next = if let Some(field) = first.strip_prefix("f:") {
        object.get(field)?
    } else if let Some(key) = first.strip_prefix("k:") {
        let Ok(Value::Object(id)) = serde_json::from_str::<Value>(key) else {
            return None;
        };
        object
            .as_array()?
            .iter()
            .find(|item| id.iter().all(|(k, v)| item.get(k) == Some(v)))?
    } else if let Some(raw) = first.strip_prefix("v:") {
        let wanted: Value = serde_json::from_str(raw).ok()?;
        object.as_array()?.iter().find(|item| **item == wanted)?
    } else {
        return None;
    };
    value_at(next, rest)
}

/// `.spec.containers[name="web"].image`, as the apiserver prints conflicting fields.
pub fn display(path: &[String]) -> String {
    let mut out = String::new();
    for entry in path {
        if let Some(field) = entry.strip_prefix("f:") {
            out.push('.');
            out.push_str(field);
        } else if let Some(key) = entry.strip_prefix("k:") {
            let pairs: Vec<String> = match serde_json::from_str::<Value>(key) {
                Ok(Value::Object(id)) => id.iter().map(|(k, v)| format!("{k}={v}")).collect(),
                _ => vec![key.to_owned()],
            };
            out.push_str(&format!("[{}]", pairs.join(",")));
        } else if let Some(raw) = entry.strip_prefix("v:") {
            out.push_str(&format!("[{raw}]"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set(value: Value) -> Map<String, Value> {
        value.as_object().cloned().expect("object")
    }

    #[test]
    fn leaves_owns_and_disown() {
        let mut owned = set(json!({"f:spec": {".": {}, "f:a": {}, "f:b": {"f:c": {}}}}));
        let paths = leaves(&owned);
        assert_eq!(
            paths,
            vec![
                vec!["f:spec".to_owned(), "f:a".to_owned()],
                vec!["f:spec".into(), "f:b".into(), "f:c".into()]
            ]
        );
        assert!(owns(&owned, &["f:spec".into(), "f:b".into()]));
        disown(&mut owned, &paths[1]);
        disown(&mut owned, &paths[0]);
        assert!(owned.is_empty(), "{owned:?}");
    }

    #[test]
    fn values_and_display_of_keyed_paths() {
        let object = json!({"spec": {"containers": [{"name": "web", "image": "nginx"}]}, "metadata": {"finalizers": ["x"]}});
        let path: FieldPath = vec![
            "f:spec".into(),
            "f:containers".into(),
            "k:{\"name\":\"web\"}".into(),
            "f:image".into(),
        ];
        assert_eq!(value_at(&object, &path), Some(&json!("nginx")));
        assert_eq!(display(&path), ".spec.containers[name=\"web\"].image");
        let finalizer: FieldPath =
            vec!["f:metadata".into(), "f:finalizers".into(), "v:\"x\"".into()];
        assert_eq!(value_at(&object, &finalizer), Some(&json!("x")));
    }
}
