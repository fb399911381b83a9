//! What a resolved configuration gives a client: [`ResolvedConfig`] (credential [`Source`],
//! endpoint, region, signature, the version key clients are cached under) and, from it, the
//! transport settings, the STS endpoint and the cached credentials provider. `resolver` builds
//! it; `resolved_configs` keeps it.

use std::sync::Arc;

use alibaba_sdk::Error;
use alibaba_sdk::credentials::{
    CachingProvider, Credentials, DEFAULT_METADATA_ENDPOINT, ENV_ECS_METADATA,
    ENV_ECS_METADATA_DISABLED, EnvironmentProvider, ImdsProvider, OidcRoleProvider,
    RamRoleArnProvider, SharedCredentialsProvider, StsEndpointChoice,
};
use alibaba_sdk::endpoint::parse_endpoint;
use alibaba_sdk::rpc::{ClientConfig, SignatureVersion};
use ferroplane_apis::alibabacloud::{
    AllowedNamespaces, InstanceRoleCredentials, RamRoleArnCredentials, RrsaCredentials,
};

use super::config_error::ConfigError;
use crate::options::ClientOverrides;

/// Where credentials come from, with Secret contents already read.
#[derive(Debug, Clone)]
pub enum Source {
    /// Static keys from a Secret.
    Static(Credentials),
    /// The provider process's `ALIBABA_CLOUD_*` variables.
    Environment,
    /// RRSA (OIDC role), fields unset in the spec come from the environment.
    Rrsa(RrsaCredentials),
    /// STS AssumeRole on top of static keys, or of the environment when `base` is `None`.
    RamRole {
        role: RamRoleArnCredentials,
        base: Option<Credentials>,
    },
    /// The ECS instance RAM role, from the metadata service.
    InstanceRole(InstanceRoleCredentials),
}

/// A configuration, resolved.
#[derive(Debug, Clone)]
pub struct ResolvedConfig {
    /// `ProviderConfig ns/name` or `ClusterProviderConfig name`, for messages.
    pub display: String,
    /// The config's UID: one cache entry per config.
    pub uid: String,
    /// Changes whenever the config's spec or its Secret changes (not on status writes).
    pub version: String,
    /// The credentials Secret read, as (namespace, name), if any.
    pub secret: Option<(String, String)>,
    /// The resourceVersion of that Secret when it was read.
    pub secret_version: Option<String>,
    pub source: Source,
    pub endpoint: Option<String>,
    pub region: Option<String>,
    pub use_vpc_endpoint: bool,
    /// STS endpoint set in the configuration.
    pub sts_endpoint: Option<String>,
    pub signature: SignatureVersion,
    /// The namespaces a ClusterProviderConfig admits (`None`: all, or a namespaced config).
    pub allowed_namespaces: Option<AllowedNamespaces>,
}

impl ResolvedConfig {
    /// The transport settings of every client of this configuration.
    pub fn client_config(&self, overrides: &ClientOverrides) -> ClientConfig {
        let mut config = ClientConfig {
            signature: self.signature,
            ..ClientConfig::default()
        };
        if let Some(t) = overrides.request_timeout {
            config.request_timeout = t;
        }
        if let Some(t) = overrides.connect_timeout {
            config.connect_timeout = t;
        }
        if let Some(retry) = overrides.retry {
            config.retry = retry;
        }
        config
    }

    /// The STS endpoint: `stsEndpoint` of the configuration, else the controller's override,
    /// else `ALIBABA_CLOUD_STS_ENDPOINT`, else `sts[-vpc].<region>.aliyuncs.com`.
    pub fn sts_url(&self, overrides: &ClientOverrides) -> Result<url::Url, Error> {
        Ok(StsEndpointChoice {
            explicit: self
                .sts_endpoint
                .as_deref()
                .or(overrides.sts_endpoint.as_deref()),
            region: self.region.as_deref(),
            vpc: self.use_vpc_endpoint,
        }
        .resolve(&overrides.environment)?)
    }

