//! EtcdCluster and Application end to end through the `ferroplane` environment, driven by
//! kubectl as a user would, with the samples from `deploy/samples` (moved into the test's
//! namespace). On the sandbox the EtcdCluster members are simulated from the pods and claims the
//! sandbox shows (`ferroplane_sandbox_etcd`); on the real control plane the pods are real etcd
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
    // sandbox's are simulated from its pods and claims (`ferroplane_sandbox_etcd`).
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
        message.contains("3.5.17")
            && message.contains(
                "upgrade to 3.5.26 or later first, wait for every member to be healthy, then to 3.6"
            ),
        "names etcd's path, 3.5.26 first: {message}"
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

/// Names of the managers that own `spec.replicas` of Deployment `name`.
async fn replicas_owners(e2e: &E2e, name: &str) -> Vec<String> {
    let out = e2e
        .k(&[
            "get",
            "deployment",
            name,
            "--show-managed-fields",
            "-o",
            "json",
        ])
        .await;
    let deployment: serde_json::Value = serde_json::from_str(&out).expect("kubectl prints JSON");
    deployment["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["fieldsV1"]["f:spec"].get("f:replicas").is_some())
        .map(|m| m["manager"].as_str().unwrap_or_default().to_owned())
        .collect()
}

// An Application with an autoscaler, an environment variable from a Secret and two ports, on
// both servers: the HorizontalPodAutoscaler sets the replicas (its minimum at first), neither
// it nor `kubectl scale` is fought, the Secret's value stays in the Secret, the Service serves
// both ports, and Ready waits for the rollout and the Ingress's address (written by a stand-in
// ingress controller on either server, see `support`).
pub(crate) async fn application_with_autoscaling_secret_env_and_two_ports() {
    let e2e = E2e::start(&[Kind::Application]).await;
    let password = "s3cr3t-never-in-the-custom-resource";
    e2e.apply(&format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: {password}\n"
    ))
    .await;
    e2e.apply(
        r#"
apiVersion: apps.ferroplane.io/v1alpha1
kind: Application
metadata:
  name: shop
spec:
  image: nginx:1.27
  ports:
    - {name: http, port: 8080, servicePort: 80}
    - {name: metrics, port: 9090}
  env:
    - name: DB_PASSWORD
      valueFrom:
        secretKeyRef: {name: db, key: password}
  resources:
    requests: {cpu: 100m}
  autoscaling: {minReplicas: 2, maxReplicas: 4, targetCPUUtilizationPercentage: 70}
  ingress:
    host: shop.example.com
"#,
    )
    .await;
    let app = "applications.apps.ferroplane.io/shop";
    // The autoscaler raises the Deployment (created without replicas: 1) to its minimum.
    e2e.eventually("the autoscaler to scale to its minimum", WAIT, || async {
        (e2e.jsonpath("deployment/shop", "{.spec.replicas}").await == "2").then_some(())
    })
    .await;
    e2e.eventually("Ready with two replicas", WAIT, || async {
        let ready = e2e
            .jsonpath(app, "{.status.conditions[?(@.type=='Ready')].status}")
            .await;
        let available = e2e.jsonpath(app, "{.status.availableReplicas}").await;
        (ready == "True" && available == "2").then_some(())
    })
    .await;
    assert_eq!(
        e2e.jsonpath("hpa/shop", "{.spec.scaleTargetRef.kind}/{.spec.scaleTargetRef.name} {.spec.minReplicas}-{.spec.maxReplicas}")
            .await,
        "Deployment/shop 2-4"
    );
    assert_eq!(
        e2e.jsonpath(
            "service/shop",
            "{.spec.ports[*].name} {.spec.ports[*].port}"
        )
        .await,
        "http metrics 80 9090"
    );
    assert_eq!(
        e2e.jsonpath(
            "deployment/shop",
            "{.spec.template.spec.containers[0].env[0].valueFrom.secretKeyRef.name}/{.spec.template.spec.containers[0].env[0].valueFrom.secretKeyRef.key}"
        )
        .await,
        "db/password"
    );
    for object in [app, "deployment/shop"] {
        let json = e2e.k(&["get", object, "-o", "json"]).await;
        assert!(
            !json.contains(password),
            "{object} carries the Secret's value"
        );
    }
    assert_eq!(
        e2e.jsonpath(
            app,
            "{.status.url} {.status.ingressAddress} {.status.revision}"
        )
        .await,
        format!(
            "http://shop.example.com/ {} 1",
            ferroplane_testkit::ingress::ADDRESS
        )
    );
    // The autoscaler's scale write starts no ownership of a field nobody owned (so the list is
    // empty on both servers); ferroplane's apply left it out.
    assert_eq!(
        replicas_owners(&e2e, "shop").await,
        Vec::<String>::new(),
        "nobody owns the replicas the autoscaler set"
    );

    // Inside the autoscaler's range a hand scale stays: the Application follows it.
    e2e.k(&["scale", "deployment", "shop", "--replicas=3"])
        .await;
    e2e.eventually("the Application to report 3 replicas", WAIT, || async {
        let seen = e2e
            .jsonpath(app, "{.status.replicas} {.status.availableReplicas} {.status.conditions[?(@.type=='Ready')].status}")
            .await;
        (seen == "3 3 True").then_some(())
    })
    .await;
    assert_eq!(
        e2e.jsonpath("deployment/shop", "{.spec.replicas}").await,
        "3"
    );
    assert!(
        !replicas_owners(&e2e, "shop")
            .await
            .iter()
            .any(|m| m.starts_with("ferroplane")),
        "ferroplane never takes the replicas back"
    );
    // Above its maximum the autoscaler (not ferroplane) brings it back.
    e2e.k(&["scale", "deployment", "shop", "--replicas=6"])
        .await;
    e2e.eventually("the autoscaler to cap the replicas", WAIT, || async {
        (e2e.jsonpath("deployment/shop", "{.spec.replicas}").await == "4").then_some(())
    })
    .await;

    // Without autoscaling the autoscaler goes and `replicas` is the Application's again.
    e2e.k(&[
        "patch",
        "applications.apps.ferroplane.io",
        "shop",
        "--type=merge",
        "-p",
        r#"{"spec":{"autoscaling":null,"replicas":2}}"#,
    ])
    .await;
    e2e.wait_jsonpath("deployment/shop", "{.spec.replicas}", "2")
        .await;
    e2e.eventually("the autoscaler to go", WAIT, || async {
        let out = e2e
            .kubectl(
                &["get", "hpa", "shop", "--ignore-not-found", "-o", "name"],
                None,
            )
            .await;
        out.stdout.trim().is_empty().then_some(())
    })
    .await;
    e2e.k(&[
        "delete",
        "applications.apps.ferroplane.io",
        "shop",
        "--timeout=60s",
    ])
    .await;
    e2e.finish().await;
}

