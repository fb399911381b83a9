//! The objects of a restore, as pure functions: a member's data claim (what the StatefulSet's
//! claim template would make, made first), the Secret holding the snapshot's signed URL, and a
//! Job per member that fills the claim; for a snapshot in a ReadWriteOnce claim, the snapshot
//! server the members fetch it from ([`source_server_job`], [`Delivery::Served`]).
//!
//! The Job's pod runs three steps in order (two init containers, then the main one), each
//! safe to run again after a failure:
//! 1. `fetch` (ferroplane's image): refuses a claim that already holds etcd data, removes what
//!    a failed attempt left in the staging directory, downloads the snapshot and checks its
//!    SHA-256 trailer (and the recorded SHA-256, when known); with `spec.auth`, sets root's
//!    password in it to the Secret's (mounted for this step only, [`super::root_password`]);
//! 2. `restore` (the cluster's etcd image): `etcdutl snapshot restore` into the staging
//!    directory with the member's name, the initial cluster, its token and the member's peer
//!    URL, exactly what the member's configuration file gives when it starts;
//! 3. `commit` (ferroplane's image): renames the staging directory to the data directory, so
//!    a member never starts on a half-restored directory.
//!
//! etcd's images since 3.5 have no shell, hence ferroplane's own image for the steps that need
//! logic. The ferroplane steps run as root: they remove and rename directories `etcdutl` (root
//! in the etcd image, as the members are) created.

use std::collections::BTreeMap;

use ferroplane_apis::etcd::EtcdCluster;
use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{
    Container, ContainerPort, EmptyDirVolumeSource, EnvVar, HTTPGetAction, KeyToPath,
    PersistentVolumeClaim, PersistentVolumeClaimVolumeSource, PodSpec, PodTemplateSpec, Probe,
    Secret, SecretVolumeSource, SecurityContext, Service, ServicePort, ServiceSpec, Volume,
    VolumeMount,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::Resource;
use kube::api::ObjectMeta;

use crate::auth::PASSWORD_KEY;
use crate::names::{ClusterNames, DATA_MOUNT, Topology};
use crate::render::statefulset::{DATA_DIR, data_claim_spec};
use crate::version::Release;

/// Annotation of a claim made for a restore: the snapshot it receives (`bucket/key`).
pub const RESTORE_ANNOTATION: &str = "etcd.ferroplane.io/restore-from";
/// Annotation of a claim made for a restore: `pending` until its Job succeeded, then `done`.
pub const RESTORE_STATE_ANNOTATION: &str = "etcd.ferroplane.io/restore-state";
/// Annotation of the source Secret: when its URL expires (RFC 3339).
pub const EXPIRES_ANNOTATION: &str = "etcd.ferroplane.io/url-expires";
/// Annotation of the source Secret: the snapshot (`bucket/key`).
pub const SNAPSHOT_ANNOTATION: &str = "etcd.ferroplane.io/snapshot";
/// Annotation of the source Secret: the SHA-256 the Jobs check, when known.
pub const SHA256_ANNOTATION: &str = "etcd.ferroplane.io/sha256";
/// Label of the restore Jobs and their pods: the cluster they restore.
pub const RESTORE_OF_LABEL: &str = "etcd.ferroplane.io/restore-of";
/// Key of the source Secret holding the URL.
pub const URL_KEY: &str = "url";
/// Keys of the source Secret of a served snapshot: the CA the fetchers trust, the server's
/// certificate and key, and the token the URL carries.
pub const CA_KEY: &str = "ca.crt";
pub const CERT_KEY: &str = "tls.crt";
pub const KEY_KEY: &str = "tls.key";
pub const TOKEN_KEY: &str = "token";
/// Annotation of the source Secret: how the member Jobs get the snapshot (`mounted` or
/// `served`), decided once from the backup claim's access modes.
pub const DELIVERY_ANNOTATION: &str = "etcd.ferroplane.io/delivery";
/// Label of the snapshot server's pod (value `source`), which its Service selects.
pub const RESTORE_ROLE_LABEL: &str = "etcd.ferroplane.io/restore-role";
/// The snapshot server's port, and the host name of its pod under its headless Service.
pub const SOURCE_PORT: i32 = 8443;
const SOURCE_HOSTNAME: &str = "source";

/// Where the Job's volumes are mounted.
const SOURCE_MOUNT: &str = "/restore/source";
const SCRATCH_MOUNT: &str = "/restore/scratch";
const BACKUP_MOUNT: &str = "/restore/backup";
const AUTH_MOUNT: &str = "/restore/auth";
const SERVER_MOUNT: &str = "/restore/server";
/// Where `etcdutl` restores before the rename: on the claim, beside the data directory.
pub const STAGING_DIR: &str = "/var/lib/etcd/restoring";

/// A failed step is retried this often (a new pod each time) before the Job fails.
const BACKOFF_LIMIT: i32 = 4;

/// What a member's restore Job needs.
pub struct JobInput<'a> {
    pub cluster: &'a EtcdCluster,
    pub names: &'a ClusterNames,
    pub release: &'a Release,
    pub ordinal: u32,
    /// Members the restored cluster starts with.
    pub size: u32,
    pub token: &'a str,
    pub sha256: Option<&'a str>,
    /// ferroplane's image, for the fetch and commit steps.
    pub tools_image: &'a str,
    /// How the fetch step gets the snapshot.
    pub delivery: Delivery<'a>,
    /// `--bump-revision` with `--mark-compacted`: how far past the snapshot's revision the
    /// restored members start (a quorum-loss recovery, [`crate::recovery`]).
    pub revision_bump: Option<u64>,
    /// The Secret of `spec.auth` (root's password under `password`): the fetch step sets root's
    /// password in the snapshot to it ([`super::root_password`]), so that a snapshot taken
    /// with another password restores with the current one.
    pub root_password_secret: Option<&'a str>,
}

