//! Group `etcd.ferroplane.io`: `EtcdCluster`, an etcd cluster run inside the Kubernetes cluster.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, ResourceRequirements, Toleration, TopologySpreadConstraint,
};
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::Condition;
use crate::managed_kind::managed_spec;

mod options;

pub use self::options::{
    ETCD_OPTIONS, EtcdOption, EtcdOptionType, MAX_ELECTION_TIMEOUT_MS, RESERVED_OPTIONS,
    etcd_option, is_reserved_option,
};

/// The etcd version used when neither `version` nor `image` says otherwise.
pub const DEFAULT_ETCD_VERSION: &str = "3.5.17";

managed_spec! {
    columns: [
        printcolumn(name = "SIZE", type_ = "integer", json_path = ".spec.size"),
        printcolumn(name = "MEMBERS", type_ = "integer", json_path = ".status.readyMembers"),
        printcolumn(name = "PHASE", type_ = "string", json_path = ".status.phase"),
        printcolumn(
            name = "ENDPOINT",
            type_ = "string",
            json_path = ".status.clientEndpoint",
            priority = 1
        ),
    ];
    /// An etcd cluster of `size` members: a StatefulSet, a headless peer Service, a client Service
    /// and a PodDisruptionBudget that keeps quorum.
    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
    #[kube(
        group = "etcd.ferroplane.io",
        version = "v1alpha1",
        kind = "EtcdCluster",
        plural = "etcdclusters",
        singular = "etcdcluster",
        status = "EtcdClusterStatus",
        shortname = "etcd",
        scale(
            spec_replicas_path = ".spec.size",
            status_replicas_path = ".status.readyMembers",
            label_selector_path = ".status.selector"
        ),
        doc = "An etcd cluster run in this namespace: ferroplane renders a StatefulSet, a headless peer Service, a client Service and a PodDisruptionBudget, and changes membership one member at a time when the size changes."
    )]
    #[serde(rename_all = "camelCase")]
    #[x_kube(validation = Rule::new("!has(oldSelf.storage) == !has(self.storage)").message("storage cannot be added or removed after creation"))]
    #[x_kube(validation = Rule::new("!has(oldSelf.tls) == !has(self.tls)").message("tls cannot be added or removed after creation: the members' peer and client URLs change scheme; create a new cluster"))]
    #[x_kube(validation = Rule::new("has(oldSelf.restore) == has(self.restore) && (!has(self.restore) || oldSelf.restore == self.restore)").message("restore cannot be added, changed or removed after creation: it bootstraps a new cluster; create a new EtcdCluster to restore another snapshot"))]
    #[x_kube(validation = Rule::new("!has(self.restore) || has(self.storage)").message("restore needs storage: the snapshot is restored into the members' volumes before they start"))]
    pub struct EtcdClusterSpec {
        /// `Delete` removes the StatefulSet, Services and PodDisruptionBudget with this object;
        /// `Orphan` leaves them running (their owner references are removed).
        deletion_policy,
        management_policies,
        /// When set, ferroplane writes the client endpoint (`endpoints`) to this Secret.
        write_connection_secret_to_ref,
        /// Number of members, 1 to 9. Use an odd number: an even size tolerates no more failures
        /// than the odd size below it. Members are added and removed one at a time.
        #[serde(default = "default_size")]
        #[schemars(range(min = 1, max = 9))]
        pub size: i32,
        /// etcd version, e.g. `3.5.17` (default). Changes are judged against the version the
        /// members report: an upgrade may not skip a minor version and a minor downgrade is
        /// refused. From 3.5 to 3.6, etcd's published path: upgrade to 3.5.26 or later first,
        /// wait for every member to be healthy, then to 3.6 (3.5.25 and earlier can bring
        /// removed members back as zombies in 3.6; 3.5.26 repairs its membership on start). A
        /// 3.6 rollout starts only once every member is a healthy voter on 3.5.26 or later.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(regex(pattern = r"^3\.[0-9]+\.[0-9]+$"))]
        pub version: Option<String>,
        /// Container image; defaults to `gcr.io/etcd-development/etcd:v<version>`. Its tag must be
        /// the etcd version when both are set.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(length(min = 1, max = 512))]
        pub image: Option<String>,
        /// Persistent storage per member. Without it members keep data in an emptyDir and a
        /// restarted pod rejoins as a new member.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub storage: Option<EtcdStorage>,
        /// CPU and memory requests and limits of each member.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub resources: Option<ResourceRequirements>,
        /// Whether ferroplane may replace a member whose pod keeps crashing: remove it from etcd
        /// and let it rejoin with an empty volume, only while the other members keep quorum. Off by
        /// default: a crash loop (an OOM, a bad image) looks the same as lost data from outside,
        /// and the member's data may be the only healthy copy; the member is reported in the
        /// `Degraded` condition (reason `MemberFlapping`) instead. A member whose data volume was
        /// lost is replaced either way.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        pub replace_failed_members: bool,
        /// Extra etcd configuration: entries of etcd's configuration file, named like its flags
        /// without `--` (`quota-backend-bytes: 4294967296`, `auto-compaction-retention: "30m"`,
        /// `enable-pprof: "true"`, `grpc-keepalive-timeout: "20s"`), each checked against the
        /// type etcd reads: whole numbers unquoted and within etcd's range, booleans as the
        /// strings "true" or "false", durations as Go durations ("500ms", "1m30s") or
        /// nanoseconds, words such as `log-level` among those etcd knows. A value etcd would
        /// refuse, an unknown entry, or an entry ferroplane sets itself (names, URLs, the data
        /// directory, bootstrap and TLS settings) is refused, and nothing rolls. Each overrides a
        /// default: periodic auto-compaction keeping one hour, and a space quota of half the
        /// volume (at most 8 GiB; 2 GiB without `storage`). A change restarts the members one at
        /// a time.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        #[schemars(schema_with = "options_schema")]
        pub options: BTreeMap<String, serde_json::Value>,
        /// Where members run: node selection, affinity (default: members prefer different
        /// nodes), topology spread, tolerations and priority.
        #[serde(default, skip_serializing_if = "EtcdScheduling::is_empty")]
        pub scheduling: EtcdScheduling,
        /// TLS of the members' peer and client traffic, with client certificates required on both.
        /// With `tls: {}` ferroplane makes a CA and the certificates (Secrets `<name>-tls-ca`,
        /// `-peer`, `-server`, `-client`, which it owns: the certificates are renewed 30 days
        /// before they expire, the CA rotated before it does, the members restarted one at a time
        /// to trust the new one); otherwise all three Secrets are given. Cannot be added or removed
        /// after creation.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub tls: Option<EtcdTls>,
        /// Labels and annotations added to every member pod (e.g. for a service mesh or a
        /// backup agent). The labels ferroplane selects pods by cannot be set here.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub pod_metadata: Option<EtcdPodMetadata>,
        /// etcd authentication with the user `root`, whose password is the key `password` of a
        /// Secret in this namespace. May be added to a running cluster (ferroplane creates root and
        /// enables authentication) and removed (ferroplane disables authentication; root stays).
        /// Changing the Secret's password changes root's; ferroplane keeps the password in effect
        /// in a Secret of its own, `<name>-auth`, to authenticate until the change is made.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub auth: Option<EtcdAuth>,
        /// Bootstraps the new cluster from a snapshot instead of empty: before any member starts,
        /// ferroplane creates the members' volumes and restores the snapshot into each (a Job per
        /// member: the snapshot fetched through a short-lived signed URL and its SHA-256 checked,
        /// then `etcdutl snapshot restore`). Needs `storage`; set at creation only. Volumes left by
        /// an earlier cluster of the same name are never overwritten: the restore waits, reported
        /// in the `Synced` condition, until they are deleted.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub restore: Option<EtcdRestore>,
        /// What ferroplane does when a majority of the voting members is lost for good: their
        /// volumes gone (deleted, or replaced by a new empty claim) while they do not answer,
        /// for longer than `gracePeriodSeconds`. A member that is merely unreachable and keeps
        /// its volume never counts (a network split heals). The loss is reported as
        /// `Ready=False`, reason `QuorumLost`; with `policy: Manual` (default) ferroplane then
        /// waits for the annotation `etcd.ferroplane.io/recover-from: <EtcdBackup>[/<key>]`;
        /// with `FromLatestBackup` it restores the newest snapshot of this cluster's
        /// EtcdBackups. Needs `storage`.
        #[serde(default, skip_serializing_if = "EtcdRecovery::is_default")]
        pub recovery: EtcdRecovery,
    }
}

