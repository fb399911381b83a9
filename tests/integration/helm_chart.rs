//! The Helm chart (`deploy/helm/ferroplane`) is deploy/ in another form: `helm lint` passes, the
//! default values render exactly deploy/'s objects (the CRDs byte for byte, every role's rules,
//! the Deployment's pod), and the values render what they say (namespaced install, replicas and
//! leader election, allowed endpoints, the ServiceMonitor). Its install on the real control
//! plane is `helm_install`.

use std::collections::BTreeSet;
use std::path::Path;

use ferroplane_apis::deploy::{self, ALL_PROVIDERS, Provider};
use serde_json::{Value, json};

use crate::support::helm::{self, args, object, of_kind};

/// The release and namespace whose render is deploy/'s install.
const RELEASE: &str = "ferroplane";
const NAMESPACE: &str = deploy::SERVICE_ACCOUNT_NAMESPACE;

const RBAC_KINDS: [&str; 4] = ["ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"];

fn deploy_path(file: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("deploy")
        .join(file)
}

/// The objects of a file of deploy/.
fn deploy_objects(file: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(deploy_path(file)).expect("a deploy/ file");
    let documents: Vec<Value> = serde_saphyr::from_multiple(&text).expect("deploy/ is YAML");
    documents.into_iter().filter(Value::is_object).collect()
}

/// Kind, name and namespace: what names an object in a cluster.
fn identity(object: &Value) -> (String, String, String) {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    (
        text(&object["kind"]),
        text(&object["metadata"]["name"]),
        text(&object["metadata"]["namespace"]),
    )
}

fn rbac_of(objects: &[Value]) -> Vec<&Value> {
    objects
        .iter()
        .filter(|o| RBAC_KINDS.iter().any(|k| o["kind"] == *k))
        .collect()
}

/// Every role and binding of `expected` is rendered with the same rules, role and subjects, and
/// the render has no other.
fn assert_same_rbac(rendered: &[Value], expected: &[Value]) {
    let rendered_rbac = rbac_of(rendered);
    let expected_rbac = rbac_of(expected);
    let names =
        |objects: &[&Value]| -> BTreeSet<_> { objects.iter().map(|o| identity(o)).collect() };
    assert_eq!(
        names(&rendered_rbac),
        names(&expected_rbac),
        "the same roles and bindings"
    );
    for want in expected_rbac {
        let (kind, name, _) = identity(want);
        let got = object(rendered, &kind, &name);
        assert_eq!(identity(got), identity(want));
        for field in ["rules", "roleRef", "subjects"] {
            assert_eq!(got[field], want[field], "{kind} {name}: {field}");
        }
    }
}

/// A values file in a directory of the test's own.
fn values(dir: &tempfile::TempDir, yaml: &str) -> std::path::PathBuf {
    helm::values_file(dir.path(), "values.yaml", yaml)
}

/// The values of the namespaced install with a ServiceMonitor and two replicas.
const NAMESPACED_VALUES: &str = r#"
watchNamespace: team-a
kinds: [ecsinstance]
replicas: 2
# Two replicas elect a leader even when this says no.
leaderElection:
  enabled: false
