//! A simulation of etcd's membership API for environments whose pods run no etcd (the
//! sandbox): [`SimulatedFactory`] hands the controller a [`SimulatedMembership`] per cluster
//! that, before every membership call, reads what the cluster shows through the Kubernetes API
//! ([`world`]: running StatefulSet pods, their data claims, their configuration files, the
//! image) and applies etcd's rules to it ([`cluster`]). Every change is journaled
//! ([`Event`]), so tests assert on what happened rather than on samples.
//!
//! Test machinery, kept out of the product: it depends on `provider-etcd` (and only on its
//! public API), never the other way round. `ferroplane sandbox` runs the EtcdCluster and
//! EtcdBackup controllers with it ([`run_simulated`], [`run_simulated_with_backups`]).

mod auth;
mod cluster;
mod factory;
mod membership;
mod world;

use std::future::Future;

use ferroplane_runtime::Runtime;
use provider_etcd::Options;
use provider_etcd::backup::{self, SnapshotStores};

pub use auth::{AuthStore, DEFAULT_TOKEN_TTL};
pub use cluster::{Event, PERMANENTLY_REMOVED, SimulatedCluster};
pub use factory::SimulatedFactory;
pub use membership::SimulatedMembership;
pub use world::{DataDir, World, version_of_image};

/// Runs the EtcdCluster and EtcdBackup controllers with one simulated membership (the
/// backups' snapshots come from the same simulated clusters the EtcdCluster controller
/// bootstraps) and `stores`, until `shutdown` completes.
pub async fn run_simulated_with_backups<S: SnapshotStores>(
    runtime: &Runtime,
    options: Options,
    stores: S,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let factory = SimulatedFactory::new(runtime.client().clone());
    let shutdown = futures::FutureExt::shared(futures::FutureExt::boxed(shutdown));
    let namespace = options.namespace.as_deref();
    futures::join!(
        provider_etcd::controller_of(runtime, factory.clone(), &options).run(shutdown.clone()),
        backup::backup_controller(
            runtime,
            factory,
            stores,
            namespace,
            options.restore.tools_image.clone(),
        )
        .run(shutdown),
    );
}

/// Runs the EtcdCluster controller with the simulated membership of an environment whose pods
/// run no etcd (the sandbox), until `shutdown` completes.
pub async fn run_simulated(
    runtime: &Runtime,
    options: Options,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let factory = SimulatedFactory::new(runtime.client().clone());
    provider_etcd::controller_of(runtime, factory, &options)
        .run(shutdown)
        .await;
}
