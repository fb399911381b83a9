//! [`ProfileProvider`]: credentials from a profile of the Alibaba Cloud CLI configuration file,
//! as the official credentials libraries read it: the file is `ALIBABA_CLOUD_CONFIG_FILE` or
//! `~/.aliyun/config.json`, the profile `ALIBABA_CLOUD_PROFILE` or the file's `current` one.
//! Modes `AK`, `StsToken` and `RamRoleArn` (AssumeRole on top of the profile's AccessKey) are
//! supported; others are refused by name.
//!
//! [`EnvironmentProvider`] is the `Environment` source: the `ALIBABA_CLOUD_ACCESS_KEY_*`
//! variables when set, else the profile.
//!
//! The file holds secrets: parse errors report only a position, never the content.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use url::Url;

use super::env::{ENV_CONFIG_FILE, ENV_PROFILE, EnvLookup, EnvProvider};
use super::ram_role::RamRoleArnProvider;
use super::sts_endpoint::StsEndpointChoice;
use crate::error::CredentialsError;
use crate::rpc::ClientConfig;
use crate::secret::Secret;
use crate::signing_credentials::{Credentials, CredentialsFuture, CredentialsProvider};

/// The configuration file below the home directory.
pub const DEFAULT_CONFIG_FILE: &str = ".aliyun/config.json";

#[derive(Deserialize)]
struct Configuration {
    #[serde(default)]
    current: String,
    #[serde(default)]
    profiles: Vec<Profile>,
}

#[derive(Deserialize)]
struct Profile {
    #[serde(default)]
    name: String,
    #[serde(default)]
    mode: String,
    #[serde(default)]
    access_key_id: String,
    #[serde(default)]
    access_key_secret: Option<Secret>,
    #[serde(default)]
    sts_token: Option<Secret>,
    #[serde(default)]
    ram_role_arn: String,
    #[serde(default)]
    ram_session_name: String,
    #[serde(default)]
    expired_seconds: u64,
    #[serde(default)]
    sts_region: String,
    #[serde(default)]
    enable_vpc: bool,
    #[serde(default)]
    external_id: String,
}

/// Reads the profile on every call (wrap it in a [`super::CachingProvider`]); a `RamRoleArn`
/// profile calls STS each time.
#[derive(Debug, Clone)]
pub struct ProfileProvider {
    env: EnvLookup,
    sts: Option<Url>,
    config: ClientConfig,
}

impl ProfileProvider {
    /// A provider reading file and profile names through `env`. `RamRoleArn` profiles without
    /// `sts_region` use the STS at `sts` (required for them).
    pub fn new(env: EnvLookup, sts: Option<Url>, config: ClientConfig) -> Self {
        Self { env, sts, config }
    }

    /// The configuration file, if its location can be told.
    pub fn path(&self) -> Option<PathBuf> {
        if let Some(file) = self.env.get(ENV_CONFIG_FILE) {
            return Some(PathBuf::from(file));
        }
        self.env
            .get("HOME")
            .map(|home| PathBuf::from(home).join(DEFAULT_CONFIG_FILE))
    }

    /// Whether a profile is configured at all: a profile is named, or the file exists.
    pub async fn is_configured(&self) -> bool {
        if self.env.get(ENV_PROFILE).is_some() {
            return true;
        }
        match self.path() {
            Some(path) => tokio::fs::metadata(&path).await.is_ok_and(|m| m.is_file()),
            None => false,
        }
    }

