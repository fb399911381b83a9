//! [`EcsExternal`]: `observe`, `create`, `update` and `delete` of one ECS instance, for one
//! reconcile (the connector makes a new one each time, so it may remember what `observe` saw).
//! What it reads is in `reads`; how `update` sends a plan's rows is in `apply`.

mod apply;
mod reads;

use crate::call_metrics::record_call;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use alibaba_sdk::ecs::{Instance, ModifyInstanceAttributeRequest, Tag};
use alibaba_sdk::{Error, Secret};
use ferroplane_apis::alibabacloud::ECSInstance;
use ferroplane_apis::common::{Managed, ManagementAction};
use ferroplane_runtime::{
    ConnectionDetails, Creation, Deletion, ExternalCalls, ExternalClient, ExternalRef,
    IdempotencyKey, Observation, ReconcileError, UID_TAG, Update,
};

use super::applied_inputs::{AppliedInputs, ChangedInputs, InputDigests};
use super::comparison::{Observed, Wanted};
use super::diff::{self, Power, status};
use super::late_init::late_init;
use super::observation::{
    CONN_INSTANCE_ID, connection_details, readiness, status as observed_status,
};
use super::owner_search::outcome_unknown;
use super::pending::{Allowed, Refusal, Refusals, pending_changes};
use super::preview::changes_of;
use super::recent_creations::{LISTED_AFTER, RecentCreations};
use super::spec_mapping::{launch_refusal, run_instances_request};
use crate::cloud_client::RegionClient;
use crate::cloud_error::reconcile_error;
use crate::reasons::{
    DELETION_PROTECTION, IMMUTABLE_FIELD_CHANGED, INSTANCE_NOT_FOUND, INVALID_RESPONSE,
    INVALID_SPEC, SUBSCRIPTION_NOT_EXPIRED,
};

/// What this process remembers about the instances it manages, across reconciles.
#[derive(Clone, Debug, Default)]
pub struct InstanceRecords {
    pub inputs: Arc<AppliedInputs>,
    pub recent: Arc<RecentCreations>,
    pub refusals: Arc<Refusals>,
}

/// The ECS side of one ECSInstance reconcile.
pub struct EcsExternal {
    client: RegionClient,
    kube: kube::Client,
    config: String,
    inputs: Arc<AppliedInputs>,
    recent: Arc<RecentCreations>,
    refusals: Arc<Refusals>,
    calls: ExternalCalls,
    /// `<account>/<region>` (see `crate::account`).
    scope: String,
    observed: Mutex<Option<Instance>>,
    /// The call ECS refused in this reconcile, with its answer.
    refused: Mutex<Option<(&'static str, String)>>,
}

impl EcsExternal {
    pub(crate) fn new(
        client: RegionClient,
        kube: kube::Client,
        config: String,
        records: &InstanceRecords,
        calls: ExternalCalls,
        scope: String,
    ) -> Self {
        Self {
            client,
            kube,
            config,
            inputs: records.inputs.clone(),
            recent: records.recent.clone(),
            refusals: records.refusals.clone(),
            calls,
            scope,
            observed: Mutex::new(None),
            refused: Mutex::new(None),
        }
    }

    /// Sends one ECS call, counts it, and maps its error; remembers a refusal of what was asked.
    async fn call<T>(
        &self,
        action: &'static str,
        call: impl Future<Output = Result<T, Error>>,
    ) -> Result<T, ReconcileError> {
        let result = call.await;
        record_call(&self.calls, action, &result);
        result.map_err(|e| {
            if let Some(answer) = refusal_answer(&e) {
                *self.refused.lock().unwrap_or_else(|p| p.into_inner()) = Some((action, answer));
            }
            reconcile_error(&e, &self.config)
        })
    }

    fn digests(mr: &ECSInstance, password: Option<&Secret>) -> InputDigests {
        InputDigests::of(
            password.map(Secret::expose),
            mr.spec.for_provider.user_data.as_deref(),
        )
    }

    /// An instance was changed: the batcher must not answer from what it saw before.
    fn touched(&self, id: &str) {
        if let Some(batcher) = &self.client.batcher {
            batcher.invalidate(id);
        }
    }

    /// An instance is gone: stop sweeping it.
    fn gone(&self, id: &str, uid: &str) {
        self.inputs.forget(uid);
        self.refusals.clear(uid);
        self.recent.settle(id);
        if let Some(batcher) = &self.client.batcher {
            batcher.forget(id);
        }
    }

