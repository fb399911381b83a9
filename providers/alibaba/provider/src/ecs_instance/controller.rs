//! The ECSInstance controller and the ProviderConfig / ClusterProviderConfig controllers, on the
//! managed-resource framework of `ferroplane-runtime`.
//!
//! Entry point: [`run`] starts all three controllers and returns when `shutdown` completes.
//!
//! ```no_run
//! # async fn demo(runtime: ferroplane_runtime::Runtime, client: kube::Client) {
//! use provider_alibaba::controller::{self, ControllerOptions};
//! let options = ControllerOptions::default(); // all namespaces, batching on
//! controller::run(&runtime, client, options, async {
//!     let _ = tokio::signal::ctrl_c().await;
//! })
//! .await;
//! # }
//! ```
//!
//! One reconcile of an ECSInstance, where each step lives:
//! - [`connector`]: ProviderConfig (or ClusterProviderConfig) → credentials ([`config`],
//!   [`secret_keys`]) → a cached, signed ECS client per (config version, region) ([`cache`]).
//! - [`external`]: `observe` through the [`batcher`] (one `DescribeInstances` for up to 100
//!   instances sharing credentials, endpoint and region), or by the `ferroplane.io/uid` tag when
//!   the instance ID is unknown; `create` with `RunInstances`; `update` from the [`diff`] plan;
//!   `delete` with `DeleteInstance`.
//! - Pure mapping: [`params`] (spec → `RunInstances`), [`diff`] (spec vs instance → plan),
//!   [`late_init`] (instance → unset spec fields), [`observation`] (instance → status,
//!   readiness, connection details), [`errors`] (ECS error → condition reason, message, retry).
//!
//! [`provider_config`] runs the configuration kinds: `status.users`, a `Ready` condition saying
//! whether the credentials load, and the `ferroplane.io/in-use` finalizer.
//!
//! # Requeues and permissions
//! A change to a ProviderConfig's or ClusterProviderConfig's spec, to its credentials Secret, or
//! to an instance's `passwordSecretRef` Secret reconciles the instances concerned at once; status
//! writes to configurations do not. The process needs get/list/watch on Secrets in every
//! namespace (a ClusterProviderConfig may name any namespace), get/list/watch/patch on the three
//! kinds and their `/status`, create/patch on Secrets for connection details, and create on
//! events.
//!
//! # Batching
//! With [`ControllerOptions::batching`] (the default) instances sharing a configuration version
//! and region are observed through one [`batcher::Batcher`]: about ceil(N/100)
//! `DescribeInstances` calls per poll interval. Without it every observation is its own call,
//! which is what the benchmark compares against.

pub mod batcher;
pub mod cache;
pub mod config;
pub mod connector;
pub mod diff;
pub mod errors;
pub mod external;
pub mod inputs;
pub mod late_init;
pub mod observation;
pub mod params;
pub mod provider_config;
pub mod recent;
pub mod resolved;
pub mod secret_keys;

use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use ferroplane_apis::alibabacloud::{ClusterProviderConfig, ECSInstance, ProviderConfig};
use ferroplane_apis::common::ProviderConfigKind;
use ferroplane_runtime::requeue::RequeuePolicy;
use ferroplane_runtime::{ControllerConfig, ManagedController, Runtime, related};
use futures::FutureExt;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};

use crate::client::RetryPolicy;

pub use connector::EcsConnector;
pub use external::EcsExternal;

/// Name of the managed kind in metrics and logs.
pub const KIND: &str = "ECSInstance";

/// How the controllers run. `Default` watches every namespace, polls every 60 s and batches
/// observations.
#[derive(Clone, Debug)]
pub struct ControllerOptions {
    /// Namespace to watch; `None` watches all of them.
    pub namespace: Option<String>,
    /// How often an instance is observed when nothing happens.
    pub poll_interval: Duration,
    /// How often an instance is observed while it starts, stops or is released.
    pub transition_interval: Duration,
    /// ECSInstance reconciles running at once.
    pub max_concurrent_reconciles: u16,
    /// Coalesce observations into shared `DescribeInstances` calls of up to 100 IDs. When false
    /// every observation makes its own call (what other providers do; for benchmarks).
    pub batching: bool,
    /// How long the batcher collects IDs before it calls `DescribeInstances`.
    pub batch_window: Duration,
    /// Overrides of the ECS client settings.
    pub client: ClientOverrides,
}

