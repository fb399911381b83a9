//! The sandbox's PersistentVolumeClaims held to the real StatefulSet controller's: the same
//! StatefulSets (retention Delete/Delete and Retain/Retain) created, scaled down and deleted on
//! both servers, and the claims compared at each step — names, labels, owner references,
//! finalizers, access modes, volume mode and phase. The real control plane has no provisioner:
//! static PersistentVolumes back its claims (their names and sizes differ by nature and are not
//! compared). Starts the real control plane of `ferroplane-testenv`.

mod common;

use std::time::Duration;

use ferroplane_testenv::{ControlPlane, Options};
use ferroplane_testkit::eventually;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

fn statefulset(name: &str, policy: &str) -> StatefulSet {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {
            "replicas": 3, "serviceName": name,
            "selector": {"matchLabels": {"app": name}},
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": policy, "whenScaled": policy},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "etcd",
                    "volumeMounts": [{"name": "data", "mountPath": "/var/lib/etcd"}]}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "data", "labels": {"tier": "db"}},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}],
        }
    }))
    .expect("a valid StatefulSet")
}

/// What is compared of each claim of `set`: everything but the volume, sizes, uids and times.
async fn claims_of(client: &kube::Client, set: &str) -> Vec<Value> {
    let api: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), "default");
    let mut out: Vec<Value> = api
        .list(&ListParams::default().labels(&format!("app={set}")))
        .await
        .expect("listed")
        .into_iter()
        .map(|claim| {
            let owners: Vec<Value> = claim
                .metadata
                .owner_references
                .unwrap_or_default()
                .into_iter()
                .map(|o| json!([o.kind, o.name, o.controller, o.block_owner_deletion]))
                .collect();
            let status = claim.status.unwrap_or_default();
            json!({
                "name": claim.metadata.name,
                "labels": claim.metadata.labels,
                "owners": owners,
                "finalizers": claim.metadata.finalizers,
                "terminating": claim.metadata.deletion_timestamp.is_some(),
                "spec": {"accessModes": claim.spec.as_ref().and_then(|s| s.access_modes.clone()),
                         "volumeMode": claim.spec.as_ref().and_then(|s| s.volume_mode.clone())},
                "phase": status.phase,
                "accessModes": status.access_modes,
            })
        })
        .collect();
    out.sort_by_key(|c| c["name"].to_string());
    out
}

/// Waits until the claims of `set` on `client` number `count`, all Bound, none terminating, and
/// each owned by the StatefulSet alone when `owned` (retention `Delete` while the set exists)
/// or by nothing: the controllers set and drop those references after the claims are Bound, so
/// a count alone could compare one server's claims before that step with the other's after it.
async fn settled(client: &kube::Client, set: &str, count: usize, owned: bool) -> Vec<Value> {
    eventually(format!("{count} bound claims of {set}"))
        .within(Duration::from_secs(60))
        .every(Duration::from_millis(100))
        .until_async(|| async move {
            let claims = claims_of(client, set).await;
            let bound = claims.iter().all(|c| {
                let owners = c["owners"].as_array().map_or(0, Vec::len);
                let owners_settled = if owned {
                    owners == 1 && c["owners"][0][0] == "StatefulSet"
                } else {
                    owners == 0
                };
                c["phase"] == "Bound" && c["terminating"] == false && owners_settled
            });
            if claims.len() == count && bound {
                Ok(claims)
            } else {
                Err(claims)
            }
        })
        .await
}

async fn scale(client: &kube::Client, set: &str, replicas: i32) {
    Api::<StatefulSet>::namespaced(client.clone(), "default")
        .patch(
            set,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": replicas}})),
        )
        .await
        .expect("scaled");
}

async fn delete(client: &kube::Client, set: &str) {
    Api::<StatefulSet>::namespaced(client.clone(), "default")
        .delete(set, &DeleteParams::default())
        .await
        .expect("deleted");
}

async fn create(client: &kube::Client, set: &str, policy: &str) {
    Api::<StatefulSet>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &statefulset(set, policy))
        .await
        .expect("created");
}

/// Static volumes for the real cluster's claims.
async fn volumes(client: &kube::Client, count: usize) {
    let api: Api<PersistentVolume> = Api::all(client.clone());
    for i in 0..count {
        let volume: PersistentVolume = serde_json::from_value(json!({
            "metadata": {"name": format!("static-{i}")},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                     "hostPath": {"path": format!("/tmp/static-{i}")}},
        }))
        .expect("a valid volume");
        api.create(&PostParams::default(), &volume)
            .await
            .expect("a volume");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_follow_the_retention_policy_as_the_real_controller_does() {
    let real_plane = ControlPlane::start(Options::default())
        .await
        .expect("the control plane starts");
    let sandbox = common::start().await;
    let real = real_plane.client();
    volumes(&real, 6).await;
    let mut differences = Vec::new();
    let mut compare = |step: &str, want: Vec<Value>, got: Vec<Value>| {
        if want != got {
            differences.push(format!(
                "{step}\n  real:    {}\n  sandbox: {}",
                Value::Array(want),
                Value::Array(got)
            ));
        }
    };
    for (set, policy) in [("gone", "Delete"), ("kept", "Retain")] {
        for client in [&real, &sandbox.client()] {
            create(client, set, policy).await;
        }
        let owned = policy == "Delete";
        compare(
            &format!("{set}: created"),
            settled(&real, set, 3, owned).await,
            settled(&sandbox.client(), set, 3, owned).await,
        );
        for client in [&real, &sandbox.client()] {
            scale(client, set, 1).await;
        }
        let left = if policy == "Delete" { 1 } else { 3 };
        compare(
            &format!("{set}: scaled to 1"),
            settled(&real, set, left, owned).await,
            settled(&sandbox.client(), set, left, owned).await,
        );
        for client in [&real, &sandbox.client()] {
            delete(client, set).await;
        }
        let left = if policy == "Delete" { 0 } else { 3 };
        compare(
            &format!("{set}: deleted"),
            settled(&real, set, left, false).await,
            settled(&sandbox.client(), set, left, false).await,
        );
    }
    real_plane.stop();
    sandbox.shutdown().await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}
