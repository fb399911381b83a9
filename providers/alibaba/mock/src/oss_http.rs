//! OSS over HTTP, path-style on the mock's port: `PUT /<bucket>/` (PutBucket),
//! `GET /<bucket>/?prefix=&marker=&max-keys=` (ListObjects), `PUT|GET|DELETE /<bucket>/<object>`.
//! Every request is authenticated as OSS does it, in this order, with OSS's answers:
//! no `Authorization` → 403 `AccessDenied`; not `OSS id:signature` → 400 `InvalidArgument`;
//! no or unparsable `Date` → 403 `AccessDenied`; more than 15 minutes off → 403
//! `RequestTimeTooSkewed`; unknown or disabled key → 403 `InvalidAccessKeyId`; another
//! signature → 403 `SignatureDoesNotMatch` (with the string the mock signed, as OSS does).
//! A signed URL (`?OSSAccessKeyId=&Expires=&Signature=`, OSS's V1 URL signature, `Expires` in
//! place of the date) is checked the same way, after: a signature both in the URL and in the
//! header → 400 `InvalidArgument`; `Expires` passed → 403 `AccessDenied` ("Request has
//! expired."). PutObject keeps the `x-oss-meta-*` headers, which GetObject and HeadObject answer,
//! and takes a body as OSS does (`put_body`: up to 5 GB, with `Content-Length` or chunked).
//! Signatures are verified with alibaba-sdk's [`alibaba_sdk::oss::signature`]. Temporary (STS)
//! keys are not accepted here.

use std::sync::{Arc, Mutex};

use alibaba_sdk::oss::signature::{self, Request};
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use futures::StreamExt as _;
use jiff::{SignedDuration, Timestamp};

use crate::auth::MAX_SKEW;
use crate::locks::{lock, read};
use crate::oss::{OssFailure, OssStore, listing_xml};
use crate::state::Shared;
use alibaba_sdk::oss::META_PREFIX;

#[derive(Clone)]
struct OssState {
    shared: Arc<Shared>,
    store: Arc<Mutex<OssStore>>,
}

/// The OSS routes, with a store of their own.
pub fn router(shared: Arc<Shared>) -> Router {
    let state = OssState {
        shared,
        store: Arc::new(Mutex::new(OssStore::default())),
    };
    Router::new()
        .route("/{bucket}/", any(bucket_call))
        .route("/{bucket}/{*key}", any(object_call))
        .with_state(state)
}

fn request_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..24].to_ascii_uppercase()
}

fn xml_response(status: u16, body: String, request_id: &str) -> Response {
    let mut response = (
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        body,
    )
        .into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/xml"),
    );
    headers.insert(header::SERVER, HeaderValue::from_static("AliyunOSS"));
    if let Ok(id) = HeaderValue::from_str(request_id) {
        headers.insert("x-oss-request-id", id);
    }
    response
}

fn failure(f: &OssFailure, request_id: &str, headers: &HeaderMap) -> Response {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("oss.mock");
    xml_response(f.status, f.body(request_id, host), request_id)
}

/// Checks the request's signature over `resource`.
fn authenticate(
    shared: &Shared,
    method: &Method,
    headers: &HeaderMap,
    resource: String,
    now: Timestamp,
) -> Result<(), OssFailure> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned()
    };
    let authorization = header("authorization");
    if authorization.is_empty() {
        return Err(OssFailure::new(
            403,
            "AccessDenied",
            "You have no right to access this object because of bucket acl.",
        ));
    }
    let (id, provided) = signature::parse_authorization(&authorization).ok_or_else(|| {
        OssFailure::new(400, "InvalidArgument", "Authorization header is invalid.")
    })?;
    let date = header("x-oss-date");
    let date = if date.is_empty() {
        header("date")
    } else {
        date
    };
    let at = signature::parse_http_date(&date).ok_or_else(|| {
        OssFailure::new(
            403,
            "AccessDenied",
            "OSS authentication requires a valid Date.",
        )
    })?;
    let skew = SignedDuration::try_from(MAX_SKEW).unwrap_or(SignedDuration::from_mins(15));
    if now.duration_since(at).abs() > skew {
        return Err(OssFailure::new(
            403,
            "RequestTimeTooSkewed",
            "The difference between the request time and the current time is too large.",
        ));
    }
    let secret = secret_of(shared, id)?;
    let all_headers: Vec<(String, String)> = headers
        .iter()
        .filter_map(|(n, v)| Some((n.as_str().to_owned(), v.to_str().ok()?.to_owned())))
        .collect();
    let string_to_sign = signature::string_to_sign(&Request {
        verb: method.as_str(),
        content_md5: &header("content-md5"),
        content_type: &header("content-type"),
        date: &date,
        headers: all_headers,
        resource,
    });
    if signature::sign(&secret, &string_to_sign) != provided {
        return Err(OssFailure::new(
            403,
            "SignatureDoesNotMatch",
            format!(
                "The request signature we calculated does not match the signature you provided. Check your key and signing method. StringToSign: {string_to_sign:?}"
            ),
        ));
    }
    Ok(())
}