/// How a restore's member Jobs get the snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery<'a> {
    /// Through the signed URL in the source Secret (a snapshot in a bucket).
    SignedUrl,
    /// A file in a claim every member's pod may mount at once (`ReadOnlyMany` or
    /// `ReadWriteMany`): (claim, path), mounted read-only.
    Mounted { claim: &'a str, path: &'a str },
    /// A file in a claim one node at a time can mount (`ReadWriteOnce`): fetched from the
    /// snapshot server that mounts it, through the URL and with the CA of the source Secret.
    Served,
}

impl Delivery<'_> {
    /// The source Secret's [`DELIVERY_ANNOTATION`] for a file in a claim.
    pub fn annotation(served: bool) -> &'static str {
        if served { "served" } else { "mounted" }
    }
}

/// Whether a claim of `access_modes` makes the members' Jobs fetch from a snapshot server:
/// unless some mode lets pods on several nodes mount it at once.
pub fn needs_server(access_modes: &[String]) -> bool {
    !access_modes
        .iter()
        .any(|m| m == "ReadOnlyMany" || m == "ReadWriteMany")
}

pub fn source_secret_name(names: &ClusterNames) -> String {
    format!("{}-restore-source", names.name)
}

/// The snapshot server's Job, and its headless Service.
pub fn source_server_name(names: &ClusterNames) -> String {
    format!("{}-restore-source", names.name)
}

/// The snapshot server's DNS name: its pod's host name under its headless Service.
pub fn source_server_host(names: &ClusterNames) -> String {
    format!(
        "{SOURCE_HOSTNAME}.{}.{}.svc",
        source_server_name(names),
        names.namespace
    )
}

/// The URL the member Jobs fetch a served snapshot from (the token in the query, which no log
/// of a URL shows).
pub fn source_server_url(names: &ClusterNames, token: &str) -> String {
    format!(
        "https://{}:{SOURCE_PORT}/snapshot?token={token}",
        source_server_host(names)
    )
}

pub fn job_name(names: &ClusterNames, ordinal: u32) -> String {
    format!("{}-restore-{ordinal}", names.name)
}

fn owner(cluster: &EtcdCluster) -> Option<OwnerReference> {
    cluster.controller_owner_ref(&())
}

fn labels(names: &ClusterNames) -> BTreeMap<String, String> {
    let mut labels = names.labels();
    labels.insert(RESTORE_OF_LABEL.to_owned(), names.name.clone());
    labels
}

/// The data claim of `ordinal`, named and labelled as the StatefulSet's template would make it,
/// marked as awaiting `snapshot`. No owner: the StatefulSet adopts it, and its retention
/// policy (kept when the cluster is deleted) applies as to any member volume.
pub fn claim(
    cluster: &EtcdCluster,
    names: &ClusterNames,
    ordinal: u32,
    snapshot: &str,
) -> PersistentVolumeClaim {
    let storage = cluster.spec.storage.as_ref();
    PersistentVolumeClaim {
        metadata: ObjectMeta {
            name: Some(names.data_volume(ordinal)),
            namespace: Some(names.namespace.clone()),
            labels: Some(names.selector()),
            annotations: Some(BTreeMap::from([
                (RESTORE_ANNOTATION.to_owned(), snapshot.to_owned()),
                (RESTORE_STATE_ANNOTATION.to_owned(), "pending".to_owned()),
            ])),
            ..ObjectMeta::default()
        },
        spec: storage.map(data_claim_spec),
        ..PersistentVolumeClaim::default()
    }
}

