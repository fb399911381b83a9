//! The ProviderConfig and ClusterProviderConfig controllers.
//!
//! Per configuration: `status.users` (how many ECSInstances reference it), a `Ready` condition
//! saying whether its credentials load (reason and message name what to fix), and the
//! `ferroplane.io/in-use` finalizer, removed on deletion only once no ECSInstance references it
//! (checked with a fresh list, not the cache). A change of an ECSInstance's reference, or of the
//! config's Secret, reconciles the config at once; otherwise it is looked at every poll interval,
//! which also re-checks temporary credentials.

use std::collections::HashMap;
use std::fmt::Debug;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferroplane_apis::alibabacloud::{
    ClusterProviderConfig, ECSInstance, ProviderConfig, ProviderConfigSettings,
    ProviderConfigStatus,
};
use ferroplane_apis::common::{ConditionStatus, Managed, ProviderConfigKind, names};
use ferroplane_runtime::conditions::{self, Desired};
use ferroplane_runtime::events::EventRecorder;
use ferroplane_runtime::{Connector, ManagedController};
use ferroplane_runtime::{ReconcileError, Runtime};
use futures::StreamExt;
use futures::channel::mpsc::UnboundedReceiver;
use futures::future::{BoxFuture, Shared};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Secret as KubeSecret;
use kube::api::{ListParams, Patch, PatchParams};
use kube::core::PartialObjectMeta;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event as KubeEvent, EventType};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Api, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;
use tracing::{info, warn};

use super::ControllerOptions;
use super::cache::ClientCache;
use super::config::{self, ConfigResolver};

/// Finalizer that keeps a configuration while ECSInstances reference it.
pub const IN_USE_FINALIZER: &str = "ferroplane.io/in-use";
/// Field manager of status writes.
const FIELD_MANAGER: &str = "ferroplane";
/// Requeue after a failed reconcile.
const ERROR_REQUEUE: Duration = Duration::from_secs(5);

/// The two configuration kinds.
pub trait ConfigKind:
    Resource<DynamicType = ()>
    + ProviderConfigSettings
    + Clone
    + Serialize
    + DeserializeOwned
    + Debug
    + Send
    + Sync
    + 'static
{
    const KIND: ProviderConfigKind;
    fn config_status(&self) -> Option<&ProviderConfigStatus>;
    /// The API for objects of this kind in `namespace` (ignored for cluster-scoped kinds).
    fn api_in(client: kube::Client, namespace: Option<&str>) -> Api<Self>;
}

impl ConfigKind for ProviderConfig {
    const KIND: ProviderConfigKind = ProviderConfigKind::ProviderConfig;
    fn config_status(&self) -> Option<&ProviderConfigStatus> {
        self.status.as_ref()
    }
    fn api_in(client: kube::Client, namespace: Option<&str>) -> Api<Self> {
        match namespace {
            Some(ns) => Api::namespaced(client, ns),
            None => Api::all(client),
        }
    }
}

impl ConfigKind for ClusterProviderConfig {
    const KIND: ProviderConfigKind = ProviderConfigKind::ClusterProviderConfig;
    fn config_status(&self) -> Option<&ProviderConfigStatus> {
        self.status.as_ref()
    }
    fn api_in(client: kube::Client, _namespace: Option<&str>) -> Api<Self> {
        Api::all(client)
    }
}

struct Context {
    client: kube::Client,
    resolver: ConfigResolver,
    cache: ClientCache,
    instances: Store<ECSInstance>,
    recorder: EventRecorder,
    poll: Duration,
}

/// Runs both configuration controllers until `shutdown` completes. They follow ECSInstances
/// through the ECSInstance controller's watch and store (`instances`) rather than watching and
/// caching every instance again.
pub(crate) fn run<C>(
    runtime: &Runtime,
    client: kube::Client,
    options: ControllerOptions,
    instances: &ManagedController<ECSInstance, C>,
    shutdown: Shared<BoxFuture<'static, ()>>,
) -> impl Future<Output = ()> + Send + use<C>
where
    C: Connector<ECSInstance>,
{
    let namespaced: Api<ProviderConfig> = match &options.namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    };
    let cluster: Api<ClusterProviderConfig> = Api::all(client.clone());
    let (namespaced_users, cluster_users) = follow_users(instances);
    let store = instances.store();
    let runtime = runtime.clone();
    async move {
        futures::join!(
            run_kind(
                &runtime,
                client.clone(),
                &options,
                namespaced,
                store.clone(),
                namespaced_users,
                shutdown.clone()
            ),
            run_kind(
                &runtime,
                client,
                &options,
                cluster,
                store,
                cluster_users,
                shutdown
            ),
        );
    }
}

