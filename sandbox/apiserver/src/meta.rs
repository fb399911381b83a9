//! Object metadata helpers: timestamps, name validation, and the normalisation the apiserver's
//! ObjectMeta round-trip performs (empty lists and maps disappear).

use serde_json::{Map, Value};

use crate::error::Cause;

/// RFC 3339 with seconds precision and `Z`, as in `creationTimestamp`.
pub fn now_time() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

pub fn str_at<'a>(object: &'a Value, pointer: &str) -> &'a str {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

pub fn name_of(object: &Value) -> &str {
    str_at(object, "/metadata/name")
}

pub fn uid_of(object: &Value) -> &str {
    str_at(object, "/metadata/uid")
}

pub fn metadata_mut(object: &mut Value) -> &mut Map<String, Value> {
    if !object.get("metadata").is_some_and(Value::is_object) {
        object["metadata"] = Value::Object(Map::new());
    }
    match object.get_mut("metadata") {
        Some(Value::Object(map)) => map,
        _ => unreachable!("metadata was made an object above"),
    }
}

/// Sets `value` at `path`, turning anything on the way that is not an object into one, so that
/// malformed client input can never make an index panic.
pub fn set_at(object: &mut Value, path: &[&str], value: Value) {
    let Some((last, parents)) = path.split_last() else {
        *object = value;
        return;
    };
    let mut current = object;
    for key in parents {
        if !current.is_object() {
            *current = Value::Object(Map::new());
        }
        let Value::Object(map) = current else { return };
        current = map.entry(*key).or_insert(Value::Null);
    }
    if !current.is_object() {
        *current = Value::Object(Map::new());
    }
    if let Value::Object(map) = current {
        map.insert((*last).to_owned(), value);
    }
}

pub fn finalizers(object: &Value) -> Vec<String> {
    object
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

pub fn set_finalizers(object: &mut Value, finalizers: &[String]) {
    let meta = metadata_mut(object);
    if finalizers.is_empty() {
        meta.remove("finalizers");
    } else {
        meta.insert("finalizers".into(), Value::from(finalizers.to_vec()));
    }
}

pub fn is_terminating(object: &Value) -> bool {
    object
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null())
}

/// `(uid)` of every owner reference.
pub fn owner_uids(object: &Value) -> Vec<String> {
    object
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .map(|refs| {
            refs.iter()
                .filter_map(|r| r.get("uid").and_then(Value::as_str).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Drops what an ObjectMeta round-trip drops: nulls and empty lists or maps.
pub fn normalize(object: &mut Value) {
    let meta = metadata_mut(object);
    meta.retain(|_, v| match v {
        Value::Null => false,
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
        Value::String(s) => !s.is_empty(),
        _ => true,
    });
}

const SUBDOMAIN_MESSAGE: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MESSAGE: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035_MESSAGE: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

/// Which DNS rule a kind's names follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameRule {
    Subdomain,
    Label,
    Dns1035,
}

impl NameRule {
    pub fn for_kind(group: &str, plural: &str) -> Self {
        match (group, plural) {
            ("", "namespaces") => Self::Label,
            ("", "services") => Self::Dns1035,
            _ => Self::Subdomain,
        }
    }
}

fn is_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// The causes of an invalid `metadata.name` (or a namespace in `field`), empty when valid.
pub fn validate_name(name: &str, rule: NameRule, field: &str) -> Vec<Cause> {
    let invalid = |message: &str| Cause {
        reason: "FieldValueInvalid".into(),
        message: format!("Invalid value: {name:?}: {message}"),
        field: field.into(),
    };
    let mut causes = Vec::new();
    let (max, ok, message) = match rule {
        NameRule::Subdomain => (253, name.split('.').all(is_label), SUBDOMAIN_MESSAGE),
        NameRule::Label => (63, is_label(name), LABEL_MESSAGE),
        NameRule::Dns1035 => (
            63,
            is_label(name) && name.as_bytes()[0].is_ascii_lowercase(),
            DNS1035_MESSAGE,
        ),
    };
    if name.len() > max {
        causes.push(invalid(&format!("must be no more than {max} characters")));
    }
    if !ok {
        causes.push(invalid(message));
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_follow_dns_rules() {
        assert!(validate_name("web-1.example", NameRule::Subdomain, "metadata.name").is_empty());
        assert_eq!(
            validate_name("Web_1", NameRule::Subdomain, "metadata.name").len(),
            1
        );
        assert_eq!(
            validate_name("a.b", NameRule::Label, "metadata.name").len(),
            1
        );
        assert_eq!(
            validate_name("1abc", NameRule::Dns1035, "metadata.name").len(),
            1
        );
        assert_eq!(
            validate_name(&"a".repeat(64), NameRule::Label, "metadata.name").len(),
            1
        );
        assert!(
            validate_name("-a", NameRule::Subdomain, "metadata.name")[0]
                .message
                .starts_with("Invalid value: \"-a\": a lowercase RFC 1123 subdomain")
        );
    }

    #[test]
    fn normalize_drops_empty_metadata_fields() {
        let mut object =
            json!({"metadata": {"name": "a", "finalizers": [], "labels": {}, "annotations": null}});
        normalize(&mut object);
        assert_eq!(object, json!({"metadata": {"name": "a"}}));
    }

    #[test]
    fn set_at_replaces_non_objects_on_the_way() {
        let mut object = json!({"spec": "oops", "status": 5});
        set_at(&mut object, &["spec", "replicas"], json!(2));
        set_at(&mut object, &["status", "phase"], json!("Active"));
        assert_eq!(
            object,
            json!({"spec": {"replicas": 2}, "status": {"phase": "Active"}})
        );
    }

    #[test]
    fn timestamps_are_rfc3339_utc() {
        let t = now_time();
        assert!(t.ends_with('Z') && t.len() == 20, "{t}");
    }
}
