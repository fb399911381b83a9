//! [`NetworkConnector`]: ProviderConfig → credentials → the cached ECS and VPC clients of the
//! object's region, handed out as [`NetworkClients`], which is the external client of all three
//! network kinds.

use crate::call_metrics::record_call;
use std::future::Future;
use std::sync::Arc;

use alibaba_sdk::Error;
use alibaba_sdk::vpc::Tag;
use ferroplane_apis::alibabacloud::{SecurityGroup, VPC, VSwitch};
use ferroplane_runtime::{
    Connector, ExternalCalls, ExternalClient, ManagedResource, ReconcileError,
};
use kube::ResourceExt;

use super::attributes::AttributeDiff;
use crate::cloud_client::{ClientCache, RegionClient};
use crate::cloud_error::product_error;
use crate::config_resolution::{ConfigResolver, ResolvedConfigs};
use crate::options::Options;

/// A network kind: where its region is, and the RAM service prefix of the API it calls.
pub(crate) trait NetworkKind: ManagedResource {
    const PRODUCT: &'static str;
    fn region(&self) -> &str;
}

impl NetworkKind for VPC {
    const PRODUCT: &'static str = "vpc";
    fn region(&self) -> &str {
        &self.spec.for_provider.region_id
    }
}

impl NetworkKind for VSwitch {
    const PRODUCT: &'static str = "vpc";
    fn region(&self) -> &str {
        &self.spec.for_provider.region_id
    }
}

impl NetworkKind for SecurityGroup {
    const PRODUCT: &'static str = "ecs";
    fn region(&self) -> &str {
        &self.spec.for_provider.region_id
    }
}

/// Connects network objects to their region's APIs. Cheap to clone.
#[derive(Clone)]
pub(crate) struct NetworkConnector {
    configs: Arc<ResolvedConfigs>,
    cache: Arc<ClientCache>,
    calls: ExternalCalls,
}

impl NetworkConnector {
    pub fn new(kube: kube::Client, options: &Options, calls: ExternalCalls) -> Self {
        Self {
            configs: Arc::new(ResolvedConfigs::new(
                ConfigResolver::new(kube).allow_endpoints(options.allowed_endpoints.clone()),
            )),
            // No batching: network objects are few, each observed on its own.
            cache: Arc::new(ClientCache::new(
                options.client.clone(),
                None,
                options.poll_interval,
                calls.clone(),
            )),
            calls,
        }
    }

    /// The resolved configurations, for the watches that tell them about changes.
    pub fn configs(&self) -> Arc<ResolvedConfigs> {
        self.configs.clone()
    }
}

impl<K> Connector<K> for NetworkConnector
where
    K: NetworkKind,
    NetworkClients: ExternalClient<K>,
{
    type Client = NetworkClients;

    async fn connect(&self, mr: &K) -> Result<NetworkClients, ReconcileError> {
        let namespace = mr.namespace().unwrap_or_default();
        let reference = mr.provider_config_ref().cloned().unwrap_or_default();
        let config = self
            .configs
            .resolve(&reference, &namespace)
            .await
            .map_err(|e| e.into_reconcile())?;
        let region = self
            .cache
            .client(&config, mr.region())
            .map_err(|e| e.into_reconcile())?;
        Ok(NetworkClients {
            region,
            config: config.display.clone(),
            product: K::PRODUCT,
            calls: self.calls.clone(),
        })
    }
}

/// The clients of one reconcile.
pub(crate) struct NetworkClients {
    pub region: RegionClient,
    /// The configuration's name, for messages.
    pub config: String,
    /// RAM service prefix for permission messages.
    product: &'static str,
    calls: ExternalCalls,
}

impl NetworkClients {
    /// Sends one call, counts it, maps its error.
    pub async fn call<T>(
        &self,
        action: &str,
        call: impl Future<Output = Result<T, Error>>,
    ) -> Result<T, ReconcileError> {
        self.raw(action, call)
            .await
            .map_err(|e| product_error(&e, &self.config, self.product))
    }

    /// Applies the tag half of an attribute diff through the VPC API (`TagResources`,
    /// `UnTagResources`) to the resource `id` of `resource_type` (`VPC` or `VSWITCH`).
    pub async fn sync_vpc_api_tags(
        &self,
        resource_type: &str,
        id: &str,
        diff: &AttributeDiff,
    ) -> Result<(), ReconcileError> {
        if !diff.set.is_empty() {
            let tags: Vec<Tag> = diff.set.iter().map(|(k, v)| Tag::new(k, v)).collect();
            self.call(
                "TagResources",
                self.region.vpc.tag_resource(resource_type, id, &tags),
            )
            .await?;
        }
        if !diff.remove.is_empty() {
            self.call(
                "UnTagResources",
                self.region
                    .vpc
                    .untag_resource(resource_type, id, &diff.remove),
            )
            .await?;
        }
        Ok(())
    }

    /// Sends one call and counts it, leaving the error to the caller (for codes that are
    /// answers, such as NotFound or DependencyViolation).
    pub async fn raw<T>(
        &self,
        action: &str,
        call: impl Future<Output = Result<T, Error>>,
    ) -> Result<T, Error> {
        let result = call.await;
        record_call(&self.calls, action, &result);
        result
    }

    /// Maps an error kept by [`Self::raw`].
    pub fn error(&self, err: &Error) -> ReconcileError {
        product_error(err, &self.config, self.product)
    }
}