/// The secret of an enabled permanent key.
fn secret_of(shared: &Shared, id: &str) -> Result<String, OssFailure> {
    match read(&shared.keys).permanent_secret(id) {
        Some((secret, true)) => Ok(secret.to_owned()),
        _ => Err(OssFailure::new(
            403,
            "InvalidAccessKeyId",
            "The OSS Access Key Id you provided does not exist in our records.",
        )),
    }
}

/// The query of a V1 signed URL.
#[derive(serde::Deserialize, Default)]
struct UrlSignature {
    #[serde(rename = "OSSAccessKeyId")]
    access_key_id: Option<String>,
    #[serde(rename = "Expires")]
    expires: Option<String>,
    #[serde(rename = "Signature")]
    signature: Option<String>,
}

impl UrlSignature {
    fn present(&self) -> bool {
        self.access_key_id.is_some() || self.signature.is_some()
    }
}

/// Checks a signed URL's signature over `resource`.
fn authenticate_url(
    shared: &Shared,
    method: &Method,
    headers: &HeaderMap,
    query: &UrlSignature,
    resource: String,
    now: Timestamp,
) -> Result<(), OssFailure> {
    if headers.contains_key(header::AUTHORIZATION) {
        return Err(OssFailure::new(
            400,
            "InvalidArgument",
            "Authorization header is invalid: a request may carry its signature in the URL or in the Authorization header, not both.",
        ));
    }
    let (Some(id), Some(expires), Some(provided)) = (
        query.access_key_id.as_deref(),
        query.expires.as_deref(),
        query.signature.as_deref(),
    ) else {
        return Err(OssFailure::new(
            403,
            "AccessDenied",
            "Signed URLs need OSSAccessKeyId, Expires and Signature.",
        ));
    };
    let at: i64 = expires.parse().map_err(|_| {
        OssFailure::new(
            403,
            "AccessDenied",
            "Expires must be a Unix time in seconds.",
        )
    })?;
    if now.as_second() > at {
        return Err(OssFailure::new(403, "AccessDenied", "Request has expired."));
    }
    let secret = secret_of(shared, id)?;
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned()
    };
    let all_headers: Vec<(String, String)> = headers
        .iter()
        .filter_map(|(n, v)| Some((n.as_str().to_owned(), v.to_str().ok()?.to_owned())))
        .collect();
    let string_to_sign = signature::string_to_sign(&Request {
        verb: method.as_str(),
        content_md5: &header("content-md5"),
        content_type: &header("content-type"),
        date: expires,
        headers: all_headers,
        resource,
    });
    if signature::sign(&secret, &string_to_sign) != provided {
        return Err(OssFailure::new(
            403,
            "SignatureDoesNotMatch",
            format!(
                "The request signature we calculated does not match the signature you provided. Check your key and signing method. StringToSign: {string_to_sign:?}"
            ),
        ));
    }
    Ok(())
}

#[derive(serde::Deserialize, Default)]
struct ListQuery {
    #[serde(default)]
    prefix: String,
    #[serde(default)]
    marker: String,
    #[serde(rename = "max-keys")]
    max_keys: Option<String>,
}

