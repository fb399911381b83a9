//! provider-etcd: the `EtcdCluster` kind (group `etcd.ferroplane.io`), an etcd cluster run in
//! the Kubernetes cluster, on the ferroplane-runtime framework.
//!
//! # Entry points (called by the binary)
//! - [`run`]: runs the controller with the production membership client (etcd's JSON gateway
//!   through each cluster's client Service) until `shutdown` completes.
//! - [`controller`]: the same controller with any [`controller::MembershipFactory`], for tests
//!   and for environments without reachable pods.
//!
//! # Flow of one reconcile
//! validate the spec ([`version`], size, name) → read the StatefulSet and member pods → ask etcd
//! for its members and their health ([`scaling::observe`]) → plan one step ([`planner`]) →
//! render the children ([`render`]) and compare them with the live ones → report status
//! ([`status`]) → when anything differs: carry out the step ([`scaling::apply`]) and apply the
//! children.
//!
//! # Membership and bootstrap
//! A new cluster's members start together from per-member configuration files
//! (`initial-cluster-state: new`, peers `<name>-<i>.<name>.<ns>.svc:2380`). Afterwards every
//! change goes through etcd's membership API, one member at a time, never losing quorum:
//! growth adds a learner before its pod exists and promotes it once it has caught up; shrinking
//! removes the highest member before its pod goes. A member whose pod keeps crashing while the
//! rest of the cluster is healthy (typically: its data was lost, so etcd refuses its old
//! identity) is removed and added back as a learner, and its pod and volume are deleted so that
//! it starts empty and joins as a new member. When etcd cannot be reached, nothing changes size
//! and status comes from the StatefulSet (see [`status`]).

pub mod controller;
pub mod error;
pub mod membership;
pub mod names;
pub mod planner;
pub mod render;
pub mod scaling;
pub mod status;
pub mod version;

use std::future::Future;

use ferroplane_apis::etcd::EtcdCluster;
use ferroplane_runtime::events::Events;
use ferroplane_runtime::{ManagedController, Runtime};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ConfigMap, Service};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::api::Api;
use kube::runtime::watcher;

use crate::controller::{EtcdConnector, GatewayFactory, MembershipFactory};
use crate::membership::GatewayConfig;

/// Label selecting every child ferroplane renders, so that the child watches stay small.
const MANAGED_SELECTOR: &str =
    "app.kubernetes.io/managed-by=ferroplane,app.kubernetes.io/name=etcd";

/// Builds the EtcdCluster controller with `factory` for membership clients. Watches
/// EtcdClusters in all namespaces and the children they own.
pub fn controller<F: MembershipFactory>(
    runtime: &Runtime,
    factory: F,
) -> ManagedController<EtcdCluster, EtcdConnector<F>> {
    let client = runtime.client().clone();
    let events = Events::new(runtime.recorder());
    let children = || watcher::Config::default().labels(MANAGED_SELECTOR);
    ManagedController::new(
        runtime,
        Api::<EtcdCluster>::all(client.clone()),
        EtcdConnector::new(client.clone(), factory, events),
    )
    .owns(Api::<StatefulSet>::all(client.clone()), children())
    .owns(Api::<Service>::all(client.clone()), children())
    .owns(Api::<ConfigMap>::all(client.clone()), children())
    .owns(Api::<PodDisruptionBudget>::all(client), children())
}

/// Runs the EtcdCluster controller until `shutdown` completes.
pub async fn run(
    runtime: &Runtime,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) -> Result<(), reqwest::Error> {
    let factory = GatewayFactory::new(&GatewayConfig::default())?;
    controller(runtime, factory).run(shutdown).await;
    Ok(())
}
