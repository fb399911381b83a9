//! Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`, what kubectl's
//! generators and client-go's typed clients send) decoded to JSON for every built-in kind.
//!
//! The envelope is the magic `k8s\0` followed by a `runtime.Unknown` whose `typeMeta` names the
//! kind and whose `raw` field holds the object. Each message is read with its field table
//! (`protobuf/fields.json.gz`: field numbers and wire kinds from kube-rs's k8s-pb types,
//! JSON names from the real apiserver's OpenAPI; see `protobuf/generate.py`), and the
//! apimachinery types with their own JSON form (Time, MicroTime, Duration, IntOrString,
//! Quantity, FieldsV1, RawExtension, apiextensions JSON) are rendered as JSON renders them.

use std::collections::HashMap;
use std::io::Read;
use std::sync::OnceLock;

use base64::Engine as _;
use serde_json::{Map, Value, json};

use crate::catalog::builtin_openapi::BuiltinOpenApi;
use crate::error::{ApiError, ApiResult};

pub const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// The field tables, compiled into the binary.
const FIELD_TABLE: &[u8] = include_bytes!("../../protobuf/fields.json.gz");

/// How a field's values are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Str,
    Int32,
    Int64,
    Bool,
    Double,
    Bytes,
    Message,
    /// A Go struct embedded in its parent: its fields are the parent's in JSON.
    Inline,
    MapString,
    MapBytes,
    MapMessage,
}

#[derive(Debug, Clone)]
struct Field {
    json_name: String,
    kind: Kind,
    repeated: bool,
    message: Option<String>,
}

type Messages = HashMap<String, HashMap<u64, Field>>;

fn messages() -> &'static Messages {
    static TABLE: OnceLock<Messages> = OnceLock::new();
    TABLE.get_or_init(|| parse_table(FIELD_TABLE).expect("the bundled protobuf field table parses"))
}

fn parse_table(compressed: &[u8]) -> Result<Messages, String> {
    let mut text = Vec::new();
    flate2::read::GzDecoder::new(compressed)
        .read_to_end(&mut text)
        .map_err(|e| e.to_string())?;
    let document: Value = serde_json::from_slice(&text).map_err(|e| e.to_string())?;
    let Some(all) = document.get("messages").and_then(Value::as_object) else {
        return Err("no `messages` object".into());
    };
    let mut out = Messages::new();
    for (name, fields) in all {
        let mut table = HashMap::new();
        for field in fields.as_array().map(Vec::as_slice).unwrap_or_default() {
            let kind = match field[2].as_str() {
                Some("string") => Kind::Str,
                Some("int32") => Kind::Int32,
                Some("int64") => Kind::Int64,
                Some("bool") => Kind::Bool,
                Some("double") => Kind::Double,
                Some("bytes") => Kind::Bytes,
                Some("message") => Kind::Message,
                Some("inline") => Kind::Inline,
                Some("map_string") => Kind::MapString,
                Some("map_bytes") => Kind::MapBytes,
                Some("map_message") => Kind::MapMessage,
                other => return Err(format!("{name}: unknown field kind {other:?}")),
            };
            let tag = field[0].as_u64().ok_or_else(|| format!("{name}: a tag"))?;
            table.insert(
                tag,
                Field {
                    json_name: field[1].as_str().unwrap_or_default().to_owned(),
                    kind,
                    repeated: field[3].as_bool().unwrap_or(false),
                    message: field[4].as_str().map(str::to_owned),
                },
            );
        }
        out.insert(name.clone(), table);
    }
    Ok(out)
}

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
    Fixed64(u64),
    Fixed32,
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
                let bytes: [u8; 8] = self.take(8)?.try_into().map_err(|_| malformed("fixed64"))?;
                Wire::Fixed64(u64::from_le_bytes(bytes))
            }
            2 => {
                let length =
                    usize::try_from(self.varint()?).map_err(|_| malformed("length overflow"))?;
                Wire::Length(self.take(length)?)
            }
            5 => {
                self.take(4)?;
                Wire::Fixed32
            }
            other => return Err(malformed(&format!("unsupported wire type {other}"))),
        };
        Ok(Some((key >> 3, wire)))
    }
}

fn text(bytes: &[u8]) -> ApiResult<String> {
    String::from_utf8(bytes.to_vec()).map_err(|_| malformed("a string is not UTF-8"))
}

