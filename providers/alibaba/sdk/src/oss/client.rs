//! [`OssClient`]: signed PutObject (with user metadata; bytes or a stream, [`ObjectBody`]), GetObject, HeadObject, ListObjects,
//! DeleteObject and PutBucket, and V1 signed URLs for GetObject ([`OssClient::presign_get`]).

use std::collections::BTreeMap;

use jiff::Timestamp;
use reqwest::Method;
use reqwest::header::{AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, DATE, HeaderValue};

use super::signature::{self, Request};
use super::xml;
use crate::credentials::Credentials;

/// How the bucket is addressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Addressing {
    /// `https://<bucket>.<endpoint host>/<object>`: what OSS serves.
    VirtualHosted,
    /// `<endpoint>/<bucket>/<object>`: one host for every bucket (the mock, a proxy).
    Path,
}

/// Why an OSS call failed. Never carries the AccessKeySecret or the signature.
#[derive(Debug, thiserror::Error)]
pub enum OssError {
    #[error("OSS answered {action} with HTTP {status} {code}: {message} (request {request_id})")]
    Api {
        action: &'static str,
        status: u16,
        code: String,
        message: String,
        request_id: String,
    },
    #[error("OSS is unreachable for {action}: {source}")]
    Transport {
        action: &'static str,
        #[source]
        source: reqwest::Error,
    },
    #[error("unexpected answer from OSS to {action}: {detail}")]
    Decode {
        action: &'static str,
        detail: String,
    },
}

impl OssError {
    /// The OSS error code (`NoSuchKey`, `SignatureDoesNotMatch`, ...), if OSS answered one.
    pub fn code(&self) -> Option<&str> {
        match self {
            OssError::Api { code, .. } => Some(code),
            _ => None,
        }
    }
}

/// One object of a listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectSummary {
    pub key: String,
    pub size: u64,
    /// As OSS writes it, ISO 8601 (`2026-11-26T09:00:00.000Z`).
    pub last_modified: String,
    pub etag: String,
}

/// What HeadObject tells about an object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectHead {
    pub size: u64,
    pub etag: String,
    /// User metadata (`x-oss-meta-<name>` headers), by `<name>` lowercased.
    pub meta: BTreeMap<String, String>,
}

/// The header prefix of user metadata.
pub const META_PREFIX: &str = "x-oss-meta-";

/// A page of ListObjects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectsPage {
    pub objects: Vec<ObjectSummary>,
    /// Where the next page starts, when the listing is truncated.
    pub next_marker: Option<String>,
}

/// What a request carries besides its address: a body with its content type, and `x-oss-*`
/// headers (signed).
#[derive(Default)]
struct Payload<'a> {
    body: Option<(ObjectBody, &'a str)>,
    headers: Vec<(String, String)>,
}

/// The body of a PutObject: bytes in memory, or a stream of a length known beforehand (a file),
/// sent with `Content-Length` so that nothing is buffered and OSS can refuse a size at once.
pub struct ObjectBody {
    body: reqwest::Body,
    length: u64,
}

impl ObjectBody {
    /// A stream of exactly `length` bytes; a stream that ends early or runs long fails the
    /// request.
    pub fn stream(body: reqwest::Body, length: u64) -> Self {
        Self { body, length }
    }

    pub fn len(&self) -> u64 {
        self.length
    }

    pub fn is_empty(&self) -> bool {
        self.length == 0
    }
}

impl From<Vec<u8>> for ObjectBody {
    fn from(bytes: Vec<u8>) -> Self {
        Self {
            length: bytes.len() as u64,
            body: reqwest::Body::from(bytes),
        }
    }
}

/// A client of one OSS endpoint with one set of credentials.
#[derive(Clone)]
pub struct OssClient {
    http: reqwest::Client,
    endpoint: url::Url,
    addressing: Addressing,
    credentials: Credentials,
}

impl std::fmt::Debug for OssClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OssClient")
            .field("endpoint", &self.endpoint.as_str())
            .field("addressing", &self.addressing)
            .finish_non_exhaustive()
    }
}

/// Object names in a URL path: each byte outside the unreserved set percent-encoded, `/` kept.
fn encode_key(key: &str) -> String {
    key.split('/')
        .map(crate::signature::percent_encode)
        .collect::<Vec<_>>()
        .join("/")
}

impl OssClient {
    /// `endpoint` is `https://oss-cn-hangzhou.aliyuncs.com` (virtual-hosted) or the base URL
    /// of a path-style service.
    pub fn new(
        http: reqwest::Client,
        endpoint: url::Url,
        addressing: Addressing,
        credentials: Credentials,
    ) -> Self {
        Self {
            http,
            endpoint,
            addressing,
            credentials,
        }
    }

