//! EtcdBackup into a PersistentVolumeClaim. The controller cannot write into a volume, so each
//! snapshot is a Job (ferroplane's image, `ferroplane etcd-snapshot save`) that mounts the claim
//! and, with the cluster's client certificate when it has TLS, streams a snapshot from the
//! first member that answers into `<folder><time>.db` (written aside, checked, then renamed),
//! writes its metadata beside it, deletes the oldest beyond `keep`, and reports what the folder
//! holds as its termination message ([`JobReport`]). The status is that report; between Jobs it
//! is the record of the folder (the next Job's report corrects it, whatever happened since).
//!
//! One Job per occurrence (a generation without a schedule, a scheduled time with one), named
//! after it, so a crash never starts a second one for the same occurrence. A Job that succeeded
//! is recorded and deleted; one that failed stays, for its logs, and is reported until deleted.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use ferroplane_apis::etcd::EtcdCluster;
use ferroplane_apis::etcd_backup::EtcdBackup;
use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{
    Container, PersistentVolumeClaimVolumeSource, PodSpec, PodTemplateSpec, SecretVolumeSource,
    SecurityContext, Volume, VolumeMount,
};
use kube::Resource;
use kube::api::ObjectMeta;
use serde::{Deserialize, Serialize};

use super::plan::{SnapshotMeta, Stored};
use crate::names::{APP_NAME_LABEL, ClusterNames};

/// Label of a backup's Jobs: the backup's UID.
pub const BACKUP_UID_LABEL: &str = "etcd.ferroplane.io/backup-uid";
/// Where the Job's container writes its report: the kubelet reads it into the terminated
/// state's message (at most 4096 bytes).
pub const REPORT_PATH: &str = "/dev/termination-log";
/// The most bytes of a termination message a kubelet keeps.
pub const REPORT_LIMIT: usize = 4096;
const VOLUME_MOUNT: &str = "/backup";
const TLS_MOUNT: &str = "/etc/etcd-client-tls";
const AUTH_MOUNT: &str = "/etc/etcd-auth";
/// A failed snapshot is tried this often (a new pod each time) before the Job fails.
const BACKOFF_LIMIT: i32 = 2;

/// One snapshot as a Job reports it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ReportedSnapshot {
    pub key: String,
    pub size: u64,
    pub sha256: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<i64>,
    pub taken_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
}

impl ReportedSnapshot {
    pub fn stored(&self) -> Stored {
        Stored {
            key: self.key.clone(),
            size: self.size,
            meta: self.taken_at.parse().ok().map(|taken_at| SnapshotMeta {
                sha256: self.sha256.clone(),
                revision: self.revision,
                taken_at,
                generation: self.generation,
            }),
        }
    }
}

/// What a snapshot Job reports: the snapshot it took, the folder after pruning (newest first,
/// as many as fit the termination message), and what it deleted.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct JobReport {
    pub taken: ReportedSnapshot,
    pub kept: Vec<ReportedSnapshot>,
    #[serde(default)]
    pub pruned: Vec<String>,
}

impl JobReport {
    /// The report as JSON within [`REPORT_LIMIT`]: the oldest kept entries are left out when
    /// the folder's listing does not fit (the newest, the one taken first among them, stay).
    pub fn to_message(&self) -> String {
        let mut report = self.clone();
        loop {
            let text = serde_json::to_string(&report).unwrap_or_default();
            if text.len() <= REPORT_LIMIT || report.kept.len() <= 1 {
                return text;
            }
            report.kept.pop();
            report.pruned.clear();
        }
    }
}

/// The Job of one occurrence of `backup` (`g<generation>`, or a scheduled time).
pub fn job_name(backup: &EtcdBackup, occurrence: &str) -> String {
    let mut hasher = DefaultHasher::new();
    backup.metadata.uid.hash(&mut hasher);
    occurrence.hash(&mut hasher);
    let name: String = backup
        .metadata
        .name
        .clone()
        .unwrap_or_default()
        .chars()
        .take(40)
        .collect();
    format!(
        "{}-snap-{:08x}",
        name.trim_end_matches(['-', '.']),
        hasher.finish() as u32
    )
}

/// What a snapshot Job needs.
pub struct JobInput<'a> {
    pub backup: &'a EtcdBackup,
    pub cluster: &'a EtcdCluster,
    pub names: &'a ClusterNames,
    pub claim: &'a str,
    pub folder: &'a str,
    pub occurrence: &'a str,
    pub keep: usize,
    /// The client certificate's Secret, for a TLS cluster.
    pub client_tls_secret: Option<&'a str>,
    /// Secrets whose `password` may be root's, tried in order, for a cluster with auth (the
    /// password ferroplane set last, then the user's); mounted optional: the first may not
    /// exist yet.
    pub auth_secrets: &'a [String],
    pub tools_image: &'a str,
}

