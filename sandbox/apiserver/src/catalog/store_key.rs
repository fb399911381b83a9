//! The key objects are stored under ([`StoreKey`]: group and plural, the same for every version
//! of a resource), and the keys of the resources with special semantics ([`keys`]).

/// The key objects are stored under: the same for every version of a resource.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StoreKey {
    pub group: String,
    pub plural: String,
}

impl StoreKey {
    pub fn new(group: &str, plural: &str) -> Self {
        Self {
            group: group.to_owned(),
            plural: plural.to_owned(),
        }
    }
}

/// The store keys with special semantics.
pub mod keys {
    use super::StoreKey;

    pub fn namespaces() -> StoreKey {
        StoreKey::new("", "namespaces")
    }
    pub fn crds() -> StoreKey {
        StoreKey::new("apiextensions.k8s.io", "customresourcedefinitions")
    }
    pub fn events() -> StoreKey {
        StoreKey::new("", "events")
    }
    pub fn secrets() -> StoreKey {
        StoreKey::new("", "secrets")
    }
    pub fn deployments() -> StoreKey {
        StoreKey::new("apps", "deployments")
    }
    pub fn statefulsets() -> StoreKey {
        StoreKey::new("apps", "statefulsets")
    }
    pub fn persistent_volume_claims() -> StoreKey {
        StoreKey::new("", "persistentvolumeclaims")
    }
    pub fn replicasets() -> StoreKey {
        StoreKey::new("apps", "replicasets")
    }
    pub fn jobs() -> StoreKey {
        StoreKey::new("batch", "jobs")
    }
    pub fn service_accounts() -> StoreKey {
        StoreKey::new("", "serviceaccounts")
    }
    pub fn pods() -> StoreKey {
        StoreKey::new("", "pods")
    }
    pub fn services() -> StoreKey {
        StoreKey::new("", "services")
    }
    pub fn ingresses() -> StoreKey {
        StoreKey::new("networking.k8s.io", "ingresses")
    }
    pub fn horizontal_pod_autoscalers() -> StoreKey {
        StoreKey::new("autoscaling", "horizontalpodautoscalers")
    }
}
