//! Reporting: the status write (only when something changed) and the failure report
//! (`Synced=False`, a Warning event) every failed step goes through, with the status an
//! observation describes when the step failed after one (see `observed_status`).

use std::time::Duration;

use ferroplane_apis::common::{Condition, ConditionStatus, names};
use jiff::Timestamp;
use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Map, Value, json};
use tracing::warn;

use super::observed_status::ObservedStatus;
use super::{Reconciler, external_name, object_key};
use crate::annotations;
use crate::conditions::{self, Desired};
use crate::error::ReconcileError;
use crate::field_manager::FIELD_MANAGER;
use crate::provider::Connector;
use crate::reasons;
use crate::resource::ManagedResource;
use crate::status;

/// The status field that echoes the reconcile request token.
const LAST_HANDLED_RECONCILE_AT: &str = "lastHandledReconcileAt";

impl<K: ManagedResource, C: Connector<K>> Reconciler<K, C> {
    /// Crossplane's first_time_to_reconcile: the first reconcile of an object with no `Synced`
    /// yet.
    pub(super) fn note_first_reconcile(&self, obj: &K, key: &str) {
        if conditions::find(obj.conditions(), names::SYNCED).is_none()
            && let Some(created) = obj.meta().creation_timestamp.as_ref()
        {
            let age = Timestamp::now().duration_since(created.0);
            self.metrics.first_reconcile(
                &self.gvk,
                key,
                Duration::try_from(age).unwrap_or_default(),
            );
        }
    }

    /// The disagreements of aliased annotations, as the note `Synced` keeps; the Warning event
    /// goes out when `Synced` does not say it yet (once per disagreement).
    pub(super) async fn report_conflicting_annotations(&self, obj: &K) -> Option<String> {
        let note = annotations::disagreements(obj.meta().annotations.as_ref())?;
        if !conditions::find(obj.conditions(), names::SYNCED)
            .is_some_and(|c| c.message.contains(&note))
        {
            self.events
                .warning(obj, reasons::CONFLICTING_ANNOTATIONS, note.clone())
                .await;
        }
        Some(note)
    }

