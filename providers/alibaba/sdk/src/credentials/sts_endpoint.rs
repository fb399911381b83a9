//! Which STS endpoint the credential sources that call STS use, with the precedence of Alibaba
//! Cloud's credentials libraries: an endpoint set explicitly, else `ALIBABA_CLOUD_STS_ENDPOINT`,
//! else `sts[-vpc].<region>.aliyuncs.com` with the region given or `ALIBABA_CLOUD_STS_REGION`
//! (VPC when asked or `ALIBABA_CLOUD_VPC_ENDPOINT_ENABLED=true`), else `sts.aliyuncs.com`.

use url::Url;

use super::env::{ENV_STS_ENDPOINT, ENV_STS_REGION, ENV_VPC_ENDPOINT_ENABLED, EnvLookup};
use crate::endpoint::{EndpointError, Network, parse_endpoint, sts_endpoint};

/// What a configuration says about STS; unset fields fall back to the environment.
#[derive(Debug, Clone, Copy, Default)]
pub struct StsEndpointChoice<'a> {
    /// An endpoint (URL or host) set explicitly.
    pub explicit: Option<&'a str>,
    /// The configuration's region.
    pub region: Option<&'a str>,
    /// Use the VPC-internal endpoint.
    pub vpc: bool,
}

impl StsEndpointChoice<'_> {
    /// The endpoint, reading the environment through `env` for what is not set.
    pub fn resolve(&self, env: &EnvLookup) -> Result<Url, EndpointError> {
        if let Some(explicit) = self.explicit {
            return parse_endpoint(explicit);
        }
        if let Some(from_env) = env.get(ENV_STS_ENDPOINT) {
            return parse_endpoint(&from_env);
        }
        let env_region = env.get(ENV_STS_REGION);
        let region = self.region.or(env_region.as_deref());
        let network = if self.vpc || env.is_true(ENV_VPC_ENDPOINT_ENABLED) {
            Network::Vpc
        } else {
            Network::Public
        };
        sts_endpoint(region, network)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(choice: StsEndpointChoice<'_>, env: &[(&str, &str)]) -> String {
        choice
            .resolve(&EnvLookup::from_pairs(env.iter().copied()))
            .unwrap()
            .to_string()
    }

    #[test]
    fn explicit_then_environment_then_region_and_network() {
        let explicit = StsEndpointChoice {
            explicit: Some("http://127.0.0.1:9000"),
            region: Some("cn-beijing"),
            vpc: true,
        };
        assert_eq!(
            resolve(
                explicit,
                &[(ENV_STS_ENDPOINT, "sts.cn-hangzhou.aliyuncs.com")]
            ),
            "http://127.0.0.1:9000/"
        );
        let vpc = StsEndpointChoice {
            explicit: None,
            region: Some("cn-beijing"),
            vpc: true,
        };
        assert_eq!(
            resolve(
                vpc,
                &[(ENV_STS_ENDPOINT, "sts-vpc.cn-hangzhou.aliyuncs.com")]
            ),
            "https://sts-vpc.cn-hangzhou.aliyuncs.com/"
        );
        assert_eq!(
            resolve(vpc, &[]),
            "https://sts-vpc.cn-beijing.aliyuncs.com/"
        );
        let none = StsEndpointChoice::default();
        assert_eq!(resolve(none, &[]), "https://sts.aliyuncs.com/");
        assert_eq!(
            resolve(
                none,
                &[
                    (ENV_STS_REGION, "eu-central-1"),
                    (ENV_VPC_ENDPOINT_ENABLED, "TRUE")
                ]
            ),
            "https://sts-vpc.eu-central-1.aliyuncs.com/"
        );
        assert_eq!(
            StsEndpointChoice { vpc: true, ..none }
                .resolve(&EnvLookup::from_pairs(Vec::<(String, String)>::new()))
                .unwrap_err(),
            EndpointError::VpcStsNeedsRegion
        );
    }
}
