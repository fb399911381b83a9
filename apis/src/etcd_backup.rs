//! Group `etcd.ferroplane.io`: `EtcdBackup`, snapshots of an EtcdCluster of the same namespace
//! kept in an Alibaba Cloud OSS bucket, on demand or on a schedule.

use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::{
    Condition, DeletionPolicy, LocalSecretReference, Managed, ManagementAction,
    ProviderConfigReference,
};
use crate::managed_kind::managed_spec;

managed_spec! {
    columns: [
        printcolumn(name = "CLUSTER", type_ = "string", json_path = ".spec.clusterRef.name"),
        printcolumn(name = "LAST-SUCCESS", type_ = "date", json_path = ".status.lastSuccessTime"),
        printcolumn(name = "SNAPSHOTS", type_ = "integer", json_path = ".status.snapshotCount"),
    ] external_name_priority = 1;
    /// Snapshots of an EtcdCluster taken through etcd's maintenance API and stored under
    /// `<prefix><namespace>/<name>/<uid>/` in an OSS bucket: one per generation of this object
    /// (edit `spec.trigger` to take another), or one per `schedule` occurrence; the newest `keep`
    /// are kept.
    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
    #[kube(
        group = "etcd.ferroplane.io",
        version = "v1alpha1",
        kind = "EtcdBackup",
        plural = "etcdbackups",
        singular = "etcdbackup",
        status = "EtcdBackupStatus",
        shortname = "etcdbak",
        doc = "Snapshots of an EtcdCluster of this namespace in an OSS bucket, taken on demand (one per generation) or on a cron schedule, the newest `keep` kept."
    )]
    #[serde(rename_all = "camelCase")]
    #[x_kube(validation = Rule::new("self.clusterRef == oldSelf.clusterRef").message("clusterRef is immutable: create another EtcdBackup for another cluster"))]
    #[x_kube(validation = Rule::new("self.destination == oldSelf.destination").message("destination is immutable: the snapshots already taken stay where they are; create another EtcdBackup for another destination"))]
    #[x_kube(validation = Rule::new("!has(self.destination.pvc) || self.deletionPolicy == 'Orphan'").message("a pvc destination keeps its snapshots (deletionPolicy Orphan): the volume is yours; delete the files or the claim yourself"))]
    pub struct EtcdBackupSpec {
        /// What happens to the snapshots this backup took when it is deleted: `Orphan` (the
        /// default) keeps them, `Delete` deletes them.
        deletion_policy = "orphan",
        management_policies,
        /// The EtcdCluster to back up, in this namespace.
        pub cluster_ref: EtcdClusterReference,
        /// Where the snapshots go.
        pub destination: BackupDestination,
        /// A cron expression (five fields, or six with seconds first; UTC) of when to take a
        /// snapshot. Without it, one snapshot is taken per generation of this object.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(length(min = 1, max = 256))]
        pub schedule: Option<String>,
        /// How many of this backup's snapshots to keep: after each snapshot the oldest beyond
        /// this number are deleted.
        #[serde(default = "default_keep")]
        #[schemars(range(min = 1, max = 1000))]
        pub keep: i32,
        /// Free text; change it to take another on-demand snapshot (any spec change does).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(length(max = 253))]
        pub trigger: Option<String>,
    }
}

fn orphan() -> DeletionPolicy {
    DeletionPolicy::Orphan
}

fn default_keep() -> i32 {
    3
}

/// An EtcdCluster of the same namespace (a namespace is a tenant boundary: no namespace field).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct EtcdClusterReference {
    /// Name of the EtcdCluster.
    #[schemars(length(min = 1, max = 63))]
    pub name: String,
}

/// Where snapshots are stored: an OSS bucket or a volume, exactly one.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(self.oss) != has(self.pvc)").message("give exactly one of oss and pvc"))]
pub struct BackupDestination {
    /// An Alibaba Cloud OSS bucket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oss: Option<OssDestination>,
    /// A PersistentVolumeClaim of this namespace: a Job per snapshot (ferroplane's image)
    /// streams it from a member into the volume, prunes the oldest beyond `keep` and reports
    /// what the folder holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pvc: Option<PvcDestination>,
}

