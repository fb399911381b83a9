//! PersistentVolumeClaims as kube-controller-manager handles them, without pods or volumes:
//!
//! - the StatefulSet controller creates `<template>-<set>-<ordinal>` from each
//!   `volumeClaimTemplate` for every ordinal it runs, before the ordinal's pod (a pod placed on
//!   a claim that went since keeps running without one: none is made for it) (labels: the template's plus the set's
//!   `matchLabels`), and follows `persistentVolumeClaimRetentionPolicy`: `whenDeleted: Delete`
//!   makes the set the claims' controller owner (the garbage collector deletes them with it),
//!   `whenScaled: Delete` deletes the claims of the ordinals a scale-down removes (the real
//!   controller hands them to the condemned pod, whose deletion takes them along); `Retain`
//!   keeps them, and a later scale-up reuses them;
//! - a provisioner binds every `Pending` claim at once to a volume `pvc-<uid>` of the size it
//!   requests (the real control plane of the tests has no provisioner: static volumes there;
//!   `SandboxConfig::provision_claims` turns it off, and claims stay Pending as there);
//! - the pvc-protection controller removes `kubernetes.io/pvc-protection` from a deleted claim
//!   once no scheduled pod (`nodeName` set) names it; the claim's `Unused` condition says whether
//!   one does. A StatefulSet's pods are stored (`statefulset_pods`), so a claim deleted under a
//!   running member stays until its pod is deleted too, as on a real cluster.

use serde_json::{Map, Value, json};

use crate::catalog::registry::{ResourceDef, keys};
use crate::meta;
use crate::store::admission::claims::PVC_PROTECTION;
use crate::store::ops::create::create;
use crate::store::ops::delete::delete;
use crate::store::ops::options::{DeleteOptions, Target, WriteOptions};
use crate::store::ops::update::{UpdateKind, update};
use crate::store::state::State;

fn options() -> WriteOptions {
    WriteOptions {
        manager: "kube-controller-manager".into(),
        ..WriteOptions::default()
    }
}

fn claim_def(state: &State) -> Option<std::sync::Arc<ResourceDef>> {
    state.registry.find_key(&keys::persistent_volume_claims())
}

/// The ordinals a StatefulSet runs: `spec.ordinals.start` and the `replicas` after it.
pub(super) fn ordinals(set: &Value) -> std::ops::Range<i64> {
    let start = set
        .pointer("/spec/ordinals/start")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let replicas = set
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    start..start + replicas.max(0)
}

fn templates(set: &Value) -> &[Value] {
    set.pointer("/spec/volumeClaimTemplates")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn policy(set: &Value, field: &str) -> bool {
    set.pointer(&format!(
        "/spec/persistentVolumeClaimRetentionPolicy/{field}"
    ))
    .and_then(Value::as_str)
        == Some("Delete")
}

/// The ordinal of `claim` among the claims of `template` of `set`, if it is one of them.
fn ordinal_of(claim: &str, template: &str, set: &str) -> Option<i64> {
    let ordinal = claim.strip_prefix(&format!("{template}-{set}-"))?;
    if ordinal.starts_with('0') && ordinal != "0" || ordinal.starts_with(['+', '-']) {
        return None;
    }
    ordinal.parse().ok()
}

fn template_name(template: &Value) -> &str {
    meta::str_at(template, "/metadata/name")
}

/// Whether a pod uses the claim, as the pvc-protection controller counts: a scheduled pod
/// (`nodeName` set) that names it, stopping or not (`podUsesPVCForDeletion`).
fn in_use(state: &State, namespace: &str, claim: &str) -> bool {
    state.list(&keys::pods(), Some(namespace)).any(|pod| {
        !meta::str_at(pod, "/spec/nodeName").is_empty()
            && pod
                .pointer("/spec/volumes")
                .and_then(Value::as_array)
                .is_some_and(|volumes| {
                    volumes.iter().any(|v| {
                        v.pointer("/persistentVolumeClaim/claimName")
                            .and_then(Value::as_str)
                            == Some(claim)
                    })
                })
    })
}

/// Whether the pod of `ordinal` of `set` exists and is placed on a node.
fn placed(state: &State, namespace: &str, set: &Value, ordinal: i64) -> bool {
    let pod = format!("{}-{ordinal}", meta::name_of(set));
    state
        .get(&keys::pods(), namespace, &pod)
        .is_some_and(|p| !meta::str_at(p, "/spec/nodeName").is_empty())
}

/// The set as the controller owner of a claim.
fn owner_reference(set: &Value) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "StatefulSet", "name": meta::name_of(set),
        "uid": meta::uid_of(set), "controller": true, "blockOwnerDeletion": true,
    })
}

