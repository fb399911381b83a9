//! provider-etcd: the `EtcdCluster` kind (group `etcd.ferroplane.io`), an etcd cluster run in
//! the Kubernetes cluster, on the ferroplane-runtime framework.
//!
//! # Entry points
//! - [`run`] (called by the binary): runs the controller with its [`Options`] and the
//!   production membership client (etcd's JSON gateway through each cluster's client Service)
//!   until `shutdown` completes, the way every provider starts.
//! - [`controller()`], [`controller_of`]: the same controller with any
//!   [`MembershipFactory`], for tests and for environments without reachable pods (the
//!   sandbox's simulation of etcd, in the `ferroplane-sandbox-etcd` crate, which is test
//!   machinery and not part of this one).
//! - [`backup::backup_controller`]: the `EtcdBackup` kind, snapshots of a cluster kept in a
//!   [`backup::SnapshotStore`] (OSS, implemented by the binary); [`run`] with [`run_backups`].
//! - [`reasons`]: every condition and event reason the two kinds show, with what to do.
//!
//! # Flow of one reconcile
//! validate the spec (`version`, size, name) → read the StatefulSet and member pods → ask etcd
//! for its members and their health ([`scaling::observe`]) → plan one step ([`planner`]) →
//! render the children ([`render`]) and compare them with the live ones → report status
//! (`status`) → when anything differs: carry out the step ([`scaling::apply`]) and apply the
//! children.
//!
//! # Membership and bootstrap
//! A new cluster's members start together from per-member configuration files
//! (`initial-cluster-state: new`, peers `<name>-<i>.<name>.<ns>.svc:2380`). Afterwards every
//! change goes through etcd's membership API, one member at a time, never losing quorum:
//! growth adds a learner before its pod exists and promotes it once it has caught up; shrinking
//! removes the highest member before its pod goes. A removed member's volume (`data-<pod>`) is
//! deleted (the StatefulSet's `whenScaled: Delete`, and the controller itself), and a scale-up
//! waits while one is still being deleted: etcd refuses to start a pod on a removed member's
//! data. A learner whose pod still fails on such data is restarted empty, and followed until its
//! pod runs on a fresh claim ([`member_pod`]). A voter whose volume was lost is removed and added
//! back empty while quorum holds without it. A voter whose pod keeps crashing with its volume
//! kept is reported (`Degraded`, reason `MemberFlapping`, and a Warning event), not removed: its
//! data may be the only healthy copy. Only with `spec.replaceFailedMembers` and while quorum
//! holds without it is it removed and added back empty. When etcd cannot be reached, nothing
//! changes size, the member configuration is kept (or restored from the status's members),
//! status comes from the StatefulSet and the cluster is not Ready (see `status`).
//!
//! # Ownership
//! Children are written under the field manager [`names::FIELD_MANAGER`] and are changed,
//! adopted or deleted only when their controller reference or `ferroplane.io/uid` label names
//! the cluster: a same-named object someone else made fails the reconcile (`ChildNotOurs`).
//!
//! # Dependencies
//! Of ferroplane's crates, only `ferroplane-apis` and `ferroplane-runtime` (and reqwest for the
//! membership API); never another provider or the binary.

mod api_scope;
pub mod auth;
pub mod backup;
pub mod controller;
pub mod defrag;
mod error;
pub mod jobs;
pub mod member_pod;
pub mod membership;
pub mod names;
mod owned_secret;
pub mod planner;
mod quorum_loss;
pub mod reasons;
mod recovery;
pub mod render;
pub mod restore;
pub mod scaling;
mod secret_watch;
mod status;
pub mod tls;
mod upgrade_path;
mod version;

use std::future::Future;

use crate::api_scope::api_in;

use ferroplane_apis::etcd::EtcdCluster;
use ferroplane_runtime::children::watch_config;
use ferroplane_runtime::events::Events;
use ferroplane_runtime::{ManagedController, RunError, Runtime};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ConfigMap, Secret, Service};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::core::PartialObjectMeta;

use crate::controller::EtcdConnector;
use crate::membership::{GatewayConfig, GatewayFactory, MembershipFactory};
use crate::names::APP_NAME_LABEL;

