//! [`RpcClient`]: sends RPC-style calls (one path, `Action` + `Version`) to one endpoint, signed
//! with the client's credentials, retried per [`RetryPolicy`], and turns responses into bytes or
//! typed errors. ECS and STS clients are thin typed layers on top of it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use backon::Retryable as _;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use tracing::Instrument as _;
use url::Url;

use super::api_message::shown_message;
use super::pacing::QuotaPacer;
use super::params::{Params, SENSITIVE_PARAMS};
use super::retry::RetryPolicy;
use super::signed_request::{
    HttpMethod, RequestSpec, SignatureVersion, Signing, endpoint_label, new_nonce, prepare,
    timestamp_now,
};
use crate::error::{ApiError, Error, error_chain};
use crate::secret::{Secret, redact};
use crate::signing_credentials::{Credentials, SharedCredentialsProvider};

/// The `User-Agent` of every request.
pub const USER_AGENT: &str = concat!("ferroplane/", env!("CARGO_PKG_VERSION"));

/// How a client talks to its endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientConfig {
    /// The signature scheme (V1 by default).
    pub signature: SignatureVersion,
    /// The HTTP method (POST by default).
    pub method: HttpMethod,
    /// Time allowed to establish a connection.
    pub connect_timeout: Duration,
    /// Time allowed for one attempt, connection included.
    pub request_timeout: Duration,
    /// Retries of transient failures.
    pub retry: RetryPolicy,
    /// The `User-Agent` header.
    pub user_agent: String,
    /// Pace calls per region and action when the API says the quota is spent (see
    /// [`QuotaPacer`]) instead of letting every call retry on its own.
    pub quota_pacing: bool,
}

impl Default for ClientConfig {
    fn default() -> Self {
        Self {
            signature: SignatureVersion::V1,
            method: HttpMethod::Post,
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(30),
            retry: RetryPolicy::default(),
            user_agent: USER_AGENT.to_owned(),
            quota_pacing: true,
        }
    }
}

/// A successful response body.
#[derive(Debug, Clone)]
pub struct RawResponse {
    /// The HTTP status (2xx).
    pub http_status: u16,
    /// The body bytes.
    pub body: Vec<u8>,
}

#[derive(Debug)]
struct Inner {
    http: reqwest::Client,
    endpoint: Url,
    version: String,
    config: ClientConfig,
    credentials: Option<SharedCredentialsProvider>,
    pacer: QuotaPacer,
}

/// A client for one RPC-style API (product version + endpoint). Cheap to clone: clones share
/// one connection pool.
#[derive(Debug, Clone)]
pub struct RpcClient {
    inner: Arc<Inner>,
}

impl RpcClient {
    /// A client of API `version` at `endpoint`; `credentials: None` sends requests unsigned.
    pub fn new(
        endpoint: Url,
        version: impl Into<String>,
        credentials: Option<SharedCredentialsProvider>,
        config: ClientConfig,
    ) -> Result<Self, Error> {
        let http = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .timeout(config.request_timeout)
            .user_agent(config.user_agent.clone())
            .build()
            .map_err(|e| Error::InvalidRequest {
                action: "(client setup)".into(),
                reason: format!("cannot build the HTTP client: {}", error_chain(&e)),
            })?;
        Ok(Self {
            inner: Arc::new(Inner {
                http,
                endpoint,
                version: version.into(),
                config,
                credentials,
                pacer: QuotaPacer::default(),
            }),
        })
    }

    /// The endpoint requests go to.
    pub fn endpoint(&self) -> &Url {
        &self.inner.endpoint
    }

    /// The API version sent as `Version`.
    pub fn version(&self) -> &str {
        &self.inner.version
    }

    /// The configuration.
    pub fn config(&self) -> &ClientConfig {
        &self.inner.config
    }

    /// The credentials provider, if requests are signed.
    pub fn credentials(&self) -> Option<&SharedCredentialsProvider> {
        self.inner.credentials.as_ref()
    }

    /// Calls `action` with `params`, retrying transient failures; returns the 2xx body.
    pub async fn call_raw(&self, action: &str, params: &Params) -> Result<RawResponse, Error> {
        let policy = self.inner.config.retry;
        let started = Instant::now();
        let span = tracing::debug_span!(
            "alibaba_api_call",
            action,
            endpoint = %endpoint_label(&self.inner.endpoint)
        );
        let attempt = || async { self.paced_attempt(action, params).await };
        attempt
            .retry(policy.backoff())
            .sleep(tokio::time::sleep)
            .when(Error::is_retryable)
            .adjust(|error, proposed| policy.next_delay(started, proposed, error.retry_after()))
            .notify(|error, delay| {
                tracing::warn!(
                    action,
                    reason = error.reason(),
                    %error,
                    delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                    "retrying Alibaba Cloud API call"
                );
            })
            .instrument(span)
            .await
    }

