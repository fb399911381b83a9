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

/// Whether `path` itself is a member of `set` (a leaf, or an entry marked `.`), as
/// structured-merge-diff counts members: owning `.data.a` is not owning `.data`.
pub fn is_member(set: &Map<String, Value>, path: &[String]) -> bool {
    let Some((first, rest)) = path.split_first() else {
        return false;
    };
    match set.get(first) {
        Some(Value::Object(sub)) if rest.is_empty() => sub.is_empty() || sub.contains_key("."),
        Some(Value::Object(sub)) => is_member(sub, rest),
        Some(_) => rest.is_empty(),
        None => false,
    }
}

/// Removes `path` from `set`, and parents left without children that were not members
/// themselves.
pub fn disown(set: &mut Map<String, Value>, path: &[String]) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    if rest.is_empty() {
        set.remove(first);
        return;
    }
    if let Some(Value::Object(sub)) = set.get_mut(first) {
        // A leaf is a member with nothing inside it to give up (owning `.data` as `{}` is not
        // owning `.data.a`).
        if sub.is_empty() {
            return;
        }
        disown(sub, rest);
        if sub.is_empty() {
            set.remove(first);
        } else if sub.keys().all(|k| k == ".") {
            // Still a member itself, now without owned children: a leaf.
            sub.clear();
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
    fn leaves_members_and_disown() {
        let mut owned = set(json!({"f:spec": {".": {}, "f:a": {}, "f:b": {"f:c": {}}}}));
        let paths = leaves(&owned);
        assert_eq!(
            paths,
            vec![
                vec!["f:spec".to_owned(), "f:a".to_owned()],
                vec!["f:spec".into(), "f:b".into(), "f:c".into()]
            ]
        );
        // `.spec` is a member (it has `.`), `.spec.b` only holds one.
        assert!(is_member(&owned, &["f:spec".into()]));
        assert!(!is_member(&owned, &["f:spec".into(), "f:b".into()]));
        assert!(is_member(&owned, &["f:spec".into(), "f:a".into()]));
        disown(&mut owned, &paths[1]);
        disown(&mut owned, &paths[0]);
        assert_eq!(owned, set(json!({"f:spec": {}})), "`.spec` stays a member");
        let mut map_owner = set(json!({"f:data": {}}));
        disown(&mut map_owner, &["f:data".into(), "f:c".into()]);
        assert_eq!(map_owner, set(json!({"f:data": {}})));
        let mut child_owner = set(json!({"f:data": {"f:c": {}}}));
        disown(&mut child_owner, &["f:data".into(), "f:c".into()]);
        assert!(child_owner.is_empty(), "{child_owner:?}");
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
