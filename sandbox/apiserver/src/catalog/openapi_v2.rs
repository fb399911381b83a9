//! `/openapi/v2`: kubectl downloads it (in protobuf) to validate the items of a `kind: List`
//! and as a fallback of its patch code. A Swagger 2.0 document without definitions serves both.

use serde_json::{Value, json};

use crate::catalog::discovery::GIT_VERSION;

/// The media type kubectl asks `/openapi/v2` for: gnostic's `openapi_v2.Document` in protobuf.
pub const PROTOBUF: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
/// How kube-apiserver labels that answer (Go's mime parser refuses the `@` of the request's).
pub const PROTOBUF_ANSWER: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// `/openapi/v2` as JSON: a Swagger 2.0 document without definitions. kubectl's client-side
/// validation (it validates each item of a `kind: List` against it) skips kinds it has no
/// definition for, and its patch code falls back to OpenAPI v3 and the built-in types; the
/// server-side `fieldValidation` still checks every object.
pub fn document() -> Value {
    json!({
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": GIT_VERSION},
        "paths": {},
        "definitions": {},
    })
}

/// [`document`] in protobuf (`openapi_v2.Document`: `swagger` = 1, `info` = 2 with `title` = 1 and
/// `version` = 2, `paths` = 8).
pub fn protobuf() -> Vec<u8> {
    fn field(out: &mut Vec<u8>, number: u8, bytes: &[u8]) {
        out.push((number << 3) | 2);
        let mut length = bytes.len();
        loop {
            let byte = (length & 0x7f) as u8;
            length >>= 7;
            if length == 0 {
                out.push(byte);
                break;
            }
            out.push(byte | 0x80);
        }
        out.extend_from_slice(bytes);
    }
    let mut info = Vec::new();
    field(&mut info, 1, b"Kubernetes");
    field(&mut info, 2, GIT_VERSION.as_bytes());
    let mut document = Vec::new();
    field(&mut document, 1, b"2.0");
    field(&mut document, 2, &info);
    field(&mut document, 8, &[]);
    document
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes gnostic decodes: swagger "2.0", info {title, version}, empty paths.
    #[test]
    fn protobuf_document_fields() {
        let bytes = protobuf();
        let mut expected = vec![0x0a, 3];
        expected.extend_from_slice(b"2.0");
        let info_len = 2 + 10 + 2 + GIT_VERSION.len();
        expected.extend_from_slice(&[0x12, info_len as u8, 0x0a, 10]);
        expected.extend_from_slice(b"Kubernetes");
        expected.extend_from_slice(&[0x12, GIT_VERSION.len() as u8]);
        expected.extend_from_slice(GIT_VERSION.as_bytes());
        expected.extend_from_slice(&[0x42, 0]);
        assert_eq!(bytes, expected);
        assert_eq!(document()["swagger"], "2.0");
    }
}
