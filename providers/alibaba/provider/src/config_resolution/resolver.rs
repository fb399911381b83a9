//! Resolving a `providerConfigRef` into a [`ResolvedConfig`]: the ProviderConfig or
//! ClusterProviderConfig, its credentials Secret (only from the config's own namespace for a
//! namespaced ProviderConfig), the credential source and the endpoint settings, plus the version
//! key clients are cached under.
//!
//! Tenancy is checked here, before any connection: a namespaced ProviderConfig may use only its
//! namespace's Secrets and endpoints on the [`EndpointAllowList`]; a ClusterProviderConfig only
//! serves the namespaces its `allowedNamespaces` admits (read from the Namespace's labels).

use alibaba_sdk::rpc::SignatureVersion;
use ferroplane_apis::alibabacloud::{
    ClusterProviderConfig, CredentialsSource, ProviderConfig, ProviderConfigSettings,
    SignatureVersion as ApiSignatureVersion,
};
use ferroplane_apis::common::{ProviderConfigKind, ProviderConfigReference};
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::{Api, Resource, ResourceExt};

use super::client_settings::{ResolvedConfig, Source};
use super::config_error::ConfigError;
use super::endpoint_policy::EndpointAllowList;
use super::secret_keys::credentials_from_secret;
use super::tenancy::{
    NamespaceRefusal, namespace_allowed, namespaced_source_refusal, needs_labels,
};

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
}
