//! The `/scale` subresource (`autoscaling/v1 Scale`) of Deployments, StatefulSets and custom
//! resources whose CRD declares one, which `kubectl scale` and autoscalers read and patch: a
//! view of the replicas (`spec.replicas`, or the CRD's `specReplicasPath`), and an update of it.

use serde_json::{Value, json};

use crate::catalog::registry::{ScalePaths, SelectorSource};
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
    let paths = target.def.scale_paths().ok_or_else(|| target.not_found())?;
    let scale = to_scale(&paths, &current);
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
    let spec_path: Vec<&str> = paths.spec_replicas.split('/').skip(1).collect();
    meta::set_at(&mut next, &spec_path, json!(replicas));
    // The write is recorded as `<manager> Update scale`, and only when some manager owns the
    // replicas already: kube-apiserver tracks a Scale's fields from the parent's entries that
    // own them, and starts no tracking when there are none.
    let options = WriteOptions {
        untracked: !replicas_owned(&current, &paths),
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
    Ok(to_scale(&paths, &written.object))
}

/// Whether an entry of the object's managedFields owns the replicas.
fn replicas_owned(object: &Value, paths: &ScalePaths) -> bool {
    let owned = format!("/fieldsV1{}", paths.spec_replicas.replace('/', "/f:"));
    object
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|entry| entry.pointer(&owned).is_some())
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

/// The Scale view of a workload or custom resource. A custom resource without replicas reads
/// as 0 (kube-apiserver's answer); the built-in workloads always have them (defaulted to 1).
fn to_scale(paths: &ScalePaths, object: &Value) -> Value {
    let metadata = &object["metadata"];
    let (default_replicas, selector) = match &paths.label_selector {
        SelectorSource::MatchLabels => (1, Some(selector(object))),
        SelectorSource::At(path) => (
            0,
            object
                .pointer(path)
                .and_then(Value::as_str)
                .map(str::to_owned),
        ),
        SelectorSource::Absent => (0, None),
    };
    let mut status = json!({
        "replicas": object.pointer(&paths.status_replicas).cloned().unwrap_or(json!(0)),
    });
    if let Some(selector) = selector.filter(|s| !s.is_empty()) {
        status["selector"] = json!(selector);
    }
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
        "spec": {
            "replicas": object
                .pointer(&paths.spec_replicas)
                .cloned()
                .unwrap_or(json!(default_replicas)),
        },
        "status": status,
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
        let scale = to_scale(&ScalePaths::workload(), &deployment);
        assert_eq!(scale["spec"]["replicas"], 3);
        assert_eq!(
            scale["status"],
            json!({"replicas": 2, "selector": "app=web,tier=front"})
        );
        assert_eq!(scale["metadata"]["resourceVersion"], "7");
    }

    #[test]
    fn scale_view_of_a_custom_resource_follows_its_crd_paths() {
        let paths = ScalePaths {
            spec_replicas: "/spec/size".into(),
            status_replicas: "/status/readyMembers".into(),
            label_selector: SelectorSource::At("/status/selector".into()),
        };
        let cluster = json!({"metadata": {"name": "etcd", "namespace": "default"},
            "spec": {"size": 3}, "status": {"readyMembers": 2, "selector": "app=etcd"}});
        let scale = to_scale(&paths, &cluster);
        assert_eq!(scale["spec"]["replicas"], 3);
        assert_eq!(
            scale["status"],
            json!({"replicas": 2, "selector": "app=etcd"})
        );
        let fresh = json!({"metadata": {"name": "etcd"}, "spec": {}});
        let scale = to_scale(&paths, &fresh);
        assert_eq!(scale["spec"]["replicas"], 0);
        assert_eq!(scale["status"], json!({"replicas": 0}));
        let owned = json!({"metadata": {"managedFields": [
            {"manager": "a", "fieldsV1": {"f:spec": {"f:size": {}}}}]}});
        assert!(replicas_owned(&owned, &paths));
        assert!(!replicas_owned(&owned, &ScalePaths::workload()));
    }
}
