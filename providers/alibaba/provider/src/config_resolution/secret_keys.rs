//! Reading an AccessKey from a credentials Secret's data, in either layout a ProviderConfig
//! accepts: separate `accessKeyId` / `accessKeySecret` / `securityToken` keys, or one key holding
//! JSON `{"access_key", "secret_key", "security_token"?}` (Crossplane's Alibaba provider format).
//!
//! Pure: the caller fetched the Secret. Errors name the Secret and key, never a value; JSON
//! errors report only the position, because a parser's message can quote the input.

use std::collections::BTreeMap;

use alibaba_sdk::Secret;
use alibaba_sdk::credentials::Credentials;
use k8s_openapi::ByteString;
use serde::Deserialize;

/// Key of the AccessKeyId in the separate-keys layout.
pub const ACCESS_KEY_ID: &str = "accessKeyId";
/// Key of the AccessKeySecret in the separate-keys layout.
pub const ACCESS_KEY_SECRET: &str = "accessKeySecret";
/// Key of the optional STS token in the separate-keys layout.
pub const SECURITY_TOKEN: &str = "securityToken";

/// Why a Secret holds no usable credentials.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretKeysError {
    /// A required key is absent.
    #[error("Secret {secret} has no key {key}; {hint}")]
    MissingKey {
        secret: String,
        key: String,
        hint: &'static str,
    },
    /// A value is empty.
    #[error("key {key} of Secret {secret} is empty; put the {what} there")]
    Empty {
        secret: String,
        key: String,
        what: &'static str,
    },
    /// A value is not UTF-8.
    #[error("key {key} of Secret {secret} is not UTF-8 text")]
    NotUtf8 { secret: String, key: String },
    /// The JSON layout does not parse.
    #[error(
        "key {key} of Secret {secret} is not valid credentials JSON ({detail}); expected {{\"access_key\": \"...\", \"secret_key\": \"...\", \"security_token\": \"...\" (optional)}}"
    )]
    MalformedJson {
        secret: String,
        key: String,
        detail: String,
    },
}

#[derive(Deserialize)]
struct JsonCredentials {
    access_key: Option<Secret>,
    secret_key: Option<Secret>,
    #[serde(default)]
    security_token: Option<Secret>,
}

/// The credentials in a Secret's `data`. With `key` the JSON layout is read from that key,
/// without it the separate keys.
pub fn credentials_from_secret(
    secret: &str,
    data: &BTreeMap<String, ByteString>,
    key: Option<&str>,
) -> Result<Credentials, SecretKeysError> {
    match key {
        Some(key) => from_json_key(secret, data, key),
        None => from_separate_keys(secret, data),
    }
}

fn text(
    secret: &str,
    data: &BTreeMap<String, ByteString>,
    key: &str,
) -> Result<Option<String>, SecretKeysError> {
    data.get(key)
        .map(|bytes| {
            String::from_utf8(bytes.0.clone()).map_err(|_| SecretKeysError::NotUtf8 {
                secret: secret.to_owned(),
                key: key.to_owned(),
            })
        })
        .transpose()
}

fn required(
    secret: &str,
    data: &BTreeMap<String, ByteString>,
    key: &str,
    what: &'static str,
) -> Result<String, SecretKeysError> {
    let value = text(secret, data, key)?.ok_or_else(|| SecretKeysError::MissingKey {
        secret: secret.to_owned(),
        key: key.to_owned(),
        hint: "without spec.credentials.secretRef.key the Secret needs the keys accessKeyId and accessKeySecret (and optionally securityToken)",
    })?;
    let value = value.trim().to_owned();
    if value.is_empty() {
        return Err(SecretKeysError::Empty {
            secret: secret.to_owned(),
            key: key.to_owned(),
            what,
        });
    }
    Ok(value)
}

fn from_separate_keys(
    secret: &str,
    data: &BTreeMap<String, ByteString>,
) -> Result<Credentials, SecretKeysError> {
    let id = required(secret, data, ACCESS_KEY_ID, "AccessKeyId")?;
    let key_secret = required(secret, data, ACCESS_KEY_SECRET, "AccessKeySecret")?;
    let mut credentials = Credentials::new(id, key_secret);
    if let Some(token) = text(secret, data, SECURITY_TOKEN)?.map(|t| t.trim().to_owned())
        && !token.is_empty()
    {
        credentials = credentials.with_security_token(token);
    }
    Ok(credentials)
}

