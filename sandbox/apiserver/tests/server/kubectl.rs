//! kubectl conformance scenarios: unmodified kubectl with default validation against the sandbox.
//! Each scenario states what a real apiserver answers; each runs its own server and cache dir.
//! These tests need kubectl on PATH and fail with a clear message without it.

use crate::common;
use crate::widget_crd;

use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};

use ferroplane_testkit::kubectl::{finish, kubectl_path};
use ferroplane_testkit::{TestCluster, eventually};
use k8s_openapi::api::core::v1::ObjectReference;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use serde_json::{Value, json};

const WIDGET: &str = "apiVersion: example.io/v1\nkind: Widget\nmetadata:\n  name: w\n  labels: {team: a}\nspec:\n  size: 3\n  region: eu\n";

fn widgets(harness: &TestCluster) -> Api<DynamicObject> {
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("example.io", "v1", "Widget"),
        "widgets",
    );
    Api::namespaced_with(harness.client(), "default", &resource)
}

async fn with_widgets() -> TestCluster {
    kubectl_path();
    let harness = common::start().await;
    harness
        .kubectl()
        .ok_with_input(&["apply", "-f", "-"], widget_crd::WIDGET_CRD)
        .await;
    harness
}

// Real apiserver: `kubectl apply -f crd.yaml` then objects → "created"; `get` prints the CRD's
// printer columns (NAME SIZE READY AGE) from the server-side Table; -o jsonpath/json read the
// stored object with schema defaults; -l filters; -A adds NAMESPACE; re-apply → "configured"
// (merge patch); `apply --server-side` → "serverside-applied".
#[tokio::test]
async fn apply_and_get_custom_objects() {
    let harness = with_widgets().await;
    let created = harness
        .kubectl()
        .ok_with_input(&["apply", "-f", "-"], WIDGET)
        .await;
    assert_eq!(created.trim(), "widget.example.io/w created");
    let table = harness.kubectl().ok(&["get", "widgets"]).await;
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().expect("header").split_whitespace().collect();
    assert_eq!(header, vec!["NAME", "SIZE", "READY", "AGE"]);
    let row: Vec<&str> = lines.next().expect("row").split_whitespace().collect();
    // READY has no value yet: a null cell, which kubectl prints as blank.
    assert_eq!((row.len(), &row[..2]), (3, &["w", "3"][..]));

    assert_eq!(
        harness
            .kubectl()
            .ok(&["get", "wd", "w", "-o", "jsonpath={.spec.policy}"])
            .await,
        "Delete"
    );
    let json: Value = serde_json::from_str(
        &harness
            .kubectl()
            .ok(&["get", "widget", "w", "-o", "json"])
            .await,
    )
    .expect("json");
    assert_eq!(json["metadata"]["generation"], 1);
    let yaml = harness
        .kubectl()
        .ok(&["get", "widget", "w", "-o", "yaml"])
        .await;
    assert!(yaml.contains("size: 3"), "{yaml}");
    assert_eq!(
        harness
            .kubectl()
            .ok(&["get", "widgets", "-l", "team=a", "-o", "name"])
            .await
            .trim(),
        "widget.example.io/w"
    );
    assert_eq!(
        harness
            .kubectl()
            .ok(&["get", "widgets", "-l", "team!=a", "-o", "name"])
            .await
            .trim(),
        ""
    );
    let all = harness.kubectl().ok(&["get", "widgets", "-A"]).await;
    assert!(all.starts_with("NAMESPACE"), "{all}");

    let changed = WIDGET.replace("size: 3", "size: 4");
    assert_eq!(
        harness
            .kubectl()
            .ok_with_input(&["apply", "-f", "-"], &changed)
            .await
            .trim(),
        "widget.example.io/w configured"
    );
    assert_eq!(
        harness
            .kubectl()
            .ok(&[
                "get",
                "widget",
                "w",
                "-o",
                "jsonpath={.metadata.generation}"
            ])
            .await,
        "2"
    );
    let ssa = WIDGET.replace("name: w\n", "name: s\n");
    assert_eq!(
        harness
            .kubectl()
            .ok_with_input(&["apply", "--server-side", "-f", "-"], &ssa)
            .await
            .trim(),
        "widget.example.io/s serverside-applied"
    );
    harness.shutdown().await;
}