    /// Writes conditions and provider status fields when they differ from the object's; the
    /// first `Ready=True` after the create counts in the time-to-ready metric.
    pub(super) async fn write_status(
        &self,
        api: &Api<K>,
        obj: &mut K,
        desired: &[Desired],
        fields: &Map<String, Value>,
    ) -> Result<(), ReconcileError> {
        let generation = obj.meta().generation;
        let became_ready = first_ready(obj.conditions(), desired);
        let merged = conditions::merge(obj.conditions(), desired, generation, Timestamp::now());
        let is_true = |type_: &str| {
            conditions::find(&merged, type_).is_some_and(|c| c.status == ConditionStatus::True)
        };
        self.metrics.set_health(
            &self.gvk,
            &object_key(&*obj),
            is_true(names::READY),
            is_true(names::SYNCED),
        );
        let current = serde_json::to_value(&*obj)
            .ok()
            .and_then(|mut v| v.get_mut("status").map(Value::take));
        let conditions_json = serde_json::to_value(&merged).map_err(|e| {
            ReconcileError::retryable(
                reasons::SERIALIZATION_ERROR,
                format!("cannot encode conditions: {e}"),
            )
        })?;
        // Every reconcile's status write says which reconcile request it handled, as Crossplane
        // does (`status.lastHandledReconcileAt`).
        let mut fields = fields.clone();
        if let Some(token) =
            annotations::RECONCILE_REQUESTED_AT.read(obj.meta().annotations.as_ref())
        {
            fields.insert(LAST_HANDLED_RECONCILE_AT.to_owned(), json!(token.value));
        }
        // A copy from the cache may lack `atProvider` (`observation_digests`): its digest says
        // whether the stored one is the same; if not, it is replaced whole.
        let mut replaced = None;
        let shed = current
            .as_ref()
            .is_some_and(|c| c.get(status::AT_PROVIDER).is_none());
        if shed && let Some(observed) = fields.get(status::AT_PROVIDER) {
            match self.digests.matches(&*obj, observed) {
                Some(true) => {
                    fields.remove(status::AT_PROVIDER);
                }
                Some(false) => replaced = fields.remove(status::AT_PROVIDER),
                None => {}
            }
        }
        let merge = status::status_patch(current.as_ref(), &fields, conditions_json, generation);
        let patch = match (merge, replaced) {
            (None, None) => return Ok(()),
            (merge, Some(observed)) => {
                let ops = status::replacing_patch(
                    &obj.resource_version().unwrap_or_default(),
                    merge.as_ref(),
                    &fields,
                    status::AT_PROVIDER,
                    &observed,
                );
                Patch::Json(serde_json::from_value(Value::Array(ops)).map_err(|e| {
                    ReconcileError::retryable(
                        reasons::SERIALIZATION_ERROR,
                        format!("cannot encode the status patch: {e}"),
                    )
                })?)
            }
            (Some(merge), None) => Patch::Merge(
                json!({"status": merge, "metadata": {"resourceVersion": obj.resource_version()}}),
            ),
        };
        let params = PatchParams {
            field_manager: Some(FIELD_MANAGER.to_owned()),
            ..PatchParams::default()
        };
        let updated = api
            .patch_status(&obj.name_any(), &params, &patch)
            .await
            .map_err(|e| ReconcileError::kube("cannot write status", e))?;
        *obj = updated;
        self.versions.note(&object_key(&*obj), &*obj);
        if became_ready && let Some(created) = obj.meta().creation_timestamp.as_ref() {
            let age = Timestamp::now().duration_since(created.0);
            let age = Duration::try_from(age).unwrap_or_default();
            self.metrics.first_ready(&self.kind, age);
            self.metrics.crossplane_first_ready(&self.gvk, age);
        }
        Ok(())
    }

    /// Reports a failed step: `Synced=False` with the message (and `ready`, if given), a Warning
    /// event, then hands the error back for the requeue decision. Conflicts are not failures
    /// and are not reported.
    pub(super) async fn fail(
        &self,
        api: &Api<K>,
        obj: &mut K,
        event_reason: &str,
        err: ReconcileError,
        ready: Option<Desired>,
    ) -> ReconcileError {
        let unobserved = ObservedStatus::unobserved(ready);
        self.fail_observed(api, obj, event_reason, err, &unobserved)
            .await
    }

    /// Reports a step that failed after the resource was observed: like [`Self::fail`], and the
    /// status the observation describes (`Ready`, the kind's conditions, `atProvider`) goes
    /// in the same write, so that a failure never leaves the status of an earlier observation.
    pub(super) async fn fail_observed(
        &self,
        api: &Api<K>,
        obj: &mut K,
        event_reason: &str,
        err: ReconcileError,
        observed: &ObservedStatus,
    ) -> ReconcileError {
        if err.is_conflict() {
            return err;
        }
        let desired = observed.conditions(conditions::sync_failure(&err));
        if let Err(status_err) = self
            .write_status(api, obj, &desired, &observed.fields)
            .await
        {
            warn!(error = %status_err, "cannot record the failure in status");
        }
        let ext = external_name(obj)
            .map(|n| format!(" (external resource {n})"))
            .unwrap_or_default();
        self.events
            .warning(&*obj, event_reason, format!("{err}{ext}"))
            .await;
        err
    }
}

/// Whether `desired` makes the object Ready for the first time: from no `Ready` or from
/// `Creating`, not back from an outage.
fn first_ready(existing: &[Condition], desired: &[Desired]) -> bool {
    let ready_now = desired
        .iter()
        .rev()
        .find(|d| d.type_ == names::READY)
        .is_some_and(|d| d.status == ConditionStatus::True);
    ready_now
        && conditions::find(existing, names::READY)
            .is_none_or(|c| c.status != ConditionStatus::True && c.reason == names::REASON_CREATING)
}
