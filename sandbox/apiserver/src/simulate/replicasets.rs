//! The ReplicaSets of Deployments, as the deployment controller keeps them: one per pod
//! template (`<deployment>-<pod-template-hash>`), owned by the Deployment, numbered by the
//! `deployment.kubernetes.io/revision` annotation (a template that comes back takes the next
//! revision), the current one scaled to the Deployment's replicas and the others to 0.
//! `kubectl rollout history` and `rollout undo` read them.

use serde_json::{Map, Value, json};

use crate::catalog::registry::{ResourceDef, keys};
use crate::meta;
use crate::store::ops::create::create;
use crate::store::ops::options::{Target, WriteOptions};
use crate::store::ops::update::{UpdateKind, update};
use crate::store::state::State;

const REVISION: &str = "deployment.kubernetes.io/revision";
const HASH_LABEL: &str = "pod-template-hash";

fn options() -> WriteOptions {
    WriteOptions {
        manager: "kube-controller-manager".into(),
        ..WriteOptions::default()
    }
}

fn revision_of(object: &Value) -> i64 {
    object
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(REVISION))
        .and_then(Value::as_str)
        .and_then(|r| r.parse().ok())
        .unwrap_or(0)
}

fn owned_by(object: &Value, uid: &str) -> bool {
    object
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .is_some_and(|refs| {
            refs.iter()
                .any(|r| r["uid"] == uid && r["controller"] == true)
        })
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
        tracing::warn!(%error, %name, "the simulator cannot write");
    }
}

/// The ReplicaSet of the Deployment's current template, as the controller creates it.
fn new_replicaset(deployment: &Value, hash: &str, revision: i64, replicas: i64) -> Value {
    let mut template = deployment
        .pointer("/spec/template")
        .cloned()
        .unwrap_or_else(|| json!({}));
    template["metadata"]["labels"][HASH_LABEL] = json!(hash);
    let mut selector = deployment
        .pointer("/spec/selector")
        .cloned()
        .unwrap_or_else(|| json!({}));
    selector["matchLabels"][HASH_LABEL] = json!(hash);
    let labels = template["metadata"]["labels"].clone();
    json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {
            "name": format!("{}-{hash}", meta::name_of(deployment)),
            "labels": labels,
            "annotations": {
                REVISION: revision.to_string(),
                "deployment.kubernetes.io/desired-replicas": replicas.to_string(),
                "deployment.kubernetes.io/max-replicas": (replicas + (replicas + 3) / 4).to_string(),
            },
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                "name": meta::name_of(deployment), "uid": meta::uid_of(deployment),
                "controller": true, "blockOwnerDeletion": true}],
        },
        "spec": {"replicas": replicas, "selector": selector, "template": template},
    })
}

fn replicaset_status(replicaset: &Value, replicas: i64) -> Value {
    let generation = replicaset
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let mut status = Map::new();
    status.insert("replicas".into(), json!(replicas));
    if replicas > 0 {
        for field in ["fullyLabeledReplicas", "readyReplicas", "availableReplicas"] {
            status.insert(field.into(), json!(replicas));
        }
    }
    status.insert("observedGeneration".into(), json!(generation));
    Value::Object(status)
}

/// Brings the Deployment's ReplicaSets in line with its template and replicas; returns the
/// current revision.
pub fn reconcile_deployment(state: &mut State, deployment: &Value, hash: &str) -> i64 {
    let Some(def) = state.registry.find_key(&keys::replicasets()) else {
        return 0;
    };
    let namespace = meta::str_at(deployment, "/metadata/namespace").to_owned();
    let uid = meta::uid_of(deployment).to_owned();
    let replicas = deployment
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let name = format!("{}-{hash}", meta::name_of(deployment));
    let owned: Vec<Value> = state
        .list(&keys::replicasets(), Some(&namespace))
        .filter(|rs| owned_by(rs, &uid))
        .map(|rs| (**rs).clone())
        .collect();
    let newest = owned.iter().map(revision_of).max().unwrap_or(0);
    let current = owned.iter().find(|rs| meta::name_of(rs) == name).cloned();
    let revision = match current {
        None => {
            let replicaset = new_replicaset(deployment, hash, newest + 1, replicas);
            if let Err(error) = create(state, &def, &namespace, replicaset, &options()) {
                tracing::warn!(%error, %name, "the simulator cannot create a ReplicaSet");
            }
            newest + 1
        }
        Some(mut replicaset) => {
            let mut revision = revision_of(&replicaset);
            let changed_scale = replicaset.pointer("/spec/replicas") != Some(&json!(replicas));
            if revision < newest {
                revision = newest + 1;
            }
            if changed_scale || revision != revision_of(&replicaset) {
                replicaset["spec"]["replicas"] = json!(replicas);
                replicaset["metadata"]["annotations"][REVISION] = json!(revision.to_string());
                write(state, &def, replicaset, "");
            }
            revision
        }
    };
    for old in owned.iter().filter(|rs| meta::name_of(rs) != name) {
        if old.pointer("/spec/replicas") != Some(&json!(0)) {
            let mut scaled = old.clone();
            scaled["spec"]["replicas"] = json!(0);
            write(state, &def, scaled, "");
        }
    }
    // Status follows the scale of each.
    let names: Vec<String> = state
        .list(&keys::replicasets(), Some(&namespace))
        .filter(|rs| owned_by(rs, &uid))
        .map(|rs| meta::name_of(rs).to_owned())
        .collect();
    for rs_name in names {
        let Some(rs) = state
            .get(&keys::replicasets(), &namespace, &rs_name)
            .map(|rs| (**rs).clone())
        else {
            continue;
        };
        let scale = rs
            .pointer("/spec/replicas")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let status = replicaset_status(&rs, scale);
        if rs.get("status") != Some(&status) {
            let mut next = rs;
            next["status"] = status;
            write(state, &def, next, "status");
        }
    }
    revision
}

/// Sets the Deployment's revision annotation; the controller writes it with the status.
pub fn set_revision(deployment: &mut Value, revision: i64) {
    let annotations = meta::metadata_mut(deployment)
        .entry("annotations")
        .or_insert_with(|| json!({}));
    annotations[REVISION] = json!(revision.to_string());
}
