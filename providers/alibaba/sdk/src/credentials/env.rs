//! [`EnvProvider`]: credentials from `ALIBABA_CLOUD_ACCESS_KEY_ID`,
//! `ALIBABA_CLOUD_ACCESS_KEY_SECRET` and optional `ALIBABA_CLOUD_SECURITY_TOKEN`, read on every
//! call so that a rotated token is picked up.

use std::fmt;
use std::sync::Arc;

use crate::error::CredentialsError;
use crate::secret::Secret;
use crate::signing_credentials::{Credentials, CredentialsFuture, CredentialsProvider};

/// The AccessKeyId variable.
pub const ENV_ACCESS_KEY_ID: &str = "ALIBABA_CLOUD_ACCESS_KEY_ID";
/// The AccessKeySecret variable.
pub const ENV_ACCESS_KEY_SECRET: &str = "ALIBABA_CLOUD_ACCESS_KEY_SECRET";
/// The optional STS security token variable.
pub const ENV_SECURITY_TOKEN: &str = "ALIBABA_CLOUD_SECURITY_TOKEN";
/// The RAM role to assume (RRSA and RAM role ARN sources).
pub const ENV_ROLE_ARN: &str = "ALIBABA_CLOUD_ROLE_ARN";
/// The OIDC provider of an RRSA setup.
pub const ENV_OIDC_PROVIDER_ARN: &str = "ALIBABA_CLOUD_OIDC_PROVIDER_ARN";
/// The projected service account token of an RRSA setup.
pub const ENV_OIDC_TOKEN_FILE: &str = "ALIBABA_CLOUD_OIDC_TOKEN_FILE";
/// An optional role session name.
pub const ENV_ROLE_SESSION_NAME: &str = "ALIBABA_CLOUD_ROLE_SESSION_NAME";
/// The STS endpoint (host or URL) for the sources that call STS.
pub const ENV_STS_ENDPOINT: &str = "ALIBABA_CLOUD_STS_ENDPOINT";
/// The region of the STS endpoint, when no endpoint is given.
pub const ENV_STS_REGION: &str = "ALIBABA_CLOUD_STS_REGION";
/// `true` selects the VPC-internal STS endpoint `sts-vpc.<region>.aliyuncs.com`.
pub const ENV_VPC_ENDPOINT_ENABLED: &str = "ALIBABA_CLOUD_VPC_ENDPOINT_ENABLED";
/// The profile of the CLI configuration file to use (default: its `current` profile).
pub const ENV_PROFILE: &str = "ALIBABA_CLOUD_PROFILE";
/// The CLI configuration file (default `~/.aliyun/config.json`).
pub const ENV_CONFIG_FILE: &str = "ALIBABA_CLOUD_CONFIG_FILE";
/// The ECS instance RAM role's name (default: the role the metadata service lists).
pub const ENV_ECS_METADATA: &str = "ALIBABA_CLOUD_ECS_METADATA";
/// `true` forbids the ECS instance RAM role (no metadata service calls).
pub const ENV_ECS_METADATA_DISABLED: &str = "ALIBABA_CLOUD_ECS_METADATA_DISABLED";

/// Where environment variables are read: the process environment, or a function (tests pass
/// their own, since the process environment is shared by every test thread).
#[derive(Clone)]
pub struct EnvLookup(Arc<LookupFn>);

type LookupFn = dyn Fn(&str) -> Option<String> + Send + Sync;

impl EnvLookup {
    /// The process environment.
    pub fn process() -> Self {
        Self::from_fn(|name| std::env::var(name).ok())
    }

    /// Variables from `lookup`.
    pub fn from_fn(lookup: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> Self {
        Self(Arc::new(lookup))
    }

    /// Exactly these variables, nothing from the process.
    pub fn from_pairs<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        let map: std::collections::HashMap<String, String> = pairs
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        Self::from_fn(move |name| map.get(name).cloned())
    }

    /// A variable's value; unset and blank are the same.
    pub fn get(&self, name: &str) -> Option<String> {
        (self.0)(name).filter(|v| !v.trim().is_empty())
    }