/// The configurations whose users change, by kind, as the instances' watch sees them: one
/// record of every instance's reference serves both configuration controllers.
fn follow_users<C: Connector<ECSInstance>>(
    instances: &ManagedController<ECSInstance, C>,
) -> (
    UnboundedReceiver<ObjectRef<ProviderConfig>>,
    UnboundedReceiver<ObjectRef<ClusterProviderConfig>>,
) {
    let (namespaced, namespaced_users) = futures::channel::mpsc::unbounded();
    let (cluster, cluster_users) = futures::channel::mpsc::unbounded();
    let references = ReferenceChanges::default();
    instances.observe_objects(move |instance| {
        // A send fails only once the configuration controller has stopped.
        for config in references.concerned(instance) {
            match config.kind {
                ProviderConfigKind::ProviderConfig => {
                    let _ = namespaced.unbounded_send(config.object_ref());
                }
                ProviderConfigKind::ClusterProviderConfig => {
                    let _ = cluster.unbounded_send(config.object_ref());
                }
            }
        }
    });
    (namespaced_users, cluster_users)
}

async fn run_kind<P: ConfigKind>(
    runtime: &Runtime,
    client: kube::Client,
    options: &ControllerOptions,
    api: Api<P>,
    instances: Store<ECSInstance>,
    users_changed: UnboundedReceiver<ObjectRef<P>>,
    shutdown: Shared<BoxFuture<'static, ()>>,
) {
    let context = Arc::new(Context {
        resolver: ConfigResolver::new(client.clone()),
        cache: ClientCache::new(
            options.client.clone(),
            None,
            Duration::ZERO,
            runtime.external_calls(KIND_LABEL),
        ),
        instances,
        recorder: runtime.recorder(),
        poll: options.poll_interval,
        client: client.clone(),
    });
    let controller = Controller::new(api, watcher::Config::default());
    let configs = controller.store();
    // Only names matter here: a metadata-only watch never carries credentials.
    let secrets: Api<PartialObjectMeta<KubeSecret>> = Api::all(client);
    let kind = P::kind(&()).into_owned();
    info!(kind = %kind, "starting controller");
    controller
        .reconcile_on(users_changed)
        .watches(
            secrets,
            watcher::Config::default(),
            move |secret: PartialObjectMeta<KubeSecret>| {
                configs
                    .state()
                    .iter()
                    .filter(|c| config::uses_secret(c.as_ref(), &secret))
                    .map(|c| ObjectRef::from_obj(c.as_ref()))
                    .collect::<Vec<_>>()
            },
        )
        .graceful_shutdown_on(shutdown)
        .run(reconcile::<P>, error_policy::<P>, context)
        .for_each(|result| {
            if let Err(err) = result {
                warn!(error = %err, "provider config reconcile failed");
            }
            futures::future::ready(())
        })
        .await;
    info!(kind = %kind, "controller stopped");
}

/// Label of the configuration controllers' external calls (STS, while checking credentials).
const KIND_LABEL: &str = "ProviderConfig";

/// Which configuration each ECSInstance referenced last, so that only a new, changed or
/// dropped reference reconciles a configuration (not every status write of an instance).
#[derive(Default)]
struct ReferenceChanges {
    /// By instance UID: the configuration referenced, and whether deletion had started.
    seen: Mutex<HashMap<String, (ProviderConfigKind, String, bool)>>,
}

/// A configuration whose users an instance's change concerns.
#[derive(Debug, Clone, PartialEq)]
struct Concerned {
    kind: ProviderConfigKind,
    name: String,
    /// The instance's namespace (where a ProviderConfig lives).
    namespace: Option<String>,
}

impl Concerned {
    fn object_ref<P: ConfigKind>(&self) -> ObjectRef<P> {
        let r = ObjectRef::new(&self.name);
        match (P::KIND, &self.namespace) {
            (ProviderConfigKind::ProviderConfig, Some(ns)) => r.within(ns),
            _ => r,
        }
    }
}

impl ReferenceChanges {
    /// The configurations this version of `instance` concerns: the one it references when that
    /// reference or the deletion state is new, and the one it referenced before, if another.
    fn concerned(&self, instance: &ECSInstance) -> Vec<Concerned> {
        let reference = &instance.spec.provider_config_ref;
        let uid = instance.uid().unwrap_or_else(|| instance.name_any());
        let deleting = instance.metadata.deletion_timestamp.is_some();
        let finished = deleting && instance.finalizers().is_empty();
        let state = (reference.kind, reference.name.clone(), deleting);
        let previous = {
            let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
            if finished {
                seen.remove(&uid)
            } else {
                seen.insert(uid, state.clone())
            }
        };
        if !finished && previous.as_ref() == Some(&state) {
            return Vec::new();
        }
        let concerned = |kind, name: &str| Concerned {
            kind,
            name: name.to_owned(),
            namespace: instance.namespace(),
        };
        let mut out = vec![concerned(reference.kind, &reference.name)];
        // A changed reference also frees the configuration referenced before.
        if let Some((kind, name, _)) = previous
            && (kind, &name) != (reference.kind, &reference.name)
        {
            out.push(concerned(kind, &name));
        }
        out
    }
}

