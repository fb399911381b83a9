//! What a Rust type must be to be reconciled as a managed kind.

use ferroplane_apis::common::Managed;
use ferroplane_apis::references::HasReferences;
use k8s_openapi::NamespaceResourceScope;
use kube::Resource;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// The bounds every managed kind satisfies; implemented for all such types. Managed kinds are
/// namespaced (the connection Secret and ProviderConfig live in the object's namespace).
pub trait ManagedResource:
    Resource<DynamicType = (), Scope = NamespaceResourceScope>
    + Managed
    + HasReferences
    + Clone
    + Serialize
    + DeserializeOwned
    + std::fmt::Debug
    + Send
    + Sync
    + 'static
{
}

impl<T> ManagedResource for T where
    T: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Managed
        + HasReferences
        + Clone
        + Serialize
        + DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static
{
}
