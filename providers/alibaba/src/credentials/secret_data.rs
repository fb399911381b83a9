//! Credentials stored in a Kubernetes Secret, in the two layouts a `ProviderConfig` accepts:
//! separate keys (`accessKeyId`, `accessKeySecret`, optional `securityToken`), or one key holding
//! the JSON Crossplane's Alibaba provider uses (`{"access_key", "secret_key", "security_token"?}`).
//! Pure parsing; reading the Secret is the controller's job.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::{Credentials, CredentialsError};
use crate::secret::Secret;

/// The Secret key of the AccessKeyId in the separate-keys layout.
pub const KEY_ACCESS_KEY_ID: &str = "accessKeyId";
/// The Secret key of the AccessKeySecret in the separate-keys layout.
pub const KEY_ACCESS_KEY_SECRET: &str = "accessKeySecret";
/// The Secret key of the optional security token in the separate-keys layout.
pub const KEY_SECURITY_TOKEN: &str = "securityToken";

/// Credentials from a Secret's decoded `data` with separate keys.
pub fn from_secret_keys(data: &BTreeMap<String, Vec<u8>>) -> Result<Credentials, CredentialsError> {
    let text = |key: &'static str| -> Result<Option<String>, CredentialsError> {
        match data.get(key) {
            None => Ok(None),
            Some(bytes) => String::from_utf8(bytes.clone())
                .map(|s| Some(s.trim().to_owned()).filter(|s| !s.is_empty()))
                .map_err(|_| CredentialsError::Invalid {
                    reason: format!("Secret key `{key}` is not UTF-8"),
                }),
        }
    };
    let missing = |key: &str| CredentialsError::Invalid {
        reason: format!(
            "the Secret has no `{key}` key; expected `{KEY_ACCESS_KEY_ID}`, `{KEY_ACCESS_KEY_SECRET}` and optional `{KEY_SECURITY_TOKEN}`, or set `key` to an entry holding JSON credentials"
        ),
    };
    let id = text(KEY_ACCESS_KEY_ID)?.ok_or_else(|| missing(KEY_ACCESS_KEY_ID))?;
    let secret = text(KEY_ACCESS_KEY_SECRET)?.ok_or_else(|| missing(KEY_ACCESS_KEY_SECRET))?;
    let mut credentials = Credentials::new(id, Secret::new(secret));
    credentials.security_token = text(KEY_SECURITY_TOKEN)?.map(Secret::new);
    credentials.validate()?;
    Ok(credentials)
}

#[derive(Deserialize)]
struct JsonCredentials {
    access_key: String,
    secret_key: Secret,
    #[serde(default)]
    security_token: Option<Secret>,
}

/// Credentials from one Secret entry holding `{"access_key", "secret_key", "security_token"?}`.
/// Errors never quote the entry.
pub fn from_json_entry(key: &str, bytes: &[u8]) -> Result<Credentials, CredentialsError> {
    let parsed: JsonCredentials =
        serde_json::from_slice(bytes).map_err(|e| CredentialsError::Invalid {
            reason: format!(
                "Secret key `{key}` is not JSON credentials {{\"access_key\", \"secret_key\", \"security_token\"?}} ({:?} error at line {} column {})",
                e.classify(),
                e.line(),
                e.column()
            ),
        })?;
    let mut credentials = Credentials::new(parsed.access_key.trim(), parsed.secret_key);
    credentials.security_token = parsed.security_token.filter(|t| !t.is_empty());
    credentials.validate()?;
    Ok(credentials)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(pairs: &[(&str, &str)]) -> BTreeMap<String, Vec<u8>> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.as_bytes().to_vec()))
            .collect()
    }

    #[test]
    fn separate_keys() {
        let c = from_secret_keys(&data(&[
            ("accessKeyId", "AK\n"),
            ("accessKeySecret", "SK"),
            ("securityToken", ""),
        ]))
        .unwrap();
        assert_eq!(c.access_key_id, "AK");
        assert_eq!(c.access_key_secret.expose(), "SK");
        assert!(c.security_token.is_none());
        let err = from_secret_keys(&data(&[("accessKeyId", "AK")])).unwrap_err();
        assert!(
            err.to_string().contains("no `accessKeySecret` key"),
            "{err}"
        );
    }

    #[test]
    fn crossplane_json_entry() {
        let c = from_json_entry(
            "credentials",
            br#"{"access_key":"AK","secret_key":"SK","security_token":"TOK"}"#,
        )
        .unwrap();
        assert_eq!(c.security_token.unwrap().expose(), "TOK");
        let err = from_json_entry("credentials", br#"{"access_key":"AK","secret_key":7}"#)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`credentials` is not JSON credentials"),
            "{err}"
        );
        let err = from_json_entry(
            "credentials",
            br#"{"access_key":"AK","secret_key":"super-secret""#,
        )
        .unwrap_err()
        .to_string();
        assert!(!err.contains("super-secret"), "{err}");
    }
}
