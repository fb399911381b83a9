//! Wiring of the reconciler into kube-runtime's `Controller`: the watch of the managed kind
//! (filtered so that our own status writes do not trigger reconciles), watches of related kinds
//! with mappers back to managed objects, reflector stores a provider can read, and the
//! concurrency limit.

use std::collections::hash_map::DefaultHasher;
use std::fmt::Debug;
use std::future::Future;
use std::hash::{Hash, Hasher};
use std::pin::Pin;
use std::sync::Arc;

use futures::future::{BoxFuture, FutureExt};
use futures::{StreamExt, TryStreamExt};
use kube::Resource;
use kube::api::Api;
use kube::runtime::controller::{Action, Config as KubeControllerConfig, Controller};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{PredicateConfig, WatchStreamExt, watcher};
use serde::de::DeserializeOwned;
use tracing::{debug, info, warn};

use crate::error::ReconcileError;
use crate::invalid::lenient_watcher;
use crate::observation_digests::ObservationDigests;
use crate::provider::Connector;
use crate::reconciler::{Reconciler, object_key};
use crate::resource::ManagedResource;
use crate::runtime::{ControllerConfig, Runtime};
use crate::versions::KnownVersions;

/// Which changes of a managed object start a reconcile: spec (generation), annotations
/// (paused, external-name, poll-interval), labels, deletion and finalizers. Status-only changes,
/// such as our own status writes, do not.
fn trigger_hash<K: Resource>(obj: &K) -> Option<u64> {
    let m = obj.meta();
    let mut h = DefaultHasher::new();
    m.uid.hash(&mut h);
    m.generation.hash(&mut h);
    m.annotations.hash(&mut h);
    m.labels.hash(&mut h);
    m.deletion_timestamp
        .as_ref()
        .map(|t| t.0.as_second())
        .hash(&mut h);
    m.finalizers.hash(&mut h);
    Some(h.finish())
}

type Task = Pin<Box<dyn Future<Output = ()> + Send>>;

const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Drops what the cache of managed objects need not hold.
fn slim<K: Resource>(obj: &mut K) {
    let meta = obj.meta_mut();
    meta.managed_fields = None;
    if let Some(annotations) = meta.annotations.as_mut() {
        annotations.remove(LAST_APPLIED);
    }
}

type Observer<K> = Arc<dyn Fn(&K) + Send + Sync>;

/// Callbacks for every object the managed kind's watch delivers.
struct Observers<K> {
    list: Arc<std::sync::RwLock<Vec<Observer<K>>>>,
}

impl<K> Clone for Observers<K> {
    fn clone(&self) -> Self {
        Self {
            list: self.list.clone(),
        }
    }
}

impl<K> Default for Observers<K> {
    fn default() -> Self {
        Self {
            list: Arc::default(),
        }
    }
}

impl<K> Observers<K> {
    fn add(&self, observer: impl Fn(&K) + Send + Sync + 'static) {
        self.list
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .push(Arc::new(observer));
    }

    fn notify(&self, event: &watcher::Event<K>) {
        let object = match event {
            watcher::Event::Apply(o) | watcher::Event::InitApply(o) | watcher::Event::Delete(o) => {
                o
            }
            watcher::Event::Init | watcher::Event::InitDone => return,
        };
        for observer in self.list.read().unwrap_or_else(|p| p.into_inner()).iter() {
            observer(object);
        }
    }
}

/// A controller for managed kind `K`, built by a provider and run by the binary.
pub struct ManagedController<K, C>
where
    K: ManagedResource,
{
    runtime: Runtime,
    controller: Controller<K>,
    connector: C,
    config: ControllerConfig,
    /// Versions the reconciler wrote, shared with the watch so it can skip their events.
    versions: Arc<KnownVersions>,
    /// What the watch keeps of the observations it takes out of the cache, for the reconciler.
    digests: Arc<ObservationDigests>,
    observers: Observers<K>,
    tasks: Vec<Task>,
}

