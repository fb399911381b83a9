//! Spec and status fields shared by every managed kind, so users learn them once. A kind's spec
//! gets the shared fields from `managed_spec!` (in `managed_kind`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What happens to the external resource when the Kubernetes object is deleted.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum DeletionPolicy {
    /// Delete the external resource together with the object.
    #[default]
    Delete,
    /// Leave the external resource in place; only the Kubernetes object goes.
    Orphan,
}

/// One action ferroplane may take on the external resource. `*` stands for all of them.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, JsonSchema,
)]
pub enum ManagementAction {
    /// Every action below.
    #[serde(rename = "*")]
    All,
    /// Read the external resource and report it in status.
    Observe,
    /// Create the external resource when it does not exist.
    Create,
    /// Change the external resource to match the spec.
    Update,
    /// Delete the external resource when the object is deleted with `deletionPolicy: Delete`.
    Delete,
    /// Fill unset spec fields with the values observed on the external resource.
    LateInitialize,
}

/// The default management policies: ferroplane does everything.
pub fn default_management_policies() -> Vec<ManagementAction> {
    vec![ManagementAction::All]
}

/// Kind of configuration a managed resource takes its credentials from.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum ProviderConfigKind {
    /// A ProviderConfig in the managed resource's own namespace.
    #[default]
    ProviderConfig,
    /// A cluster-scoped ClusterProviderConfig set up by an administrator.
    ClusterProviderConfig,
}

/// Reference to the ProviderConfig or ClusterProviderConfig whose credentials are used.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProviderConfigReference {
    /// `ProviderConfig` (same namespace, the default) or `ClusterProviderConfig`.
    #[serde(default)]
    pub kind: ProviderConfigKind,
    /// Name of the ProviderConfig or ClusterProviderConfig.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
}

impl Default for ProviderConfigReference {
    fn default() -> Self {
        Self {
            kind: ProviderConfigKind::ProviderConfig,
            name: "default".to_owned(),
        }
    }
}

/// A Secret in the same namespace as the object that refers to it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LocalSecretReference {
    /// Name of the Secret. ferroplane creates it and owns it (it is deleted with the object).
    #[schemars(
        length(min = 1, max = 253),
        regex(pattern = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
    )]
    pub name: String,
}

/// One key of a Secret in the same namespace as the object that refers to it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LocalSecretKeySelector {
    /// Name of the Secret.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// Key in the Secret's data whose value is used.
    #[schemars(length(min = 1, max = 253))]
    pub key: String,
}

/// Status of a condition, as in every Kubernetes API.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum ConditionStatus {
    True,
    False,
    Unknown,
}

/// An observation of one aspect of the object's state (`Ready`, `Synced`, ...).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// Condition type: `Ready` (is the external resource usable?) or `Synced` (did the last
    /// reconcile succeed?), plus kind-specific ones.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: ConditionStatus,
    /// One CamelCase word for machines, e.g. `Available`, `Creating`, `ReconcileError`.
    pub reason: String,
    /// What happened and, on failure, what to do about it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// When the status last changed (not when the condition was last written).
    pub last_transition_time: Time,
    /// The `metadata.generation` this condition was computed for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

/// Condition types, reasons and object annotations shared by every managed kind.
pub mod names {
    /// Finalizer that keeps an object until its external resource is gone (or orphaned).
    pub const FINALIZER: &str = "ferroplane.io/managed-resource";
    /// The external resource's identifier (the ECS instance ID, for example). Set it to import.
    pub const EXTERNAL_NAME: &str = "ferroplane.io/external-name";
    /// `"true"` stops all reconciliation of the object until it is removed or `"false"`; any
    /// other value is refused (`Synced=False`, [`REASON_INVALID_ANNOTATION`]) and leaves the
    /// object paused.
    pub const PAUSED: &str = "ferroplane.io/paused";
    /// When ferroplane created the external resource named by [`EXTERNAL_NAME`] (RFC 3339):
    /// a cloud that lists new resources late must not make a restarted controller think it is
    /// gone (and create or forget it).
    pub const EXTERNAL_CREATE_SUCCEEDED: &str = "ferroplane.io/external-create-succeeded";
    /// Where the resource named by [`EXTERNAL_NAME`] lives, as the provider's client reported
    /// it when the name was recorded (`<account ID>/<region>` for Alibaba Cloud): an object
    /// whose configuration now points elsewhere is refused instead of creating a second resource
    /// there.
    pub const EXTERNAL_SCOPE: &str = "ferroplane.io/external-scope";
    /// Per-object poll interval, e.g. `30s` or `5m`.
    pub const POLL_INTERVAL: &str = "ferroplane.io/poll-interval";
    /// An opaque token (a timestamp, say): a change of its value reconciles the object at once,
    /// and the reconcile echoes the token in `status.lastHandledReconcileAt`.
    pub const RECONCILE_REQUESTED_AT: &str = "ferroplane.io/reconcile-requested-at";

