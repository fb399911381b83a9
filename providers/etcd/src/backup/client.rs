//! The EtcdBackup controller on ferroplane-runtime. The "external resource" is the folder of
//! snapshots this backup took (`oss://<bucket>/<prefix><namespace>/<name>/<uid>/`):
//!
//! - `connect` checks the schedule and makes the backup's store (credentials resolved by the
//!   [`SnapshotStores`]);
//! - `observe` lists the folder: no snapshot yet is "missing"; otherwise the status lists them,
//!   and the folder is outdated when a snapshot is due ([`plan::due`]) or more than `keep` are
//!   stored;
//! - `create` and `update` take a snapshot from the cluster when one is due, store it, then
//!   delete the oldest beyond `keep`;
//! - `delete` (policy `Delete` only; the default `Orphan` keeps the snapshots) deletes every
//!   snapshot in the folder.
//!
//! The folder carries the backup's UID, so a crash between storing a snapshot and recording
//! the external name ends in finding that snapshot, not in a second one.

use std::sync::Arc;

use croner::Cron;
use ferroplane_apis::etcd::EtcdCluster;
use ferroplane_apis::etcd_backup::EtcdBackup;
use ferroplane_runtime::children::Children;
use ferroplane_runtime::events::Events;
use ferroplane_runtime::{
    Connector, Creation, Deletion, ExternalClient, ExternalRef, IdempotencyKey, Observation,
    ReconcileError, Update,
};
use jiff::Timestamp;
use kube::api::Api;
use kube::{Client, ResourceExt};

use super::plan::{self, PlanError, SnapshotMeta, Stored};
use super::source::SnapshotSource;
use super::store::{SnapshotStore, SnapshotStores, StoreLocation};
use crate::membership::MembershipFactory;
use crate::names::FIELD_MANAGER;
use crate::reasons::{
    CLUSTER_NOT_FOUND, CLUSTER_UNREACHABLE, INVALID_DESTINATION, INVALID_SCHEDULE,
    KUBERNETES_API_ERROR, MISSING_METADATA, SNAPSHOT_FAILED, SNAPSHOT_PRUNED, SNAPSHOT_TAKEN,
};
use crate::render;
use crate::tls::{self, TlsSecrets};

fn plan_error(e: PlanError) -> ReconcileError {
    match e {
        PlanError::BadSchedule { .. } => ReconcileError::terminal(INVALID_SCHEDULE, e.to_string()),
        PlanError::MissingMetadata(_) => ReconcileError::retryable(MISSING_METADATA, e.to_string()),
    }
}

/// Connects an EtcdBackup to its cluster's members (through `F`) and its store (through `S`).
pub struct BackupConnector<F, S> {
    kube: Client,
    factory: Arc<F>,
    stores: Arc<S>,
    events: Events,
    tools_image: Arc<str>,
}

impl<F: MembershipFactory, S: SnapshotStores> BackupConnector<F, S> {
    pub fn new(kube: Client, factory: F, stores: S, events: Events) -> Self {
        Self {
            kube,
            factory: Arc::new(factory),
            stores: Arc::new(stores),
            events,
            tools_image: crate::names::default_tools_image().into(),
        }
    }

    /// The image of the snapshot Jobs of `pvc` destinations.
    pub fn with_tools_image(mut self, image: Arc<str>) -> Self {
        self.tools_image = image;
        self
    }
}

/// Where one backup's snapshots go.
pub enum Destination<T> {
    /// A bucket, written by the controller.
    Oss(T),
    /// A claim, written by a Job per snapshot ([`volume`]).
    Volume { claim: String },
}

impl<F, S> Connector<EtcdBackup> for BackupConnector<F, S>
where
    F: MembershipFactory,
    F::Client: SnapshotSource,
    S: SnapshotStores,
{
    type Client = BackupClient<F, S::Store>;

    async fn connect(&self, mr: &EtcdBackup) -> Result<Self::Client, ReconcileError> {
        // A backup being deleted needs no schedule: a bad one must not keep it forever.
        let cron = match plan::schedule(mr) {
            Err(_) if mr.metadata.deletion_timestamp.is_some() => None,
            parsed => parsed.map_err(plan_error)?,
        };
        let folder = plan::folder(mr).map_err(plan_error)?;
        let store = match (StoreLocation::of_backup(mr), &mr.spec.destination.pvc) {
            (Some(location), _) => Destination::Oss(self.stores.for_location(&location).await?),
            (None, Some(pvc)) => Destination::Volume {
                claim: pvc.claim_name.clone(),
            },
            (None, None) => {
                return Err(ReconcileError::terminal(
                    INVALID_DESTINATION,
                    "spec.destination needs oss or pvc",
                ));
            }
        };
        Ok(BackupClient {
            kube: self.kube.clone(),
            factory: self.factory.clone(),
            store,
            events: self.events.clone(),
            folder,
            cron,
            tools_image: self.tools_image.clone(),
        })
    }
}