// Real apiserver: a value outside the schema → 422 "Widget.example.io "w" is invalid:
// spec.size: Invalid value: 12: spec.size in body should be less than or equal to 9"; an
// unknown field under kubectl's default fieldValidation=Strict → 400 "strict decoding error:
// unknown field "spec.junk""; a DNS-1123-invalid name → 422.
#[tokio::test]
async fn validation_errors_reach_kubectl() {
    let harness = with_widgets().await;
    let too_big = harness
        .kubectl()
        .run_with_input(
            &["apply", "-f", "-"],
            &WIDGET.replace("size: 3", "size: 12"),
        )
        .await;
    assert_ne!(too_big.code, 0);
    assert!(
        too_big.stderr.contains(
            "spec.size: Invalid value: 12: spec.size in body should be less than or equal to 9"
        ),
        "{}",
        too_big.stderr
    );
    let unknown = harness
        .kubectl()
        .run_with_input(&["apply", "-f", "-"], &format!("{WIDGET}  junk: true\n"))
        .await;
    assert_ne!(unknown.code, 0);
    assert!(
        unknown
            .stderr
            .contains("strict decoding error: unknown field \"spec.junk\""),
        "{}",
        unknown.stderr
    );
    let bad_name = harness
        .kubectl()
        .run_with_input(
            &["apply", "-f", "-"],
            &WIDGET.replace("name: w", "name: Bad_W"),
        )
        .await;
    assert!(
        bad_name.stderr.contains("a lowercase RFC 1123 subdomain"),
        "{}",
        bad_name.stderr
    );
    harness.shutdown().await;
}

const BUILTINS: &str = r#"
apiVersion: v1
kind: Namespace
metadata: {name: team}
---
apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: team}
stringData: {accessKeyId: AKID}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: team}
data: {level: info}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: provider, namespace: team}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: team}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: team}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: "nginx:1", env: [{name: A, value: "1"}]}
      - {name: sidecar, image: "busybox:1"}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: team}
spec:
  replicas: 3
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: etcd, image: "etcd:3"}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: team}
spec:
  rules:
  - host: web.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: db, namespace: team}
spec:
  minAvailable: 2
  selector: {matchLabels: {app: db}}
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: leader, namespace: team}
spec: {holderIdentity: me, leaseDurationSeconds: 15}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: provider}
rules: [{apiGroups: [""], resources: [secrets], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: provider}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: provider}
subjects: [{kind: ServiceAccount, name: provider, namespace: team}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: provider, namespace: team}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: provider, namespace: team}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: provider}
subjects: [{kind: ServiceAccount, name: provider, namespace: team}]
"#;

// Real apiserver: every built-in kind applies client-side ("created") and server-side
// ("serverside-applied"); Secrets fold stringData into base64 data; re-applying a changed
// Deployment is a strategic merge patch; the simulator (standing in for the controllers) makes
// the Deployment READY 2/2; deleting the namespace deletes its content.
#[tokio::test]
async fn apply_builtins_client_and_server_side() {
    kubectl_path();
    let harness = common::start().await;
    let applied = harness
        .kubectl()
        .ok_with_input(&["apply", "-f", "-"], BUILTINS)
        .await;
    assert_eq!(
        applied.lines().filter(|l| l.ends_with(" created")).count(),
        14,
        "{applied}"
    );
    let again = harness
        .kubectl()
        .ok_with_input(&["apply", "--server-side", "-f", "-"], BUILTINS)
        .await;
    assert_eq!(
        again
            .lines()
            .filter(|l| l.ends_with("serverside-applied"))
            .count(),
        14,
        "{again}"
    );
    assert_eq!(
        harness
            .kubectl()
            .ok(&[
                "get",
                "secret",
                "creds",
                "-n",
                "team",
                "-o",
                "jsonpath={.data.accessKeyId}"
            ])
            .await,
        "QUtJRA=="
    );

    let changed = BUILTINS.replace("image: \"nginx:1\"", "image: \"nginx:2\"");
    let reapplied = harness
        .kubectl()
        .ok_with_input(&["apply", "-f", "-"], &changed)
        .await;
    assert!(
        reapplied.contains("deployment.apps/web configured"),
        "{reapplied}"
    );
    let images = harness
        .kubectl()
        .ok(&[
            "get",
            "deploy",
            "web",
            "-n",
            "team",
            "-o",
            "jsonpath={.spec.template.spec.containers[*].image}",
        ])
        .await;
    assert_eq!(images, "nginx:2 busybox:1");
    harness
        .kubectl()
        .ok(&[
            "wait",
            "--for=condition=Available",
            "deploy/web",
            "-n",
            "team",
            "--timeout=10s",
        ])
        .await;
    let deploy = harness.kubectl().ok(&["get", "deploy", "-n", "team"]).await;
    assert!(
        deploy
            .lines()
            .nth(1)
            .is_some_and(|l| l.split_whitespace().nth(1) == Some("2/2")),
        "{deploy}"
    );
    let kinds = harness
        .kubectl()
        .ok(&[
            "get",
            "sts,svc,ing,pdb,lease,cm,sa,role,rolebinding",
            "-n",
            "team",
            "-o",
            "name",
        ])
        .await;
    // The namespace's `default` ServiceAccount comes from the serviceaccount controller.
    assert_eq!(
        kinds
            .lines()
            .filter(|l| *l != "serviceaccount/default")
            .count(),
        9,
        "{kinds}"
    );

    harness
        .kubectl()
        .ok(&["delete", "namespace", "team", "--timeout=10s"])
        .await;
    let left = harness
        .kubectl()
        .ok(&["get", "deploy,secret,cm", "-n", "team", "-o", "name"])
        .await;
    assert_eq!(left.trim(), "");
    harness.shutdown().await;
}