    fn url(
        &self,
        bucket: &str,
        key: Option<&str>,
        query: &[(&str, &str)],
    ) -> Result<url::Url, OssError> {
        let bad = |detail: String| OssError::Decode {
            action: "building the URL",
            detail,
        };
        let path = key.map(encode_key).unwrap_or_default();
        let mut url = match self.addressing {
            Addressing::Path => {
                let base = self.endpoint.as_str().trim_end_matches('/');
                url::Url::parse(&format!("{base}/{bucket}/{path}"))
                    .map_err(|e| bad(e.to_string()))?
            }
            Addressing::VirtualHosted => {
                let mut url = self.endpoint.clone();
                let host = url.host_str().unwrap_or_default().to_owned();
                url.set_host(Some(&format!("{bucket}.{host}")))
                    .map_err(|e| bad(e.to_string()))?;
                url.set_path(&format!("/{path}"));
                url
            }
        };
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        Ok(url)
    }

    /// Sends a signed request; an error answer becomes [`OssError::Api`].
    async fn send(
        &self,
        action: &'static str,
        method: Method,
        bucket: &str,
        key: Option<&str>,
        query: &[(&str, &str)],
        payload: Payload<'_>,
    ) -> Result<reqwest::Response, OssError> {
        let Payload { body, headers } = payload;
        let date = signature::http_date(Timestamp::now());
        let content_type = body.as_ref().map_or("", |(_, t)| *t);
        let mut oss_headers = headers;
        if let Some(token) = &self.credentials.security_token {
            oss_headers.push(("x-oss-security-token".to_owned(), token.expose().to_owned()));
        }
        let string_to_sign = signature::string_to_sign(&Request {
            verb: method.as_str(),
            content_md5: "",
            content_type,
            date: &date,
            headers: oss_headers.clone(),
            resource: signature::canonical_resource(bucket, key),
        });
        let signed = signature::sign(self.credentials.access_key_secret.expose(), &string_to_sign);
        let authorization = signature::authorization(&self.credentials.access_key_id, &signed);
        let mut request = self
            .http
            .request(method, self.url(bucket, key, query)?)
            .header(DATE, date)
            .header(
                AUTHORIZATION,
                HeaderValue::from_str(&authorization).map_err(|e| OssError::Decode {
                    action,
                    detail: format!("the AccessKeyId does not fit a header: {e}"),
                })?,
            );
        for (name, value) in oss_headers {
            request = request.header(name, value);
        }
        if let Some((object, content_type)) = body {
            request = request
                .header(CONTENT_TYPE, content_type)
                .header(CONTENT_LENGTH, object.length)
                .body(object.body);
        }
        let response = request
            .send()
            .await
            .map_err(|source| OssError::Transport { action, source })?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let request_id = response
            .headers()
            .get("x-oss-request-id")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let text = response.text().await.unwrap_or_default();
        // A HEAD answer has no body: its status is all there is.
        let code = xml::text(&text, "Code").unwrap_or_else(|| match status.as_u16() {
            404 => "NoSuchKey".to_owned(),
            403 => "AccessDenied".to_owned(),
            _ => "Unknown".to_owned(),
        });
        Err(OssError::Api {
            action,
            status: status.as_u16(),
            code,
            message: xml::text(&text, "Message").unwrap_or_default(),
            request_id: xml::text(&text, "RequestId").unwrap_or(request_id),
        })
    }

    /// PutBucket: creates `bucket` (in tests; real buckets are made by their owners).
    pub async fn put_bucket(&self, bucket: &str) -> Result<(), OssError> {
        self.send(
            "PutBucket",
            Method::PUT,
            bucket,
            None,
            &[],
            Payload::default(),
        )
        .await
        .map(|_| ())
    }

    /// PutObject: writes `bytes` as `key`; returns the ETag.
    pub async fn put_object(
        &self,
        bucket: &str,
        key: &str,
        bytes: Vec<u8>,
    ) -> Result<String, OssError> {
        self.put_object_with_meta(bucket, key, bytes, &[]).await
    }

    /// PutObject with user metadata: each `(name, value)` becomes `x-oss-meta-<name>` (names
    /// lowercase; OSS keeps them with the object and answers them to HeadObject and GetObject).
    /// `body` is bytes or a stream of known length ([`ObjectBody`]); OSS takes up to 5 GB.
    pub async fn put_object_with_meta(
        &self,
        bucket: &str,
        key: &str,
        body: impl Into<ObjectBody>,
        meta: &[(&str, &str)],
    ) -> Result<String, OssError> {
        let headers: Vec<(String, String)> = meta
            .iter()
            .map(|(n, v)| {
                (
                    format!("{META_PREFIX}{}", n.to_ascii_lowercase()),
                    (*v).to_owned(),
                )
            })
            .collect();
        let response = self
            .send(
                "PutObject",
                Method::PUT,
                bucket,
                Some(key),
                &[],
                Payload {
                    body: Some((body.into(), "application/octet-stream")),
                    headers,
                },
            )
            .await?;
        Ok(response
            .headers()
            .get("etag")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .trim_matches('"')
            .to_owned())
    }

