//! Writes to the managed object itself: the external name and creation time of a new resource
//! and resolved references and late-initialized fields in the spec (merge patches whose answer
//! becomes the object, its version noted so the watch does not reconcile again for this
//! process's own write), and the finalizer's removal.

use jiff::Timestamp;
use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Value, json};
use tracing::debug;

use ferroplane_apis::common::names;

use super::observed_status::ObservedStatus;
use super::{Reconciler, object_key};
use crate::error::ReconcileError;
use crate::finalizer;
use crate::provider::Connector;
use crate::reasons;
use crate::references;
use crate::resource::ManagedResource;
use crate::status;

impl<K: ManagedResource, C: Connector<K>> Reconciler<K, C> {
    /// Saves the external name of a resource just created, with the late-initialized spec
    /// fields when there are any. The combined write carries a resourceVersion precondition (a
    /// user's concurrent spec edit wins); if it conflicts, the name alone is written without
    /// one, because the name must never be lost.
    pub(super) async fn record_creation(
        &self,
        api: &Api<K>,
        obj: &mut K,
        name: &str,
        scope: Option<&str>,
        late_fill: Option<&Value>,
        visible: bool,
    ) -> Result<(), ReconcileError> {
        if let Some(fill) = late_fill {
            let body = json!({
                "metadata": {
                    "annotations": name_annotations(name, scope),
                    "resourceVersion": obj.resource_version(),
                },
                "spec": fill,
            });
            match self.merge_patch(api, obj, body).await {
                Ok(()) => return Ok(()),
                Err(kube::Error::Api(e)) if e.code == 409 => {
                    debug!("spec changed while creating; saving the external name alone");
                }
                Err(e) => {
                    let err =
                        ReconcileError::kube(&format!("cannot record external name {name}"), e);
                    return Err(self.fail(api, obj, reasons::CANNOT_RECORD, err, None).await);
                }
            }
        }
        // A resource the cloud does not list yet gets the time of its creation beside its name,
        // so that until it appears no process mistakes it for gone (see `recently_created`).
        let mut annotations = name_annotations(name, scope);
        if !visible {
            annotations[names::EXTERNAL_CREATE_SUCCEEDED] = json!(Timestamp::now().to_string());
        }
        self.record_annotations(api, obj, annotations, name).await
    }

    /// The resource is listed now: its creation time has done its job. Removed by the
    /// late-initialization write when there is one (see [`Self::late_initialize`]), else by a
    /// write of its own (only for a cloud that lists new resources late).
    pub(super) async fn forget_creation_time(
        &self,
        api: &Api<K>,
        obj: &mut K,
    ) -> Result<(), ReconcileError> {
        if !has_creation_time(obj) {
            return Ok(());
        }
        let name = crate::annotations::external_name(&*obj)
            .unwrap_or_default()
            .to_owned();
        self.record_annotations(
            api,
            obj,
            json!({names::EXTERNAL_CREATE_SUCCEEDED: null}),
            &name,
        )
        .await
    }