// Real apiserver: `kubectl patch` sends strategic merge (built-ins; containers merged by name),
// merge and JSON patches; `--subresource=status` patches only status.
#[tokio::test]
async fn patch_every_type() {
    kubectl_path();
    let harness = common::start().await;
    harness
        .kubectl()
        .ok_with_input(&["apply", "-f", "-"], BUILTINS)
        .await;
    let deploy = ["-n", "team", "deployment", "web"];
    let strategic = r#"{"spec":{"template":{"spec":{"containers":[{"name":"web","env":[{"name":"B","value":"2"}]}]}}}}"#;
    harness
        .kubectl()
        .ok(&[&["patch"][..], &deploy[..], &["-p", strategic]].concat())
        .await;
    let env = harness
        .kubectl()
        .ok(&[
            "get",
            "-n",
            "team",
            "deploy",
            "web",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].env[*].name}",
        ])
        .await;
    assert_eq!(env, "A B");
    let containers = harness
        .kubectl()
        .ok(&[
            "get",
            "-n",
            "team",
            "deploy",
            "web",
            "-o",
            "jsonpath={.spec.template.spec.containers[*].name}",
        ])
        .await;
    assert_eq!(containers, "web sidecar");
    harness
        .kubectl()
        .ok(&[
            &["patch"][..],
            &deploy[..],
            &["--type=merge", "-p", r#"{"spec":{"replicas":5}}"#],
        ]
        .concat())
        .await;
    harness
        .kubectl()
        .ok(&[
            &["patch"][..],
            &deploy[..],
            &[
                "--type=json",
                "-p",
                r#"[{"op":"replace","path":"/spec/replicas","value":4}]"#,
            ],
        ]
        .concat())
        .await;
    assert_eq!(
        harness
            .kubectl()
            .ok(&[
                "get",
                "-n",
                "team",
                "deploy",
                "web",
                "-o",
                "jsonpath={.spec.replicas}"
            ])
            .await,
        "4"
    );

    harness
        .kubectl()
        .ok_with_input(&["apply", "-f", "-"], widget_crd::WIDGET_CRD)
        .await;
    harness
        .kubectl()
        .ok_with_input(&["apply", "-f", "-"], WIDGET)
        .await;
    harness
        .kubectl()
        .ok(&[
            "patch",
            "widget",
            "w",
            "--subresource=status",
            "--type=merge",
            "-p",
            r#"{"status":{"phase":"Ready"},"spec":{"size":9}}"#,
        ])
        .await;
    let widget: Value = serde_json::from_str(
        &harness
            .kubectl()
            .ok(&["get", "widget", "w", "-o", "json"])
            .await,
    )
    .expect("json");
    assert_eq!(
        (
            widget["status"]["phase"].clone(),
            widget["spec"]["size"].clone()
        ),
        (json!("Ready"), json!(3))
    );
    let strategic_on_custom = harness
        .kubectl()
        .run(&[
            "patch",
            "widget",
            "w",
            "--type=strategic",
            "-p",
            r#"{"spec":{"size":2}}"#,
        ])
        .await;
    assert_ne!(
        strategic_on_custom.code, 0,
        "strategic merge patch is not supported for custom resources"
    );
    harness.shutdown().await;
}

