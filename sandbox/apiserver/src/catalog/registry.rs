//! The served resources: the built-in kinds and those registered by CustomResourceDefinitions.
//! Routing, discovery and OpenAPI all read this one registry.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use ferroplane_sandbox_schema::CompiledSchema;

pub use crate::catalog::store_key::{StoreKey, keys};

use crate::catalog::builtin_openapi::BuiltinOpenApi;
use crate::catalog::table::Printer;
use crate::fields::shape::Shape;

/// One served resource in one group-version.
#[derive(Debug, Clone)]
pub struct ResourceDef {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: String,
    pub singular: String,
    pub namespaced: bool,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    /// Writes to the main resource ignore `.status`; `/status` exists.
    pub status_subresource: bool,
    /// Present for custom resources: what the CRD says about this version.
    pub crd: Option<Arc<CrdVersion>>,
}

/// The parts of a CRD version that admission and rendering need.
#[derive(Debug, Clone)]
pub struct CrdVersion {
    /// The version's `schema.openAPIV3Schema`, if any.
    pub schema: Option<Value>,
    /// The schema compiled for admission; `None` without a schema.
    pub compiled: Option<Arc<CompiledSchema>>,
    /// The Table printer of the version's `additionalPrinterColumns`.
    pub printer: Printer,
    /// The version's `subresources.scale`, if it has one.
    pub scale: Option<ScalePaths>,
}

/// Where a resource with `/scale` keeps its replicas and selector, as JSON pointers (a CRD's
/// `specReplicasPath: .spec.size` is `/spec/size`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScalePaths {
    pub spec_replicas: String,
    pub status_replicas: String,
    pub label_selector: SelectorSource,
}

/// Where the Scale's `status.selector` comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SelectorSource {
    /// The built-in workloads: `spec.selector.matchLabels`, serialized.
    MatchLabels,
    /// A CRD's `labelSelectorPath`: a string field holding the serialized selector.
    At(String),
    /// A CRD without `labelSelectorPath`: no selector.
    Absent,
}

impl ScalePaths {
    pub fn workload() -> Self {
        Self {
            spec_replicas: "/spec/replicas".into(),
            status_replicas: "/status/replicas".into(),
            label_selector: SelectorSource::MatchLabels,
        }
    }

    /// From a CRD version's `subresources.scale`; `None` without one.
    fn of_crd_version(version: &Value) -> Option<Self> {
        let scale = version.pointer("/subresources/scale")?;
        let pointer = |field: &str| {
            scale
                .get(field)
                .and_then(Value::as_str)
                .map(|path| path.replace('.', "/"))
        };
        Some(Self {
            spec_replicas: pointer("specReplicasPath")?,
            status_replicas: pointer("statusReplicasPath")?,
            label_selector: pointer("labelSelectorPath")
                .map_or(SelectorSource::Absent, SelectorSource::At),
        })
    }
}

impl ResourceDef {
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// Whether kube-apiserver counts `metadata.generation` for this resource: custom resources
    /// and the built-in kinds whose storage strategy does (seen on 1.37; ConfigMaps, Secrets,
    /// Services, Leases, RBAC kinds, namespaces and volumes have none).
    pub fn tracks_generation(&self) -> bool {
        self.crd.is_some()
            || matches!(
                (self.group.as_str(), self.plural.as_str()),
                ("", "pods")
                    | ("apps", _)
                    | ("batch", _)
                    | ("autoscaling", "horizontalpodautoscalers")
                    | ("networking.k8s.io", "ingresses" | "networkpolicies")
                    | ("policy", "poddisruptionbudgets")
                    | ("apiextensions.k8s.io", "customresourcedefinitions")
            )
    }

    /// `plural.group`, or `plural` for the core group: how errors name the resource.
    pub fn group_resource(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// Both event APIs are views of the same stored core events.
    pub fn store_key(&self) -> StoreKey {
        if self.group == "events.k8s.io" && self.plural == "events" {
            return keys::events();
        }
        StoreKey {
            group: self.group.clone(),
            plural: self.plural.clone(),
        }
    }

    pub fn list_kind(&self) -> String {
        format!("{}List", self.kind)
    }

    pub fn is_custom(&self) -> bool {
        self.crd.is_some()
    }

    /// The root of the kind's schema, for the list semantics of patches and server-side
    /// apply: the CRD's `openAPIV3Schema`, or the real apiserver's schema of a built-in kind.
    pub fn shape(&self) -> Shape<'_> {
        let openapi = BuiltinOpenApi::get();
        match &self.crd {
            Some(crd) => Shape::custom(crd.schema.as_ref(), openapi.schemas()),
            None => match openapi.kind_schema(&self.group, &self.version, &self.kind) {
                Some(root) => Shape::builtin(root, openapi.schemas()),
                None => Shape::unknown(),
            },
        }
    }

