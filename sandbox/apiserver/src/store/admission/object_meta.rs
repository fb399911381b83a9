//! `metadata.labels` and `metadata.annotations` as kube-apiserver validates them for every
//! kind: keys are qualified names (an optional DNS subdomain prefix and `/`, then a name part
//! of at most 63 characters), label values at most 63 characters of the same alphabet, and
//! all annotations together at most 256 KiB.

use serde_json::Value;

use crate::error::Cause;

const NAME_PART: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const QUALIFIED_NAME: &str = "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
const PREFIX_PART: &str = "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_VALUE: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const ANNOTATIONS_LIMIT: usize = 256 * 1024;

/// The causes of invalid labels or annotations of `object`, empty when they are valid.
pub fn validate(object: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let metadata = object.get("metadata");
    if let Some(Value::Object(labels)) = metadata.and_then(|m| m.get("labels")) {
        for (key, value) in labels {
            causes.extend(qualified_name(key, "metadata.labels"));
            causes.extend(label_value(value.as_str().unwrap_or_default()));
        }
    }
    if let Some(Value::Object(annotations)) = metadata.and_then(|m| m.get("annotations")) {
        let mut total = 0;
        for (key, value) in annotations {
            causes.extend(qualified_name(
                &key.to_ascii_lowercase(),
                "metadata.annotations",
            ));
            total += key.len() + value.as_str().map_or(0, str::len);
        }
        if total > ANNOTATIONS_LIMIT {
            causes.push(Cause {
                reason: "FieldValueTooLong".into(),
                message: format!("Too long: may not be more than {ANNOTATIONS_LIMIT} bytes"),
                field: "metadata.annotations".into(),
            });
        }
    }
    causes
}

fn invalid(field: &str, value: &str, message: &str) -> Cause {
    Cause {
        reason: "FieldValueInvalid".into(),
        message: format!("Invalid value: {value:?}: {message}"),
        field: field.into(),
    }
}

fn is_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}

fn is_subdomain(s: &str) -> bool {
    s.len() <= 253
        && s.split('.').all(|label| {
            let b = label.as_bytes();
            !b.is_empty()
                && b.iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
                && b[0] != b'-'
                && b[b.len() - 1] != b'-'
        })
}

pub(super) fn qualified_name(key: &str, field: &str) -> Vec<Cause> {
    let parts: Vec<&str> = key.split('/').collect();
    let (prefix, name) = match parts.as_slice() {
        [name] => (None, *name),
        [prefix, name] => (Some(*prefix), *name),
        _ => return vec![invalid(field, key, QUALIFIED_NAME)],
    };
    let mut causes = Vec::new();
    if let Some(prefix) = prefix {
        if prefix.is_empty() {
            causes.push(invalid(field, key, "prefix part must be non-empty"));
        } else if !is_subdomain(prefix) {
            causes.push(invalid(field, key, PREFIX_PART));
        }
    }
    if name.is_empty() {
        causes.push(invalid(field, key, "name part must be non-empty"));
    } else if name.len() > 63 {
        causes.push(invalid(
            field,
            key,
            "name part must be no more than 63 characters",
        ));
    }
    if !name.is_empty() && !is_name_part(name) {
        causes.push(invalid(field, key, NAME_PART));
    }
    causes
}

fn label_value(value: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    if value.len() > 63 {
        causes.push(invalid(
            "metadata.labels",
            value,
            "must be no more than 63 characters",
        ));
    }
    if !value.is_empty() && !is_name_part(value) {
        causes.push(invalid("metadata.labels", value, LABEL_VALUE));
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn causes(metadata: Value) -> Vec<String> {
        validate(&json!({ "metadata": metadata }))
            .into_iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect()
    }

    #[test]
    fn valid_keys_and_values_pass() {
        assert!(
            causes(json!({
                "labels": {"app": "web", "example.com/tier": "db_1", "empty": ""},
                "annotations": {"ferroplane.io/external-name": "i-1 with spaces", "A_b": "x"},
            }))
            .is_empty()
        );
    }

    #[test]
    fn a_key_with_a_space_is_refused_as_kube_apiserver_words_it() {
        assert_eq!(
            causes(json!({"labels": {"bad key": "v"}})),
            vec![format!(
                "metadata.labels: Invalid value: \"bad key\": {NAME_PART}"
            )]
        );
    }

    #[test]
    fn prefixes_values_and_sizes_are_checked() {
        assert_eq!(causes(json!({"labels": {"a/b/c": "v"}})).len(), 1);
        assert_eq!(causes(json!({"labels": {"Example.com/x": "v"}})).len(), 1);
        assert_eq!(causes(json!({"labels": {"/x": "v"}})).len(), 1);
        assert_eq!(causes(json!({"labels": {"x": "-v"}})).len(), 1);
        assert_eq!(causes(json!({"labels": {"x": "v".repeat(64)}})).len(), 1);
        assert_eq!(causes(json!({"labels": {"x".repeat(64): "v"}})).len(), 1);
        let big = "v".repeat(ANNOTATIONS_LIMIT);
        assert_eq!(causes(json!({"annotations": {"x": big}})).len(), 1);
    }
}
