//! Kubernetes protobuf request bodies for the simple kinds kubectl's generators create
//! (`kubectl create namespace|configmap|secret|serviceaccount` send
//! `application/vnd.kubernetes.protobuf`), decoded to JSON with a field table per message.
//!
//! The envelope is the magic `k8s\0` followed by a `runtime.Unknown` whose `raw` field holds the
//! object. Other kinds answer 415 (see the README).

use base64::Engine as _;
use serde_json::{Map, Value, json};

use crate::error::{ApiError, ApiResult};

pub const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// How one field number decodes.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Str,
    Int,
    Bool,
    RepeatedStr,
    /// `map<string, string>`.
    MapStr,
    /// `map<string, bytes>`, values base64.
    MapBytes,
    /// `meta.v1.Time`, as RFC 3339.
    Time,
    Message(&'static [Field]),
    RepeatedMessage(&'static [Field]),
}

type Field = (u64, &'static str, Kind);

const OWNER_REFERENCE: &[Field] = &[
    (1, "kind", Kind::Str),
    (3, "name", Kind::Str),
    (4, "uid", Kind::Str),
    (5, "apiVersion", Kind::Str),
    (6, "controller", Kind::Bool),
    (7, "blockOwnerDeletion", Kind::Bool),
];

const OBJECT_META: &[Field] = &[
    (1, "name", Kind::Str),
    (2, "generateName", Kind::Str),
    (3, "namespace", Kind::Str),
    (5, "uid", Kind::Str),
    (6, "resourceVersion", Kind::Str),
    (7, "generation", Kind::Int),
    (8, "creationTimestamp", Kind::Time),
    (11, "labels", Kind::MapStr),
    (12, "annotations", Kind::MapStr),
    (
        13,
        "ownerReferences",
        Kind::RepeatedMessage(OWNER_REFERENCE),
    ),
    (14, "finalizers", Kind::RepeatedStr),
];

const CONFIG_MAP: &[Field] = &[
    (1, "metadata", Kind::Message(OBJECT_META)),
    (2, "data", Kind::MapStr),
    (3, "binaryData", Kind::MapBytes),
    (4, "immutable", Kind::Bool),
];

const SECRET: &[Field] = &[
    (1, "metadata", Kind::Message(OBJECT_META)),
    (2, "data", Kind::MapBytes),
    (3, "type", Kind::Str),
    (4, "stringData", Kind::MapStr),
    (5, "immutable", Kind::Bool),
];

const NAMESPACE: &[Field] = &[
    (1, "metadata", Kind::Message(OBJECT_META)),
    (
        2,
        "spec",
        Kind::Message(&[(1, "finalizers", Kind::RepeatedStr)]),
    ),
];

const LOCAL_REFERENCE: &[Field] = &[(1, "name", Kind::Str)];

const SERVICE_ACCOUNT: &[Field] = &[
    (1, "metadata", Kind::Message(OBJECT_META)),
    (
        3,
        "imagePullSecrets",
        Kind::RepeatedMessage(LOCAL_REFERENCE),
    ),
    (4, "automountServiceAccountToken", Kind::Bool),
];

const RESOURCE_ATTRIBUTES: &[Field] = &[
    (1, "namespace", Kind::Str),
    (2, "verb", Kind::Str),
    (3, "group", Kind::Str),
    (4, "version", Kind::Str),
    (5, "resource", Kind::Str),
    (6, "subresource", Kind::Str),
    (7, "name", Kind::Str),
];

const NON_RESOURCE_ATTRIBUTES: &[Field] = &[(1, "path", Kind::Str), (2, "verb", Kind::Str)];

/// What `kubectl auth can-i` sends.
const SELF_SUBJECT_ACCESS_REVIEW: &[Field] = &[
    (1, "metadata", Kind::Message(OBJECT_META)),
    (
        2,
        "spec",
        Kind::Message(&[
            (1, "resourceAttributes", Kind::Message(RESOURCE_ATTRIBUTES)),
            (
                2,
                "nonResourceAttributes",
                Kind::Message(NON_RESOURCE_ATTRIBUTES),
            ),
        ]),
    ),
];

const TYPE_META: &[Field] = &[(1, "apiVersion", Kind::Str), (2, "kind", Kind::Str)];

fn malformed(why: &str) -> ApiError {
    ApiError::bad_request(format!("failed to decode the protobuf body: {why}"))
}

struct Reader<'a> {
    bytes: &'a [u8],
}

/// One field as read off the wire.
enum Wire<'a> {
    Varint(u64),
    Length(&'a [u8]),
    Fixed,
}

impl<'a> Reader<'a> {
    fn varint(&mut self) -> ApiResult<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let (&byte, rest) = self
                .bytes
                .split_first()
                .ok_or_else(|| malformed("truncated varint"))?;
            self.bytes = rest;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(malformed("varint too long"))
    }

    fn take(&mut self, n: usize) -> ApiResult<&'a [u8]> {
        if n > self.bytes.len() {
            return Err(malformed("truncated field"));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn next(&mut self) -> ApiResult<Option<(u64, Wire<'a>)>> {
        if self.bytes.is_empty() {
            return Ok(None);
        }
        let key = self.varint()?;
        let wire = match key & 7 {
            0 => Wire::Varint(self.varint()?),
            1 => {
                self.take(8)?;
                Wire::Fixed
            }
            2 => {
                let length =
                    usize::try_from(self.varint()?).map_err(|_| malformed("length overflow"))?;
                Wire::Length(self.take(length)?)
            }
            5 => {
                self.take(4)?;
                Wire::Fixed
            }
            other => return Err(malformed(&format!("unsupported wire type {other}"))),
        };
        Ok(Some((key >> 3, wire)))
    }
}

fn text(bytes: &[u8]) -> ApiResult<String> {
    String::from_utf8(bytes.to_vec()).map_err(|_| malformed("a string is not UTF-8"))
}

fn map_entry(bytes: &[u8], base64_values: bool) -> ApiResult<(String, Value)> {
    let mut reader = Reader { bytes };
    let (mut key, mut value) = (String::new(), Value::String(String::new()));
    while let Some((number, wire)) = reader.next()? {
        if let Wire::Length(raw) = wire {
            match number {
                1 => key = text(raw)?,
                2 if base64_values => {
                    value = json!(base64::engine::general_purpose::STANDARD.encode(raw))
                }
                2 => value = json!(text(raw)?),
                _ => {}
            }
        }
    }
    Ok((key, value))
}

fn time(bytes: &[u8]) -> ApiResult<Value> {
    let mut reader = Reader { bytes };
    let mut seconds = 0i64;
    while let Some((number, wire)) = reader.next()? {
        if let (1, Wire::Varint(v)) = (number, wire) {
            seconds = v as i64;
        }
    }
    let timestamp =
        jiff::Timestamp::from_second(seconds).map_err(|_| malformed("time out of range"))?;
    Ok(json!(timestamp.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()))
}

fn message(bytes: &[u8], fields: &[Field]) -> ApiResult<Value> {
    let mut out = Map::new();
    let mut reader = Reader { bytes };
    while let Some((number, wire)) = reader.next()? {
        let Some(&(_, name, kind)) = fields.iter().find(|(n, _, _)| *n == number) else {
            continue;
        };
        match (kind, wire) {
            (Kind::Str, Wire::Length(raw)) => {
                out.insert(name.into(), json!(text(raw)?));
            }
            (Kind::Int, Wire::Varint(v)) => {
                out.insert(name.into(), json!(v as i64));
            }
            (Kind::Bool, Wire::Varint(v)) => {
                out.insert(name.into(), json!(v != 0));
            }
            (Kind::RepeatedStr, Wire::Length(raw)) => push(&mut out, name, json!(text(raw)?)),
            (Kind::MapStr | Kind::MapBytes, Wire::Length(raw)) => {
                let (key, value) = map_entry(raw, matches!(kind, Kind::MapBytes))?;
                if let Value::Object(map) = out.entry(name).or_insert_with(|| json!({})) {
                    map.insert(key, value);
                }
            }
            (Kind::Time, Wire::Length(raw)) => {
                out.insert(name.into(), time(raw)?);
            }
            (Kind::Message(inner), Wire::Length(raw)) => {
                out.insert(name.into(), message(raw, inner)?);
            }
            (Kind::RepeatedMessage(inner), Wire::Length(raw)) => {
                push(&mut out, name, message(raw, inner)?)
            }
            _ => return Err(malformed(&format!("field {name} has the wrong wire type"))),
        }
    }
    Ok(Value::Object(out))
}

fn push(out: &mut Map<String, Value>, name: &str, value: Value) {
    if let Value::Array(list) = out.entry(name).or_insert_with(|| json!([])) {
        list.push(value);
    }
}

/// Decodes a protobuf body of one of the supported kinds into JSON.
pub fn decode(bytes: &[u8]) -> ApiResult<Value> {
    let envelope = bytes
        .strip_prefix(b"k8s\0")
        .ok_or_else(|| malformed("missing the k8s protobuf magic"))?;
    let mut reader = Reader { bytes: envelope };
    let (mut type_meta, mut raw) = (json!({}), None);
    while let Some((number, wire)) = reader.next()? {
        match (number, wire) {
            (1, Wire::Length(bytes)) => type_meta = message(bytes, TYPE_META)?,
            (2, Wire::Length(bytes)) => raw = Some(bytes),
            _ => {}
        }
    }
    let api_version = type_meta["apiVersion"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let kind = type_meta["kind"].as_str().unwrap_or_default().to_owned();
    let fields = match (api_version.as_str(), kind.as_str()) {
        ("v1", "ConfigMap") => CONFIG_MAP,
        ("v1", "Secret") => SECRET,
        ("v1", "Namespace") => NAMESPACE,
        ("v1", "ServiceAccount") => SERVICE_ACCOUNT,
        ("authorization.k8s.io/v1", "SelfSubjectAccessReview") => SELF_SUBJECT_ACCESS_REVIEW,
        _ => {
            return Err(ApiError::unsupported_media_type(
                &format!("{MEDIA_TYPE} ({api_version} {kind})"),
                &["application/json", "application/yaml"],
            ));
        }
    };
    let mut object = message(raw.unwrap_or_default(), fields)?;
    object["apiVersion"] = json!(api_version);
    object["kind"] = json!(kind);
    Ok(object)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn varint(mut v: u64, out: &mut Vec<u8>) {
        loop {
            let byte = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }

    fn field(number: u64, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        varint(number << 3 | 2, &mut out);
        varint(payload.len() as u64, &mut out);
        out.extend_from_slice(payload);
        out
    }

    fn entry(key: &str, value: &[u8]) -> Vec<u8> {
        [field(1, key.as_bytes()), field(2, value)].concat()
    }

    fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
        let type_meta = [field(1, api_version.as_bytes()), field(2, kind.as_bytes())].concat();
        [b"k8s\0".to_vec(), field(1, &type_meta), field(2, raw)].concat()
    }

    #[test]
    fn decodes_a_secret_with_labels_and_binary_data() {
        let meta = [
            field(1, b"creds"),
            field(3, b"team"),
            field(11, &entry("app", b"web")),
        ]
        .concat();
        let raw = [
            field(1, &meta),
            field(2, &entry("key", &[0, 159, 255])),
            field(3, b"Opaque"),
        ]
        .concat();
        let object = decode(&envelope("v1", "Secret", &raw)).expect("decodes");
        assert_eq!(
            object,
            json!({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                   "metadata": {"name": "creds", "namespace": "team", "labels": {"app": "web"}},
                   "data": {"key": "AJ//"}})
        );
    }

    #[test]
    fn unsupported_kinds_and_garbage_are_rejected() {
        assert_eq!(
            decode(&envelope("apps/v1", "Deployment", &[]))
                .expect_err("unsupported")
                .code,
            415
        );
        assert_eq!(decode(b"k8s\0\x0a\xff").expect_err("truncated").code, 400);
        assert_eq!(decode(b"{}").expect_err("no magic").code, 400);
    }
}
