//! [`Secret`]: a string that never shows itself.
//!
//! Access key secrets and security tokens live in this newtype so that no `Debug`, `Display`,
//! log line or error message can print them by accident; only [`Secret::expose`] reveals the value,
//! and only signing code and request builders call it.

use std::fmt;

/// A secret string; `Debug` and `Display` print `<redacted>`.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Secret(String);

impl Secret {
    /// Wraps a value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The plain value, for signing and for building requests. Never log it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether the value is empty (safe to reveal: it carries no secret).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Self(value)
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Self(value.to_owned())
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl<'de> serde::Deserialize<'de> for Secret {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Self)
    }
}

/// Replaces every occurrence of each secret in `text`, raw and percent-encoded once and twice
/// (the forms a V1 string to sign echoed in an error message would contain), with `<redacted>`.
pub fn redact(text: &str, secrets: &[&Secret]) -> String {
    let mut out = text.to_owned();
    for secret in secrets {
        let raw = secret.expose();
        // Very short values would redact unrelated text and carry no real secret.
        if raw.len() < 4 {
            continue;
        }
        let once = crate::signature::percent_encode(raw);
        let twice = crate::signature::percent_encode(&once);
        for form in [twice, once, raw.to_owned()] {
            if out.contains(&form) {
                out = out.replace(&form, "<redacted>");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_and_display_hide_the_value() {
        let secret = Secret::new("hunter2-very-secret");
        assert_eq!(format!("{secret:?}"), "Secret(<redacted>)");
        assert_eq!(format!("{secret}"), "<redacted>");
        assert_eq!(secret.expose(), "hunter2-very-secret");
    }

    #[test]
    fn redact_covers_raw_and_encoded_forms() {
        let token = Secret::new("sts-token/abc+==");
        let message = "server string to sign is:POST&%2F&SecurityToken%3Dsts-token%252Fabc%252B%253D%253D and sts-token%2Fabc%2B%3D%3D and sts-token/abc+==";
        let redacted = redact(message, &[&token]);
        assert!(!redacted.contains("sts-token"), "{redacted}");
        assert_eq!(redacted.matches("<redacted>").count(), 3);
    }
}
