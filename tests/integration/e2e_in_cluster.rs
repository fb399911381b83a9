//! EtcdCluster and Application end to end through the `ferroplane` environment, driven by
//! kubectl as a user would, with the samples from `deploy/samples` (moved into the test's
//! namespace). On the sandbox the EtcdCluster members are simulated from the pods and claims the
//! sandbox shows (`provider_etcd::simulated`); on the real control plane the pods are real etcd
//! members (`support::etcd_members`).

use std::time::Duration;

use crate::support::E2e;
use ferroplane::controllers::Kind;
use ferroplane_testkit::samples;

const WAIT: Duration = Duration::from_secs(60);

/// Healthy voters in the status of EtcdCluster `etcd-demo`.
async fn voters(e2e: &E2e) -> usize {
    e2e.jsonpath(
        "etcdclusters.etcd.ferroplane.io/etcd-demo",
        "{range .status.members[?(@.role=='Voter')]}{.healthy}{\"\\n\"}{end}",
    )
    .await
    .lines()
    .filter(|healthy| *healthy == "true")
    .count()
}

/// `name=uid` of the PersistentVolumeClaims in the test's namespace, as `kubectl get pvc` lists
/// them.
async fn claims(e2e: &E2e) -> Vec<(String, String)> {
    let out = e2e
        .k(&[
            "get",
            "pvc",
            "-o",
            "jsonpath={range .items[*]}{.metadata.name}={.metadata.uid}{\"\\n\"}{end}",
        ])
        .await;
    out.lines()
        .filter_map(|line| line.split_once('='))
        .map(|(name, uid)| (name.to_owned(), uid.to_owned()))
        .collect()
}

