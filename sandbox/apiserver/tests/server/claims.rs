//! PersistentVolumeClaims of StatefulSets in the sandbox: created from `volumeClaimTemplates`,
//! bound, kept or deleted per `persistentVolumeClaimRetentionPolicy` across scaling and
//! deletion, held by `kubernetes.io/pvc-protection` while a pod uses them, and listed by
//! `kubectl get pvc`. `tests/claims_real.rs` holds the same sequence to the real
//! controller-manager.

use crate::common;

use std::time::Duration;

use ferroplane_testkit::{TestCluster, eventually};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

fn statefulset(name: &str, when_deleted: &str, when_scaled: &str) -> StatefulSet {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {
            "replicas": 3, "serviceName": name,
            "selector": {"matchLabels": {"app": name}},
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": when_deleted, "whenScaled": when_scaled},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "etcd", "image": "etcd",
                    "volumeMounts": [{"name": "data", "mountPath": "/var/lib/etcd"}]}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "data", "labels": {"tier": "db"}},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}],
        }
    }))
    .expect("a valid StatefulSet")
}

/// The names of the bound claims and of the claims still present, sorted.
async fn claims(api: &Api<PersistentVolumeClaim>) -> (Vec<String>, Vec<String>) {
    let list = api.list(&ListParams::default()).await.expect("listed");
    let mut bound = Vec::new();
    let mut all = Vec::new();
    for claim in list {
        let name = claim.metadata.name.clone().unwrap_or_default();
        if claim.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Bound") {
            bound.push(name.clone());
        }
        all.push(name);
    }
    bound.sort();
    all.sort();
    (bound, all)
}

async fn wait_for_claims(api: &Api<PersistentVolumeClaim>, what: &str, wanted: &[&str]) {
    let wanted: Vec<String> = wanted.iter().map(|s| (*s).to_owned()).collect();
    eventually(what)
        .within(Duration::from_secs(10))
        .every(Duration::from_millis(20))
        .until_async(|| {
            let api = api.clone();
            let wanted = wanted.clone();
            async move {
                let (bound, all) = claims(&api).await;
                if bound == wanted && all == wanted {
                    Ok(())
                } else {
                    Err((bound, all))
                }
            }
        })
        .await;
}

async fn scale(api: &Api<StatefulSet>, name: &str, replicas: i32) {
    api.patch(
        name,
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": replicas}})),
    )
    .await
    .expect("scaled");
}

#[tokio::test]
async fn retained_claims_outlive_scale_down_and_deletion_and_come_back_on_scale_up() {
    let harness: TestCluster = common::start().await;
    let sets: Api<StatefulSet> = Api::namespaced(harness.client(), "default");
    let pvcs: Api<PersistentVolumeClaim> = Api::namespaced(harness.client(), "default");
    sets.create(
        &PostParams::default(),
        &statefulset("etcd", "Retain", "Retain"),
    )
    .await
    .expect("created");
    let three = ["data-etcd-0", "data-etcd-1", "data-etcd-2"];
    wait_for_claims(&pvcs, "three bound claims", &three).await;
    let first = pvcs.get("data-etcd-2").await.expect("a claim");
    assert_eq!(
        first.metadata.labels.as_ref().map(|l| l.len()),
        Some(2),
        "the template's labels and the selector's: {:?}",
        first.metadata.labels
    );
    assert!(
        first.metadata.owner_references.is_none(),
        "Retain: no owner"
    );
    assert_eq!(
        first.metadata.finalizers,
        Some(vec!["kubernetes.io/pvc-protection".to_owned()])
    );
    let status = first.status.expect("a status");
    assert_eq!(
        status.capacity.and_then(|c| c.get("storage").cloned()),
        Some(k8s_openapi::apimachinery::pkg::api::resource::Quantity(
            "1Gi".into()
        ))
    );

    scale(&sets, "etcd", 1).await;
    // The scale-down left them; the scale-up reuses the same claims (same uid).
    let unused = |claim: &PersistentVolumeClaim| {
        claim
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .and_then(|c| c.iter().find(|c| c.type_ == "Unused"))
            .map(|c| c.status.clone())
    };
    eventually("data-etcd-2 to be unused")
        .within(Duration::from_secs(10))
        .every(Duration::from_millis(20))
        .until_async(|| {
            let pvcs = pvcs.clone();
            async move {
                let claim = pvcs.get("data-etcd-2").await.expect("kept");
                (unused(&claim).as_deref() == Some("True")).then_some(())
            }
        })
        .await;
    scale(&sets, "etcd", 3).await;
    wait_for_claims(&pvcs, "the same three claims", &three).await;
    assert_eq!(
        pvcs.get("data-etcd-2").await.expect("kept").metadata.uid,
        first.metadata.uid
    );

    let table = harness.kubectl().ok(&["get", "pvc"]).await;
    let header: Vec<&str> = table
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        [
            "NAME",
            "STATUS",
            "VOLUME",
            "CAPACITY",
            "ACCESS",
            "MODES",
            "STORAGECLASS",
            "VOLUMEATTRIBUTESCLASS",
            "AGE"
        ]
    );
    assert_eq!(
        table.lines().filter(|l| l.contains(" Bound ")).count(),
        3,
        "{table}"
    );

    sets.delete("etcd", &DeleteParams::default())
        .await
        .expect("deleted");
    eventually("the set to go")
        .within(Duration::from_secs(10))
        .until_async(|| {
            let sets = sets.clone();
            async move { sets.get_opt("etcd").await.expect("readable").is_none() }
        })
        .await;
    wait_for_claims(&pvcs, "the claims to stay", &three).await;
    harness.shutdown().await;
}

