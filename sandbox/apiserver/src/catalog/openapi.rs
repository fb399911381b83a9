//! OpenAPI v3: the index and one document per group-version, regenerated from the registry.
//!
//! kubectl's default validation needs, for every kind, a path whose `patch` operation carries
//! `x-kubernetes-group-version-kind` and a `fieldValidation` parameter; `kubectl explain` needs a
//! schema per kind. Custom kinds get their CRD's `openAPIV3Schema`; built-in kinds the schemas
//! a real kube-apiserver serves (`builtin_openapi`), with every schema they reference.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::{Map, Value, json};

use crate::catalog::builtin_openapi::BuiltinOpenApi;
use crate::catalog::registry::{Registry, ResourceDef};
use crate::fields::shape::{OBJECT_META, REF_PREFIX};

/// `api/v1` or `apis/<group>/<version>`.
fn document_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

fn hash(value: &Value) -> String {
    let mut hasher = DefaultHasher::new();
    value.to_string().hash(&mut hasher);
    format!("{:016X}", hasher.finish())
}

pub fn index(registry: &Registry) -> Value {
    let mut paths = Map::new();
    for (group, version) in registry.group_versions().keys() {
        if let Some(doc) = document(registry, &document_path(group, version)) {
            let path = document_path(group, version);
            paths.insert(
                path.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{path}?hash={}", hash(&doc))}),
            );
        }
    }
    json!({"paths": paths})
}

fn schema_name(def: &ResourceDef) -> String {
    let prefix = match def.group.as_str() {
        "" => "io.k8s.api.core".to_owned(),
        "apiextensions.k8s.io" => {
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions".to_owned()
        }
        g if g.ends_with(".k8s.io") => format!(
            "io.k8s.api.{}",
            g.trim_end_matches(".k8s.io").replace('.', "_")
        ),
        "apps" | "policy" => format!("io.k8s.api.{}", def.group),
        g => {
            let mut parts: Vec<&str> = g.split('.').collect();
            parts.reverse();
            parts.join(".")
        }
    };
    format!("{prefix}.{}.{}", def.version, def.kind)
}

fn gvk(def: &ResourceDef) -> Value {
    json!({"group": def.group, "version": def.version, "kind": def.kind})
}

fn string_field(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

/// A custom kind's schema: its CRD's `openAPIV3Schema` with `apiVersion`, `kind` and
/// `metadata` (ObjectMeta of the real schemas).
fn custom_kind_schema(def: &ResourceDef) -> Value {
    let mut schema = def
        .crd
        .as_ref()
        .and_then(|c| c.schema.clone())
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}));
    if !schema.get("properties").is_some_and(Value::is_object) {
        schema["properties"] = json!({});
    }
    let properties = &mut schema["properties"];
    properties["apiVersion"] = string_field(
        "APIVersion defines the versioned schema of this representation of an object.",
    );
    properties["kind"] = string_field(
        "Kind is a string value representing the REST resource this object represents.",
    );
    properties["metadata"] = json!({
        "description": "Standard object's metadata.",
        "allOf": [{"$ref": format!("{REF_PREFIX}{OBJECT_META}")}],
    });
    schema["x-kubernetes-group-version-kind"] = json!([gvk(def)]);
    schema
}

/// Adds `name` and every schema it references, from the real apiserver's schemas.
fn add_with_references(schemas: &mut Map<String, Value>, name: &str) {
    let openapi = BuiltinOpenApi::get();
    let mut pending = vec![name.to_owned()];
    while let Some(next) = pending.pop() {
        if schemas.contains_key(&next) {
            continue;
        }
        let Some(schema) = openapi.schemas().get(&next) else {
            continue;
        };
        collect_references(schema, &mut pending);
        schemas.insert(next, schema.clone());
    }
}

fn collect_references(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(name) = map
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix(REF_PREFIX))
            {
                out.push(name.to_owned());
            }
            map.values().for_each(|v| collect_references(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_references(v, out)),
        _ => {}
    }
}

fn operation(def: &ResourceDef, action: &str, schema_ref: &Value) -> Value {
    let id = format!(
        "{action}{}{}",
        def.kind,
        if def.namespaced { "Namespaced" } else { "" }
    );
    json!({
        "operationId": id,
        "parameters": [
            {"name": "dryRun", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
            {"name": "fieldManager", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
            {"name": "fieldValidation", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
        ],
        "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": schema_ref}}}},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": gvk(def),
    })
}

/// The document of `api/v1` or `apis/<group>/<version>`.
pub fn document(registry: &Registry, path: &str) -> Option<Value> {
    let gvs = registry.group_versions();
    let (_, defs) = gvs.iter().find(|((g, v), _)| document_path(g, v) == path)?;
    let mut paths = BTreeMap::new();
    let mut schemas = Map::new();
    let openapi = BuiltinOpenApi::get();
    for def in defs {
        let name = match openapi.kind_schema_name(&def.group, &def.version, &def.kind) {
            Some(name) if !def.is_custom() => {
                add_with_references(&mut schemas, name);
                name.to_owned()
            }
            _ => {
                add_with_references(&mut schemas, OBJECT_META);
                let name = schema_name(def);
                schemas.insert(name.clone(), custom_kind_schema(def));
                name
            }
        };
        let schema_ref = json!({"$ref": format!("{REF_PREFIX}{name}")});
        let base = if def.namespaced {
            format!("/{path}/namespaces/{{namespace}}/{}", def.plural)
        } else {
            format!("/{path}/{}", def.plural)
        };
        paths.insert(
            base.clone(),
            json!({"post": operation(def, "post", &schema_ref)}),
        );
        paths.insert(
            format!("{base}/{{name}}"),
            json!({
                "get": operation(def, "get", &schema_ref),
                "put": operation(def, "put", &schema_ref),
                "patch": operation(def, "patch", &schema_ref),
                "delete": operation(def, "delete", &schema_ref),
            }),
        );
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.33.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_names_every_group_version_with_a_hash() {
        let registry = Registry::default();
        let index = index(&registry);
        let url = index["paths"]["apis/apps/v1"]["serverRelativeURL"]
            .as_str()
            .expect("listed");
        assert!(url.starts_with("/openapi/v3/apis/apps/v1?hash="));
        assert!(index["paths"]["api/v1"].is_object());
    }

    #[test]
    fn documents_carry_gvk_patch_operations_and_schemas() {
        let registry = Registry::default();
        let doc = document(&registry, "apis/apps/v1").expect("served");
        let patch =
            &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
        assert_eq!(
            patch["x-kubernetes-group-version-kind"]["kind"],
            "Deployment"
        );
        assert!(
            patch["parameters"]
                .as_array()
                .expect("list")
                .iter()
                .any(|p| p["name"] == "fieldValidation")
        );
        let schema = &doc["components"]["schemas"]["io.k8s.api.apps.v1.Deployment"];
        assert_eq!(
            schema["x-kubernetes-group-version-kind"][0]["group"],
            "apps"
        );
        assert!(document(&registry, "apis/nope/v1").is_none());
    }
}