    fn remembered(&self) -> Option<Instance> {
        self.observed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// How long a look nothing hurries may wait for others to share its `DescribeInstances`: the
/// looks of an object being deleted (a fleet's rollout deletes as many objects at once as
/// reconciles run) and the first looks of an instance created a moment ago (a rollout creates
/// as many; what waits on them is only the Ready condition).
const PATIENT_LOOK_WAIT: Duration = Duration::from_millis(250);

/// The value of the instance's ownership tag, if it has one.
fn owner_tag(instance: &Instance) -> Option<&str> {
    instance
        .tags
        .items
        .iter()
        .find(|t| t.key == UID_TAG)
        .map(|t| t.value.as_str())
}

fn not_found_for_update(id: &str) -> ReconcileError {
    ReconcileError::retryable(
        INSTANCE_NOT_FOUND,
        format!("instance {id} disappeared before it could be updated; it is looked up again"),
    )
}

impl EcsExternal {
    /// The update step: applies what differs, in place or through a stop and start.
    async fn apply_spec(
        &self,
        mr: &ECSInstance,
        ext: &ExternalRef,
    ) -> Result<Update, ReconcileError> {
        let id = ext.name().unwrap_or_default();
        let instance = self
            .current(id)
            .await?
            .ok_or_else(|| not_found_for_update(id))?;
        let spec = &mr.spec.for_provider;
        let password = self.password(mr).await?;
        let digests = Self::digests(mr, password.as_ref());
        let changed = self.inputs.changed(&ext.uid, digests);
        let ram_role = self.ram_role(mr, id).await?;
        let disks = self.disks(mr, id).await?;
        let renewal = self.renewal(mr, &instance).await?;
        let observed = Observed {
            instance: &instance,
            ram_role: ram_role.as_deref(),
            inputs: changed,
            disks: disks.as_deref(),
            renewal: renewal.as_ref(),
        };
        let plan = diff::plan(spec, &observed);
        let wanted = Wanted {
            spec,
            observed: &observed,
            password: password.as_ref(),
        };
        // Whatever happens below, the next observe must ask ECS again.
        self.touched(id);

        self.apply(id, &plan.in_place, &wanted).await?;

        let mut in_progress = false;
        if !plan.restart.is_empty() {
            if instance.status == status::STOPPED {
                self.apply(id, &plan.restart, &wanted).await?;
                self.inputs.record(&ext.uid, digests);
            } else if spec.allow_restart.unwrap_or(false) && instance.status == status::RUNNING {
                // Stop now; the next reconcile finds it Stopped, changes everything, starts it.
                self.power(mr, id, Power::Stop).await?;
                in_progress = true;
            }
        } else if changed != ChangedInputs::default() {
            self.inputs.record(&ext.uid, digests);
        }
        if let Some(power) = plan.power
            && !in_progress
        {
            self.power(mr, id, power).await?;
            in_progress = true;
        }

        if !plan.immutable.is_empty() {
            return Err(ReconcileError::terminal(
                IMMUTABLE_FIELD_CHANGED,
                format!(
                    "instance {id}: {}; these fields cannot change after creation: restore them in spec.forProvider, or create a new ECSInstance",
                    plan.immutable.join("; ")
                ),
            ));
        }
        Ok(if in_progress {
            Update::in_progress()
        } else {
            Update::done()
        })
    }
}

impl ExternalClient<ECSInstance> for EcsExternal {
    /// ECS assigns instance IDs: a named instance that is not listed is never launched again.
    fn assigns_names(&self) -> bool {
        true
    }

    fn scope(&self) -> Option<String> {
        Some(self.scope.clone())
    }

    async fn observe(
        &self,
        mr: &ECSInstance,
        ext: &ExternalRef,
    ) -> Result<Observation, ReconcileError> {
        let found = match ext.name() {
            Some(id) if mr.metadata.deletion_timestamp.is_some() || self.recent.is_recent(id) => {
                self.describe_within(id, PATIENT_LOOK_WAIT).await?
            }
            Some(id) => self.describe(id).await?,
            None => self.find_by_uid(&ext.uid).await?,
        };
        // Not listed: gone, or created a moment ago and not listed yet, which the framework
        // tells apart by the creation time it recorded (it survives a restart; this process's
        // memory does not).
        let Some(instance) = found else {
            if let Some(id) = ext.name()
                && !self.recent.is_recent(id)
            {
                self.gone(id, &ext.uid);
            }
            return Ok(Observation::missing());
        };
        self.recent.settle(&instance.instance_id);
        *self.observed.lock().unwrap_or_else(|p| p.into_inner()) = Some(instance.clone());
        let spec = &mr.spec.for_provider;
        let mut obs = Observation::found(&instance.instance_id)
            .with_owner_tag(owner_tag(&instance))
            .with_status(observed_status(&instance, None, None))?
            .with_readiness(readiness(&instance, spec.desired_status))
            .with_connection_details(connection_details(&instance));
        if let Some(filled) = late_init(spec, &instance) {
            obs = obs.with_late_init(filled)?;
        }
        if status::in_transition(&instance.status) {
            obs = obs.in_transition();
        }
        // Being deleted, or changing state: nothing to compare; the next observe will.
        if mr.metadata.deletion_timestamp.is_some() || status::in_transition(&instance.status) {
            return Ok(obs);
        }
        let password = self.password(mr).await?;
        let changed = self
            .inputs
            .changed(&ext.uid, Self::digests(mr, password.as_ref()));
        let ram_role = self.ram_role(mr, &instance.instance_id).await?;
        let disks = self.disks(mr, &instance.instance_id).await?;
        let renewal = self.renewal(mr, &instance).await?;
        obs = obs.with_status(observed_status(
            &instance,
            ram_role.as_deref(),
            disks.as_deref(),
        ))?;
        let plan = diff::plan(
            spec,
            &Observed {
                instance: &instance,
                ram_role: ram_role.as_deref(),
                inputs: changed,
                disks: disks.as_deref(),
                renewal: renewal.as_ref(),
            },
        );
        let verdict = diff::verdict(&plan, &instance.status, spec.allow_restart.unwrap_or(false));
        let allowed = Allowed {
            update: mr
                .management_policies()
                .iter()
                .any(|a| matches!(a, ManagementAction::All | ManagementAction::Update)),
            restart: spec.allow_restart.unwrap_or(false) || instance.status == status::STOPPED,
        };
        let refusal = self.refusals.of(&ext.uid, mr.metadata.generation);
        let pending = pending_changes(
            &changes_of(&plan, &instance.status),
            allowed,
            refusal.as_ref(),
        );
        // `null` removes the list once nothing waits.
        obs = obs.with_status(serde_json::json!({
            "pendingChanges": (!pending.is_empty()).then_some(pending),
        }))?;
        if let Some(diff) = verdict.diff {
            obs = obs.with_diff(diff);
        }
        if let Some(note) = verdict.note {
            obs = obs.with_note(note);
        }
        Ok(obs)
    }

    async fn create(
        &self,
        mr: &ECSInstance,
        key: &IdempotencyKey,
    ) -> Result<Creation, ReconcileError> {
        if let Some(refusal) = launch_refusal(&mr.spec.for_provider) {
            return Err(ReconcileError::terminal(INVALID_SPEC, refusal));
        }
        let password = self.password(mr).await?;
        let request = run_instances_request(
            &mr.spec.for_provider,
            key.token(),
            key.uid(),
            password.clone(),
        );
        let result = self.client.ecs.run_instances(&request).await;
        record_call(&self.calls, "RunInstances", &result);
        let owners = self.client.owners.as_ref();
        let response = result.map_err(|e| {
            if let Some(owners) = owners.filter(|_| outcome_unknown(&e)) {
                owners.outcome_unknown(key.uid());
            }
            reconcile_error(&e, &self.config)
        })?;
        let id = response.instance_ids().first().cloned().ok_or_else(|| {
            if let Some(owners) = owners {
                owners.outcome_unknown(key.uid());
            }
            ReconcileError::retryable(
                INVALID_RESPONSE,
                format!(
                    "RunInstances returned no instance ID [request id {}]; the instance is looked up by its {UID_TAG} tag",
                    response.request_id
                ),
            )
        })?;
        self.recent.record(&id);
        if let Some(batcher) = &self.client.batcher {
            batcher.expect(&id, Instant::now() + LISTED_AFTER);
        }
        if let Some(owners) = owners {
            owners.created(key.uid(), &id);
        }
        self.inputs
            .record(key.uid(), Self::digests(mr, password.as_ref()));
        // No look of its own now: the instance is not listed yet, and its first look rides
        // the batched read with the other new instances' once it is.
        Ok(Creation::new(&id)
            .with_connection_details(ConnectionDetails::new().with(CONN_INSTANCE_ID, id.as_bytes()))
            .with_listed_after(LISTED_AFTER))
    }

    async fn update(&self, mr: &ECSInstance, ext: &ExternalRef) -> Result<Update, ReconcileError> {
        // Only a refusal of the update's own calls counts.
        self.refused
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        let result = self.apply_spec(mr, ext).await;
        let refused = self
            .refused
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        match (&result, refused) {
            (Ok(_), _) => self.refusals.clear(&ext.uid),
            (Err(_), Some((action, answer))) => self.refusals.record(
                &ext.uid,
                Refusal {
                    action: action.to_owned(),
                    generation: mr.metadata.generation,
                    answer,
                },
            ),
            (Err(_), None) => {}
        }
        result
    }

    /// Points the instance's `ferroplane.io/uid` tag at this object (`TagResources` overwrites
    /// the value of a key the instance already has).
    async fn claim(&self, _mr: &ECSInstance, ext: &ExternalRef) -> Result<(), ReconcileError> {
        let Some(id) = ext.name() else {
            return Err(not_found_for_update("(unknown)"));
        };
        self.touched(id);
        let ids = [id.to_owned()];
        self.call(
            "TagResources",
            self.client
                .ecs
                .tag_resources(&ids, &[Tag::new(UID_TAG, &ext.uid)]),
        )
        .await
    }

    async fn delete(
        &self,
        mr: &ECSInstance,
        ext: &ExternalRef,
    ) -> Result<Deletion, ReconcileError> {
        let Some(id) = ext.name() else {
            return Ok(Deletion::Gone);
        };
        let Some(instance) = self.current(id).await? else {
            if self.recent.is_recent(id) {
                return Ok(Deletion::InProgress);
            }
            self.gone(id, &ext.uid);
            return Ok(Deletion::Gone);
        };
        self.touched(id);
        if instance.deletion_protection {
            if mr.spec.for_provider.deletion_protection != Some(false) {
                return Err(ReconcileError::terminal(
                    DELETION_PROTECTION,
                    format!(
                        "instance {id} has deletion protection on, so ECS refuses to release it: set spec.forProvider.deletionProtection: false (the object can still be edited while it is being deleted), or deletionPolicy: Orphan to keep the instance"
                    ),
                ));
            }
            let request = ModifyInstanceAttributeRequest {
                instance_id: id.to_owned(),
                deletion_protection: Some(false),
                ..ModifyInstanceAttributeRequest::default()
            };
            self.call(
                "ModifyInstanceAttribute",
                self.client.ecs.modify_instance_attribute(&request),
            )
            .await?;
        }
        if instance.is_unexpired_subscription(jiff::Timestamp::now()) {
            let expiry = instance
                .expired_time
                .map(|t| format!(" until {t}"))
                .unwrap_or_default();
            return Err(ReconcileError::terminal(
                SUBSCRIPTION_NOT_EXPIRED,
                format!(
                    "instance {id} is a subscription (PrePaid) instance, paid for{expiry}; ECS releases a subscription instance only after it expires. Set deletionPolicy: Orphan to remove the object and keep the instance (unsubscribe it in the console), or wait for the expiry: ferroplane retries the release then"
                ),
            ));
        }
        if status::in_transition(&instance.status) {
            return Ok(Deletion::InProgress);
        }
        let force = instance.status != status::STOPPED;
        // Unexpired subscriptions were refused above; an expired one needs its own flag.
        let result = if instance.instance_charge_type == "PrePaid" {
            let result = self.client.ecs.delete_expired_subscription(id, force).await;
            record_call(&self.calls, "DeleteInstance", &result);
            result.map(drop).map_err(Arc::new)
        } else if let Some(releases) = &self.client.releases {
            releases.start_release(id, force)
        } else {
            let result = self.client.ecs.delete_instance(id, force).await;
            record_call(&self.calls, "DeleteInstance", &result);
            result.map(drop).map_err(Arc::new)
        };
        match result {
            Ok(_) => Ok(Deletion::InProgress),
            Err(e) if e.is_instance_not_found() => {
                self.gone(id, &ext.uid);
                Ok(Deletion::Gone)
            }
            Err(e) => Err(reconcile_error(&e, &self.config)),
        }
    }
}

/// ECS's answer when it refused what was asked (a client error that is not about credentials,
/// throttling, or the instance being gone or busy): what `status.pendingChanges` shows.
fn refusal_answer(error: &Error) -> Option<String> {
    let api = error.api()?;
    let refused = (400..500).contains(&api.http_status)
        && !error.is_throttling()
        && !error.is_bad_credentials()
        && !error.is_not_found()
        && !error.is_wrong_state();
    refused.then(|| format!("{} (HTTP {}): {}", api.code, api.http_status, api.message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alibaba_sdk::ecs::TagList;

    fn tagged(tags: Vec<Tag>) -> Instance {
        Instance {
            instance_id: "i-1".into(),
            tags: TagList { items: tags },
            ..Instance::default()
        }
    }

    #[test]
    fn the_owner_is_the_uid_tag_value_only() {
        let owned = tagged(vec![Tag::new("env", "dev"), Tag::new(UID_TAG, "uid-a")]);
        assert_eq!(owner_tag(&owned), Some("uid-a"));
        assert_eq!(owner_tag(&tagged(vec![Tag::new("env", "uid-a")])), None);
        assert_eq!(owner_tag(&tagged(Vec::new())), None);
    }
}