/// Sets the size of EtcdCluster `etcd-demo`.
async fn resize(e2e: &E2e, size: u32) {
    e2e.k(&[
        "patch",
        "etcdclusters.etcd.ferroplane.io",
        "etcd-demo",
        "--type=merge",
        "-p",
        &format!(r#"{{"spec":{{"size":{size}}}}}"#),
    ])
    .await;
}

/// Waits for `size` pods, `size` healthy voters and Ready=True.
async fn wait_ready_with(e2e: &E2e, size: u32) {
    e2e.wait_jsonpath(
        "statefulset/etcd-demo",
        "{.spec.replicas}",
        &size.to_string(),
    )
    .await;
    e2e.eventually(&format!("{size} healthy voters"), WAIT, || async {
        (voters(e2e).await == size as usize).then_some(())
    })
    .await;
    e2e.wait_jsonpath(
        "etcdclusters.etcd.ferroplane.io/etcd-demo",
        "{.status.conditions[?(@.type=='Ready')].status}",
        "True",
    )
    .await;
}

// The sample with storage goes 3 → 1 → 3: members leave one at a time and their claims with
// them, so ordinals 1 and 2 come back on new, empty claims (etcd refuses to start on a removed
// member's data) and the cluster is Ready again with three voters.
pub(crate) async fn etcdcluster_scaled_three_to_one_to_three_gets_new_claims() {
    let e2e = E2e::start(&[Kind::EtcdCluster]).await;
    e2e.apply(&samples::without_namespace("etcdcluster.yaml"))
        .await;
    wait_ready_with(&e2e, 3).await;
    let before = claims(&e2e).await;
    assert_eq!(
        before.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        ["data-etcd-demo-0", "data-etcd-demo-1", "data-etcd-demo-2"]
    );

    resize(&e2e, 1).await;
    wait_ready_with(&e2e, 1).await;
    e2e.eventually("the claims of ordinals 1 and 2 to go", WAIT, || async {
        (claims(&e2e).await.len() == 1).then_some(())
    })
    .await;

    resize(&e2e, 3).await;
    wait_ready_with(&e2e, 3).await;
    let after = claims(&e2e).await;
    assert_eq!(
        after.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        ["data-etcd-demo-0", "data-etcd-demo-1", "data-etcd-demo-2"],
        "kubectl get pvc shows three claims"
    );
    assert_eq!(after[0], before[0], "ordinal 0 kept its data");
    for ordinal in 1..3 {
        assert_ne!(
            after[ordinal].1, before[ordinal].1,
            "ordinal {ordinal} came back on a new claim"
        );
    }
    // The controller's record of it: two members removed with their volumes, two learners added
    // and promoted.
    e2e.eventually("two removals, additions and promotions", WAIT, || async {
        let events = e2e
            .k(&[
                "get",
                "events",
                "--field-selector",
                "involvedObject.name=etcd-demo",
                "-o",
                "jsonpath={range .items[*]}{.involvedObject.kind}/{.reason}={.series.count}{\"\\n\"}{end}",
            ])
            .await;
        // The recorder aggregates repeats of a reason into one event with a series count.
        let count = |reason: &str| -> u32 {
            events
                .lines()
                .filter_map(|l| l.split_once('='))
                .filter(|(what, _)| *what == format!("EtcdCluster/{reason}"))
                .map(|(_, n)| n.parse().unwrap_or(1))
                .sum()
        };
        ["MemberRemoved", "VolumeDeleted", "MemberAdded", "MemberPromoted"]
            .iter()
            .all(|r| count(r) == 2)
            .then_some(())
    })
    .await;
    e2e.finish().await;
}

pub(crate) async fn application_sample_ready_scaled_reverted_and_deleted() {
    let e2e = E2e::start(&[Kind::Application]).await;
    e2e.apply(&samples::without_namespace("application.yaml"))
        .await;
    e2e.wait_jsonpath(
        "applications.apps.ferroplane.io/hello",
        "{.status.conditions[?(@.type=='Ready')].status}",
        "True",
    )
    .await;
    assert_eq!(
        e2e.jsonpath(
            "deployment/hello",
            "{.spec.template.spec.containers[0].image}"
        )
        .await,
        "nginx:1.27"
    );
    assert_eq!(
        e2e.jsonpath("service/hello", "{.spec.ports[0].port}").await,
        "80"
    );
    assert_eq!(
        e2e.jsonpath("ingress/hello", "{.spec.rules[0].host}").await,
        "hello.example.com"
    );
    assert_eq!(
        e2e.jsonpath("applications.apps.ferroplane.io/hello", "{.status.url}")
            .await,
        "http://hello.example.com/"
    );

    e2e.k(&[
        "patch",
        "applications.apps.ferroplane.io",
        "hello",
        "--type=merge",
        "-p",
        r#"{"spec":{"replicas":3}}"#,
    ])
    .await;
    e2e.wait_jsonpath("deployment/hello", "{.spec.replicas}", "3")
        .await;
    e2e.k(&[
        "patch",
        "deployment",
        "hello",
        "--type=json",
        "-p",
        r#"[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"evil:1"}]"#,
    ])
    .await;
    e2e.wait_jsonpath(
        "deployment/hello",
        "{.spec.template.spec.containers[0].image}",
        "nginx:1.27",
    )
    .await;

    e2e.k(&[
        "delete",
        "applications.apps.ferroplane.io",
        "hello",
        "--timeout=60s",
    ])
    .await;
    e2e.eventually("the Deployment to go", WAIT, || async {
        let out = e2e
            .kubectl(
                &[
                    "get",
                    "deployment",
                    "hello",
                    "--ignore-not-found",
                    "-o",
                    "name",
                ],
                None,
            )
            .await;
        out.stdout.trim().is_empty().then_some(())
    })
    .await;
    e2e.finish().await;
}

pub(crate) async fn etcdcluster_sample_ready_reverted_refused_and_deleted() {
    let e2e = E2e::start(&[Kind::EtcdCluster]).await;
    e2e.apply(&samples::without_namespace("etcdcluster.yaml"))
        .await;
    // Members answer on both servers: the real control plane's pods are real etcd members, the
    // sandbox's are simulated from its pods and claims (`provider_etcd::simulated`).
    e2e.wait_jsonpath(
        "etcdclusters.etcd.ferroplane.io/etcd-demo",
        "{.status.readyMembers}",
        "3",
    )
    .await;
    e2e.wait_jsonpath(
        "etcdclusters.etcd.ferroplane.io/etcd-demo",
        "{.status.conditions[?(@.type=='Ready')].status}",
        "True",
    )
    .await;
    assert_eq!(voters(&e2e).await, 3, "three healthy voters");
    assert_eq!(
        e2e.jsonpath("statefulset/etcd-demo", "{.spec.replicas}")
            .await,
        "3"
    );
    assert_eq!(
        e2e.jsonpath("statefulset/etcd-demo", "{.spec.podManagementPolicy}")
            .await,
        "Parallel"
    );
    assert_eq!(
        e2e.jsonpath("service/etcd-demo", "{.spec.publishNotReadyAddresses}")
            .await,
        "true"
    );
    assert_eq!(
        e2e.jsonpath("poddisruptionbudget/etcd-demo", "{.spec.maxUnavailable}")
            .await,
        "1"
    );
    assert_eq!(
        e2e.jsonpath(
            "etcdclusters.etcd.ferroplane.io/etcd-demo",
            "{.status.readyMembers}"
        )
        .await,
        "3"
    );
    let endpoint = e2e
        .jsonpath(
            "etcdclusters.etcd.ferroplane.io/etcd-demo",
            "{.status.clientEndpoint}",
        )
        .await;
    assert_eq!(
        endpoint,
        format!("http://etcd-demo-client.{}.svc:2379", e2e.namespace)
    );

    // A deleted bootstrap ConfigMap comes back with a file per member, re-rendered from the
    // membership etcd reports.
    let files = e2e
        .jsonpath("configmap/etcd-demo-bootstrap", "{.data}")
        .await;
    let members_of = |data: &str| -> Vec<String> {
        let files: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(data).unwrap_or_default();
        files.keys().cloned().collect()
    };
    let members = members_of(&files);
    assert_eq!(members.len(), 3, "{files}");
    e2e.k(&["delete", "configmap", "etcd-demo-bootstrap"]).await;
    e2e.eventually("the bootstrap ConfigMap to come back", WAIT, || async {
        let out = e2e
            .kubectl(
                &[
                    "get",
                    "configmap",
                    "etcd-demo-bootstrap",
                    "--ignore-not-found",
                    "-o",
                    "jsonpath={.data}",
                ],
                None,
            )
            .await;
        (members_of(&out.stdout) == members).then_some(())
    })
    .await;
    // A hand scale is reverted.
    e2e.k(&["scale", "statefulset", "etcd-demo", "--replicas=5"])
        .await;
    e2e.wait_jsonpath("statefulset/etcd-demo", "{.spec.replicas}", "3")
        .await;
    assert_eq!(
        e2e.jsonpath("poddisruptionbudget/etcd-demo", "{.spec.maxUnavailable}")
            .await,
        "1"
    );

    let image = "gcr.io/etcd-development/etcd:v3.5.17";
    e2e.k(&[
        "patch",
        "statefulset",
        "etcd-demo",
        "--type=json",
        "-p",
        r#"[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"evil:1"}]"#,
    ])
    .await;
    e2e.wait_jsonpath(
        "statefulset/etcd-demo",
        "{.spec.template.spec.containers[0].image}",
        image,
    )
    .await;

    e2e.k(&[
        "patch",
        "etcdclusters.etcd.ferroplane.io",
        "etcd-demo",
        "--type=merge",
        "-p",
        r#"{"spec":{"version":"3.7.0"}}"#,
    ])
    .await;
    e2e.wait_jsonpath(
        "etcdclusters.etcd.ferroplane.io/etcd-demo",
        "{.status.conditions[?(@.type=='Synced')].status}",
        "False",
    )
    .await;
    let message = e2e
        .jsonpath(
            "etcdclusters.etcd.ferroplane.io/etcd-demo",
            "{.status.conditions[?(@.type=='Synced')].message}",
        )
        .await;
    assert!(
        message.contains("3.5.17") && message.contains("3.5.24"),
        "names the version to go through first: {message}"
    );
    assert_eq!(
        e2e.jsonpath(
            "statefulset/etcd-demo",
            "{.spec.template.spec.containers[0].image}"
        )
        .await,
        image
    );

    e2e.k(&[
        "delete",
        "etcdclusters.etcd.ferroplane.io",
        "etcd-demo",
        "--timeout=60s",
    ])
    .await;
    e2e.eventually("the StatefulSet to go", WAIT, || async {
        let out = e2e
            .kubectl(
                &[
                    "get",
                    "statefulset",
                    "etcd-demo",
                    "--ignore-not-found",
                    "-o",
                    "name",
                ],
                None,
            )
            .await;
        out.stdout.trim().is_empty().then_some(())
    })
    .await;
    e2e.finish().await;
}

// Name collisions: an Application named like an EtcdCluster, and one named like a Deployment
// made by hand. Neither takes what it did not make, each says which object is in the way, and
// deleting it leaves that object alone.
pub(crate) async fn same_named_objects_are_never_adopted() {
    let e2e = E2e::start(&[Kind::EtcdCluster, Kind::Application]).await;
    e2e.apply(&samples::without_namespace("etcdcluster.yaml"))
        .await;
    e2e.wait_jsonpath("service/etcd-demo", "{.spec.clusterIP}", "None")
        .await;
    e2e.apply("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels:\n    app: web\nspec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n      labels:\n        app: web\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:1.25\n").await;
    let web_before = e2e.jsonpath("deployment/web", "{.spec}").await;

    for (name, in_the_way) in [
        ("etcd-demo", "Service/etcd-demo"),
        ("web", "Deployment/web"),
    ] {
        e2e.apply(&format!(
            "apiVersion: apps.ferroplane.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\nspec:\n  image: nginx:1.27\n"
        ))
        .await;
        let object = format!("applications.apps.ferroplane.io/{name}");
        e2e.wait_jsonpath(
            &object,
            "{.status.conditions[?(@.type=='Synced')].status}",
            "False",
        )
        .await;
        let message = e2e
            .jsonpath(&object, "{.status.conditions[?(@.type=='Synced')].message}")
            .await;
        assert!(message.contains(in_the_way), "{message}");
    }
    assert_eq!(
        e2e.jsonpath("service/etcd-demo", "{.spec.clusterIP}").await,
        "None",
        "the EtcdCluster's peer Service is still its own"
    );
    assert_eq!(
        e2e.jsonpath("service/etcd-demo", "{.metadata.ownerReferences[0].kind}")
            .await,
        "EtcdCluster"
    );
    assert_eq!(
        e2e.jsonpath("deployment/web", "{.spec}").await,
        web_before,
        "the hand-made Deployment is unchanged"
    );
    assert_eq!(
        e2e.jsonpath("deployment/web", "{.metadata.ownerReferences}")
            .await,
        ""
    );

    for name in ["etcd-demo", "web"] {
        e2e.k(&[
            "delete",
            "applications.apps.ferroplane.io",
            name,
            "--timeout=60s",
        ])
        .await;
    }
    assert_eq!(
        e2e.jsonpath(
            "deployment/web",
            "{.spec.template.spec.containers[0].image}"
        )
        .await,
        "nginx:1.25",
        "deleting the Application left the Deployment it never had"
    );
    assert_eq!(
        e2e.jsonpath("service/etcd-demo", "{.metadata.ownerReferences[0].kind}")
            .await,
        "EtcdCluster"
    );
    e2e.finish().await;
}

// The operations fields of an EtcdCluster reach its pods: scheduling, pod metadata, the metrics
// port and Service, the options annotation that rolls members on a change, and the selector the
// `/scale` subresource reports. An option ferroplane sets itself is refused at admission.
pub(crate) async fn etcdcluster_operations_fields_reach_the_pods() {
    let e2e = E2e::start(&[Kind::EtcdCluster]).await;
    let refused = e2e
        .kubectl(
            &["apply", "-f", "-"],
            Some(
                "apiVersion: etcd.ferroplane.io/v1alpha1\nkind: EtcdCluster\nmetadata:\n  name: etcd-bad\nspec:\n  size: 1\n  options:\n    data-dir: /tmp/x\n",
            ),
        )
        .await;
    assert!(
        !refused.success() && refused.stderr.contains("options may not set"),
        "a reserved option is refused at admission: {}",
        refused.stderr
    );
    e2e.apply(
        r#"
apiVersion: etcd.ferroplane.io/v1alpha1
kind: EtcdCluster
metadata:
  name: etcd-ops
spec:
  size: 1
  options:
    quota-backend-bytes: 104857600
    auto-compaction-retention: "30m"
  scheduling:
    tolerations:
      - {key: dedicated, operator: Equal, value: etcd, effect: NoSchedule}
    topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway}
  podMetadata:
    labels: {team: db}
    annotations: {example.com/backup: "nightly"}
  resources:
    requests: {cpu: 50m, memory: 64Mi}
"#,
    )
    .await;
    let object = "etcdclusters.etcd.ferroplane.io/etcd-ops";
    e2e.wait_jsonpath(
        object,
        "{.status.conditions[?(@.type=='Ready')].status}",
        "True",
    )
    .await;
    assert_eq!(
        e2e.jsonpath(object, "{.status.selector}").await,
        "app.kubernetes.io/instance=etcd-ops,app.kubernetes.io/name=etcd"
    );
    // What the pod template says, and on the real control plane what the StatefulSet
    // controller gave the pod (the sandbox runs no pods).
    let mut objects = vec![("statefulset/etcd-ops", ".spec.template")];
    if crate::support::server() == crate::support::Server::RealControlPlane {
        objects.push(("pod/etcd-ops-0", ""));
    }
    for (object, prefix) in objects {
        let e2e = &e2e;
        let get = |path: &str| {
            let path = format!("{{{prefix}{path}}}");
            async move { e2e.jsonpath(object, &path).await }
        };
        assert_eq!(get(".metadata.labels.team").await, "db", "{object}");
        assert_eq!(
            get(".metadata.annotations.example\\.com/backup").await,
            "nightly",
            "{object}"
        );
        assert_eq!(
            get(".spec.tolerations[?(@.key=='dedicated')].value").await,
            "etcd",
            "{object}"
        );
        assert_eq!(
            get(".spec.topologySpreadConstraints[0].labelSelector.matchLabels.app\\.kubernetes\\.io/instance").await,
            "etcd-ops",
            "{object}"
        );
        assert_eq!(
            get(".spec.containers[0].resources.requests.cpu").await,
            "50m",
            "{object}"
        );
        assert_eq!(
            get(".spec.containers[0].ports[?(@.name=='metrics')].containerPort").await,
            "2381",
            "{object}"
        );
        let options = get(".metadata.annotations.etcd\\.ferroplane\\.io/options").await;
        let options: serde_json::Value = serde_json::from_str(&options).expect("options JSON");
        assert_eq!(options["quota-backend-bytes"], 104857600, "{object}");
        assert_eq!(options["auto-compaction-mode"], "periodic", "{object}");
    }
    let file = e2e
        .jsonpath("configmap/etcd-ops-bootstrap", "{.data.etcd-ops-0\\.json}")
        .await;
    let file: serde_json::Value = serde_json::from_str(&file).expect("config file JSON");
    assert_eq!(file["quota-backend-bytes"], 104857600);
    assert_eq!(file["auto-compaction-retention"], "30m");
    assert_eq!(
        e2e.jsonpath(
            "service/etcd-ops-metrics",
            "{.metadata.labels.app\\.kubernetes\\.io/component}:{.spec.ports[0].name}:{.spec.ports[0].port}"
        )
        .await,
        "metrics:metrics:2381"
    );
    e2e.k(&[
        "delete",
        "etcdclusters.etcd.ferroplane.io",
        "etcd-ops",
        "--timeout=60s",
    ])
    .await;
    e2e.finish().await;
}