fn base64(bytes: &[u8]) -> Value {
    json!(base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// The varints and length fields of a small message, by number.
fn fields_of(bytes: &[u8]) -> ApiResult<Vec<(u64, Wire<'_>)>> {
    let mut reader = Reader { bytes };
    let mut out = Vec::new();
    while let Some(field) = reader.next()? {
        out.push(field);
    }
    Ok(out)
}

fn varint_at(fields: &[(u64, Wire<'_>)], number: u64) -> i64 {
    fields
        .iter()
        .find_map(|(n, w)| match w {
            Wire::Varint(v) if *n == number => Some(*v as i64),
            _ => None,
        })
        .unwrap_or(0)
}

fn bytes_at<'a>(fields: &[(u64, Wire<'a>)], number: u64) -> &'a [u8] {
    fields
        .iter()
        .find_map(|(n, w)| match w {
            Wire::Length(raw) if *n == number => Some(*raw),
            _ => None,
        })
        .unwrap_or_default()
}

/// `meta.v1.Time` (seconds) or `MicroTime` (microseconds), as RFC 3339.
fn time(bytes: &[u8], micro: bool) -> ApiResult<Value> {
    let fields = fields_of(bytes)?;
    let (seconds, nanos) = (varint_at(&fields, 1), varint_at(&fields, 2));
    let timestamp = jiff::Timestamp::new(seconds, if micro { nanos as i32 } else { 0 })
        .map_err(|_| malformed("time out of range"))?;
    let format = if micro {
        "%Y-%m-%dT%H:%M:%S%.6fZ"
    } else {
        "%Y-%m-%dT%H:%M:%SZ"
    };
    Ok(json!(timestamp.strftime(format).to_string()))
}

/// A message with a JSON form of its own, if `name` is one.
fn special(name: &str, bytes: &[u8]) -> Option<ApiResult<Value>> {
    let raw_json = |bytes: &[u8]| -> ApiResult<Value> {
        let fields = fields_of(bytes)?;
        let raw = bytes_at(&fields, 1);
        if raw.is_empty() {
            return Ok(json!({}));
        }
        serde_json::from_slice(raw).map_err(|_| malformed("embedded JSON does not parse"))
    };
    Some(match name {
        "io.k8s.apimachinery.pkg.apis.meta.v1.Time" => time(bytes, false),
        "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime" => time(bytes, true),
        "io.k8s.apimachinery.pkg.apis.meta.v1.Duration" => fields_of(bytes).map(|fields| {
            let nanos = varint_at(&fields, 1);
            json!(format!("{}s", nanos as f64 / 1e9))
        }),
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString" => fields_of(bytes).and_then(|f| {
            if varint_at(&f, 1) == 1 {
                text(bytes_at(&f, 3)).map(|s| json!(s))
            } else {
                Ok(json!(varint_at(&f, 2) as i32))
            }
        }),
        "io.k8s.apimachinery.pkg.api.resource.Quantity" => {
            fields_of(bytes).and_then(|f| text(bytes_at(&f, 1)).map(|s| json!(s)))
        }
        "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1"
        | "io.k8s.apimachinery.pkg.runtime.RawExtension"
        | "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON" => raw_json(bytes),
        _ => return None,
    })
}

/// One value of a field.
fn value(field: &Field, wire: Wire<'_>) -> ApiResult<Value> {
    let wrong = || {
        malformed(&format!(
            "field {} has the wrong wire type",
            field.json_name
        ))
    };
    Ok(match (field.kind, wire) {
        (Kind::Str, Wire::Length(raw)) => json!(text(raw)?),
        (Kind::Bytes, Wire::Length(raw)) => base64(raw),
        (Kind::Int32, Wire::Varint(v)) => json!(v as i64 as i32),
        (Kind::Int64, Wire::Varint(v)) => json!(v as i64),
        (Kind::Bool, Wire::Varint(v)) => json!(v != 0),
        (Kind::Double, Wire::Fixed64(bits)) => json!(f64::from_bits(bits)),
        (Kind::Message, Wire::Length(raw)) => {
            message(raw, field.message.as_deref().unwrap_or_default())?
        }
        _ => return Err(wrong()),
    })
}

/// One entry of a `map<string, ...>` field.
fn map_entry(field: &Field, bytes: &[u8]) -> ApiResult<(String, Value)> {
    let mut reader = Reader { bytes };
    let (mut key, mut entry) = (String::new(), Value::Null);
    while let Some((number, wire)) = reader.next()? {
        match (number, wire) {
            (1, Wire::Length(raw)) => key = text(raw)?,
            (2, Wire::Length(raw)) => {
                entry = match field.kind {
                    Kind::MapBytes => base64(raw),
                    Kind::MapMessage => message(raw, field.message.as_deref().unwrap_or_default())?,
                    _ => json!(text(raw)?),
                }
            }
            _ => {}
        }
    }
    if entry.is_null() {
        entry = match field.kind {
            Kind::MapMessage => message(&[], field.message.as_deref().unwrap_or_default())?,
            Kind::MapBytes | Kind::MapString => json!(""),
            _ => Value::Null,
        };
    }
    Ok((key, entry))
}

