//! One rendered child object, as it is applied.

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

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;

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
}