/// The claim the set's controller creates for `template` and `ordinal`.
fn new_claim(set: &Value, template: &Value, ordinal: i64) -> Value {
    let mut labels = template
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if let Some(Value::Object(selector)) = set.pointer("/spec/selector/matchLabels") {
        labels.extend(selector.clone());
    }
    let mut metadata = Map::new();
    metadata.insert(
        "name".into(),
        json!(format!(
            "{}-{}-{ordinal}",
            template_name(template),
            meta::name_of(set)
        )),
    );
    if !labels.is_empty() {
        metadata.insert("labels".into(), Value::Object(labels));
    }
    if let Some(annotations) = template.pointer("/metadata/annotations") {
        metadata.insert("annotations".into(), annotations.clone());
    }
    if policy(set, "whenDeleted") {
        metadata.insert("ownerReferences".into(), json!([owner_reference(set)]));
    }
    json!({
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": metadata,
        "spec": template.get("spec").cloned().unwrap_or_else(|| json!({})),
    })
}

/// Creates the claims of the set's ordinals, keeps their owner references in line with
/// `whenDeleted`, and deletes the claims of removed ordinals when `whenScaled` says so.
pub fn reconcile_statefulset(state: &mut State, set: &Value) {
    let Some(def) = claim_def(state) else {
        return;
    };
    if meta::is_terminating(set) {
        return;
    }
    let namespace = meta::str_at(set, "/metadata/namespace").to_owned();
    let running = ordinals(set);
    for template in templates(set) {
        for ordinal in running.clone() {
            let claim = new_claim(set, template, ordinal);
            let name = meta::name_of(&claim).to_owned();
            match state.get(&keys::persistent_volume_claims(), &namespace, &name) {
                // The StatefulSet controller makes the claims of a pod it creates, or of a
                // Pending pod; a running pod whose claim went is left as it is.
                None if placed(state, &namespace, set, ordinal) => {}
                None => {
                    if let Err(error) = create(state, &def, &namespace, claim, &options()) {
                        tracing::warn!(%error, claim = %name, "cannot create the claim");
                    }
                }
                Some(existing) => {
                    let existing = (**existing).clone();
                    follow_deletion_policy(state, &def, set, existing);
                }
            }
        }
        if policy(set, "whenScaled") {
            let condemned: Vec<String> = state
                .list(&keys::persistent_volume_claims(), Some(&namespace))
                .filter(|c| !meta::is_terminating(c))
                .map(|c| meta::name_of(c).to_owned())
                .filter(|c| {
                    ordinal_of(c, template_name(template), meta::name_of(set))
                        .is_some_and(|o| !running.contains(&o))
                })
                .collect();
            for name in condemned {
                let target = Target::main(&def, &namespace, &name);
                if let Err(error) = delete(state, &target, &DeleteOptions::default()) {
                    tracing::warn!(%error, claim = %name, "cannot delete the claim");
                }
            }
        }
    }
}

/// Adds or removes the set's owner reference on a claim as `whenDeleted` asks.
fn follow_deletion_policy(state: &mut State, def: &ResourceDef, set: &Value, mut claim: Value) {
    let uid = meta::uid_of(set).to_owned();
    let wanted = policy(set, "whenDeleted");
    let mut references: Vec<Value> = claim
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let has = references.iter().any(|r| r["uid"] == uid.as_str());
    if has == wanted {
        return;
    }
    if wanted {
        references.push(owner_reference(set));
    } else {
        references.retain(|r| r["uid"] != uid.as_str());
    }
    let metadata = meta::metadata_mut(&mut claim);
    if references.is_empty() {
        metadata.remove("ownerReferences");
    } else {
        metadata.insert("ownerReferences".into(), Value::Array(references));
    }
    write(state, def, claim, "");
}

fn write(state: &mut State, def: &ResourceDef, object: Value, subresource: &str) {
    let namespace = meta::str_at(&object, "/metadata/namespace").to_owned();
    let name = meta::name_of(&object).to_owned();
    let target = Target {
        def,
        namespace: &namespace,
        name: &name,
        subresource,
    };
    if let Err(error) = update(state, &target, object, UpdateKind::Update, &options()) {
        tracing::warn!(%error, claim = %name, "cannot update the claim");
    }
}

