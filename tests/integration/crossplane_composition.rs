//! Real Crossplane composes ferroplane's kinds on the real control plane: Crossplane core
//! (built by testenv at the pinned version) runs beside ferroplane's controllers (under
//! deploy/'s RBAC, as every real-control-plane test), with the composition function of
//! testenv/composition-function registered as a Function whose revision's endpoint is a
//! loopback port. The samples of `deploy/samples/crossplane/` are applied as a user would: the
//! namespaced XRD `XNetworkedInstance`, its pipeline Composition and one XR. The XR makes a
//! VPC, a VSwitch, a SecurityGroup and an ECSInstance wired by references; ferroplane makes them
//! Ready against the mock; Crossplane then reports the XR Ready; `crossplane resource trace`
//! (the pinned CLI) shows the tree with every node Ready; deleting the XR deletes the four
//! objects and leaves nothing in the mock.
//!
//! Core runs with the admin's kubeconfig (see `ferroplane_testenv::Crossplane`): in a cluster,
//! Crossplane's RBAC manager gives core access to a provider package's kinds, which is not
//! what this test is about.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use alibaba_mock::{Change, ResourceKind};
use ferroplane::controllers::Kind;
use ferroplane_testenv::Crossplane;
use ferroplane_testkit::{real_cluster, samples};
use serde_json::Value;

use crate::support::E2e;

/// The name the Composition's pipeline step gives its function.
const FUNCTION: &str = "function-ferroplane-network";
const XR: &str = "xnetworkedinstance.example.ferroplane.io/web";
const GROUP: &str = "alibabacloud.ferroplane.io";
/// Every composed object (`<plural>/<name>`, the function names them after the XR) and its kind.
const COMPOSED: [(&str, &str, &str); 4] = [
    ("vpcs", "web-vpc", "VPC"),
    ("vswitches", "web-vswitch", "VSwitch"),
    ("securitygroups", "web-sg", "SecurityGroup"),
    ("ecsinstances", "web-instance", "ECSInstance"),
];
/// A chain of three references, each resolved at the referencing object's next reconcile, then
/// Crossplane's next look at the XR, on a loaded machine.
const READY_WITHIN: Duration = Duration::from_secs(240);
const READY: &str = "{.status.conditions[?(@.type==\"Ready\")].status}";

fn composed(plural: &str, name: &str) -> String {
    format!("{plural}.{GROUP}/{name}")
}

/// The live resources of the mock that a call created, by kind and ID.
fn live_created(e2e: &E2e) -> BTreeSet<(ResourceKind, String)> {
    let created: BTreeSet<(ResourceKind, String)> = e2e
        .mock()
        .ledger()
        .into_iter()
        .filter(|e| e.change == Change::Created)
        .map(|e| (e.kind, e.resource_id))
        .collect();
    e2e.mock()
        .resources()
        .into_iter()
        .map(|r| (r.kind, r.id))
        .filter(|r| created.contains(r))
        .collect()
}

/// Waits until `what`'s `Ready` condition is True.
async fn wait_ready(e2e: &E2e, what: &str) {
    e2e.eventually(&format!("{what} is Ready"), READY_WITHIN, || async {
        e2e.jsonpath(what, READY).await == "True"
    })
    .await;
}