async fn bucket_call(
    State(state): State<OssState>,
    Path(bucket): Path<String>,
    Query(query): Query<ListQuery>,
    method: Method,
    headers: HeaderMap,
) -> Response {
    let id = request_id();
    let now = Timestamp::now();
    if let Err(f) = authenticate(
        &state.shared,
        &method,
        &headers,
        signature::canonical_resource(&bucket, None),
        now,
    ) {
        return failure(&f, &id, &headers);
    }
    let mut store = lock(&state.store);
    let result = match method {
        Method::PUT => store
            .put_bucket(&bucket)
            .map(|()| xml_response(200, String::new(), &id)),
        Method::GET => {
            let max_keys = match query.max_keys.as_deref().map(str::parse::<usize>) {
                None => Ok(100),
                Some(Ok(n)) => Ok(n),
                Some(Err(_)) => Err(OssFailure::new(
                    400,
                    "InvalidArgument",
                    "Argument max-keys must be an integer between 1 and 1000.",
                )),
            };
            max_keys.and_then(|max_keys| {
                store
                    .list_objects(&bucket, &query.prefix, &query.marker, max_keys)
                    .map(|listing| {
                        xml_response(
                            200,
                            listing_xml(&bucket, &query.prefix, &query.marker, max_keys, &listing),
                            &id,
                        )
                    })
            })
        }
        _ => Err(OssFailure::new(
            405,
            "MethodNotAllowed",
            "The specified method is not allowed against this resource.",
        )),
    };
    result.unwrap_or_else(|f| failure(&f, &id, &headers))
}

fn object_headers(response: &mut Response, object: &crate::oss::Object, id: &str) {
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    if let Ok(value) = HeaderValue::from_str(&format!("\"{}\"", object.etag)) {
        h.insert(header::ETAG, value);
    }
    if let Ok(value) = HeaderValue::from_str(&signature::http_date(object.last_modified)) {
        h.insert(header::LAST_MODIFIED, value);
    }
    if let Ok(value) = HeaderValue::from_str(id) {
        h.insert("x-oss-request-id", value);
    }
    for (name, value) in &object.meta {
        if let (Ok(name), Ok(value)) = (
            header::HeaderName::from_bytes(format!("{META_PREFIX}{name}").as_bytes()),
            HeaderValue::from_str(value),
        ) {
            h.insert(name, value);
        }
    }
}

async fn object_call(
    State(state): State<OssState>,
    Path((bucket, key)): Path<(String, String)>,
    Query(url_signature): Query<UrlSignature>,
    method: Method,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let id = request_id();
    let now = Timestamp::now();
    let resource = signature::canonical_resource(&bucket, Some(&key));
    let authenticated = if url_signature.present() {
        authenticate_url(
            &state.shared,
            &method,
            &headers,
            &url_signature,
            resource,
            now,
        )
    } else {
        authenticate(&state.shared, &method, &headers, resource, now)
    };
    if let Err(f) = authenticated {
        return failure(&f, &id, &headers);
    }
    // The body is read before the store is locked: a large one takes a while.
    let body = match method {
        Method::PUT => match put_body(&headers, body).await {
            Ok(body) => body,
            Err(f) => return failure(&f, &id, &headers),
        },
        _ => Bytes::new(),
    };
    let mut store = lock(&state.store);
    let result = match method {
        Method::PUT => store
            .put_object(&bucket, &key, body, user_meta(&headers), now)
            .map(|etag| {
                let mut response = xml_response(200, String::new(), &id);
                if let Ok(value) = HeaderValue::from_str(&format!("\"{etag}\"")) {
                    response.headers_mut().insert(header::ETAG, value);
                }
                response
            }),
        Method::GET => store.get_object(&bucket, &key).map(|object| {
            let mut response = (StatusCode::OK, object.bytes.clone()).into_response();
            object_headers(&mut response, object, &id);
            response
        }),
        // HeadObject: GetObject's headers without the body (an error has no body either).
        Method::HEAD => match store.get_object(&bucket, &key) {
            Ok(object) => {
                let mut response = StatusCode::OK.into_response();
                object_headers(&mut response, object, &id);
                if let Ok(value) = HeaderValue::from_str(&object.bytes.len().to_string()) {
                    response.headers_mut().insert(header::CONTENT_LENGTH, value);
                }
                return response;
            }
            Err(f) => {
                let mut response = failure(&f, &id, &headers);
                *response.body_mut() = axum::body::Body::empty();
                return response;
            }
        },
        Method::DELETE => store.delete_object(&bucket, &key).map(|()| {
            let mut response = StatusCode::NO_CONTENT.into_response();
            if let Ok(value) = HeaderValue::from_str(&id) {
                response.headers_mut().insert("x-oss-request-id", value);
            }
            response
        }),
        _ => Err(OssFailure::new(
            405,
            "MethodNotAllowed",
            "The specified method is not allowed against this resource.",
        )),
    };
    result.unwrap_or_else(|f| failure(&f, &id, &headers))
}

