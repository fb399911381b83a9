//! Building one signed HTTP request from an action and its parameters: pure, so the exact
//! bytes on the wire are unit-tested.
//!
//! - V1 GET: every parameter and `Signature` in the query.
//! - V1 POST (default): common parameters and `Signature` in the query, business parameters in an
//!   `application/x-www-form-urlencoded` body; the signature covers both.
//! - V3: business parameters in the query, empty body, signed `x-acs-*` headers and
//!   `Authorization: ACS3-HMAC-SHA256 ...`.
//! - Unsigned (no credentials, for STS `AssumeRoleWithOIDC`): the V1 shape without any
//!   `AccessKeyId`/`Signature*` parameter.

use std::collections::BTreeMap;
use std::fmt;

use url::Url;

use super::params::Params;
use crate::signature::{percent_encode, v1, v3};
use crate::signing_credentials::Credentials;

/// The signature scheme a client uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SignatureVersion {
    /// RPC signature V1 (HMAC-SHA1 over the parameters).
    #[default]
    V1,
    /// ACS3-HMAC-SHA256 over a canonical request, in the `Authorization` header.
    V3,
}

/// The HTTP method of RPC calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HttpMethod {
    /// POST (what current SDKs send).
    #[default]
    Post,
    /// GET, everything in the query.
    Get,
}

impl HttpMethod {
    /// `GET` or `POST`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Get => "GET",
            Self::Post => "POST",
        }
    }
}

/// What to call, and how.
#[derive(Debug, Clone, Copy)]
pub struct RequestSpec<'a> {
    /// The endpoint URL (scheme, host, port, optional path prefix).
    pub endpoint: &'a Url,
    /// The action, e.g. `DescribeInstances`.
    pub action: &'a str,
    /// The API version, e.g. `2014-05-26`.
    pub version: &'a str,
    /// The HTTP method.
    pub method: HttpMethod,
    /// The signature scheme.
    pub signature: SignatureVersion,
    /// The business parameters.
    pub params: &'a Params,
}

/// What makes one attempt unique: credentials, a fresh nonce and the current time.
#[derive(Debug, Clone, Copy)]
pub struct Signing<'a> {
    /// `None` sends the request unsigned.
    pub credentials: Option<&'a Credentials>,
    /// A value never used before (a UUID).
    pub nonce: &'a str,
    /// `yyyy-MM-ddTHH:mm:ssZ` in UTC.
    pub timestamp: &'a str,
}

/// A request ready to send. `Debug` shows no query or header value, as they carry tokens.
#[derive(Clone)]
pub struct PreparedRequest {
    /// The method.
    pub method: HttpMethod,
    /// The URL including the query.
    pub url: Url,
    /// Extra headers (lowercase names); `host` is left to the HTTP client, which derives the same
    /// value from the URL.
    pub headers: Vec<(String, String)>,
    /// A form-encoded body, if any.
    pub form_body: Option<String>,
}

impl fmt::Debug for PreparedRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PreparedRequest")
            .field("method", &self.method)
            .field("endpoint", &endpoint_label(&self.url))
            .field(
                "headers",
                &self.headers.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .field("form_body_len", &self.form_body.as_ref().map(String::len))
            .finish()
    }
}

