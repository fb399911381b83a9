//! [`VpcClient`]: the VPC API client of one region.

use std::sync::Arc;

use url::Url;

use crate::ecs::EcsClient;
use crate::endpoint::{EndpointError, Network, parse_endpoint, validate_region};
use crate::error::Error;
use crate::rpc::{Params, RpcClient};

/// The VPC API version.
pub const VPC_API_VERSION: &str = "2016-04-28";

/// The VPC API endpoint of a region: `vpc.<region>.aliyuncs.com`, or `vpc-vpc.<region>` from
/// inside a VPC.
pub fn vpc_endpoint(region: &str, network: Network) -> Result<Url, EndpointError> {
    validate_region(region)?;
    let host = match network {
        Network::Public => format!("vpc.{region}.aliyuncs.com"),
        Network::Vpc => format!("vpc-vpc.{region}.aliyuncs.com"),
    };
    parse_endpoint(&format!("https://{host}"))
}

/// A signed VPC API client for one region. Cheap to clone.
#[derive(Debug, Clone)]
pub struct VpcClient {
    rpc: RpcClient,
    region: Arc<str>,
}

impl VpcClient {
    /// A client for `ecs`'s region with its credentials, signature, timeouts and retries, sending
    /// to `endpoint`.
    pub fn with_settings_of(ecs: &EcsClient, endpoint: Url) -> Result<Self, Error> {
        let rpc = RpcClient::new(
            endpoint,
            VPC_API_VERSION,
            ecs.rpc().credentials().cloned(),
            ecs.rpc().config().clone(),
        )?;
        Ok(Self {
            rpc,
            region: ecs.region().into(),
        })
    }

    /// The region whose `RegionId` calls carry by default.
    pub fn region(&self) -> &str {
        &self.region
    }

    /// The endpoint requests go to.
    pub fn endpoint(&self) -> &Url {
        self.rpc.endpoint()
    }

    /// Sends any VPC action and decodes the response; `RegionId` defaults to the client's region.
    pub async fn call_typed<T: serde::de::DeserializeOwned>(
        &self,
        action: &str,
        params: &Params,
    ) -> Result<T, Error> {
        self.rpc.call_json_in(&self.region, action, params).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::credentials::Credentials;

    #[test]
    fn endpoints_and_settings() {
        assert_eq!(
            vpc_endpoint("cn-beijing", Network::Public)
                .unwrap()
                .as_str(),
            "https://vpc.cn-beijing.aliyuncs.com/"
        );
        assert_eq!(
            vpc_endpoint("cn-beijing", Network::Vpc).unwrap().as_str(),
            "https://vpc-vpc.cn-beijing.aliyuncs.com/"
        );
        assert!(vpc_endpoint("bad region", Network::Public).is_err());

        let ecs = EcsClient::builder("cn-shanghai")
            .credentials(Credentials::new("AK", "SK"))
            .endpoint("http://127.0.0.1:1")
            .build()
            .unwrap();
        let vpc = VpcClient::with_settings_of(&ecs, parse_endpoint("http://127.0.0.1:2").unwrap())
            .unwrap();
        assert_eq!(vpc.region(), "cn-shanghai");
        assert_eq!(vpc.endpoint().as_str(), "http://127.0.0.1:2/");
    }
}