/// Quorum-loss recovery (see [`EtcdClusterSpec::recovery`]).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EtcdRecovery {
    /// `Manual` (default): report the loss and wait for the `etcd.ferroplane.io/recover-from`
    /// annotation. `FromLatestBackup`: restore the newest successful snapshot of an EtcdBackup
    /// of this cluster into every member, under the same Services and client endpoint.
    #[serde(default)]
    pub policy: RecoveryPolicy,
    /// How long a majority of voters must have been lost before the loss counts as permanent
    /// (default 300, at least 10).
    #[serde(default = "default_grace_period_seconds")]
    #[schemars(range(min = 10, max = 86400))]
    pub grace_period_seconds: i64,
}

impl Default for EtcdRecovery {
    fn default() -> Self {
        Self {
            policy: RecoveryPolicy::default(),
            grace_period_seconds: default_grace_period_seconds(),
        }
    }
}

impl EtcdRecovery {
    pub fn is_default(&self) -> bool {
        self == &Self::default()
    }
}

fn default_grace_period_seconds() -> i64 {
    300
}

/// What follows a permanent loss of quorum.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum RecoveryPolicy {
    /// Report and wait for the `etcd.ferroplane.io/recover-from` annotation.
    #[default]
    Manual,
    /// Restore the newest successful snapshot of this cluster's EtcdBackups.
    FromLatestBackup,
}