fn api_for<P: ConfigKind>(client: &kube::Client, config: &P) -> Api<P> {
    P::api_in(client.clone(), config.namespace().as_deref())
}

fn references<P: ConfigKind>(instance: &ECSInstance, config: &P) -> bool {
    let Some(r) = instance.provider_config_ref() else {
        return false;
    };
    r.kind == P::KIND
        && r.name == config.name_any()
        && (P::KIND == ProviderConfigKind::ClusterProviderConfig
            || instance.namespace() == config.namespace())
}

/// Users according to a fresh list (the deletion decision must not trust a cache).
async fn live_users<P: ConfigKind>(
    ctx: &Context,
    config: &P,
) -> Result<Vec<String>, ReconcileError> {
    let api: Api<ECSInstance> = match (P::KIND, config.namespace()) {
        (ProviderConfigKind::ProviderConfig, Some(ns)) => Api::namespaced(ctx.client.clone(), &ns),
        _ => Api::all(ctx.client.clone()),
    };
    let list = api.list(&ListParams::default()).await.map_err(|e| {
        ReconcileError::retryable(
            "KubernetesApiError",
            format!("cannot list ECSInstances: {e}"),
        )
    })?;
    Ok(list
        .items
        .iter()
        .filter(|i| references(i, config))
        .map(|i| match i.namespace() {
            Some(ns) => format!("{ns}/{}", i.name_any()),
            None => i.name_any(),
        })
        .collect())
}

async fn reconcile<P: ConfigKind>(
    config: Arc<P>,
    ctx: Arc<Context>,
) -> Result<Action, ReconcileError> {
    let api = api_for(&ctx.client, config.as_ref());
    let name = config.name_any();
    let Some(config) = api.get_opt(&name).await.map_err(kube_error)? else {
        return Ok(Action::await_change());
    };
    let finalizers = config.finalizers().to_vec();
    let has_finalizer = finalizers.iter().any(|f| f == IN_USE_FINALIZER);

    if config.meta().deletion_timestamp.is_some() {
        if !has_finalizer {
            return Ok(Action::await_change());
        }
        let users = live_users(&ctx, &config).await?;
        if users.is_empty() {
            let remaining: Vec<&String> = finalizers
                .iter()
                .filter(|f| *f != IN_USE_FINALIZER)
                .collect();
            let patch = json!({"metadata": {"finalizers": remaining, "resourceVersion": config.resource_version()}});
            api.patch(&name, &PatchParams::default(), &Patch::Merge(patch))
                .await
                .map_err(kube_error)?;
            if let Some(uid) = config.uid() {
                ctx.cache.forget(&uid);
            }
            return Ok(Action::await_change());
        }
        let shown: Vec<&str> = users.iter().take(5).map(String::as_str).collect();
        let message = format!(
            "{} is still used by {} ECSInstance(s) ({}{}); it is deleted once they are gone",
            config::display(&config),
            users.len(),
            shown.join(", "),
            if users.len() > shown.len() {
                ", ..."
            } else {
                ""
            }
        );
        let ready = Desired {
            type_: names::READY,
            status: ConditionStatus::False,
            reason: "InUse",
            message,
        };
        write_status(&api, &config, users.len(), ready).await?;
        return Ok(Action::requeue(ctx.poll.min(Duration::from_secs(10))));
    }

    if !has_finalizer {
        let mut with = finalizers.clone();
        with.push(IN_USE_FINALIZER.to_owned());
        let patch =
            json!({"metadata": {"finalizers": with, "resourceVersion": config.resource_version()}});
        api.patch(&name, &PatchParams::default(), &Patch::Merge(patch))
            .await
            .map_err(kube_error)?;
    }

    let users = ctx
        .instances
        .state()
        .iter()
        .filter(|i| references(i.as_ref(), &config))
        .count();
    let ready = credentials_condition(&ctx, &config).await;
    let was_ready = config
        .config_status()
        .and_then(|s| conditions::find(&s.conditions, names::READY))
        .map(|c| (c.status, c.reason.clone()));
    if ready.status == ConditionStatus::False
        && was_ready.as_ref().map(|(s, r)| (*s, r.as_str()))
            != Some((ConditionStatus::False, ready.reason))
    {
        let event = KubeEvent {
            type_: EventType::Warning,
            reason: ready.reason.to_owned(),
            note: Some(ready.message.clone()),
            action: "LoadCredentials".into(),
            secondary: None,
        };
        if let Err(e) = ctx.recorder.publish(&event, &config.object_ref(&())).await {
            warn!(error = %e, "cannot publish event");
        }
    }
    write_status(&api, &config, users, ready).await?;
    Ok(Action::requeue(ctx.poll))
}

