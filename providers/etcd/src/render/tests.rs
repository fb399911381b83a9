//! Rendering tests: fixtures, then what each child must look like.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, Probe};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::*;
use crate::version;
use ferroplane_runtime::UID_TAG;

fn cluster(spec: serde_json::Value) -> EtcdCluster {
    let mut c: EtcdCluster = serde_json::from_value(serde_json::json!({
        "apiVersion": "etcd.ferroplane.io/v1alpha1",
        "kind": "EtcdCluster",
        "metadata": {"name": "etcd", "namespace": "db", "uid": "0123456789abcdef"},
        "spec": spec,
    }))
    .expect("valid EtcdCluster");
    c.metadata.generation = Some(1);
    c
}

fn input(c: &EtcdCluster, replicas: u32) -> RenderInput {
    RenderInput {
        release: version::resolve(&c.spec).expect("resolves"),
        replicas,
        bootstrap: BootstrapFiles::Render(Bootstrap::New { size: replicas }),
        owned: true,
    }
}

#[test]
fn every_child_is_owned_and_labelled() {
    let c = cluster(serde_json::json!({"size": 3}));
    let children = render(&c, &input(&c, 3))
        .expect("renders")
        .into_children()
        .expect("serializes");
    let kinds: Vec<&str> = children.iter().map(|c| c.kind()).collect();
    assert_eq!(
        kinds,
        [
            "ConfigMap",
            "Service",
            "Service",
            "StatefulSet",
            "PodDisruptionBudget"
        ]
    );
    for child in &children {
        let meta = &child.object["metadata"];
        assert_eq!(meta["namespace"], "db");
        assert_eq!(
            meta["ownerReferences"][0]["uid"],
            "0123456789abcdef",
            "{}",
            child.key()
        );
        assert_eq!(meta["ownerReferences"][0]["controller"], true);
        assert_eq!(meta["ownerReferences"][0]["kind"], "EtcdCluster");
        assert_eq!(meta["labels"]["app.kubernetes.io/name"], "etcd");
        assert_eq!(meta["labels"]["app.kubernetes.io/instance"], "etcd");
        assert_eq!(meta["labels"]["app.kubernetes.io/managed-by"], "ferroplane");
        assert_eq!(meta["labels"][UID_TAG], "0123456789abcdef");
    }
}

#[test]
fn orphaned_children_have_no_owner_reference() {
    let c = cluster(serde_json::json!({"size": 1, "deletionPolicy": "Orphan"}));
    let mut i = input(&c, 1);
    i.owned = false;
    let children = render(&c, &i)
        .expect("renders")
        .into_children()
        .expect("serializes");
    for child in &children {
        assert!(
            child.object["metadata"].get("ownerReferences").is_none(),
            "{}",
            child.key()
        );
        assert_eq!(
            child.object["metadata"]["labels"][UID_TAG],
            "0123456789abcdef"
        );
    }
}

#[test]
fn config_files_cover_every_pod_and_member() {
    let b = Bootstrap::Existing {
        members: [0, 1, 4].into(),
    };
    assert_eq!(bootstrap_ordinals(&b, 3), [0, 1, 2, 4]);
    assert_eq!(
        bootstrap_ordinals(&Bootstrap::New { size: 3 }, 0),
        [0, 1, 2]
    );
}

#[test]
fn token_depends_on_the_uid() {
    let c = cluster(serde_json::json!({"size": 1}));
    let rendered = render(&c, &input(&c, 1)).expect("renders");
    let data = rendered.bootstrap_config.data.expect("data");
    assert!(data["etcd-0.json"].contains("\"initial-cluster-token\": \"etcd-01234567\""));
}

// pdb

#[test]
fn max_unavailable_keeps_quorum() {
    for (members, expected) in [(1, 0), (2, 0), (3, 1), (4, 1), (5, 2), (7, 3), (9, 4)] {
        let c = cluster(serde_json::json!({"size": members}));
        let pdb = render(&c, &input(&c, members)).expect("renders").pdb;
        assert_eq!(
            pdb.spec.expect("spec").max_unavailable,
            Some(IntOrString::Int(expected)),
            "{members} members"
        );
    }
}

#[test]
fn the_pdb_follows_the_spec_not_more_pods() {
    let c = cluster(serde_json::json!({"size": 3}));
    for (replicas, expected) in [(5, 1), (3, 1), (1, 0)] {
        let pdb = render(&c, &input(&c, replicas)).expect("renders").pdb;
        assert_eq!(
            pdb.spec.expect("spec").max_unavailable,
            Some(IntOrString::Int(expected)),
            "size 3 with {replicas} pods"
        );
    }
}

#[test]
fn kept_bootstrap_files_are_applied_unchanged_with_the_policy_s_owner() {
    let c = cluster(serde_json::json!({"size": 3, "deletionPolicy": "Orphan"}));
    let files = BTreeMap::from([("etcd-0.json".to_owned(), "{}".to_owned())]);
    let rendered = render(
        &c,
        &RenderInput {
            bootstrap: BootstrapFiles::Keep(files.clone()),
            owned: false,
            ..input(&c, 3)
        },
    )
    .expect("renders");
    assert_eq!(rendered.bootstrap_config.data, Some(files));
    assert!(
        rendered
            .bootstrap_config
            .metadata
            .owner_references
            .is_none()
    );
}

