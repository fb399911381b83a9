//! Where a restore's snapshot is: [`RestoreSources`] turns `spec.restore.from` into a signed URL
//! the restore Jobs fetch, with what is known of the snapshot (its SHA-256), using the same
//! stores and tenancy rules as EtcdBackup (credentials of a ProviderConfig of the cluster's
//! namespace, or of a ClusterProviderConfig that admits it).

use ferroplane_apis::etcd::{EtcdCluster, EtcdRestoreSource};
use ferroplane_apis::etcd_backup::EtcdBackup;
use ferroplane_runtime::ReconcileError;
use futures::future::BoxFuture;
use jiff::Timestamp;
use kube::api::Api;
use kube::{Client, ResourceExt};

use crate::backup::{SnapshotStore, SnapshotStores, StoreLocation};
use crate::reasons::{INVALID_SPEC, KUBERNETES_ERROR, SNAPSHOT_NOT_FOUND};

/// Where a snapshot is kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SnapshotPlace {
    /// A bucket: the Jobs fetch it through a signed URL.
    Oss(StoreLocation),
    /// A claim of the namespace: the Jobs mount it read-only.
    Volume { claim: String },
}

/// The object a restore reads, before its URL is signed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotObject {
    pub place: SnapshotPlace,
    pub key: String,
    /// SHA-256 of the database, when something recorded it (an EtcdBackup's status or the
    /// object's metadata); the snapshot's own trailer is checked either way.
    pub sha256: Option<String>,
}

impl SnapshotObject {
    /// `oss://<bucket>/<key>` or `pvc://<claim>/<key>`, for status and messages.
    pub fn display(&self) -> String {
        match &self.place {
            SnapshotPlace::Oss(location) => format!("oss://{}/{}", location.bucket, self.key),
            SnapshotPlace::Volume { claim } => format!("pvc://{claim}/{}", self.key),
        }
    }

    /// The prefix of [`Self::display`] before the key.
    pub fn display_prefix(&self) -> String {
        let display = self.display();
        display[..display.len() - self.key.len()].to_owned()
    }
}

/// `pvc://<claim>/<key>` → (claim, key).
pub fn volume_file(display: &str) -> Option<(&str, &str)> {
    display.strip_prefix("pvc://")?.split_once('/')
}

/// A snapshot ready to be fetched by a Job.
#[derive(Clone, PartialEq, Eq)]
pub struct SignedSnapshot {
    /// GET URL, valid until `expires`. A credential: only ever written to an owned Secret.
    pub url: String,
    pub expires: Timestamp,
    pub sha256: Option<String>,
}

impl std::fmt::Debug for SignedSnapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignedSnapshot")
            .field("url", &"<redacted>")
            .field("expires", &self.expires)
            .field("sha256", &self.sha256)
            .finish()
    }
}

/// Signs URLs of snapshots. Object-safe, so that the EtcdCluster controller holds one without
/// naming the store type; every [`SnapshotStores`] is one.
pub trait RestoreSources: Send + Sync + 'static {
    /// Checks that `object` exists and signs a URL for it valid until `expires`.
    fn sign<'a>(
        &'a self,
        object: &'a SnapshotObject,
        expires: Timestamp,
    ) -> BoxFuture<'a, Result<SignedSnapshot, ReconcileError>>;
}

impl<S: SnapshotStores> RestoreSources for S {
    fn sign<'a>(
        &'a self,
        object: &'a SnapshotObject,
        expires: Timestamp,
    ) -> BoxFuture<'a, Result<SignedSnapshot, ReconcileError>> {
        Box::pin(async move {
            let SnapshotPlace::Oss(location) = &object.place else {
                return Err(ReconcileError::terminal(
                    INVALID_SPEC,
                    "a snapshot in a volume is mounted, not fetched by URL",
                ));
            };
            let store = self.for_location(location).await?;
            let head = store
                .head(&object.key)
                .await
                .map_err(|e| e.into_reconcile())?;
            let Some((_size, meta)) = head else {
                return Err(ReconcileError::dependency(
                    SNAPSHOT_NOT_FOUND,
                    format!(
                        "snapshot {} does not exist; fix spec.restore.from (an EtcdBackup's status lists its snapshots)",
                        object.display()
                    ),
                ));
            };
            let url = store
                .signed_get_url(&object.key, expires)
                .map_err(|e| e.into_reconcile())?;
            Ok(SignedSnapshot {
                url,
                expires,
                sha256: object.sha256.clone().or(meta.map(|m| m.sha256)),
            })
        })
    }
}

/// The object `spec.restore.from` names: an EtcdBackup's snapshot (the newest, when no key is
/// given) or an OSS object.
pub async fn choose(
    kube: &Client,
    cluster: &EtcdCluster,
    from: &EtcdRestoreSource,
) -> Result<SnapshotObject, ReconcileError> {
    let namespace = cluster.namespace().unwrap_or_default();
    if let Some(object) = &from.oss {
        return Ok(SnapshotObject {
            place: SnapshotPlace::Oss(StoreLocation::of_object(&namespace, object)),
            key: object.key.clone(),
            sha256: None,
        });
    }
    if let Some(file) = &from.pvc {
        return Ok(SnapshotObject {
            place: SnapshotPlace::Volume {
                claim: file.claim_name.clone(),
            },
            key: file.key.clone(),
            sha256: None,
        });
    }
    let Some(reference) = &from.backup_ref else {
        return Err(ReconcileError::terminal(
            INVALID_SPEC,
            "spec.restore.from needs backupRef or oss",
        ));
    };
    let backups: Api<EtcdBackup> = Api::namespaced(kube.clone(), &namespace);
    let backup = backups.get_opt(&reference.name).await.map_err(|e| {
        ReconcileError::retryable(
            KUBERNETES_ERROR,
            format!("reading EtcdBackup {}: {e}", reference.name),
        )
    })?;
    let Some(backup) = backup else {
        return Err(ReconcileError::dependency(
            SNAPSHOT_NOT_FOUND,
            format!(
                "EtcdBackup {} does not exist in namespace {namespace}; create it, or restore from its bucket with spec.restore.from.oss",
                reference.name
            ),
        ));
    };
    let snapshots = backup
        .status
        .as_ref()
        .map(|s| s.snapshots.clone())
        .unwrap_or_default();
    let chosen = match &reference.key {
        Some(key) => snapshots.iter().find(|s| &s.key == key),
        None => snapshots
            .iter()
            .max_by_key(|s| s.taken_at.parse::<Timestamp>().ok()),
    };
    let (key, sha256) = match (chosen, &reference.key) {
        (Some(s), _) => (s.key.clone(), Some(s.sha256.clone())),
        // A key the status no longer lists (pruned from the status, kept in the bucket) is
        // still looked for in the bucket.
        (None, Some(key)) => (key.clone(), None),
        (None, None) => {
            return Err(ReconcileError::dependency(
                SNAPSHOT_NOT_FOUND,
                format!(
                    "EtcdBackup {} has no snapshot yet; wait for its first one, or name one with spec.restore.from.backupRef.key",
                    reference.name
                ),
            ));
        }
    };
    let place = match (
        StoreLocation::of_backup(&backup),
        &backup.spec.destination.pvc,
    ) {
        (Some(location), _) => SnapshotPlace::Oss(location),
        (None, Some(pvc)) => SnapshotPlace::Volume {
            claim: pvc.claim_name.clone(),
        },
        (None, None) => {
            return Err(ReconcileError::terminal(
                INVALID_SPEC,
                format!("EtcdBackup {} has no destination", reference.name),
            ));
        }
    };
    Ok(SnapshotObject { place, key, sha256 })
}