/// `scheme://host[:port]` of a URL, safe to log and to put in errors.
pub fn endpoint_label(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// The current time in the format both signatures use.
pub fn timestamp_now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// A fresh signature nonce.
pub fn new_nonce() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Builds the request of one attempt.
pub fn prepare(spec: &RequestSpec<'_>, signing: &Signing<'_>) -> PreparedRequest {
    match spec.signature {
        SignatureVersion::V1 => prepare_v1(spec, signing),
        SignatureVersion::V3 => prepare_v3(spec, signing),
    }
}

fn prepare_v1(spec: &RequestSpec<'_>, signing: &Signing<'_>) -> PreparedRequest {
    let mut common = BTreeMap::new();
    let mut put = |name: &str, value: &str| {
        common.insert(name.to_owned(), value.to_owned());
    };
    put("Action", spec.action);
    put("Version", spec.version);
    put("Format", "JSON");
    put("Timestamp", signing.timestamp);
    put("SignatureNonce", signing.nonce);
    if let Some(credentials) = signing.credentials {
        put("AccessKeyId", &credentials.access_key_id);
        put("SignatureMethod", v1::SIGNATURE_METHOD);
        put("SignatureVersion", v1::SIGNATURE_VERSION);
        if let Some(token) = &credentials.security_token {
            put("SecurityToken", token.expose());
        }
    }

    let mut all = spec.params.as_map().clone();
    all.extend(common.iter().map(|(k, v)| (k.clone(), v.clone())));
    let signature = signing.credentials.map(|credentials| {
        let to_sign = v1::string_to_sign(spec.method.as_str(), &all);
        v1::sign(credentials.access_key_secret.expose(), &to_sign)
    });

    let (mut query, form_body) = match spec.method {
        HttpMethod::Get => (all, None),
        HttpMethod::Post => {
            let body = encode_pairs(spec.params.as_map());
            (common, Some(body))
        }
    };
    if let Some(signature) = signature {
        query.insert(v1::SIGNATURE_PARAM.to_owned(), signature);
    }
    let mut url = spec.endpoint.clone();
    url.set_query(Some(&encode_pairs(&query)));
    PreparedRequest {
        method: spec.method,
        url,
        headers: Vec::new(),
        form_body,
    }
}

fn prepare_v3(spec: &RequestSpec<'_>, signing: &Signing<'_>) -> PreparedRequest {
    let query = spec.params.as_map();
    let payload = v3::hashed_payload(b"");
    let mut signed = BTreeMap::new();
    signed.insert("host".to_owned(), host_header(spec.endpoint));
    signed.insert("x-acs-action".to_owned(), spec.action.to_owned());
    signed.insert("x-acs-version".to_owned(), spec.version.to_owned());
    signed.insert("x-acs-date".to_owned(), signing.timestamp.to_owned());
    signed.insert("x-acs-signature-nonce".to_owned(), signing.nonce.to_owned());
    signed.insert("x-acs-content-sha256".to_owned(), payload.clone());
    let mut authorization = None;
    if let Some(credentials) = signing.credentials {
        if let Some(token) = &credentials.security_token {
            signed.insert("x-acs-security-token".to_owned(), token.expose().to_owned());
        }
        let canonical = v3::canonical_request(
            spec.method.as_str(),
            spec.endpoint.path(),
            query,
            &signed,
            &payload,
        );
        let signature = v3::sign(
            credentials.access_key_secret.expose(),
            &v3::string_to_sign(&canonical),
        );
        let names = v3::signed_header_names(&signed);
        authorization = Some(v3::authorization_header(
            &credentials.access_key_id,
            &names,
            &signature,
        ));
    }
    let mut headers: Vec<(String, String)> = signed
        .into_iter()
        .filter(|(name, _)| name != "host")
        .collect();
    if let Some(value) = authorization {
        headers.push(("authorization".to_owned(), value));
    }
    let mut url = spec.endpoint.clone();
    if query.is_empty() {
        url.set_query(None);
    } else {
        url.set_query(Some(&encode_pairs(query)));
    }
    PreparedRequest {
        method: spec.method,
        url,
        headers,
        form_body: None,
    }
}

/// The `Host` header the HTTP client sends for this URL: the host, plus the port when it is
/// not the scheme's default.
fn host_header(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    }
}