// `tls: {}`: ferroplane makes a CA and the peer, server and client certificates in Secrets it
// owns, mounts them into the members and switches every URL to https; the Secrets go with the
// cluster. Adding TLS to a running cluster is refused at admission.
pub(crate) async fn etcdcluster_with_generated_tls() {
    let e2e = E2e::start(&[Kind::EtcdCluster]).await;
    e2e.apply(
        "apiVersion: etcd.ferroplane.io/v1alpha1\nkind: EtcdCluster\nmetadata:\n  name: etcd-tls\nspec:\n  size: 3\n  tls: {}\n",
    )
    .await;
    let object = "etcdclusters.etcd.ferroplane.io/etcd-tls";
    e2e.wait_jsonpath(
        object,
        "{.status.conditions[?(@.type=='Ready')].status}",
        "True",
    )
    .await;
    assert_eq!(
        e2e.jsonpath(object, "{.status.clientEndpoint}").await,
        format!("https://etcd-tls-client.{}.svc:2379", e2e.namespace)
    );
    for which in ["ca", "peer", "server", "client"] {
        let secret = format!("secret/etcd-tls-tls-{which}");
        assert_eq!(
            e2e.jsonpath(&secret, "{.type}/{.metadata.ownerReferences[0].kind}")
                .await,
            "kubernetes.io/tls/EtcdCluster",
            "{secret}"
        );
        let keys = e2e.jsonpath(&secret, "{.data}").await;
        for key in ["tls.crt", "tls.key", "ca.crt"] {
            assert!(keys.contains(key), "{secret} has {key}");
        }
    }
    assert!(
        !e2e.jsonpath(
            "secret/etcd-tls-tls-server",
            "{.metadata.annotations.etcd\\.ferroplane\\.io/not-after}"
        )
        .await
        .is_empty(),
        "the expiry that renewal is judged by is recorded"
    );
    assert_eq!(
        e2e.jsonpath(
            "statefulset/etcd-tls",
            "{.spec.template.spec.volumes[?(@.name=='peer-tls')].secret.secretName}"
        )
        .await,
        "etcd-tls-tls-peer"
    );
    let file = e2e
        .jsonpath("configmap/etcd-tls-bootstrap", "{.data.etcd-tls-0\\.json}")
        .await;
    let file: serde_json::Value = serde_json::from_str(&file).expect("config file JSON");
    assert_eq!(file["listen-client-urls"], "https://0.0.0.0:2379");
    assert_eq!(file["client-transport-security"]["client-cert-auth"], true);
    // No key material in what a tenant reads about the cluster.
    let described = e2e.k(&["describe", object]).await;
    assert!(!described.contains("PRIVATE KEY"), "{described}");

    let refused = e2e
        .kubectl(
            &[
                "patch",
                "etcdclusters.etcd.ferroplane.io",
                "etcd-tls",
                "--type=json",
                "-p",
                r#"[{"op":"remove","path":"/spec/tls"}]"#,
            ],
            None,
        )
        .await;
    assert!(
        !refused.success() && refused.stderr.contains("tls cannot be added or removed"),
        "{}",
        refused.stderr
    );

    e2e.k(&[
        "delete",
        "etcdclusters.etcd.ferroplane.io",
        "etcd-tls",
        "--timeout=60s",
    ])
    .await;
    e2e.eventually(
        "the certificate Secrets to go with the cluster",
        WAIT,
        || async {
            let left = e2e
                .k(&["get", "secrets", "-o", "name"])
                .await
                .lines()
                .filter(|l| l.contains("etcd-tls-tls-"))
                .count();
            (left == 0).then_some(())
        },
    )
    .await;
    e2e.finish().await;
}
