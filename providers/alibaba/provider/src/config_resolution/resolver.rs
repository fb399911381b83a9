//! Resolving a `providerConfigRef` into what a client needs: the ProviderConfig or
//! ClusterProviderConfig, its credentials Secret (only from the config's own namespace for a
//! namespaced ProviderConfig), the credential source and the endpoint settings, plus the version
//! key clients are cached under.
//!
//! Tenancy is checked here, before any connection: a namespaced ProviderConfig may use only its
//! namespace's Secrets and endpoints on the [`EndpointAllowList`]; a ClusterProviderConfig only
//! serves the namespaces its `allowedNamespaces` admits (read from the Namespace's labels).

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
    AllowedNamespaces, ClusterProviderConfig, CredentialsSource, InstanceRoleCredentials,
    ProviderConfig, ProviderConfigSettings, RamRoleArnCredentials, RrsaCredentials,
    SignatureVersion as ApiSignatureVersion,
};
use ferroplane_apis::common::{ProviderConfigKind, ProviderConfigReference};
use ferroplane_runtime::ReconcileError;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::{Api, Resource, ResourceExt};

use super::endpoint_policy::{EndpointAllowList, EndpointRefusal};
use super::secret_keys::{SecretKeysError, credentials_from_secret};
use super::tenancy::{
    NamespaceRefusal, namespace_allowed, namespaced_source_refusal, needs_labels,
};
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

/// Why a configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error(
        "{kind:?} {name} not found{}; create it or point spec.providerConfigRef at an existing one",
        namespace.as_ref().map(|ns| format!(" in namespace {ns}")).unwrap_or_default()
    )]
    NotFound {
        kind: ProviderConfigKind,
        name: String,
        namespace: Option<String>,
    },
    #[error(
        "{config} names Secret {secret_namespace}/{secret}, but a ProviderConfig may only read Secrets in its own namespace {namespace}; remove credentials.secretRef.namespace or use a ClusterProviderConfig"
    )]
    SecretNamespaceNotAllowed {
        config: String,
        namespace: String,
        secret_namespace: String,
        secret: String,
    },
    #[error(
        "{config} has credentials source {source_name} but no {field}; set spec.credentials.{field}"
    )]
    MissingField {
        config: String,
        source_name: &'static str,
        field: &'static str,
    },
    #[error(
        "{config}: credentials Secret {namespace}/{name} not found; create it with the keys accessKeyId and accessKeySecret"
    )]
    SecretNotFound {
        config: String,
        namespace: String,
        name: String,
    },
    #[error("{config}: {source}")]
    SecretKeys {
        config: String,
        #[source]
        source: SecretKeysError,
    },
    #[error("{config}: cannot read from the Kubernetes API: {source}")]
    Kube {
        config: String,
        #[source]
        source: kube::Error,
    },
    #[error("{config}: {source}")]
    Client {
        config: String,
        #[source]
        source: Error,
    },
    #[error(
        "{config}: {why}; a namespaced ProviderConfig may only use credentials.source Secret, or RamRoleArn with a secretRef, in its own namespace. Use a ClusterProviderConfig set up by an administrator for the controller's identity"
    )]
    SourceNotAllowed { config: String, why: &'static str },
    #[error(
        "{config}: spec.{field} {endpoint} is not allowed: {refusal}. Remove it to use the region's Alibaba Cloud endpoint, or use a ClusterProviderConfig"
    )]
    EndpointNotAllowed {
        config: String,
        field: &'static str,
        endpoint: String,
        refusal: EndpointRefusal,
    },
    #[error(
        "{config} does not allow namespace {namespace} (spec.allowedNamespaces{}); ask its administrator to admit the namespace, or use a ProviderConfig of this namespace",
        detail.as_deref().map(|d| format!(": {d}")).unwrap_or_default()
    )]
    NamespaceNotAllowed {
        config: String,
        namespace: String,
        detail: Option<String>,
    },
}