// The operations fields of an EtcdCluster reach its pods: scheduling, pod metadata, the metrics
// port and Service, the options annotation that rolls members on a change, and the selector the
// `/scale` subresource reports. An option ferroplane sets itself, or a value etcd cannot read, is
// refused at admission.
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
    // Issue 32, defect 10: a value etcd cannot read is refused at admission too, naming it.
    let refused = e2e
        .kubectl(
            &["apply", "-f", "-"],
            Some(
                "apiVersion: etcd.ferroplane.io/v1alpha1\nkind: EtcdCluster\nmetadata:\n  name: etcd-bad\nspec:\n  size: 1\n  options:\n    quota-backend-bytes: lots\n    log-level: loud\n",
            ),
        )
        .await;
    assert!(
        !refused.success()
            && refused
                .stderr
                .contains("options.quota-backend-bytes: etcd reads a whole number")
            && refused
                .stderr
                .contains("options.log-level must be one of debug, info"),
        "option values of the wrong etcd type are refused at admission: {}",
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
    // The `/scale` subresource reads the size and the selector (what `kubectl scale` and an
    // autoscaler use), on both servers.
    let scale = e2e
        .k(&[
            "get",
            "--raw",
            &format!(
                "/apis/etcd.ferroplane.io/v1alpha1/namespaces/{}/etcdclusters/etcd-ops/scale",
                e2e.namespace
            ),
        ])
        .await;
    let scale: serde_json::Value = serde_json::from_str(&scale).expect("a Scale");
    assert_eq!(
        (
            &scale["kind"],
            &scale["spec"]["replicas"],
            &scale["status"]["selector"]
        ),
        (
            &serde_json::json!("Scale"),
            &serde_json::json!(1),
            &serde_json::json!("app.kubernetes.io/instance=etcd-ops,app.kubernetes.io/name=etcd")
        ),
        "{scale}"
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

// The Application CRD's rules refuse, at `kubectl apply`, what the children's API would refuse
// or what ferroplane could not render, with a message that says what to change; on the real
// server this also proves the rules fit its CEL cost budget.
pub(crate) async fn application_spec_mistakes_are_refused_at_apply_time() {
    let e2e = E2e::start(&[]).await;
    let app = |spec: &str| {
        format!(
            "apiVersion: apps.ferroplane.io/v1alpha1\nkind: Application\nmetadata:\n  name: bad\nspec:\n  image: nginx:1.27\n{spec}"
        )
    };
    let cases = [
        (
            "port and ports",
            "  port: 80\n  ports: [{name: web, port: 8080}]\n",
            "set either port",
        ),
        (
            "no exposed port",
            "  ports: [{name: web, port: 8080, expose: false}]\n",
            "at least one of ports must have expose: true",
        ),
        (
            "two ports on one Service port",
            "  ports: [{name: a, port: 8080, servicePort: 80}, {name: b, port: 8081, servicePort: 80}]\n",
            "same servicePort and protocol",
        ),
        (
            "ingress to a UDP port",
            "  ports: [{name: web, port: 8080}, {name: dns, port: 53, protocol: UDP}]\n  ingress: {host: a.example.com, port: dns}\n",
            "ingress.port must name an exposed TCP port",
        ),
        (
            "value and valueFrom",
            "  env: [{name: A, value: x, valueFrom: {secretKeyRef: {name: s, key: k}}}]\n",
            "exactly one of value and valueFrom",
        ),
        (
            "envFrom of both kinds",
            "  envFrom: [{secretRef: {name: s}, configMapRef: {name: c}}]\n",
            "exactly one of secretRef and configMapRef",
        ),
        (
            "a volume of two sources",
            "  volumes: [{name: v, mountPath: /v, emptyDir: {}, secret: {secretName: s}}]\n",
            "exactly one of configMap, secret, persistentVolumeClaim and emptyDir",
        ),
        (
            "a probe of two kinds",
            "  probes: {readiness: {httpGet: {path: /}, tcpSocket: {}}}\n",
            "exactly one of httpGet, tcpSocket, exec and grpc",
        ),
        (
            "a liveness success threshold",
            "  probes: {liveness: {tcpSocket: {}, successThreshold: 2}}\n",
            "liveness.successThreshold must be 1",
        ),
        (
            "min above max",
            "  autoscaling: {minReplicas: 5, maxReplicas: 2}\n",
            "minReplicas must not exceed",
        ),
        (
            "an unknown Service type",
            "  serviceType: ExternalName\n",
            "serviceType",
        ),
    ];
    for (case, spec, expected) in cases {
        let out = e2e.kubectl(&["apply", "-f", "-"], Some(&app(spec))).await;
        assert!(!out.success(), "{case}: kubectl apply should fail");
        assert!(
            out.stderr.contains(expected),
            "{case}: expected {expected:?} in:\n{}",
            out.stderr
        );
    }
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

/// The reasons of the events about EtcdCluster `name`, one a line.
async fn event_reasons(e2e: &E2e, name: &str) -> String {
    e2e.k(&[
        "get",
        "events",
        "--field-selector",
        &format!("involvedObject.name={name}"),
        "-o",
        "jsonpath={range .items[*]}{.reason}: {.message}{\"\\n\"}{end}",
    ])
    .await
}

/// `spec.auth` on the sandbox's simulated etcd: a missing Secret is a condition that says
/// which; with it the cluster becomes Ready with authentication on; a changed password is
/// applied (event `RootPasswordChanged`, the password in effect recorded); no password shows
/// where a tenant reads; an EtcdBackup of the cluster takes its snapshot with root's token;
/// removing `spec.auth` disables authentication.
pub(crate) async fn etcdcluster_with_root_auth() {
    use base64::Engine as _;
    let b64 = |t: &str| base64::engine::general_purpose::STANDARD.encode(t);
    let e2e = E2e::start(&[Kind::EtcdCluster]).await;
    let object = "etcdclusters.etcd.ferroplane.io/etcd-auth";
    e2e.apply(
        "apiVersion: etcd.ferroplane.io/v1alpha1\nkind: EtcdCluster\nmetadata:\n  name: etcd-auth\n  annotations:\n    ferroplane.io/poll-interval: 2s\nspec:\n  size: 1\n  auth:\n    rootSecretRef:\n      name: etcd-root\n",
    )
    .await;
    let synced = "{.status.conditions[?(@.type=='Synced')].reason}";
    let refused = ferroplane_testkit::eventually("Synced=False naming the missing Secret")
        .within(WAIT)
        .every(Duration::from_millis(200))
        .try_until_async(|| async {
            let message = e2e
                .jsonpath(object, "{.status.conditions[?(@.type=='Synced')].message}")
                .await;
            let reason = e2e.jsonpath(object, synced).await;
            // Connect failures are ReconcileError with the provider's reason first in the message.
            if reason == "ReconcileError"
                && message.starts_with("AuthSecretInvalid")
                && message.contains("etcd-root")
            {
                Ok(())
            } else {
                Err(format!("Synced reason {reason:?}: {message}"))
            }
        })
        .await;
    if let Err(e) = refused {
        panic!("{e}");
    }
    let first = "first-Pa55-wd";
    let second = "second-Pa55-wd";
    e2e.apply(&format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: etcd-root\ndata:\n  password: {}\n",
        b64(first)
    ))
    .await;
    e2e.eventually("Ready with authentication enabled", WAIT, || async {
        let ready = e2e
            .jsonpath(object, "{.status.conditions[?(@.type=='Ready')].status}")
            .await;
        (ready == "True" && e2e.jsonpath(object, "{.status.auth}").await == "Enabled").then_some(())
    })
    .await;
    assert_eq!(
        e2e.jsonpath(
            "secret/etcd-auth-auth",
            "{.data.password}/{.metadata.ownerReferences[0].kind}"
        )
        .await,
        format!("{}/EtcdCluster", b64(first)),
        "the password in effect is recorded in a Secret the cluster owns"
    );

    e2e.apply(&format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: etcd-root\ndata:\n  password: {}\n",
        b64(second)
    ))
    .await;
    e2e.eventually("root's password changed and recorded", WAIT, || async {
        let recorded = e2e
            .jsonpath("secret/etcd-auth-auth", "{.data.password}")
            .await;
        (event_reasons(&e2e, "etcd-auth")
            .await
            .contains("RootPasswordChanged")
            && recorded == b64(second))
        .then_some(())
    })
    .await;
    e2e.wait_jsonpath(object, synced, "ReconcileSuccess").await;
    let tenant_view = format!(
        "{}\n{}\n{}",
        e2e.k(&["describe", object]).await,
        e2e.k(&["get", object, "-o", "yaml"]).await,
        event_reasons(&e2e, "etcd-auth").await
    );
    for password in [first, second] {
        assert!(!tenant_view.contains(password), "{tenant_view}");
    }

    // A backup of the cluster authenticates with the password in effect: the simulated etcd,
    // as etcd does, refuses a snapshot without root's token while authentication is on.
    let backup = "etcdbackups.etcd.ferroplane.io/auth-backup";
    crate::e2e_etcd_backup::oss_with_bucket(&e2e).await;
    e2e.apply(&crate::e2e_etcd_backup::backup_yaml(
        &e2e,
        "auth-backup",
        "etcd-auth",
        crate::e2e_etcd_backup::BUCKET,
        "",
    ))
    .await;
    e2e.wait_jsonpath(backup, "{.status.snapshotCount}", "1")
        .await;
    let backup_view = format!(
        "{}\n{}",
        e2e.k(&["get", backup, "-o", "yaml"]).await,
        event_reasons(&e2e, "auth-backup").await
    );
    assert!(!backup_view.contains(second), "{backup_view}");

    e2e.k(&[
        "patch",
        object,
        "--type=json",
        "-p",
        r#"[{"op":"remove","path":"/spec/auth"}]"#,
    ])
    .await;
    e2e.eventually("authentication disabled", WAIT, || async {
        (e2e.jsonpath(object, "{.status.auth}").await == "Disabled"
            && event_reasons(&e2e, "etcd-auth")
                .await
                .contains("AuthDisabled"))
        .then_some(())
    })
    .await;
    e2e.finish().await;
}
