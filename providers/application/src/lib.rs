//! provider-application: the `Application` kind (group `apps.ferroplane.io`), a containerised
//! web application rendered as a Deployment, a Service (port 80 → the container port) and,
//! when `ingress` is set, an Ingress; on the ferroplane-runtime framework.
//!
//! # Entry points (called by the binary)
//! - [`run`]: runs the controller until `shutdown` completes.
//! - [`controller`]: the controller, to run it yourself (tests, custom wiring).
//!
//! # Flow of one reconcile
//! render the children ([`render`], pure) → compare with the live objects (drift, a missing
//! child, an Ingress no longer in the spec, owner references that disagree with the deletion
//! policy) → report status from the Deployment ([`status`], pure) → when anything differs,
//! apply the children with server-side apply and delete the stale Ingress.

pub mod controller;
pub mod error;
pub mod render;
pub mod status;

use std::future::Future;

use ferroplane_apis::application::Application;
use ferroplane_runtime::{ManagedController, Runtime};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::Ingress;
use kube::api::Api;
use kube::runtime::watcher;

use crate::controller::ApplicationConnector;

/// Selects every child ferroplane renders, so that the child watches stay small.
const MANAGED_SELECTOR: &str = "app.kubernetes.io/managed-by=ferroplane";

/// Builds the Application controller: Applications in all namespaces and the children they own.
pub fn controller(runtime: &Runtime) -> ManagedController<Application, ApplicationConnector> {
    let client = runtime.client().clone();
    let children = || watcher::Config::default().labels(MANAGED_SELECTOR);
    ManagedController::new(
        runtime,
        Api::<Application>::all(client.clone()),
        ApplicationConnector::new(client.clone()),
    )
    .owns(Api::<Deployment>::all(client.clone()), children())
    .owns(Api::<Service>::all(client.clone()), children())
    .owns(Api::<Ingress>::all(client), children())
}

/// Runs the Application controller until `shutdown` completes.
pub async fn run(runtime: &Runtime, shutdown: impl Future<Output = ()> + Send + Sync + 'static) {
    controller(runtime).run(shutdown).await;
}
