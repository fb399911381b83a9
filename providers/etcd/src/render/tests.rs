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
        trust_generation: 0,
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
        sealed: [0, 1].into(),
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
fn kept_bootstrap_files_are_applied_with_the_options_and_the_policy_s_owner() {
    let c = cluster(serde_json::json!({"size": 3, "deletionPolicy": "Orphan"}));
    let files = BTreeMap::from([("etcd-0.json".to_owned(), r#"{"name":"etcd-0"}"#.to_owned())]);
    let rendered = render(
        &c,
        &RenderInput {
            bootstrap: BootstrapFiles::Keep(files.clone()),
            owned: false,
            ..input(&c, 3)
        },
    )
    .expect("renders");
    let data = rendered.bootstrap_config.data.expect("data");
    assert_eq!(data.keys().collect::<Vec<_>>(), ["etcd-0.json"]);
    let file: serde_json::Value = serde_json::from_str(&data["etcd-0.json"]).expect("json");
    assert_eq!(file["name"], "etcd-0");
    assert_eq!(file["auto-compaction-mode"], "periodic");
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

// operations: options, metrics, scheduling, pod metadata

fn pod_spec_of(sts: &StatefulSet) -> &k8s_openapi::api::core::v1::PodSpec {
    sts.spec
        .as_ref()
        .expect("spec")
        .template
        .spec
        .as_ref()
        .expect("pod spec")
}

#[test]
fn options_reach_every_member_file_and_the_pod_template() {
    let c = cluster(serde_json::json!({"size": 3, "options": {
        "quota-backend-bytes": 104857600,
        "auto-compaction-retention": "30m",
    }}));
    let r = render(&c, &input(&c, 3)).expect("renders");
    for (key, content) in r.bootstrap_config.data.as_ref().expect("data") {
        let file: serde_json::Value = serde_json::from_str(content).expect("json");
        assert_eq!(file["quota-backend-bytes"], 104857600, "{key}");
        assert_eq!(file["auto-compaction-retention"], "30m", "{key}");
        assert_eq!(file["auto-compaction-mode"], "periodic", "{key}");
    }
    let template = r.statefulset.spec.as_ref().expect("spec").template.clone();
    let annotations = template
        .metadata
        .expect("metadata")
        .annotations
        .expect("annotations");
    let recorded: serde_json::Value =
        serde_json::from_str(&annotations[crate::names::OPTIONS_ANNOTATION]).expect("json");
    assert_eq!(recorded["quota-backend-bytes"], 104857600);

    // A change of options changes the pod template (the members restart with it).
    let other = cluster(serde_json::json!({"size": 3, "options": {"quota-backend-bytes": 1}}));
    let r2 = render(&other, &input(&other, 3)).expect("renders");
    assert_ne!(
        r.statefulset.spec.expect("spec").template,
        r2.statefulset.spec.expect("spec").template
    );
}

#[test]
fn a_reserved_option_is_an_invalid_option() {
    let c = cluster(serde_json::json!({"size": 1, "options": {"data-dir": "/tmp"}}));
    let err = render(&c, &input(&c, 1)).expect_err("refused");
    assert_eq!(err.reason(), "InvalidEtcdOption");
    assert!(err.to_string().contains("data-dir"), "{err}");
}

#[test]
fn metrics_are_served_on_their_own_port_and_service() {
    let c = cluster(serde_json::json!({"size": 3}));
    let r = render(&c, &input(&c, 3)).expect("renders");
    let ports: Vec<(Option<String>, i32)> = container_of(&r.statefulset)
        .ports
        .clone()
        .expect("ports")
        .into_iter()
        .map(|p| (p.name, p.container_port))
        .collect();
    assert!(ports.contains(&(Some("metrics".into()), 2381)), "{ports:?}");
    let svc = &r.metrics_service;
    assert_eq!(svc.metadata.name.as_deref(), Some("etcd-metrics"));
    let labels = svc.metadata.labels.as_ref().expect("labels");
    assert_eq!(labels["app.kubernetes.io/component"], "metrics");
    assert_eq!(labels["app.kubernetes.io/instance"], "etcd");
    let spec = svc.spec.as_ref().expect("spec");
    assert_eq!(spec.cluster_ip.as_deref(), Some("None"));
    let port = &spec.ports.as_ref().expect("ports")[0];
    assert_eq!((port.name.as_deref(), port.port), (Some("metrics"), 2381));
    // Each Service has its own component: a ServiceMonitor of `component: metrics` selects one.
    let components: Vec<String> = [&r.peer_service, &r.client_service, &r.metrics_service]
        .iter()
        .map(|s| s.metadata.labels.as_ref().expect("labels")["app.kubernetes.io/component"].clone())
        .collect();
    assert_eq!(components, ["peer", "client", "metrics"]);
    let file: serde_json::Value =
        serde_json::from_str(&r.bootstrap_config.data.expect("data")["etcd-0.json"]).expect("json");
    assert_eq!(file["listen-metrics-urls"], "http://0.0.0.0:2381");
}

#[test]
fn scheduling_fields_are_rendered_and_spread_defaults_to_the_cluster() {
    let c = cluster(serde_json::json!({"size": 3, "scheduling": {
        "nodeSelector": {"disk": "ssd"},
        "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "etcd", "effect": "NoSchedule"}],
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule"}],
        "priorityClassName": "system-cluster-critical",
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}},
    }}));
    let sts = render(&c, &input(&c, 3)).expect("renders").statefulset;
    let pod = pod_spec_of(&sts);
    assert_eq!(
        pod.node_selector.as_ref().expect("nodeSelector")["disk"],
        "ssd"
    );
    let tolerations = pod.tolerations.as_ref().expect("tolerations");
    assert_eq!(tolerations[0].key.as_deref(), Some("dedicated"));
    assert_eq!(
        pod.priority_class_name.as_deref(),
        Some("system-cluster-critical")
    );
    let spread = &pod.topology_spread_constraints.as_ref().expect("spread")[0];
    assert_eq!(spread.topology_key, "topology.kubernetes.io/zone");
    assert_eq!(
        spread
            .label_selector
            .as_ref()
            .and_then(|s| s.match_labels.clone()),
        Some(crate::names::ClusterNames::new("etcd", "db").selector())
    );
    let affinity = pod.affinity.as_ref().expect("affinity");
    assert!(affinity.node_affinity.is_some());
    assert!(
        affinity.pod_anti_affinity.is_none(),
        "the user's affinity replaces the default"
    );
}

#[test]
fn members_prefer_separate_nodes_by_default() {
    let c = cluster(serde_json::json!({"size": 3}));
    let sts = render(&c, &input(&c, 3)).expect("renders").statefulset;
    let pod = pod_spec_of(&sts);
    let anti = pod
        .affinity
        .as_ref()
        .and_then(|a| a.pod_anti_affinity.as_ref())
        .and_then(|a| {
            a.preferred_during_scheduling_ignored_during_execution
                .as_ref()
        })
        .expect("a preferred anti-affinity");
    assert_eq!(
        anti[0].pod_affinity_term.topology_key,
        "kubernetes.io/hostname"
    );
    assert!(pod.node_selector.is_none() && pod.tolerations.is_none());
}

#[test]
fn pod_metadata_is_added_but_never_replaces_the_selector() {
    let c = cluster(serde_json::json!({"size": 1, "podMetadata": {
        "labels": {"team": "db", "app.kubernetes.io/instance": "other"},
        "annotations": {"sidecar.istio.io/inject": "false"},
    }}));
    let sts = render(&c, &input(&c, 1)).expect("renders").statefulset;
    let meta = sts.spec.expect("spec").template.metadata.expect("metadata");
    let labels = meta.labels.expect("labels");
    assert_eq!(labels["team"], "db");
    assert_eq!(labels["app.kubernetes.io/instance"], "etcd");
    assert_eq!(
        meta.annotations.expect("annotations")["sidecar.istio.io/inject"],
        "false"
    );
}

// tls

#[test]
fn tls_mounts_the_secrets_and_probes_the_metrics_port() {
    let c = cluster(serde_json::json!({"size": 3, "version": "3.5.17", "tls": {}}));
    let r = render(&c, &input(&c, 3)).expect("renders");
    let pod = pod_spec_of(&r.statefulset);
    let secrets: Vec<(String, String)> = pod
        .volumes
        .as_ref()
        .expect("volumes")
        .iter()
        .filter_map(|v| {
            let secret = v.secret.as_ref()?.secret_name.clone()?;
            Some((v.name.clone(), secret))
        })
        .collect();
    assert_eq!(
        secrets,
        [
            ("peer-tls".to_owned(), "etcd-tls-peer".to_owned()),
            ("server-tls".to_owned(), "etcd-tls-server".to_owned())
        ]
    );
    let container = container_of(&r.statefulset);
    let mounts: Vec<&str> = container
        .volume_mounts
        .as_ref()
        .expect("mounts")
        .iter()
        .map(|m| m.mount_path.as_str())
        .collect();
    assert!(mounts.contains(&"/etc/etcd-tls/peer") && mounts.contains(&"/etc/etcd-tls/server"));
    let probe_port = |p: &Option<Probe>| {
        p.as_ref()
            .and_then(|p| p.http_get.as_ref())
            .map(|h| h.port.clone())
    };
    assert_eq!(
        probe_port(&container.readiness_probe),
        Some(IntOrString::Int(2381))
    );
    assert_eq!(
        probe_port(&container.liveness_probe),
        Some(IntOrString::Int(2381))
    );
    let file: serde_json::Value =
        serde_json::from_str(&r.bootstrap_config.data.expect("data")["etcd-0.json"]).expect("json");
    assert_eq!(
        file["initial-cluster"]
            .as_str()
            .map(|s| s.contains("https://etcd-0.etcd.db.svc:2380")),
        Some(true)
    );
    assert_eq!(
        file["client-transport-security"]["cert-file"],
        "/etc/etcd-tls/server/tls.crt"
    );
    assert_eq!(
        file["peer-transport-security"]["trusted-ca-file"],
        "/etc/etcd-tls/peer/ca.crt"
    );
}

#[test]
fn user_tls_secrets_are_mounted_as_given() {
    let c = cluster(serde_json::json!({"size": 1, "tls": {
        "peerSecretRef": {"name": "my-peer"},
        "serverSecretRef": {"name": "my-server"},
        "clientSecretRef": {"name": "my-client"},
    }}));
    let names = cluster_names(&c).expect("names");
    let secrets = crate::tls::secret_names(&c, &names).expect("tls");
    assert_eq!(
        (
            secrets.peer.as_str(),
            secrets.server.as_str(),
            secrets.client.as_str(),
            secrets.generated
        ),
        ("my-peer", "my-server", "my-client", false)
    );
    let sts = render(&c, &input(&c, 1)).expect("renders").statefulset;
    let volumes = pod_spec_of(&sts).volumes.clone().expect("volumes");
    assert!(
        volumes
            .iter()
            .any(|v| v.secret.as_ref().and_then(|s| s.secret_name.as_deref()) == Some("my-peer"))
    );
    // The members trust the bundles ferroplane keeps beside the user's Secrets.
    assert_eq!(secrets.trust.as_deref(), Some("etcd-tls-trust"));
    assert!(volumes.iter().any(
        |v| v.secret.as_ref().and_then(|s| s.secret_name.as_deref()) == Some("etcd-tls-trust")
    ));
    let mounts = pod_spec_of(&sts).containers[0]
        .volume_mounts
        .clone()
        .expect("mounts");
    assert!(mounts.iter().any(|m| m.mount_path == "/etc/etcd-tls/trust"));
    let r = render(&c, &input(&c, 1)).expect("renders");
    let file: serde_json::Value =
        serde_json::from_str(&r.bootstrap_config.data.expect("data")["etcd-0.json"]).expect("json");
    assert_eq!(
        file["peer-transport-security"]["trusted-ca-file"],
        "/etc/etcd-tls/trust/peer-ca.crt"
    );
    assert_eq!(
        file["client-transport-security"]["trusted-ca-file"],
        "/etc/etcd-tls/trust/server-ca.crt"
    );
    assert_eq!(
        file["client-transport-security"]["cert-file"], "/etc/etcd-tls/server/tls.crt",
        "the user's certificate itself"
    );
    assert!(cluster(serde_json::json!({"size": 1})).spec.tls.is_none());
    assert!(crate::tls::secret_names(&cluster(serde_json::json!({"size": 1})), &names).is_none());
}

#[test]
fn each_trust_generation_after_the_first_rotation_restarts_the_members() {
    let template_generation = |spec: serde_json::Value, generation: u64| {
        let c = cluster(spec);
        let r = render(
            &c,
            &RenderInput {
                trust_generation: generation,
                ..input(&c, 3)
            },
        )
        .expect("renders");
        r.statefulset
            .spec
            .and_then(|s| s.template.metadata)
            .and_then(|m| m.annotations)
            .and_then(|a| {
                a.get(crate::tls::rotation::TRUST_GENERATION_ANNOTATION)
                    .cloned()
            })
    };
    let tls = serde_json::json!({"size": 3, "tls": {}});
    // Never rotated (clusters from before rotation existed included): nothing to restart for.
    assert_eq!(template_generation(tls.clone(), 0), None);
    assert_eq!(template_generation(tls, 2), Some("2".to_owned()));
    assert_eq!(
        template_generation(serde_json::json!({"size": 3}), 2),
        None,
        "no TLS, no trust"
    );
}