    /// Deployments and StatefulSets serve `/scale`.
    pub fn has_scale(&self) -> bool {
        self.scale_paths().is_some()
    }

    /// Where `/scale` reads and writes: the workloads' replicas, or what a CRD declares.
    pub fn scale_paths(&self) -> Option<ScalePaths> {
        match &self.crd {
            Some(crd) => crd.scale.clone(),
            None => {
                let key = self.store_key();
                (key == keys::deployments() || key == keys::statefulsets())
                    .then(ScalePaths::workload)
            }
        }
    }
}

/// `(group, version, kind, plural, namespaced, status subresource, short names, categories)`.
type Builtin = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    bool,
    bool,
    &'static [&'static str],
    &'static [&'static str],
);

const BUILTINS: &[Builtin] = &[
    (
        "",
        "v1",
        "Namespace",
        "namespaces",
        false,
        true,
        &["ns"],
        &[],
    ),
    ("", "v1", "Secret", "secrets", true, false, &[], &[]),
    (
        "",
        "v1",
        "ConfigMap",
        "configmaps",
        true,
        false,
        &["cm"],
        &[],
    ),
    (
        "",
        "v1",
        "Service",
        "services",
        true,
        true,
        &["svc"],
        &["all"],
    ),
    ("", "v1", "Event", "events", true, false, &["ev"], &[]),
    (
        "",
        "v1",
        "ServiceAccount",
        "serviceaccounts",
        true,
        false,
        &["sa"],
        &[],
    ),
    ("", "v1", "Pod", "pods", true, true, &["po"], &["all"]),
    ("", "v1", "Node", "nodes", false, true, &["no"], &[]),
    (
        "apps",
        "v1",
        "ReplicaSet",
        "replicasets",
        true,
        true,
        &["rs"],
        &["all"],
    ),
    ("batch", "v1", "Job", "jobs", true, true, &[], &["all"]),
    (
        "batch",
        "v1",
        "CronJob",
        "cronjobs",
        true,
        true,
        &["cj"],
        &["all"],
    ),
    (
        "",
        "v1",
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        true,
        true,
        &["pvc"],
        &[],
    ),
    (
        "apps",
        "v1",
        "Deployment",
        "deployments",
        true,
        true,
        &["deploy"],
        &["all"],
    ),
    (
        "apps",
        "v1",
        "StatefulSet",
        "statefulsets",
        true,
        true,
        &["sts"],
        &["all"],
    ),
    (
        "autoscaling",
        "v2",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
        true,
        true,
        &["hpa"],
        &["all"],
    ),
    (
        "networking.k8s.io",
        "v1",
        "Ingress",
        "ingresses",
        true,
        true,
        &["ing"],
        &[],
    ),
    (
        "policy",
        "v1",
        "PodDisruptionBudget",
        "poddisruptionbudgets",
        true,
        true,
        &["pdb"],
        &[],
    ),
    (
        "coordination.k8s.io",
        "v1",
        "Lease",
        "leases",
        true,
        false,
        &[],
        &[],
    ),
    (
        "events.k8s.io",
        "v1",
        "Event",
        "events",
        true,
        false,
        &["ev"],
        &[],
    ),
    (
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        false,
        true,
        &["crd", "crds"],
        &["api-extensions"],
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "Role",
        "roles",
        true,
        false,
        &[],
        &[],
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "RoleBinding",
        "rolebindings",
        true,
        false,
        &[],
        &[],
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRole",
        "clusterroles",
        false,
        false,
        &[],
        &[],
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRoleBinding",
        "clusterrolebindings",
        false,
        false,
        &[],
        &[],
    ),
];

/// Every served resource, built-in or custom.
#[derive(Debug, Clone)]
pub struct Registry {
    builtins: Vec<Arc<ResourceDef>>,
    /// CRD name → the served versions it registers.
    custom: BTreeMap<String, Vec<Arc<ResourceDef>>>,
}

impl Default for Registry {
    fn default() -> Self {
        let builtins = BUILTINS
            .iter()
            .map(
                |&(group, version, kind, plural, namespaced, status, short, categories)| {
                    Arc::new(ResourceDef {
                        group: group.into(),
                        version: version.into(),
                        kind: kind.into(),
                        plural: plural.into(),
                        singular: kind.to_lowercase(),
                        namespaced,
                        short_names: short.iter().map(|s| (*s).to_owned()).collect(),
                        categories: categories.iter().map(|s| (*s).to_owned()).collect(),
                        status_subresource: status,
                        crd: None,
                    })
                },
            )
            .collect();
        Self {
            builtins,
            custom: BTreeMap::new(),
        }
    }
}

impl Registry {
    pub fn all(&self) -> impl Iterator<Item = &Arc<ResourceDef>> {
        self.builtins.iter().chain(self.custom.values().flatten())
    }

    pub fn find(&self, group: &str, version: &str, plural: &str) -> Option<Arc<ResourceDef>> {
        self.all()
            .find(|d| d.group == group && d.version == version && d.plural == plural)
            .cloned()
    }