/// etcd authentication (see [`EtcdClusterSpec::auth`]).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EtcdAuth {
    /// The Secret whose key `password` is root's password (non-empty). ferroplane reads it
    /// only.
    pub root_secret_ref: EtcdSecretReference,
}

/// Where the snapshot of a restore comes from.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EtcdRestore {
    pub from: EtcdRestoreSource,
}

/// An EtcdBackup of this namespace, an object in an OSS bucket, or a file in a claim: exactly
/// one.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("[has(self.backupRef), has(self.oss), has(self.pvc)].filter(x, x).size() == 1").message("give exactly one of backupRef, oss and pvc"))]
pub struct EtcdRestoreSource {
    /// A snapshot an EtcdBackup of this namespace lists in its status, read with the backup's
    /// destination and credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backup_ref: Option<EtcdBackupSnapshotReference>,
    /// An object in an OSS bucket (a snapshot file as `etcdctl snapshot save` or EtcdBackup
    /// writes it), e.g. one kept after its EtcdBackup was deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oss: Option<OssSnapshotObject>,
    /// A snapshot file in a PersistentVolumeClaim of this namespace (as an EtcdBackup into a
    /// volume writes it), mounted read-only by the restore Jobs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pvc: Option<PvcSnapshotFile>,
}

/// A file in a claim.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("!self.key.contains('..')").message("key is a path inside the volume: no '..'"))]
pub struct PvcSnapshotFile {
    /// Name of the PersistentVolumeClaim, in this namespace.
    #[schemars(length(min = 1, max = 253))]
    pub claim_name: String,
    /// The file's path in the volume, e.g. `etcd/team/nightly/<uid>/20261126T030000.000Z.db`.
    #[schemars(length(min = 1, max = 1024), regex(pattern = r"^[^/].*\.db$"))]
    pub key: String,
}

/// A snapshot of an EtcdBackup.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EtcdBackupSnapshotReference {
    /// Name of the EtcdBackup, in this namespace.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// The snapshot's key, as in the backup's `status.snapshots`; the newest when unset (chosen
    /// once, when the restore starts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1024))]
    pub key: Option<String>,
}