    /// Calls `action` and decodes the JSON body into `T`.
    pub async fn call_json<T: DeserializeOwned>(
        &self,
        action: &str,
        params: &Params,
    ) -> Result<T, Error> {
        let response = self.call_raw(action, params).await?;
        decode_json(action, &response, false)
    }

    /// Like [`Self::call_json`], with `RegionId` set to `region` unless `params` sets it: the
    /// regional products (ECS, VPC) take the client's region by default.
    pub async fn call_json_in<T: DeserializeOwned>(
        &self,
        region: &str,
        action: &str,
        params: &Params,
    ) -> Result<T, Error> {
        if params.contains("RegionId") {
            return self.call_json(action, params).await;
        }
        let mut with_region = params.clone();
        with_region.set("RegionId", region);
        self.call_json(action, &with_region).await
    }

    /// The rate (calls per second) the client holds `action` in `region` to after a spent
    /// quota; `None` when it is not paced.
    pub fn paced_rate(&self, region: &str, action: &str) -> Option<f64> {
        self.inner.pacer.rate(region, action)
    }

    /// One attempt, sent when the quota pacer admits it and reported back to it.
    async fn paced_attempt(&self, action: &str, params: &Params) -> Result<RawResponse, Error> {
        if !self.inner.config.quota_pacing {
            return self.attempt(action, params).await;
        }
        let region = params.get("RegionId").unwrap_or_default();
        let permit = self.inner.pacer.acquire(region, action).await;
        let result = self.attempt(action, params).await;
        match &result {
            Err(error) if error.is_throttling() => permit.throttled(error.retry_after()),
            // Any answer but throttling shows the quota was not spent.
            Ok(_) | Err(Error::Api(_) | Error::InvalidResponse { .. }) => permit.passed(),
            // No answer: the call says nothing about the quota.
            Err(_) => drop(permit),
        }
        result
    }

