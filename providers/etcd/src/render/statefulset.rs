//! The StatefulSet running the members.
//!
//! - `podManagementPolicy: Parallel`: the members of a new cluster must start together: with
//!   `OrderedReady`, pod 0 would wait to be Ready before pod 1 is created, but a member is Ready
//!   only once a quorum has elected a leader, so a new cluster of 3 would never form. Ordering of
//!   later changes is the controller's job (one membership change at a time), not the
//!   StatefulSet's.
//! - `RollingUpdate`: an image change replaces one pod at a time, highest ordinal first, waiting
//!   for each to be Ready, which with the PodDisruptionBudget keeps quorum through an upgrade.
//! - Each pod reads its own configuration file from the bootstrap ConfigMap
//!   (see [`super::bootstrap`]); `POD_NAME` picks the file.
//! - Volumes: `whenScaled: Delete`, because a scaled-down pod's member has been removed from
//!   etcd, and etcd refuses to start a pod of the same ordinal on its data later ("the member
//!   has been permanently removed from the cluster"); the controller deletes those claims as
//!   well (clusters without the retention policy, or a claim that outlived it). `whenDeleted:
//!   Retain`: deleting the StatefulSet (the EtcdCluster) keeps the data, as the deletion policy
//!   promises nothing more.
//! - Scheduling: `spec.scheduling` as given; without an affinity the members prefer nodes no
//!   other member of the cluster runs on (a preference, so a small cluster still schedules).
//!   A topology spread constraint without a label selector gets the cluster's.
//! - The options members run with are in their configuration files, which a running member
//!   does not re-read; the pod template carries them as an annotation so that a change rolls
//!   the members, one at a time, as an image change does.
//! - Members read their trusted CA file only at start: from a generated CA's first rotation on
//!   (or the first change of the user's CA, [`crate::tls::user_trust`]), the template carries
//!   the trust generation ([`crate::tls::rotation`]), so that each phase restarts them one at a
//!   time, as an image change does. With the user's Secrets the members trust the bundles of
//!   `<name>-tls-trust`, mounted beside them.
//! - Probes: with `/livez` and `/readyz` (3.4.29+, 3.5.11+) liveness does not depend on a leader;
//!   older versions only have `/health`, which fails without a leader, so liveness is a TCP check
//!   there: restarting members of a cluster without quorum only makes it worse.

use std::collections::BTreeMap;

