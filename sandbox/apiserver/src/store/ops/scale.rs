//! The `/scale` subresource of Deployments and StatefulSets (`autoscaling/v1 Scale`), which
//! `kubectl scale` reads and patches: a view of `spec.replicas`, and an update of it.

use serde_json::{Value, json};

use crate::error::{ApiError, ApiResult, Cause};
use crate::fields::patch;
use crate::meta;
use crate::store::ops::options::{Target, WriteOptions};
use crate::store::ops::update::{UpdateKind, check_resource_version, update};
use crate::store::state::State;

/// What a request does with the Scale, decoded once the object is known to exist.
#[derive(Debug, Clone, PartialEq)]
pub enum ScaleChange {
    /// GET.
    Read,
    /// PUT of a whole Scale.
    Replace(Value),
    /// PATCH with a merge (or strategic merge) patch.
    MergePatch(Value),
    /// PATCH with a JSON patch.
    JsonPatch(Value),
}

/// GET, PUT or PATCH of `<workload>/scale`; `change` decodes the request (after the 404 of a
/// missing workload). Returns the Scale after the change.
pub fn scale(
    state: &mut State,
    target: &Target,
    change: impl FnOnce() -> ApiResult<ScaleChange>,
    options: &WriteOptions,
) -> ApiResult<Value> {
    let current = state
        .get(&target.def.store_key(), target.namespace, target.name)
        .cloned()
        .ok_or_else(|| target.not_found())?;
    let scale = to_scale(&current);
    let desired = match change()? {
        ScaleChange::Read => return Ok(scale),
        ScaleChange::Replace(desired) => desired,
        ScaleChange::MergePatch(body) => {
            let mut patched = scale;
            patch::merge_patch(&mut patched, &body);
            patched
        }
        ScaleChange::JsonPatch(body) => {
            let mut patched = scale;
            patch::json_patch(&mut patched, &body)
                .map_err(|e| ApiError::bad_request(e.to_string()))?;
            patched
        }
    };
    check_resource_version(target, &desired, &current)?;
    let replicas = desired_replicas(&desired, target.name)?;
    let mut next = (*current).clone();
    meta::set_at(&mut next, &["spec", "replicas"], json!(replicas));
    // The write is recorded as `<manager> Update scale`, and only when some manager owns the
    // replicas already: kube-apiserver tracks a Scale's fields from the parent's entries that
    // own them, and starts no tracking when there are none.
    let options = WriteOptions {
        untracked: !replicas_owned(&current),
        ..options.clone()
    };
    let written = update(
        state,
        &Target {
            subresource: "scale",
            ..Target::main(target.def, target.namespace, target.name)
        },
        next,
        UpdateKind::Update,
        &options,
    )?;
    Ok(to_scale(&written.object))
}

/// Whether an entry of the object's managedFields owns `spec.replicas`.
fn replicas_owned(object: &Value) -> bool {
    object
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|entry| entry.pointer("/fieldsV1/f:spec/f:replicas").is_some())
}

fn desired_replicas(desired: &Value, name: &str) -> ApiResult<i64> {
    desired
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
        })
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
fn to_scale(object: &Value) -> Value {
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
