//! The pods of StatefulSets, as kube-controller-manager, the scheduler and a kubelet leave them
//! (nothing runs in them; the simulated etcd members read them, `sandbox/etcd`):
//!
//! - the StatefulSet controller makes the missing pod of an ordinal `<set>-<ordinal>` only once
//!   each of its claims exists and none is being deleted (its `createPersistentVolumeClaims`
//!   refuses "pvc … is being deleted"), owned by the set (garbage collected with it), and deletes
//!   the pods of ordinals a scale-down removes;
//! - the scheduler places a pod (`nodeName`) only while its claims exist and are not being
//!   deleted (volume binding); here that is at its creation, as the claims the simulator makes are
//!   bound at once. A placed pod is `Running` and ready, and stays so when its claim is deleted
//!   under it: pvc-protection keeps the claim for a scheduled pod (`claims::in_use`), and a
//!   kubelet keeps a started pod running;
//! - a deleted pod goes at once (no finalizer, no kubelet to wait for; as kwok does).

use serde_json::{Map, Value, json};

use crate::catalog::registry::{ResourceDef, keys};
use crate::meta;
use crate::store::ops::create::create;
use crate::store::ops::delete::delete;
use crate::store::ops::options::{DeleteOptions, Target, WriteOptions};
use crate::store::ops::update::{UpdateKind, update};
use crate::store::state::State;

/// The node every placed pod is on.
pub const NODE: &str = "sandbox-node";

fn options() -> WriteOptions {
    WriteOptions {
        manager: "kube-controller-manager".into(),
        ..WriteOptions::default()
    }
}

fn templates(set: &Value) -> &[Value] {
    set.pointer("/spec/volumeClaimTemplates")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The claims of `ordinal`'s pod: `<template>-<set>-<ordinal>` per claim template.
fn claim_volumes(set: &Value, ordinal: i64) -> Vec<(String, String)> {
    templates(set)
        .iter()
        .map(|t| {
            let template = meta::str_at(t, "/metadata/name").to_owned();
            let claim = format!("{template}-{}-{ordinal}", meta::name_of(set));
            (template, claim)
        })
        .collect()
}

/// Whether every claim of `ordinal` exists and none is being deleted.
fn claims_ready(state: &State, namespace: &str, set: &Value, ordinal: i64) -> bool {
    claim_volumes(set, ordinal).iter().all(|(_, claim)| {
        state
            .get(&keys::persistent_volume_claims(), namespace, claim)
            .is_some_and(|c| !meta::is_terminating(c))
    })
}

/// The pod of `ordinal` as the StatefulSet controller makes it and the scheduler places it.
fn new_pod(set: &Value, ordinal: i64) -> Value {
    let name = format!("{}-{ordinal}", meta::name_of(set));
    let template = set.pointer("/spec/template").cloned().unwrap_or_default();
    let mut labels: Map<String, Value> = template
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    labels.insert("statefulset.kubernetes.io/pod-name".into(), json!(name));
    labels.insert(
        "apps.kubernetes.io/pod-index".into(),
        json!(ordinal.to_string()),
    );
    let mut metadata = Map::new();
    metadata.insert("name".into(), json!(name));
    metadata.insert("labels".into(), Value::Object(labels));
    if let Some(annotations) = template.pointer("/metadata/annotations") {
        metadata.insert("annotations".into(), annotations.clone());
    }
    metadata.insert(
        "ownerReferences".into(),
        json!([{
            "apiVersion": "apps/v1", "kind": "StatefulSet", "name": meta::name_of(set),
            "uid": meta::uid_of(set), "controller": true, "blockOwnerDeletion": true,
        }]),
    );
    let mut spec = template.get("spec").cloned().unwrap_or_else(|| json!({}));
    let mut volumes: Vec<Value> = spec
        .get("volumes")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (template, claim) in claim_volumes(set, ordinal) {
        volumes.retain(|v| v["name"] != template.as_str());
        volumes.push(json!({"name": template, "persistentVolumeClaim": {"claimName": claim}}));
    }
    spec["volumes"] = Value::Array(volumes);
    spec["hostname"] = json!(name);
    if let Some(service) = set.pointer("/spec/serviceName") {
        spec["subdomain"] = service.clone();
    }
    spec["nodeName"] = json!(NODE);
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec})
}

