//! Authentication: the access keys and STS credentials the mock knows, the nonce memory, and
//! verification of V1 (`HMAC-SHA1` parameters) and V3 (`ACS3-HMAC-SHA256` header) signatures
//! with the signing code of alibaba-sdk ([`alibaba_sdk::signature`]).
//!
//! Order of checks, as ECS does it: required parameters, timestamp format and skew, access key
//! (known, enabled), security token, signature, and only then the nonce, so that a request that
//! fails its signature does not burn its nonce.

use std::collections::hash_map::RandomState;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::fmt;
use std::hash::BuildHasher as _;
use std::sync::Arc;
use std::time::Duration;

use axum::http::HeaderMap;
use jiff::{SignedDuration, Timestamp};

use crate::error::ErrorResponse;
use crate::locks::lock;
use crate::received_params::ReceivedParams;
use alibaba_sdk::signature::{v1, v3};

/// The most a request's timestamp may differ from the server clock.
pub const MAX_SKEW: Duration = Duration::from_secs(15 * 60);

/// A long-lived access key and the account that owns it.
#[derive(Clone, PartialEq, Eq)]
pub struct AccessKey {
    /// `AccessKeyId`.
    pub id: String,
    /// `AccessKeySecret`.
    pub secret: String,
    /// The owning account (instances are scoped to it).
    pub account_id: String,
    /// A disabled key answers `InvalidAccessKeyId.Inactive`.
    pub enabled: bool,
}

impl AccessKey {
    /// An enabled key of `account_id`.
    pub fn new(
        id: impl Into<String>,
        secret: impl Into<String>,
        account_id: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            secret: secret.into(),
            account_id: account_id.into(),
            enabled: true,
        }
    }
}

impl fmt::Debug for AccessKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AccessKey")
            .field("id", &self.id)
            .field("secret", &"<redacted>")
            .field("account_id", &self.account_id)
            .field("enabled", &self.enabled)
            .finish()
    }
}

/// Temporary credentials issued by the mock's STS (or by [`crate::MockServer::issue_sts_credentials`]).
#[derive(Clone, PartialEq, Eq)]
pub struct StsCredentials {
    /// `STS.…` access key ID.
    pub access_key_id: String,
    /// Its secret.
    pub access_key_secret: String,
    /// The security token to send as `SecurityToken` / `x-acs-security-token`.
    pub security_token: String,
    /// When they stop working.
    pub expiration: Timestamp,
    /// The account the assumed role belongs to.
    pub account_id: String,
}

impl fmt::Debug for StsCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StsCredentials")
            .field("access_key_id", &self.access_key_id)
            .field("access_key_secret", &"<redacted>")
            .field("security_token", &"<redacted>")
            .field("expiration", &self.expiration)
            .field("account_id", &self.account_id)
            .finish()
    }
}

/// Who made an authenticated request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The access key used.
    pub access_key_id: String,
    /// The account acting.
    pub account_id: Arc<str>,
}

struct PermanentKey {
    secret: String,
    account_id: Arc<str>,
    enabled: bool,
}

struct TemporaryKey {
    secret: String,
    token: String,
    account_id: Arc<str>,
    expires_at: Timestamp,
}

/// Every credential the mock accepts.
#[derive(Default)]
pub struct KeyStore {
    permanent: HashMap<String, PermanentKey>,
    temporary: HashMap<String, TemporaryKey>,
    tokens: HashSet<String>,
}

impl KeyStore {
    /// Adds or replaces a long-lived key.
    pub fn add(&mut self, key: AccessKey) {
        self.permanent.insert(
            key.id,
            PermanentKey {
                secret: key.secret,
                account_id: Arc::from(key.account_id),
                enabled: key.enabled,
            },
        );
    }

    /// The secret and whether it is enabled, of long-lived key `id` (OSS verifies with it).
    pub fn permanent_secret(&self, id: &str) -> Option<(&str, bool)> {
        self.permanent
            .get(id)
            .map(|key| (key.secret.as_str(), key.enabled))
    }

    /// Enables or disables a key; false when the key is unknown.
    pub fn set_enabled(&mut self, id: &str, enabled: bool) -> bool {
        match self.permanent.get_mut(id) {
            Some(key) => {
                key.enabled = enabled;
                true
            }
            None => false,
        }
    }