// Real apiserver: DELETE of an object with finalizers sets deletionTimestamp and returns; the
// object goes when the last finalizer is removed; `kubectl delete` and `kubectl wait
// --for=delete` both return then. `kubectl wait --for=condition=Ready` returns once a status
// write makes the condition true.
#[tokio::test]
async fn delete_waits_for_finalizers_and_wait_for_conditions() {
    let harness = with_widgets().await;
    let held = WIDGET.replace(
        "labels: {team: a}",
        "labels: {team: a}\n  finalizers: [example.io/hold]",
    );
    harness
        .kubectl()
        .ok_with_input(&["apply", "-f", "-"], &held)
        .await;

    let watching = harness.sandbox().watches_started();
    let waiter =
        harness
            .kubectl()
            .spawn(&["wait", "--for=condition=Ready", "widget/w", "--timeout=15s"]);
    // The status is written once kubectl watches, so it waits through the watch.
    eventually("kubectl wait watches widget/w")
        .until(|| harness.sandbox().watches_started() > watching)
        .await;
    let status = json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}});
    widgets(&harness)
        .patch_status("w", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("status set");
    let (code, stdout, stderr) = finish(waiter).await;
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("condition met"), "{stdout}");

    let deleter = harness
        .kubectl()
        .spawn(&["delete", "widget", "w", "--timeout=15s"]);
    let gone = harness
        .kubectl()
        .spawn(&["wait", "--for=delete", "widget/w", "--timeout=15s"]);
    // Held by the finalizer: marked with a deletionTimestamp, still there.
    eventually("widget/w has a deletionTimestamp")
        .every(Duration::from_millis(200))
        .until_async(|| async {
            let marked = harness
                .kubectl()
                .ok(&[
                    "get",
                    "widget",
                    "w",
                    "-o",
                    "jsonpath={.metadata.deletionTimestamp}",
                ])
                .await;
            !marked.is_empty()
        })
        .await;
    let release = json!({"metadata": {"finalizers": null}});
    widgets(&harness)
        .patch("w", &PatchParams::default(), &Patch::Merge(&release))
        .await
        .expect("released");
    let (code, stdout, stderr) = finish(deleter).await;
    assert_eq!(code, 0, "{stdout}{stderr}");
    let (code, stdout, stderr) = finish(gone).await;
    assert_eq!(code, 0, "{stdout}{stderr}");
    harness.shutdown().await;
}

// Real apiserver: `kubectl get -w` prints the list, then one row per watch event (server-side
// Tables for each event).
#[tokio::test]
async fn get_watch_prints_changes() {
    let harness = with_widgets().await;
    harness
        .kubectl()
        .ok_with_input(&["apply", "-f", "-"], WIDGET)
        .await;
    let watching = harness.sandbox().watches_started();
    let mut watcher = harness.kubectl().spawn(&["get", "widgets", "-w"]);
    eventually("kubectl get -w watches widgets")
        .until(|| harness.sandbox().watches_started() > watching)
        .await;
    harness
        .kubectl()
        .ok_with_input(
            &["apply", "-f", "-"],
            &WIDGET.replace("name: w\n", "name: second\n"),
        )
        .await;
    let mut lines = BufReader::new(watcher.stdout.take().expect("kubectl's stdout")).lines();
    let mut names = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(20), async {
        while names.len() < 3 {
            let Some(line) = lines.next_line().await.expect("kubectl's output") else {
                break;
            };
            names.extend(line.split_whitespace().next().map(str::to_owned));
        }
    })
    .await;
    watcher.start_kill().expect("kubectl stopped");
    let (_, _, stderr) = finish(watcher).await;
    assert!(
        read.is_ok(),
        "kubectl printed only {names:?} in 20 s: {stderr}"
    );
    assert_eq!(names, vec!["NAME", "w", "second"], "{stderr}");
    harness.shutdown().await;
}

