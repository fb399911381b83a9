//! Label selectors (`=`, `==`, `!=`, `in`, `notin`, `key`, `!key`) and field selectors
//! (`=`, `==`, `!=` on the fields each resource supports), for lists and watches.

use serde_json::Value;

use crate::error::ApiError;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

/// A parsed label selector; the empty selector matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector(Vec<Requirement>);

/// Splits on commas that are not inside parentheses.
fn split_top(input: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in input.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&input[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&input[start..]);
    parts
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect()
}

fn set_values(raw: &str, selector: &str) -> Result<Vec<String>, ApiError> {
    let inner = raw
        .trim()
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| {
            ApiError::bad_request(format!(
                "unable to parse requirement: found '{raw}', expected: '(' in selector {selector:?}"
            ))
        })?;
    Ok(inner
        .split(',')
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
        .collect())
}

impl LabelSelector {
    pub fn parse(input: &str) -> Result<Self, ApiError> {
        let mut requirements = Vec::new();
        for part in split_top(input) {
            let requirement = if let Some(key) = part.strip_prefix('!') {
                Requirement::NotExists(key.trim().to_owned())
            } else if let Some((key, value)) = part.split_once("!=") {
                Requirement::NotEquals(key.trim().to_owned(), value.trim().to_owned())
            } else if let Some((key, value)) = part.split_once("==") {
                Requirement::Equals(key.trim().to_owned(), value.trim().to_owned())
            } else if let Some((key, value)) = part.split_once('=') {
                Requirement::Equals(key.trim().to_owned(), value.trim().to_owned())
            } else if let Some((key, values)) = part.split_once(" notin ") {
                Requirement::NotIn(key.trim().to_owned(), set_values(values, input)?)
            } else if let Some((key, values)) = part.split_once(" in ") {
                Requirement::In(key.trim().to_owned(), set_values(values, input)?)
            } else if part.contains(|c: char| c.is_whitespace() || "()<>".contains(c)) {
                return Err(ApiError::bad_request(format!(
                    "unable to parse requirement: invalid label selector {input:?}"
                )));
            } else {
                Requirement::Exists(part.to_owned())
            };
            requirements.push(requirement);
        }
        Ok(Self(requirements))
    }

    pub fn matches(&self, object: &Value) -> bool {
        let labels = object.pointer("/metadata/labels");
        let label = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        self.0.iter().all(|r| match r {
            Requirement::Equals(k, v) => label(k) == Some(v.as_str()),
            Requirement::NotEquals(k, v) => label(k) != Some(v.as_str()),
            Requirement::In(k, vs) => label(k).is_some_and(|l| vs.iter().any(|v| v == l)),
            Requirement::NotIn(k, vs) => label(k).is_none_or(|l| vs.iter().all(|v| v != l)),
            Requirement::Exists(k) => label(k).is_some(),
            Requirement::NotExists(k) => label(k).is_none(),
        })
    }
}

/// A parsed field selector.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector(Vec<(String, bool, String)>);

/// The fields a resource can be selected by, beyond `metadata.name` and `metadata.namespace`.
fn supported_fields(group: &str, plural: &str) -> &'static [&'static str] {
    match (group, plural) {
        ("", "events") => &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ],
        ("events.k8s.io", "events") => &[
            "regarding.kind",
            "regarding.namespace",
            "regarding.name",
            "regarding.uid",
            "reason",
            "reportingController",
            "type",
        ],
        ("", "secrets") => &["type"],
        ("", "namespaces") => &["status.phase"],
        ("", "pods") => &["spec.nodeName", "status.phase", "spec.serviceAccountName"],
        ("", "services") => &["spec.clusterIP", "spec.type"],
        ("", "nodes") => &["spec.unschedulable"],
        ("batch", "jobs") => &["status.successful"],
        _ => &[],
    }
}

impl FieldSelector {
    /// `custom`: the resource is a custom resource (which answers an unknown field in the
    /// older words, as built-in kinds with selectable fields of their own do).
    pub fn parse(input: &str, group: &str, plural: &str, custom: bool) -> Result<Self, ApiError> {
        let mut terms = Vec::new();
        for part in split_top(input) {
            let (field, equal, value) = if let Some((f, v)) = part.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = part.split_once("==") {
                (f, true, v)
            } else if let Some((f, v)) = part.split_once('=') {
                (f, true, v)
            } else {
                return Err(ApiError::bad_request(format!(
                    "invalid selector: '{input}'; can't understand '{part}'"
                )));
            };
            let field = field.trim();
            let extra = supported_fields(group, plural);
            if !matches!(field, "metadata.name" | "metadata.namespace") && !extra.contains(&field) {
                return Err(ApiError::bad_request(if extra.is_empty() && !custom {
                    format!(
                        "{field:?} is not a known field selector: only \"metadata.name\", \
                         \"metadata.namespace\""
                    )
                } else {
                    format!("field label not supported: {field}")
                }));
            }
            terms.push((field.to_owned(), equal, value.trim().to_owned()));
        }
        Ok(Self(terms))
    }

    pub fn matches(&self, object: &Value) -> bool {
        self.0.iter().all(|(field, equal, value)| {
            let pointer = format!("/{}", field.replace('.', "/"));
            let actual = match object.pointer(&pointer) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            (actual == *value) == *equal
        })
    }
}

/// The label and field selectors of a list, watch or deletecollection; both must match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selectors {
    pub labels: LabelSelector,
    pub fields: FieldSelector,
}

impl Selectors {
    pub fn matches(&self, object: &Value) -> bool {
        self.labels.matches(object) && self.fields.matches(object)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn label_selector_operators() {
        let object = json!({"metadata": {"labels": {"app": "web", "tier": "front"}}});
        let matches = |s: &str| LabelSelector::parse(s).expect("parses").matches(&object);
        assert!(matches(""));
        assert!(matches("app=web"));
        assert!(matches("app==web,tier"));
        assert!(!matches("app!=web"));
        assert!(matches("app in (web, api),!missing"));
        assert!(!matches("tier notin (front)"));
        assert!(matches("missing notin (x)"));
        assert!(!matches("missing"));
        assert!(LabelSelector::parse("a in b").is_err());
    }

    #[test]
    fn field_selector_on_events() {
        let event = json!({"metadata": {"name": "e", "namespace": "default"}, "involvedObject": {"name": "web", "kind": "Deployment"}, "type": "Normal"});
        let parse = |s: &str| FieldSelector::parse(s, "", "events", false).expect("parses");
        assert!(parse("involvedObject.name=web,involvedObject.kind=Deployment").matches(&event));
        assert!(!parse("type!=Normal").matches(&event));
        assert!(parse("metadata.namespace==default").matches(&event));
        let error = FieldSelector::parse("spec.foo=bar", "example.io", "widgets", true)
            .expect_err("unsupported");
        assert_eq!(error.message, "field label not supported: spec.foo");
        let error = FieldSelector::parse("status.replicas=1", "apps", "deployments", false)
            .expect_err("unsupported");
        assert_eq!(
            error.message,
            "\"status.replicas\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
        );
    }
}