/// What the source Secret holds besides the snapshot's name.
pub enum SourceContent<'a> {
    /// The signed URL of a snapshot in a bucket (a credential to it until it expires).
    SignedUrl {
        url: &'a str,
        expires: jiff::Timestamp,
    },
    /// Nothing: a file in a claim the member Jobs mount themselves.
    Mounted,
    /// What the snapshot server and its fetchers need.
    Served(&'a ServedSource),
}

/// The snapshot server's credentials, made once per restore: a CA made for it alone (its
/// certificate is all the fetchers trust), the server's certificate and key, and the token a
/// fetcher's URL must carry.
pub struct ServedSource {
    pub ca_pem: String,
    pub cert_pem: String,
    pub key_pem: String,
    pub token: String,
}

/// The Secret recording the snapshot chosen and what the Jobs need to get it.
pub fn source_secret(
    cluster: &EtcdCluster,
    names: &ClusterNames,
    snapshot: &str,
    content: SourceContent<'_>,
    sha256: Option<&str>,
) -> Secret {
    let mut annotations = BTreeMap::from([(SNAPSHOT_ANNOTATION.to_owned(), snapshot.to_owned())]);
    if let Some(sha256) = sha256 {
        annotations.insert(SHA256_ANNOTATION.to_owned(), sha256.to_owned());
    }
    let data = match content {
        SourceContent::SignedUrl { url, expires } => {
            annotations.insert(EXPIRES_ANNOTATION.to_owned(), expires.to_string());
            Some(BTreeMap::from([(URL_KEY.to_owned(), url.to_owned())]))
        }
        SourceContent::Mounted => {
            annotations.insert(
                DELIVERY_ANNOTATION.to_owned(),
                Delivery::annotation(false).to_owned(),
            );
            None
        }
        SourceContent::Served(served) => {
            annotations.insert(
                DELIVERY_ANNOTATION.to_owned(),
                Delivery::annotation(true).to_owned(),
            );
            Some(BTreeMap::from([
                (URL_KEY.to_owned(), source_server_url(names, &served.token)),
                (CA_KEY.to_owned(), served.ca_pem.clone()),
                (CERT_KEY.to_owned(), served.cert_pem.clone()),
                (KEY_KEY.to_owned(), served.key_pem.clone()),
                (TOKEN_KEY.to_owned(), served.token.clone()),
            ]))
        }
    };
    Secret {
        metadata: ObjectMeta {
            name: Some(source_secret_name(names)),
            namespace: Some(names.namespace.clone()),
            labels: Some(labels(names)),
            annotations: Some(annotations),
            owner_references: owner(cluster).map(|o| vec![o]),
            ..ObjectMeta::default()
        },
        type_: Some("Opaque".to_owned()),
        string_data: data,
        ..Secret::default()
    }
}

/// Items of the source Secret as files (only those a container needs).
fn secret_items(names: &ClusterNames, keys: &[&str]) -> SecretVolumeSource {
    SecretVolumeSource {
        secret_name: Some(source_secret_name(names)),
        items: Some(
            keys.iter()
                .map(|k| KeyToPath {
                    key: (*k).to_owned(),
                    path: (*k).to_owned(),
                    ..KeyToPath::default()
                })
                .collect(),
        ),
        ..SecretVolumeSource::default()
    }
}