    // Crossplane's spellings, read as aliases of the ones above (the `ferroplane.io/` one wins
    // when both are set and differ; see the runtime's `annotations` module).

    /// Crossplane's [`EXTERNAL_NAME`]; ferroplane writes both.
    pub const CROSSPLANE_EXTERNAL_NAME: &str = "crossplane.io/external-name";
    /// Crossplane's [`PAUSED`].
    pub const CROSSPLANE_PAUSED: &str = "crossplane.io/paused";
    /// Crossplane's [`RECONCILE_REQUESTED_AT`].
    pub const CROSSPLANE_RECONCILE_REQUESTED_AT: &str = "crossplane.io/reconcile-requested-at";

    pub const READY: &str = "Ready";
    pub const SYNCED: &str = "Synced";

    pub const REASON_AVAILABLE: &str = "Available";
    pub const REASON_UNAVAILABLE: &str = "Unavailable";
    pub const REASON_CREATING: &str = "Creating";
    pub const REASON_DELETING: &str = "Deleting";
    pub const REASON_RECONCILE_SUCCESS: &str = "ReconcileSuccess";
    pub const REASON_RECONCILE_ERROR: &str = "ReconcileError";
    pub const REASON_RECONCILE_PAUSED: &str = "ReconcilePaused";
    /// An annotation's value is not one of those it accepts (the condition's and the Warning
    /// event's reason).
    pub const REASON_INVALID_ANNOTATION: &str = "InvalidAnnotation";
}

// The status of every cloud kind (its doc comment is what `kubectl explain` shows).
/// Observed state: the external resource as last observed (`atProvider`), the `Ready` and
/// `Synced` conditions, and the generation last reconciled.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(
    rename_all = "camelCase",
    bound(deserialize = "O: Deserialize<'de> + Default")
)]
#[schemars(bound = "O: JsonSchema + Default + Serialize")]
pub struct CloudStatus<O> {
    /// What was observed in the cloud.
    // Boxed and optional: a controller's cache holds many objects, most of them without it
    // (`Managed::shed_observation`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "O")]
    pub at_provider: Option<Box<O>>,
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
    /// Differences between the spec and the cloud that the controller does not apply on its
    /// own, each with why it waits and what would let it through; absent when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending_changes: Vec<PendingChange>,
}

impl<O: Clone + Default> CloudStatus<O> {
    /// What was observed, or the empty observation when nothing was.
    pub fn observed(&self) -> O {
        self.at_provider.as_deref().cloned().unwrap_or_default()
    }
}

/// Why a pending change waits (the `reason` of a [`PendingChange`]).
pub mod pending_reasons {
    /// It needs a stop and start of the instance, which the spec does not allow.
    pub const RESTART_NOT_ALLOWED: &str = "RestartNotAllowed";
    /// The field cannot change after creation: only a new resource could take it.
    pub const NEEDS_NEW_RESOURCE: &str = "NeedsNewResource";
    /// `spec.managementPolicies` do not include `Update`.
    pub const UPDATE_NOT_ALLOWED: &str = "UpdateNotAllowed";
    /// The cloud refused the call that applies it the last time it was sent.
    pub const REFUSED_BY_CLOUD: &str = "RefusedByCloud";
}

/// One difference between the spec and the cloud that waits, as `ferroplane plan` shows it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PendingChange {
    /// The `spec.forProvider` field (`status` for the power state).
    pub field: String,
    /// What differs, observed → wanted.
    pub change: String,
    /// The API call that would apply it; absent when no call can.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// Why it waits: `RestartNotAllowed`, `NeedsNewResource`, `UpdateNotAllowed` or
    /// `RefusedByCloud`.
    pub reason: String,
    /// What would let it through (and, when the cloud refused it, the cloud's answer).
    pub message: String,
}

/// `observed` as the JSON a status holds (for [`Managed::shed_observation`]).
pub fn observation_json<T: Serialize>(observed: &T) -> Option<serde_json::Value> {
    serde_json::to_value(observed).ok()
}

/// Read access to the fields every managed kind shares; the framework in `ferroplane-runtime`
/// works on any type that implements it.
pub trait Managed {
    fn deletion_policy(&self) -> DeletionPolicy;
    fn management_policies(&self) -> &[ManagementAction];
    /// `None` for in-cluster kinds, which need no credentials.
    fn provider_config_ref(&self) -> Option<&ProviderConfigReference>;
    fn write_connection_secret_to_ref(&self) -> Option<&LocalSecretReference>;
    fn conditions(&self) -> &[Condition];
    fn observed_generation(&self) -> Option<i64>;
    /// Takes `status.atProvider` out of this copy, as JSON, for a kind whose controller never
    /// reads it back from its cache (it reports it from each observation): the cache then holds
    /// a digest instead. `None`, leaving the object as it is, for the other kinds.
    fn shed_observation(&mut self) -> Option<serde_json::Value> {
        None
    }
}