/// `name=value&...` with the signature's percent-encoding (valid for queries and form bodies).
fn encode_pairs(pairs: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    for (name, value) in pairs {
        if !out.is_empty() {
            out.push('&');
        }
        out.push_str(&percent_encode(name));
        out.push('=');
        out.push_str(&percent_encode(value));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secret::Secret;
    use crate::signature::percent_decode;

    fn creds(token: Option<&str>) -> Credentials {
        Credentials {
            access_key_id: "testid".into(),
            access_key_secret: Secret::new("testsecret"),
            security_token: token.map(Secret::new),
            expiration: None,
        }
    }

    fn decode_pairs(encoded: &str) -> BTreeMap<String, String> {
        encoded
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|pair| {
                let (k, v) = pair.split_once('=').unwrap();
                let d = |s: &str| String::from_utf8(percent_decode(s).unwrap()).unwrap();
                (d(k), d(v))
            })
            .collect()
    }

    fn edge_case_params() -> Params {
        let mut p = Params::new();
        p.set("RegionId", "cn-hangzhou")
            .set("InstanceIds", "[\"i-abc\", \"i-def\"]")
            .set("Tag.1.Key", "env")
            .set("Tag.1.Value", "dev test*~")
            .set("InstanceName", "中文")
            .set("PageSize", "100");
        p
    }

    fn spec<'a>(
        endpoint: &'a Url,
        params: &'a Params,
        method: HttpMethod,
        signature: SignatureVersion,
    ) -> RequestSpec<'a> {
        RequestSpec {
            endpoint,
            action: "DescribeInstances",
            version: "2014-05-26",
            method,
            signature,
            params,
        }
    }

    const SIGNING_NONCE: &str = "11111111-2222-3333-4444-555555555555";
    const SIGNING_TIME: &str = "2024-01-01T00:00:00Z";

    #[test]
    fn v1_get_puts_everything_in_the_query_and_matches_the_vector() {
        let endpoint = Url::parse("https://ecs-cn-hangzhou.aliyuncs.com/").unwrap();
        let params = edge_case_params();
        let credentials = creds(None);
        let req = prepare(
            &spec(&endpoint, &params, HttpMethod::Get, SignatureVersion::V1),
            &Signing {
                credentials: Some(&credentials),
                nonce: SIGNING_NONCE,
                timestamp: SIGNING_TIME,
            },
        );
        assert!(req.form_body.is_none());
        let query = decode_pairs(req.url.query().unwrap());
        assert_eq!(query["Signature"], "d/wW6RrcJjmYsxU/gHs0kwASkXE=");
        assert_eq!(query["InstanceName"], "中文");
        assert_eq!(query["Format"], "JSON");
        assert!(req.url.query().unwrap().contains("dev%20test%2A~"));
    }

    #[test]
    fn v1_post_splits_common_and_business_parameters() {
        let endpoint = Url::parse("https://ecs-cn-hangzhou.aliyuncs.com/").unwrap();
        let params = edge_case_params();
        let credentials = creds(None);
        let req = prepare(
            &spec(&endpoint, &params, HttpMethod::Post, SignatureVersion::V1),
            &Signing {
                credentials: Some(&credentials),
                nonce: SIGNING_NONCE,
                timestamp: SIGNING_TIME,
            },
        );
        let query = decode_pairs(req.url.query().unwrap());
        let body = decode_pairs(req.form_body.as_deref().unwrap());
        assert_eq!(query["Signature"], "NRKebjqD8qe3WH3r1xmYthjBaJQ=");
        assert!(query.contains_key("AccessKeyId") && !query.contains_key("RegionId"));
        assert_eq!(body["RegionId"], "cn-hangzhou");
        assert!(!body.contains_key("Signature"));
    }

    #[test]
    fn v1_signs_the_security_token() {
        let endpoint = Url::parse("https://ecs-cn-hangzhou.aliyuncs.com/").unwrap();
        let params = edge_case_params();
        let credentials = creds(Some("sts-token/abc+=="));
        let req = prepare(
            &spec(&endpoint, &params, HttpMethod::Get, SignatureVersion::V1),
            &Signing {
                credentials: Some(&credentials),
                nonce: SIGNING_NONCE,
                timestamp: SIGNING_TIME,
            },
        );
        let query = decode_pairs(req.url.query().unwrap());
        assert_eq!(query["Signature"], "GNgbjl9Ab61uRCjEe4D/e9bwPcA=");
        assert!(!format!("{req:?}").contains("sts-token"));
    }

    #[test]
    fn unsigned_requests_carry_no_credentials() {
        let endpoint = Url::parse("http://127.0.0.1:9/").unwrap();
        let params = edge_case_params();
        let req = prepare(
            &spec(&endpoint, &params, HttpMethod::Post, SignatureVersion::V1),
            &Signing {
                credentials: None,
                nonce: SIGNING_NONCE,
                timestamp: SIGNING_TIME,
            },
        );
        let query = decode_pairs(req.url.query().unwrap());
        assert!(!query.contains_key("Signature") && !query.contains_key("AccessKeyId"));
        assert_eq!(query["Action"], "DescribeInstances");
    }

    #[test]
    fn v3_matches_the_official_vector() {
        let endpoint = Url::parse("https://ecs.cn-shanghai.aliyuncs.com").unwrap();
        let mut params = Params::new();
        params
            .set(
                "ImageId",
                "win2019_1809_x64_dtc_zh-cn_40G_alibase_20230811.vhd",
            )
            .set("RegionId", "cn-shanghai");
        let credentials = Credentials {
            access_key_id: "YourAccessKeyId".into(),
            access_key_secret: Secret::new("YourAccessKeySecret"),
            security_token: None,
            expiration: None,
        };
        let req = prepare(
            &RequestSpec {
                action: "RunInstances",
                ..spec(&endpoint, &params, HttpMethod::Post, SignatureVersion::V3)
            },
            &Signing {
                credentials: Some(&credentials),
                nonce: "3156853299f313e23d1673dc12e1703d",
                timestamp: "2023-10-26T10:22:32Z",
            },
        );
        let auth = &req
            .headers
            .iter()
            .find(|(n, _)| n == "authorization")
            .unwrap()
            .1;
        assert_eq!(
            auth,
            "ACS3-HMAC-SHA256 Credential=YourAccessKeyId,SignedHeaders=host;x-acs-action;x-acs-content-sha256;x-acs-date;x-acs-signature-nonce;x-acs-version,Signature=06563a9e1b43f5dfe96b81484da74bceab24a1d853912eee15083a6f0f3283c0"
        );
        assert!(req.form_body.is_none());
        assert_eq!(
            req.url.query().unwrap(),
            "ImageId=win2019_1809_x64_dtc_zh-cn_40G_alibase_20230811.vhd&RegionId=cn-shanghai"
        );
    }

    #[test]
    fn host_header_includes_non_default_ports() {
        assert_eq!(
            host_header(&Url::parse("http://127.0.0.1:8080/").unwrap()),
            "127.0.0.1:8080"
        );
        assert_eq!(
            host_header(&Url::parse("https://ecs.aliyuncs.com:443/").unwrap()),
            "ecs.aliyuncs.com"
        );
    }

    #[test]
    fn timestamp_has_second_precision_and_zulu() {
        let ts = timestamp_now();
        assert_eq!(ts.len(), 20, "{ts}");
        assert!(ts.ends_with('Z') && ts.as_bytes()[10] == b'T');
    }
}
