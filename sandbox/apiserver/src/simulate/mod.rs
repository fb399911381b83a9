//! The workload simulator: nothing runs, so after each change of a Deployment or StatefulSet it
//! writes the status the controllers would write once every pod is ready. Deployments have no
//! pods; a StatefulSet's pods are stored (`statefulset_pods`: made once their claims allow,
//! placed and running at once), and its status counts them.
//! HorizontalPodAutoscalers keep their target's replicas within their range (`autoscalers`, as
//! the HPA controller does without a metrics API), and a stand-in ingress controller gives
//! every Ingress an address (`ingresses`).
//!
//! Deployments get `Available` and `Progressing` conditions as kube-controller-manager sets
//! them; StatefulSets get revisions but no conditions, as on a real cluster, and their
//! PersistentVolumeClaims (`claims`): created, bound, kept or deleted per retention policy;
//! Deployments their ReplicaSets (`replicasets`), one per template revision; every namespace
//! its `default` ServiceAccount (`service_accounts`).

mod autoscalers;
mod claims;
mod ingresses;
mod replicasets;
mod service_accounts;
mod statefulset_pods;

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;

use crate::app::App;
use crate::catalog::registry::{StoreKey, keys};
use crate::meta;
use crate::store::ops::options::{Target, WriteOptions};
use crate::store::ops::update::{UpdateKind, update};
use crate::store::state::{ChangeKind, ObjectKey};

type Pending = Arc<Mutex<HashSet<(StoreKey, ObjectKey)>>>;

/// Runs until shutdown.
pub async fn run(app: Arc<App>) {
    let mut changes = app.store.lock().subscribe();
    let mut shutdown = app.shutdown.clone();
    let pending: Pending = Arc::default();
    schedule_all(&app, &pending);
    loop {
        tokio::select! {
            _ = shutdown.changed() => return,
            received = changes.recv() => match received {
                Ok(change) => {
                    let name = meta::name_of(&change.object).to_owned();
                    let live = change.kind != ChangeKind::Deleted;
                    if (is_workload(&change.key) || is_routed(&change.key)) && live {
                        schedule(&app, &pending, change.key.clone(), (change.namespace.clone(), name));
                    }
                    // An autoscaler syncs when it or a workload of its namespace changes.
                    if is_workload(&change.key) || change.key == keys::horizontal_pod_autoscalers() {
                        schedule_autoscalers(&app, &pending, &change.namespace);
                    }
                    if uses_claims(&change.key) {
                        schedule_claims(&app, &pending, &change.namespace);
                    }
                    // A pod gone or a claim gone may let a StatefulSet make a pod again.
                    if change.key == keys::pods() || change.key == keys::persistent_volume_claims() {
                        schedule_statefulsets(&app, &pending, &change.namespace);
                    }
                    let new_namespace =
                        change.key == keys::namespaces() && change.kind != ChangeKind::Deleted;
                    if new_namespace || change.key == keys::service_accounts() {
                        schedule_accounts(&app, &pending, &account_namespace(&change));
                    }
                }
                Err(RecvError::Lagged(_)) => schedule_all(&app, &pending),
                Err(RecvError::Closed) => return,
            },
        }
    }
}

fn is_workload(key: &StoreKey) -> bool {
    *key == keys::deployments() || *key == keys::statefulsets()
}

/// Ingresses, which the stand-in ingress controller gives an address.
fn is_routed(key: &StoreKey) -> bool {
    *key == keys::ingresses()
}

/// The autoscalers of a namespace.
fn schedule_autoscalers(app: &Arc<App>, pending: &Pending, namespace: &str) {
    let names: Vec<ObjectKey> = app
        .store
        .lock()
        .keys_of(&keys::horizontal_pod_autoscalers())
        .into_iter()
        .filter(|(ns, _)| ns == namespace)
        .collect();
    for ok in names {
        schedule(app, pending, keys::horizontal_pod_autoscalers(), ok);
    }
}

/// The StatefulSets of a namespace.
fn schedule_statefulsets(app: &Arc<App>, pending: &Pending, namespace: &str) {
    let names: Vec<ObjectKey> = app
        .store
        .lock()
        .keys_of(&keys::statefulsets())
        .into_iter()
        .filter(|(ns, _)| ns == namespace)
        .collect();
    for ok in names {
        schedule(app, pending, keys::statefulsets(), ok);
    }
}

