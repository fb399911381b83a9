//! OpenAPI v3: the index and one document per group-version, regenerated from the registry.
//!
//! kubectl's default validation needs, for every kind, a path whose `patch` operation carries
//! `x-kubernetes-group-version-kind` and a `fieldValidation` parameter; `kubectl explain` needs a
//! schema per kind. Custom kinds get their CRD's `openAPIV3Schema`. Built-in kinds get a minimal,
//! hand-written schema (top-level fields with descriptions, nested objects left open): the
//! k8s-openapi types carry no schemas, and validating built-ins deeply is not the sandbox's job.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::{Map, Value, json};

use crate::catalog::registry::{Registry, ResourceDef};

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

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

/// The description and top-level fields of a built-in kind.
fn builtin_fields(kind: &str) -> (&'static str, Vec<(&'static str, Value)>) {
    let open = |d: &str| json!({"type": "object", "description": d, "x-kubernetes-preserve-unknown-fields": true});
    let strings = |d: &str| json!({"type": "object", "description": d, "additionalProperties": {"type": "string"}});
    match kind {
        "Secret" => (
            "Secret holds secret data of a certain type.",
            vec![
                (
                    "data",
                    strings("Data contains the secret data, base64 encoded."),
                ),
                (
                    "stringData",
                    strings(
                        "stringData allows specifying non-binary secret data in string form; it is merged into data on write.",
                    ),
                ),
                (
                    "type",
                    string_field("Used to facilitate programmatic handling of secret data."),
                ),
                (
                    "immutable",
                    json!({"type": "boolean", "description": "If set to true, the data cannot be updated."}),
                ),
            ],
        ),
        "ConfigMap" => (
            "ConfigMap holds configuration data for pods to consume.",
            vec![
                ("data", strings("Data contains the configuration data.")),
                (
                    "binaryData",
                    strings("BinaryData contains the binary data, base64 encoded."),
                ),
                (
                    "immutable",
                    json!({"type": "boolean", "description": "If set to true, the data cannot be updated."}),
                ),
            ],
        ),
        "Event" => (
            "Event is a report of an event somewhere in the cluster.",
            vec![
                (
                    "involvedObject",
                    open("The object that this event is about."),
                ),
                ("regarding", open("The object this Event is about.")),
                (
                    "reason",
                    string_field(
                        "A short, machine understandable string that gives the reason for the transition.",
                    ),
                ),
                (
                    "message",
                    string_field("A human-readable description of the status of this operation."),
                ),
                (
                    "note",
                    string_field("A human-readable description of the status of this operation."),
                ),
                (
                    "type",
                    string_field("Type of this event (Normal, Warning)."),
                ),
            ],
        ),
        "Lease" => (
            "Lease defines a lease concept.",
            vec![(
                "spec",
                open("spec contains the specification of the Lease."),
            )],
        ),
        "ServiceAccount" => (
            "ServiceAccount binds together a name, a principal and a set of secrets.",
            vec![(
                "secrets",
                json!({"type": "array", "description": "Secrets the service account may use.", "items": {"type": "object"}}),
            )],
        ),
        "Role" | "ClusterRole" => (
            "Role is a set of policy rules.",
            vec![(
                "rules",
                json!({"type": "array", "description": "Rules holds all the PolicyRules for this role.", "items": {"type": "object"}}),
            )],
        ),
        "RoleBinding" | "ClusterRoleBinding" => (
            "A binding of a role to subjects.",
            vec![
                (
                    "subjects",
                    json!({"type": "array", "description": "Subjects holds references to the objects the role applies to.", "items": {"type": "object"}}),
                ),
                ("roleRef", open("RoleRef names the role being bound.")),
            ],
        ),
        "Namespace" => (
            "Namespace provides a scope for Names.",
            vec![
                ("spec", open("Spec defines the behavior of the Namespace.")),
                (
                    "status",
                    open("Status describes the current status of a Namespace."),
                ),
            ],
        ),
        "Deployment" => (
            "Deployment enables declarative updates for Pods and ReplicaSets.",
            vec![
                (
                    "spec",
                    open("Specification of the desired behavior of the Deployment."),
                ),
                (
                    "status",
                    open("Most recently observed status of the Deployment."),
                ),
            ],
        ),
        "StatefulSet" => (
            "StatefulSet represents a set of pods with consistent identities.",
            vec![
                (
                    "spec",
                    open("Spec defines the desired identities of pods in this set."),
                ),
                (
                    "status",
                    open("Status is the current status of Pods in this StatefulSet."),
                ),
            ],
        ),
        "Service" => (
            "Service is a named abstraction of software service.",
            vec![
                ("spec", open("Spec defines the behavior of a service.")),
                (
                    "status",
                    open("Most recently observed status of the service."),
                ),
            ],
        ),
        "Ingress" => (
            "Ingress is a collection of rules that allow inbound connections to reach the endpoints defined by a backend.",
            vec![
                ("spec", open("spec is the desired state of the Ingress.")),
                (
                    "status",
                    open("status is the current state of the Ingress."),
                ),
            ],
        ),
        "PodDisruptionBudget" => (
            "PodDisruptionBudget is an object to define the max disruption that can be caused to a collection of pods.",
            vec![
                (
                    "spec",
                    open("Specification of the desired behavior of the PodDisruptionBudget."),
                ),
                (
                    "status",
                    open("Most recently observed status of the PodDisruptionBudget."),
                ),
            ],
        ),
        "CustomResourceDefinition" => (
            "CustomResourceDefinition represents a resource that should be exposed on the API server.",
            vec![
                (
                    "spec",
                    open("spec describes how the user wants the resources to appear."),
                ),
                (
                    "status",
                    open("status indicates the actual state of the CustomResourceDefinition."),
                ),
            ],
        ),
        _ => (
            "",
            vec![
                ("spec", open("The desired state.")),
                ("status", open("The observed state.")),
            ],
        ),
    }
}

