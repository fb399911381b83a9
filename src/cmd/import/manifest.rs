//! What every imported object carries, whatever its kind: the external name, the management
//! policies and deletion policy the import was asked for, the ProviderConfig; and the
//! [`Manifest`] the kinds' mappings return. Ground floor of the import: imports nothing of it.

use std::collections::BTreeMap;

use ferroplane_apis::common::{DeletionPolicy, ManagementAction, ProviderConfigReference, names};
use kube::api::ObjectMeta;
use serde::Serialize;

/// How the imported objects are managed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Management {
    /// `managementPolicies: [Observe]`, `deletionPolicy: Orphan` (the default): ferroplane
    /// reports the resources and never changes or deletes them.
    ObserveOnly,
    /// `managementPolicies: ["*"]`, `deletionPolicy: Delete`: ferroplane keeps the resources as
    /// the spec says and deletes them with their objects.
    Full,
}

impl Management {
    pub fn policies(self) -> Vec<ManagementAction> {
        match self {
            Self::ObserveOnly => vec![ManagementAction::Observe],
            Self::Full => vec![ManagementAction::All],
        }
    }

    pub fn deletion_policy(self) -> DeletionPolicy {
        match self {
            Self::ObserveOnly => DeletionPolicy::Orphan,
            Self::Full => DeletionPolicy::Delete,
        }
    }
}

/// What the shared fields of every imported object are made of.
#[derive(Debug, Clone)]
pub struct Common {
    pub namespace: Option<String>,
    pub management: Management,
    pub provider_config: ProviderConfigReference,
}

impl Common {
    /// Metadata of the object `name` that imports the resource `external_name`.
    pub fn metadata(&self, name: &str, external_name: &str) -> ObjectMeta {
        ObjectMeta {
            name: Some(name.to_owned()),
            namespace: self.namespace.clone(),
            annotations: Some(BTreeMap::from([(
                names::EXTERNAL_NAME.to_owned(),
                external_name.to_owned(),
            )])),
            ..ObjectMeta::default()
        }
    }
}

/// One object to write.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// The kind, e.g. `VPC`.
    pub kind: &'static str,
    pub name: String,
    /// The object as kubectl takes it (no status).
    pub object: serde_json::Value,
}

impl Manifest {
    pub fn of(kind: &'static str, name: &str, object: &impl Serialize) -> Self {
        let mut object = serde_json::to_value(object).expect("CRD types serialize");
        if let Some(map) = object.as_object_mut() {
            map.remove("status");
        }
        Self {
            kind,
            name: name.to_owned(),
            object,
        }
    }
}