/// Changes of these may bind, release or change the use of claims in their namespace.
fn uses_claims(key: &StoreKey) -> bool {
    *key == keys::statefulsets() || *key == keys::persistent_volume_claims() || *key == keys::pods()
}

/// The namespace whose default ServiceAccount a change concerns.
fn account_namespace(change: &crate::store::state::Change) -> String {
    if change.key == keys::namespaces() {
        meta::name_of(&change.object).to_owned()
    } else {
        change.namespace.clone()
    }
}

/// A namespace's default ServiceAccount, reconciled under the namespace's key.
fn schedule_accounts(app: &Arc<App>, pending: &Pending, namespace: &str) {
    schedule(
        app,
        pending,
        keys::namespaces(),
        (String::new(), namespace.to_owned()),
    );
}

/// The claims of a namespace, reconciled as one entry (an empty name).
fn schedule_claims(app: &Arc<App>, pending: &Pending, namespace: &str) {
    schedule(
        app,
        pending,
        keys::persistent_volume_claims(),
        (namespace.to_owned(), String::new()),
    );
}

fn schedule_all(app: &Arc<App>, pending: &Pending) {
    let objects: Vec<(StoreKey, ObjectKey)> = {
        let state = app.store.lock();
        [
            keys::deployments(),
            keys::statefulsets(),
            keys::ingresses(),
            keys::horizontal_pod_autoscalers(),
        ]
        .into_iter()
        .flat_map(|key| {
            state
                .keys_of(&key)
                .into_iter()
                .map(move |ok| (key.clone(), ok))
        })
        .collect()
    };
    let namespaces: Vec<String> = {
        let state = app.store.lock();
        let mut namespaces: Vec<String> = state
            .keys_of(&keys::persistent_volume_claims())
            .into_iter()
            .map(|(namespace, _)| namespace)
            .collect();
        namespaces.dedup();
        namespaces
    };
    for (key, ok) in objects {
        schedule(app, pending, key, ok);
    }
    for namespace in namespaces {
        schedule_claims(app, pending, &namespace);
    }
    let all_namespaces: Vec<String> = app
        .store
        .lock()
        .keys_of(&keys::namespaces())
        .into_iter()
        .map(|(_, name)| name)
        .collect();
    for namespace in all_namespaces {
        schedule_accounts(app, pending, &namespace);
    }
}

fn schedule(app: &Arc<App>, pending: &Pending, key: StoreKey, ok: ObjectKey) {
    let entry = (key, ok);
    if !pending
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .insert(entry.clone())
    {
        return;
    }
    let app = app.clone();
    let pending = pending.clone();
    // Rollouts take `workload_delay`; the serviceaccount controller answers at once, as a
    // real one does within milliseconds.
    let delay = if entry.0 == keys::namespaces() {
        std::time::Duration::ZERO
    } else {
        app.config.workload_delay
    };
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&entry);
        reconcile(&app, &entry.0, &entry.1);
    });
}

fn reconcile(app: &App, key: &StoreKey, ok: &ObjectKey) {
    let mut state = app.store.lock();
    if *key == keys::persistent_volume_claims() {
        claims::reconcile_namespace(&mut state, &ok.0, app.config.provision_claims);
        return;
    }
    if *key == keys::namespaces() {
        service_accounts::ensure_default(&mut state, &ok.1);
        return;
    }
    if *key == keys::ingresses() {
        ingresses::reconcile(&mut state, &ok.0, &ok.1);
        return;
    }
    if *key == keys::horizontal_pod_autoscalers() {
        autoscalers::reconcile(&mut state, &ok.0, &ok.1);
        return;
    }
    let Some(object) = state.get(key, &ok.0, &ok.1).cloned() else {
        return;
    };
    let Some(def) = state.registry.find_key(key) else {
        return;
    };
    let mut next = (*object).clone();
    if *key == keys::deployments() {
        let revision =
            replicasets::reconcile_deployment(&mut state, &object, &template_hash(&object));
        replicasets::set_revision(&mut next, revision);
        next["status"] = deployment_status(&object);
    } else {
        claims::reconcile_statefulset(&mut state, &object);
        let running = statefulset_pods::reconcile(&mut state, &object, claims::ordinals(&object));
        next["status"] = statefulset_status(&object, running);
    }
    if next == *object {
        return;
    }
    let options = WriteOptions {
        manager: "kube-controller-manager".into(),
        ..WriteOptions::default()
    };
    let target = Target {
        def: &def,
        namespace: &ok.0,
        name: &ok.1,
        subresource: "status",
    };
    if let Err(error) = update(&mut state, &target, next, UpdateKind::Update, &options) {
        tracing::warn!(%error, name = %ok.1, "workload simulator could not write status");
    }
}

