//! The ProviderConfig and ClusterProviderConfig controllers.
//!
//! Per configuration: `status.users` (how many managed objects of any Alibaba kind reference it,
//! Crossplane's field), a `Ready` condition saying whether its credentials load (reason and
//! message name what to fix), and the `ferroplane.io/in-use` finalizer, removed on deletion only
//! once no managed object references it (checked with fresh lists, not the caches). A change of
//! any managed object's reference, or of the config's Secret, reconciles the config at once;
//! otherwise it is looked at every poll interval, which also re-checks temporary credentials.
//!
//! `config_kind` abstracts over the two kinds, `references` follows which object references
//! which configuration, `users` counts and lists the users over every kind, `reconcile` is one
//! reconcile of a configuration.

mod config_kind;
mod reconcile;
mod references;
mod users;

pub use self::users::ConfigUsers;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use ferroplane_apis::alibabacloud::{ClusterProviderConfig, ProviderConfig};
use ferroplane_runtime::Runtime;
use futures::StreamExt;
use futures::channel::mpsc::UnboundedReceiver;
use futures::future::{BoxFuture, Shared};
use k8s_openapi::api::core::v1::Secret as KubeSecret;
use kube::Api;
use kube::core::PartialObjectMeta;
use kube::runtime::controller::Controller;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use tracing::{info, warn};

use self::config_kind::ConfigKind;
use self::reconcile::{Context, error_policy, reconcile};
use self::users::UserCounts;
use crate::cloud_client::ClientCache;
use crate::config_resolution::{ConfigResolver, uses_secret};
use crate::options::Options;

/// Runs both configuration controllers until `shutdown` completes. They follow the managed
/// objects through the managed kinds' watches and stores (`users`, filled by
/// [`ConfigUsers::follow`]) rather than watching and caching every object again.
pub(crate) fn run(
    runtime: &Runtime,
    options: Options,
    users: ConfigUsers,
    shutdown: Shared<BoxFuture<'static, ()>>,
) -> impl Future<Output = ()> + Send + use<> {
    let client = runtime.client().clone();
    let namespaced: Api<ProviderConfig> = match &options.namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    };
    let cluster: Api<ClusterProviderConfig> = Api::all(client.clone());
    let (counts, changed) = users.split();
    let counts = Arc::new(counts);
    let runtime = runtime.clone();
    async move {
        futures::join!(
            run_kind(
                &runtime,
                client.clone(),
                &options,
                namespaced,
                counts.clone(),
                changed.namespaced,
                shutdown.clone()
            ),
            async {
                // Cluster-scoped: not for a namespaced install (Roles only).
                if options.namespace.is_none() {
                    run_kind(
                        &runtime,
                        client,
                        &options,
                        cluster,
                        counts,
                        changed.cluster,
                        shutdown,
                    )
                    .await;
                }
            },
        );
    }
}

async fn run_kind<P: ConfigKind>(
    runtime: &Runtime,
    client: kube::Client,
    options: &Options,
    api: Api<P>,
    users: Arc<UserCounts>,
    users_changed: UnboundedReceiver<ObjectRef<P>>,
    shutdown: Shared<BoxFuture<'static, ()>>,
) {
    let context = Arc::new(Context {
        resolver: ConfigResolver::new(client.clone())
            .allow_endpoints(options.allowed_endpoints.clone()),
        cache: ClientCache::new(
            options.client.clone(),
            None,
            Duration::ZERO,
            runtime.external_calls(KIND_LABEL),
        ),
        users,
        recorder: runtime.recorder(),
        poll: options.poll_interval,
        client: client.clone(),
    });
    let controller = Controller::new(api, watcher::Config::default());
    let configs = controller.store();
    // Only names matter here: a metadata-only watch never carries credentials.
    let secrets: Api<PartialObjectMeta<KubeSecret>> = options.api(&client);
    let kind = P::kind(&()).into_owned();
    info!(kind = %kind, "starting controller");
    let ready_gate = controller.store();
    let main = controller
        .reconcile_on(users_changed)
        .watches(
            secrets,
            watcher::Config::default(),
            move |secret: PartialObjectMeta<KubeSecret>| {
                configs
                    .state()
                    .iter()
                    .filter(|c| uses_secret(c.as_ref(), &secret))
                    .map(|c| ObjectRef::from_obj(c.as_ref()))
                    .collect::<Vec<_>>()
            },
        )
        .graceful_shutdown_on(shutdown.clone())
        .run(reconcile::<P>, error_policy::<P>, context)
        .for_each(|result| {
            if let Err(err) = result {
                warn!(error = %err, "provider config reconcile failed");
            }
            futures::future::ready(())
        });
    let unready_stop = ferroplane_runtime::shutdown::stopped_before_ready(ready_gate, shutdown);
    futures::pin_mut!(main, unready_stop);
    futures::future::select(main, unready_stop).await;
    info!(kind = %kind, "controller stopped");
}

/// Label of the configuration controllers' external calls (STS, while checking credentials).
const KIND_LABEL: &str = "ProviderConfig";