/// The largest object one PutObject takes: 5 GB (OSS's limit; larger objects need a multipart
/// upload, which the mock does not serve).
pub const MAX_PUT_BYTES: u64 = 5 * 1024 * 1024 * 1024;

/// A PutObject's body as OSS takes it: its length given (`Content-Length`, or chunked
/// encoding) → else 411 `MissingContentLength`; at most [`MAX_PUT_BYTES`] → else 400
/// `EntityTooLarge`, refused before a byte is read when the length says so; every byte the
/// length promises → else 400 `IncompleteBody`.
async fn put_body(headers: &HeaderMap, body: Body) -> Result<Bytes, OssFailure> {
    let too_large = || {
        OssFailure::new(
            400,
            "EntityTooLarge",
            "Your proposed upload exceeds the maximum allowed size.",
        )
    };
    let chunked = headers
        .get(header::TRANSFER_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    let length = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    match length {
        None if !chunked => {
            return Err(OssFailure::new(
                411,
                "MissingContentLength",
                "You must provide the Content-Length HTTP header.",
            ));
        }
        Some(n) if n > MAX_PUT_BYTES => return Err(too_large()),
        _ => {}
    }
    let mut bytes = Vec::with_capacity(usize::try_from(length.unwrap_or(0)).unwrap_or(0));
    let mut stream = body.into_data_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| {
            OssFailure::new(
                400,
                "IncompleteBody",
                "You did not provide the number of bytes specified by the Content-Length HTTP header.",
            )
        })?;
        if (bytes.len() + chunk.len()) as u64 > MAX_PUT_BYTES {
            return Err(too_large());
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(Bytes::from(bytes))
}

/// The `x-oss-meta-*` headers of a request, by the rest of their name.
fn user_meta(headers: &HeaderMap) -> std::collections::BTreeMap<String, String> {
    headers
        .iter()
        .filter_map(|(name, value)| {
            let name = name.as_str().strip_prefix(META_PREFIX)?;
            Some((name.to_owned(), value.to_str().ok()?.to_owned()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(n, v)| (n.clone(), HeaderValue::from_str(v).expect("header value")))
            .collect()
    }

    #[tokio::test]
    async fn a_put_body_needs_a_length_and_at_most_five_gigabytes() {
        let missing = put_body(&headers(&[]), Body::from("abc"))
            .await
            .expect_err("no length given");
        assert_eq!(
            (missing.status, missing.code),
            (411, "MissingContentLength")
        );
        let declared = (MAX_PUT_BYTES + 1).to_string();
        let large = put_body(
            &headers(&[(header::CONTENT_LENGTH, declared.as_str())]),
            Body::from("abc"),
        )
        .await
        .expect_err("refused by its length, before the body");
        assert_eq!((large.status, large.code), (400, "EntityTooLarge"));
        let chunked = put_body(
            &headers(&[(header::TRANSFER_ENCODING, "chunked")]),
            Body::from("abc"),
        )
        .await
        .expect("chunked encoding gives no length up front");
        assert_eq!(chunked, b"abc"[..]);
        let three_megabytes = vec![7u8; 3 << 20];
        let read = put_body(
            &headers(&[(header::CONTENT_LENGTH, &three_megabytes.len().to_string())]),
            Body::from(three_megabytes.clone()),
        )
        .await
        .expect("past axum's default limit of 2 MB");
        assert_eq!(read, three_megabytes);
    }
}