impl ConfigError {
    /// The condition reason.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::NotFound { .. } => "ProviderConfigNotFound",
            Self::SecretNamespaceNotAllowed { .. } => "SecretNamespaceNotAllowed",
            Self::MissingField { .. } => "InvalidProviderConfig",
            Self::SecretNotFound { .. } => "CredentialsSecretNotFound",
            Self::SecretKeys {
                source: SecretKeysError::MalformedJson { .. },
                ..
            } => "MalformedCredentials",
            Self::SecretKeys { .. } => "CredentialsKeyMissing",
            Self::Kube { .. } => "KubernetesApiError",
            Self::Client { .. } => "InvalidProviderConfig",
            Self::SourceNotAllowed { .. } => "CredentialsSourceNotAllowed",
            Self::EndpointNotAllowed { .. } => "EndpointNotAllowed",
            Self::NamespaceNotAllowed { .. } => "NamespaceNotAllowed",
        }
    }

    /// As a reconcile error: every case waits for the config, its Secret or the API to change.
    pub fn into_reconcile(self) -> ReconcileError {
        let reason = self.reason();
        let message = self.to_string();
        match self {
            Self::Kube { .. } => ReconcileError::retryable(reason, message),
            _ => ReconcileError::dependency(reason, message),
        }
    }
}

/// Whether a configuration reads `secret` (for requeueing its users when the Secret changes).
pub fn uses_secret<P: ProviderConfigSettings + Resource, S: Resource>(
    config: &P,
    secret: &S,
) -> bool {
    let Some(secret_ref) = config.credentials().secret_ref.as_ref() else {
        return false;
    };
    let namespace = secret_ref
        .namespace
        .as_deref()
        .or(config.meta().namespace.as_deref());
    secret_ref.name == secret.name_any() && namespace == secret.meta().namespace.as_deref()
}

/// Reads configurations, Secrets and Namespaces through the Kubernetes API.
#[derive(Clone)]
pub struct ConfigResolver {
    client: kube::Client,
    endpoints: EndpointAllowList,
}

impl ConfigResolver {
    /// A resolver with the default endpoint allow-list (Alibaba Cloud's `https` endpoints).
    pub fn new(client: kube::Client) -> Self {
        Self {
            client,
            endpoints: EndpointAllowList::default(),
        }
    }

    /// Namespaced configurations may use these endpoints.
    pub fn allow_endpoints(mut self, endpoints: EndpointAllowList) -> Self {
        self.endpoints = endpoints;
        self
    }

    /// Resolves the reference of an object in `namespace`, refusing a ClusterProviderConfig
    /// that does not admit the namespace.
    pub async fn resolve(
        &self,
        reference: &ProviderConfigReference,
        namespace: &str,
    ) -> Result<ResolvedConfig, ConfigError> {
        let resolved = match reference.kind {
            ProviderConfigKind::ProviderConfig => {
                let api: Api<ProviderConfig> = Api::namespaced(self.client.clone(), namespace);
                let config = self.get(&api, reference, Some(namespace)).await?;
                self.resolve_config(&config).await?
            }
            ProviderConfigKind::ClusterProviderConfig => {
                let api: Api<ClusterProviderConfig> = Api::all(self.client.clone());
                let config = self.get(&api, reference, None).await?;
                self.resolve_config(&config).await?
            }
        };
        self.admit(&resolved, namespace).await?;
        Ok(resolved)
    }

    /// Whether `resolved` serves objects of `namespace` (its `allowedNamespaces`). Reads the
    /// Namespace only when a selector has to be evaluated.
    pub async fn admit(
        &self,
        resolved: &ResolvedConfig,
        namespace: &str,
    ) -> Result<(), ConfigError> {
        let Some(allowed) = resolved.allowed_namespaces.as_ref() else {
            return Ok(());
        };
        let labels = if needs_labels(Some(allowed)) {
            let api: Api<Namespace> = Api::all(self.client.clone());
            match api.get_opt(namespace).await {
                Ok(found) => found.map(|ns| ns.labels().clone()).unwrap_or_default(),
                Err(source) => {
                    return Err(ConfigError::Kube {
                        config: resolved.display.clone(),
                        source,
                    });
                }
            }
        } else {
            Default::default()
        };
        namespace_allowed(allowed, &labels).map_err(|refusal| ConfigError::NamespaceNotAllowed {
            config: resolved.display.clone(),
            namespace: namespace.to_owned(),
            detail: match refusal {
                NamespaceRefusal::NotSelected => None,
                NamespaceRefusal::InvalidSelector(e) => {
                    Some(format!("its selector is invalid: {e}"))
                }
            },
        })
    }