/// The message `name` (a schema name), as JSON.
fn message(bytes: &[u8], name: &str) -> ApiResult<Value> {
    if let Some(value) = special(name, bytes) {
        return value;
    }
    let Some(fields) = messages().get(name) else {
        return Err(malformed(&format!("no field table for {name}")));
    };
    let mut out = Map::new();
    let mut reader = Reader { bytes };
    while let Some((number, wire)) = reader.next()? {
        let Some(field) = fields.get(&number) else {
            continue;
        };
        let name = field.json_name.as_str();
        match field.kind {
            Kind::Inline => {
                let Wire::Length(raw) = wire else {
                    return Err(malformed(&format!("{name} is not length-delimited")));
                };
                if let Value::Object(inner) =
                    message(raw, field.message.as_deref().unwrap_or_default())?
                {
                    out.extend(inner);
                }
            }
            Kind::MapString | Kind::MapBytes | Kind::MapMessage => {
                let Wire::Length(raw) = wire else {
                    return Err(malformed(&format!("map {name} is not length-delimited")));
                };
                let (key, entry) = map_entry(field, raw)?;
                if let Value::Object(map) = out.entry(name).or_insert_with(|| json!({})) {
                    map.insert(key, entry);
                }
            }
            // Packed repeated scalars (numbers in one length-delimited field).
            Kind::Int32 | Kind::Int64 | Kind::Bool if field.repeated => {
                if let Wire::Length(raw) = wire {
                    let mut packed = Reader { bytes: raw };
                    while !packed.bytes.is_empty() {
                        let v = packed.varint()?;
                        push(&mut out, name, value(field, Wire::Varint(v))?);
                    }
                } else {
                    push(&mut out, name, value(field, wire)?);
                }
            }
            _ if field.repeated => push(&mut out, name, value(field, wire)?),
            _ => {
                out.insert(name.to_owned(), value(field, wire)?);
            }
        }
    }
    // Go writes every non-pointer string to protobuf, empty or not, and leaves the empty ones
    // out of JSON (`omitempty`) unless the field is required.
    let required = BuiltinOpenApi::get()
        .schemas()
        .get(name)
        .and_then(|schema| schema.get("required"))
        .and_then(Value::as_array);
    out.retain(|field, value| {
        value.as_str() != Some("")
            || required.is_some_and(|r| r.iter().any(|f| f.as_str() == Some(field)))
    });
    Ok(Value::Object(out))
}

fn push(out: &mut Map<String, Value>, name: &str, value: Value) {
    if let Value::Array(list) = out.entry(name).or_insert_with(|| json!([])) {
        list.push(value);
    }
}

/// Decodes a protobuf body of a built-in kind into JSON.
pub fn decode(bytes: &[u8]) -> ApiResult<Value> {
    let envelope = bytes
        .strip_prefix(b"k8s\0")
        .ok_or_else(|| malformed("missing the k8s protobuf magic"))?;
    let mut reader = Reader { bytes: envelope };
    let (mut api_version, mut kind, mut raw) = (String::new(), String::new(), None);
    while let Some((number, wire)) = reader.next()? {
        match (number, wire) {
            (1, Wire::Length(type_meta)) => {
                let fields = fields_of(type_meta)?;
                api_version = text(bytes_at(&fields, 1))?;
                kind = text(bytes_at(&fields, 2))?;
            }
            (2, Wire::Length(bytes)) => raw = Some(bytes),
            _ => {}
        }
    }
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", &api_version));
    let Some(name) = BuiltinOpenApi::get()
        .kind_schema_name(group, version, &kind)
        .filter(|name| messages().contains_key(*name))
    else {
        return Err(ApiError::unsupported_media_type(
            &format!("{MEDIA_TYPE} ({api_version} {kind})"),
            &["application/json", "application/yaml"],
        ));
    };
    let mut object = message(raw.unwrap_or_default(), name)?;
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
    fn every_built_in_kind_decodes_and_others_are_refused() {
        let replicas = [0x08, 3]; // DeploymentSpec.replicas = 3 (field 1, varint)
        let spec = field(2, &replicas);
        assert_eq!(
            decode(&envelope("apps/v1", "Deployment", &spec)).expect("decodes"),
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": 3}})
        );
        assert_eq!(
            decode(&envelope("example.io/v1", "Widget", &[]))
                .expect_err("unsupported")
                .code,
            415
        );
        assert_eq!(decode(b"k8s\0\x0a\xff").expect_err("truncated").code, 400);
        assert_eq!(decode(b"{}").expect_err("no magic").code, 400);
    }
}
