//! [`OidcRoleProvider`]: RRSA on ACK. The pod's projected service account token (re-read on every
//! call, as the kubelet rotates it) is exchanged for role credentials with the unsigned STS
//! `AssumeRoleWithOIDC`.

use std::path::PathBuf;
use std::time::Duration;

use url::Url;

use super::env::{ENV_OIDC_PROVIDER_ARN, ENV_OIDC_TOKEN_FILE, ENV_ROLE_ARN, ENV_ROLE_SESSION_NAME};
use crate::error::{CredentialsError, Error};
use crate::rpc::ClientConfig;
use crate::secret::Secret;
use crate::signing_credentials::{Credentials, CredentialsFuture, CredentialsProvider};
use crate::sts::{AssumeRoleWithOidcRequest, DEFAULT_DURATION, StsClient, default_session_name};

/// Exchanges an OIDC token for role credentials on every call; wrap it in a
/// [`super::CachingProvider`] (the ECS client does).
#[derive(Debug, Clone)]
pub struct OidcRoleProvider {
    sts: StsClient,
    role_arn: String,
    oidc_provider_arn: String,
    token_file: PathBuf,
    session_name: String,
    duration: Duration,
    policy: Option<String>,
}

impl OidcRoleProvider {
    /// A provider for `role_arn` trusting `oidc_provider_arn`, with the token in `token_file`,
    /// using the STS at `sts_endpoint`.
    pub fn new(
        sts_endpoint: Url,
        role_arn: impl Into<String>,
        oidc_provider_arn: impl Into<String>,
        token_file: impl Into<PathBuf>,
        config: ClientConfig,
    ) -> Result<Self, Error> {
        Ok(Self {
            sts: StsClient::new(sts_endpoint, None, config)?,
            role_arn: role_arn.into(),
            oidc_provider_arn: oidc_provider_arn.into(),
            token_file: token_file.into(),
            session_name: default_session_name(),
            duration: DEFAULT_DURATION,
            policy: None,
        })
    }

    /// Configured the way ACK's RRSA injects it: `ALIBABA_CLOUD_ROLE_ARN`,
    /// `ALIBABA_CLOUD_OIDC_PROVIDER_ARN`, `ALIBABA_CLOUD_OIDC_TOKEN_FILE` and optional
    /// `ALIBABA_CLOUD_ROLE_SESSION_NAME`, read through `lookup` (e.g. `std::env::var(..).ok()`).
    pub fn from_env_lookup(
        sts_endpoint: Url,
        config: ClientConfig,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, Error> {
        let var = |name: &'static str, hint: &'static str| {
            lookup(name)
                .filter(|v| !v.trim().is_empty())
                .ok_or(CredentialsError::MissingEnv {
                    variable: name,
                    hint,
                })
        };
        let role_arn = var(ENV_ROLE_ARN, "set it to the ARN of the RAM role to assume")?;
        let provider_arn = var(
            ENV_OIDC_PROVIDER_ARN,
            "set it to the ARN of the cluster's OIDC provider (RRSA)",
        )?;
        let token_file = var(
            ENV_OIDC_TOKEN_FILE,
            "set it to the path of the projected service account token (RRSA)",
        )?;
        let mut provider = Self::new(sts_endpoint, role_arn, provider_arn, token_file, config)?;
        if let Some(name) = lookup(ENV_ROLE_SESSION_NAME).filter(|v| !v.trim().is_empty()) {
            provider.session_name = name;
        }
        Ok(provider)
    }

    /// The session name shown in audit logs.
    pub fn session_name(mut self, name: impl Into<String>) -> Self {
        self.session_name = name.into();
        self
    }

    /// The session length (at least 900 s).
    pub fn duration(mut self, duration: Duration) -> Self {
        self.duration = duration;
        self
    }

    /// A policy restricting the session further.
    pub fn policy(mut self, policy: impl Into<String>) -> Self {
        self.policy = Some(policy.into());
        self
    }

    async fn fetch(&self) -> Result<Credentials, CredentialsError> {
        let token = tokio::fs::read_to_string(&self.token_file)
            .await
            .map_err(|source| CredentialsError::OidcTokenFile {
                path: self.token_file.clone(),
                source,
            })?;
        let request = AssumeRoleWithOidcRequest {
            role_arn: self.role_arn.clone(),
            oidc_provider_arn: self.oidc_provider_arn.clone(),
            oidc_token: Secret::new(token.trim()),
            role_session_name: self.session_name.clone(),
            duration: self.duration,
            policy: self.policy.clone(),
        };
        self.sts
            .assume_role_with_oidc(&request)
            .await
            .map_err(|e| CredentialsError::Sts(Box::new(e)))
    }
}

impl CredentialsProvider for OidcRoleProvider {
    fn credentials(&self) -> CredentialsFuture<'_> {
        Box::pin(self.fetch())
    }
}
