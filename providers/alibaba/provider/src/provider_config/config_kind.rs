//! [`ConfigKind`]: what the configuration controllers need of ProviderConfig (namespaced) and
//! ClusterProviderConfig (cluster-scoped).

use std::fmt::Debug;

use ferroplane_apis::alibabacloud::{
    ClusterProviderConfig, ProviderConfig, ProviderConfigSettings, ProviderConfigStatus,
};
use ferroplane_apis::common::ProviderConfigKind;
use kube::{Api, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// The two configuration kinds.
pub trait ConfigKind:
    Resource<DynamicType = ()>
    + ProviderConfigSettings
    + Clone
    + Serialize
    + DeserializeOwned
    + Debug
    + Send
    + Sync
    + 'static
{
    const KIND: ProviderConfigKind;
    fn config_status(&self) -> Option<&ProviderConfigStatus>;
    /// The API for objects of this kind in `namespace` (ignored for cluster-scoped kinds).
    fn api_in(client: kube::Client, namespace: Option<&str>) -> Api<Self>;
}

impl ConfigKind for ProviderConfig {
    const KIND: ProviderConfigKind = ProviderConfigKind::ProviderConfig;
    fn config_status(&self) -> Option<&ProviderConfigStatus> {
        self.status.as_ref()
    }
    fn api_in(client: kube::Client, namespace: Option<&str>) -> Api<Self> {
        match namespace {
            Some(ns) => Api::namespaced(client, ns),
            None => Api::all(client),
        }
    }
}

impl ConfigKind for ClusterProviderConfig {
    const KIND: ProviderConfigKind = ProviderConfigKind::ClusterProviderConfig;
    fn config_status(&self) -> Option<&ProviderConfigStatus> {
        self.status.as_ref()
    }
    fn api_in(client: kube::Client, _namespace: Option<&str>) -> Api<Self> {
        Api::all(client)
    }
}
