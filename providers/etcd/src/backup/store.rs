//! Where snapshots are kept, as the EtcdBackup controller sees it: a [`SnapshotStore`] per
//! backup, made by [`SnapshotStores`] from the backup's destination and credentials. The OSS
//! implementation lives in the binary, which links both this provider and the Alibaba Cloud
//! one (whose ProviderConfig resolution it reuses): providers never depend on each other.

use std::future::Future;

use ferroplane_apis::etcd_backup::EtcdBackup;
use ferroplane_runtime::ReconcileError;

use super::plan::{SnapshotMeta, Stored};

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
    /// Stores `bytes` as `key` with `meta`.
    fn put(
        &self,
        key: &str,
        bytes: Vec<u8>,
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
}

/// Makes the store of a backup: resolves its destination's credentials (tenancy rules apply:
/// a ProviderConfig of the backup's namespace, or a ClusterProviderConfig that admits it) and
/// checks its endpoint. Errors are the reconcile's.
pub trait SnapshotStores: Send + Sync + 'static {
    type Store: SnapshotStore;
    fn for_backup(
        &self,
        backup: &EtcdBackup,
    ) -> impl Future<Output = Result<Self::Store, ReconcileError>> + Send;
}