    /// Registers temporary credentials; expired ones are forgotten on the way.
    pub fn add_temporary(&mut self, creds: &StsCredentials, now: Timestamp) {
        let tokens = &mut self.tokens;
        self.temporary.retain(|_, key| {
            let keep = key.expires_at > now;
            if !keep {
                tokens.remove(&key.token);
            }
            keep
        });
        self.tokens.insert(creds.security_token.clone());
        self.temporary.insert(
            creds.access_key_id.clone(),
            TemporaryKey {
                secret: creds.access_key_secret.clone(),
                token: creds.security_token.clone(),
                account_id: Arc::from(creds.account_id.as_str()),
                expires_at: creds.expiration,
            },
        );
    }

    /// The secret and account of `id`, after checking that it may be used with `token`.
    fn resolve(
        &self,
        id: &str,
        token: Option<&str>,
        now: Timestamp,
    ) -> Result<(&str, Arc<str>), ErrorResponse> {
        if let Some(key) = self.permanent.get(id) {
            if !key.enabled {
                return Err(ErrorResponse::bad_request(
                    "InvalidAccessKeyId.Inactive",
                    "Specified access key is disabled.",
                ));
            }
            return Ok((&key.secret, key.account_id.clone()));
        }
        if let Some(key) = self.temporary.get(id) {
            return match token {
                None => Err(ErrorResponse::bad_request(
                    "InvalidSecurityToken.Malformed",
                    "Specified SecurityToken is malformed: temporary credentials need their security token.",
                )),
                Some(t) if t != key.token && self.tokens.contains(t) => {
                    Err(ErrorResponse::bad_request(
                        "InvalidSecurityToken.MismatchWithAccessKey",
                        "Specified SecurityToken mismatch with the AccessKey.",
                    ))
                }
                Some(t) if t != key.token => Err(ErrorResponse::bad_request(
                    "InvalidSecurityToken.Malformed",
                    "Specified SecurityToken is malformed.",
                )),
                Some(_) if key.expires_at <= now => Err(ErrorResponse::bad_request(
                    "InvalidSecurityToken.Expired",
                    "Specified SecurityToken is expired.",
                )),
                Some(_) => Ok((&key.secret, key.account_id.clone())),
            };
        }
        Err(ErrorResponse::not_found(
            "InvalidAccessKeyId.NotFound",
            "Specified access key is not found.",
        ))
    }
}

/// Nonces seen within the skew window, bounded in count.
///
/// Entries are 64-bit keyed hashes of (access key, nonce), about 40 bytes each, so a million
/// remembered nonces cost about 40 MiB. The hash key is random per process, so clients cannot
/// craft collisions; an accidental one (odds about n²/2⁶⁵) would only reject a fresh nonce.
pub struct NonceCache {
    window: Duration,
    capacity: usize,
    hasher: RandomState,
    seen: HashSet<u64>,
    order: VecDeque<(Timestamp, u64)>,
}

impl NonceCache {
    /// Remembers nonces for `window` (at least [`MAX_SKEW`] to be useful), at most `capacity`.
    pub fn new(window: Duration, capacity: usize) -> Self {
        Self {
            window,
            capacity: capacity.max(1),
            hasher: RandomState::new(),
            seen: HashSet::new(),
            order: VecDeque::new(),
        }
    }

    /// Records `nonce` for `access_key_id`; false when it was already used.
    pub fn insert(&mut self, access_key_id: &str, nonce: &str, now: Timestamp) -> bool {
        let horizon = SignedDuration::try_from(self.window)
            .ok()
            .and_then(|w| now.checked_sub(w).ok());
        while let Some((at, _)) = self.order.front() {
            let expired = horizon.is_some_and(|h| *at < h);
            if !expired && self.order.len() < self.capacity {
                break;
            }
            if let Some((_, key)) = self.order.pop_front() {
                self.seen.remove(&key);
            }
        }
        let key = self.hasher.hash_one((access_key_id, nonce));
        if !self.seen.insert(key) {
            return false;
        }
        self.order.push_back((now, key));
        true
    }

    /// How many nonces are remembered.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.seen.len()
    }
}

/// What verification needs from a request.
pub struct SignedRequest<'a> {
    /// `GET` or `POST`.
    pub method: &'a str,
    /// The path (always `/` for ECS).
    pub path: &'a str,
    /// Query parameters alone (V3 signs only these).
    pub query: &'a BTreeMap<String, String>,
    /// Query and form parameters merged (V1 signs all of them).
    pub params: &'a ReceivedParams,
    /// Request headers.
    pub headers: &'a HeaderMap,
    /// Raw body.
    pub body: &'a [u8],
}

