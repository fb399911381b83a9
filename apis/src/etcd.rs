//! Group `etcd.ferroplane.io`: `EtcdCluster`, an etcd cluster run inside the Kubernetes cluster.

use k8s_openapi::api::core::v1::ResourceRequirements;
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::{
    Condition, DeletionPolicy, LocalSecretReference, ManagementAction, default_management_policies,
};

/// The etcd version used when neither `version` nor `image` says otherwise.
pub const DEFAULT_ETCD_VERSION: &str = "3.5.17";

/// An etcd cluster of `size` members: a StatefulSet, a headless peer Service, a client Service
/// and a PodDisruptionBudget that keeps quorum.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[kube(
    group = "etcd.ferroplane.io",
    version = "v1alpha1",
    kind = "EtcdCluster",
    plural = "etcdclusters",
    singular = "etcdcluster",
    namespaced,
    status = "EtcdClusterStatus",
    shortname = "etcd",
    category = "ferroplane",
    category = "managed",
    doc = "An etcd cluster run in this namespace: ferroplane renders a StatefulSet, a headless peer Service, a client Service and a PodDisruptionBudget, and changes membership one member at a time when the size changes.",
    printcolumn(
        name = "READY",
        type_ = "string",
        json_path = ".status.conditions[?(@.type=='Ready')].status"
    ),
    printcolumn(
        name = "SYNCED",
        type_ = "string",
        json_path = ".status.conditions[?(@.type=='Synced')].status"
    ),
    printcolumn(
        name = "EXTERNAL-NAME",
        type_ = "string",
        json_path = ".metadata.annotations.ferroplane\\.io/external-name"
    ),
    printcolumn(name = "SIZE", type_ = "integer", json_path = ".spec.size"),
    printcolumn(
        name = "MEMBERS",
        type_ = "integer",
        json_path = ".status.readyMembers"
    ),
    printcolumn(name = "PHASE", type_ = "string", json_path = ".status.phase"),
    printcolumn(
        name = "ENDPOINT",
        type_ = "string",
        json_path = ".status.clientEndpoint",
        priority = 1
    ),
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("!has(oldSelf.storage) == !has(self.storage)").message("storage cannot be added or removed after creation"))]
pub struct EtcdClusterSpec {
    /// `Delete` removes the StatefulSet, Services and PodDisruptionBudget with this object;
    /// `Orphan` leaves them running (their owner references are removed).
    #[serde(default)]
    pub deletion_policy: DeletionPolicy,
    /// What ferroplane may do: any of Observe, Create, Update, Delete, LateInitialize, or `*`.
    #[serde(default = "default_management_policies")]
    #[schemars(length(min = 1, max = 6), extend("x-kubernetes-list-type" = "set"))]
    pub management_policies: Vec<ManagementAction>,
    /// When set, ferroplane writes the client endpoint (`endpoints`) to this Secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_connection_secret_to_ref: Option<LocalSecretReference>,
    /// Number of members, 1 to 9. Use an odd number: an even size tolerates no more failures
    /// than the odd size below it. Members are added and removed one at a time.
    #[serde(default = "default_size")]
    #[schemars(range(min = 1, max = 9))]
    pub size: i32,
    /// etcd version, e.g. `3.5.17` (default). Changes are judged against the version the
    /// members report: an upgrade may not skip a minor version, 3.5 moves to 3.6 only from
    /// 3.5.24 or later (etcd's documented path), and a minor downgrade is refused.
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
    /// default: a crash loop (an OOM, a bad image) looks the same as lost data from outside, and
    /// the member's data may be the only healthy copy; the member is reported in the `Degraded`
    /// condition (reason `MemberFlapping`) instead.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replace_failed_members: bool,
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
    /// The `metadata.generation` last reconciled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

crate::impl_managed!(EtcdCluster, in_cluster);
