//! The Crossplane provider package (`package/crossplane.yaml`) asks for exactly what the
//! controller is granted in deploy/ outside ferroplane's own API groups (Crossplane's RBAC
//! manager grants a provider its own CRDs): every rule of a cluster install with every
//! provider, compared verb by verb. The package's CRDs are checked with deploy/'s in
//! `generated_crds.rs`; `crossplane xpkg build` runs in tests/integration (`crossplane_package`).

use std::collections::BTreeSet;
use std::path::Path;

use ferroplane_apis::deploy::{ALL_PROVIDERS, cluster_rbac};
use serde_json::Value;

/// ferroplane's own API groups: the package's CRDs.
const OWN_GROUPS: [&str; 3] = [
    "alibabacloud.ferroplane.io",
    "etcd.ferroplane.io",
    "apps.ferroplane.io",
];

/// (group, resource, verb) of every rule, one triple per combination.
fn triples<'a>(rules: impl IntoIterator<Item = &'a Value>) -> BTreeSet<(String, String, String)> {
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_owned))
            .collect()
    };
    let mut out = BTreeSet::new();
    for rule in rules {
        for group in strings(&rule["apiGroups"]) {
            for resource in strings(&rule["resources"]) {
                for verb in strings(&rule["verbs"]) {
                    out.insert((group.clone(), resource.clone(), verb));
                }
            }
        }
    }
    out
}

fn package_meta() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../package/crossplane.yaml");
    let text = std::fs::read_to_string(&path).expect("package/crossplane.yaml exists");
    serde_saphyr::from_str(&text).expect("package/crossplane.yaml is YAML")
}

#[test]
fn the_package_requests_exactly_deploys_rules_outside_its_own_groups() {
    let meta = package_meta();
    assert_eq!(meta["apiVersion"], "meta.pkg.crossplane.io/v1");
    assert_eq!(meta["kind"], "Provider");
    let requested = triples(
        meta["spec"]["controller"]["permissionRequests"]
            .as_array()
            .expect("permissionRequests"),
    );
    let objects: Vec<Value> = cluster_rbac(&ALL_PROVIDERS)
        .iter()
        .flat_map(|m| m.objects().expect("deploy/ parses"))
        .filter(|o| o["kind"] == "ClusterRole" || o["kind"] == "Role")
        .collect();
    let granted: BTreeSet<_> = triples(
        objects
            .iter()
            .flat_map(|o| o["rules"].as_array().into_iter().flatten()),
    )
    .into_iter()
    .filter(|(group, _, _)| !OWN_GROUPS.contains(&group.as_str()))
    .collect();
    let missing: Vec<_> = granted.difference(&requested).collect();
    let extra: Vec<_> = requested.difference(&granted).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "package/crossplane.yaml's permissionRequests differ from deploy/: missing {missing:?}, \
         not in deploy/ {extra:?}"
    );
    assert!(
        requested
            .iter()
            .all(|(g, _, _)| !OWN_GROUPS.contains(&g.as_str())),
        "a request names one of the package's own groups"
    );
}

#[test]
fn the_package_runs_the_dockerfiles_image() {
    let dockerfile =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../Dockerfile"))
            .expect("Dockerfile");
    let image = package_meta()["spec"]["controller"]["image"]
        .as_str()
        .expect("spec.controller.image")
        .to_owned();
    assert!(
        dockerfile.contains(&format!("docker build -t {image} ")),
        "the package's image {image} is the one the Dockerfile's build line names"
    );
}
