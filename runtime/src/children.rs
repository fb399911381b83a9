//! Child objects of in-cluster kinds (EtcdCluster, Application): the "external resource" of
//! those kinds is a set of Kubernetes objects rendered from the spec. This module holds what
//! every such provider needs once: a rendered child ([`Child`]), the drift check between a
//! rendered child and the live object ([`drift`]), and the API calls ([`Children`]): server-side
//! apply with the `ferroplane` field manager (forced, so hand edits of fields we own are
//! reverted) and delete. Orphaning is a rendering choice: children rendered without an owner
//! reference are left alone by garbage collection.

use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PropagationPolicy};
use kube::core::ApiResource;
use kube::{Client, Resource};
use serde::Serialize;
use serde_json::Value;

use crate::connection_secret::FIELD_MANAGER;

/// One rendered child: its API resource and the full object (apiVersion, kind, metadata with
/// name and namespace, spec) as it is applied.
#[derive(Clone, Debug, PartialEq)]
pub struct Child {
    pub resource: ApiResource,
    pub object: Value,
}

impl Child {
    /// A child from a typed object (`k8s_openapi` types), which must carry its name and
    /// namespace.
    pub fn from_typed<T>(obj: &T) -> Result<Self, serde_json::Error>
    where
        T: Resource<DynamicType = ()> + Serialize,
    {
        let resource = ApiResource::erase::<T>(&());
        let mut object = serde_json::to_value(obj)?;
        if let Value::Object(map) = &mut object {
            map.insert(
                "apiVersion".into(),
                Value::String(resource.api_version.clone()),
            );
            map.insert("kind".into(), Value::String(resource.kind.clone()));
        }
        Ok(Self { resource, object })
    }

    pub fn name(&self) -> &str {
        self.object["metadata"]["name"].as_str().unwrap_or_default()
    }

    pub fn namespace(&self) -> &str {
        self.object["metadata"]["namespace"]
            .as_str()
            .unwrap_or_default()
    }

    pub fn kind(&self) -> &str {
        &self.resource.kind
    }

    /// `Kind/name`, for messages.
    pub fn key(&self) -> String {
        format!("{}/{}", self.kind(), self.name())
    }
}

/// The first field where `live` differs from `desired`, as a path like
/// `spec.template.spec.containers[0].image`, or `None` when every field of `desired` is present
/// in `live` with the same value. Fields only in `live` (defaults, other managers' fields,
/// status) are not drift. Empty objects, empty lists and nulls in `desired` match absent
/// fields, and a number matches the same number written as a string (int-or-string fields).
pub fn drift(desired: &Value, live: &Value) -> Option<String> {
    drift_at(desired, live, String::new())
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

fn drift_at(desired: &Value, live: &Value, path: String) -> Option<String> {
    let here = || {
        if path.is_empty() {
            "(root)".to_owned()
        } else {
            path.clone()
        }
    };
    match (desired, live) {
        (Value::Object(d), Value::Object(l)) => d.iter().find_map(|(k, dv)| {
            let child_path = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            match l.get(k) {
                Some(lv) => drift_at(dv, lv, child_path),
                None if is_empty(dv) => None,
                None => Some(child_path),
            }
        }),
        (Value::Array(d), Value::Array(l)) => {
            if d.len() != l.len() {
                return Some(here());
            }
            d.iter()
                .zip(l)
                .enumerate()
                .find_map(|(i, (dv, lv))| drift_at(dv, lv, format!("{path}[{i}]")))
        }
        (Value::Number(n), Value::String(s)) | (Value::String(s), Value::Number(n)) => {
            (n.to_string() != *s).then(here)
        }
        (d, Value::Null) if is_empty(d) => None,
        (d, l) => (d != l).then(here),
    }
}

/// API calls on the children of one managed object.
#[derive(Clone)]
pub struct Children {
    client: Client,
}

impl Children {
    pub fn new(client: Client) -> Self {
        Self { client }
    }

    fn api(&self, child: &Child) -> Api<DynamicObject> {
        Api::namespaced_with(self.client.clone(), child.namespace(), &child.resource)
    }

    /// The live object, `None` when it does not exist.
    pub async fn get(&self, child: &Child) -> Result<Option<Value>, kube::Error> {
        let live = self.api(child).get_opt(child.name()).await?;
        live.map(serde_json::to_value)
            .transpose()
            .map_err(kube::Error::SerdeError)
    }

    /// Server-side apply, forced: the child ends up with every field we render, whoever
    /// changed it in between.
    pub async fn apply(&self, child: &Child) -> Result<(), kube::Error> {
        let params = PatchParams::apply(FIELD_MANAGER).force();
        self.api(child)
            .patch(child.name(), &params, &Patch::Apply(&child.object))
            .await?;
        Ok(())
    }

    /// Deletes the child (its own dependents, such as a StatefulSet's pods, in the background).
    /// Returns `true` when it is gone already.
    pub async fn delete(&self, child: &Child) -> Result<bool, kube::Error> {
        let params = DeleteParams {
            propagation_policy: Some(PropagationPolicy::Background),
            ..DeleteParams::default()
        };
        match self.api(child).delete(child.name(), &params).await {
            Ok(_) => Ok(false),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(true),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;
    use serde_json::json;

    #[test]
    fn child_from_typed_carries_type_and_name() {
        let cm = ConfigMap {
            metadata: ObjectMeta {
                name: Some("a".into()),
                namespace: Some("ns".into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        let child = Child::from_typed(&cm).expect("serializes");
        assert_eq!(child.object["apiVersion"], "v1");
        assert_eq!(child.key(), "ConfigMap/a");
        assert_eq!(child.namespace(), "ns");
    }

    #[test]
    fn no_drift_when_live_has_extra_fields() {
        let desired = json!({"spec": {"replicas": 3, "selector": {"a": "b"}}});
        let live = json!({"spec": {"replicas": 3, "selector": {"a": "b"}, "revisionHistoryLimit": 10}, "status": {}});
        assert_eq!(drift(&desired, &live), None);
    }

    #[test]
    fn drift_names_the_first_differing_path() {
        let desired = json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "x:2"}]}}}});
        let live = json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "x:1"}]}}}});
        assert_eq!(
            drift(&desired, &live).as_deref(),
            Some("spec.template.spec.containers[0].image")
        );
        assert_eq!(
            drift(&json!({"a": {"b": 1}}), &json!({})).as_deref(),
            Some("a")
        );
        assert_eq!(
            drift(&json!({"l": [1, 2]}), &json!({"l": [1]})).as_deref(),
            Some("l")
        );
    }

    #[test]
    fn empty_desired_values_match_absent_ones_and_numbers_match_strings() {
        assert_eq!(
            drift(&json!({"a": {}, "b": [], "c": null}), &json!({})),
            None
        );
        assert_eq!(
            drift(&json!({"port": 8080}), &json!({"port": "8080"})),
            None
        );
        assert!(drift(&json!({"port": 8080}), &json!({"port": "http"})).is_some());
    }
}