fn replicas(object: &Value) -> i64 {
    object
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1)
}

fn generation(object: &Value) -> i64 {
    object
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(1)
}

/// A stable, name-safe hash of the pod template, like the controllers' revision hashes.
fn template_hash(object: &Value) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut hasher = DefaultHasher::new();
    object
        .get("spec")
        .and_then(|s| s.get("template"))
        .map(Value::to_string)
        .unwrap_or_default()
        .hash(&mut hasher);
    let mut n = hasher.finish();
    (0..10)
        .map(|_| {
            let c = ALPHABET[(n % ALPHABET.len() as u64) as usize] as char;
            n /= ALPHABET.len() as u64;
            c
        })
        .collect()
}

/// Copies the timestamps of an existing condition with the same type and status, so that a
/// re-derived status is identical and not written again.
fn condition(object: &Value, kind: &str, reason: &str, message: String) -> Value {
    let existing = object
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|c| {
            c.iter()
                .find(|c| c["type"] == kind && c["status"] == "True" && c["reason"] == reason)
        });
    let now = meta::now_time();
    let updated = existing
        .and_then(|c| c.get("lastUpdateTime"))
        .cloned()
        .unwrap_or_else(|| json!(now));
    let transitioned = existing
        .and_then(|c| c.get("lastTransitionTime"))
        .cloned()
        .unwrap_or_else(|| json!(now));
    json!({
        "type": kind,
        "status": "True",
        "lastUpdateTime": updated,
        "lastTransitionTime": transitioned,
        "reason": reason,
        "message": message,
    })
}

/// Sets a count only when non-zero: the controllers' status omits zero counts.
fn set_count(status: &mut Value, field: &str, n: i64) {
    if n != 0 {
        status[field] = json!(n);
    }
}

pub fn deployment_status(object: &Value) -> Value {
    let n = replicas(object);
    let mut status = json!({"observedGeneration": generation(object)});
    for field in [
        "replicas",
        "updatedReplicas",
        "readyReplicas",
        "availableReplicas",
    ] {
        set_count(&mut status, field, n);
    }
    let replica_set = format!("{}-{}", meta::name_of(object), template_hash(object));
    status["conditions"] = json!([
        condition(
            object,
            "Available",
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.".into()
        ),
        condition(
            object,
            "Progressing",
            "NewReplicaSetAvailable",
            format!("ReplicaSet \"{replica_set}\" has successfully progressed.")
        ),
    ]);
    status
}

/// The status of a set with `running` pods running.
pub fn statefulset_status(object: &Value, running: i64) -> Value {
    let revision = format!("{}-{}", meta::name_of(object), template_hash(object));
    let mut status = json!({
        "observedGeneration": generation(object),
        "replicas": running,
        "currentRevision": revision,
        "updateRevision": revision,
        "collisionCount": 0,
    });
    for field in [
        "readyReplicas",
        "currentReplicas",
        "updatedReplicas",
        "availableReplicas",
    ] {
        set_count(&mut status, field, running);
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deployment_status_is_stable_once_written() {
        let mut deployment = json!({"metadata": {"name": "web", "generation": 3}, "spec": {"replicas": 2, "template": {"spec": {}}}});
        let status = deployment_status(&deployment);
        assert_eq!(status["readyReplicas"], 2);
        assert_eq!(status["observedGeneration"], 3);
        assert_eq!(status["conditions"][0]["type"], "Available");
        deployment["status"] = status.clone();
        assert_eq!(deployment_status(&deployment), status);
    }

    #[test]
    fn zero_replicas_omit_counts() {
        let sts = json!({"metadata": {"name": "db", "generation": 1}, "spec": {"replicas": 0}});
        let status = statefulset_status(&sts, 0);
        assert!(status.get("readyReplicas").is_none());
        assert_eq!(status["replicas"], 0);
    }
}