/// One reconcile's view of one backup's folder.
pub struct BackupClient<F, T> {
    kube: Client,
    factory: Arc<F>,
    store: Destination<T>,
    events: Events,
    folder: String,
    cron: Option<Cron>,
    tools_image: Arc<str>,
}

mod volume_steps;

/// The `SnapshotTaken` event's message: where, how big, its SHA-256 and revision.
fn taken_message(
    stored: &str,
    size: impl std::fmt::Display,
    sha256: &str,
    revision: Option<i64>,
) -> String {
    let revision = revision
        .map(|r| format!(", revision {r}"))
        .unwrap_or_default();
    format!("stored {stored}: {size} bytes, sha256 {sha256}{revision}")
}

/// The snapshots the last status lists: a volume's record between its Jobs.
fn recorded(mr: &EtcdBackup) -> Vec<Stored> {
    mr.status
        .iter()
        .flat_map(|s| s.snapshots.iter())
        .map(|s| Stored {
            key: s.key.clone(),
            size: u64::try_from(s.size).unwrap_or(0),
            meta: s.taken_at.parse().ok().map(|taken_at| SnapshotMeta {
                sha256: s.sha256.clone(),
                revision: s.revision,
                taken_at,
                generation: s.generation,
            }),
        })
        .collect()
}

/// What the last status says of a snapshot, so that listing needs no metadata reads.
fn known_meta(mr: &EtcdBackup) -> impl Fn(&str) -> Option<SnapshotMeta> + Sync + '_ {
    move |key| {
        let s = mr
            .status
            .as_ref()?
            .snapshots
            .iter()
            .find(|s| s.key == key && !s.sha256.is_empty())?;
        Some(SnapshotMeta {
            sha256: s.sha256.clone(),
            revision: s.revision,
            taken_at: s.taken_at.parse().ok()?,
            generation: s.generation,
        })
    }
}

impl<F, T> BackupClient<F, T>
where
    F: MembershipFactory,
    F::Client: SnapshotSource,
    T: SnapshotStore,
{
    /// What the folder holds: listed in the bucket, or (a volume) the status's record of it.
    async fn list(&self, mr: &EtcdBackup) -> Result<Vec<Stored>, ReconcileError> {
        match &self.store {
            Destination::Oss(store) => {
                let known = known_meta(mr);
                store
                    .list(&self.folder, &known)
                    .await
                    .map_err(|e| e.into_reconcile())
            }
            Destination::Volume { .. } => Ok(recorded(mr)),
        }
    }

    fn oss(&self) -> Result<&T, ReconcileError> {
        match &self.store {
            Destination::Oss(store) => Ok(store),
            Destination::Volume { .. } => Err(ReconcileError::terminal(
                INVALID_DESTINATION,
                "a pvc destination is written by Jobs, not by the controller",
            )),
        }
    }

    /// The EtcdCluster the backup names.
    async fn cluster(&self, mr: &EtcdBackup) -> Result<EtcdCluster, ReconcileError> {
        let namespace = mr.namespace().unwrap_or_default();
        let name = &mr.spec.cluster_ref.name;
        Api::<EtcdCluster>::namespaced(self.kube.clone(), &namespace)
            .get_opt(name)
            .await
            .map_err(|e| {
                ReconcileError::retryable(
                    KUBERNETES_API_ERROR,
                    format!("cannot read EtcdCluster {namespace}/{name}: {e}"),
                )
            })?
            .ok_or_else(|| {
                ReconcileError::dependency(
                    CLUSTER_NOT_FOUND,
                    format!(
                        "EtcdCluster {namespace}/{name} not found; create it or point spec.clusterRef.name at an EtcdCluster of this namespace"
                    ),
                )
            })
    }

    /// Streams a snapshot from the cluster's members and stores it.
    async fn take(&self, mr: &EtcdBackup) -> Result<(), ReconcileError> {
        let namespace = mr.namespace().unwrap_or_default();
        let name = &mr.spec.cluster_ref.name;
        let cluster = self.cluster(mr).await?;
        let names = render::cluster_names(&cluster)
            .map_err(|e| ReconcileError::retryable(e.reason(), e.to_string()))?;
        let client_tls = match tls::secret_names(&cluster, &names) {
            Some(secrets) => {
                let children = Children::with_field_manager(self.kube.clone(), FIELD_MANAGER);
                TlsSecrets::new(&self.kube, &children, &names, &secrets)
                    .client()
                    .await
                    .map_err(|e| ReconcileError::retryable(e.reason(), e.to_string()))?
            }
            None => None,
        };
        let mut membership = self
            .factory
            .for_cluster(&names, client_tls.as_ref())
            .map_err(|e| ReconcileError::retryable(CLUSTER_UNREACHABLE, e.to_string()))?;
        // A snapshot needs root while the cluster's authentication is on.
        let children = Children::with_field_manager(self.kube.clone(), FIELD_MANAGER);
        let passwords = crate::auth::AuthSecrets::new(&self.kube, &children, &names)
            .passwords(&cluster)
            .await
            .map_err(|e| ReconcileError::retryable(e.reason(), e.to_string()))?;
        crate::membership::Membership::set_credentials(&mut membership, passwords.credentials());
        let taken = membership.snapshot().await.map_err(|e| {
            ReconcileError::retryable(
                SNAPSHOT_FAILED,
                format!("cannot take a snapshot of EtcdCluster {namespace}/{name}: {e}"),
            )
        })?;
        let now = Timestamp::now();
        let key = plan::key_at(&self.folder, now);
        let size = taken.snapshot.size();
        let meta = SnapshotMeta {
            sha256: taken.sha256.clone(),
            revision: taken.revision,
            taken_at: now,
            generation: mr.metadata.generation,
        };
        self.oss()?
            .put(&key, &taken.snapshot, &meta)
            .await
            .map_err(|e| e.into_reconcile())?;
        self.events
            .normal(
                mr,
                SNAPSHOT_TAKEN,
                taken_message(&key, size, &taken.sha256, taken.revision),
            )
            .await;
        Ok(())
    }

    /// Deletes the oldest snapshots beyond `keep`.
    async fn prune(&self, mr: &EtcdBackup) -> Result<(), ReconcileError> {
        let stored = self.list(mr).await?;
        for key in plan::to_prune(&stored, plan::keep(mr)) {
            self.oss()?
                .delete(&key)
                .await
                .map_err(|e| e.into_reconcile())?;
            self.pruned_event(mr, &key).await;
        }
        Ok(())
    }

    /// The `SnapshotPruned` event for `key`.
    async fn pruned_event(&self, mr: &EtcdBackup, key: &str) {
        self.events
            .normal(
                mr,
                SNAPSHOT_PRUNED,
                format!("deleted {key}: keeping the newest {}", plan::keep(mr)),
            )
            .await;
    }
}