impl SignedRequest<'_> {
    /// Whether the request is V3-signed: decided by the `Authorization` header alone, since the
    /// classic SDK sends `x-acs-*` headers with V1 too.
    pub fn is_v3(&self) -> bool {
        self.header("authorization")
            .is_some_and(|v| v.trim_start().starts_with("ACS3-"))
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

fn parse_time(value: &str, now: Timestamp) -> Result<(), ErrorResponse> {
    let ts: Timestamp = value.parse().map_err(|_| {
        ErrorResponse::bad_request(
            "InvalidTimeStamp.Format",
            "Specified time stamp or date value is not well formatted.",
        )
    })?;
    let skew = now.duration_since(ts).abs();
    if skew > SignedDuration::try_from(MAX_SKEW).unwrap_or(SignedDuration::MAX) {
        return Err(ErrorResponse::bad_request(
            "InvalidTimeStamp.Expired",
            "Specified time stamp or date value is expired.",
        ));
    }
    Ok(())
}

fn mismatch(string_to_sign: &str) -> ErrorResponse {
    ErrorResponse::bad_request(
        "SignatureDoesNotMatch",
        format!(
            "Specified signature is not matched with our calculation. server string to sign is:{string_to_sign}"
        ),
    )
}

/// Verifies a request; on success the caller and nonce are known and the nonce is used up.
pub fn authenticate(
    keys: &KeyStore,
    nonces: &std::sync::Mutex<NonceCache>,
    request: &SignedRequest<'_>,
    now: Timestamp,
) -> Result<Caller, ErrorResponse> {
    let (access_key_id, nonce, account_id) = if request.is_v3() {
        verify_v3(keys, request, now)?
    } else {
        verify_v1(keys, request, now)?
    };
    let fresh = lock(nonces).insert(&access_key_id, &nonce, now);
    if !fresh {
        return Err(ErrorResponse::bad_request(
            "SignatureNonceUsed",
            "Specified signature nonce was used already.",
        ));
    }
    Ok(Caller {
        access_key_id,
        account_id,
    })
}

fn verify_v1(
    keys: &KeyStore,
    request: &SignedRequest<'_>,
    now: Timestamp,
) -> Result<(String, String, Arc<str>), ErrorResponse> {
    let p = request.params;
    let access_key_id = p.required("AccessKeyId")?;
    let signature = p.required("Signature")?;
    let method = p.required("SignatureMethod")?;
    if method != v1::SIGNATURE_METHOD {
        return Err(ErrorResponse::bad_request(
            "InvalidParameter.SignatureMethod",
            format!(
                "The specified SignatureMethod is not supported by signature version 1.0; use {}.",
                v1::SIGNATURE_METHOD
            ),
        ));
    }
    let version = p.required("SignatureVersion")?;
    if version != v1::SIGNATURE_VERSION {
        return Err(ErrorResponse::invalid("SignatureVersion"));
    }
    let nonce = p.required("SignatureNonce")?;
    parse_time(p.required("Timestamp")?, now)?;
    let (secret, account_id) = keys.resolve(access_key_id, p.get("SecurityToken"), now)?;
    let string_to_sign = v1::string_to_sign(request.method, p.as_map());
    if v1::sign(secret, &string_to_sign) != signature {
        return Err(mismatch(&string_to_sign));
    }
    Ok((access_key_id.to_owned(), nonce.to_owned(), account_id))
}

fn verify_v3(
    keys: &KeyStore,
    request: &SignedRequest<'_>,
    now: Timestamp,
) -> Result<(String, String, Arc<str>), ErrorResponse> {
    let authorization = request.header("authorization").unwrap_or_default();
    let parsed = v3::parse_authorization(authorization).ok_or_else(|| {
        ErrorResponse::bad_request(
            "IncompleteSignature",
            "The request signature does not conform to Aliyun standards: expected `ACS3-HMAC-SHA256 Credential=…,SignedHeaders=…,Signature=…`.",
        )
    })?;
    let required = |name: &str| {
        request
            .header(name)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| ErrorResponse::missing(name))
    };
    required("x-acs-action")?;
    required("x-acs-version")?;
    let nonce = required("x-acs-signature-nonce")?;
    parse_time(required("x-acs-date")?, now)?;
    let (secret, account_id) = keys.resolve(
        &parsed.access_key_id,
        request.header("x-acs-security-token"),
        now,
    )?;
    let mut signed = BTreeMap::new();
    for name in &parsed.signed_headers {
        let value = request
            .headers
            .get(name.as_str())
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .unwrap_or_default();
        signed.insert(name.clone(), value);
    }
    let payload = v3::hashed_payload(request.body);
    let canonical = v3::canonical_request(
        request.method,
        request.path,
        request.query,
        &signed,
        &payload,
    );
    let string_to_sign = v3::string_to_sign(&canonical);
    if v3::sign(secret, &string_to_sign) != parsed.signature.to_ascii_lowercase() {
        return Err(mismatch(&string_to_sign));
    }
    Ok((parsed.access_key_id, nonce.to_owned(), account_id))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        "2024-01-01T00:10:00Z".parse().unwrap()
    }

    #[test]
    fn nonce_is_rejected_on_reuse_and_forgotten_after_the_window() {
        let mut cache = NonceCache::new(Duration::from_secs(60), 10);
        let t0 = now();
        assert!(cache.insert("ak", "n1", t0));
        assert!(!cache.insert("ak", "n1", t0));
        assert!(cache.insert("other", "n1", t0), "nonces are per access key");
        let later = t0.checked_add(SignedDuration::from_secs(61)).unwrap();
        assert!(cache.insert("ak", "n2", later));
        assert!(cache.insert("ak", "n1", later), "expired nonce forgotten");
    }

    #[test]
    fn nonce_memory_is_bounded() {
        let mut cache = NonceCache::new(Duration::from_secs(3600), 3);
        for i in 0..10 {
            assert!(cache.insert("ak", &i.to_string(), now()));
        }
        assert!(cache.len() <= 3);
    }

    #[test]
    fn timestamps_are_checked_for_format_and_skew() {
        assert!(parse_time("2024-01-01T00:00:00Z", now()).is_ok());
        assert_eq!(
            parse_time("2023-12-31T23:54:59Z", now()).unwrap_err().code,
            "InvalidTimeStamp.Expired"
        );
        assert_eq!(
            parse_time("2024-01-01T00:25:01Z", now()).unwrap_err().code,
            "InvalidTimeStamp.Expired"
        );
        assert_eq!(
            parse_time("yesterday", now()).unwrap_err().code,
            "InvalidTimeStamp.Format"
        );
    }

    #[test]
    fn keys_resolve_with_their_rules() {
        let mut store = KeyStore::default();
        store.add(AccessKey::new("ak", "secret", "100"));
        let mut off = AccessKey::new("off", "s", "100");
        off.enabled = false;
        store.add(off);
        let sts = StsCredentials {
            access_key_id: "STS.x".into(),
            access_key_secret: "s2".into(),
            security_token: "tok".into(),
            expiration: now().checked_add(SignedDuration::from_secs(60)).unwrap(),
            account_id: "200".into(),
        };
        store.add_temporary(&sts, now());
        let other = StsCredentials {
            access_key_id: "STS.y".into(),
            security_token: "tok2".into(),
            ..sts.clone()
        };
        store.add_temporary(&other, now());
        assert_eq!(&*store.resolve("ak", None, now()).unwrap().1, "100");
        let code = |r: Result<(&str, Arc<str>), ErrorResponse>| r.unwrap_err().code;
        assert_eq!(
            code(store.resolve("nope", None, now())),
            "InvalidAccessKeyId.NotFound"
        );
        assert_eq!(
            code(store.resolve("off", None, now())),
            "InvalidAccessKeyId.Inactive"
        );
        assert_eq!(
            code(store.resolve("STS.x", None, now())),
            "InvalidSecurityToken.Malformed"
        );
        assert_eq!(
            code(store.resolve("STS.x", Some("zzz"), now())),
            "InvalidSecurityToken.Malformed"
        );
        assert_eq!(
            code(store.resolve("STS.x", Some("tok2"), now())),
            "InvalidSecurityToken.MismatchWithAccessKey"
        );
        assert_eq!(
            &*store.resolve("STS.x", Some("tok"), now()).unwrap().1,
            "200"
        );
        let late = now().checked_add(SignedDuration::from_secs(61)).unwrap();
        assert_eq!(
            code(store.resolve("STS.x", Some("tok"), late)),
            "InvalidSecurityToken.Expired"
        );
    }

    #[test]
    fn debug_output_redacts_secrets() {
        let key = AccessKey::new("ak", "very-secret", "1");
        assert!(!format!("{key:?}").contains("very-secret"));
    }
}
