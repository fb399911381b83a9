//! [`RamRoleArnProvider`]: temporary credentials of a RAM role, from STS `AssumeRole` signed
//! with source credentials (static keys, the environment, or another role).

use std::time::Duration;

use url::Url;

use crate::error::{CredentialsError, Error};
use crate::rpc::ClientConfig;
use crate::signing_credentials::{
    Credentials, CredentialsFuture, CredentialsProvider, SharedCredentialsProvider,
};
use crate::sts::{AssumeRoleRequest, DEFAULT_DURATION, StsClient, default_session_name};

/// Assumes a RAM role on every call; wrap it in a [`super::CachingProvider`] (the ECS client
/// does) to reuse the credentials until shortly before they expire.
#[derive(Debug, Clone)]
pub struct RamRoleArnProvider {
    sts: StsClient,
    request: AssumeRoleRequest,
}

impl RamRoleArnProvider {
    /// Assumes `role_arn` with `source` credentials through the STS at `sts_endpoint`
    /// (see [`crate::endpoint::sts_endpoint`]; any URL works, e.g. a local test server).
    pub fn new(
        sts_endpoint: Url,
        source: SharedCredentialsProvider,
        role_arn: impl Into<String>,
    ) -> Result<Self, Error> {
        Self::with_config(sts_endpoint, source, role_arn, ClientConfig::default())
    }

    /// [`Self::new`] with a transport configuration (timeouts, retries).
    pub fn with_config(
        sts_endpoint: Url,
        source: SharedCredentialsProvider,
        role_arn: impl Into<String>,
        config: ClientConfig,
    ) -> Result<Self, Error> {
        Ok(Self {
            sts: StsClient::new(sts_endpoint, Some(source), config)?,
            request: AssumeRoleRequest {
                role_arn: role_arn.into(),
                role_session_name: default_session_name(),
                duration: DEFAULT_DURATION,
                policy: None,
                external_id: None,
            },
        })
    }

    /// The session name shown in audit logs.
    pub fn session_name(mut self, name: impl Into<String>) -> Self {
        self.request.role_session_name = name.into();
        self
    }

    /// The session length (at least 900 s).
    pub fn duration(mut self, duration: Duration) -> Self {
        self.request.duration = duration;
        self
    }

    /// A policy restricting the session further.
    pub fn policy(mut self, policy: impl Into<String>) -> Self {
        self.request.policy = Some(policy.into());
        self
    }

    /// The external ID the role's trust policy requires.
    pub fn external_id(mut self, external_id: impl Into<String>) -> Self {
        self.request.external_id = Some(external_id.into());
        self
    }

    async fn fetch(&self) -> Result<Credentials, CredentialsError> {
        self.sts
            .assume_role(&self.request)
            .await
            .map_err(|e| CredentialsError::Sts(Box::new(e)))
    }
}

impl CredentialsProvider for RamRoleArnProvider {
    fn credentials(&self) -> CredentialsFuture<'_> {
        Box::pin(self.fetch())
    }
}
