//! The claims of an OIDC token that AssumeRoleWithOIDC reports back in `OIDCTokenInfo`: when
//! the token was issued (`iat`) and when it expires (`exp`). The mock checks only that the
//! token is shaped like a JWT; a claim it cannot read is reported empty.

use base64::Engine as _;
use jiff::Timestamp;
use serde_json::Value;

/// `iat` and `exp` of `token` as `yyyy-MM-ddTHH:mm:ssZ` (STS's format), empty when absent.
pub fn issued_and_expires(token: &str) -> (String, String) {
    let claims = token
        .trim()
        .split('.')
        .nth(1)
        .and_then(|payload| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(payload.trim_end_matches('='))
                .ok()
        })
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
        .unwrap_or(Value::Null);
    (time_claim(&claims, "iat"), time_claim(&claims, "exp"))
}

fn time_claim(claims: &Value, name: &str) -> String {
    claims[name]
        .as_i64()
        .and_then(|s| Timestamp::from_second(s).ok())
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(payload: &str) -> String {
        let b64 = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        format!("{}.{}.sig", b64(r#"{"alg":"RS256"}"#), b64(payload))
    }

    #[test]
    fn reads_issued_and_expiry_times() {
        assert_eq!(
            issued_and_expires(&token(r#"{"iat":1634700429,"exp":1634704029}"#)),
            (
                "2021-10-20T03:27:09Z".to_owned(),
                "2021-10-20T04:27:09Z".to_owned()
            )
        );
    }

    #[test]
    fn unreadable_claims_are_empty() {
        assert_eq!(
            issued_and_expires(&token(r#"{"sub":"x"}"#)),
            (String::new(), String::new())
        );
        assert_eq!(
            issued_and_expires("a.%%%.b"),
            (String::new(), String::new())
        );
    }
}