/// `Ready`: can the credentials be loaded? Never includes a credential value.
async fn credentials_condition<P: ConfigKind>(ctx: &Context, config: &P) -> Desired {
    let failed = |reason: &'static str, message: String| Desired {
        type_: names::READY,
        status: ConditionStatus::False,
        reason,
        message,
    };
    let resolved = match ctx.resolver.resolve_config(config).await {
        Ok(r) => r,
        Err(e) => return failed(e.reason(), e.to_string()),
    };
    let provider = match ctx.cache.credentials(&resolved) {
        Ok(p) => p,
        Err(e) => return failed(e.reason(), e.to_string()),
    };
    match provider.credentials().await {
        Ok(credentials) => Desired {
            type_: names::READY,
            status: ConditionStatus::True,
            reason: names::REASON_AVAILABLE,
            message: format!(
                "credentials of AccessKeyId {} loaded",
                credentials.access_key_id
            ),
        },
        Err(e) => failed("CredentialsError", format!("{}: {e}", resolved.display)),
    }
}

async fn write_status<P: ConfigKind>(
    api: &Api<P>,
    config: &P,
    users: usize,
    ready: Desired,
) -> Result<(), ReconcileError> {
    let existing = config.config_status().cloned().unwrap_or_default();
    let generation = config.meta().generation;
    let merged = conditions::merge(&existing.conditions, &[ready], generation, Timestamp::now());
    let users = i64::try_from(users).unwrap_or(i64::MAX);
    if existing.users == users
        && existing.conditions == merged
        && existing.observed_generation == generation
    {
        return Ok(());
    }
    let status = ProviderConfigStatus {
        users,
        conditions: merged,
        observed_generation: generation,
    };
    let patch = json!({"status": status});
    let params = PatchParams {
        field_manager: Some(FIELD_MANAGER.to_owned()),
        ..PatchParams::default()
    };
    api.patch_status(&config.name_any(), &params, &Patch::Merge(patch))
        .await
        .map_err(kube_error)?;
    Ok(())
}

fn kube_error(e: kube::Error) -> ReconcileError {
    ReconcileError::retryable("KubernetesApiError", e.to_string())
}

fn error_policy<P: ConfigKind>(
    _config: Arc<P>,
    err: &ReconcileError,
    _ctx: Arc<Context>,
) -> Action {
    warn!(error = %err, "provider config reconcile failed; retrying");
    Action::requeue(ERROR_REQUEUE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instance(config: &str, deleting: bool, finalizers: &[&str]) -> ECSInstance {
        let mut i: ECSInstance = serde_json::from_value(json!({
            "apiVersion": "alibabacloud.ferroplane.io/v1alpha1",
            "kind": "ECSInstance",
            "metadata": {"name": "vm", "namespace": "ns", "uid": "u-vm"},
            "spec": {
                "providerConfigRef": {"name": config},
                "forProvider": {"regionId": "cn-beijing", "imageId": "img", "instanceType": "ecs.g6.large"},
            },
        }))
        .expect("instance");
        if deleting {
            i.metadata.deletion_timestamp = Some(
                k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(Timestamp::now()),
            );
        }
        i.metadata.finalizers = Some(finalizers.iter().map(|f| (*f).to_owned()).collect());
        i
    }

    /// The references of kind `P` among what a change concerns.
    fn refs<P: ConfigKind>(
        changes: &ReferenceChanges,
        instance: &ECSInstance,
    ) -> Vec<ObjectRef<P>> {
        changes
            .concerned(instance)
            .iter()
            .filter(|c| c.kind == P::KIND)
            .map(Concerned::object_ref::<P>)
            .collect()
    }

    #[test]
    fn only_reference_changes_reconcile_a_config() {
        let changes = ReferenceChanges::default();
        let refs_a = refs::<ProviderConfig>(&changes, &instance("a", false, &[]));
        assert_eq!(refs_a, vec![ObjectRef::new("a").within("ns")]);
        assert!(refs::<ProviderConfig>(&changes, &instance("a", false, &[])).is_empty());
        // Moved to another config: both are reconciled.
        let moved = refs::<ProviderConfig>(&changes, &instance("b", false, &[]));
        assert_eq!(moved.len(), 2);
        // Not of this kind (each kind's controller gets only its own).
        let cluster = ReferenceChanges::default();
        assert!(refs::<ClusterProviderConfig>(&cluster, &instance("c", false, &[])).is_empty());
        // Deletion started, then finished.
        assert_eq!(
            refs::<ProviderConfig>(&changes, &instance("b", true, &["x"])).len(),
            1
        );
        assert_eq!(
            refs::<ProviderConfig>(&changes, &instance("b", true, &[])).len(),
            1
        );
    }
}