impl Default for ControllerOptions {
    fn default() -> Self {
        Self {
            namespace: None,
            poll_interval: Duration::from_secs(60),
            transition_interval: Duration::from_secs(5),
            max_concurrent_reconciles: 16,
            batching: true,
            batch_window: Duration::from_millis(5),
            client: ClientOverrides::default(),
        }
    }
}

/// ECS client settings that replace the defaults for every configuration.
#[derive(Clone, Debug, Default)]
pub struct ClientOverrides {
    /// Time allowed for one attempt of a call.
    pub request_timeout: Option<Duration>,
    /// Time allowed to connect.
    pub connect_timeout: Option<Duration>,
    /// Retries of throttling, 5xx and network failures inside one call.
    pub retry: Option<RetryPolicy>,
    /// STS endpoint for `RamRoleArn` and `RRSA` credentials, instead of
    /// `https://sts.<region>.aliyuncs.com` (e.g. the ECS mock, which serves STS too).
    pub sts_endpoint: Option<String>,
}

impl ControllerOptions {
    fn requeue_policy(&self) -> RequeuePolicy {
        RequeuePolicy {
            poll_interval: self.poll_interval,
            transition_interval: self.transition_interval,
            backoff_max: RequeuePolicy::default().backoff_max.max(self.poll_interval),
            min_poll_interval: RequeuePolicy::default()
                .min_poll_interval
                .min(self.poll_interval),
            ..RequeuePolicy::default()
        }
    }

    fn api<K>(&self, client: &kube::Client) -> Api<K>
    where
        K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>,
    {
        match &self.namespace {
            Some(ns) => Api::namespaced(client.clone(), ns),
            None => Api::all(client.clone()),
        }
    }
}

/// Runs the ECSInstance, ProviderConfig and ClusterProviderConfig controllers until `shutdown`
/// completes, then lets running reconciles finish.
pub async fn run(
    runtime: &Runtime,
    client: kube::Client,
    options: ControllerOptions,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let shutdown = shutdown.boxed().shared();
    let ecs = ecs_instance_controller(runtime, client.clone(), &options);
    let configs = provider_config::run(runtime, client, options, &ecs, shutdown.clone());
    futures::join!(ecs.run(shutdown), configs);
}

/// The ECSInstance controller alone, wired to requeue instances when their ProviderConfig,
/// ClusterProviderConfig or credentials Secret changes. [`run`] uses it.
pub fn ecs_instance_controller(
    runtime: &Runtime,
    client: kube::Client,
    options: &ControllerOptions,
) -> ManagedController<ECSInstance, EcsConnector> {
    let connector = EcsConnector::new(client.clone(), options, runtime.external_calls(KIND));
    let connector_configs = connector.configs();
    let mut controller = ManagedController::new(runtime, options.api(&client), connector)
        .with_config(ControllerConfig {
            concurrency: options.max_concurrent_reconciles,
            requeue: options.requeue_policy(),
        });
    let configs: Api<ProviderConfig> = options.api(&client);
    let cluster_configs: Api<ClusterProviderConfig> = Api::all(client.clone());
    // Only names and versions matter: a metadata-only watch never carries credentials.
    let secrets: Api<PartialObjectMeta<Secret>> = Api::all(client.clone());
    let config_store = controller.reflect(configs.clone(), watcher::Config::default());
    let cluster_store = controller.reflect(cluster_configs.clone(), watcher::Config::default());

    let by_config = related::provider_config_mapper::<ProviderConfig, ECSInstance>(
        ProviderConfigKind::ProviderConfig,
    );
    let by_cluster_config = related::provider_config_mapper::<ClusterProviderConfig, ECSInstance>(
        ProviderConfigKind::ClusterProviderConfig,
    );
    let via_config =
        related::via_provider_configs::<PartialObjectMeta<Secret>, ProviderConfig, ECSInstance>(
            config_store,
            ProviderConfigKind::ProviderConfig,
            config::uses_secret,
        );
    let via_cluster_config = related::via_provider_configs::<
        PartialObjectMeta<Secret>,
        ClusterProviderConfig,
        ECSInstance,
    >(
        cluster_store,
        ProviderConfigKind::ClusterProviderConfig,
        config::uses_secret,
    );
    let config_changes = SpecChanges::default();
    let cluster_changes = SpecChanges::default();
    let secret_changes = SpecChanges::default();
    // The resolved-config cache hears of every change before the instances are requeued.
    let (resolved, cluster_resolved, secret_resolved) = (
        connector_configs.clone(),
        connector_configs.clone(),
        connector_configs,
    );
    controller
        .watches_related(configs, watcher::Config::default(), move |c, store| {
            resolved.config_changed(ProviderConfigKind::ProviderConfig, c);
            config_changes.filter(c, || by_config(c, store))
        })
        .watches_related(
            cluster_configs,
            watcher::Config::default(),
            move |c, store| {
                cluster_resolved.config_changed(ProviderConfigKind::ClusterProviderConfig, c);
                cluster_changes.filter(c, || by_cluster_config(c, store))
            },
        )
        .watches_related(secrets, watcher::Config::default(), move |s, store| {
            secret_resolved.secret_changed(s);
            secret_changes.filter(s, || {
                let mut refs = via_config(s, store);
                refs.extend(via_cluster_config(s, store));
                refs.extend(using_password(s, store));
                refs
            })
        })
}