fn kind_schema(def: &ResourceDef) -> Value {
    let mut schema = match def.crd.as_ref().and_then(|c| c.schema.clone()) {
        Some(schema) => schema,
        None if def.is_custom() => {
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})
        }
        None => {
            let (description, fields) = builtin_fields(&def.kind);
            let properties: Map<String, Value> =
                fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
            json!({"type": "object", "description": description, "properties": properties})
        }
    };
    if !schema.is_object() {
        schema = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
    }
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
        "allOf": [{"$ref": format!("#/components/schemas/{OBJECT_META}")}],
    });
    schema["x-kubernetes-group-version-kind"] = json!([gvk(def)]);
    schema
}

fn object_meta_schema() -> Value {
    let map = json!({"type": "object", "additionalProperties": {"type": "string"}});
    json!({
        "type": "object",
        "description": "ObjectMeta is metadata that all persisted resources must have.",
        "properties": {
            "name": string_field("Name must be unique within a namespace."),
            "generateName": string_field("An optional prefix used to generate a unique name."),
            "namespace": string_field("Namespace defines the space within which each name must be unique."),
            "uid": string_field("UID is the unique in time and space value for this object."),
            "resourceVersion": string_field("An opaque value that represents the internal version of this object."),
            "generation": {"type": "integer", "format": "int64", "description": "A sequence number representing a specific generation of the desired state."},
            "creationTimestamp": string_field("A timestamp representing the server time when this object was created."),
            "deletionTimestamp": string_field("RFC 3339 date and time at which this resource will be deleted."),
            "labels": map.clone(),
            "annotations": map,
            "finalizers": {"type": "array", "items": {"type": "string"}, "description": "Must be empty before the object is deleted from the registry."},
            "ownerReferences": {"type": "array", "items": {"type": "object"}, "description": "List of objects depended by this object."},
            "managedFields": {"type": "array", "items": {"type": "object"}, "description": "Maps workflow-id and version to the set of fields that are managed by that workflow."},
        },
    })
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
    schemas.insert(OBJECT_META.into(), object_meta_schema());
    for def in defs {
        let name = schema_name(def);
        let schema_ref = json!({"$ref": format!("#/components/schemas/{name}")});
        schemas.insert(name, kind_schema(def));
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
