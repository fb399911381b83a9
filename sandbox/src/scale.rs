//! The `/scale` subresource of Deployments and StatefulSets (`autoscaling/v1 Scale`), which
//! `kubectl scale` patches.

use axum::http::{HeaderMap, Method};
use axum::response::Response;
use serde_json::{Value, json};

use crate::app::App;
use crate::codec;
use crate::error::{ApiError, ApiResult, Cause};
use crate::ops::{self, UpdateKind, WriteOptions};
use crate::patch;
use crate::registry::{ResourceDef, keys};

pub fn has_scale(def: &ResourceDef) -> bool {
    let key = def.store_key();
    key == keys::deployments() || key == keys::statefulsets()
}

/// `spec.selector.matchLabels` as a label selector string.
fn selector(object: &Value) -> String {
    let labels = object
        .pointer("/spec/selector/matchLabels")
        .and_then(Value::as_object);
    let mut pairs: Vec<String> = labels
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    pairs.sort();
    pairs.join(",")
}

/// The Scale view of a workload.
pub fn to_scale(object: &Value) -> Value {
    let metadata = &object["metadata"];
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": metadata["name"],
            "namespace": metadata["namespace"],
            "uid": metadata["uid"],
            "resourceVersion": metadata["resourceVersion"],
            "creationTimestamp": metadata["creationTimestamp"],
        },
        "spec": {"replicas": object.pointer("/spec/replicas").cloned().unwrap_or(json!(1))},
        "status": {
            "replicas": object.pointer("/status/replicas").cloned().unwrap_or(json!(0)),
            "selector": selector(object),
        },
    })
}

/// GET, PUT or PATCH of `<workload>/scale`.
#[allow(clippy::too_many_arguments)]
pub fn serve(
    app: &App,
    def: &ResourceDef,
    namespace: &str,
    name: &str,
    method: &Method,
    headers: &HeaderMap,
    body: &[u8],
    options: &WriteOptions,
) -> ApiResult<Response> {
    let mut state = app.lock();
    let current = state
        .get(&def.store_key(), namespace, name)
        .cloned()
        .ok_or_else(|| ApiError::not_found(&def.group_resource(), &def.group, &def.plural, name))?;
    let scale = to_scale(&current);
    let desired = match *method {
        Method::GET | Method::HEAD => return Ok(codec::ok(&scale)),
        Method::PUT => codec::decode_object(body, headers)?,
        Method::PATCH => {
            let media_type = codec::content_type(headers);
            let patch_body = codec::decode(body, "application/json")?;
            let mut patched = scale.clone();
            match media_type.as_str() {
                "application/merge-patch+json" | "application/strategic-merge-patch+json" => {
                    patch::merge_patch(&mut patched, &patch_body)
                }
                "application/json-patch+json" => patch::json_patch(&mut patched, &patch_body)
                    .map_err(|e| ApiError::bad_request(e.to_string()))?,
                other => {
                    return Err(ApiError::unsupported_media_type(
                        other,
                        &[
                            "application/json-patch+json",
                            "application/merge-patch+json",
                            "application/strategic-merge-patch+json",
                        ],
                    ));
                }
            }
            patched
        }
        _ => return Err(ApiError::method_not_allowed()),
    };
    let wanted_rv = desired
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !wanted_rv.is_empty()
        && Some(wanted_rv)
            != current
                .pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
    {
        return Err(ApiError::modified(
            &def.group_resource(),
            &def.group,
            &def.plural,
            name,
        ));
    }
    let replicas = desired
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .filter(|r| *r >= 0)
        .ok_or_else(|| {
            ApiError::invalid(
                "Scale",
                "autoscaling",
                name,
                vec![Cause {
                    reason: "FieldValueInvalid".into(),
                    message: "Invalid value: must be greater than or equal to 0".into(),
                    field: "spec.replicas".into(),
                }],
            )
        })?;
    let mut next = (*current).clone();
    crate::meta::set_at(&mut next, &["spec", "replicas"], json!(replicas));
    let written = ops::update(
        &mut state,
        def,
        namespace,
        name,
        next,
        "",
        UpdateKind::Update,
        options,
    )?;
    Ok(codec::ok(&to_scale(&written.object)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_view_of_a_deployment() {
        let deployment = json!({"metadata": {"name": "web", "namespace": "default", "resourceVersion": "7"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"tier": "front", "app": "web"}}},
            "status": {"replicas": 2}});
        let scale = to_scale(&deployment);
        assert_eq!(scale["spec"]["replicas"], 3);
        assert_eq!(
            scale["status"],
            json!({"replicas": 2, "selector": "app=web,tier=front"})
        );
        assert_eq!(scale["metadata"]["resourceVersion"], "7");
    }
}