/// Binds the namespace's pending claims (when `provision`), keeps their `Unused` condition true to what uses
/// them, and lets deleted claims no pod uses go.
pub fn reconcile_namespace(state: &mut State, namespace: &str, provision: bool) {
    let Some(def) = claim_def(state) else {
        return;
    };
    let claims: Vec<Value> = state
        .list(&keys::persistent_volume_claims(), Some(namespace))
        .map(|c| (**c).clone())
        .collect();
    for claim in claims {
        let used = in_use(state, namespace, meta::name_of(&claim));
        if meta::is_terminating(&claim) {
            if !used {
                release(state, &def, claim);
            }
            continue;
        }
        if !provision && claim.pointer("/spec/volumeName").is_none() {
            continue;
        }
        let claim = bind(state, &def, claim);
        let status = claim_status(&claim, used);
        if claim.get("status") != Some(&status) {
            let mut next = claim;
            next["status"] = status;
            write(state, &def, next, "status");
        }
    }
}

/// Sets the volume a pending claim is bound to; returns the claim as stored.
fn bind(state: &mut State, def: &ResourceDef, mut claim: Value) -> Value {
    if claim.pointer("/spec/volumeName").is_some() {
        return claim;
    }
    let volume = format!("pvc-{}", meta::uid_of(&claim));
    claim["spec"]["volumeName"] = json!(volume);
    let annotations = meta::metadata_mut(&mut claim)
        .entry("annotations")
        .or_insert_with(|| json!({}));
    annotations["pv.kubernetes.io/bind-completed"] = json!("yes");
    annotations["pv.kubernetes.io/bound-by-controller"] = json!("yes");
    write(state, def, claim.clone(), "");
    let namespace = meta::str_at(&claim, "/metadata/namespace").to_owned();
    state
        .get(
            &keys::persistent_volume_claims(),
            &namespace,
            meta::name_of(&claim),
        )
        .map(|c| (**c).clone())
        .unwrap_or(claim)
}

/// A bound claim's status: the requested size and access modes, and whether a pod uses it.
fn claim_status(claim: &Value, used: bool) -> Value {
    let (status, reason, message) = if used {
        (
            "False",
            "PodUsingPVC",
            "A pod is currently referencing this PVC",
        )
    } else {
        (
            "True",
            "NoPodsUsingPVC",
            "No pods are currently referencing this PVC",
        )
    };
    let previous = claim
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|c| c.iter().find(|c| c["type"] == "Unused"));
    let transitioned = previous
        .filter(|c| c["status"] == status)
        .and_then(|c| c.get("lastTransitionTime").cloned())
        .unwrap_or_else(|| json!(meta::now_time()));
    json!({
        "phase": "Bound",
        "accessModes": claim.pointer("/spec/accessModes").cloned().unwrap_or_else(|| json!([])),
        "capacity": {"storage": claim.pointer("/spec/resources/requests/storage").cloned()
            .unwrap_or(Value::Null)},
        "conditions": [{
            "type": "Unused", "status": status, "reason": reason, "message": message,
            "lastProbeTime": null, "lastTransitionTime": transitioned,
        }],
    })
}

/// Removes the protection finalizer of a deleted claim no pod uses.
fn release(state: &mut State, def: &ResourceDef, mut claim: Value) {
    let finalizers = meta::finalizers(&claim);
    if !finalizers.iter().any(|f| f == PVC_PROTECTION) {
        return;
    }
    let kept: Vec<String> = finalizers
        .into_iter()
        .filter(|f| f != PVC_PROTECTION)
        .collect();
    meta::set_finalizers(&mut claim, &kept);
    write(state, def, claim, "");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claim_names_carry_template_set_and_ordinal() {
        assert_eq!(ordinal_of("data-etcd-2", "data", "etcd"), Some(2));
        assert_eq!(ordinal_of("data-etcd-02", "data", "etcd"), None);
        assert_eq!(ordinal_of("data-etcd-x", "data", "etcd"), None);
        assert_eq!(ordinal_of("data-etcd-main-0", "data", "etcd"), None);
        assert_eq!(ordinal_of("logs-etcd-0", "data", "etcd"), None);
    }

    #[test]
    fn new_claims_follow_the_template_the_selector_and_the_deletion_policy() {
        let set = json!({"metadata": {"name": "etcd", "namespace": "ns", "uid": "u1"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "etcd"}},
                "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete", "whenScaled": "Retain"}}});
        let template = json!({"metadata": {"name": "data", "labels": {"tier": "db"}},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}});
        let claim = new_claim(&set, &template, 1);
        assert_eq!(claim["metadata"]["name"], "data-etcd-1");
        assert_eq!(
            claim["metadata"]["labels"],
            json!({"app": "etcd", "tier": "db"})
        );
        assert_eq!(
            claim["metadata"]["ownerReferences"],
            json!([{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "etcd", "uid": "u1",
                    "controller": true, "blockOwnerDeletion": true}])
        );
        assert_eq!(claim["spec"], template["spec"]);
    }
}