use ferroplane_apis::etcd::{EtcdCluster, EtcdStorage};
use k8s_openapi::api::apps::v1::{
    StatefulSet, StatefulSetPersistentVolumeClaimRetentionPolicy, StatefulSetSpec,
    StatefulSetUpdateStrategy,
};
use k8s_openapi::api::core::v1::{
    Affinity, ConfigMapVolumeSource, Container, ContainerPort, EmptyDirVolumeSource, EnvVar,
    EnvVarSource, HTTPGetAction, ObjectFieldSelector, PersistentVolumeClaim,
    PersistentVolumeClaimSpec, PodAffinityTerm, PodAntiAffinity, PodSpec, PodTemplateSpec, Probe,
    TCPSocketAction, Volume, VolumeMount, VolumeResourceRequirements, WeightedPodAffinityTerm,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::input::RenderInput;
use super::owner::Owner;
use serde_json::Value;

use crate::names::{
    CLIENT_PORT, CONFIG_MOUNT, ClusterNames, DATA_MOUNT, METRICS_PORT, OPTIONS_ANNOTATION,
    PEER_PORT, PEER_TLS_MOUNT, SERVER_TLS_MOUNT, TRUST_TLS_MOUNT,
};
use crate::tls::SecretNames;
use k8s_openapi::api::core::v1::SecretVolumeSource;

/// etcd's data directory inside the data volume (a subdirectory, so that a volume's
/// `lost+found` does not make etcd think the directory is in use).
pub const DATA_DIR: &str = "/var/lib/etcd/data";
const DATA_VOLUME: &str = "data";
const CONFIG_VOLUME: &str = "config";
const PEER_TLS_VOLUME: &str = "peer-tls";
const SERVER_TLS_VOLUME: &str = "server-tls";
const TRUST_TLS_VOLUME: &str = "trust-tls";

pub(super) fn render(
    cluster: &EtcdCluster,
    names: &ClusterNames,
    owner: &Owner,
    input: &RenderInput,
    options: &BTreeMap<String, Value>,
    tls: Option<&SecretNames>,
) -> StatefulSet {
    let owner = owner.with_version(input.release.version.to_string(), input.replicas);
    let pod_metadata = cluster.spec.pod_metadata.clone().unwrap_or_default();
    // The user's first, so that ferroplane's labels (the selector) and annotations win.
    let mut pod_labels = pod_metadata.labels;
    pod_labels.extend(names.labels());
    pod_labels.extend(names.selector());
    let mut pod_annotations = pod_metadata.annotations;
    pod_annotations.insert(
        OPTIONS_ANNOTATION.to_owned(),
        serde_json::to_string(options).unwrap_or_default(),
    );
    if tls.is_some() && input.trust_generation > 0 {
        pod_annotations.insert(
            crate::tls::rotation::TRUST_GENERATION_ANNOTATION.to_owned(),
            input.trust_generation.to_string(),
        );
    }
    let scheduling = &cluster.spec.scheduling;
    let storage = cluster.spec.storage.as_ref();
    let mut volumes = vec![Volume {
        name: CONFIG_VOLUME.to_owned(),
        config_map: Some(ConfigMapVolumeSource {
            name: names.bootstrap_config(),
            ..ConfigMapVolumeSource::default()
        }),
        ..Volume::default()
    }];
    if let Some(tls) = tls {
        let trust = tls.trust.iter().map(|t| (TRUST_TLS_VOLUME, t));
        for (volume, secret) in [
            (PEER_TLS_VOLUME, &tls.peer),
            (SERVER_TLS_VOLUME, &tls.server),
        ]
        .into_iter()
        .chain(trust)
        {
            volumes.push(Volume {
                name: volume.to_owned(),
                secret: Some(SecretVolumeSource {
                    secret_name: Some(secret.clone()),
                    ..SecretVolumeSource::default()
                }),
                ..Volume::default()
            });
        }
    }
    if storage.is_none() {
        volumes.push(Volume {
            name: DATA_VOLUME.to_owned(),
            empty_dir: Some(EmptyDirVolumeSource::default()),
            ..Volume::default()
        });
    }
    let claims = storage.map(|s| {
        vec![PersistentVolumeClaim {
            metadata: ObjectMeta {
                name: Some(DATA_VOLUME.to_owned()),
                labels: Some(names.selector()),
                ..ObjectMeta::default()
            },
            spec: Some(data_claim_spec(s)),
            ..PersistentVolumeClaim::default()
        }]
    });
    StatefulSet {
        metadata: owner.meta(names.statefulset(), names),
        spec: Some(StatefulSetSpec {
            replicas: Some(i32::try_from(input.replicas).unwrap_or(i32::MAX)),
            service_name: Some(names.peer_service()),
            pod_management_policy: Some("Parallel".to_owned()),
            update_strategy: Some(StatefulSetUpdateStrategy {
                type_: Some("RollingUpdate".to_owned()),
                ..StatefulSetUpdateStrategy::default()
            }),
            selector: selector(names),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(pod_labels),
                    annotations: Some(pod_annotations),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![container(cluster, input, tls)],
                    volumes: Some(volumes),
                    affinity: Some(
                        scheduling
                            .affinity
                            .clone()
                            .unwrap_or_else(|| spread_over_nodes(names)),
                    ),
                    node_selector: (!scheduling.node_selector.is_empty())
                        .then(|| scheduling.node_selector.clone()),
                    tolerations: (!scheduling.tolerations.is_empty())
                        .then(|| scheduling.tolerations.clone()),
                    topology_spread_constraints: (!scheduling
                        .topology_spread_constraints
                        .is_empty())
                    .then(|| {
                        scheduling
                            .topology_spread_constraints
                            .iter()
                            .cloned()
                            .map(|mut c| {
                                c.label_selector.get_or_insert_with(|| selector(names));
                                c
                            })
                            .collect()
                    }),
                    priority_class_name: scheduling.priority_class_name.clone(),
                    ..PodSpec::default()
                }),
            },
            persistent_volume_claim_retention_policy: storage.map(|_| {
                StatefulSetPersistentVolumeClaimRetentionPolicy {
                    when_deleted: Some("Retain".to_owned()),
                    when_scaled: Some("Delete".to_owned()),
                }
            }),
            volume_claim_templates: claims,
            ..StatefulSetSpec::default()
        }),
        status: None,
    }
}

/// The spec of a member's data claim: the claim template's, and a restore's claims made before
/// the StatefulSet (which then adopts them).
pub(crate) fn data_claim_spec(storage: &EtcdStorage) -> PersistentVolumeClaimSpec {
    PersistentVolumeClaimSpec {
        access_modes: Some(vec!["ReadWriteOnce".to_owned()]),
        storage_class_name: storage.storage_class_name.clone(),
        resources: Some(VolumeResourceRequirements {
            requests: Some(BTreeMap::from([(
                "storage".to_owned(),
                Quantity(storage.size.clone()),
            )])),
            ..VolumeResourceRequirements::default()
        }),
        ..PersistentVolumeClaimSpec::default()
    }
}