// services
#[test]
fn peer_service_is_headless_and_publishes_not_ready_addresses() {
    let c = cluster(serde_json::json!({"size": 3}));
    let r = render(&c, &input(&c, 3)).expect("renders");
    let spec = r.peer_service.spec.expect("spec");
    assert_eq!(r.peer_service.metadata.name.as_deref(), Some("etcd"));
    assert_eq!(spec.cluster_ip.as_deref(), Some("None"));
    assert_eq!(spec.publish_not_ready_addresses, Some(true));
    let ports: Vec<i32> = spec.ports.expect("ports").iter().map(|p| p.port).collect();
    assert_eq!(ports, [2380, 2379]);
}

#[test]
fn client_service_exposes_2379() {
    let c = cluster(serde_json::json!({"size": 3}));
    let r = render(&c, &input(&c, 3)).expect("renders");
    assert_eq!(
        r.client_service.metadata.name.as_deref(),
        Some("etcd-client")
    );
    let spec = r.client_service.spec.expect("spec");
    assert_eq!(spec.ports.expect("ports")[0].port, 2379);
    assert_eq!(
        spec.selector.expect("selector")["app.kubernetes.io/instance"],
        "etcd"
    );
}

// statefulset
fn container_of(sts: &StatefulSet) -> &Container {
    &sts.spec
        .as_ref()
        .expect("spec")
        .template
        .spec
        .as_ref()
        .expect("pod spec")
        .containers[0]
}

#[test]
fn parallel_pods_with_the_requested_image_and_replicas() {
    let c = cluster(serde_json::json!({"size": 3, "version": "3.5.17"}));
    let sts = render(&c, &input(&c, 2)).expect("renders").statefulset;
    let spec = sts.spec.as_ref().expect("spec");
    assert_eq!(spec.replicas, Some(2));
    assert_eq!(spec.pod_management_policy.as_deref(), Some("Parallel"));
    assert_eq!(spec.service_name.as_deref(), Some("etcd"));
    assert_eq!(
        container_of(&sts).image.as_deref(),
        Some("gcr.io/etcd-development/etcd:v3.5.17")
    );
    assert_eq!(
        sts.metadata.annotations.as_ref().expect("annotations")["etcd.ferroplane.io/version"],
        "3.5.17"
    );
    let command = container_of(&sts).command.clone().expect("command");
    assert_eq!(command[1], "--config-file=/etc/etcd/$(POD_NAME).json");
}

#[test]
fn storage_becomes_a_claim_template_else_an_empty_dir() {
    let c = cluster(
        serde_json::json!({"size": 3, "storage": {"size": "8Gi", "storageClassName": "fast"}}),
    );
    let sts = render(&c, &input(&c, 3)).expect("renders").statefulset;
    let spec = sts.spec.expect("spec");
    let claim = &spec.volume_claim_templates.expect("claims")[0];
    let claim_spec = claim.spec.as_ref().expect("claim spec");
    assert_eq!(claim_spec.storage_class_name.as_deref(), Some("fast"));
    assert_eq!(
        claim_spec
            .resources
            .as_ref()
            .and_then(|r| r.requests.as_ref())
            .expect("requests")["storage"],
        Quantity("8Gi".into())
    );
    let retention = spec
        .persistent_volume_claim_retention_policy
        .expect("a retention policy");
    assert_eq!(
        (
            retention.when_scaled.as_deref(),
            retention.when_deleted.as_deref()
        ),
        (Some("Delete"), Some("Retain")),
        "a scaled-down member's data must not come back with its ordinal"
    );
    assert_eq!(
        sts.metadata.annotations.expect("annotations")[crate::names::REPLICAS_ANNOTATION],
        "3"
    );
    let volumes = spec.template.spec.expect("pod").volumes.expect("volumes");
    assert!(volumes.iter().all(|v| v.empty_dir.is_none()));

    let c = cluster(serde_json::json!({"size": 1}));
    let sts = render(&c, &input(&c, 1)).expect("renders").statefulset;
    let spec = sts.spec.expect("spec");
    assert!(spec.volume_claim_templates.is_none());
    let volumes = spec.template.spec.expect("pod").volumes.expect("volumes");
    assert!(
        volumes
            .iter()
            .any(|v| v.name == "data" && v.empty_dir.is_some())
    );
}

#[test]
fn probes_follow_the_version() {
    let new = cluster(serde_json::json!({"size": 1, "version": "3.5.17"}));
    let sts = render(&new, &input(&new, 1)).expect("renders").statefulset;
    let c = container_of(&sts);
    let path = |p: &Option<Probe>| {
        p.as_ref()
            .and_then(|p| p.http_get.as_ref())
            .and_then(|h| h.path.clone())
    };
    assert_eq!(path(&c.liveness_probe).as_deref(), Some("/livez"));
    assert_eq!(path(&c.readiness_probe).as_deref(), Some("/readyz"));

    let old = cluster(serde_json::json!({"size": 1, "version": "3.4.23"}));
    let sts = render(&old, &input(&old, 1)).expect("renders").statefulset;
    let c = container_of(&sts);
    assert!(
        c.liveness_probe
            .as_ref()
            .and_then(|p| p.tcp_socket.as_ref())
            .is_some()
    );
    assert_eq!(path(&c.readiness_probe).as_deref(), Some("/health"));
}

#[test]
fn resources_are_passed_through() {
    let c = cluster(serde_json::json!({"size": 1, "resources": {"requests": {"cpu": "100m"}}}));
    let sts = render(&c, &input(&c, 1)).expect("renders").statefulset;
    let resources = container_of(&sts).resources.clone().expect("resources");
    assert_eq!(
        resources.requests.expect("requests")["cpu"],
        Quantity("100m".into())
    );
}
