//! Where `ferroplane plan` gets an object's ECS client: from its ProviderConfig in the cluster,
//! resolved as the controller resolves it (`--credentials cluster`, the default), or from the
//! CLI's own credentials (`--credentials local`: `ALIBABA_CLOUD_*` with `--endpoint`, or a
//! running sandbox's mock, as `ferroplane import` takes them), one client per region.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use alibaba_sdk::credentials::{Credentials, EnvProvider};
use alibaba_sdk::ecs::EcsClient;
use ferroplane_apis::alibabacloud::ECSInstance;
use kube::ResourceExt as _;
use provider_alibaba::{PlanAccess, PlanBlocked, PlanClient};

use super::super::api_call::sandbox_fallback;

/// The reason of a local client that cannot be built.
const LOCAL_CREDENTIALS: &str = "InvalidCredentials";

/// The source of clients.
pub enum CloudAccess {
    Cluster(Box<PlanAccess>),
    Local {
        endpoint: Option<String>,
        clients: Mutex<HashMap<String, EcsClient>>,
    },
}

impl CloudAccess {
    pub fn local(endpoint: Option<String>) -> Self {
        Self::Local {
            endpoint,
            clients: Mutex::new(HashMap::new()),
        }
    }

    /// Local access through `ecs` for its region (tests: the mock, without the environment).
    #[cfg(test)]
    pub fn local_with(region: &str, ecs: EcsClient) -> Self {
        Self::Local {
            endpoint: None,
            clients: Mutex::new(HashMap::from([(region.to_owned(), ecs)])),
        }
    }

    /// The client that reads `instance`'s region, and the group its reads are batched in.
    pub async fn client(&self, instance: &ECSInstance) -> Result<PlanClient, PlanBlocked> {
        let region = &instance.spec.for_provider.region_id;
        match self {
            Self::Cluster(access) => {
                access
                    .client(
                        &instance.spec.provider_config_ref,
                        &instance.namespace().unwrap_or_default(),
                        region,
                    )
                    .await
            }
            Self::Local { endpoint, clients } => {
                let mut clients = clients.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(ecs) = clients.get(region) {
                    return Ok(PlanClient {
                        group: region.clone(),
                        ecs: ecs.clone(),
                    });
                }
                let ecs = local_client(region, endpoint.as_deref()).map_err(|e| PlanBlocked {
                    reason: LOCAL_CREDENTIALS,
                    message: format!("{e:#}"),
                })?;
                clients.insert(region.clone(), ecs.clone());
                Ok(PlanClient {
                    group: region.clone(),
                    ecs,
                })
            }
        }
    }
}

/// A signed client of `region` with the environment's key, or a running sandbox's.
fn local_client(region: &str, endpoint: Option<&str>) -> anyhow::Result<EcsClient> {
    let builder = EcsClient::builder(region).request_timeout(Duration::from_secs(30));
    let (builder, endpoint) = match sandbox_fallback(endpoint.is_some())? {
        Some(access) => (
            builder.credentials(Credentials::new(
                access.access_key_id,
                access.access_key_secret,
            )),
            Some(access.endpoint),
        ),
        None => (
            builder.credentials(EnvProvider::new()),
            endpoint.map(str::to_owned),
        ),
    };
    Ok(match endpoint {
        Some(endpoint) => builder.endpoint(&endpoint).build()?,
        None => builder.build()?,
    })
}
