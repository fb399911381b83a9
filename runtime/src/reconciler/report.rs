//! Reporting: the status write (only when something changed) and the failure report
//! (`Synced=False`, a Warning event) every failed step goes through.

use jiff::Timestamp;
use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Map, Value, json};
use tracing::warn;

use super::{Reconciler, external_name, object_key};
use crate::conditions::{self, Desired};
use crate::error::ReconcileError;
use crate::field_manager::FIELD_MANAGER;
use crate::provider::Connector;
use crate::reasons;
use crate::resource::ManagedResource;
use crate::status;

impl<K: ManagedResource, C: Connector<K>> Reconciler<K, C> {
    /// Writes conditions and provider status fields when they differ from the object's.
    pub(super) async fn write_status(
        &self,
        api: &Api<K>,
        obj: &mut K,
        desired: &[Desired],
        fields: &Map<String, Value>,
    ) -> Result<(), ReconcileError> {
        let generation = obj.meta().generation;
        let merged = conditions::merge(obj.conditions(), desired, generation, Timestamp::now());
        let current = serde_json::to_value(&*obj)
            .ok()
            .and_then(|mut v| v.get_mut("status").map(Value::take));
        let conditions_json = serde_json::to_value(&merged).map_err(|e| {
            ReconcileError::retryable(
                reasons::SERIALIZATION_ERROR,
                format!("cannot encode conditions: {e}"),
            )
        })?;
        let Some(patch) =
            status::status_patch(current.as_ref(), fields, conditions_json, generation)
        else {
            return Ok(());
        };
        let body =
            json!({"status": patch, "metadata": {"resourceVersion": obj.resource_version()}});
        let params = PatchParams {
            field_manager: Some(FIELD_MANAGER.to_owned()),
            ..PatchParams::default()
        };
        let updated = api
            .patch_status(&obj.name_any(), &params, &Patch::Merge(body))
            .await
            .map_err(|e| ReconcileError::kube("cannot write status", e))?;
        *obj = updated;
        self.versions.note(&object_key(&*obj), &*obj);
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
        if err.is_conflict() {
            return err;
        }
        let mut desired = vec![conditions::sync_failure(&err)];
        desired.extend(ready);
        if let Err(status_err) = self.write_status(api, obj, &desired, &Map::new()).await {
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
