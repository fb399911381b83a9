//! `SelfSubjectAccessReview` (`kubectl auth can-i`): the requester asks whether they may do
//! something; answered from the same RBAC decision that guards requests, never stored.

use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};

use crate::app::App;
use crate::auth::{self, Identity, ResourceAttributes};
use crate::error::{ApiError, ApiResult};
use crate::http::codec;

pub fn serve(
    app: &App,
    identity: &Identity,
    headers: &HeaderMap,
    body: &[u8],
) -> ApiResult<Response> {
    let review = codec::decode_object(body, headers)?;
    let spec = review.get("spec").cloned().unwrap_or(Value::Null);
    let status = match (
        spec.get("resourceAttributes"),
        spec.get("nonResourceAttributes"),
    ) {
        (Some(resource), None) => decide(app, identity, &resource_attributes(resource)),
        (None, Some(_)) => json!({"allowed": true}),
        _ => {
            return Err(ApiError::invalid(
                "SelfSubjectAccessReview",
                "authorization.k8s.io",
                "",
                vec![crate::error::Cause {
                    reason: "FieldValueRequired".to_owned(),
                    message: "Required value: exactly one of nonResourceAttributes or resourceAttributes must be specified".to_owned(),
                    field: "spec.resourceAttributes".to_owned(),
                }],
            ));
        }
    };
    let answer = json!({
        "kind": "SelfSubjectAccessReview",
        "apiVersion": "authorization.k8s.io/v1",
        "metadata": {},
        "spec": spec,
        "status": status,
    });
    Ok(codec::json_response(
        StatusCode::CREATED,
        &answer,
        "application/json",
        &[],
    ))
}

fn resource_attributes(resource: &Value) -> ResourceAttributes {
    let field = |key: &str| {
        resource
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    ResourceAttributes {
        verb: field("verb"),
        group: field("group"),
        resource: field("resource"),
        subresource: field("subresource"),
        namespace: field("namespace"),
        name: field("name"),
    }
}

fn decide(app: &App, identity: &Identity, attributes: &ResourceAttributes) -> Value {
    let Identity::User(user) = identity else {
        return json!({"allowed": true});
    };
    match auth::policy(&app.store.lock()).authorize(user, attributes) {
        auth::Decision::Allowed { reason } => json!({"allowed": true, "reason": reason}),
        auth::Decision::NoOpinion => json!({"allowed": false}),
    }
}