fn from_json_key(
    secret: &str,
    data: &BTreeMap<String, ByteString>,
    key: &str,
) -> Result<Credentials, SecretKeysError> {
    let raw = text(secret, data, key)?.ok_or_else(|| SecretKeysError::MissingKey {
        secret: secret.to_owned(),
        key: key.to_owned(),
        hint: "spec.credentials.secretRef.key names the entry that holds the credentials JSON",
    })?;
    let malformed = |detail: String| SecretKeysError::MalformedJson {
        secret: secret.to_owned(),
        key: key.to_owned(),
        detail,
    };
    let parsed: JsonCredentials = serde_json::from_str(&raw).map_err(|e| {
        malformed(format!(
            "{:?} error at line {} column {}",
            e.classify(),
            e.line(),
            e.column()
        ))
    })?;
    let access_key = parsed
        .access_key
        .filter(|s| !s.expose().trim().is_empty())
        .ok_or_else(|| malformed("\"access_key\" is missing or empty".to_owned()))?;
    let secret_key = parsed
        .secret_key
        .filter(|s| !s.expose().trim().is_empty())
        .ok_or_else(|| malformed("\"secret_key\" is missing or empty".to_owned()))?;
    let mut credentials = Credentials::new(access_key.expose().trim(), secret_key.expose().trim());
    if let Some(token) = parsed
        .security_token
        .filter(|t| !t.expose().trim().is_empty())
    {
        credentials = credentials.with_security_token(token.expose().trim());
    }
    Ok(credentials)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(entries: &[(&str, &str)]) -> BTreeMap<String, ByteString> {
        entries
            .iter()
            .map(|(k, v)| ((*k).to_owned(), ByteString(v.as_bytes().to_vec())))
            .collect()
    }

    #[test]
    fn separate_keys_with_and_without_token() {
        let c = credentials_from_secret(
            "creds",
            &data(&[
                ("accessKeyId", "AK1"),
                ("accessKeySecret", "sk-very-secret\n"),
            ]),
            None,
        )
        .unwrap();
        assert_eq!(c.access_key_id, "AK1");
        assert_eq!(c.access_key_secret.expose(), "sk-very-secret");
        assert!(c.security_token.is_none());
        let c = credentials_from_secret(
            "creds",
            &data(&[
                ("accessKeyId", "AK1"),
                ("accessKeySecret", "sk"),
                ("securityToken", "tok"),
            ]),
            None,
        )
        .unwrap();
        assert_eq!(c.security_token.unwrap().expose(), "tok");
    }

    #[test]
    fn crossplane_json_layout() {
        let json = r#"{"access_key":"AK2","secret_key":"sk-json-secret","security_token":"t2","region":"cn-beijing"}"#;
        let c = credentials_from_secret(
            "creds",
            &data(&[("credentials", json)]),
            Some("credentials"),
        )
        .unwrap();
        assert_eq!(c.access_key_id, "AK2");
        assert_eq!(c.access_key_secret.expose(), "sk-json-secret");
        assert_eq!(c.security_token.unwrap().expose(), "t2");
    }

    #[test]
    fn missing_and_empty_keys_are_named() {
        let err =
            credentials_from_secret("creds", &data(&[("accessKeyId", "AK")]), None).unwrap_err();
        assert!(
            err.to_string()
                .contains("Secret creds has no key accessKeySecret"),
            "{err}"
        );
        let err = credentials_from_secret(
            "creds",
            &data(&[("accessKeyId", " "), ("accessKeySecret", "x")]),
            None,
        )
        .unwrap_err();
        assert!(matches!(err, SecretKeysError::Empty { .. }));
        let err = credentials_from_secret("creds", &data(&[]), Some("credentials")).unwrap_err();
        assert!(err.to_string().contains("has no key credentials"), "{err}");
    }

    #[test]
    fn malformed_json_never_echoes_the_value() {
        let bad = r#"{"access_key":"AK","secret_key":"sk-leaky-value-123"#;
        let err = credentials_from_secret("creds", &data(&[("c", bad)]), Some("c")).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("not valid credentials JSON"), "{msg}");
        assert!(!msg.contains("sk-leaky-value-123"), "{msg}");
        let wrong_type = r#"{"access_key":"AK","secret_key":12345678}"#;
        let err =
            credentials_from_secret("creds", &data(&[("c", wrong_type)]), Some("c")).unwrap_err();
        assert!(!err.to_string().contains("12345678"), "{err}");
        let no_secret = r#"{"access_key":"AK"}"#;
        let err =
            credentials_from_secret("creds", &data(&[("c", no_secret)]), Some("c")).unwrap_err();
        assert!(err.to_string().contains("secret_key"), "{err}");
    }
}