#[tokio::test]
async fn deleted_claims_go_with_the_ordinals_and_the_set() {
    let harness: TestCluster = common::start().await;
    let sets: Api<StatefulSet> = Api::namespaced(harness.client(), "default");
    let pvcs: Api<PersistentVolumeClaim> = Api::namespaced(harness.client(), "default");
    sets.create(
        &PostParams::default(),
        &statefulset("db", "Delete", "Delete"),
    )
    .await
    .expect("created");
    wait_for_claims(
        &pvcs,
        "three claims",
        &["data-db-0", "data-db-1", "data-db-2"],
    )
    .await;
    let claim = pvcs.get("data-db-0").await.expect("a claim");
    let owner: Value =
        serde_json::to_value(&claim.metadata.owner_references).expect("serializable");
    assert_eq!(owner[0]["kind"], "StatefulSet");
    assert_eq!(owner[0]["controller"], true);
    assert_eq!(owner[0]["blockOwnerDeletion"], true);

    scale(&sets, "db", 1).await;
    wait_for_claims(
        &pvcs,
        "the claims of removed ordinals to go",
        &["data-db-0"],
    )
    .await;
    scale(&sets, "db", 2).await;
    wait_for_claims(&pvcs, "a new claim", &["data-db-0", "data-db-1"]).await;

    // A claim a pod uses is only marked for deletion.
    let deleted = pvcs
        .delete("data-db-0", &DeleteParams::default())
        .await
        .expect("deleted")
        .left()
        .expect("still there, terminating");
    assert!(deleted.metadata.deletion_timestamp.is_some());

    sets.delete("db", &DeleteParams::default())
        .await
        .expect("deleted");
    wait_for_claims(&pvcs, "every claim to go with the set", &[]).await;
    harness.shutdown().await;
}

#[tokio::test]
async fn a_claim_needs_access_modes_and_a_size() {
    let harness: TestCluster = common::start().await;
    let pvcs: Api<PersistentVolumeClaim> = Api::namespaced(harness.client(), "default");
    let claim: PersistentVolumeClaim =
        serde_json::from_value(json!({"metadata": {"name": "bad"}, "spec": {}})).expect("valid");
    let error = pvcs
        .create(&PostParams::default(), &claim)
        .await
        .expect_err("refused");
    let kube::Error::Api(status) = error else {
        panic!("an API error: {error:?}");
    };
    assert_eq!(status.code, 422);
    assert_eq!(
        status.message,
        "PersistentVolumeClaim \"bad\" is invalid: [spec.accessModes: Required value: at least 1 \
         access mode is required, spec.resources[storage]: Required value]"
    );
    harness.shutdown().await;
}