/// The snapshot server of a restore whose snapshot lies in a ReadWriteOnce claim: one pod
/// mounts the claim read-only and serves the file over HTTPS (`ferroplane etcd-restore
/// serve`) under a stable name ([`source_server_host`]) until the restore is done, when the
/// controller deletes it. Ready once it answers, so the member Jobs start only then.
pub fn source_server_job(
    cluster: &EtcdCluster,
    names: &ClusterNames,
    tools_image: &str,
    claim: &str,
    path: &str,
) -> Job {
    let serve = vec![
        "ferroplane".to_owned(),
        "etcd-restore".to_owned(),
        "serve".to_owned(),
        "--file".to_owned(),
        format!("{BACKUP_MOUNT}/{path}"),
        "--token-file".to_owned(),
        format!("{SERVER_MOUNT}/{TOKEN_KEY}"),
        "--cert-file".to_owned(),
        format!("{SERVER_MOUNT}/{CERT_KEY}"),
        "--key-file".to_owned(),
        format!("{SERVER_MOUNT}/{KEY_KEY}"),
        "--listen".to_owned(),
        format!("0.0.0.0:{SOURCE_PORT}"),
    ];
    let mut pod_labels = labels(names);
    pod_labels.insert(RESTORE_ROLE_LABEL.to_owned(), SOURCE_HOSTNAME.to_owned());
    restore_job(
        cluster,
        names,
        source_server_name(names),
        pod_labels,
        PodSpec {
            hostname: Some(SOURCE_HOSTNAME.to_owned()),
            subdomain: Some(source_server_name(names)),
            containers: vec![Container {
                name: "serve".to_owned(),
                image: Some(tools_image.to_owned()),
                command: Some(serve),
                ports: Some(vec![ContainerPort {
                    name: Some("snapshot".to_owned()),
                    container_port: SOURCE_PORT,
                    ..ContainerPort::default()
                }]),
                readiness_probe: Some(Probe {
                    http_get: Some(HTTPGetAction {
                        path: Some("/healthz".to_owned()),
                        port: IntOrString::Int(SOURCE_PORT),
                        scheme: Some("HTTPS".to_owned()),
                        ..HTTPGetAction::default()
                    }),
                    period_seconds: Some(2),
                    ..Probe::default()
                }),
                volume_mounts: Some(vec![
                    mount("backup", BACKUP_MOUNT, true),
                    mount("server", SERVER_MOUNT, true),
                ]),
                // The backup Jobs wrote the file as root.
                security_context: as_root(),
                termination_message_policy: Some("FallbackToLogsOnError".to_owned()),
                ..Container::default()
            }],
            volumes: Some(vec![
                Volume {
                    name: "backup".to_owned(),
                    persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                        claim_name: claim.to_owned(),
                        read_only: Some(true),
                    }),
                    ..Volume::default()
                },
                Volume {
                    name: "server".to_owned(),
                    secret: Some(secret_items(names, &[TOKEN_KEY, CERT_KEY, KEY_KEY])),
                    ..Volume::default()
                },
            ]),
            ..PodSpec::default()
        },
    )
}

/// A Job of the restore named `name`: one pod of `pod_labels` and `spec`, never restarted in
/// place (a failed pod is replaced, [`BACKOFF_LIMIT`] times), scheduled as the members are.
fn restore_job(
    cluster: &EtcdCluster,
    names: &ClusterNames,
    name: String,
    pod_labels: BTreeMap<String, String>,
    spec: PodSpec,
) -> Job {
    let scheduling = &cluster.spec.scheduling;
    Job {
        metadata: ObjectMeta {
            name: Some(name),
            namespace: Some(names.namespace.clone()),
            labels: Some(labels(names)),
            owner_references: owner(cluster).map(|o| vec![o]),
            ..ObjectMeta::default()
        },
        spec: Some(JobSpec {
            backoff_limit: Some(BACKOFF_LIMIT),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(pod_labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    restart_policy: Some("Never".to_owned()),
                    node_selector: (!scheduling.node_selector.is_empty())
                        .then(|| scheduling.node_selector.clone()),
                    tolerations: (!scheduling.tolerations.is_empty())
                        .then(|| scheduling.tolerations.clone()),
                    priority_class_name: scheduling.priority_class_name.clone(),
                    ..spec
                }),
            },
            ..JobSpec::default()
        }),
        status: None,
    }
}