/// The snapshot Job of one occurrence.
pub fn job(input: &JobInput<'_>) -> Job {
    let backup = input.backup;
    let uid = backup.metadata.uid.clone().unwrap_or_default();
    let size = u32::try_from(input.cluster.spec.size).unwrap_or(1);
    let mut command: Vec<String> = ["ferroplane", "etcd-snapshot", "save"]
        .map(str::to_owned)
        .to_vec();
    for ordinal in 0..size {
        command.push("--endpoint".into());
        command.push(input.names.member_client_url(ordinal));
    }
    command.extend([
        "--root".to_owned(),
        VOLUME_MOUNT.to_owned(),
        "--folder".to_owned(),
        input.folder.to_owned(),
        "--keep".to_owned(),
        input.keep.to_string(),
        "--report-file".to_owned(),
        REPORT_PATH.to_owned(),
    ]);
    if let Some(generation) = backup.metadata.generation {
        command.extend(["--generation".to_owned(), generation.to_string()]);
    }
    let mut mounts = vec![VolumeMount {
        name: "backup".into(),
        mount_path: VOLUME_MOUNT.into(),
        ..VolumeMount::default()
    }];
    let mut volumes = vec![Volume {
        name: "backup".into(),
        persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
            claim_name: input.claim.to_owned(),
            ..PersistentVolumeClaimVolumeSource::default()
        }),
        ..Volume::default()
    }];
    if let Some(secret) = input.client_tls_secret {
        command.extend(["--tls-dir".to_owned(), TLS_MOUNT.to_owned()]);
        mounts.push(VolumeMount {
            name: "client-tls".into(),
            mount_path: TLS_MOUNT.into(),
            read_only: Some(true),
            ..VolumeMount::default()
        });
        volumes.push(Volume {
            name: "client-tls".into(),
            secret: Some(SecretVolumeSource {
                secret_name: Some(secret.to_owned()),
                ..SecretVolumeSource::default()
            }),
            ..Volume::default()
        });
    }
    for (i, secret) in input.auth_secrets.iter().enumerate() {
        let name = format!("auth-{i}");
        let dir = format!("{AUTH_MOUNT}/{i}");
        command.extend(["--password-file".to_owned(), format!("{dir}/password")]);
        mounts.push(VolumeMount {
            name: name.clone(),
            mount_path: dir,
            read_only: Some(true),
            ..VolumeMount::default()
        });
        volumes.push(Volume {
            name,
            secret: Some(SecretVolumeSource {
                secret_name: Some(secret.clone()),
                optional: Some(true),
                ..SecretVolumeSource::default()
            }),
            ..Volume::default()
        });
    }
    let labels = BTreeMap::from([
        (APP_NAME_LABEL.0.to_owned(), APP_NAME_LABEL.1.to_owned()),
        (BACKUP_UID_LABEL.to_owned(), uid),
    ]);
    Job {
        metadata: ObjectMeta {
            name: Some(job_name(backup, input.occurrence)),
            namespace: backup.metadata.namespace.clone(),
            labels: Some(labels.clone()),
            annotations: Some(BTreeMap::from([(
                "etcd.ferroplane.io/occurrence".to_owned(),
                input.occurrence.to_owned(),
            )])),
            owner_references: backup.controller_owner_ref(&()).map(|o| vec![o]),
            ..ObjectMeta::default()
        },
        spec: Some(JobSpec {
            backoff_limit: Some(BACKOFF_LIMIT),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    restart_policy: Some("Never".into()),
                    containers: vec![Container {
                        name: "snapshot".into(),
                        image: Some(input.tools_image.to_owned()),
                        command: Some(command),
                        volume_mounts: Some(mounts),
                        termination_message_path: Some(REPORT_PATH.into()),
                        termination_message_policy: Some("FallbackToLogsOnError".into()),
                        // Writes into a volume whose files the members' root-run tools may
                        // share; the same user as etcd's image.
                        security_context: Some(SecurityContext {
                            run_as_user: Some(0),
                            run_as_non_root: Some(false),
                            ..SecurityContext::default()
                        }),
                        ..Container::default()
                    }],
                    volumes: Some(volumes),
                    ..PodSpec::default()
                }),
            },
            ..JobSpec::default()
        }),
        status: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reported(i: u32) -> ReportedSnapshot {
        ReportedSnapshot {
            key: format!("etcd/team/nightly/0123456789abcdef/2026112{i}T030000.000Z.db"),
            size: 1 << 20,
            sha256: "ab".repeat(32),
            revision: Some(123_456),
            taken_at: "2026-11-26T03:00:00Z".into(),
            generation: Some(4),
        }
    }

    #[test]
    fn a_report_fits_a_termination_message_keeping_the_newest() {
        let report = JobReport {
            taken: reported(0),
            kept: (0..100).map(reported).collect(),
            pruned: vec!["old".into()],
        };
        let message = report.to_message();
        assert!(message.len() <= REPORT_LIMIT);
        let back: JobReport = serde_json::from_str(&message).expect("JSON");
        assert_eq!(back.kept[0], reported(0));
        assert!(back.kept.len() > 5 && back.kept.len() < 100);
        let small = JobReport {
            taken: reported(0),
            kept: vec![reported(0)],
            pruned: Vec::new(),
        };
        assert_eq!(
            serde_json::from_str::<JobReport>(&small.to_message()).expect("JSON"),
            small
        );
    }

    #[test]
    fn one_job_name_per_occurrence() {
        let mut backup: EtcdBackup = serde_json::from_value(serde_json::json!({
            "apiVersion": "etcd.ferroplane.io/v1alpha1", "kind": "EtcdBackup",
            "metadata": {"name": "a-rather-long-backup-name-that-goes-on-and-on-and-on", "uid": "u1", "namespace": "n"},
            "spec": {"clusterRef": {"name": "c"}, "destination": {"pvc": {"claimName": "b"}}}
        }))
        .expect("a backup");
        let a = job_name(&backup, "g1");
        assert_eq!(a, job_name(&backup, "g1"));
        assert_ne!(a, job_name(&backup, "g2"));
        assert!(a.len() <= 63, "{a}");
        backup.metadata.uid = Some("u2".into());
        assert_ne!(
            a,
            job_name(&backup, "g1"),
            "a re-created backup has Jobs of its own"
        );
    }
}
