//! The Crossplane provider package (`package/`) and what its installer grants
//! (`deploy/crossplane/provider-rbac.yaml`) give the controller exactly what a cluster install
//! of deploy/ grants, every provider included, compared verb by verb: Crossplane v2.3's RBAC
//! manager grants a provider its own CRDs (get, list, watch, create, update, patch; their
//! `/status`; `update` on `/finalizers`) and every verb on Secrets, ConfigMaps, Events and Leases
//! of the core and coordination groups (core's `internal/controller/rbac/provider/roles`), and
//! the extra ClusterRole holds the rest, nothing more. The package's CRDs are checked with
//! deploy/'s in `generated_crds.rs`; `crossplane xpkg build` runs in tests/integration
//! (`crossplane_package`).

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
/// The verbs Crossplane's RBAC manager grants a provider on its own kinds and their status.
const OWN_KIND_VERBS: [&str; 6] = ["get", "list", "watch", "update", "patch", "create"];
/// The kinds of which it grants every verb, in the core and coordination.k8s.io groups.
const SYSTEM_EXTRA: [&str; 4] = ["secrets", "configmaps", "events", "leases"];

type Triple = (String, String, String);

/// (group, resource, verb) of every rule, one triple per combination.
fn triples<'a>(rules: impl IntoIterator<Item = &'a Value>) -> BTreeSet<Triple> {
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

/// Whether Crossplane's RBAC manager grants a provider of ferroplane's CRDs this triple.
fn crossplane_grants((group, resource, verb): &Triple) -> bool {
    if OWN_GROUPS.contains(&group.as_str()) {
        return if resource.ends_with("/finalizers") {
            verb == "update"
        } else {
            OWN_KIND_VERBS.contains(&verb.as_str())
        };
    }
    (group.is_empty() || group == "coordination.k8s.io")
        && SYSTEM_EXTRA.contains(&resource.as_str())
}

fn rules_of(objects: &[Value]) -> BTreeSet<Triple> {
    triples(
        objects
            .iter()
            .filter(|o| o["kind"] == "ClusterRole" || o["kind"] == "Role")
            .flat_map(|o| o["rules"].as_array().into_iter().flatten()),
    )
}

fn package_meta() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../package/crossplane.yaml");
    let text = std::fs::read_to_string(&path).expect("package/crossplane.yaml exists");
    serde_saphyr::from_str(&text).expect("package/crossplane.yaml is YAML")
}

#[test]
fn crossplanes_grant_and_the_extra_role_are_exactly_deploys_rules() {
    let meta = package_meta();
    assert_eq!(meta["apiVersion"], "meta.pkg.crossplane.io/v1");
    assert_eq!(meta["kind"], "Provider");
    let deploy: Vec<Value> = cluster_rbac(&ALL_PROVIDERS)
        .iter()
        .flat_map(|m| m.objects().expect("deploy/ parses"))
        .collect();
    let needed: BTreeSet<Triple> = rules_of(&deploy)
        .into_iter()
        .filter(|t| !crossplane_grants(t))
        .collect();
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/crossplane/provider-rbac.yaml");
    let text = std::fs::read_to_string(&path).expect("deploy/crossplane/provider-rbac.yaml");
    let extra_objects: Vec<Value> = serde_saphyr::from_multiple(&text).expect("YAML");
    let extra = rules_of(&extra_objects);
    let missing: Vec<_> = needed.difference(&extra).collect();
    let beyond: Vec<_> = extra.difference(&needed).collect();
    assert!(
        missing.is_empty() && beyond.is_empty(),
        "deploy/crossplane/provider-rbac.yaml differs from deploy/'s rules minus Crossplane's \
         grant: missing {missing:?}, more than needed {beyond:?}"
    );
    // The binding names the ServiceAccount the DeploymentRuntimeConfig gives the pods.
    let config = extra_objects
        .iter()
        .find(|o| o["kind"] == "DeploymentRuntimeConfig")
        .expect("a DeploymentRuntimeConfig");
    let account = &config["spec"]["serviceAccountTemplate"]["metadata"]["name"];
    let binding = extra_objects
        .iter()
        .find(|o| o["kind"] == "ClusterRoleBinding")
        .expect("a ClusterRoleBinding");
    assert_eq!(&binding["subjects"][0]["name"], account);
    assert_eq!(binding["subjects"][0]["namespace"], "crossplane-system");
}

#[test]
fn the_package_names_the_dockerfiles_image() {
    let dockerfile =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../Dockerfile"))
            .expect("Dockerfile");
    let meta = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../package/crossplane.yaml"),
    )
    .expect("package/crossplane.yaml");
    let image = dockerfile
        .lines()
        .find_map(|l| l.strip_prefix("# Build: docker build -t "))
        .and_then(|rest| rest.split_whitespace().next())
        .expect("the Dockerfile's build line names the image");
    assert!(
        meta.contains(image),
        "package/crossplane.yaml names the image to embed, {image}"
    );
}