    /// The credentials provider, cached: temporary credentials are reused until shortly before
    /// they expire.
    pub fn credentials_provider(
        &self,
        overrides: &ClientOverrides,
    ) -> Result<SharedCredentialsProvider, ConfigError> {
        let client_error = |source: Error| ConfigError::Client {
            config: self.display.clone(),
            source,
        };
        let env = &overrides.environment;
        let config = self.client_config(overrides);
        let environment = || {
            // A RamRoleArn profile needs STS; an AK profile does not, so an STS endpoint that
            // cannot be formed only matters to the former.
            EnvironmentProvider::new(env.clone(), self.sts_url(overrides).ok(), config.clone())
        };
        let provider: SharedCredentialsProvider = match &self.source {
            Source::Static(credentials) => Arc::new(credentials.clone()),
            Source::Environment => Arc::new(CachingProvider::new(environment())),
            Source::Rrsa(rrsa) => {
                let mut provider = OidcRoleProvider::from_env_lookup(
                    self.sts_url(overrides).map_err(client_error)?,
                    config,
                    |name| {
                        use alibaba_sdk::credentials::{
                            ENV_OIDC_PROVIDER_ARN, ENV_OIDC_TOKEN_FILE, ENV_ROLE_ARN,
                        };
                        let from_spec = match name {
                            n if n == ENV_ROLE_ARN => rrsa.role_arn.clone(),
                            n if n == ENV_OIDC_PROVIDER_ARN => rrsa.oidc_provider_arn.clone(),
                            n if n == ENV_OIDC_TOKEN_FILE => rrsa.oidc_token_file.clone(),
                            _ => None,
                        };
                        from_spec.or_else(|| env.get(name))
                    },
                )
                .map_err(client_error)?;
                if let Some(name) = &rrsa.role_session_name {
                    provider = provider.session_name(name);
                }
                Arc::new(CachingProvider::new(provider))
            }
            Source::RamRole { role, base } => {
                let base: SharedCredentialsProvider = match base {
                    Some(credentials) => Arc::new(credentials.clone()),
                    None => Arc::new(CachingProvider::new(environment())),
                };
                let mut provider = RamRoleArnProvider::with_config(
                    self.sts_url(overrides).map_err(client_error)?,
                    base,
                    role.role_arn.clone(),
                    config,
                )
                .map_err(client_error)?;
                if let Some(name) = &role.role_session_name {
                    provider = provider.session_name(name);
                }
                if let Some(id) = &role.external_id {
                    provider = provider.external_id(id);
                }
                if let Some(seconds) = role.duration_seconds.and_then(|s| u64::try_from(s).ok()) {
                    provider = provider.duration(std::time::Duration::from_secs(seconds));
                }
                Arc::new(CachingProvider::new(provider))
            }
            Source::InstanceRole(settings) => {
                if env.is_true(ENV_ECS_METADATA_DISABLED) {
                    return Err(ConfigError::Client {
                        config: self.display.clone(),
                        source: alibaba_sdk::CredentialsError::Invalid {
                            reason: format!(
                                "source InstanceRole is disabled by {ENV_ECS_METADATA_DISABLED}=true in the controller's environment"
                            ),
                        }
                        .into(),
                    });
                }
                let endpoint = overrides
                    .metadata_endpoint
                    .as_deref()
                    .unwrap_or(DEFAULT_METADATA_ENDPOINT);
                let mut provider = ImdsProvider::new(
                    parse_endpoint(endpoint).map_err(|e| client_error(e.into()))?,
                )
                .map_err(|e| client_error(e.into()))?;
                if let Some(role) = settings
                    .role_name
                    .clone()
                    .or_else(|| env.get(ENV_ECS_METADATA))
                {
                    provider = provider.role_name(role);
                }
                Arc::new(CachingProvider::new(provider))
            }
        };
        Ok(provider)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolved(region: Option<&str>, vpc: bool, sts: Option<&str>) -> ResolvedConfig {
        ResolvedConfig {
            display: "ClusterProviderConfig c".into(),
            uid: "u".into(),
            version: "1/".into(),
            secret: None,
            secret_version: None,
            source: Source::Environment,
            endpoint: None,
            region: region.map(str::to_owned),
            use_vpc_endpoint: vpc,
            sts_endpoint: sts.map(str::to_owned),
            signature: SignatureVersion::V1,
            allowed_namespaces: None,
        }
    }

    #[test]
    fn sts_endpoint_precedence_and_the_vpc_network() {
        use alibaba_sdk::credentials::{ENV_STS_ENDPOINT, EnvLookup};
        let clean = ClientOverrides {
            environment: EnvLookup::from_pairs(Vec::<(String, String)>::new()),
            ..ClientOverrides::default()
        };
        let url = |r: ResolvedConfig, o: &ClientOverrides| r.sts_url(o).unwrap().to_string();
        assert_eq!(
            url(resolved(Some("cn-beijing"), true, None), &clean),
            "https://sts-vpc.cn-beijing.aliyuncs.com/"
        );
        assert_eq!(
            url(resolved(Some("cn-beijing"), false, None), &clean),
            "https://sts.cn-beijing.aliyuncs.com/"
        );
        let error = resolved(None, true, None).sts_url(&clean).unwrap_err();
        assert!(error.to_string().contains("needs a region"), "{error}");
        let with_env = ClientOverrides {
            environment: EnvLookup::from_pairs([(
                ENV_STS_ENDPOINT,
                "sts-vpc.cn-shanghai.aliyuncs.com",
            )]),
            ..ClientOverrides::default()
        };
        assert_eq!(
            url(resolved(Some("cn-beijing"), true, None), &with_env),
            "https://sts-vpc.cn-shanghai.aliyuncs.com/"
        );
        let with_override = ClientOverrides {
            sts_endpoint: Some("http://127.0.0.1:9".into()),
            ..with_env.clone()
        };
        assert_eq!(
            url(resolved(None, false, None), &with_override),
            "http://127.0.0.1:9/"
        );
        assert_eq!(
            url(
                resolved(None, false, Some("https://sts.eu-central-1.aliyuncs.com")),
                &with_override
            ),
            "https://sts.eu-central-1.aliyuncs.com/",
            "the configuration's stsEndpoint wins"
        );
    }
}
