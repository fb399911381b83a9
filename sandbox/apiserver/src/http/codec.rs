//! Request decoding (JSON or YAML bodies, content types, query strings) and response encoding,
//! errors included (as `Status` objects).

use std::collections::HashMap;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::http::protobuf;

/// The apiserver's request body limit.
pub const MAX_BODY: usize = 3 * 1024 * 1024;

/// Query parameters; the last occurrence wins, empty keys (`?&a=b`) are ignored.
#[derive(Debug, Clone, Default)]
pub struct Query(HashMap<String, String>);

impl Query {
    pub fn parse(raw: Option<&str>) -> Self {
        let pairs = url::form_urlencoded::parse(raw.unwrap_or_default().as_bytes())
            .filter(|(k, _)| !k.is_empty())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        Self(pairs)
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    pub fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true" | "1"))
    }
}

/// The media type of a request body, without parameters.
pub fn content_type(headers: &HeaderMap) -> String {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_default()
}

/// Decodes a JSON or YAML document into a JSON value.
pub fn decode(bytes: &[u8], media_type: &str) -> ApiResult<Value> {
    let yaml = media_type.contains("yaml");
    if yaml {
        let text = std::str::from_utf8(bytes)
            .map_err(|e| ApiError::bad_request(format!("error converting YAML to JSON: {e}")))?;
        // JSON is YAML, but a JSON parser reports JSON errors better.
        if let Ok(value) = serde_json::from_str::<Value>(text) {
            return Ok(value);
        }
        return serde_saphyr::from_str::<Value>(text)
            .map_err(|e| ApiError::bad_request(format!("error converting YAML to JSON: {e}")));
    }
    serde_json::from_slice(bytes).map_err(|e| {
        ApiError::bad_request(format!("couldn't get version/kind; json parse error: {e}"))
    })
}

/// Decodes the body of a POST or PUT.
pub fn decode_object(bytes: &[u8], headers: &HeaderMap) -> ApiResult<Value> {
    let media_type = content_type(headers);
    if media_type == protobuf::MEDIA_TYPE {
        return protobuf::decode(bytes);
    }
    match media_type.as_str() {
        "" | "application/json" | "application/yaml" | "application/x-yaml" | "text/yaml" => {}
        other => {
            return Err(ApiError::unsupported_media_type(
                other,
                &["application/json", "application/yaml"],
            ));
        }
    }
    let value = decode(bytes, &media_type)?;
    if !value.is_object() {
        return Err(ApiError::bad_request(
            "couldn't get version/kind; json parse error: the body must be an object",
        ));
    }
    Ok(value)
}

/// What the client asked to get back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Object,
    Table,
    Metadata,
}

pub fn shape(headers: &HeaderMap) -> Shape {
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    // The first acceptable alternative wins; JSON stands in for protobuf.
    for alternative in accept.split(',') {
        if alternative.contains("as=Table") {
            return Shape::Table;
        }
        if alternative.contains("as=PartialObjectMetadata") {
            return Shape::Metadata;
        }
        if alternative.contains("json")
            || alternative.contains("*/*")
            || alternative.contains("protobuf")
        {
            return Shape::Object;
        }
    }
    Shape::Object
}

/// A JSON response.
pub fn json_response(
    code: StatusCode,
    value: &Value,
    content_type: &'static str,
    warnings: &[String],
) -> Response {
    let body = serde_json::to_vec(value).unwrap_or_default();
    let mut response = (code, [(header::CONTENT_TYPE, content_type)], body).into_response();
    for warning in warnings {
        let text = format!("299 - {:?}", warning);
        if let Ok(value) = HeaderValue::from_str(&text) {
            response.headers_mut().append(header::WARNING, value);
        }
    }
    response
}

pub fn ok(value: &Value) -> Response {
    json_response(StatusCode::OK, value, "application/json", &[])
}

pub const TABLE_CONTENT_TYPE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";
pub const METADATA_CONTENT_TYPE: &str =
    "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io";
pub const METADATA_LIST_CONTENT_TYPE: &str =
    "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io";

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = serde_json::to_vec(&self.status()).unwrap_or_default();
        (code, [(header::CONTENT_TYPE, "application/json")], body).into_response()
    }
}

/// The PartialObjectMetadata of an object.
pub fn partial_metadata(object: &Value) -> Value {
    serde_json::json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": object.get("metadata").cloned().unwrap_or_else(|| serde_json::json!({})),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_tolerates_empty_pairs_and_encoding() {
        let q = Query::parse(Some("&labelSelector=app%3Dweb%2Ctier+in+%28a%29&watch=1"));
        assert_eq!(q.get("labelSelector"), Some("app=web,tier in (a)"));
        assert!(q.flag("watch"));
    }

    #[test]
    fn decode_reports_malformed_bodies() {
        assert_eq!(decode(b"{", "application/json").expect_err("bad").code, 400);
        assert_eq!(
            decode(b"a: [", "application/yaml").expect_err("bad").code,
            400
        );
        assert_eq!(
            decode(b"a: 1\nb: [x]", "application/yaml").expect("yaml"),
            serde_json::json!({"a": 1, "b": ["x"]})
        );
    }

    #[test]
    fn accept_header_picks_the_shape() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT,
            HeaderValue::from_static(
                "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
            ),
        );
        assert_eq!(shape(&headers), Shape::Table);
        headers.insert(
            header::ACCEPT,
            HeaderValue::from_static("application/vnd.kubernetes.protobuf, */*"),
        );
        assert_eq!(shape(&headers), Shape::Object);
    }
}
