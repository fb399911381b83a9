//! The OpenAPI v3 schemas of the built-in kinds, as a real kube-apiserver (v1.37.2) serves them
//! under `/openapi/v3`: captured once into `openapi/builtin-v3.json.gz` (the union of
//! `components.schemas` over the captured group-versions; `tests/openapi_real.rs` re-checks it
//! against a real server and regenerates it with `FERROPLANE_UPDATE_OPENAPI=1`).
//!
//! It is where the list semantics of built-in kinds come from (`x-kubernetes-list-type`,
//! `x-kubernetes-list-map-keys`, `x-kubernetes-patch-merge-key`,
//! `x-kubernetes-patch-strategy`), and what `kubectl explain` reads for built-in kinds.

use std::collections::HashMap;
use std::io::Read;
use std::sync::OnceLock;

use serde_json::{Map, Value};

/// The compressed document, compiled into the binary.
const COMPRESSED: &[u8] = include_bytes!("../../openapi/builtin-v3.json.gz");

/// The decompressed document and an index of the kinds' schemas by group, version and kind.
pub struct BuiltinOpenApi {
    schemas: Map<String, Value>,
    kinds: HashMap<(String, String, String), String>,
}

impl BuiltinOpenApi {
    /// The document, decompressed and indexed on first use.
    pub fn get() -> &'static BuiltinOpenApi {
        static DOCUMENT: OnceLock<BuiltinOpenApi> = OnceLock::new();
        DOCUMENT.get_or_init(|| {
            Self::parse(COMPRESSED).expect("the bundled OpenAPI document is gzip-compressed JSON")
        })
    }

    fn parse(compressed: &[u8]) -> Result<Self, String> {
        let mut text = Vec::new();
        flate2::read::GzDecoder::new(compressed)
            .read_to_end(&mut text)
            .map_err(|e| e.to_string())?;
        let mut document: Value = serde_json::from_slice(&text).map_err(|e| e.to_string())?;
        let Some(Value::Object(schemas)) = document.get_mut("schemas").map(Value::take) else {
            return Err("no `schemas` object".into());
        };
        let mut kinds = HashMap::new();
        for (name, schema) in &schemas {
            let gvks = schema
                .get("x-kubernetes-group-version-kind")
                .and_then(Value::as_array);
            // A schema shared by several kinds (DeleteOptions, WatchEvent) is none of theirs.
            if let Some([gvk]) = gvks.map(Vec::as_slice) {
                let part = |k: &str| gvk.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
                kinds.insert((part("group"), part("version"), part("kind")), name.clone());
            }
        }
        Ok(Self { schemas, kinds })
    }

    /// Every schema by its name (`io.k8s.api.apps.v1.StatefulSet`, ...).
    pub fn schemas(&self) -> &Map<String, Value> {
        &self.schemas
    }

    /// The schema name of a kind (`""` is the core group).
    pub fn kind_schema_name(&self, group: &str, version: &str, kind: &str) -> Option<&str> {
        self.kinds
            .get(&(group.to_owned(), version.to_owned(), kind.to_owned()))
            .map(String::as_str)
    }

    /// The schema of a kind.
    pub fn kind_schema(&self, group: &str, version: &str, kind: &str) -> Option<&Value> {
        self.schemas
            .get(self.kind_schema_name(group, version, kind)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_document_indexes_the_served_kinds() {
        let openapi = BuiltinOpenApi::get();
        assert_eq!(
            openapi.kind_schema_name("apps", "v1", "StatefulSet"),
            Some("io.k8s.api.apps.v1.StatefulSet")
        );
        assert_eq!(
            openapi.kind_schema_name("", "v1", "PersistentVolumeClaim"),
            Some("io.k8s.api.core.v1.PersistentVolumeClaim")
        );
        assert!(openapi.kind_schema("batch", "v1", "CronJob").is_some());
        assert!(openapi.kind_schema("", "v1", "NoSuchKind").is_none());
    }

    #[test]
    fn a_corrupt_document_is_an_error() {
        assert!(BuiltinOpenApi::parse(b"not gzip").is_err());
    }
}