fn selector(names: &ClusterNames) -> LabelSelector {
    LabelSelector {
        match_labels: Some(names.selector()),
        ..LabelSelector::default()
    }
}

/// The default affinity: members prefer nodes without another member of this cluster.
fn spread_over_nodes(names: &ClusterNames) -> Affinity {
    Affinity {
        pod_anti_affinity: Some(PodAntiAffinity {
            preferred_during_scheduling_ignored_during_execution: Some(vec![
                WeightedPodAffinityTerm {
                    weight: 100,
                    pod_affinity_term: PodAffinityTerm {
                        label_selector: Some(selector(names)),
                        topology_key: "kubernetes.io/hostname".to_owned(),
                        ..PodAffinityTerm::default()
                    },
                },
            ]),
            ..PodAntiAffinity::default()
        }),
        ..Affinity::default()
    }
}

fn container(cluster: &EtcdCluster, input: &RenderInput, tls: Option<&SecretNames>) -> Container {
    let (liveness, readiness) = probes(input, tls.is_some());
    let mut mounts = vec![
        VolumeMount {
            name: DATA_VOLUME.to_owned(),
            mount_path: DATA_MOUNT.to_owned(),
            ..VolumeMount::default()
        },
        VolumeMount {
            name: CONFIG_VOLUME.to_owned(),
            mount_path: CONFIG_MOUNT.to_owned(),
            read_only: Some(true),
            ..VolumeMount::default()
        },
    ];
    if let Some(tls) = tls {
        let trust = tls
            .trust
            .iter()
            .map(|_| (TRUST_TLS_VOLUME, TRUST_TLS_MOUNT));
        for (name, path) in [
            (PEER_TLS_VOLUME, PEER_TLS_MOUNT),
            (SERVER_TLS_VOLUME, SERVER_TLS_MOUNT),
        ]
        .into_iter()
        .chain(trust)
        {
            mounts.push(VolumeMount {
                name: name.to_owned(),
                mount_path: path.to_owned(),
                read_only: Some(true),
                ..VolumeMount::default()
            });
        }
    }
    Container {
        name: "etcd".to_owned(),
        image: Some(input.release.image.clone()),
        command: Some(vec![
            "etcd".to_owned(),
            format!("--config-file={CONFIG_MOUNT}/$(POD_NAME).json"),
        ]),
        env: Some(vec![EnvVar {
            name: "POD_NAME".to_owned(),
            value_from: Some(EnvVarSource {
                field_ref: Some(ObjectFieldSelector {
                    field_path: "metadata.name".to_owned(),
                    ..ObjectFieldSelector::default()
                }),
                ..EnvVarSource::default()
            }),
            ..EnvVar::default()
        }]),
        ports: Some(vec![
            ContainerPort {
                name: Some("client".to_owned()),
                container_port: CLIENT_PORT,
                ..ContainerPort::default()
            },
            ContainerPort {
                name: Some("peer".to_owned()),
                container_port: PEER_PORT,
                ..ContainerPort::default()
            },
            ContainerPort {
                name: Some("metrics".to_owned()),
                container_port: METRICS_PORT,
                ..ContainerPort::default()
            },
        ]),
        volume_mounts: Some(mounts),
        resources: cluster.spec.resources.clone(),
        liveness_probe: Some(liveness),
        readiness_probe: Some(readiness),
        ..Container::default()
    }
}

fn http_probe(path: &str, port: i32, period: i32, failures: i32) -> Probe {
    Probe {
        http_get: Some(HTTPGetAction {
            path: Some(path.to_owned()),
            port: IntOrString::Int(port),
            ..HTTPGetAction::default()
        }),
        period_seconds: Some(period),
        timeout_seconds: Some(5),
        failure_threshold: Some(failures),
        ..Probe::default()
    }
}

/// (liveness, readiness). With TLS the client port wants a client certificate, which the
/// kubelet has none of: the probes go to the plain-HTTP metrics port, which serves the same
/// health endpoints.
fn probes(input: &RenderInput, tls: bool) -> (Probe, Probe) {
    let port = if tls { METRICS_PORT } else { CLIENT_PORT };
    if input.release.version.has_livez_readyz() {
        (
            http_probe("/livez", port, 10, 8),
            http_probe("/readyz", port, 5, 3),
        )
    } else {
        let tcp = Probe {
            tcp_socket: Some(TCPSocketAction {
                port: IntOrString::Int(CLIENT_PORT),
                ..TCPSocketAction::default()
            }),
            period_seconds: Some(10),
            timeout_seconds: Some(5),
            failure_threshold: Some(8),
            ..Probe::default()
        };
        (tcp, http_probe("/health", port, 5, 3))
    }
}