    /// GetObject: the bytes of `key`.
    pub async fn get_object(&self, bucket: &str, key: &str) -> Result<Vec<u8>, OssError> {
        let response = self
            .send(
                "GetObject",
                Method::GET,
                bucket,
                Some(key),
                &[],
                Payload::default(),
            )
            .await?;
        response
            .bytes()
            .await
            .map(|b| b.to_vec())
            .map_err(|source| OssError::Transport {
                action: "GetObject",
                source,
            })
    }

    /// HeadObject: the size, ETag and user metadata of `key` (`NoSuchKey` when missing).
    pub async fn head_object(&self, bucket: &str, key: &str) -> Result<ObjectHead, OssError> {
        let response = self
            .send(
                "HeadObject",
                Method::HEAD,
                bucket,
                Some(key),
                &[],
                Payload::default(),
            )
            .await?;
        let headers = response.headers();
        let meta = headers
            .iter()
            .filter_map(|(name, value)| {
                let name = name.as_str().strip_prefix(META_PREFIX)?;
                Some((name.to_owned(), value.to_str().ok()?.to_owned()))
            })
            .collect();
        Ok(ObjectHead {
            size: headers
                .get(reqwest::header::CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse().ok())
                .unwrap_or(0),
            etag: headers
                .get("etag")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .trim_matches('"')
                .to_owned(),
            meta,
        })
    }

    /// DeleteObject: removes `key` (OSS answers 204 also when it does not exist).
    pub async fn delete_object(&self, bucket: &str, key: &str) -> Result<(), OssError> {
        self.send(
            "DeleteObject",
            Method::DELETE,
            bucket,
            Some(key),
            &[],
            Payload::default(),
        )
        .await
        .map(|_| ())
    }

    /// A V1 signed URL for GetObject of `key`, valid until `expires`: anyone holding it may
    /// read the object until then, without credentials (OSS answers 403 `AccessDenied` after).
    /// With temporary credentials the URL carries the security token, which is signed too.
    pub fn presign_get(
        &self,
        bucket: &str,
        key: &str,
        expires: Timestamp,
    ) -> Result<url::Url, OssError> {
        let expires = expires.as_second().to_string();
        let token = self
            .credentials
            .security_token
            .as_ref()
            .map(|t| t.expose().to_owned());
        let mut resource = signature::canonical_resource(bucket, Some(key));
        if let Some(token) = &token {
            resource.push_str(&format!("?security-token={token}"));
        }
        let string_to_sign = signature::string_to_sign(&Request {
            verb: "GET",
            content_md5: "",
            content_type: "",
            date: &expires,
            headers: Vec::new(),
            resource,
        });
        let signed = signature::sign(self.credentials.access_key_secret.expose(), &string_to_sign);
        let mut query = vec![
            ("OSSAccessKeyId", self.credentials.access_key_id.as_str()),
            ("Expires", expires.as_str()),
            ("Signature", signed.as_str()),
        ];
        if let Some(token) = &token {
            query.push(("security-token", token.as_str()));
        }
        self.url(bucket, Some(key), &query)
    }

    /// ListObjects: one page of the objects under `prefix`, from `marker` on.
    pub async fn list_objects(
        &self,
        bucket: &str,
        prefix: &str,
        marker: Option<&str>,
    ) -> Result<ObjectsPage, OssError> {
        let mut query = vec![("prefix", prefix), ("max-keys", "1000")];
        if let Some(marker) = marker {
            query.push(("marker", marker));
        }
        let text = self
            .send(
                "ListObjects",
                Method::GET,
                bucket,
                None,
                &query,
                Payload::default(),
            )
            .await?
            .text()
            .await
            .map_err(|source| OssError::Transport {
                action: "ListObjects",
                source,
            })?;
        if xml::all(&text, "ListBucketResult").is_empty() {
            return Err(OssError::Decode {
                action: "ListObjects",
                detail: "no ListBucketResult in the answer".to_owned(),
            });
        }
        let objects = xml::all(&text, "Contents")
            .into_iter()
            .map(|c| ObjectSummary {
                key: xml::text(c, "Key").unwrap_or_default(),
                size: xml::text(c, "Size")
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0),
                last_modified: xml::text(c, "LastModified").unwrap_or_default(),
                etag: xml::text(c, "ETag")
                    .unwrap_or_default()
                    .trim_matches('"')
                    .to_owned(),
            })
            .collect();
        let truncated = xml::text(&text, "IsTruncated").as_deref() == Some("true");
        Ok(ObjectsPage {
            objects,
            next_marker: truncated.then(|| xml::text(&text, "NextMarker")).flatten(),
        })
    }
}