    /// The resource that serves `kind` in `group`/`version`.
    pub fn find_kind(&self, group: &str, version: &str, kind: &str) -> Option<Arc<ResourceDef>> {
        self.all()
            .find(|d| d.group == group && d.version == version && d.kind == kind)
            .cloned()
    }

    /// Any served version of the store key: used to name kinds in background work.
    pub fn find_key(&self, key: &StoreKey) -> Option<Arc<ResourceDef>> {
        self.all()
            .find(|d| d.group == key.group && d.plural == key.plural)
            .cloned()
    }

    /// The group-versions served, core first, each with its resources.
    pub fn group_versions(&self) -> BTreeMap<(String, String), Vec<Arc<ResourceDef>>> {
        let mut out: BTreeMap<(String, String), Vec<Arc<ResourceDef>>> = BTreeMap::new();
        for def in self.all() {
            out.entry((def.group.clone(), def.version.clone()))
                .or_default()
                .push(def.clone());
        }
        out
    }

    /// Versions of a group, preferred (first served in CRD order, or `v1`) first.
    pub fn versions_of(&self, group: &str) -> Vec<String> {
        let mut versions: Vec<String> = Vec::new();
        for def in self.all().filter(|d| d.group == group) {
            if !versions.contains(&def.version) {
                versions.push(def.version.clone());
            }
        }
        versions
    }

    /// Registers (or re-registers) the served versions of a CRD. Invalid specs register nothing.
    pub fn register_crd(&mut self, crd: &Value) {
        let Some(name) = crd.pointer("/metadata/name").and_then(Value::as_str) else {
            return;
        };
        let defs = defs_from_crd(crd);
        if defs.is_empty() {
            self.custom.remove(name);
        } else {
            self.custom.insert(name.to_owned(), defs);
        }
    }

    pub fn unregister_crd(&mut self, name: &str) {
        self.custom.remove(name);
    }

    /// The CRD that serves `key`, if custom.
    pub fn crd_name_of(&self, key: &StoreKey) -> Option<String> {
        self.custom
            .iter()
            .find(|(_, defs)| {
                defs.iter()
                    .any(|d| d.group == key.group && d.plural == key.plural)
            })
            .map(|(name, _)| name.clone())
    }
}

fn defs_from_crd(crd: &Value) -> Vec<Arc<ResourceDef>> {
    let str_at = |p: &str| {
        crd.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let group = str_at("/spec/group");
    let kind = str_at("/spec/names/kind");
    let plural = str_at("/spec/names/plural");
    if group.is_empty() || kind.is_empty() || plural.is_empty() {
        return Vec::new();
    }
    let singular = Some(str_at("/spec/names/singular"))
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| kind.to_lowercase());
    let strings = |p: &str| -> Vec<String> {
        crd.pointer(p)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let namespaced = str_at("/spec/scope") != "Cluster";
    let versions = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    versions
        .iter()
        .filter(|v| v.get("served").and_then(Value::as_bool).unwrap_or(true))
        .filter_map(|v| {
            let version = v.get("name").and_then(Value::as_str)?.to_owned();
            Some(Arc::new(ResourceDef {
                group: group.clone(),
                version,
                kind: kind.clone(),
                plural: plural.clone(),
                singular: singular.clone(),
                namespaced,
                short_names: strings("/spec/names/shortNames"),
                categories: strings("/spec/names/categories"),
                status_subresource: v.pointer("/subresources/status").is_some(),
                crd: Some(Arc::new(CrdVersion {
                    schema: v.pointer("/schema/openAPIV3Schema").cloned(),
                    compiled: v
                        .pointer("/schema/openAPIV3Schema")
                        .and_then(|s| CompiledSchema::compile(s).ok())
                        .map(Arc::new),
                    printer: Printer::for_crd_version(v),
                    scale: ScalePaths::of_crd_version(v),
                })),
            }))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn crd_registers_each_served_version() {
        let mut registry = Registry::default();
        registry.register_crd(&json!({
            "metadata": {"name": "widgets.example.io"},
            "spec": {
                "group": "example.io", "scope": "Namespaced",
                "names": {"kind": "Widget", "plural": "widgets", "shortNames": ["wd"]},
                "versions": [
                    {"name": "v1", "served": true, "storage": true, "subresources": {"status": {}}},
                    {"name": "v0", "served": false, "storage": false}
                ]
            }
        }));
        let def = registry
            .find("example.io", "v1", "widgets")
            .expect("registered");
        assert!(def.status_subresource);
        assert_eq!(def.singular, "widget");
        assert_eq!(def.short_names, vec!["wd"]);
        assert!(registry.find("example.io", "v0", "widgets").is_none());
        registry.unregister_crd("widgets.example.io");
        assert!(registry.find("example.io", "v1", "widgets").is_none());
    }
}