/// A placed pod's status: running, every container ready and never restarted.
fn running_status(pod: &Value) -> Value {
    let now = meta::now_time();
    let containers: Vec<Value> = pod
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .map(|c| {
                    json!({
                        "name": c["name"], "image": c["image"], "ready": true, "started": true,
                        "restartCount": 0, "state": {"running": {"startedAt": now}},
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    json!({
        "phase": "Running",
        "conditions": [
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": now},
            {"type": "Ready", "status": "True", "lastTransitionTime": now},
        ],
        "containerStatuses": containers,
    })
}

/// The ordinal of a pod of `set`, if `pod` is one.
fn ordinal_of(pod: &Value, set: &Value) -> Option<i64> {
    let owned = pod
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .is_some_and(|refs| refs.iter().any(|r| r["uid"] == meta::uid_of(set)));
    let ordinal = meta::name_of(pod).strip_prefix(&format!("{}-", meta::name_of(set)))?;
    owned.then(|| ordinal.parse().ok()).flatten()
}

/// Makes the missing pods of the set's ordinals whose claims allow it, and deletes the pods of
/// ordinals it no longer runs. Returns how many of its ordinals have a running pod.
pub fn reconcile(state: &mut State, set: &Value, running: std::ops::Range<i64>) -> i64 {
    let Some(def) = state.registry.find_key(&keys::pods()) else {
        return 0;
    };
    if meta::is_terminating(set) {
        return 0;
    }
    let namespace = meta::str_at(set, "/metadata/namespace").to_owned();
    let condemned: Vec<String> = state
        .list(&keys::pods(), Some(&namespace))
        .filter(|p| ordinal_of(p, set).is_some_and(|o| !running.contains(&o)))
        .map(|p| meta::name_of(p).to_owned())
        .collect();
    for name in condemned {
        let target = Target::main(&def, &namespace, &name);
        if let Err(error) = delete(state, &target, &DeleteOptions::default()) {
            tracing::warn!(%error, pod = %name, "cannot delete the pod");
        }
    }
    let mut placed = 0;
    for ordinal in running {
        let name = format!("{}-{ordinal}", meta::name_of(set));
        if state.get(&keys::pods(), &namespace, &name).is_some() {
            placed += 1;
            continue;
        }
        if !claims_ready(state, &namespace, set, ordinal) {
            continue;
        }
        match create(state, &def, &namespace, new_pod(set, ordinal), &options()) {
            Ok(_) => {
                start(state, &def, &namespace, &name);
                placed += 1;
            }
            Err(error) => tracing::warn!(%error, pod = %name, "cannot create the pod"),
        }
    }
    placed
}

/// Writes a placed pod's running status.
fn start(state: &mut State, def: &ResourceDef, namespace: &str, name: &str) {
    let Some(pod) = state.get(&keys::pods(), namespace, name) else {
        return;
    };
    let mut pod = (**pod).clone();
    pod["status"] = running_status(&pod);
    let target = Target {
        def,
        namespace,
        name,
        subresource: "status",
    };
    if let Err(error) = update(state, &target, pod, UpdateKind::Update, &options()) {
        tracing::warn!(%error, pod = %name, "cannot write the pod's status");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pod_mounts_its_ordinals_claims_and_is_placed() {
        let set = json!({"metadata": {"name": "etcd", "namespace": "ns", "uid": "u1"},
            "spec": {"replicas": 3, "serviceName": "etcd",
                "template": {"metadata": {"labels": {"app": "etcd"}},
                    "spec": {"containers": [{"name": "etcd", "image": "etcd:v3.6.0"}],
                        "volumes": [{"name": "config", "configMap": {"name": "c"}}]}},
                "volumeClaimTemplates": [{"metadata": {"name": "data"}}]}});
        let pod = new_pod(&set, 2);
        assert_eq!(pod["metadata"]["name"], "etcd-2");
        assert_eq!(pod["metadata"]["labels"]["app"], "etcd");
        assert_eq!(pod["metadata"]["ownerReferences"][0]["uid"], "u1");
        assert_eq!(pod["spec"]["nodeName"], NODE);
        assert_eq!(pod["spec"]["subdomain"], "etcd");
        assert_eq!(
            pod["spec"]["volumes"],
            json!([{"name": "config", "configMap": {"name": "c"}},
                {"name": "data", "persistentVolumeClaim": {"claimName": "data-etcd-2"}}])
        );
        assert_eq!(ordinal_of(&pod, &set), Some(2));
        let status = running_status(&pod);
        assert_eq!(status["phase"], "Running");
        assert_eq!(status["containerStatuses"][0]["ready"], true);
    }
}