// Real apiserver: `kubectl describe` lists the object's events (read from core v1 events by
// involvedObject field selectors, written by kube-runtime's events.k8s.io recorder).
#[tokio::test]
async fn describe_shows_recorded_events() {
    let harness = with_widgets().await;
    harness
        .kubectl()
        .ok_with_input(&["apply", "-f", "-"], WIDGET)
        .await;
    let object = widgets(&harness).get("w").await.expect("exists");
    let reference = ObjectReference {
        api_version: Some("example.io/v1".into()),
        kind: Some("Widget".into()),
        name: Some("w".into()),
        namespace: Some("default".into()),
        uid: object.metadata.uid.clone(),
        ..ObjectReference::default()
    };
    let recorder = Recorder::new(
        harness.client(),
        Reporter {
            controller: "widget-controller".into(),
            instance: None,
        },
    );
    let event = Event {
        type_: EventType::Warning,
        reason: "CannotConnect".into(),
        note: Some("endpoint unreachable".into()),
        action: "Connect".into(),
        secondary: None,
    };
    recorder
        .publish(&event, &reference)
        .await
        .expect("published");
    let described = harness.kubectl().ok(&["describe", "widget", "w"]).await;
    assert!(described.contains("CannotConnect"), "{described}");
    assert!(described.contains("endpoint unreachable"), "{described}");
    let events = harness
        .kubectl()
        .ok(&[
            "get",
            "events",
            "--field-selector",
            "involvedObject.name=w",
            "-o",
            "name",
        ])
        .await;
    assert_eq!(events.lines().count(), 1, "{events}");
    harness.shutdown().await;
}

// Real apiserver: `kubectl explain` reads OpenAPI v3; custom kinds show their CRD schema's
// descriptions; built-in kinds are explained too.
#[tokio::test]
async fn explain_custom_and_builtin_kinds() {
    let harness = with_widgets().await;
    let size = harness
        .kubectl()
        .ok(&["explain", "widgets.spec.size"])
        .await;
    assert!(size.contains("Number of parts."), "{size}");
    let widget = harness.kubectl().ok(&["explain", "widget"]).await;
    assert!(widget.contains("A widget for tests."), "{widget}");
    let secret = harness.kubectl().ok(&["explain", "secret"]).await;
    assert!(secret.contains("stringData"), "{secret}");
    let deployment = harness.kubectl().ok(&["explain", "deployments"]).await;
    assert!(
        deployment.contains("KIND:       Deployment")
            || deployment.contains("KIND:     Deployment"),
        "{deployment}"
    );
    harness.shutdown().await;
}

// Real apiserver: kubectl's generators (`kubectl create namespace|configmap|secret|
// serviceaccount`) send protobuf bodies and get "<kind>/<name> created".
#[tokio::test]
async fn create_generators_send_protobuf() {
    kubectl_path();
    let harness = common::start().await;
    let created = [
        harness.kubectl().ok(&["create", "namespace", "team"]).await,
        harness
            .kubectl()
            .ok(&[
                "create",
                "configmap",
                "settings",
                "-n",
                "team",
                "--from-literal=level=info",
            ])
            .await,
        harness
            .kubectl()
            .ok(&[
                "create",
                "secret",
                "generic",
                "creds",
                "-n",
                "team",
                "--from-literal=key=s3cr3t",
            ])
            .await,
        harness
            .kubectl()
            .ok(&["create", "serviceaccount", "provider", "-n", "team"])
            .await,
    ];
    let lines: Vec<&str> = created.iter().map(|s| s.trim()).collect();
    assert_eq!(
        lines,
        vec![
            "namespace/team created",
            "configmap/settings created",
            "secret/creds created",
            "serviceaccount/provider created"
        ]
    );
    let level = harness
        .kubectl()
        .ok(&[
            "get",
            "configmap",
            "settings",
            "-n",
            "team",
            "-o",
            "jsonpath={.data.level}",
        ])
        .await;
    assert_eq!(level, "info");
    let key = harness
        .kubectl()
        .ok(&[
            "get",
            "secret",
            "creds",
            "-n",
            "team",
            "-o",
            "jsonpath={.data.key}",
        ])
        .await;
    assert_eq!(key, "czNjcjN0");
    harness.shutdown().await;
}

// Real apiserver: `kubectl scale` patches the /scale subresource; the Deployment's
// spec.replicas follows and the controllers (here the simulator) catch up.
#[tokio::test]
async fn scale_deployments() {
    kubectl_path();
    let harness = common::start().await;
    harness
        .kubectl()
        .ok_with_input(&["apply", "-f", "-"], BUILTINS)
        .await;
    let scaled = harness
        .kubectl()
        .ok(&["scale", "deployment/web", "-n", "team", "--replicas=4"])
        .await;
    assert_eq!(scaled.trim(), "deployment.apps/web scaled");
    harness
        .kubectl()
        .ok(&[
            "wait",
            "-n",
            "team",
            "deploy/web",
            "--for=jsonpath={.status.readyReplicas}=4",
            "--timeout=10s",
        ])
        .await;
    let stale = harness
        .kubectl()
        .run(&[
            "scale",
            "statefulset/db",
            "-n",
            "team",
            "--current-replicas=7",
            "--replicas=1",
        ])
        .await;
    assert_ne!(stale.code, 0, "the --current-replicas precondition fails");
    harness.shutdown().await;
}

