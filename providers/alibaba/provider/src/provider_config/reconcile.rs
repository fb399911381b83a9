//! One reconcile of a ProviderConfig or ClusterProviderConfig: the in-use finalizer (removed
//! only once a fresh list shows no user), `status.users` and the `Ready` condition saying whether
//! the credentials load.

use std::sync::Arc;
use std::time::Duration;

use ferroplane_apis::alibabacloud::ProviderConfigStatus;
use ferroplane_apis::common::{ConditionStatus, names};
use ferroplane_runtime::conditions::{self, Desired};
use ferroplane_runtime::events::EventRecorder;
use ferroplane_runtime::{FIELD_MANAGER, ReconcileError};
use jiff::Timestamp;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::events::{Event as KubeEvent, EventType};
use kube::{Api, ResourceExt};
use serde_json::json;
use tracing::warn;

use super::config_kind::ConfigKind;
use super::users::{ConfigId, UserCounts};
use crate::cloud_client::ClientCache;
use crate::config_resolution::{ConfigResolver, ResolvedConfig, display};
use crate::reasons::{CREDENTIALS_ERROR, IN_USE, KUBERNETES_API_ERROR};

/// Finalizer that keeps a configuration while managed objects reference it.
pub const IN_USE_FINALIZER: &str = "ferroplane.io/in-use";
/// Requeue after a failed reconcile.
const ERROR_REQUEUE: Duration = Duration::from_secs(5);

/// What every reconcile of one configuration kind shares.
pub(super) struct Context {
    pub(super) client: kube::Client,
    pub(super) resolver: ConfigResolver,
    pub(super) cache: ClientCache,
    pub(super) users: Arc<UserCounts>,
    pub(super) recorder: EventRecorder,
    pub(super) poll: Duration,
}

fn api_for<P: ConfigKind>(client: &kube::Client, config: &P) -> Api<P> {
    P::api_in(client.clone(), config.namespace().as_deref())
}

pub(super) async fn reconcile<P: ConfigKind>(
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
        let users = ctx.users.live(&ctx.client, &ConfigId::of(&config)).await?;
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
            "{} is still used by {} managed resource(s) ({}{}); it is deleted once they are gone",
            display(&config),
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
            reason: IN_USE,
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

    let users = ctx.users.cached_count(&ConfigId::of(&config));
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
    // The message names the source, never the AccessKeyId: whoever reads the config's status
    // (a namespace's users, or every user for a ClusterProviderConfig) need not learn it.
    match provider.credentials().await {
        Ok(_) => Desired {
            type_: names::READY,
            status: ConditionStatus::True,
            reason: names::REASON_AVAILABLE,
            message: loaded_message(config, &resolved),
        },
        Err(e) => failed(CREDENTIALS_ERROR, format!("{}: {e}", resolved.display)),
    }
}

/// Which credentials loaded, by source and Secret version: enough to tell that a rotated
/// Secret is in use, without the AccessKeyId.
fn loaded_message<P: ConfigKind>(config: &P, resolved: &ResolvedConfig) -> String {
    let source = config.credentials().source;
    match (&resolved.secret, &resolved.secret_version) {
        (Some((namespace, name)), Some(version)) => format!(
            "credentials (source {source:?}) loaded from Secret {namespace}/{name} at resourceVersion {version}"
        ),
        _ => format!("credentials (source {source:?}) loaded"),
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
    ReconcileError::retryable(KUBERNETES_API_ERROR, e.to_string())
}

pub(super) fn error_policy<P: ConfigKind>(
    _config: Arc<P>,
    err: &ReconcileError,
    _ctx: Arc<Context>,
) -> Action {
    warn!(error = %err, "provider config reconcile failed; retrying");
    Action::requeue(ERROR_REQUEUE)
}
