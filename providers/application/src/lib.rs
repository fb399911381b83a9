//! provider-application: the `Application` kind (group `apps.ferroplane.io`), a containerised
//! web application rendered as a Deployment, a Service (the exposed ports) and, when asked, an
//! Ingress and a HorizontalPodAutoscaler; on the ferroplane-runtime framework.
//!
//! # Entry point (called by the binary)
//! [`run`] runs the controller with its [`Options`] until `shutdown` completes, the way every
//! provider starts.
//!
//! # Flow of one reconcile
//! render the children (`render`, pure) → compare with the live objects (drift, a missing
//! child, an Ingress or autoscaler no longer in the spec, owner references that disagree with
//! the deletion policy) → report status from the Deployment's rollout, the Ingress's address
//! and the Secrets and ConfigMaps the pods need (`status`, `references`, pure) → when anything differs, apply the children with server-side apply and
//! delete the stale ones. The reasons it shows beyond the framework's are in [`reasons`].
//!
//! # Dependencies
//! Of ferroplane's crates, only `ferroplane-apis` and `ferroplane-runtime`; never another
//! provider or the binary.

mod controller;
mod error;
pub mod reasons;
mod references;
mod render;
mod status;

use std::future::Future;

use ferroplane_apis::application::Application;
use ferroplane_runtime::children::watch_config;
use ferroplane_runtime::{ManagedController, RunError, Runtime};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::core::v1::{ConfigMap, Secret, Service};
use k8s_openapi::api::networking::v1::Ingress;
use kube::api::Api;
use kube::core::PartialObjectMeta;
use kube::runtime::watcher;

use crate::controller::ApplicationConnector;
use crate::references::{Source, applications_needing};

/// What the Application controller can be configured with: the namespace it watches. It takes
/// its concurrency and poll interval from the runtime's
/// [`ControllerConfig`](ferroplane_runtime::ControllerConfig).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Options {
    /// Watch Applications and their children in this namespace only (`ferroplane run
    /// --namespace`, a namespaced install's Roles); `None` watches all namespaces.
    pub namespace: Option<String>,
}

/// `Api` of `K` in `namespace`, or in all namespaces.
fn api_in<K>(client: &kube::Client, namespace: Option<&str>) -> Api<K>
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>,
{
    match namespace {
        Some(namespace) => Api::namespaced(client.clone(), namespace),
        None => Api::all(client.clone()),
    }
}

/// Builds the Application controller: Applications in `namespace` (all when `None`), the
/// children they own, and the Secrets and ConfigMaps their pods need (metadata only: one that
/// appears or gains a key reconciles the Applications waiting for it).
fn controller(
    runtime: &Runtime,
    namespace: Option<&str>,
) -> ManagedController<Application, ApplicationConnector> {
    let client = runtime.client().clone();
    let children = || watch_config(&[]);
    ManagedController::new(
        runtime,
        api_in::<Application>(&client, namespace),
        ApplicationConnector::new(client.clone()),
    )
    .owns(api_in::<Deployment>(&client, namespace), children())
    .owns(api_in::<Service>(&client, namespace), children())
    .owns(api_in::<Ingress>(&client, namespace), children())
    .owns(
        api_in::<HorizontalPodAutoscaler>(&client, namespace),
        children(),
    )
    .watches_related(
        api_in::<PartialObjectMeta<Secret>>(&client, namespace),
        watcher::Config::default(),
        applications_needing(Source::Secret),
    )
    .watches_related(
        api_in::<PartialObjectMeta<ConfigMap>>(&client, namespace),
        watcher::Config::default(),
        applications_needing(Source::ConfigMap),
    )
}

/// Runs the Application controller until `shutdown` completes, then lets running reconciles
/// finish.
pub async fn run(
    runtime: &Runtime,
    options: Options,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), RunError> {
    // Destructuring makes a field added later impossible to overlook.
    let Options { namespace } = options;
    controller(runtime, namespace.as_deref())
        .run(shutdown)
        .await;
    Ok(())
}