/// ECSInstances whose `passwordSecretRef` names `secret`.
fn using_password(
    secret: &PartialObjectMeta<Secret>,
    store: &Store<ECSInstance>,
) -> Vec<ObjectRef<ECSInstance>> {
    store
        .state()
        .iter()
        .filter(|i| {
            i.namespace() == secret.namespace()
                && i.spec
                    .for_provider
                    .password_secret_ref
                    .as_ref()
                    .is_some_and(|r| r.name == secret.name_any())
        })
        .map(|i| ObjectRef::from_obj(i.as_ref()))
        .collect()
}

/// Remembers the last version of each related object seen, so that only changes that matter
/// requeue managed objects: a new `generation` (spec) of a config, or any change of a Secret.
/// Without it, every `status.users` write of a ProviderConfig would requeue all its instances.
#[derive(Default)]
struct SpecChanges {
    seen: Mutex<HashMap<String, String>>,
}

impl SpecChanges {
    fn filter<R: Resource, K: Resource>(
        &self,
        related: &R,
        refs: impl FnOnce() -> Vec<ObjectRef<K>>,
    ) -> Vec<ObjectRef<K>> {
        let meta = related.meta();
        let uid = meta.uid.clone().unwrap_or_else(|| related.name_any());
        let version = match meta.generation {
            Some(generation) => generation.to_string(),
            None => meta.resource_version.clone().unwrap_or_default(),
        };
        let version = format!("{version}/{}", meta.deletion_timestamp.is_some());
        let changed = {
            let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
            seen.insert(uid, version.clone()).as_deref() != Some(version.as_str())
        };
        if changed { refs() } else { Vec::new() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(generation: i64, rv: &str) -> ProviderConfig {
        let mut c: ProviderConfig = serde_json::from_value(serde_json::json!({
            "apiVersion": "alibabacloud.ferroplane.io/v1alpha1",
            "kind": "ProviderConfig",
            "metadata": {"name": "default", "namespace": "ns", "uid": "u-1"},
            "spec": {"credentials": {"source": "Environment"}},
        }))
        .expect("config");
        c.metadata.generation = Some(generation);
        c.metadata.resource_version = Some(rv.into());
        c
    }

    #[test]
    fn only_spec_changes_of_a_config_requeue_its_instances() {
        let changes = SpecChanges::default();
        let one = || vec![ObjectRef::<ECSInstance>::new("a").within("ns")];
        assert_eq!(
            changes.filter(&config(1, "10"), one).len(),
            1,
            "first sight"
        );
        assert!(
            changes.filter(&config(1, "11"), one).is_empty(),
            "status write"
        );
        assert_eq!(
            changes.filter(&config(2, "12"), one).len(),
            1,
            "spec change"
        );
    }

    #[test]
    fn options_map_to_a_requeue_policy() {
        let options = ControllerOptions {
            poll_interval: Duration::from_secs(2),
            ..ControllerOptions::default()
        };
        let policy = options.requeue_policy();
        assert_eq!(policy.poll_interval, Duration::from_secs(2));
        assert_eq!(policy.min_poll_interval, Duration::from_secs(2));
        assert_eq!(policy.transition_interval, Duration::from_secs(5));
    }
}
