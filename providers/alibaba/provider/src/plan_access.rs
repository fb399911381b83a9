//! Read-only ECS clients for `ferroplane plan`: an object's `providerConfigRef` resolved as the
//! ECSInstance connector resolves it (the ProviderConfig or ClusterProviderConfig, its
//! credentials Secret, tenancy and endpoint rules), and the client of its region. Clients are
//! grouped as the controller's batcher groups them (one per configuration version and region),
//! so a plan reads with the same ceil(N/100) `DescribeInstances` per group. Nothing here writes.

use alibaba_sdk::ecs::EcsClient;
use ferroplane_apis::common::ProviderConfigReference;
use ferroplane_runtime::Metrics;

use crate::cloud_client::ClientCache;
use crate::config_resolution::{ConfigResolver, EndpointAllowList, ResolvedConfigs};
use crate::options::ClientOverrides;

/// Why an object's configuration cannot be used: its condition reason and a message a person
/// can act on (never a secret).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanBlocked {
    pub reason: &'static str,
    pub message: String,
}

/// The ECS client of one object, and the group it reads with.
#[derive(Clone, Debug)]
pub struct PlanClient {
    /// Objects with the same key share their `DescribeInstances` calls, as in the controller.
    pub group: String,
    pub ecs: EcsClient,
}

/// Resolves configurations and hands out their clients; cheap after the first object of a
/// configuration.
pub struct PlanAccess {
    configs: ResolvedConfigs,
    cache: ClientCache,
}

impl PlanAccess {
    /// Resolves through `kube` (reads only), allowing `endpoints` as `ferroplane run
    /// --allow-endpoint` does.
    pub fn new(kube: kube::Client, endpoints: EndpointAllowList) -> Self {
        let calls = Metrics::new().external_calls("ECSInstance");
        Self {
            configs: ResolvedConfigs::new(ConfigResolver::new(kube).allow_endpoints(endpoints)),
            // No batcher: the plan batches its own reads, and sends each once.
            cache: ClientCache::new(
                ClientOverrides::default(),
                None,
                std::time::Duration::ZERO,
                calls,
            ),
        }
    }

    /// The client of an object of `namespace` using `reference` in `region`.
    pub async fn client(
        &self,
        reference: &ProviderConfigReference,
        namespace: &str,
        region: &str,
    ) -> Result<PlanClient, PlanBlocked> {
        let blocked = |e: crate::config_resolution::ConfigError| PlanBlocked {
            reason: e.reason(),
            message: e.to_string(),
        };
        let config = self
            .configs
            .resolve(reference, namespace)
            .await
            .map_err(blocked)?;
        let client = self.cache.client(&config, region).map_err(blocked)?;
        Ok(PlanClient {
            group: format!("{}/{}/{region}", config.uid, config.version),
            ecs: client.ecs,
        })
    }
}
