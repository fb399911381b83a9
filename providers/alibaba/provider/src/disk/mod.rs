//! The `Disk` kind (entry: [`disk_controller`]): a cloud disk created with CreateDisk, attached
//! to the instance its spec names (`instanceId`, or an `ECSInstance` through `instanceIdRef` /
//! `instanceIdSelector`), grown, given another performance level and renamed in place, detached
//! and released on deletion.
//!
//! It uses the shared connector (`crate::cloud_connector`: ProviderConfig → credentials → the
//! region's cached clients, errors mapped by `crate::cloud_error`) and the framework's
//! guarantees (ClientToken from the object's UID, `ferroplane.io/uid` tag, claim and ownership
//! verdicts).
//!
//! - `plan`: the calls that bring a described disk to its spec (pure);
//! - `readiness`: Ready from the disk and the instance its spec names (pure);
//! - `zone`: the instance's zone checked before a create or a move;
//! - `external`: the external client.

mod external;
mod plan;
mod readiness;
mod zone;

use ferroplane_apis::alibabacloud::{Disk, ECSInstance};
use ferroplane_runtime::{ControllerConfig, ManagedController, Runtime, references};
use kube::runtime::watcher;

use crate::cloud_connector::{CloudConnector, CloudKind};
use crate::config_watches::watch_provider_configs;
use crate::options::Options;

/// Name of the managed kind in metrics and logs.
pub const KIND: &str = "Disk";

/// The Disk controller. A disk waiting for its `instanceIdRef` goes on as soon as that
/// ECSInstance changes (becomes Ready), not at its next backoff.
pub(crate) fn disk_controller(
    runtime: &Runtime,
    options: &Options,
) -> ManagedController<Disk, CloudConnector> {
    let client = runtime.client().clone();
    let connector = CloudConnector::new(client.clone(), options, runtime.external_calls(KIND));
    let resolved = connector.configs();
    let controller = ManagedController::new(runtime, options.api(&client), connector)
        .with_config(ControllerConfig {
            concurrency: options.max_concurrent_reconciles,
            requeue: options.requeue_policy(),
        })
        .watches_related(
            options.api::<ECSInstance>(&client),
            watcher::Config::default(),
            references::referencing::<ECSInstance, Disk>,
        );
    watch_provider_configs(controller, &client, options, resolved, None)
}

impl CloudKind for Disk {
    const PRODUCT: &'static str = "ecs";
    fn region(&self) -> &str {
        &self.spec.for_provider.region_id
    }
}