    async fn attempt(&self, action: &str, params: &Params) -> Result<RawResponse, Error> {
        let credentials = match &self.inner.credentials {
            Some(provider) => Some(provider.credentials().await?),
            None => None,
        };
        let nonce = new_nonce();
        let timestamp = timestamp_now();
        let spec = RequestSpec {
            endpoint: &self.inner.endpoint,
            action,
            version: &self.inner.version,
            method: self.inner.config.method,
            signature: self.inner.config.signature,
            params,
        };
        let prepared = prepare(
            &spec,
            &Signing {
                credentials: credentials.as_ref(),
                nonce: &nonce,
                timestamp: &timestamp,
            },
        );
        let method = match prepared.method {
            HttpMethod::Get => reqwest::Method::GET,
            HttpMethod::Post => reqwest::Method::POST,
        };
        let mut request = self
            .inner
            .http
            .request(method, prepared.url)
            .header(reqwest::header::ACCEPT, "application/json");
        for (name, value) in &prepared.headers {
            request = request.header(name.as_str(), value.as_str());
        }
        if let Some(body) = prepared.form_body {
            request = request
                .header(
                    reqwest::header::CONTENT_TYPE,
                    "application/x-www-form-urlencoded",
                )
                .body(body);
        }
        tracing::debug!("sending request");
        let response = request
            .send()
            .await
            .map_err(|e| self.transport_error(action, e))?;
        let http_status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("x-acs-retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_millis);
        let body = response
            .bytes()
            .await
            .map_err(|e| self.transport_error(action, e))?
            .to_vec();
        tracing::debug!(http_status, bytes = body.len(), "response received");
        if (200..300).contains(&http_status) {
            return Ok(RawResponse { http_status, body });
        }
        let secrets = secrets_of(credentials.as_ref(), params);
        let secret_refs: Vec<&Secret> = secrets.iter().collect();
        let error = parse_error_body(action, http_status, &body, retry_after, &secret_refs);
        if error.is_bad_credentials()
            && let Some(provider) = &self.inner.credentials
        {
            provider.invalidate();
        }
        Err(error)
    }

    fn transport_error(&self, action: &str, error: reqwest::Error) -> Error {
        let endpoint = endpoint_label(&self.inner.endpoint);
        // The URL of a V1 GET carries the security token: never let it into the message.
        let error = error.without_url();
        let detail = error_chain(&error);
        if error.is_builder() {
            Error::InvalidRequest {
                action: action.to_owned(),
                reason: format!("the request cannot be built: {detail}"),
            }
        } else if error.is_connect() {
            Error::Connect {
                action: action.to_owned(),
                endpoint,
                detail,
            }
        } else if error.is_timeout() {
            Error::Timeout {
                action: action.to_owned(),
                endpoint,
                timeout: self.inner.config.request_timeout,
            }
        } else {
            Error::Transport {
                action: action.to_owned(),
                endpoint,
                detail,
            }
        }
    }
}

/// What must not appear in an error message: the credentials' secrets, their AccessKeyId
/// (identifying, and quoted by the server's string to sign) and the sensitive parameters.
fn secrets_of(credentials: Option<&Credentials>, params: &Params) -> Vec<Secret> {
    let mut out: Vec<Secret> = credentials
        .map(|c| {
            let mut all: Vec<Secret> = c.secrets().into_iter().cloned().collect();
            all.push(Secret::new(c.access_key_id.clone()));
            all
        })
        .unwrap_or_default();
    out.extend(
        SENSITIVE_PARAMS
            .iter()
            .filter_map(|name| params.get(name))
            .map(Secret::new),
    );
    out
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct ErrorBody {
    code: Option<String>,
    message: Option<String>,
    request_id: Option<String>,
    recommend: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct RequestIdOnly {
    request_id: Option<String>,
}

/// Turns a non-2xx response into an [`Error`]: an [`ApiError`] when the body is the documented
/// error JSON, an [`Error::InvalidResponse`] otherwise (a proxy's HTML page, an empty body, ...).
pub(crate) fn parse_error_body(
    action: &str,
    http_status: u16,
    body: &[u8],
    retry_after: Option<Duration>,
    secrets: &[&Secret],
) -> Error {
    match serde_json::from_slice::<ErrorBody>(body) {
        Ok(ErrorBody {
            code: Some(code),
            message,
            request_id,
            recommend,
        }) if !code.is_empty() => ApiError {
            action: action.to_owned(),
            message: shown_message(&code, message.as_deref().unwrap_or_default(), secrets),
            code,
            request_id,
            http_status,
            recommend,
            retry_after,
        }
        .into(),
        parsed => Error::InvalidResponse {
            action: action.to_owned(),
            http_status,
            request_id: parsed.ok().and_then(|b| b.request_id),
            detail: format!(
                "an error status without an error code; body: {}",
                redact(&snippet(body), secrets)
            ),
        },
    }
}

/// Decodes a successful body. With `sensitive`, the decoder's message (which may quote a value
/// from the body, e.g. a credential) is replaced by its category and position.
pub(crate) fn decode_json<T: DeserializeOwned>(
    action: &str,
    response: &RawResponse,
    sensitive: bool,
) -> Result<T, Error> {
    serde_json::from_slice(&response.body).map_err(|e| {
        let detail = if sensitive {
            format!(
                "the body is not the expected JSON ({:?} error at line {} column {})",
                e.classify(),
                e.line(),
                e.column()
            )
        } else if e.is_syntax() || e.is_eof() {
            format!(
                "the body is not JSON ({e}); body: {}",
                snippet(&response.body)
            )
        } else {
            format!("the JSON does not have the documented shape: {e}")
        };
        Error::InvalidResponse {
            action: action.to_owned(),
            http_status: response.http_status,
            request_id: serde_json::from_slice::<RequestIdOnly>(&response.body)
                .ok()
                .and_then(|b| b.request_id),
            detail,
        }
    })
}

/// Decodes a body that carries secrets (STS credentials): decoding errors never quote it.
pub(crate) fn decode_sensitive_json<T: DeserializeOwned>(
    action: &str,
    response: &RawResponse,
) -> Result<T, Error> {
    decode_json(action, response, true)
}

fn snippet(body: &[u8]) -> String {
    const MAX: usize = 200;
    if body.is_empty() {
        return "(empty)".to_owned();
    }
    let text = String::from_utf8_lossy(&body[..body.len().min(MAX)]);
    let mut out: String = text.chars().filter(|c| !c.is_control()).collect();
    if body.len() > MAX {
        out.push_str("...");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_body_becomes_an_api_error_with_redacted_message() {
        let token = Secret::new("sts-token/abc+==");
        let body = br#"{"RequestId":"R1","HostId":"h","Code":"SignatureDoesNotMatch","Message":"Specified signature is not matched with our calculation. server string to sign is:GET&%2F&SecurityToken%3Dsts-token%252Fabc%252B%253D%253D","Recommend":"https://x"}"#;
        let error = parse_error_body("DescribeRegions", 400, body, None, &[&token]);
        let api = error.api().unwrap();
        assert_eq!(api.code, "SignatureDoesNotMatch");
        assert_eq!(api.request_id.as_deref(), Some("R1"));
        assert!(!error.to_string().contains("sts-token"), "{error}");
        assert!(error.is_bad_credentials());
    }

    #[test]
    fn a_signature_error_shows_neither_the_string_to_sign_nor_the_access_key_id() {
        // What ECS answers to a wrong AccessKeySecret: the message quotes the string to sign,
        // AccessKeyId included, percent-encoded once inside it and twice in the query form.
        let credentials = Credentials::new("LTAI5tTenantKeyId42", "wrong-secret-value");
        let secrets = secrets_of(Some(&credentials), &Params::new());
        let secret_refs: Vec<&Secret> = secrets.iter().collect();
        let body = br#"{"RequestId":"4C3B-R2","HostId":"ecs.cn-beijing.aliyuncs.com","Code":"SignatureDoesNotMatch","Message":"Specified signature is not matched with our calculation. server string to sign is:GET&%2F&AccessKeyId%3DLTAI5tTenantKeyId42%26Action%3DDescribeInstances%26Format%3DJSON%26RegionId%3Dcn-beijing%26SignatureMethod%3DHMAC-SHA1%26SignatureNonce%3D5d7c%26SignatureVersion%3D1.0%26Timestamp%3D2026-11-25T10%253A00%253A00Z%26Version%3D2014-05-26","Recommend":"https://api.aliyun.com/troubleshoot?q=SignatureDoesNotMatch"}"#;
        let error = parse_error_body("DescribeInstances", 400, body, None, &secret_refs);
        let shown = error.to_string();
        assert!(!shown.contains("LTAI5tTenantKeyId42"), "{shown}");
        assert!(!shown.contains("AccessKeyId%3D"), "{shown}");
        assert!(!shown.contains("SignatureNonce"), "{shown}");
        assert!(!shown.contains("GET&%2F"), "{shown}");
        assert!(shown.contains("SignatureDoesNotMatch"), "{shown}");
        assert!(
            shown.contains("AccessKeySecret belongs to the AccessKeyId"),
            "{shown}"
        );
        assert!(shown.contains("4C3B-R2"), "the request ID stays: {shown}");
        // An AccessKeyId quoted anywhere else in a message is redacted too.
        let body = br#"{"RequestId":"R3","Code":"InvalidAccessKeyId.Inactive","Message":"Specified access key is disabled: LTAI5tTenantKeyId42"}"#;
        let shown =
            parse_error_body("DescribeInstances", 403, body, None, &secret_refs).to_string();
        assert!(!shown.contains("LTAI5tTenantKeyId42"), "{shown}");
    }

    #[test]
    fn non_json_error_body_is_an_invalid_response() {
        let error = parse_error_body("A", 502, b"<html>Bad Gateway</html>", None, &[]);
        assert!(matches!(
            error,
            Error::InvalidResponse {
                http_status: 502,
                ..
            }
        ));
        assert!(error.is_retryable());
        assert!(error.to_string().contains("Bad Gateway"));
        let error = parse_error_body("A", 400, br#"{"RequestId":"R"}"#, None, &[]);
        assert_eq!(error.request_id(), Some("R"));
        assert!(!error.is_retryable());
    }

    #[test]
    fn bad_success_bodies_are_errors_not_panics() {
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Expected {
            #[serde(rename = "Count")]
            count: u32,
        }
        let response = |body: &[u8]| RawResponse {
            http_status: 200,
            body: body.to_vec(),
        };
        for body in [
            &b""[..],
            b"<xml/>",
            b"{\"Count\":\"x\"}",
            b"[1,2]",
            b"{\"Count\":1",
        ] {
            let error = decode_json::<Expected>("A", &response(body), false).unwrap_err();
            assert!(matches!(error, Error::InvalidResponse { .. }), "{error}");
        }
        let error = decode_json::<Expected>(
            "A",
            &response(br#"{"RequestId":"R","Count":"secret-value"}"#),
            true,
        )
        .unwrap_err();
        assert!(!error.to_string().contains("secret-value"), "{error}");
        assert_eq!(error.request_id(), Some("R"));
    }
}
