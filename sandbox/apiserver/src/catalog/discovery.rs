//! Legacy discovery documents (`APIVersions`, `APIGroupList`, `APIGroup`, `APIResourceList`).
//!
//! kubectl and kube-rs ask for aggregated discovery first and fall back to these when the answer
//! is plain `application/json`, so serving only the legacy format keeps one code path.

use serde_json::{Value, json};

use crate::catalog::registry::{Registry, ResourceDef};

const VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// The Kubernetes release the sandbox answers as.
pub const GIT_VERSION: &str = "v1.33.0";

pub fn version() -> Value {
    json!({
        "major": "1",
        "minor": "33",
        "gitVersion": GIT_VERSION,
        "gitCommit": "ferroplane-sandbox",
        "gitTreeState": "clean",
        "buildDate": "2025-04-23T00:00:00Z",
        "goVersion": "go1.24.2",
        "compiler": "gc",
        "platform": "linux/amd64",
        "emulationMajor": "1",
        "emulationMinor": "33",
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": "32",
    })
}

pub fn core_versions(server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    })
}

fn group_document(registry: &Registry, group: &str) -> Option<Value> {
    let versions = registry.versions_of(group);
    let preferred = versions.first()?;
    let list: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
        .collect();
    Some(json!({
        "name": group,
        "versions": list,
        "preferredVersion": {"groupVersion": format!("{group}/{preferred}"), "version": preferred},
    }))
}

pub fn groups(registry: &Registry) -> Value {
    let mut names: Vec<String> = Vec::new();
    for def in registry.all().filter(|d| !d.group.is_empty()) {
        if !names.contains(&def.group) {
            names.push(def.group.clone());
        }
    }
    let groups: Vec<Value> = names
        .iter()
        .filter_map(|g| group_document(registry, g))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

pub fn group(registry: &Registry, group: &str) -> Option<Value> {
    let mut document = group_document(registry, group)?;
    document["kind"] = json!("APIGroup");
    document["apiVersion"] = json!("v1");
    Some(document)
}

fn resource_entry(def: &ResourceDef) -> Value {
    let mut entry = json!({
        "name": def.plural,
        "singularName": def.singular,
        "namespaced": def.namespaced,
        "kind": def.kind,
        "verbs": VERBS,
    });
    if !def.short_names.is_empty() {
        entry["shortNames"] = json!(def.short_names);
    }
    if !def.categories.is_empty() {
        entry["categories"] = json!(def.categories);
    }
    entry
}

pub fn resources(registry: &Registry, group: &str, version: &str) -> Option<Value> {
    let defs: Vec<_> = registry
        .all()
        .filter(|d| d.group == group && d.version == version)
        .collect();
    if defs.is_empty() {
        return None;
    }
    let mut list = Vec::new();
    for def in defs {
        list.push(resource_entry(def));
        if def.has_scale() {
            list.push(json!({
                "name": format!("{}/scale", def.plural),
                "singularName": "",
                "namespaced": def.namespaced,
                "group": "autoscaling",
                "version": "v1",
                "kind": "Scale",
                "verbs": ["get", "patch", "update"],
            }));
        }
        if def.status_subresource {
            list.push(json!({
                "name": format!("{}/status", def.plural),
                "singularName": "",
                "namespaced": def.namespaced,
                "kind": def.kind,
                "verbs": ["get", "patch", "update"],
            }));
        }
    }
    let group_version = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": list}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_lists_builtins_with_status_subresources() {
        let registry = Registry::default();
        let apps = resources(&registry, "apps", "v1").expect("served");
        let names: Vec<&str> = apps["resources"]
            .as_array()
            .expect("list")
            .iter()
            .filter_map(|r| r["name"].as_str())
            .collect();
        assert_eq!(
            names,
            vec![
                "replicasets",
                "replicasets/status",
                "deployments",
                "deployments/scale",
                "deployments/status",
                "statefulsets",
                "statefulsets/scale",
                "statefulsets/status"
            ]
        );
        let groups = groups(&registry);
        assert!(
            groups["groups"]
                .as_array()
                .expect("list")
                .iter()
                .any(|g| g["name"] == "events.k8s.io")
        );
        assert!(group(&registry, "nope").is_none());
    }
}
