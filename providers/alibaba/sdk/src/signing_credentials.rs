//! [`Credentials`], the AccessKey a request is signed with, and [`CredentialsProvider`], the
//! trait of their sources.
//!
//! This sits below the signed transport ([`crate::rpc`]) and STS, which sign with credentials but
//! know no source; the sources themselves live in [`crate::credentials`], which is also the public
//! path of these types.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::error::CredentialsError;
use crate::secret::Secret;

/// An AccessKey pair, with a security token and an expiry for temporary (STS) credentials.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Credentials {
    /// The AccessKeyId (not secret: it names the key, like a user name).
    pub access_key_id: String,
    /// The AccessKeySecret.
    pub access_key_secret: Secret,
    /// The STS security token of temporary credentials.
    pub security_token: Option<Secret>,
    /// When temporary credentials stop working; `None` for long-lived keys.
    pub expiration: Option<jiff::Timestamp>,
}

impl Credentials {
    /// Long-lived AccessKey credentials.
    pub fn new(access_key_id: impl Into<String>, access_key_secret: impl Into<Secret>) -> Self {
        Self {
            access_key_id: access_key_id.into(),
            access_key_secret: access_key_secret.into(),
            security_token: None,
            expiration: None,
        }
    }

    /// Adds an STS security token.
    pub fn with_security_token(mut self, token: impl Into<Secret>) -> Self {
        self.security_token = Some(token.into());
        self
    }

    /// Adds an expiry.
    pub fn with_expiration(mut self, expiration: jiff::Timestamp) -> Self {
        self.expiration = Some(expiration);
        self
    }

    /// Rejects empty key material, which would only fail later with a confusing signature error.
    pub fn validate(&self) -> Result<(), CredentialsError> {
        if self.access_key_id.trim().is_empty() {
            return Err(CredentialsError::Invalid {
                reason: "the AccessKeyId is empty".into(),
            });
        }
        if self.access_key_secret.is_empty() {
            return Err(CredentialsError::Invalid {
                reason: format!(
                    "the AccessKeySecret of AccessKeyId {} is empty",
                    self.access_key_id
                ),
            });
        }
        Ok(())
    }

    /// The secrets of these credentials, for redacting text that might echo them.
    pub(crate) fn secrets(&self) -> Vec<&Secret> {
        let mut out = vec![&self.access_key_secret];
        out.extend(self.security_token.as_ref());
        out
    }
}

/// The future a provider returns.
pub type CredentialsFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Credentials, CredentialsError>> + Send + 'a>>;

/// A source of credentials.
pub trait CredentialsProvider: Send + Sync + fmt::Debug {
    /// Current credentials. Sources that call a service do so on every call; wrap them in a
    /// [`crate::credentials::CachingProvider`] (the ECS client does) to reuse them until shortly
    /// before expiry.
    fn credentials(&self) -> CredentialsFuture<'_>;

    /// Forgets cached credentials, e.g. after the server rejected the security token.
    fn invalidate(&self) {}
}

impl CredentialsProvider for Credentials {
    fn credentials(&self) -> CredentialsFuture<'_> {
        let result = self.validate().map(|()| self.clone());
        Box::pin(async move { result })
    }
}

impl<P: CredentialsProvider + ?Sized> CredentialsProvider for Arc<P> {
    fn credentials(&self) -> CredentialsFuture<'_> {
        (**self).credentials()
    }

    fn invalidate(&self) {
        (**self).invalidate();
    }
}

/// A shared provider, as clients and other providers hold them.
pub type SharedCredentialsProvider = Arc<dyn CredentialsProvider>;

/// Parses an STS/metadata `Expiration` (`2024-01-01T00:00:00Z`).
pub(crate) fn parse_expiration(value: &str) -> Result<jiff::Timestamp, CredentialsError> {
    value
        .parse::<jiff::Timestamp>()
        .map_err(|e| CredentialsError::Invalid {
            reason: format!("unparseable Expiration `{value}`: {e}"),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn static_credentials_are_their_own_provider_and_hide_secrets() {
        let credentials =
            Credentials::new("AKID", "top-secret-value").with_security_token("tok-123456");
        let got = credentials.credentials().await.unwrap();
        assert_eq!(got, credentials);
        let debug = format!("{got:?}");
        assert!(debug.contains("AKID"));
        assert!(!debug.contains("top-secret-value") && !debug.contains("tok-123456"));
    }

    #[tokio::test]
    async fn empty_keys_are_rejected_with_a_clear_message() {
        let err = Credentials::new("AKID", "")
            .credentials()
            .await
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("AccessKeySecret of AccessKeyId AKID is empty")
        );
        assert!(Credentials::new(" ", "s").validate().is_err());
    }

    #[test]
    fn expiration_parses_sts_format() {
        let ts = parse_expiration("2024-01-01T00:00:00Z").unwrap();
        assert_eq!(ts.as_second(), 1_704_067_200);
        assert!(parse_expiration("tomorrow").is_err());
    }
}
