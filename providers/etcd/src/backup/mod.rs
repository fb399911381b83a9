//! The `EtcdBackup` kind: snapshots of an EtcdCluster of the same namespace, stored in an OSS
//! bucket, on demand (one per generation) or on a cron schedule, keeping the newest `keep`.
//!
//! - [`plan`]: pure: object names, when a snapshot is due, what to prune, the status;
//! - [`source`]: taking a verified snapshot from a cluster's members ([`SnapshotSource`]);
//! - [`spool`]: the snapshot on disk between the member's stream and the store ([`Spooled`]);
//! - [`store`]: where snapshots go ([`SnapshotStore`], made per backup by [`SnapshotStores`],
//!   which the binary implements for OSS with the Alibaba Cloud provider's credentials);
//! - [`client`]: the connector and external client on ferroplane-runtime.
//!
//! A snapshot is never held whole in memory: the member's stream is written to an unnamed
//! temporary file as it arrives and verified, then streamed to OSS with its length (PutObject
//! takes up to 5 GB that way). The controller needs a few buffers of memory and, in its
//! temporary directory, room for the largest database it backs up.

pub mod client;
pub mod plan;
pub mod source;
pub mod spool;
pub mod store;
pub mod volume;

use ferroplane_apis::alibabacloud::ProviderConfig;
use ferroplane_apis::common::ProviderConfigKind;
use ferroplane_apis::etcd::EtcdCluster;
use ferroplane_apis::etcd_backup::EtcdBackup;
use ferroplane_runtime::events::Events;
use ferroplane_runtime::related;
use ferroplane_runtime::{ManagedController, Runtime};
use kube::ResourceExt;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;

pub use client::{BackupClient, BackupConnector};
pub use plan::{SnapshotMeta, Stored};
pub use source::{SnapshotSource, Taken};
pub use spool::Spooled;
pub use store::{SnapshotStore, SnapshotStores, StoreError, StoreLocation};

use crate::membership::MembershipFactory;

/// The backups of `cluster`: a change to it (it became Ready, say) reconciles them at once
/// instead of at their next retry.
fn backups_of(cluster: &EtcdCluster, backups: &Store<EtcdBackup>) -> Vec<ObjectRef<EtcdBackup>> {
    backups
        .state()
        .iter()
        .filter(|b| {
            b.namespace() == cluster.namespace() && b.spec.cluster_ref.name == cluster.name_any()
        })
        .map(|b| ObjectRef::from_obj(b.as_ref()))
        .collect()
}

/// The EtcdBackup controller: backups in `namespace` (all when `None`), snapshots through
/// `factory`'s membership clients, stored through `stores` (or, for a volume, by Jobs of
/// `tools_image`). A change to a backup's EtcdCluster
/// or to the ProviderConfig of its namespace it names reconciles it at once.
pub fn backup_controller<F, S>(
    runtime: &Runtime,
    factory: F,
    stores: S,
    namespace: Option<&str>,
    tools_image: std::sync::Arc<str>,
) -> ManagedController<EtcdBackup, BackupConnector<F, S>>
where
    F: MembershipFactory,
    F::Client: SnapshotSource,
    S: SnapshotStores,
{
    let client = runtime.client().clone();
    let events = Events::new(runtime.recorder());
    ManagedController::new(
        runtime,
        crate::api_scope::api_in::<EtcdBackup>(&client, namespace),
        BackupConnector::new(client.clone(), factory, stores, events).with_tools_image(tools_image),
    )
    .watches_related(
        crate::api_scope::api_in::<EtcdCluster>(&client, namespace),
        watcher::Config::default(),
        backups_of,
    )
    .watches_related(
        crate::api_scope::api_in::<ProviderConfig>(&client, namespace),
        watcher::Config::default(),
        related::provider_config_mapper::<ProviderConfig, EtcdBackup>(
            ProviderConfigKind::ProviderConfig,
        ),
    )
}
