//! [`ImdsProvider`]: the ECS instance RAM role, from the instance metadata service.
//!
//! Hardened mode (IMDSv2): `PUT /latest/api/token` with `X-aliyun-ecs-metadata-token-ttl-seconds`
//! returns a token sent as `X-aliyun-ecs-metadata-token` on every read. The role name comes from
//! `GET /latest/meta-data/ram/security-credentials/` unless configured; the credentials from
//! `GET /latest/meta-data/ram/security-credentials/<role>`.

use std::time::Duration;

use serde::Deserialize;
use url::Url;

use crate::error::{CredentialsError, error_chain};
use crate::rpc::USER_AGENT;
use crate::secret::Secret;
use crate::signing_credentials::{
    Credentials, CredentialsFuture, CredentialsProvider, parse_expiration,
};

/// Where the metadata service listens on every ECS instance.
pub const DEFAULT_METADATA_ENDPOINT: &str = "http://100.100.100.200";
const TOKEN_PATH: &str = "latest/api/token";
const CREDENTIALS_PATH: &str = "latest/meta-data/ram/security-credentials/";
const TOKEN_TTL_HEADER: &str = "X-aliyun-ecs-metadata-token-ttl-seconds";
const TOKEN_HEADER: &str = "X-aliyun-ecs-metadata-token";

/// Fetches the instance RAM role's credentials on every call; wrap it in a
/// [`super::CachingProvider`] (the ECS client does).
#[derive(Debug, Clone)]
pub struct ImdsProvider {
    http: reqwest::Client,
    endpoint: Url,
    role_name: Option<String>,
    token_ttl: Duration,
    allow_imds_v1: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct MetadataCredentials {
    code: Option<String>,
    access_key_id: String,
    access_key_secret: Secret,
    security_token: Secret,
    expiration: String,
}

impl ImdsProvider {
    /// A provider for the metadata service at `endpoint` (normally
    /// [`DEFAULT_METADATA_ENDPOINT`]), discovering the role name.
    pub fn new(endpoint: Url) -> Result<Self, CredentialsError> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(1))
            .timeout(Duration::from_secs(5))
            .user_agent(USER_AGENT)
            .build()
            .map_err(|e| CredentialsError::Metadata {
                detail: format!("cannot build the HTTP client: {}", error_chain(&e)),
            })?;
        Ok(Self {
            http,
            endpoint,
            role_name: None,
            token_ttl: Duration::from_secs(21600),
            allow_imds_v1: false,
        })
    }

    /// Uses this role instead of asking the metadata service which role is attached.
    pub fn role_name(mut self, role: impl Into<String>) -> Self {
        self.role_name = Some(role.into());
        self
    }

    /// The metadata token's lifetime (1 s to 6 h).
    pub fn token_ttl(mut self, ttl: Duration) -> Self {
        self.token_ttl = ttl.clamp(Duration::from_secs(1), Duration::from_secs(21600));
        self
    }

    /// Falls back to token-less reads when the token cannot be obtained (not hardened mode).
    pub fn allow_imds_v1(mut self, allow: bool) -> Self {
        self.allow_imds_v1 = allow;
        self
    }

    fn url(&self, path: &str) -> Result<Url, CredentialsError> {
        self.endpoint
            .join(path)
            .map_err(|e| CredentialsError::Metadata {
                detail: format!("invalid metadata URL for `{path}`: {e}"),
            })
    }

    async fn metadata_token(&self) -> Result<Option<Secret>, CredentialsError> {
        let result = self
            .http
            .put(self.url(TOKEN_PATH)?)
            .header(TOKEN_TTL_HEADER, self.token_ttl.as_secs().to_string())
            .send()
            .await;
        let failure = match result {
            Ok(response) if response.status().is_success() => {
                let token = response.text().await.map_err(|e| self.transport(e))?;
                return Ok(Some(Secret::new(token.trim())));
            }
            Ok(response) => format!("the token request returned HTTP {}", response.status()),
            Err(e) => error_chain(&e.without_url()),
        };
        if self.allow_imds_v1 {
            tracing::warn!(failure, "no IMDSv2 metadata token; reading without one");
            return Ok(None);
        }
        Err(CredentialsError::Metadata {
            detail: format!(
                "cannot get a metadata token from {}: {failure}; is this an ECS instance with the metadata service reachable?",
                self.endpoint
            ),
        })
    }

    async fn get(&self, path: &str, token: Option<&Secret>) -> Result<String, CredentialsError> {
        let mut request = self.http.get(self.url(path)?);
        if let Some(token) = token {
            request = request.header(TOKEN_HEADER, token.expose());
        }
        let response = request.send().await.map_err(|e| self.transport(e))?;
        let status = response.status();
        if !status.is_success() {
            return Err(CredentialsError::Metadata {
                detail: format!(
                    "GET /{path} returned HTTP {status}; check that a RAM role is attached to the instance"
                ),
            });
        }
        response.text().await.map_err(|e| self.transport(e))
    }

    fn transport(&self, error: reqwest::Error) -> CredentialsError {
        CredentialsError::Metadata {
            detail: format!(
                "cannot reach {}: {}",
                self.endpoint,
                error_chain(&error.without_url())
            ),
        }
    }

    async fn fetch(&self) -> Result<Credentials, CredentialsError> {
        let token = self.metadata_token().await?;
        let role = match &self.role_name {
            Some(role) => role.clone(),
            None => {
                let listing = self.get(CREDENTIALS_PATH, token.as_ref()).await?;
                listing
                    .lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty())
                    .map(str::to_owned)
                    .ok_or_else(|| CredentialsError::Metadata {
                        detail: "no RAM role is attached to this instance".into(),
                    })?
            }
        };
        let body = self
            .get(&format!("{CREDENTIALS_PATH}{role}"), token.as_ref())
            .await?;
        // The body holds the secret: report only where decoding failed, never what it saw.
        let parsed: MetadataCredentials =
            serde_json::from_str(&body).map_err(|e| CredentialsError::Metadata {
                detail: format!(
                    "the credentials of role {role} are not the expected JSON ({:?} error at line {} column {})",
                    e.classify(),
                    e.line(),
                    e.column()
                ),
            })?;
        if let Some(code) = parsed.code.as_deref().filter(|c| *c != "Success") {
            return Err(CredentialsError::Metadata {
                detail: format!("the metadata service answered Code={code} for role {role}"),
            });
        }
        let credentials = Credentials {
            access_key_id: parsed.access_key_id,
            access_key_secret: parsed.access_key_secret,
            security_token: Some(parsed.security_token),
            expiration: Some(parse_expiration(&parsed.expiration)?),
        };
        credentials.validate()?;
        Ok(credentials)
    }
}

impl CredentialsProvider for ImdsProvider {
    fn credentials(&self) -> CredentialsFuture<'_> {
        Box::pin(self.fetch())
    }
}