/// The headless Service that gives the snapshot server its DNS name.
pub fn source_service(cluster: &EtcdCluster, names: &ClusterNames) -> Service {
    let mut selector = labels(names);
    selector.insert(RESTORE_ROLE_LABEL.to_owned(), SOURCE_HOSTNAME.to_owned());
    Service {
        metadata: ObjectMeta {
            name: Some(source_server_name(names)),
            namespace: Some(names.namespace.clone()),
            labels: Some(labels(names)),
            owner_references: owner(cluster).map(|o| vec![o]),
            ..ObjectMeta::default()
        },
        spec: Some(ServiceSpec {
            cluster_ip: Some("None".to_owned()),
            selector: Some(selector),
            ports: Some(vec![ServicePort {
                name: Some("snapshot".to_owned()),
                port: SOURCE_PORT,
                target_port: Some(IntOrString::Int(SOURCE_PORT)),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        status: None,
    }
}

fn mount(name: &str, path: &str, read_only: bool) -> VolumeMount {
    VolumeMount {
        name: name.to_owned(),
        mount_path: path.to_owned(),
        read_only: read_only.then_some(true),
        ..VolumeMount::default()
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn as_root() -> Option<SecurityContext> {
    Some(SecurityContext {
        run_as_user: Some(0),
        run_as_non_root: Some(false),
        ..SecurityContext::default()
    })
}

/// The restore Job of one member.
pub fn job(input: &JobInput<'_>) -> Job {
    let names = input.names;
    let snapshot_file = format!("{SCRATCH_MOUNT}/snapshot.db");
    let mut fetch = strings(&["ferroplane", "etcd-restore", "fetch"]);
    match input.delivery {
        Delivery::Mounted { path, .. } => {
            fetch.extend(["--file".to_owned(), format!("{BACKUP_MOUNT}/{path}")]);
        }
        Delivery::SignedUrl => {
            fetch.extend(["--url-file".to_owned(), format!("{SOURCE_MOUNT}/{URL_KEY}")]);
        }
        Delivery::Served => fetch.extend([
            "--url-file".to_owned(),
            format!("{SOURCE_MOUNT}/{URL_KEY}"),
            "--ca-file".to_owned(),
            format!("{SOURCE_MOUNT}/{CA_KEY}"),
        ]),
    }
    fetch.extend(strings(&[
        "--out",
        &snapshot_file,
        "--data-dir",
        DATA_DIR,
        "--staging-dir",
        STAGING_DIR,
    ]));
    if let Some(sha256) = input.sha256 {
        fetch.extend(strings(&["--sha256", sha256]));
    }
    if input.root_password_secret.is_some() {
        fetch.extend(strings(&[
            "--root-password-file",
            &format!("{AUTH_MOUNT}/{PASSWORD_KEY}"),
        ]));
    }
    let initial_cluster: Vec<String> = (0..input.size)
        .map(|o| format!("{}={}", names.member_name(o), names.peer_url(o)))
        .collect();
    // etcd 3.4 has no etcdutl; its etcdctl restores the same way (API v3 is its default).
    let restorer = if input.release.version.minor >= 5 {
        "etcdutl"
    } else {
        "etcdctl"
    };
    let mut restore = strings(&[
        restorer,
        "snapshot",
        "restore",
        &snapshot_file,
        "--name",
        &names.member_name(input.ordinal),
        "--initial-cluster",
        &initial_cluster.join(","),
        "--initial-cluster-token",
        input.token,
        "--initial-advertise-peer-urls",
        &names.peer_url(input.ordinal),
        "--data-dir",
        STAGING_DIR,
    ]);
    if let Some(bump) = input.revision_bump {
        restore.extend(strings(&[
            "--bump-revision",
            &bump.to_string(),
            "--mark-compacted",
        ]));
    }
    let commit = strings(&[
        "ferroplane",
        "etcd-restore",
        "commit",
        "--staging-dir",
        STAGING_DIR,
        "--data-dir",
        DATA_DIR,
    ]);
    let data_mount = mount("data", DATA_MOUNT, false);
    let scratch_mount = mount("scratch", SCRATCH_MOUNT, false);
    let mut fetch_mounts = vec![scratch_mount.clone(), data_mount.clone()];
    let mut volumes = vec![
        Volume {
            name: "data".to_owned(),
            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                claim_name: names.data_volume(input.ordinal),
                ..PersistentVolumeClaimVolumeSource::default()
            }),
            ..Volume::default()
        },
        Volume {
            name: "scratch".to_owned(),
            empty_dir: Some(EmptyDirVolumeSource::default()),
            ..Volume::default()
        },
    ];
    match input.delivery {
        Delivery::Mounted { claim, .. } => {
            fetch_mounts.push(mount("backup", BACKUP_MOUNT, true));
            volumes.push(Volume {
                name: "backup".to_owned(),
                persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                    claim_name: claim.to_owned(),
                    read_only: Some(true),
                }),
                ..Volume::default()
            });
        }
        Delivery::SignedUrl | Delivery::Served => {
            // The URL, and for a served snapshot its CA; never the server's key or token.
            let keys: &[&str] = match input.delivery {
                Delivery::Served => &[URL_KEY, CA_KEY],
                _ => &[URL_KEY],
            };
            fetch_mounts.push(mount("source", SOURCE_MOUNT, true));
            volumes.push(Volume {
                name: "source".to_owned(),
                secret: Some(secret_items(names, keys)),
                ..Volume::default()
            });
        }
    }

    if let Some(secret) = input.root_password_secret {
        fetch_mounts.push(mount("auth", AUTH_MOUNT, true));
        volumes.push(Volume {
            name: "auth".to_owned(),
            secret: Some(SecretVolumeSource {
                secret_name: Some(secret.to_owned()),
                items: Some(vec![KeyToPath {
                    key: PASSWORD_KEY.to_owned(),
                    path: PASSWORD_KEY.to_owned(),
                    ..KeyToPath::default()
                }]),
                ..SecretVolumeSource::default()
            }),
            ..Volume::default()
        });
    }
    let mut pod_labels = labels(names);
    pod_labels.insert(
        "etcd.ferroplane.io/member".to_owned(),
        names.member(input.ordinal),
    );
    restore_job(
        input.cluster,
        names,
        job_name(names, input.ordinal),
        pod_labels,
        PodSpec {
            init_containers: Some(vec![
                Container {
                    name: "fetch".to_owned(),
                    image: Some(input.tools_image.to_owned()),
                    command: Some(fetch),
                    volume_mounts: Some(fetch_mounts),
                    security_context: as_root(),
                    termination_message_policy: Some("FallbackToLogsOnError".to_owned()),
                    ..Container::default()
                },
                Container {
                    name: "restore".to_owned(),
                    image: Some(input.release.image.clone()),
                    command: Some(restore),
                    env: (restorer == "etcdctl").then(|| {
                        vec![EnvVar {
                            name: "ETCDCTL_API".to_owned(),
                            value: Some("3".to_owned()),
                            ..EnvVar::default()
                        }]
                    }),
                    volume_mounts: Some(vec![scratch_mount, data_mount.clone()]),
                    termination_message_policy: Some("FallbackToLogsOnError".to_owned()),
                    ..Container::default()
                },
            ]),
            containers: vec![Container {
                name: "commit".to_owned(),
                image: Some(input.tools_image.to_owned()),
                command: Some(commit),
                volume_mounts: Some(vec![data_mount]),
                security_context: as_root(),
                termination_message_policy: Some("FallbackToLogsOnError".to_owned()),
                ..Container::default()
            }],
            volumes: Some(volumes),
            ..PodSpec::default()
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::version::Version;
    use ferroplane_apis::etcd::{EtcdClusterSpec, EtcdStorage};

    fn cluster() -> EtcdCluster {
        let mut spec: EtcdClusterSpec =
            serde_json::from_value(serde_json::json!({"size": 3})).expect("spec");
        spec.storage = Some(EtcdStorage {
            size: "1Gi".into(),
            storage_class_name: None,
        });
        let mut c = EtcdCluster::new("db", spec);
        c.metadata.namespace = Some("team".into());
        c.metadata.uid = Some("0123456789".into());
        c
    }

    fn command(c: &Container) -> Vec<String> {
        c.command.clone().unwrap_or_default()
    }

    #[test]
    fn the_job_restores_the_member_as_its_configuration_starts_it() {
        let cluster = cluster();
        let names = ClusterNames::new("db", "team");
        let release = Release {
            version: Version::new(3, 5, 35),
            image: "gcr.io/etcd-development/etcd:v3.5.35".into(),
        };
        let job = job(&JobInput {
            cluster: &cluster,
            names: &names,
            release: &release,
            ordinal: 1,
            size: 3,
            token: "db-01234567",
            sha256: Some("ab"),
            tools_image: "ghcr.io/ferroplane/ferroplane:0.1.0",
            delivery: Delivery::SignedUrl,
            revision_bump: None,
            root_password_secret: Some("db-root"),
        });
        assert_eq!(job.metadata.name.as_deref(), Some("db-restore-1"));
        let pod = job.spec.and_then(|s| s.template.spec).expect("pod");
        let init = pod.init_containers.expect("init containers");
        let fetch = command(&init[0]);
        assert_eq!(&fetch[..3], ["ferroplane", "etcd-restore", "fetch"]);
        assert!(fetch.windows(2).any(|w| w == ["--sha256", "ab"]));
        let restore = command(&init[1]);
        assert_eq!(restore[0], "etcdutl");
        assert!(restore.windows(2).any(|w| w == ["--name", "db-1"]));
        assert!(restore.windows(2).any(|w| w[0] == "--initial-cluster"
            && w[1]
                == "db-0=http://db-0.db.team.svc:2380,db-1=http://db-1.db.team.svc:2380,db-2=http://db-2.db.team.svc:2380"));
        assert!(restore.windows(2).any(|w| w == ["--data-dir", STAGING_DIR]));
        assert!(
            fetch
                .windows(2)
                .any(|w| w == ["--root-password-file", "/restore/auth/password"])
        );
        let auth_mount = init[0]
            .volume_mounts
            .iter()
            .flatten()
            .find(|m| m.name == "auth")
            .expect("the fetch step mounts spec.auth's Secret");
        assert_eq!(auth_mount.read_only, Some(true));
        assert!(
            init[1..].iter().chain(&pod.containers).all(|c| c
                .volume_mounts
                .iter()
                .flatten()
                .all(|m| m.name != "auth")),
            "only the fetch step sees the password"
        );
        let commit = command(&pod.containers[0]);
        assert!(commit.windows(2).any(|w| w == ["--data-dir", DATA_DIR]));
        let claim = pod
            .volumes
            .expect("volumes")
            .into_iter()
            .find_map(|v| v.persistent_volume_claim)
            .expect("claim");
        assert_eq!(claim.claim_name, names.data_volume(1));
    }

    #[test]
    fn etcd_3_4_restores_with_etcdctl() {
        let cluster = cluster();
        let names = ClusterNames::new("db", "team");
        let release = Release {
            version: Version::new(3, 4, 30),
            image: "gcr.io/etcd-development/etcd:v3.4.30".into(),
        };
        let job = job(&JobInput {
            cluster: &cluster,
            names: &names,
            release: &release,
            ordinal: 0,
            size: 1,
            token: "t",
            sha256: None,
            tools_image: "tools",
            delivery: Delivery::Mounted {
                claim: "backups",
                path: "etcd/team/b/u/1.db",
            },
            revision_bump: Some(1_000_000_000),
            root_password_secret: None,
        });
        let pod = job.spec.and_then(|s| s.template.spec).expect("pod");
        let init = pod.init_containers.expect("init containers");
        assert_eq!(command(&init[1])[0], "etcdctl");
        let fetch = command(&init[0]);
        assert!(!fetch.contains(&"--sha256".to_owned()));
        assert!(!fetch.contains(&"--root-password-file".to_owned()));
        assert!(
            fetch
                .windows(2)
                .any(|w| w == ["--file", "/restore/backup/etcd/team/b/u/1.db"])
        );
        let backup = pod
            .volumes
            .expect("volumes")
            .into_iter()
            .find(|v| v.name == "backup")
            .and_then(|v| v.persistent_volume_claim)
            .expect("the backup's claim");
        assert_eq!(
            (backup.claim_name.as_str(), backup.read_only),
            ("backups", Some(true))
        );
    }

    #[test]
    fn the_claim_is_the_templates_and_marked_pending() {
        let cluster = cluster();
        let names = ClusterNames::new("db", "team");
        let claim = claim(&cluster, &names, 2, "bucket/key");
        assert_eq!(claim.metadata.name.as_deref(), Some("data-db-2"));
        let annotations = claim.metadata.annotations.expect("annotations");
        assert_eq!(annotations[RESTORE_STATE_ANNOTATION], "pending");
        assert_eq!(annotations[RESTORE_ANNOTATION], "bucket/key");
        assert!(claim.metadata.owner_references.is_none());
        assert_eq!(
            claim.spec,
            cluster.spec.storage.as_ref().map(data_claim_spec)
        );
    }

    #[test]
    fn the_url_is_only_in_the_secrets_data() {
        let cluster = cluster();
        let names = ClusterNames::new("db", "team");
        let secret = source_secret(
            &cluster,
            &names,
            "oss://b/k",
            SourceContent::SignedUrl {
                url: "https://b.example/k?Signature=s3cr3t",
                expires: jiff::Timestamp::UNIX_EPOCH,
            },
            None,
        );
        let meta = serde_json::to_string(&secret.metadata).expect("json");
        assert!(!meta.contains("s3cr3t"));
    }

    #[test]
    fn only_a_claim_no_two_nodes_may_mount_at_once_needs_the_server() {
        let modes = |m: &[&str]| m.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert!(needs_server(&modes(&["ReadWriteOnce"])));
        assert!(needs_server(&modes(&["ReadWriteOncePod"])));
        assert!(needs_server(&[]), "unknown modes: the safe way");
        assert!(!needs_server(&modes(&["ReadWriteOnce", "ReadOnlyMany"])));
        assert!(!needs_server(&modes(&["ReadWriteMany"])));
    }

    #[test]
    fn a_served_snapshot_is_fetched_from_the_server_which_alone_mounts_the_claim() {
        let cluster = cluster();
        let names = ClusterNames::new("db", "team");
        let served = ServedSource {
            ca_pem: "CA".into(),
            cert_pem: "CERT".into(),
            key_pem: "KEY".into(),
            token: "t0k3n".into(),
        };
        let secret = source_secret(
            &cluster,
            &names,
            "pvc://backups/etcd/1.db",
            SourceContent::Served(&served),
            Some("ab"),
        );
        let data = secret.string_data.clone().expect("data");
        assert_eq!(
            data[URL_KEY],
            "https://source.db-restore-source.team.svc:8443/snapshot?token=t0k3n"
        );
        assert_eq!(
            secret.metadata.annotations.as_ref().expect("annotations")[DELIVERY_ANNOTATION],
            "served"
        );
        let meta = serde_json::to_string(&secret.metadata).expect("json");
        assert!(!meta.contains("t0k3n") && !meta.contains("KEY"));

        // The server: the claim read-only, the token and its key; a name under its Service.
        let server = source_server_job(&cluster, &names, "tools", "backups", "etcd/1.db");
        assert_eq!(server.metadata.name.as_deref(), Some("db-restore-source"));
        let pod = server.spec.and_then(|s| s.template.spec).expect("pod");
        assert_eq!(
            (pod.hostname.as_deref(), pod.subdomain.as_deref()),
            (Some("source"), Some("db-restore-source"))
        );
        let serve = command(&pod.containers[0]);
        assert_eq!(&serve[..3], ["ferroplane", "etcd-restore", "serve"]);
        assert!(
            serve
                .windows(2)
                .any(|w| w == ["--file", "/restore/backup/etcd/1.db"])
        );
        let volumes = pod.volumes.expect("volumes");
        let claim = volumes
            .iter()
            .find_map(|v| v.persistent_volume_claim.as_ref())
            .expect("the backup's claim");
        assert_eq!(
            (claim.claim_name.as_str(), claim.read_only),
            ("backups", Some(true))
        );
        let items = |v: &Volume| -> Vec<String> {
            v.secret
                .iter()
                .flat_map(|s| s.items.iter().flatten())
                .map(|i| i.key.clone())
                .collect()
        };
        let server_keys: Vec<String> = volumes.iter().flat_map(items).collect();
        assert_eq!(server_keys, [TOKEN_KEY, CERT_KEY, KEY_KEY]);
        let probe = pod.containers[0].readiness_probe.as_ref().expect("probe");
        assert_eq!(
            probe.http_get.as_ref().and_then(|g| g.scheme.as_deref()),
            Some("HTTPS")
        );
        let service = source_service(&cluster, &names);
        let spec = service.spec.expect("spec");
        assert_eq!(spec.cluster_ip.as_deref(), Some("None"));
        let template_labels = server_labels(&names);
        assert!(
            spec.selector
                .expect("selector")
                .iter()
                .all(|(k, v)| template_labels.get(k) == Some(v)),
            "the Service selects the server's pod"
        );

        // A member: the URL and the CA, no claim of the backup, no key, no token file.
        let release = Release {
            version: Version::new(3, 5, 35),
            image: "etcd:v3.5.35".into(),
        };
        let member = job(&JobInput {
            cluster: &cluster,
            names: &names,
            release: &release,
            ordinal: 2,
            size: 3,
            token: "t",
            sha256: Some("ab"),
            tools_image: "tools",
            delivery: Delivery::Served,
            revision_bump: None,
            root_password_secret: None,
        });
        let pod = member.spec.and_then(|s| s.template.spec).expect("pod");
        let fetch = command(&pod.init_containers.as_ref().expect("init")[0]);
        assert!(
            fetch
                .windows(2)
                .any(|w| w == ["--url-file", "/restore/source/url"])
        );
        assert!(
            fetch
                .windows(2)
                .any(|w| w == ["--ca-file", "/restore/source/ca.crt"])
        );
        let volumes = pod.volumes.expect("volumes");
        let claims: Vec<&str> = volumes
            .iter()
            .filter_map(|v| v.persistent_volume_claim.as_ref())
            .map(|c| c.claim_name.as_str())
            .collect();
        assert_eq!(claims, ["data-db-2"], "only its own volume");
        let member_keys: Vec<String> = volumes.iter().flat_map(items).collect();
        assert_eq!(member_keys, [URL_KEY, CA_KEY]);
    }

    fn server_labels(names: &ClusterNames) -> BTreeMap<String, String> {
        let cluster = cluster();
        source_server_job(&cluster, names, "tools", "c", "p")
            .spec
            .and_then(|s| s.template.metadata)
            .and_then(|m| m.labels)
            .expect("labels")
    }
}