/// What the EtcdCluster controller is configured with.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Options {
    /// Timeouts of the calls to each cluster's membership API (etcd's JSON gateway).
    pub gateway: GatewayConfig,
    /// Watch EtcdClusters and their children in this namespace only (`ferroplane run
    /// --namespace`, a namespaced install's Roles); `None` watches all namespaces.
    pub namespace: Option<String>,
    /// Lifetime and rotation of the CA made for clusters with generated TLS
    /// ([`tls::rotation`]).
    pub ca: tls::certs::CaPolicy,
    /// Snapshot stores and the Jobs' image for `spec.restore`.
    pub restore: restore::RestoreSetup,
}

/// Builds the EtcdCluster controller with `factory` for membership clients. Watches
/// EtcdClusters in all namespaces and the children they own.
pub fn controller<F: MembershipFactory>(
    runtime: &Runtime,
    factory: F,
) -> ManagedController<EtcdCluster, EtcdConnector<F>> {
    controller_in(runtime, factory, None)
}

/// [`controller`] watching EtcdClusters and their children in `namespace` only (all when
/// `None`).
pub fn controller_in<F: MembershipFactory>(
    runtime: &Runtime,
    factory: F,
    namespace: Option<&str>,
) -> ManagedController<EtcdCluster, EtcdConnector<F>> {
    controller_with(
        runtime,
        factory,
        namespace,
        restore::RestoreSetup::default(),
    )
}

/// [`controller_in`] restoring `spec.restore` with `restore`.
pub fn controller_with<F: MembershipFactory>(
    runtime: &Runtime,
    factory: F,
    namespace: Option<&str>,
    restore: restore::RestoreSetup,
) -> ManagedController<EtcdCluster, EtcdConnector<F>> {
    controller_with_ca(
        runtime,
        factory,
        namespace,
        restore,
        tls::certs::CaPolicy::default(),
    )
}

/// [`controller_with`] making and rotating generated CAs by `ca`.
pub fn controller_with_ca<F: MembershipFactory>(
    runtime: &Runtime,
    factory: F,
    namespace: Option<&str>,
    restore: restore::RestoreSetup,
    ca: tls::certs::CaPolicy,
) -> ManagedController<EtcdCluster, EtcdConnector<F>> {
    let client = runtime.client().clone();
    let events = Events::new(runtime.recorder());
    let children = || watch_config(&[APP_NAME_LABEL]);
    ManagedController::new(
        runtime,
        api_in::<EtcdCluster>(&client, namespace),
        EtcdConnector::new(client.clone(), factory, events)
            .with_restore(restore)
            .with_ca_policy(ca),
    )
    .owns(api_in::<StatefulSet>(&client, namespace), children())
    .owns(api_in::<Service>(&client, namespace), children())
    .owns(api_in::<ConfigMap>(&client, namespace), children())
    .owns(
        api_in::<PodDisruptionBudget>(&client, namespace),
        children(),
    )
    .watches_related(
        api_in::<PartialObjectMeta<Secret>>(&client, namespace),
        kube::runtime::watcher::Config::default(),
        secret_watch::clusters_using_secret,
    )
}

/// [`controller_with_ca`] as `options` set it up: what [`run`] runs, and what an environment
/// with its own [`MembershipFactory`] (the sandbox's simulation) runs.
pub fn controller_of<F: MembershipFactory>(
    runtime: &Runtime,
    factory: F,
    options: &Options,
) -> ManagedController<EtcdCluster, EtcdConnector<F>> {
    controller_with_ca(
        runtime,
        factory,
        options.namespace.as_deref(),
        options.restore.clone(),
        options.ca,
    )
}

/// Runs the EtcdBackup controller, snapshots streamed through etcd's JSON gateway and stored
/// through `stores`, until `shutdown` completes.
pub async fn run_backups<S: backup::SnapshotStores>(
    runtime: &Runtime,
    options: Options,
    stores: S,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), RunError> {
    let factory = GatewayFactory::new(&options.gateway).map_err(|e| RunError::Start {
        kind: "EtcdBackup",
        source: Box::new(e),
    })?;
    backup::backup_controller(
        runtime,
        factory,
        stores,
        options.namespace.as_deref(),
        options.restore.tools_image.clone(),
    )
    .run(shutdown)
    .await;
    Ok(())
}

/// Runs the EtcdCluster controller with the production membership client until `shutdown`
/// completes, then lets running reconciles finish. Fails only when the membership client cannot
/// be built.
pub async fn run(
    runtime: &Runtime,
    options: Options,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), RunError> {
    let factory = GatewayFactory::new(&options.gateway).map_err(|e| RunError::Start {
        kind: "EtcdCluster",
        source: Box::new(e),
    })?;
    controller_of(runtime, factory, &options)
        .run(shutdown)
        .await;
    Ok(())
}