    async fn fetch(&self) -> Result<Credentials, CredentialsError> {
        let path = self.path().ok_or(CredentialsError::MissingEnv {
            variable: ENV_CONFIG_FILE,
            hint: "no HOME either, so ~/.aliyun/config.json cannot be found",
        })?;
        let failed = |detail: String| CredentialsError::Profile {
            path: path.clone(),
            detail,
        };
        let text = tokio::fs::read(&path)
            .await
            .map_err(|e| failed(format!("cannot read it: {e}")))?;
        let configuration: Configuration = serde_json::from_slice(&text).map_err(|e| {
            failed(format!(
                "it is not the CLI's JSON ({:?} error at line {} column {})",
                e.classify(),
                e.line(),
                e.column()
            ))
        })?;
        let name = self
            .env
            .get(ENV_PROFILE)
            .unwrap_or_else(|| configuration.current.clone());
        if name.is_empty() {
            return Err(failed(format!(
                "no profile is selected: set {ENV_PROFILE} or the file's \"current\""
            )));
        }
        let profile = configuration
            .profiles
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| {
                let known: Vec<&str> = configuration
                    .profiles
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect();
                failed(format!(
                    "it has no profile {name} (profiles: {})",
                    known.join(", ")
                ))
            })?;
        let access_key = || -> Result<Credentials, CredentialsError> {
            let secret = profile
                .access_key_secret
                .as_ref()
                .filter(|s| !s.expose().trim().is_empty());
            match (profile.access_key_id.trim(), secret) {
                ("", _) | (_, None) => Err(failed(format!(
                    "profile {name} (mode {}) needs access_key_id and access_key_secret",
                    profile.mode
                ))),
                (id, Some(secret)) => Ok(Credentials::new(id, secret.expose().trim())),
            }
        };
        match profile.mode.as_str() {
            "AK" => access_key(),
            "StsToken" => {
                let token = profile
                    .sts_token
                    .as_ref()
                    .filter(|t| !t.expose().trim().is_empty())
                    .ok_or_else(|| {
                        failed(format!("profile {name} (mode StsToken) needs sts_token"))
                    })?;
                Ok(access_key()?.with_security_token(token.expose().trim()))
            }
            "RamRoleArn" => self.assume_role(profile, access_key()?, &failed).await,
            other => Err(failed(format!(
                "profile {name} has mode {other}; ferroplane reads the modes AK, StsToken and RamRoleArn"
            ))),
        }
    }

    async fn assume_role(
        &self,
        profile: &Profile,
        base: Credentials,
        failed: &(dyn Fn(String) -> CredentialsError + Sync),
    ) -> Result<Credentials, CredentialsError> {
        if profile.ram_role_arn.trim().is_empty() {
            return Err(failed(format!(
                "profile {} (mode RamRoleArn) needs ram_role_arn",
                profile.name
            )));
        }
        let sts = if profile.sts_region.is_empty() {
            self.sts.clone().ok_or_else(|| {
                failed(format!(
                    "profile {} (mode RamRoleArn) has no sts_region and no STS endpoint is configured",
                    profile.name
                ))
            })?
        } else {
            StsEndpointChoice {
                explicit: None,
                region: Some(&profile.sts_region),
                vpc: profile.enable_vpc,
            }
            .resolve(&self.env)
            .map_err(|e| failed(e.to_string()))?
        };
        let mut provider = RamRoleArnProvider::with_config(
            sts,
            Arc::new(base),
            profile.ram_role_arn.trim(),
            self.config.clone(),
        )
        .map_err(|e| CredentialsError::Sts(Box::new(e)))?;
        if !profile.ram_session_name.is_empty() {
            provider = provider.session_name(&profile.ram_session_name);
        }
        if profile.expired_seconds > 0 {
            provider = provider.duration(Duration::from_secs(profile.expired_seconds));
        }
        if !profile.external_id.is_empty() {
            provider = provider.external_id(&profile.external_id);
        }
        provider.credentials().await
    }
}

impl CredentialsProvider for ProfileProvider {
    fn credentials(&self) -> CredentialsFuture<'_> {
        Box::pin(self.fetch())
    }
}

/// The `Environment` source: `ALIBABA_CLOUD_ACCESS_KEY_ID`/`_SECRET` (and
/// `ALIBABA_CLOUD_SECURITY_TOKEN`) when either is set, else the CLI profile.
#[derive(Debug, Clone)]
pub struct EnvironmentProvider {
    variables: EnvProvider,
    profile: ProfileProvider,
}

impl EnvironmentProvider {
    /// Reads through `env`; `sts` serves `RamRoleArn` profiles.
    pub fn new(env: EnvLookup, sts: Option<Url>, config: ClientConfig) -> Self {
        Self {
            variables: EnvProvider::with_env(env.clone()),
            profile: ProfileProvider::new(env, sts, config),
        }
    }

    async fn fetch(&self) -> Result<Credentials, CredentialsError> {
        if !self.variables.is_configured() && self.profile.is_configured().await {
            return self.profile.credentials().await;
        }
        self.variables.read()
    }
}

impl CredentialsProvider for EnvironmentProvider {
    fn credentials(&self) -> CredentialsFuture<'_> {
        Box::pin(self.fetch())
    }
}