createNamespace: true
pollInterval: 30s
allowedEndpoints: ["http://127.0.0.1:9000", "ecs.internal.example"]
metrics:
  serviceMonitor:
    enabled: true
    interval: 15s
    labels:
      release: prometheus
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chart_passes_helm_lint_with_default_and_namespaced_values() {
    let home = tempfile::tempdir().expect("temp dir");
    let chart = helm::chart_dir();
    let chart = chart.to_str().expect("a UTF-8 path");
    let out = helm::run(home.path(), &["lint", "--strict", chart]).await;
    assert!(
        out.success,
        "helm lint --strict:\n{}{}",
        out.stdout, out.stderr
    );
    assert!(
        out.stdout.contains("1 chart(s) linted, 0 chart(s) failed"),
        "{}",
        out.stdout
    );
    let file = values(&home, NAMESPACED_VALUES);
    let file = file.to_str().expect("a UTF-8 path");
    let out = helm::run(home.path(), &["lint", "--strict", chart, "-f", file]).await;
    assert!(
        out.success,
        "helm lint --strict -f:\n{}{}",
        out.stdout, out.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn default_values_render_what_deploy_installs() {
    let rendered = helm::template(RELEASE, NAMESPACE, None).await;

    // CRDs: the chart's crds/ holds deploy/crds/ byte for byte (ferroplane-apis' test generates
    // both from the types), and Helm renders them unchanged.
    let deploy_crds = deploy_path("crds");
    let mut files: Vec<String> = std::fs::read_dir(&deploy_crds)
        .expect("deploy/crds")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut chart_files: Vec<String> = std::fs::read_dir(helm::chart_dir().join("crds"))
        .expect("the chart's crds/")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    chart_files.sort();
    assert_eq!(
        chart_files, files,
        "the chart's crds/ and deploy/crds/ hold the same files"
    );
    let mut expected_crds = Vec::new();
    for file in &files {
        let ours = std::fs::read(deploy_crds.join(file)).expect("a CRD file");
        let chart = std::fs::read(helm::chart_dir().join("crds").join(file)).expect("a CRD file");
        assert!(
            ours == chart,
            "crds/{file} differs between deploy/ and the chart"
        );
        expected_crds.extend(deploy_objects(&format!("crds/{file}")));
    }
    let rendered_crds = of_kind(&rendered, "CustomResourceDefinition");
    assert_eq!(rendered_crds.len(), expected_crds.len());
    for want in &expected_crds {
        let (kind, name, _) = identity(want);
        assert_eq!(
            object(&rendered, &kind, &name),
            want,
            "{name} renders as deploy/ has it"
        );
    }

    // RBAC: deploy/'s cluster install of every provider, rule for rule.
    let expected: Vec<Value> = deploy::cluster_rbac(&ALL_PROVIDERS)
        .iter()
        .flat_map(|m| m.objects().expect("deploy/ parses"))
        .collect();
    assert_same_rbac(&rendered, &expected);

    let account = object(&rendered, "ServiceAccount", deploy::SERVICE_ACCOUNT);
    assert_eq!(account["metadata"]["namespace"], NAMESPACE);

    // The Deployment: the pod deploy/manager/deployment.yaml runs, field for field.
    let want = &deploy_objects("manager/deployment.yaml")[0];
    let got = object(&rendered, "Deployment", "ferroplane");
    assert_eq!(identity(got), identity(want));
    assert_eq!(got["spec"]["replicas"], want["spec"]["replicas"]);
    assert_eq!(
        got["spec"]["template"]["spec"],
        want["spec"]["template"]["spec"]
    );
    assert_eq!(
        got["spec"]["template"]["metadata"]["annotations"],
        want["spec"]["template"]["metadata"]["annotations"]
    );
    let pod_labels = &got["spec"]["template"]["metadata"]["labels"];
    assert_subset(
        &got["spec"]["selector"]["matchLabels"],
        pod_labels,
        "the selector",
    );

    // The metrics Service of deploy/manager/service.yaml, in front of the pods.
    let want = &deploy_objects("manager/service.yaml")[0];
    let got = object(&rendered, "Service", "ferroplane-metrics");
    assert_eq!(identity(got), identity(want));
    for field in ["type", "ports"] {
        assert_eq!(got["spec"][field], want["spec"][field], "Service {field}");
    }
    assert_subset(
        &got["spec"]["selector"],
        pod_labels,
        "the Service's selector",
    );

    // Nothing else: no Namespace (deploy/manager/namespace.yaml is `createNamespace`), no
    // ServiceMonitor.
    let kinds: BTreeSet<&str> = rendered.iter().filter_map(|o| o["kind"].as_str()).collect();
    let expected_kinds = BTreeSet::from([
        "ClusterRole",
        "ClusterRoleBinding",
        "CustomResourceDefinition",
        "Deployment",
        "Role",
        "RoleBinding",
        "Service",
        "ServiceAccount",
    ]);
    assert_eq!(kinds, expected_kinds);
    assert_eq!(of_kind(&rendered, "Deployment").len(), 1);
    assert_eq!(of_kind(&rendered, "Service").len(), 1);
    assert_eq!(of_kind(&rendered, "ServiceAccount").len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespaced_values_render_roles_in_the_watched_namespace_and_a_service_monitor() {
    let dir = tempfile::tempdir().expect("temp dir");
    let rendered = helm::template(RELEASE, NAMESPACE, Some(&values(&dir, NAMESPACED_VALUES))).await;

    // deploy/namespaced/'s Roles of the one provider, in team-a, and the leader-election Role
    // that two replicas need; no ClusterRole.
    let mut expected = deploy::namespaced_rbac(&[Provider::Alibaba], "team-a").expect("parses");
    expected.extend(deploy::LEADER_ELECTION.objects().expect("parses"));
    assert_same_rbac(&rendered, &expected);
    assert!(of_kind(&rendered, "ClusterRole").is_empty());
    assert!(of_kind(&rendered, "ClusterRoleBinding").is_empty());

    let deployment = object(&rendered, "Deployment", "ferroplane");
    assert_eq!(deployment["spec"]["replicas"], 2);
    assert_eq!(
        args(deployment),
        [
            "run",
            "--kinds=ecsinstance",
            "--namespace=team-a",
            "--leader-elect",
            "--metrics-addr=0.0.0.0:8080",
            "--poll-interval=30s",
            "--allow-endpoint=http://127.0.0.1:9000",
            "--allow-endpoint=ecs.internal.example",
            "--log-format=json",
        ]
    );

    // The release's namespace with deploy/manager/namespace.yaml's Pod Security level.
    let namespace = object(&rendered, "Namespace", NAMESPACE);
    let want = &deploy_objects("manager/namespace.yaml")[0];
    let label = "pod-security.kubernetes.io/enforce";
    assert_eq!(
        namespace["metadata"]["labels"][label],
        want["metadata"]["labels"][label]
    );

    // The ServiceMonitor scrapes the metrics Service's port, and only that Service.
    let monitor = object(&rendered, "ServiceMonitor", "ferroplane");
    assert_eq!(monitor["apiVersion"], "monitoring.coreos.com/v1");
    assert_eq!(monitor["metadata"]["labels"]["release"], "prometheus");
    let service = object(&rendered, "Service", "ferroplane-metrics");
    let selector = &monitor["spec"]["selector"]["matchLabels"];
    assert_subset(
        selector,
        &service["metadata"]["labels"],
        "the ServiceMonitor's selector",
    );
    let deployment_labels = &deployment["metadata"]["labels"];
    assert!(
        !is_subset(selector, deployment_labels),
        "the ServiceMonitor selects the metrics Service, not every object of the release"
    );
    assert_eq!(
        monitor["spec"]["namespaceSelector"],
        json!({"matchNames": [NAMESPACE]})
    );
    assert_eq!(
        monitor["spec"]["endpoints"],
        json!([{"port": service["spec"]["ports"][0]["name"], "path": "/metrics", "interval": "15s"}])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_replica_without_leader_election_and_unknown_kinds() {
    let dir = tempfile::tempdir().expect("temp dir");
    let single = values(
        &dir,
        "replicas: 1\nleaderElection: {enabled: false}\nconnectionSecrets: false\n",
    );
    let rendered = helm::template(RELEASE, NAMESPACE, Some(&single)).await;
    let deployment = object(&rendered, "Deployment", "ferroplane");
    assert_eq!(deployment["spec"]["replicas"], 1);
    assert!(!args(deployment).contains(&"--leader-elect".to_owned()));
    // Neither the Lease's Role nor the connection Secrets' role: deploy/'s install without
    // those two files.
    let expected: Vec<Value> = deploy::MANAGER
        .into_iter()
        .chain([deploy::COMMON])
        .chain(ALL_PROVIDERS.map(deploy::provider_rbac))
        .flat_map(|m| m.objects().expect("parses"))
        .collect();
    assert_same_rbac(&rendered, &expected);

    let unknown = values(&dir, "kinds: [ecsinstance, rds]\n");
    let refused = helm::try_template(RELEASE, NAMESPACE, Some(&unknown))
        .await
        .expect_err("an unknown kind fails the render");
    assert!(refused.contains(r#"unknown kind "rds""#), "{refused}");
    let monitor_alone = values(
        &dir,
        "metrics: {service: {enabled: false}, serviceMonitor: {enabled: true}}\n",
    );
    let refused = helm::try_template(RELEASE, NAMESPACE, Some(&monitor_alone))
        .await
        .expect_err("a ServiceMonitor without its Service fails the render");
    assert!(
        refused.contains("needs metrics.service.enabled"),
        "{refused}"
    );
}

fn is_subset(small: &Value, large: &Value) -> bool {
    small
        .as_object()
        .is_some_and(|s| !s.is_empty() && s.iter().all(|(k, v)| large.get(k) == Some(v)))
}

fn assert_subset(small: &Value, large: &Value, what: &str) {
    assert!(
        is_subset(small, large),
        "{what} {small} is not within {large}"
    );
}
