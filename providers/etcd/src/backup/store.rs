//! Where snapshots are kept, as the EtcdBackup controller sees it: a [`SnapshotStore`] per
//! backup, made by [`SnapshotStores`] from the backup's destination and credentials. The OSS
//! implementation lives in the binary, which links both this provider and the Alibaba Cloud
//! one (whose ProviderConfig resolution it reuses): providers never depend on each other.

use std::future::Future;

use ferroplane_apis::common::ProviderConfigReference;
use ferroplane_apis::etcd::OssSnapshotObject;
use ferroplane_apis::etcd_backup::EtcdBackup;
use ferroplane_runtime::ReconcileError;
use jiff::Timestamp;
use kube::ResourceExt;

use super::plan::{SnapshotMeta, Stored};
use super::spool::Spooled;

/// Why the store refused or failed a call: a condition reason and a message that never holds
/// credentials.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct StoreError {
    /// A stable CamelCase reason (`NoSuchBucket`, `AccessDenied`, `StoreUnreachable`, ...).
    pub reason: String,
    pub message: String,
    /// Whether retrying without a change can help (a network error, throttling, a 5xx).
    pub retryable: bool,
}

impl StoreError {
    pub fn into_reconcile(self) -> ReconcileError {
        if self.retryable {
            ReconcileError::retryable(self.reason, self.message)
        } else {
            ReconcileError::dependency(self.reason, self.message)
        }
    }
}

/// One backup's place in a store.
pub trait SnapshotStore: Send + Sync {
    /// Stores `snapshot` as `key` with `meta`, streaming it from disk (its size is known
    /// before the first byte is sent).
    fn put(
        &self,
        key: &str,
        snapshot: &Spooled,
        meta: &SnapshotMeta,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// The snapshots under `folder`; `meta` is read only for keys `known` does not answer
    /// (what an earlier status already says), so a poll costs one listing.
    fn list(
        &self,
        folder: &str,
        known: &(dyn Fn(&str) -> Option<SnapshotMeta> + Sync),
    ) -> impl Future<Output = Result<Vec<Stored>, StoreError>> + Send;

    /// Deletes `key`; a missing key is no error.
    fn delete(&self, key: &str) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// `key`'s size and metadata (`None` for an object stored by something else), or `None`
    /// when there is no such object.
    fn head(
        &self,
        key: &str,
    ) -> impl Future<Output = Result<Option<(i64, Option<SnapshotMeta>)>, StoreError>> + Send;

    /// A URL anyone may GET `key` with until `expires`, without credentials: what a restore
    /// Job fetches the snapshot with (the credentials never leave the controller).
    fn signed_get_url(&self, key: &str, expires: Timestamp) -> Result<String, StoreError>;
}

/// A bucket, and whose credentials open it, as an object of `namespace` names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreLocation {
    /// The namespace of the object naming the bucket: the credentials must be its own
    /// ProviderConfig's or a ClusterProviderConfig's that admits it.
    pub namespace: String,
    pub bucket: String,
    pub region: Option<String>,
    pub endpoint: Option<String>,
    pub provider_config_ref: ProviderConfigReference,
    /// Where the location was given, for messages (`spec.destination.oss`).
    pub field: &'static str,
}

impl StoreLocation {
    /// A backup's OSS destination (`None` for a volume).
    pub fn of_backup(backup: &EtcdBackup) -> Option<Self> {
        let oss = backup.spec.destination.oss.as_ref()?;
        Some(Self {
            namespace: backup.namespace().unwrap_or_default(),
            bucket: oss.bucket.clone(),
            region: oss.region.clone(),
            endpoint: oss.endpoint.clone(),
            provider_config_ref: oss.provider_config_ref.clone(),
            field: "spec.destination.oss",
        })
    }

    /// The bucket of a restore's `from.oss`, for an EtcdCluster of `namespace`.
    pub fn of_object(namespace: &str, object: &OssSnapshotObject) -> Self {
        Self {
            namespace: namespace.to_owned(),
            bucket: object.bucket.clone(),
            region: object.region.clone(),
            endpoint: object.endpoint.clone(),
            provider_config_ref: object.provider_config_ref.clone(),
            field: "spec.restore.from.oss",
        }
    }
}

/// Makes the store of a location: resolves its credentials (tenancy rules apply: a
/// ProviderConfig of the location's namespace, or a ClusterProviderConfig that admits it) and
/// checks its endpoint. Errors are the reconcile's.
pub trait SnapshotStores: Send + Sync + 'static {
    type Store: SnapshotStore;
    fn for_location(
        &self,
        location: &StoreLocation,
    ) -> impl Future<Output = Result<Self::Store, ReconcileError>> + Send;
}