// Real apiserver: `kubectl apply -f` of a `kind: List` validates each item against
// `/openapi/v2` (asked for in protobuf), then creates each item; a re-apply configures them.
#[tokio::test]
async fn apply_a_list() {
    let harness = with_widgets().await;
    let list = format!(
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: l1\n  data: {{a: b}}\n- {}",
        WIDGET.trim_end().replace('\n', "\n  ")
    );
    let created = harness
        .kubectl()
        .ok_with_input(&["apply", "-f", "-"], &list)
        .await;
    assert_eq!(
        created.lines().collect::<Vec<_>>(),
        vec!["configmap/l1 created", "widget.example.io/w created"]
    );
    let changed = list.replace("{a: b}", "{a: c}");
    let configured = harness
        .kubectl()
        .ok_with_input(&["apply", "-f", "-"], &changed)
        .await;
    assert_eq!(
        configured.lines().collect::<Vec<_>>(),
        vec!["configmap/l1 configured", "widget.example.io/w unchanged"]
    );
    harness.shutdown().await;
}

// Real apiserver (kube-apiserver v1.37.2): a PUT whose metadata.uid differs from the stored
// object's fails the storage precondition with 409; a patch of any kind that changes it is 422
// `metadata.uid: Invalid value: "<uid>": field is immutable`.
#[tokio::test]
async fn uid_changes_are_refused() {
    let harness = with_widgets().await;
    harness
        .kubectl()
        .ok_with_input(&["apply", "-f", "-"], WIDGET)
        .await;
    let uid = harness
        .kubectl()
        .ok(&["get", "widget", "w", "-o", "jsonpath={.metadata.uid}"])
        .await;
    let other = "00000000-0000-0000-0000-000000000002";
    let merge = harness
        .kubectl()
        .run(&[
            "patch",
            "widget",
            "w",
            "--type=merge",
            "-p",
            &format!("{{\"metadata\":{{\"uid\":\"{other}\"}}}}"),
        ])
        .await;
    // kubectl words the 422 from its details, as it does for a real server's.
    assert_eq!(
        merge.stderr.trim(),
        format!(
            "The Widget \"w\" is invalid: metadata.uid: Invalid value: \"{other}\": field is immutable"
        ),
        "{merge:?}"
    );
    let api = widgets(&harness);
    let json_patch = api
        .patch(
            "w",
            &PatchParams::default(),
            &Patch::<Value>::Json(
                serde_json::from_value(
                    json!([{"op": "replace", "path": "/metadata/uid", "value": other}]),
                )
                .unwrap(),
            ),
        )
        .await
        .expect_err("a JSON patch of the uid");
    assert!(
        matches!(&json_patch, kube::Error::Api(s) if s.code == 422),
        "{json_patch}"
    );
    let apply = api
        .patch(
            "w",
            &PatchParams::apply("t"),
            &Patch::Apply(json!({"apiVersion": "example.io/v1", "kind": "Widget", "metadata": {"name": "w", "uid": other}})),
        )
        .await
        .expect_err("an apply of another uid");
    assert!(
        matches!(&apply, kube::Error::Api(s) if s.code == 422),
        "{apply}"
    );

    let mut object = api.get("w").await.expect("the widget");
    object.metadata.uid = Some(other.to_owned());
    let replaced = api
        .replace("w", &Default::default(), &object)
        .await
        .expect_err("a PUT with another uid");
    let kube::Error::Api(status) = replaced else {
        panic!("{replaced}");
    };
    assert_eq!(status.code, 409);
    assert_eq!(
        status.message,
        format!(
            "Operation cannot be fulfilled on widgets.example.io \"w\": StorageError: invalid object, Code: 4, Key: /registry/example.io/widgets/default/w, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: {other}, UID in object meta: {uid}"
        )
    );
    assert_eq!(
        harness
            .kubectl()
            .ok(&["get", "widget", "w", "-o", "jsonpath={.metadata.uid}"])
            .await,
        uid
    );
    harness.shutdown().await;
}