/// The pod of `name`: (uid, node, phase, the claim its `data` volume names); `None` while absent.
async fn pod_of(api: &Api<Pod>, name: &str) -> Option<(String, String, String, String)> {
    let pod = api.get_opt(name).await.expect("readable")?;
    let spec = pod.spec.unwrap_or_default();
    let claim = spec
        .volumes
        .unwrap_or_default()
        .into_iter()
        .find(|v| v.name == "data")
        .and_then(|v| v.persistent_volume_claim)
        .map(|c| c.claim_name)
        .unwrap_or_default();
    Some((
        pod.metadata.uid.unwrap_or_default(),
        spec.node_name.unwrap_or_default(),
        pod.status.and_then(|s| s.phase).unwrap_or_default(),
        claim,
    ))
}

/// A StatefulSet's pods are stored, placed and running on their claims. A claim deleted under
/// its running pod stays (pvc-protection counts the scheduled pod) and the pod keeps running;
/// once the pod is deleted too, the claim goes and the set makes both again: a new claim, a new
/// pod on it. As `claims_real.rs`'s real controller-manager does.
#[tokio::test]
async fn a_claim_deleted_under_its_pod_goes_with_the_pod_and_both_come_back() {
    let harness: TestCluster = common::start().await;
    let sets: Api<StatefulSet> = Api::namespaced(harness.client(), "default");
    let pvcs: Api<PersistentVolumeClaim> = Api::namespaced(harness.client(), "default");
    let pods: Api<Pod> = Api::namespaced(harness.client(), "default");
    sets.create(
        &PostParams::default(),
        &statefulset("kv", "Retain", "Retain"),
    )
    .await
    .expect("created");
    let three = ["data-kv-0", "data-kv-1", "data-kv-2"];
    wait_for_claims(&pvcs, "three bound claims", &three).await;
    let placed = eventually("kv-1 placed and running on data-kv-1")
        .within(Duration::from_secs(10))
        .every(Duration::from_millis(20))
        .until_async(|| {
            let pods = pods.clone();
            async move {
                match pod_of(&pods, "kv-1").await {
                    Some(p) if p.1 == "sandbox-node" && p.2 == "Running" && p.3 == "data-kv-1" => {
                        Ok(p)
                    }
                    other => Err(other),
                }
            }
        })
        .await;
    let old_claim = pvcs.get("data-kv-1").await.expect("a claim").metadata.uid;

    pvcs.delete("data-kv-1", &DeleteParams::default())
        .await
        .expect("deleted");
    let held = pvcs.get("data-kv-1").await.expect("held by its pod");
    assert!(held.metadata.deletion_timestamp.is_some());
    assert_eq!(held.metadata.uid, old_claim);
    assert_eq!(
        pod_of(&pods, "kv-1").await,
        Some(placed.clone()),
        "still running"
    );

    pods.delete("kv-1", &DeleteParams::default())
        .await
        .expect("deleted");
    let back = eventually("a new kv-1 on a new data-kv-1")
        .within(Duration::from_secs(10))
        .every(Duration::from_millis(20))
        .until_async(|| {
            let (pods, pvcs) = (pods.clone(), pvcs.clone());
            let old_pod = placed.0.clone();
            let old_claim = old_claim.clone();
            async move {
                let claim = pvcs.get_opt("data-kv-1").await.expect("readable");
                let claim_uid = claim.as_ref().and_then(|c| c.metadata.uid.clone());
                let live = claim.is_some_and(|c| c.metadata.deletion_timestamp.is_none());
                match pod_of(&pods, "kv-1").await {
                    Some(p)
                        if p.0 != old_pod && p.2 == "Running" && live && claim_uid != old_claim =>
                    {
                        Ok(p)
                    }
                    other => Err((other, claim_uid)),
                }
            }
        })
        .await;
    assert_eq!(back.3, "data-kv-1");
    harness.shutdown().await;
}
