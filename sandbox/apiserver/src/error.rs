//! API errors as `meta.k8s.io/v1 Status` objects, with the reasons, codes and messages
//! kube-apiserver uses, so that kubectl and kube-rs print and classify them as on a real cluster.
//! Every layer returns them; `http` turns them into responses.

use serde_json::{Value, json};

/// One `details.causes` entry of a 422 Invalid answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    /// `FieldValueInvalid`, `FieldValueRequired`, `FieldValueNotSupported`, ...
    pub reason: String,
    pub message: String,
    /// The field path, e.g. `spec.replicas`.
    pub field: String,
}

/// An error answered as a `Status`. `Display` is the Status message.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    pub code: u16,
    pub reason: &'static str,
    pub message: String,
    /// Boxed: errors travel through every `Result` of the request path.
    pub details: Box<Details>,
}

/// `Status.details`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Details {
    pub name: Option<String>,
    pub group: Option<String>,
    pub kind: Option<String>,
    pub causes: Vec<Cause>,
}

impl ApiError {
    fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
            details: Box::default(),
        }
    }

    fn with_details(mut self, name: &str, group: &str, kind: &str) -> Self {
        self.details.name = Some(name.to_owned()).filter(|n| !n.is_empty());
        self.details.group = Some(group.to_owned()).filter(|g| !g.is_empty());
        self.details.kind = Some(kind.to_owned()).filter(|k| !k.is_empty());
        self
    }

    /// `<plural>.<group> "<name>" not found`; `group_resource` is already qualified.
    pub fn not_found(group_resource: &str, group: &str, plural: &str, name: &str) -> Self {
        Self::new(
            404,
            "NotFound",
            format!("{group_resource} \"{name}\" not found"),
        )
        .with_details(name, group, plural)
    }

    /// A path that matches no served resource.
    pub fn no_route() -> Self {
        Self::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
    }

    pub fn already_exists(group_resource: &str, group: &str, plural: &str, name: &str) -> Self {
        Self::new(
            409,
            "AlreadyExists",
            format!("{group_resource} \"{name}\" already exists"),
        )
        .with_details(name, group, plural)
    }

    /// The optimistic-concurrency conflict of a stale `resourceVersion` or failed precondition.
    pub fn conflict(
        group_resource: &str,
        group: &str,
        plural: &str,
        name: &str,
        why: &str,
    ) -> Self {
        Self::new(
            409,
            "Conflict",
            format!("Operation cannot be fulfilled on {group_resource} \"{name}\": {why}"),
        )
        .with_details(name, group, plural)
    }

    pub fn modified(group_resource: &str, group: &str, plural: &str, name: &str) -> Self {
        Self::conflict(
            group_resource,
            group,
            plural,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// 422 `<Kind> "<name>" is invalid: <causes>`.
    pub fn invalid(kind: &str, group: &str, name: &str, causes: Vec<Cause>) -> Self {
        let summary = if causes.len() == 1 {
            format!("{}: {}", causes[0].field, causes[0].message)
        } else {
            let parts: Vec<String> = causes
                .iter()
                .map(|c| format!("{}: {}", c.field, c.message))
                .collect();
            format!("[{}]", parts.join(", "))
        };
        let qualified = if group.is_empty() {
            kind.to_owned()
        } else {
            format!("{kind}.{group}")
        };
        Self::invalid_with_message(
            format!("{qualified} \"{name}\" is invalid: {summary}"),
            kind,
            group,
            name,
            causes,
        )
    }

    /// 422 with a message already worded by the caller (the schema module words its own).
    pub fn invalid_with_message(
        message: String,
        kind: &str,
        group: &str,
        name: &str,
        causes: Vec<Cause>,
    ) -> Self {
        let mut error = Self::new(422, "Invalid", message).with_details(name, group, kind);
        error.details.causes = causes;
        error
    }

    /// 422 about the request rather than an object (a failed JSON patch `test`).
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(422, "Invalid", message)
    }

    /// 409 of a server-side apply whose fields other managers own with other values.
    pub fn apply_conflicts(message: String, causes: Vec<Cause>) -> Self {
        let mut error = Self::new(409, "Conflict", message);
        error.details.causes = causes;
        error
    }

    /// 500 with no reason: what kube-apiserver answers when it cannot even type an applied
    /// configuration (duplicate keys in a keyed list).
    pub fn untyped_apply(message: impl Into<String>) -> Self {
        Self::new(500, "", message)
    }

    /// 500, as kube-apiserver answers a failed allocation (`Internal error occurred: ...`).
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(
            500,
            "InternalError",
            format!("Internal error occurred: {}", message.into()),
        )
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(403, "Forbidden", message)
    }

    /// 403 of the authorizer, naming the object (`kind` is the resource's plural, as the
    /// apiserver fills it).
    pub fn forbidden_object(message: String, name: &str, group: &str, plural: &str) -> Self {
        Self::new(403, "Forbidden", message).with_details(name, group, plural)
    }

    /// 401 of a request whose credentials the server does not accept.
    pub fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized")
    }

    /// 421 of a request whose Host header names another server (DNS rebinding).
    pub fn misdirected(host: &str) -> Self {
        Self::new(
            421,
            "MisdirectedRequest",
            format!(
                "the Host header {host:?} is not one this server serves; use 127.0.0.1, localhost or [::1] with its port"
            ),
        )
    }

    pub fn method_not_allowed() -> Self {
        Self::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )
    }

    pub fn unsupported_media_type(content_type: &str, accepted: &[&str]) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {} (got {content_type:?})",
                accepted.join(", ")
            ),
        )
    }

    pub fn too_large(limit: usize) -> Self {
        Self::new(
            413,
            "RequestEntityTooLarge",
            format!("Request entity too large: limit is {limit}"),
        )
    }

    /// The 410 of an expired resourceVersion; only ever sent inside a watch stream.
    pub fn expired(requested: u64, oldest: u64) -> Self {
        Self::new(
            410,
            "Expired",
            format!("too old resource version: {requested} ({oldest})"),
        )
    }

    /// The `Status` object.
    pub fn status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        let mut details = serde_json::Map::new();
        if let Some(name) = &self.details.name {
            details.insert("name".into(), json!(name));
        }
        if let Some(group) = &self.details.group {
            details.insert("group".into(), json!(group));
        }
        if let Some(kind) = &self.details.kind {
            details.insert("kind".into(), json!(kind));
        }
        if !self.details.causes.is_empty() {
            let causes: Vec<Value> = self
                .details
                .causes
                .iter()
                .map(|c| json!({"reason": c.reason, "message": c.message, "field": c.field}))
                .collect();
            details.insert("causes".into(), Value::Array(causes));
        }
        if !details.is_empty() {
            status["details"] = Value::Object(details);
        }
        status
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_status_names_the_group_resource() {
        let status = ApiError::not_found("deployments.apps", "apps", "deployments", "web").status();
        assert_eq!(status["message"], "deployments.apps \"web\" not found");
        assert_eq!(status["reason"], "NotFound");
        assert_eq!(status["code"], 404);
        assert_eq!(status["details"]["kind"], "deployments");
        assert_eq!(status["details"]["group"], "apps");
    }

    #[test]
    fn invalid_lists_every_cause() {
        let causes = vec![
            Cause {
                reason: "FieldValueRequired".into(),
                message: "Required value".into(),
                field: "spec.a".into(),
            },
            Cause {
                reason: "FieldValueInvalid".into(),
                message: "Invalid value: 3".into(),
                field: "spec.b".into(),
            },
        ];
        let status = ApiError::invalid("Widget", "example.io", "w", causes).status();
        assert_eq!(
            status["message"],
            "Widget.example.io \"w\" is invalid: [spec.a: Required value, spec.b: Invalid value: 3]"
        );
        assert_eq!(status["details"]["causes"][1]["field"], "spec.b");
    }
}