impl<K, C> ManagedController<K, C>
where
    K: ManagedResource,
    C: Connector<K>,
{
    /// Watches `api` (all namespaces or one) and reconciles with `connector`.
    pub fn new(runtime: &Runtime, api: Api<K>, connector: C) -> Self {
        let (reader, writer) = reflector::store();
        let events = lenient_watcher(
            api,
            watcher::Config::default().any_semantic(),
            runtime.recorder(),
        );
        let versions = Arc::new(KnownVersions::default());
        let own = versions.clone();
        let observers = Observers::<K>::default();
        let notify = observers.clone();
        // managedFields and kubectl's copy of the last applied object are most of a stored
        // object's size, and nothing here reads them; nor, for some kinds, `atProvider`.
        let digests = Arc::new(ObservationDigests::default());
        let shed = digests.clone();
        let events = events.map_ok(move |mut event| {
            shed.on_event(&mut event);
            event.modify(slim::<K>)
        });
        let stream = reflector::reflector(writer, events)
            .default_backoff()
            .inspect_ok(move |event| notify.notify(event))
            .applied_objects()
            .predicate_filter(trigger_hash::<K>, PredicateConfig::default())
            .try_filter(move |obj| {
                let key = object_key(obj);
                futures::future::ready(!own.is_own(&key, obj))
            });
        Self {
            runtime: runtime.clone(),
            controller: Controller::for_stream(stream, reader),
            connector,
            config: runtime.config().controller.clone(),
            versions,
            digests,
            observers,
            tasks: Vec::new(),
        }
    }

    /// Overrides the runtime's default controller settings.
    pub fn with_config(mut self, config: ControllerConfig) -> Self {
        self.config = config;
        self
    }

    /// The store of managed objects, filled by the controller's watch.
    pub fn store(&self) -> Store<K> {
        self.controller.store()
    }

    /// Calls `observer` with every version of every managed object the watch delivers (the
    /// store already holds it), deleted ones included, so another controller can follow the
    /// managed kind without a watch and a cache of its own (see [`Self::store`]).
    pub fn observe_objects(&self, observer: impl Fn(&K) + Send + Sync + 'static) {
        self.observers.add(observer);
    }

    /// Watches a related kind `R` (a ProviderConfig, a credentials Secret, ...) and reconciles
    /// the managed objects `mapper` returns for each change. The mapper gets the store of
    /// managed objects to find those that reference the changed object (see [`crate::related`]).
    pub fn watches_related<R>(
        mut self,
        api: Api<R>,
        config: watcher::Config,
        mapper: impl Fn(&R, &Store<K>) -> Vec<ObjectRef<K>> + Send + Sync + 'static,
    ) -> Self
    where
        R: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    {
        let store = self.controller.store();
        self.controller = self
            .controller
            .watches(api, config, move |related: R| mapper(&related, &store));
        self
    }

    /// Watches child objects owned by the managed objects (in-cluster kinds): a change to a
    /// child (drift, readiness) reconciles its owner.
    pub fn owns<Child>(mut self, api: Api<Child>, config: watcher::Config) -> Self
    where
        Child:
            Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    {
        self.controller = self.controller.owns(api, config);
        self
    }

    /// Keeps a local, watched copy of kind `R` that a mapper or connector can read (for example
    /// the ProviderConfigs, to map a Secret change to the configs that use it). The watch runs
    /// while the controller runs.
    pub fn reflect<R>(&mut self, api: Api<R>, config: watcher::Config) -> Store<R>
    where
        R: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    {
        let (reader, writer) = reflector::store();
        let kind = R::kind(&()).into_owned();
        let task = reflector::reflector(writer, watcher(api, config))
            .default_backoff()
            .for_each(move |event| {
                if let Err(err) = event {
                    warn!(kind = %kind, error = %err, "watch of related kind failed; retrying");
                }
                futures::future::ready(())
            });
        self.tasks.push(Box::pin(task));
        reader
    }

    /// Runs until `shutdown` completes, then lets running reconciles finish.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send + 'static) {
        let kind = K::kind(&()).into_owned();
        let reconciler = Arc::new(
            Reconciler::new(&self.runtime, self.connector, self.config.requeue.clone())
                .with_versions(self.versions)
                .with_observation_digests(self.digests),
        );
        let shutdown = shutdown.boxed().shared();
        let unready_stop =
            crate::shutdown::stopped_before_ready(self.controller.store(), shutdown.clone());
        let controller = self
            .controller
            .with_config(KubeControllerConfig::default().concurrency(self.config.concurrency))
            // kube-runtime wants a `Sync` trigger; sharing the future makes any `Send` one so.
            .graceful_shutdown_on(shutdown);
        info!(kind = %kind, concurrency = self.config.concurrency, "starting controller");
        let main = controller
            .run(reconcile::<K, C>, error_policy::<K, C>, reconciler)
            .into_stream()
            .for_each(|res| {
                match res {
                    Ok((obj, _)) => debug!(object = %obj, "reconciled"),
                    Err(kube::runtime::controller::Error::ReconcilerFailed(err, obj)) => {
                        debug!(object = %obj, error = %err, "reconcile failed")
                    }
                    Err(err) => warn!(error = %err, "controller error"),
                }
                futures::future::ready(())
            });
        // Related reflectors never end on their own; they stop with the controller.
        let background: BoxFuture<'static, ()> = if self.tasks.is_empty() {
            futures::future::pending().boxed()
        } else {
            futures::future::join_all(self.tasks).map(|_| ()).boxed()
        };
        futures::pin_mut!(main);
        futures::pin_mut!(unready_stop);
        let stopped = futures::future::select(unready_stop, background);
        futures::future::select(main, stopped).await;
        info!(kind = %kind, "controller stopped");
    }
}

async fn reconcile<K: ManagedResource, C: Connector<K>>(
    obj: Arc<K>,
    reconciler: Arc<Reconciler<K, C>>,
) -> Result<Action, ReconcileError> {
    reconciler.reconcile(&obj).await
}

fn error_policy<K: ManagedResource, C: Connector<K>>(
    obj: Arc<K>,
    err: &ReconcileError,
    reconciler: Arc<Reconciler<K, C>>,
) -> Action {
    reconciler.error_action(&obj, err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;

    fn cm(generation: i64, status_like: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some("a".into()),
                uid: Some("u".into()),
                generation: Some(generation),
                resource_version: Some(status_like.into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    #[test]
    fn the_cache_holds_no_managed_fields_or_last_applied_copy() {
        let mut obj = cm(1, "10");
        obj.metadata.managed_fields = Some(vec![Default::default()]);
        obj.metadata.annotations = Some(
            [
                (LAST_APPLIED.to_owned(), "{}".to_owned()),
                ("keep".to_owned(), "me".to_owned()),
            ]
            .into(),
        );
        slim(&mut obj);
        assert_eq!(obj.metadata.managed_fields, None);
        assert_eq!(
            obj.metadata.annotations,
            Some([("keep".to_owned(), "me".to_owned())].into())
        );
    }

    #[test]
    fn trigger_ignores_resource_version_only_changes() {
        assert_eq!(trigger_hash(&cm(1, "10")), trigger_hash(&cm(1, "11")));
        assert_ne!(trigger_hash(&cm(1, "10")), trigger_hash(&cm(2, "10")));
        let mut annotated = cm(1, "10");
        annotated.metadata.annotations =
            Some([("ferroplane.io/paused".to_owned(), "true".to_owned())].into());
        assert_ne!(trigger_hash(&cm(1, "10")), trigger_hash(&annotated));
    }
}