    async fn get<P>(
        &self,
        api: &Api<P>,
        reference: &ProviderConfigReference,
        namespace: Option<&str>,
    ) -> Result<P, ConfigError>
    where
        P: Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
    {
        match api.get_opt(&reference.name).await {
            Ok(Some(config)) => Ok(config),
            Ok(None) => Err(ConfigError::NotFound {
                kind: reference.kind,
                name: reference.name.clone(),
                namespace: namespace.map(str::to_owned),
            }),
            Err(source) => Err(ConfigError::Kube {
                config: format!("{:?} {}", reference.kind, reference.name),
                source,
            }),
        }
    }

    /// Resolves one configuration object.
    pub async fn resolve_config<P>(&self, config: &P) -> Result<ResolvedConfig, ConfigError>
    where
        P: ProviderConfigSettings + Resource<DynamicType = ()>,
    {
        let display = display(config);
        let credentials = config.credentials();
        let config_ns = config.meta().namespace.clone();
        if config_ns.is_some() {
            self.check_tenant_config(config, &display)?;
        }
        let mut secret_version = String::new();
        let mut secret = None;
        let mut from_secret = None;
        if let Some(secret_ref) = &credentials.secret_ref
            && credentials.source != CredentialsSource::Environment
            && credentials.source != CredentialsSource::Rrsa
        {
            let namespace = match (&config_ns, &secret_ref.namespace) {
                (Some(own), Some(other)) if own != other => {
                    return Err(ConfigError::SecretNamespaceNotAllowed {
                        config: display,
                        namespace: own.clone(),
                        secret_namespace: other.clone(),
                        secret: secret_ref.name.clone(),
                    });
                }
                (Some(own), _) => own.clone(),
                (None, Some(ns)) => ns.clone(),
                (None, None) => {
                    return Err(ConfigError::MissingField {
                        config: display,
                        source_name: "Secret",
                        field: "secretRef.namespace",
                    });
                }
            };
            let api: Api<Secret> = Api::namespaced(self.client.clone(), &namespace);
            let object = match api.get_opt(&secret_ref.name).await {
                Ok(Some(object)) => object,
                Ok(None) => {
                    return Err(ConfigError::SecretNotFound {
                        config: display,
                        namespace,
                        name: secret_ref.name.clone(),
                    });
                }
                Err(source) => {
                    return Err(ConfigError::Kube {
                        config: display,
                        source,
                    });
                }
            };
            secret_version = object.resource_version().unwrap_or_default();
            let data = object.data.unwrap_or_default();
            let parsed = credentials_from_secret(
                &format!("{namespace}/{}", secret_ref.name),
                &data,
                secret_ref.key.as_deref(),
            )
            .map_err(|source| ConfigError::SecretKeys {
                config: display.clone(),
                source,
            })?;
            from_secret = Some(parsed);
            secret = Some((namespace, secret_ref.name.clone()));
        }
        let source = match credentials.source {
            CredentialsSource::Secret => {
                Source::Static(from_secret.ok_or_else(|| ConfigError::MissingField {
                    config: display.clone(),
                    source_name: "Secret",
                    field: "secretRef",
                })?)
            }
            CredentialsSource::Environment => Source::Environment,
            CredentialsSource::Rrsa => Source::Rrsa(credentials.rrsa.clone().unwrap_or_default()),
            CredentialsSource::RamRoleArn => Source::RamRole {
                role: credentials.ram_role_arn.clone().ok_or_else(|| {
                    ConfigError::MissingField {
                        config: display.clone(),
                        source_name: "RamRoleArn",
                        field: "ramRoleArn",
                    }
                })?,
                base: from_secret,
            },
            CredentialsSource::InstanceRole => {
                Source::InstanceRole(credentials.instance_role.clone().unwrap_or_default())
            }
        };
        let generation = config.meta().generation.unwrap_or_default();
        Ok(ResolvedConfig {
            uid: config.meta().uid.clone().unwrap_or_else(|| display.clone()),
            version: format!("{generation}/{secret_version}"),
            secret_version: secret.as_ref().map(|_| secret_version.clone()),
            secret,
            display,
            source,
            endpoint: config.endpoint().map(str::to_owned),
            region: config.region().map(str::to_owned),
            use_vpc_endpoint: config.use_vpc_endpoint(),
            sts_endpoint: config.sts_endpoint().map(str::to_owned),
            signature: match config.signature_version() {
                ApiSignatureVersion::V1 => SignatureVersion::V1,
                ApiSignatureVersion::V3 => SignatureVersion::V3,
            },
            allowed_namespaces: config.allowed_namespaces().cloned(),
        })
    }

