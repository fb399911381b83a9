//! Field errors worded like kube-apiserver's (`k8s.io/apimachinery/pkg/util/validation/field`),
//! the 422 `Invalid` message built from them, and errors of schema compilation.

use crate::gofmt;
use serde_json::{Value, json};
use std::fmt;

/// The category of a field error; maps 1:1 to a `StatusCause` type (see [`FieldError::reason`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldErrorKind {
    NotFound,
    Required,
    Duplicate,
    Invalid,
    NotSupported,
    Forbidden,
    TooLong,
    TooMany,
    Internal,
    /// The value does not have the schema's type; printed as "Invalid value" like the apiserver.
    TypeInvalid,
}

impl FieldErrorKind {
    /// The `StatusCause.reason` string, e.g. `FieldValueRequired`.
    pub fn reason(self) -> &'static str {
        match self {
            Self::NotFound => "FieldValueNotFound",
            Self::Required => "FieldValueRequired",
            Self::Duplicate => "FieldValueDuplicate",
            Self::Invalid => "FieldValueInvalid",
            Self::NotSupported => "FieldValueNotSupported",
            Self::Forbidden => "FieldValueForbidden",
            Self::TooLong => "FieldValueTooLong",
            Self::TooMany => "FieldValueTooMany",
            Self::Internal => "InternalError",
            Self::TypeInvalid => "FieldValueTypeInvalid",
        }
    }

    /// Parses a `reason` of an `x-kubernetes-validations` rule. Kubernetes allows only these four.
    pub fn from_rule_reason(reason: &str) -> Option<Self> {
        match reason {
            "FieldValueInvalid" => Some(Self::Invalid),
            "FieldValueForbidden" => Some(Self::Forbidden),
            "FieldValueRequired" => Some(Self::Required),
            "FieldValueDuplicate" => Some(Self::Duplicate),
            _ => None,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Self::NotFound => "Not found",
            Self::Required => "Required value",
            Self::Duplicate => "Duplicate value",
            Self::Invalid | Self::TypeInvalid => "Invalid value",
            Self::NotSupported => "Unsupported value",
            Self::Forbidden => "Forbidden",
            Self::TooLong => "Too long",
            Self::TooMany => "Too many",
            Self::Internal => "Internal error",
        }
    }
}

/// One validation failure at a field path, e.g. `spec.forProvider.instanceType`.
///
/// An empty `field` is the object root and prints as `<nil>`, as the apiserver does for
/// `anyOf`/`oneOf` failures.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    pub field: String,
    pub kind: FieldErrorKind,
    pub detail: String,
    /// The offending value; `None` for kinds that never print one (Required, Forbidden, ...).
    pub bad_value: Option<Value>,
}

impl FieldError {
    pub fn new(
        field: impl Into<String>,
        kind: FieldErrorKind,
        bad_value: Option<Value>,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            field: field.into(),
            kind,
            detail: detail.into(),
            bad_value,
        }
    }

    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(field, FieldErrorKind::Required, None, detail)
    }

    pub fn invalid(field: impl Into<String>, value: Value, detail: impl Into<String>) -> Self {
        Self::new(field, FieldErrorKind::Invalid, Some(value), detail)
    }

    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(field, FieldErrorKind::Forbidden, None, detail)
    }

    pub fn duplicate(field: impl Into<String>, value: Value) -> Self {
        Self::new(field, FieldErrorKind::Duplicate, Some(value), "")
    }

    /// The `StatusCause.reason`, e.g. `FieldValueInvalid`.
    pub fn reason(&self) -> &'static str {
        self.kind.reason()
    }

    /// The message without the field path (the apiserver's `ErrorBody`), used as
    /// `StatusCause.message`, e.g. `Invalid value: 12: spec.size in body should be ...`.
    pub fn body(&self) -> String {
        let mut s = self.kind.label().to_owned();
        let shows_value = !matches!(
            self.kind,
            FieldErrorKind::Required
                | FieldErrorKind::Forbidden
                | FieldErrorKind::TooLong
                | FieldErrorKind::Internal
        );
        if shows_value {
            s.push_str(": ");
            s.push_str(&gofmt::bad_value(
                self.bad_value.as_ref().unwrap_or(&Value::Null),
            ));
        }
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }

    /// The path as printed: `<nil>` for the root.
    pub fn field_display(&self) -> &str {
        if self.field.is_empty() {
            "<nil>"
        } else {
            &self.field
        }
    }

    /// This error as a `StatusCause` (`{"reason", "message", "field"}`) for `Status.details.causes`.
    pub fn status_cause(&self) -> Value {
        json!({
            "reason": self.reason(),
            "message": self.body(),
            "field": self.field_display(),
        })
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field_display(), self.body())
    }
}

impl std::error::Error for FieldError {}