impl BackupDestination {
    /// The folder prefix of either kind of destination.
    pub fn prefix(&self) -> &str {
        match (&self.oss, &self.pvc) {
            (Some(oss), _) => &oss.prefix,
            (None, Some(pvc)) => &pvc.prefix,
            (None, None) => "",
        }
    }
}

/// A claim that holds snapshot files.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PvcDestination {
    /// Name of the PersistentVolumeClaim, in this namespace. It must exist; ferroplane never
    /// creates or deletes it. A `ReadWriteOnce` claim in use by another pod makes the Job wait
    /// for it.
    #[schemars(length(min = 1, max = 253))]
    pub claim_name: String,
    /// Directory in the volume, e.g. `etcd/`; files are named
    /// `<prefix><namespace>/<backup name>/<backup uid>/<time>.db`, each with a `.json` beside it
    /// (SHA-256, revision, time, generation).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = 512), regex(pattern = r"^([A-Za-z0-9._-]+/)*$"))]
    pub prefix: String,
}

/// An OSS bucket, written with the credentials of a ProviderConfig.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(self.region) || has(self.endpoint)").message("give region (the endpoint is then https://oss-<region>.aliyuncs.com) or endpoint"))]
pub struct OssDestination {
    /// The bucket, which must exist.
    #[schemars(
        length(min = 3, max = 63),
        regex(pattern = r"^[a-z0-9][a-z0-9-]*[a-z0-9]$")
    )]
    pub bucket: String,
    /// Prefix of the object names, e.g. `etcd/`; objects are named
    /// `<prefix><namespace>/<backup name>/<backup uid>/<time>.db`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = 512))]
    pub prefix: String,
    /// The bucket's region, e.g. `cn-hangzhou`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub region: Option<String>,
    /// The OSS endpoint, when not the region's public one: an `https://*.aliyuncs.com` host
    /// (the bucket is its subdomain) or an endpoint the controller allows (`--allow-endpoint`),
    /// addressed path-style (`<endpoint>/<bucket>/<object>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub endpoint: Option<String>,
    /// The ProviderConfig (this namespace) or ClusterProviderConfig whose credentials write
    /// the bucket.
    #[serde(default)]
    pub provider_config_ref: ProviderConfigReference,
}

/// One snapshot this backup took.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EtcdSnapshot {
    /// The object name in the bucket.
    pub key: String,
    /// Bytes, the 32-byte SHA-256 trailer etcd appends included.
    pub size: i64,
    /// SHA-256 of the database (hex), checked when the snapshot was taken.
    pub sha256: String,
    /// The store revision the member reported just before the snapshot (the snapshot holds at
    /// least this revision).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<i64>,
    /// When the snapshot was taken (RFC 3339).
    pub taken_at: String,
    /// The generation of this EtcdBackup the snapshot was taken for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
}

/// Observed state of an EtcdBackup.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EtcdBackupStatus {
    /// The snapshots kept, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub snapshots: Vec<EtcdSnapshot>,
    /// How many snapshots are kept.
    #[serde(default)]
    pub snapshot_count: i32,
    /// When the newest snapshot was taken. A failure shows in the `Synced` condition (reason
    /// and message) and a Warning event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_success_time: Option<String>,
    /// When the schedule takes the next snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_schedule_time: Option<String>,
    /// `Ready` and `Synced`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<Condition>,
    /// The `metadata.generation` last reconciled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// The token of `ferroplane.io/reconcile-requested-at` (or `crossplane.io/…`) the last
    /// reconcile handled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_handled_reconcile_at: Option<String>,
}

impl Managed for EtcdBackup {
    fn deletion_policy(&self) -> DeletionPolicy {
        self.spec.deletion_policy
    }
    fn management_policies(&self) -> &[ManagementAction] {
        &self.spec.management_policies
    }
    fn provider_config_ref(&self) -> Option<&ProviderConfigReference> {
        self.spec
            .destination
            .oss
            .as_ref()
            .map(|oss| &oss.provider_config_ref)
    }
    fn write_connection_secret_to_ref(&self) -> Option<&LocalSecretReference> {
        None
    }
    fn conditions(&self) -> &[Condition] {
        self.status
            .as_ref()
            .map(|s| s.conditions.as_slice())
            .unwrap_or_default()
    }
    fn observed_generation(&self) -> Option<i64> {
        self.status.as_ref().and_then(|s| s.observed_generation)
    }
}

impl crate::references::HasReferences for EtcdBackup {}