    /// What a tenant's (namespaced) configuration may not do, refused before anything is read
    /// or connected to: the controller's own identity, and endpoints off the allow-list.
    fn check_tenant_config<P: ProviderConfigSettings>(
        &self,
        config: &P,
        display: &str,
    ) -> Result<(), ConfigError> {
        if let Some(why) = namespaced_source_refusal(config.credentials()) {
            return Err(ConfigError::SourceNotAllowed {
                config: display.to_owned(),
                why,
            });
        }
        for (field, endpoint) in [
            ("endpoint", config.endpoint()),
            ("stsEndpoint", config.sts_endpoint()),
        ] {
            if let Some(endpoint) = endpoint {
                self.endpoints.check(endpoint).map_err(|refusal| {
                    ConfigError::EndpointNotAllowed {
                        config: display.to_owned(),
                        field,
                        endpoint: endpoint.to_owned(),
                        refusal,
                    }
                })?;
            }
        }
        Ok(())
    }
}

/// `ProviderConfig ns/name` or `ClusterProviderConfig name`.
pub fn display<P: Resource<DynamicType = ()>>(config: &P) -> String {
    match &config.meta().namespace {
        Some(ns) => format!("{} {ns}/{}", P::kind(&()), config.name_any()),
        None => format!("{} {}", P::kind(&()), config.name_any()),
    }
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
    use ferroplane_apis::alibabacloud::{
        CredentialsSecretRef, ProviderConfigSpec, ProviderCredentials,
    };

    fn config(ns: &str, secret_ns: Option<&str>) -> ProviderConfig {
        let mut c = ProviderConfig::new(
            "default",
            ProviderConfigSpec {
                credentials: ProviderCredentials {
                    source: CredentialsSource::Secret,
                    secret_ref: Some(CredentialsSecretRef {
                        name: "creds".into(),
                        namespace: secret_ns.map(str::to_owned),
                        key: None,
                    }),
                    rrsa: None,
                    ram_role_arn: None,
                    instance_role: None,
                },
                connection: Default::default(),
            },
        );
        c.metadata.namespace = Some(ns.into());
        c
    }

    fn secret(ns: &str, name: &str) -> Secret {
        let mut s = Secret::default();
        s.metadata.namespace = Some(ns.into());
        s.metadata.name = Some(name.into());
        s
    }

    #[test]
    fn a_config_uses_the_secret_in_its_namespace() {
        assert!(uses_secret(
            &config("team-a", None),
            &secret("team-a", "creds")
        ));
        assert!(!uses_secret(
            &config("team-a", None),
            &secret("team-b", "creds")
        ));
        assert!(!uses_secret(
            &config("team-a", None),
            &secret("team-a", "other")
        ));
        assert!(uses_secret(
            &config("team-a", Some("team-a")),
            &secret("team-a", "creds")
        ));
    }

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

    #[test]
    fn errors_have_reasons_and_wait_for_dependencies() {
        let e = ConfigError::NotFound {
            kind: ProviderConfigKind::ProviderConfig,
            name: "default".into(),
            namespace: Some("ns".into()),
        };
        assert_eq!(e.reason(), "ProviderConfigNotFound");
        assert!(
            e.to_string()
                .contains("ProviderConfig default not found in namespace ns")
        );
        let r = e.into_reconcile();
        assert_eq!(r.retry(), ferroplane_runtime::RetryClass::WaitForDependency);
    }
}