    /// Whether a variable is `true` (any case).
    pub fn is_true(&self, name: &str) -> bool {
        self.get(name)
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
    }
}

impl Default for EnvLookup {
    fn default() -> Self {
        Self::process()
    }
}

impl fmt::Debug for EnvLookup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EnvLookup")
    }
}

/// Credentials from the process environment (or any lookup function, for tests).
#[derive(Clone)]
pub struct EnvProvider {
    lookup: EnvLookup,
}

impl fmt::Debug for EnvProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EnvProvider")
    }
}

impl Default for EnvProvider {
    fn default() -> Self {
        Self::new()
    }
}

impl EnvProvider {
    /// Reads the process environment.
    pub fn new() -> Self {
        Self::with_env(EnvLookup::process())
    }

    /// Reads variables through `lookup` instead of the process environment.
    pub fn with_lookup(lookup: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> Self {
        Self::with_env(EnvLookup::from_fn(lookup))
    }

    /// Reads variables through `env`.
    pub fn with_env(env: EnvLookup) -> Self {
        Self { lookup: env }
    }

    /// Whether the environment names an AccessKey at all (either variable set).
    pub fn is_configured(&self) -> bool {
        self.var(ENV_ACCESS_KEY_ID).is_some() || self.var(ENV_ACCESS_KEY_SECRET).is_some()
    }

    fn var(&self, name: &str) -> Option<String> {
        self.lookup.get(name)
    }

    /// The credentials the environment holds now.
    pub fn read(&self) -> Result<Credentials, CredentialsError> {
        let id = self
            .var(ENV_ACCESS_KEY_ID)
            .ok_or(CredentialsError::MissingEnv {
                variable: ENV_ACCESS_KEY_ID,
                hint: "set it to the AccessKeyId of a RAM user",
            })?;
        let secret = self
            .var(ENV_ACCESS_KEY_SECRET)
            .ok_or(CredentialsError::MissingEnv {
                variable: ENV_ACCESS_KEY_SECRET,
                hint: "set it to the AccessKeySecret that belongs to the AccessKeyId",
            })?;
        let mut credentials = Credentials::new(id.trim(), Secret::new(secret.trim()));
        credentials.security_token = self.var(ENV_SECURITY_TOKEN).map(Secret::new);
        Ok(credentials)
    }
}

impl CredentialsProvider for EnvProvider {
    fn credentials(&self) -> CredentialsFuture<'_> {
        let result = self.read();
        Box::pin(async move { result })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn env(pairs: &[(&str, &str)]) -> EnvProvider {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        EnvProvider::with_lookup(move |name| map.get(name).cloned())
    }

    #[test]
    fn reads_keys_and_optional_token() {
        let c = env(&[(ENV_ACCESS_KEY_ID, "AK"), (ENV_ACCESS_KEY_SECRET, "SK")])
            .read()
            .unwrap();
        assert_eq!(c.access_key_id, "AK");
        assert_eq!(c.access_key_secret.expose(), "SK");
        assert!(c.security_token.is_none());
        let c = env(&[
            (ENV_ACCESS_KEY_ID, "AK"),
            (ENV_ACCESS_KEY_SECRET, "SK"),
            (ENV_SECURITY_TOKEN, "TOK"),
        ])
        .read()
        .unwrap();
        assert_eq!(c.security_token.unwrap().expose(), "TOK");
    }

    #[test]
    fn missing_variables_are_named() {
        let err = env(&[(ENV_ACCESS_KEY_ID, "AK")]).read().unwrap_err();
        assert!(err.to_string().contains(ENV_ACCESS_KEY_SECRET), "{err}");
        let err = env(&[(ENV_ACCESS_KEY_ID, " "), (ENV_ACCESS_KEY_SECRET, "SK")])
            .read()
            .unwrap_err();
        assert!(err.to_string().contains(ENV_ACCESS_KEY_ID), "{err}");
    }
}