/// `crossplane resource trace XR -o json` with the pinned CLI, parsed.
async fn trace(cli: &Path, home: &Path, e2e: &E2e) -> Value {
    let out = tokio::process::Command::new(cli)
        .args(["resource", "trace", XR, "-n", &e2e.namespace, "-o", "json"])
        .env("KUBECONFIG", e2e.kubeconfig())
        // A home of its own: the CLI reads and may write its configuration there.
        .env("HOME", home)
        .stdin(Stdio::null())
        .output()
        .await
        .expect("the crossplane CLI runs");
    assert!(
        out.status.success(),
        "crossplane resource trace: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "trace -o json is JSON ({e}):\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// Every node of a trace: (kind, name, Ready status).
fn nodes(node: &Value, out: &mut Vec<(String, String, String)>) {
    let object = &node["object"];
    let ready = object["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "Ready"))
        .and_then(|c| c["status"].as_str())
        .unwrap_or("none");
    out.push((
        object["kind"].as_str().unwrap_or_default().to_owned(),
        object["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        ready.to_owned(),
    ));
    for child in node["children"].as_array().into_iter().flatten() {
        nodes(child, out);
    }
}

pub(crate) async fn an_xr_composes_four_ready_resources_and_its_deletion_releases_them() {
    let e2e = E2e::start(&[Kind::EcsInstance]).await;
    let cluster = real_cluster::shared().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let mut crossplane = Crossplane::start(cluster.access(), dir.path(), FUNCTION)
        .await
        .unwrap_or_else(|e| panic!("crossplane core and the composition function start: {e}"));

    e2e.apply(&samples::read("crossplane/xrd.yaml")).await;
    let xrd = "compositeresourcedefinition/xnetworkedinstances.example.ferroplane.io";
    // A namespaced (v2) XRD offers no claim: Established, with core watching its XRs, is all.
    e2e.eventually("the XRD is Established", READY_WITHIN, || async {
        e2e.jsonpath(
            xrd,
            "{.status.conditions[?(@.type==\"Established\")].status}",
        )
        .await
            == "True"
    })
    .await;
    e2e.apply(&samples::read("crossplane/composition.yaml"))
        .await;
    e2e.apply(&samples::read("crossplane/xr.yaml")).await;

    wait_ready(&e2e, XR).await;
    let xr_uid = e2e.jsonpath(XR, "{.metadata.uid}").await;
    for (plural, name, _) in COMPOSED {
        let object = composed(plural, name);
        assert_eq!(e2e.jsonpath(&object, READY).await, "True", "{object}");
        assert_eq!(
            e2e.jsonpath(&object, "{.metadata.ownerReferences[0].uid}")
                .await,
            xr_uid,
            "{object} is owned by the XR"
        );
    }
    // The references were resolved to the cloud IDs of the composed objects.
    let vpc_id = e2e
        .jsonpath(
            &composed("vpcs", "web-vpc"),
            "{.metadata.annotations.ferroplane\\.io/external-name}",
        )
        .await;
    assert_eq!(
        e2e.jsonpath(
            &composed("vswitches", "web-vswitch"),
            "{.spec.forProvider.vpcId}"
        )
        .await,
        vpc_id
    );
    let kinds: Vec<ResourceKind> = live_created(&e2e).into_iter().map(|(k, _)| k).collect();
    assert_eq!(
        kinds.iter().collect::<BTreeSet<_>>(),
        [
            ResourceKind::Vpc,
            ResourceKind::VSwitch,
            ResourceKind::SecurityGroup,
            ResourceKind::Instance
        ]
        .iter()
        .collect(),
        "one of each in the mock: {kinds:?}"
    );
    assert_eq!(kinds.len(), 4, "nothing created twice: {kinds:?}");

    let cli = tokio::task::spawn_blocking(|| {
        ferroplane_testenv::Builder::new(None).ensure_crossplane_cli()
    })
    .await
    .expect("the build did not panic")
    .unwrap_or_else(|e| panic!("the pinned crossplane CLI (testenv/versions.yaml): {e}"));
    let mut traced = Vec::new();
    nodes(&trace(&cli, dir.path(), &e2e).await, &mut traced);
    let mut expected = vec![("XNetworkedInstance".to_owned(), "web".to_owned())];
    expected.extend(
        COMPOSED
            .iter()
            .map(|(_, name, kind)| ((*kind).to_owned(), (*name).to_owned())),
    );
    let seen: BTreeSet<(String, String)> = traced
        .iter()
        .map(|(kind, name, _)| (kind.clone(), name.clone()))
        .collect();
    assert_eq!(
        seen,
        expected.into_iter().collect(),
        "the trace's nodes: {traced:?}"
    );
    assert!(
        traced.iter().all(|(_, _, ready)| ready == "True"),
        "every node of the trace is Ready: {traced:?}"
    );

    e2e.k(&["delete", XR, "--wait=false"]).await;
    for (plural, name, _) in COMPOSED {
        let object = composed(plural, name);
        e2e.eventually(&format!("{object} is gone"), READY_WITHIN, || async {
            let out = e2e
                .kubectl(&["get", &object, "--ignore-not-found", "-o", "name"], None)
                .await;
            out.success() && out.stdout.trim().is_empty()
        })
        .await;
    }
    let left = live_created(&e2e);
    assert!(left.is_empty(), "nothing left in the mock: {left:?}");
    crossplane
        .check_running()
        .unwrap_or_else(|e| panic!("crossplane core and the function ran throughout: {e}"));
}