    pub(super) async fn resolve_references(
        &self,
        api: &Api<K>,
        obj: &mut K,
    ) -> Result<(), ReconcileError> {
        let fill = match references::resolve(&self.client, &*obj).await {
            Ok(Some(fill)) => fill,
            Ok(None) => return Ok(()),
            Err(err) => {
                return Err(self
                    .fail(api, obj, reasons::CANNOT_RESOLVE_REFERENCES, err, None)
                    .await);
            }
        };
        let body = json!({
            "spec": {"forProvider": fill},
            "metadata": {"resourceVersion": obj.resource_version()},
        });
        match self.merge_patch(api, obj, body).await {
            Ok(()) => {
                let resolved = fill
                    .iter()
                    .map(|(field, value)| format!("{field}={value}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                self.events
                    .normal(
                        &*obj,
                        reasons::RESOLVED_REFERENCES,
                        format!("resolved references: {resolved}"),
                    )
                    .await;
                Ok(())
            }
            Err(e) => {
                let err = ReconcileError::kube("cannot write resolved references", e);
                Err(self
                    .fail(api, obj, reasons::CANNOT_RESOLVE_REFERENCES, err, None)
                    .await)
            }
        }
    }

    /// Merge-patches the object, keeps the answer as the object, and notes its version so that
    /// the watch does not reconcile again for this process's own write.
    pub(super) async fn merge_patch(
        &self,
        api: &Api<K>,
        obj: &mut K,
        body: Value,
    ) -> Result<(), kube::Error> {
        *obj = api
            .patch(
                &obj.name_any(),
                &PatchParams::default(),
                &Patch::Merge(body),
            )
            .await?;
        self.versions.note(&object_key(&*obj), &*obj);
        Ok(())
    }

    /// Fills unset spec fields from `patch` (with a resourceVersion precondition). The creation
    /// time of a resource that is listed now goes in the same write, so that a create against a
    /// cloud that lists late costs no write of its own to forget it. A failure is reported with
    /// the status `observed` describes.
    pub(super) async fn late_initialize(
        &self,
        api: &Api<K>,
        obj: &mut K,
        patch: Option<&Value>,
        observed: &ObservedStatus,
    ) -> Result<(), ReconcileError> {
        let spec = serde_json::to_value(&*obj)
            .ok()
            .and_then(|v| v.get("spec").cloned())
            .unwrap_or(Value::Null);
        let Some(fill) = patch.and_then(|p| status::late_init_patch(&spec, p)) else {
            return self.forget_creation_time(api, obj).await;
        };
        let mut metadata = json!({"resourceVersion": obj.resource_version()});
        if has_creation_time(obj) {
            metadata["annotations"] = json!({names::EXTERNAL_CREATE_SUCCEEDED: null});
        }
        let body = json!({"spec": fill, "metadata": metadata});
        match self.merge_patch(api, obj, body).await {
            Ok(()) => {
                self.events
                    .normal(&*obj, reasons::LATE_INITIALIZED, late_init_note(&fill))
                    .await;
                Ok(())
            }
            Err(e) => {
                let err = ReconcileError::kube("cannot late-initialize spec", e);
                Err(self
                    .fail_observed(api, obj, reasons::CANNOT_LATE_INITIALIZE, err, observed)
                    .await)
            }
        }
    }

    pub(super) async fn record_external_name(
        &self,
        api: &Api<K>,
        obj: &mut K,
        name: &str,
        scope: Option<&str>,
    ) -> Result<(), ReconcileError> {
        self.record_annotations(api, obj, name_annotations(name, scope), name)
            .await
    }

    pub(super) async fn record_annotations(
        &self,
        api: &Api<K>,
        obj: &mut K,
        annotations: Value,
        name: &str,
    ) -> Result<(), ReconcileError> {
        // No resourceVersion precondition: this write must land even if the object changed;
        // it only sets annotations.
        let body = json!({"metadata": {"annotations": annotations}});
        match self.merge_patch(api, obj, body).await {
            Ok(()) => Ok(()),
            Err(e) => {
                let err = ReconcileError::kube(&format!("cannot record external name {name}"), e);
                Err(self.fail(api, obj, reasons::CANNOT_RECORD, err, None).await)
            }
        }
    }

    pub(super) async fn remove_finalizer(
        &self,
        api: &Api<K>,
        obj: &K,
    ) -> Result<(), ReconcileError> {
        if let Some(patch) = finalizer::remove_patch(obj.meta()) {
            api.patch(
                &obj.name_any(),
                &PatchParams::default(),
                &Patch::Merge(patch),
            )
            .await
            .map_err(|e| ReconcileError::kube("cannot remove finalizer", e))?;
        }
        Ok(())
    }
}

/// The external name under both keys (Crossplane's tools read `crossplane.io/external-name`)
/// and, when the client reports one, its scope (see `crate::scope`).
fn name_annotations(name: &str, scope: Option<&str>) -> Value {
    let mut annotations = json!({
        names::EXTERNAL_NAME: name,
        names::CROSSPLANE_EXTERNAL_NAME: name,
    });
    if let Some(scope) = scope {
        annotations[names::EXTERNAL_SCOPE] = json!(scope);
    }
    annotations
}

/// What a resource known by `name` lacks of its name annotations and scope: a name imported
/// under one key only gets the other, a name recorded before scopes were gets its scope. A key
/// set to another value is left alone (the user's disagreement is reported, not overwritten).
pub(super) fn missing_name_annotations<K: ResourceExt>(
    obj: &K,
    name: &str,
    scope: Option<&str>,
) -> Option<Value> {
    let has = |key: &str| obj.annotations().get(key).is_some_and(|v| !v.is_empty());
    let mut missing = serde_json::Map::new();
    for key in [names::EXTERNAL_NAME, names::CROSSPLANE_EXTERNAL_NAME] {
        if !has(key) {
            missing.insert(key.to_owned(), json!(name));
        }
    }
    if let Some(scope) = scope
        && !has(names::EXTERNAL_SCOPE)
    {
        missing.insert(names::EXTERNAL_SCOPE.to_owned(), json!(scope));
    }
    (!missing.is_empty()).then_some(Value::Object(missing))
}

fn has_creation_time<K: ResourceExt>(obj: &K) -> bool {
    obj.annotations()
        .contains_key(names::EXTERNAL_CREATE_SUCCEEDED)
}

pub(super) fn late_init_note(fill: &Value) -> String {
    let mut fields = Vec::new();
    leaf_paths(fill, String::new(), &mut fields);
    format!(
        "filled unset spec fields from the external resource: {}",
        fields.join(", ")
    )
}

/// `forProvider.zoneId`-style paths of the values in a merge patch.
fn leaf_paths(value: &Value, prefix: String, out: &mut Vec<String>) {
    match value.as_object() {
        Some(map) if !map.is_empty() => {
            for (key, child) in map {
                let path = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                leaf_paths(child, path, out);
            }
        }
        _ => out.push(prefix),
    }
}
