//! The objects of a case, as dynamic objects of the registered kind: built from the
//! registration, created, patched, deleted, and waited on (with a deadline; a case that waits
//! too long fails with what it waited for, it does not panic).

use std::time::Duration;

use ferroplane_apis::common::names::{EXTERNAL_NAME, READY, SYNCED};
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
};
use serde_json::{Value, json};

use super::registration::{Build, Registration};
use crate::wait::eventually;

/// The API of the registered kind, from ferroplane's CRDs.
pub fn api_resource(kind: &str) -> ApiResource {
    let crd = ferroplane_apis::crds()
        .into_iter()
        .find(|c| c.spec.names.kind == kind)
        .unwrap_or_else(|| panic!("no CRD of kind {kind}"));
    let version = &crd.spec.versions[0].name;
    let gvk = GroupVersionKind::gvk(&crd.spec.group, version, kind);
    ApiResource::from_gvk_with_plural(&gvk, &crd.spec.names.plural)
}

/// How one object is made.
#[derive(Debug, Clone, Default)]
pub struct ObjectSpec {
    pub provider_config: String,
    pub external_name: Option<String>,
    pub connection_secret: Option<String>,
    pub orphan: bool,
    /// More annotations (e.g. Crossplane's spellings).
    pub annotations: Vec<(String, String)>,
}

/// The objects of one kind in one namespace.
#[derive(Clone)]
pub struct Objects {
    pub api: Api<DynamicObject>,
    pub client: kube::Client,
    resource: ApiResource,
    pub namespace: String,
}

/// A condition's status and reason, if the object has it.
pub fn condition(object: &DynamicObject, type_: &str) -> Option<(String, String)> {
    object.data["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
        .map(|c| {
            let text = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
            (text("status"), text("reason"))
        })
}

/// Whether Ready=True.
pub fn is_ready(object: &DynamicObject) -> bool {
    condition(object, READY).is_some_and(|(s, _)| s == "True")
}

/// Whether Synced=False with `reason`.
pub fn sync_failed_with(object: &DynamicObject, reason: &str) -> bool {
    condition(object, SYNCED).is_some_and(|(s, r)| s == "False" && r == reason)
}

/// The external name.
pub fn external_name(object: &DynamicObject) -> Option<String> {
    object
        .metadata
        .annotations
        .as_ref()?
        .get(EXTERNAL_NAME)
        .cloned()
}

/// The object's UID.
pub fn uid(object: &DynamicObject) -> String {
    object.metadata.uid.clone().unwrap_or_default()
}

impl Objects {
    pub fn new(client: &kube::Client, kind: &str, namespace: &str) -> Self {
        let resource = api_resource(kind);
        Self {
            api: Api::namespaced_with(client.clone(), namespace, &resource),
            client: client.clone(),
            resource,
            namespace: namespace.to_owned(),
        }
    }

    /// Creates the object `build` describes; returns it (with its UID).
    pub async fn create(
        &self,
        registration: &Registration,
        build: &Build,
        spec: &ObjectSpec,
    ) -> Result<DynamicObject, String> {
        let mut body = json!({
            "apiVersion": self.resource.api_version,
            "kind": self.resource.kind,
            "metadata": {"name": build.name, "namespace": self.namespace},
            "spec": {
                "forProvider": (registration.for_provider)(build),
                "deletionPolicy": if spec.orphan { "Orphan" } else { "Delete" },
                "providerConfigRef": {"name": spec.provider_config},
            },
        });
        let mut annotations = serde_json::Map::new();
        if let Some(name) = &spec.external_name {
            annotations.insert(EXTERNAL_NAME.to_owned(), json!(name));
        }
        for (key, value) in &spec.annotations {
            annotations.insert(key.clone(), json!(value));
        }
        if !annotations.is_empty() {
            body["metadata"]["annotations"] = Value::Object(annotations);
        }
        if let Some(secret) = &spec.connection_secret {
            body["spec"]["writeConnectionSecretToRef"] = json!({"name": secret});
        }
        let object: DynamicObject =
            serde_json::from_value(body).map_err(|e| format!("object JSON: {e}"))?;
        self.api
            .create(&PostParams::default(), &object)
            .await
            .map_err(|e| format!("create {}/{}: {e}", self.namespace, build.name))
    }

    /// Merge-patches the object's spec.
    pub async fn patch_spec(&self, name: &str, spec: Value) -> Result<(), String> {
        self.api
            .patch(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": spec})),
            )
            .await
            .map(drop)
            .map_err(|e| format!("patch {}/{name}: {e}", self.namespace))
    }

    /// Merge-patches the object's annotations.
    pub async fn annotate(&self, name: &str, annotations: Value) -> Result<(), String> {
        self.api
            .patch(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"annotations": annotations}})),
            )
            .await
            .map(drop)
            .map_err(|e| format!("annotate {}/{name}: {e}", self.namespace))
    }

    pub async fn delete(&self, name: &str) -> Result<(), String> {
        self.api
            .delete(name, &DeleteParams::default())
            .await
            .map(drop)
            .map_err(|e| format!("delete {}/{name}: {e}", self.namespace))
    }

    pub async fn get(&self, name: &str) -> Option<DynamicObject> {
        self.api.get_opt(name).await.ok().flatten()
    }

    /// Watches the object until `check` holds (`None`: it does not exist), for at most
    /// `within`; the error says what was awaited.
    pub async fn wait(
        &self,
        name: &str,
        what: &str,
        within: Duration,
        check: impl Fn(Option<&DynamicObject>) -> bool,
    ) -> Result<Option<DynamicObject>, String> {
        let label = format!("{}/{name}: {what}", self.namespace);
        let waited = eventually(label.clone())
            .within(within)
            .try_for_object(&self.api, name, check)
            .await;
        waited.map_err(|last| {
            let conditions = last
                .flatten()
                .map(|o| o.data["status"]["conditions"].to_string())
                .unwrap_or_else(|| "gone".into());
            format!("timed out waiting for {label}; conditions: {conditions}")
        })
    }

    /// Deletes the object and waits until it is gone.
    pub async fn delete_and_wait(&self, name: &str, within: Duration) -> Result<(), String> {
        self.delete(name).await?;
        self.wait(name, "gone", within, |o| o.is_none())
            .await
            .map(drop)
    }
}
