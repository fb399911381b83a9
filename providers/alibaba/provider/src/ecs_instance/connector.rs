//! [`EcsConnector`]: the framework's `connect` step for ECSInstances — resolve the
//! ProviderConfig and its credentials, then hand out the cached client of the instance's region.

use std::sync::Arc;

use ferroplane_apis::alibabacloud::ECSInstance;
use ferroplane_runtime::{Connector, ExternalCalls, ReconcileError};
use kube::ResourceExt;

use super::external::{EcsExternal, InstanceRecords};
use crate::account;
use crate::cloud_client::ClientCache;
use crate::config_resolution::{ConfigResolver, ResolvedConfigs};
use crate::options::Options;

/// Connects ECSInstances to ECS. Cheap to clone.
#[derive(Clone)]
pub struct EcsConnector {
    kube: kube::Client,
    configs: Arc<ResolvedConfigs>,
    cache: Arc<ClientCache>,
    records: InstanceRecords,
    calls: ExternalCalls,
}

impl EcsConnector {
    /// A connector with the options' client settings and batching mode.
    pub fn new(kube: kube::Client, options: &Options, calls: ExternalCalls) -> Self {
        let window = options.batching.then_some(options.batch_window);
        Self {
            configs: Arc::new(ResolvedConfigs::new(
                ConfigResolver::new(kube.clone())
                    .allow_endpoints(options.allowed_endpoints.clone()),
            )),
            cache: Arc::new(ClientCache::new(
                options.client.clone(),
                window,
                options.poll_interval,
                calls.clone(),
            )),
            records: InstanceRecords::default(),
            kube,
            calls,
        }
    }
}

impl EcsConnector {
    /// The resolved configurations, for the watches that tell them about changes.
    pub fn configs(&self) -> Arc<ResolvedConfigs> {
        self.configs.clone()
    }
}

impl Connector<ECSInstance> for EcsConnector {
    type Client = EcsExternal;

    async fn connect(&self, mr: &ECSInstance) -> Result<EcsExternal, ReconcileError> {
        let namespace = mr.namespace().unwrap_or_default();
        let config = self
            .configs
            .resolve(&mr.spec.provider_config_ref, &namespace)
            .await
            .map_err(|e| e.into_reconcile())?;
        let region = &mr.spec.for_provider.region_id;
        let client = self
            .cache
            .client(&config, region)
            .map_err(|e| e.into_reconcile())?;
        let account_id = client.account.account_id(&config.display).await?;
        let scope = account::scope(account_id, region);
        Ok(EcsExternal::new(
            client,
            self.kube.clone(),
            config.display.clone(),
            &self.records,
            self.calls.clone(),
            scope,
        ))
    }
}