/// The `Status.message` of a 422 Invalid response, exactly as kube-apiserver words it:
/// `ECSInstance.alibabacloud.ferroplane.io "web-1" is invalid: spec.size: Required value`,
/// with `[a, b]` around several (deduplicated) errors. An empty `group` is the core group.
pub fn invalid_message(kind: &str, group: &str, name: &str, errors: &[FieldError]) -> String {
    let qualified = if group.is_empty() {
        kind.to_owned()
    } else {
        format!("{kind}.{group}")
    };
    let mut messages: Vec<String> = Vec::with_capacity(errors.len());
    for e in errors {
        let m = e.to_string();
        if !messages.contains(&m) {
            messages.push(m);
        }
    }
    let head = format!("{qualified} {} is invalid", gofmt::quote(name));
    match messages.len() {
        0 => head,
        1 => format!("{head}: {}", messages[0]),
        _ => format!("{head}: [{}]", messages.join(", ")),
    }
}

/// `Status.details.causes` for a list of field errors.
pub fn status_causes(errors: &[FieldError]) -> Value {
    Value::Array(errors.iter().map(FieldError::status_cause).collect())
}

/// Why an `openAPIV3Schema` could not be compiled. `path` names the schema node, e.g.
/// `openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SchemaError {
    #[error("{path}: {message}")]
    InvalidSchema { path: String, message: String },
    #[error("{path}: invalid pattern {pattern:?}: {message}")]
    InvalidPattern {
        path: String,
        pattern: String,
        message: String,
    },
    #[error("{path}: invalid CEL rule {rule:?}: compilation failed: {message}")]
    InvalidRule {
        path: String,
        rule: String,
        message: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_matches_apiserver_wording() {
        let cases = [
            (
                FieldError::invalid(
                    "spec.forProvider.instanceType",
                    json!("m5.large"),
                    "spec.forProvider.instanceType in body should match '^ecs\\.'",
                ),
                "spec.forProvider.instanceType: Invalid value: \"m5.large\": spec.forProvider.instanceType in body should match '^ecs\\.'",
            ),
            (
                FieldError::invalid(
                    "spec.size",
                    json!(12),
                    "spec.size in body should be less than or equal to 9",
                ),
                "spec.size: Invalid value: 12: spec.size in body should be less than or equal to 9",
            ),
            (
                FieldError::new(
                    "spec.deletionPolicy",
                    FieldErrorKind::NotSupported,
                    Some(json!("Keep")),
                    "supported values: \"Delete\", \"Orphan\"",
                ),
                "spec.deletionPolicy: Unsupported value: \"Keep\": supported values: \"Delete\", \"Orphan\"",
            ),
            (
                FieldError::required("spec.forProvider.regionId", ""),
                "spec.forProvider.regionId: Required value",
            ),
            (
                FieldError::new(
                    "spec.name",
                    FieldErrorKind::TooLong,
                    Some(json!("abcdef")),
                    "may not be more than 5 bytes",
                ),
                "spec.name: Too long: may not be more than 5 bytes",
            ),
            (
                FieldError::new(
                    "spec.list",
                    FieldErrorKind::TooMany,
                    Some(json!(4)),
                    "must have at most 3 items",
                ),
                "spec.list: Too many: 4: must have at most 3 items",
            ),
            (
                FieldError::invalid(
                    "",
                    json!(""),
                    "\"spec\" must validate at least one schema (anyOf)",
                ),
                "<nil>: Invalid value: \"\": \"spec\" must validate at least one schema (anyOf)",
            ),
            (
                FieldError::forbidden("spec.x", "may not be set"),
                "spec.x: Forbidden: may not be set",
            ),
            (
                FieldError::duplicate("spec.ports[1]", json!(80)),
                "spec.ports[1]: Duplicate value: 80",
            ),
        ];
        for (err, want) in cases {
            assert_eq!(err.to_string(), want);
        }
    }

    #[test]
    fn reasons() {
        assert_eq!(FieldError::required("a", "").reason(), "FieldValueRequired");
        assert_eq!(
            FieldError::new("a", FieldErrorKind::TypeInvalid, Some(json!("x")), "").reason(),
            "FieldValueTypeInvalid"
        );
        assert_eq!(
            FieldErrorKind::from_rule_reason("FieldValueForbidden"),
            Some(FieldErrorKind::Forbidden)
        );
        assert_eq!(FieldErrorKind::from_rule_reason("Bogus"), None);
    }

    #[test]
    fn invalid_message_single_multiple_and_deduplicated() {
        let a = FieldError::required("spec.a", "");
        let b = FieldError::invalid("spec.b", json!(1), "bad");
        assert_eq!(
            invalid_message(
                "ECSInstance",
                "alibabacloud.ferroplane.io",
                "web-1",
                std::slice::from_ref(&a)
            ),
            "ECSInstance.alibabacloud.ferroplane.io \"web-1\" is invalid: spec.a: Required value"
        );
        assert_eq!(
            invalid_message("Secret", "", "s", &[a.clone(), b.clone(), a.clone()]),
            "Secret \"s\" is invalid: [spec.a: Required value, spec.b: Invalid value: 1: bad]"
        );
        assert_eq!(invalid_message("X", "g", "n", &[]), "X.g \"n\" is invalid");
    }

    #[test]
    fn status_cause_shape() {
        let e = FieldError::required("spec.a", "");
        assert_eq!(
            e.status_cause(),
            json!({"reason": "FieldValueRequired", "message": "Required value", "field": "spec.a"})
        );
    }
}
