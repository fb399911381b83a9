//! Child objects of in-cluster kinds (EtcdCluster, Application): the "external resource" of
//! those kinds is a set of Kubernetes objects rendered from the spec. This module holds what
//! every such provider needs once: a rendered child ([`Child`]), how it differs from the live
//! object ([`difference`], [`drift`]), whose it is ([`owned`], [`owner_reference_mismatch`],
//! the [`MANAGED_BY_LABEL`] and the [`watch_config`] selecting by it), and the API calls
//! ([`Children`]): server-side apply with the `ferroplane` field manager (forced, so hand edits
//! of fields we own are reverted) and delete. Orphaning is a rendering choice: children rendered
//! without an owner reference are left alone by garbage collection.

mod client;
mod drift;
mod ownership;

pub use client::Children;
pub use drift::drift;
pub use ownership::{MANAGED_BY, MANAGED_BY_LABEL, owned, owner_reference_mismatch, watch_config};

use kube::Resource;
use kube::core::ApiResource;
use serde::Serialize;
use serde_json::Value;

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

/// How the live object differs from the rendered `child`, as a message naming the child: the
/// first drifted field, else owner references that disagree with `owned` (see [`owned`]).
/// `None` when it matches.
pub fn difference(child: &Child, live: &Value, owner_uid: &str, owned: bool) -> Option<String> {
    if let Some(path) = drift(&child.object, live) {
        Some(format!("{} differs at {path}", child.key()))
    } else if owner_reference_mismatch(live, owner_uid, owned) {
        Some(format!(
            "{} owner reference does not match the deletion policy",
            child.key()
        ))
    } else {
        None
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
    fn difference_names_drift_before_ownership() {
        let child = Child::from_typed(&ConfigMap {
            metadata: ObjectMeta {
                name: Some("a".into()),
                namespace: Some("ns".into()),
                ..ObjectMeta::default()
            },
            data: Some([("k".to_owned(), "v".to_owned())].into()),
            ..ConfigMap::default()
        })
        .expect("serializes");
        let mut live = child.object.clone();
        assert_eq!(difference(&child, &live, "u", false), None);
        assert_eq!(
            difference(&child, &live, "u", true).as_deref(),
            Some("ConfigMap/a owner reference does not match the deletion policy")
        );
        live["data"]["k"] = json!("w");
        assert_eq!(
            difference(&child, &live, "u", true).as_deref(),
            Some("ConfigMap/a differs at data.k")
        );
    }
}