/// An object in an OSS bucket.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OssSnapshotObject {
    #[schemars(
        length(min = 3, max = 63),
        regex(pattern = r"^[a-z0-9][a-z0-9-]*[a-z0-9]$")
    )]
    pub bucket: String,
    /// The object's name.
    #[schemars(length(min = 1, max = 1024))]
    pub key: String,
    /// The bucket's region, e.g. `cn-hangzhou`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub region: Option<String>,
    /// The OSS endpoint, when not the region's public one (see EtcdBackup's destination).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub endpoint: Option<String>,
    /// The ProviderConfig (this namespace) or ClusterProviderConfig whose credentials read the
    /// bucket.
    #[serde(default)]
    pub provider_config_ref: crate::common::ProviderConfigReference,
}

/// TLS Secrets of a cluster: all three, or none for certificates ferroplane makes.
///
/// Each is a `kubernetes.io/tls` Secret with `tls.crt`, `tls.key` and `ca.crt` (the CA that
/// signed the other side's certificates).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(self.peerSecretRef) == has(self.serverSecretRef) && has(self.serverSecretRef) == has(self.clientSecretRef)").message("give all of peerSecretRef, serverSecretRef and clientSecretRef, or none of them to let ferroplane make the certificates"))]
pub struct EtcdTls {
    /// The certificate members present to each other, for server and client authentication,
    /// valid for `*.<name>.<namespace>.svc`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_secret_ref: Option<EtcdSecretReference>,
    /// The certificate of the client port, valid for `<name>-client.<namespace>.svc` and
    /// `*.<name>.<namespace>.svc`; it needs client authentication too (etcd's gateway dials
    /// its own gRPC server with it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_secret_ref: Option<EtcdSecretReference>,
    /// The client certificate ferroplane uses for membership, status and backups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret_ref: Option<EtcdSecretReference>,
}

/// A Secret in the EtcdCluster's namespace, given by the user (ferroplane reads it only).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EtcdSecretReference {
    /// Name of the Secret.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
}

/// A map of option name to an integer or a string, with the rules of [`options`]. Not "any
/// value": the API server builds CEL types for the map and has none for an untyped value;
/// booleans travel as "true"/"false" and are written to the file as booleans.
fn options_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "maxProperties": 64,
        "additionalProperties": {"x-kubernetes-int-or-string": true},
        "x-kubernetes-validations": options::admission_rules(),
    })
}

/// Scheduling of the member pods.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct EtcdScheduling {
    /// Nodes the members may run on, by label.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<String, String>,
    /// Affinity of the member pods. When unset, members prefer nodes no other member of this
    /// cluster runs on (losing one node then loses one member).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<Affinity>,
    /// Topology spread constraints; one without a `labelSelector` applies to this cluster's
    /// members.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub topology_spread_constraints: Vec<TopologySpreadConstraint>,
    /// Tolerations of the member pods.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Toleration>,
    /// PriorityClass of the member pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_class_name: Option<String>,
}

impl EtcdScheduling {
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }
}

/// Metadata added to every member pod.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("!has(self.labels) || self.labels.all(k, !(k in ['app.kubernetes.io/name', 'app.kubernetes.io/instance', 'app.kubernetes.io/managed-by', 'ferroplane.io/uid']))").message("podMetadata.labels may not set app.kubernetes.io/name, app.kubernetes.io/instance, app.kubernetes.io/managed-by or ferroplane.io/uid: ferroplane selects and owns pods by them"))]
pub struct EtcdPodMetadata {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

fn default_size() -> i32 {
    3
}

/// Persistent storage for each member.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct EtcdStorage {
    /// Volume size as a Kubernetes quantity, e.g. `8Gi`. Immutable.
    #[schemars(regex(pattern = r"^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("storage.size is immutable"))]
    pub size: String,
    /// StorageClass of the volumes; the cluster default when unset. Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self == oldSelf").message("storage.storageClassName is immutable"))]
    pub storage_class_name: Option<String>,
}

