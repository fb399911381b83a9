//! STS (Security Token Service, API version `2015-04-01`): `AssumeRole` (V1-signed with source
//! credentials) and `AssumeRoleWithOIDC` (unsigned; the OIDC token is the proof) issue the
//! temporary credentials behind the RAM role and RRSA credential sources; `GetCallerIdentity`
//! says which account a set of credentials acts in.
//!
//! Responses carry secrets, so decoding errors never quote the body.

use std::time::Duration;

use serde::Deserialize;
use url::Url;

use crate::error::{CredentialsError, Error};
use crate::rpc::{
    ClientConfig, HttpMethod, Params, RpcClient, SignatureVersion, decode_sensitive_json,
};
use crate::secret::Secret;
use crate::signing_credentials::{Credentials, SharedCredentialsProvider, parse_expiration};

/// The STS API version.
pub const STS_API_VERSION: &str = "2015-04-01";
/// The shortest session STS issues.
pub const MIN_DURATION: Duration = Duration::from_secs(900);
/// The session length asked for by default.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(3600);

/// `AssumeRole` parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssumeRoleRequest {
    /// `acs:ram::<account>:role/<name>`.
    pub role_arn: String,
    /// Shows up in audit logs.
    pub role_session_name: String,
    /// At least 900 s.
    pub duration: Duration,
    /// A policy further restricting the session.
    pub policy: Option<String>,
    /// The external ID the role's trust policy requires.
    pub external_id: Option<String>,
}

/// `AssumeRoleWithOIDC` parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssumeRoleWithOidcRequest {
    /// `acs:ram::<account>:role/<name>`.
    pub role_arn: String,
    /// `acs:ram::<account>:oidc-provider/<name>`.
    pub oidc_provider_arn: String,
    /// The OIDC token (a service account token on ACK).
    pub oidc_token: Secret,
    /// Shows up in audit logs.
    pub role_session_name: String,
    /// At least 900 s.
    pub duration: Duration,
    /// A policy further restricting the session.
    pub policy: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct AssumeRoleResponse {
    credentials: AssumedRoleCredentials,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct AssumedRoleCredentials {
    access_key_id: String,
    access_key_secret: Secret,
    security_token: Secret,
    expiration: String,
}

impl AssumedRoleCredentials {
    fn into_credentials(self) -> Result<Credentials, CredentialsError> {
        let credentials = Credentials {
            access_key_id: self.access_key_id,
            access_key_secret: self.access_key_secret,
            security_token: Some(self.security_token),
            expiration: Some(parse_expiration(&self.expiration)?),
        };
        credentials.validate()?;
        Ok(credentials)
    }
}

/// Who a set of credentials is (`GetCallerIdentity`; no RAM permission is needed).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CallerIdentity {
    /// The Alibaba Cloud account the caller belongs to: where its resources live.
    pub account_id: String,
    /// `Account`, `RAMUser` or `AssumedRoleUser`.
    pub identity_type: String,
    /// `acs:ram::<account>:user/<name>`, `…:assumed-role/<role>/<session>`, ….
    pub arn: String,
}

/// An STS client; signed when built with source credentials.
#[derive(Debug, Clone)]
pub struct StsClient {
    rpc: RpcClient,
}

impl StsClient {
    /// A client of the STS at `endpoint` (see [`crate::endpoint::sts_endpoint`]); requests are
    /// V1-signed POSTs with `credentials`, or unsigned without.
    pub fn new(
        endpoint: Url,
        credentials: Option<SharedCredentialsProvider>,
        config: ClientConfig,
    ) -> Result<Self, Error> {
        let config = ClientConfig {
            signature: SignatureVersion::V1,
            method: HttpMethod::Post,
            ..config
        };
        Ok(Self {
            rpc: RpcClient::new(endpoint, STS_API_VERSION, credentials, config)?,
        })
    }

    /// `AssumeRole`: temporary credentials of a RAM role.
    pub async fn assume_role(&self, request: &AssumeRoleRequest) -> Result<Credentials, Error> {
        if self.rpc.credentials().is_none() {
            return Err(Error::InvalidRequest {
                action: "AssumeRole".into(),
                reason: "AssumeRole must be signed: build the STS client with source credentials"
                    .into(),
            });
        }
        check_duration("AssumeRole", request.duration)?;
        let mut p = Params::new();
        p.set("RoleArn", &request.role_arn)
            .set("RoleSessionName", &request.role_session_name)
            .set("DurationSeconds", request.duration.as_secs())
            .opt("Policy", request.policy.as_ref())
            .opt("ExternalId", request.external_id.as_ref());
        self.credentials_call("AssumeRole", &p).await
    }

    /// `AssumeRoleWithOIDC`: temporary credentials of a RAM role for an OIDC identity.
    pub async fn assume_role_with_oidc(
        &self,
        request: &AssumeRoleWithOidcRequest,
    ) -> Result<Credentials, Error> {
        check_duration("AssumeRoleWithOIDC", request.duration)?;
        let mut p = Params::new();
        p.set("RoleArn", &request.role_arn)
            .set("OIDCProviderArn", &request.oidc_provider_arn)
            .set("OIDCToken", request.oidc_token.expose())
            .set("RoleSessionName", &request.role_session_name)
            .set("DurationSeconds", request.duration.as_secs())
            .opt("Policy", request.policy.as_ref());
        self.credentials_call("AssumeRoleWithOIDC", &p).await
    }

    /// `GetCallerIdentity`: the account and principal of the client's credentials.
    pub async fn get_caller_identity(&self) -> Result<CallerIdentity, Error> {
        if self.rpc.credentials().is_none() {
            return Err(Error::InvalidRequest {
                action: "GetCallerIdentity".into(),
                reason: "GetCallerIdentity must be signed: build the STS client with credentials"
                    .into(),
            });
        }
        self.rpc
            .call_json("GetCallerIdentity", &Params::new())
            .await
    }

    async fn credentials_call(&self, action: &str, params: &Params) -> Result<Credentials, Error> {
        let raw = self.rpc.call_raw(action, params).await?;
        let response: AssumeRoleResponse = decode_sensitive_json(action, &raw)?;
        Ok(response.credentials.into_credentials()?)
    }
}

fn check_duration(action: &str, duration: Duration) -> Result<(), Error> {
    if duration < MIN_DURATION {
        return Err(Error::InvalidRequest {
            action: action.to_owned(),
            reason: format!(
                "DurationSeconds {} is below the minimum of {}",
                duration.as_secs(),
                MIN_DURATION.as_secs()
            ),
        });
    }
    Ok(())
}

/// A role session name from a prefix and the current time, within STS's 2–64 character limit.
pub fn default_session_name() -> String {
    format!("ferroplane-{}", jiff::Timestamp::now().as_second())
}
