//! [`CloudConnector`]: ProviderConfig → credentials → the cached ECS and VPC clients of the
//! object's region (`crate::cloud_client`), handed out as [`CloudClients`], the external client
//! of every kind observed on its own (VPC, VSwitch, SecurityGroup, Disk, KeyPair; the
//! ECSInstance has its own connector for the batcher). Each call is counted and its error mapped
//! by `crate::cloud_error`.

use std::future::Future;
use std::sync::Arc;

use alibaba_sdk::Error;
use ferroplane_runtime::{
    Connector, ExternalCalls, ExternalClient, ManagedResource, ReconcileError,
};
use kube::ResourceExt;

use crate::account;
use crate::call_metrics::record_call;
use crate::cloud_client::{ClientCache, RegionClient};
use crate::cloud_error::product_error;
use crate::config_resolution::{ConfigResolver, ResolvedConfigs};
use crate::options::Options;

/// A kind served by [`CloudConnector`]: where its region is, and the RAM service prefix of the
/// API it calls.
pub(crate) trait CloudKind: ManagedResource {
    const PRODUCT: &'static str;
    fn region(&self) -> &str;
}

/// Connects objects to their region's APIs. Cheap to clone.
#[derive(Clone)]
pub(crate) struct CloudConnector {
    configs: Arc<ResolvedConfigs>,
    cache: Arc<ClientCache>,
    calls: ExternalCalls,
}

impl CloudConnector {
    pub fn new(kube: kube::Client, options: &Options, calls: ExternalCalls) -> Self {
        Self {
            configs: Arc::new(ResolvedConfigs::new(
                ConfigResolver::new(kube).allow_endpoints(options.allowed_endpoints.clone()),
            )),
            // No batching: these objects are few, each observed on its own.
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

impl<K> Connector<K> for CloudConnector
where
    K: CloudKind,
    CloudClients: ExternalClient<K>,
{
    type Client = CloudClients;

    async fn connect(&self, mr: &K) -> Result<CloudClients, ReconcileError> {
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
        let account_id = region.account.account_id(&config.display).await?;
        Ok(CloudClients {
            scope: account::scope(account_id, mr.region()),
            region,
            config: config.display.clone(),
            product: K::PRODUCT,
            calls: self.calls.clone(),
        })
    }
}

/// The clients of one reconcile.
pub(crate) struct CloudClients {
    pub region: RegionClient,
    /// The configuration's name, for messages.
    pub config: String,
    /// `<account>/<region>`: where this reconcile's resources live (see `crate::account`).
    pub scope: String,
    /// RAM service prefix for permission messages.
    product: &'static str,
    calls: ExternalCalls,
}

impl CloudClients {
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