/// Role of a member in the Raft group.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum MemberRole {
    /// Voting member.
    Voter,
    /// Non-voting member catching up; promoted once it has the leader's log.
    Learner,
}

/// One member of the cluster as etcd reports it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EtcdMember {
    /// Member name (the pod name).
    pub name: String,
    /// Member ID in hexadecimal.
    pub id: String,
    /// Voter or Learner.
    pub role: MemberRole,
    /// Whether the member answered its health check.
    #[serde(default)]
    pub healthy: bool,
}

/// Lifecycle phase of the cluster.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum EtcdPhase {
    Creating,
    Running,
    Scaling,
    Upgrading,
    Degraded,
    Deleting,
}

/// Observed state of an EtcdCluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EtcdClusterStatus {
    /// Members whose pods are ready.
    #[serde(default)]
    pub ready_members: i32,
    /// Members as listed by etcd's membership API.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<EtcdMember>,
    /// Name of the current leader.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leader: Option<String>,
    /// Client URL, `http://<name>-client.<namespace>.svc:2379`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_endpoint: Option<String>,
    /// Creating, Running, Scaling, Upgrading, Degraded or Deleting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<EtcdPhase>,
    /// `Ready`, `Synced`, `Available`, `Progressing` and `Degraded`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<Condition>,
    /// Label selector of the member pods, for the `/scale` subresource (a
    /// HorizontalPodAutoscaler or `kubectl scale` reads it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// The `metadata.generation` last reconciled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// The token of `ferroplane.io/reconcile-requested-at` (or `crossplane.io/…`) the last
    /// reconcile handled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_handled_reconcile_at: Option<String>,
    /// Whether etcd authentication is on, as etcd answers: `Enabled` or `Disabled` (absent
    /// until etcd was asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<EtcdAuthState>,
    /// The restore of `spec.restore`, while and after it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restore: Option<EtcdRestoreStatus>,
    /// The data volume (claim UID) each voting member was last seen healthy on: a voter that
    /// does not answer and whose claim is gone or has another UID has lost its data.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub member_volumes: BTreeMap<String, String>,
    /// A loss of quorum by members whose data is gone, while it lasts and until its recovery
    /// is complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quorum_loss: Option<EtcdQuorumLoss>,
    /// The last completed quorum-loss recovery.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_recovery: Option<EtcdRecoveryRecord>,
}

/// A majority of voting members lost with their data.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EtcdQuorumLoss {
    /// The voting members lost (pod names).
    pub members: Vec<String>,
    /// When ferroplane first saw the loss (RFC 3339); kept across restarts of the controller.
    pub since: String,
    /// The restore replacing every member's data, once started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<EtcdRecoveryRecord>,
}

/// A quorum-loss recovery: the snapshot restored and the data lost.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EtcdRecoveryRecord {
    /// The EtcdBackup whose snapshot is restored.
    pub backup: String,
    /// The snapshot's key, as in the backup's `status.snapshots`.
    pub key: String,
    /// When the snapshot was taken (RFC 3339).
    pub snapshot_taken_at: String,
    /// The writes lost: from the snapshot to the loss of quorum, `<snapshot time> → <loss
    /// time>` (the loss time is when ferroplane first saw it, so some writes just before it may
    /// have failed already).
    pub lost_window: String,
}

/// Whether etcd requires authentication.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum EtcdAuthState {
    Enabled,
    Disabled,
}

/// Progress of a restore.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EtcdRestoreStatus {
    /// The snapshot restored: `oss://<bucket>/<key>` or `pvc://<claim>/<key>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<String>,
    /// SHA-256 of its database (hex), checked before the restore.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Members whose volume holds the restored data.
    #[serde(default)]
    pub restored_members: i32,
    /// Whether every member's volume holds it and the members were started.
    #[serde(default)]
    pub done: bool,
}

crate::impl_managed!(EtcdCluster, in_cluster);
