//! [`EcsClient`]: the ECS client of one region. It resolves the regional endpoint (or an
//! override), signs every call (V1 or V3), retries transient failures and decodes responses;
//! [`EcsClient::call`] sends any action with raw parameters, the typed actions are in
//! [`super::actions`].

use std::sync::Arc;
use std::time::Duration;

use url::Url;

use crate::credentials::{CachingProvider, CredentialsProvider, SharedCredentialsProvider};
use crate::endpoint::{Network, ecs_endpoint, parse_endpoint, validate_region};
use crate::error::Error;
use crate::rpc::{ClientConfig, HttpMethod, Params, RetryPolicy, RpcClient, SignatureVersion};

/// The ECS API version.
pub const ECS_API_VERSION: &str = "2014-05-26";

/// A signed ECS client for one region. Cheap to clone (an `Arc` inside; one connection pool).
#[derive(Debug, Clone)]
pub struct EcsClient {
    rpc: RpcClient,
    region: Arc<str>,
}

impl EcsClient {
    /// Starts building a client for `region`.
    pub fn builder(region: impl Into<String>) -> EcsClientBuilder {
        EcsClientBuilder {
            region: region.into(),
            endpoint: None,
            network: Network::Public,
            credentials: None,
            config: ClientConfig::default(),
        }
    }

    /// The region whose `RegionId` calls carry by default.
    pub fn region(&self) -> &str {
        &self.region
    }

    /// The endpoint requests go to.
    pub fn endpoint(&self) -> &Url {
        self.rpc.endpoint()
    }

    /// The transport underneath (for other RPC products that share the configuration).
    pub fn rpc(&self) -> &RpcClient {
        &self.rpc
    }

    /// Sends any ECS action and returns the JSON response. `RegionId` defaults to the client's
    /// region when `params` does not set it.
    pub async fn call(&self, action: &str, params: &Params) -> Result<serde_json::Value, Error> {
        self.call_typed(action, params).await
    }

    /// Sends any ECS action and decodes the response into `T`.
    pub async fn call_typed<T: serde::de::DeserializeOwned>(
        &self,
        action: &str,
        params: &Params,
    ) -> Result<T, Error> {
        self.rpc.call_json_in(&self.region, action, params).await
    }
}

/// Builds an [`EcsClient`].
#[derive(Debug)]
pub struct EcsClientBuilder {
    region: String,
    endpoint: Option<String>,
    network: Network,
    credentials: Option<SharedCredentialsProvider>,
    config: ClientConfig,
}

impl EcsClientBuilder {
    /// The credentials source; it is wrapped in a [`CachingProvider`].
    pub fn credentials(mut self, provider: impl CredentialsProvider + 'static) -> Self {
        self.credentials = Some(Arc::new(CachingProvider::new(provider)));
        self
    }

    /// A credentials source that is already shared (and cached, if it needs to be).
    pub fn shared_credentials(mut self, provider: SharedCredentialsProvider) -> Self {
        self.credentials = Some(provider);
        self
    }

    /// Sends requests to this URL instead of the regional endpoint (`http` allowed).
    pub fn endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = Some(endpoint.into());
        self
    }

    /// Uses the VPC-internal endpoint (`ecs-vpc.<region>.aliyuncs.com`) unless overridden.
    pub fn vpc(mut self, vpc: bool) -> Self {
        self.network = if vpc { Network::Vpc } else { Network::Public };
        self
    }

    /// The signature scheme (default V1).
    pub fn signature(mut self, signature: SignatureVersion) -> Self {
        self.config.signature = signature;
        self
    }

    /// The HTTP method (default POST).
    pub fn method(mut self, method: HttpMethod) -> Self {
        self.config.method = method;
        self
    }

    /// The connect timeout.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.config.connect_timeout = timeout;
        self
    }

    /// The per-attempt request timeout.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.config.request_timeout = timeout;
        self
    }

    /// The retry policy.
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.config.retry = retry;
        self
    }

    /// Replaces the whole transport configuration.
    pub fn config(mut self, config: ClientConfig) -> Self {
        self.config = config;
        self
    }

    /// Builds the client; fails on an invalid region or endpoint, or missing credentials.
    pub fn build(self) -> Result<EcsClient, Error> {
        validate_region(&self.region)?;
        let endpoint = match &self.endpoint {
            Some(endpoint) => parse_endpoint(endpoint)?,
            None => ecs_endpoint(&self.region, self.network)?,
        };
        let credentials = self.credentials.ok_or_else(|| Error::InvalidRequest {
            action: "(client setup)".into(),
            reason: "no credentials configured: pass a credentials provider to the builder".into(),
        })?;
        let rpc = RpcClient::new(endpoint, ECS_API_VERSION, Some(credentials), self.config)?;
        Ok(EcsClient {
            rpc,
            region: self.region.into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::credentials::Credentials;

    #[test]
    fn builder_resolves_endpoints() {
        let creds = || Credentials::new("AK", "SK");
        let client = EcsClient::builder("cn-hangzhou")
            .credentials(creds())
            .build()
            .unwrap();
        assert_eq!(
            client.endpoint().as_str(),
            "https://ecs-cn-hangzhou.aliyuncs.com/"
        );
        let client = EcsClient::builder("cn-beijing")
            .credentials(creds())
            .vpc(true)
            .build()
            .unwrap();
        assert_eq!(
            client.endpoint().as_str(),
            "https://ecs-vpc.cn-beijing.aliyuncs.com/"
        );
        let client = EcsClient::builder("cn-beijing")
            .credentials(creds())
            .endpoint("http://127.0.0.1:18080")
            .build()
            .unwrap();
        assert_eq!(client.endpoint().as_str(), "http://127.0.0.1:18080/");
        assert!(
            EcsClient::builder("bad region")
                .credentials(creds())
                .build()
                .is_err()
        );
        assert!(EcsClient::builder("cn-beijing").build().is_err());
    }
}