impl<F, T> ExternalClient<EtcdBackup> for BackupClient<F, T>
where
    F: MembershipFactory,
    F::Client: SnapshotSource,
    T: SnapshotStore,
{
    async fn observe(
        &self,
        mr: &EtcdBackup,
        _ext: &ExternalRef,
    ) -> Result<Observation, ReconcileError> {
        if let Destination::Volume { .. } = &self.store {
            return self.observe_volume(mr).await;
        }
        let stored = self.list(mr).await?;
        if stored.is_empty() {
            return Ok(Observation::missing());
        }
        let status = plan::status(self.cron.as_ref(), &stored);
        let observation =
            Observation::found(plan::external_name(mr, &self.folder)).with_status(status)?;
        let keep = plan::keep(mr);
        Ok(if stored.len() > keep {
            observation.with_diff(format!(
                "{} snapshots stored, spec.keep is {keep}",
                stored.len()
            ))
        } else if let Some(why) = plan::due(mr, self.cron.as_ref(), &stored, Timestamp::now()) {
            observation.with_diff(why)
        } else {
            observation
        })
    }

    async fn create(
        &self,
        mr: &EtcdBackup,
        _key: &IdempotencyKey,
    ) -> Result<Creation, ReconcileError> {
        if let Destination::Volume { .. } = &self.store {
            self.advance_volume(mr).await?;
            return Ok(Creation::new(plan::external_name(mr, &self.folder)));
        }
        self.take(mr).await?;
        self.prune(mr).await?;
        Ok(Creation::new(plan::external_name(mr, &self.folder)))
    }

    async fn update(&self, mr: &EtcdBackup, _ext: &ExternalRef) -> Result<Update, ReconcileError> {
        if let Destination::Volume { .. } = &self.store {
            self.advance_volume(mr).await?;
            return Ok(Update::in_progress());
        }
        let stored = self.list(mr).await?;
        if plan::due(mr, self.cron.as_ref(), &stored, Timestamp::now()).is_some() {
            self.take(mr).await?;
        }
        self.prune(mr).await?;
        Ok(Update::done())
    }

    async fn delete(
        &self,
        mr: &EtcdBackup,
        _ext: &ExternalRef,
    ) -> Result<Deletion, ReconcileError> {
        if let Destination::Volume { .. } = &self.store {
            // The snapshots stay on the volume (admission allows only `Orphan` for it); a Job
            // still running is stopped.
            self.volume_jobs(mr).await?;
            return Ok(Deletion::Gone);
        }
        for stored in self.list(mr).await? {
            self.oss()?
                .delete(&stored.key)
                .await
                .map_err(|e| e.into_reconcile())?;
        }
        Ok(Deletion::Gone)
    }
}
