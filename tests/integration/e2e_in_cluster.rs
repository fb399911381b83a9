//! EtcdCluster and Application end to end through the `ferroplane` environment, driven by
//! kubectl as a user would, with the samples from `deploy/samples` (moved into the test's
//! namespace). Runs against the sandbox by default and a real cluster with
//! `FERROPLANE_E2E_KUBECONFIG`. The test process cannot reach etcd pods, so EtcdCluster status
//! comes from the StatefulSet (membership Unknown) in both cases.

use std::time::Duration;

use crate::support::E2e;
use ferroplane::controllers::Kind;
use ferroplane_testkit::samples;

const WAIT: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn application_sample_ready_scaled_reverted_and_deleted() {
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcdcluster_sample_ready_reverted_refused_and_deleted() {
    let e2e = E2e::start(&[Kind::EtcdCluster]).await;
    e2e.apply(&samples::without_namespace("etcdcluster.yaml"))
        .await;
    e2e.wait_jsonpath(
        "etcdclusters.etcd.ferroplane.io/etcd-demo",
        "{.status.conditions[?(@.type=='Ready')].status}",
        "True",
    )
    .await;
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
    assert!(message.contains("one minor version at a time"), "{message}");
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
