//! End to end: the Application controller runs in-process against the sandbox API server (whose
//! workload simulator marks Deployments ready) and kubectl drives it, as a user would.

use std::time::Duration;

use ferroplane_apis::application::Application;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::Ingress;
use kube::{CustomResourceExt, ResourceExt};
use provider_application::Options;

#[path = "../../test-support/in_cluster_env.rs"]
mod in_cluster_env;

use in_cluster_env::{Env, eventually};

const EVENTUALLY_TIMEOUT: Duration = Duration::from_secs(30);

async fn start_env() -> Env {
    Env::start(Application::crd(), |runtime, stopped| async move {
        provider_application::run(&runtime, Options::default(), stopped)
            .await
            .expect("the controller runs");
    })
    .await
}

fn sample() -> String {
    in_cluster_env::sample("application.yaml")
}

fn image(d: &Deployment) -> Option<String> {
    d.spec
        .as_ref()?
        .template
        .spec
        .as_ref()?
        .containers
        .first()?
        .image
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sample_application_lifecycle_with_kubectl() {
    let env = start_env().await;
    env.kubectl(&["apply", "-f", &sample()]);

    let deployments = env.api::<Deployment>();
    let d = eventually("the Deployment", || async {
        deployments.get_opt("hello").await.ok().flatten()
    })
    .await;
    assert_eq!(d.spec.as_ref().and_then(|s| s.replicas), Some(2));
    assert_eq!(image(&d).as_deref(), Some("nginx:1.27"));
    assert_eq!(d.owner_references()[0].kind, "Application");
    let svc = env.api::<Service>().get("hello").await.expect("Service");
    let port = &svc.spec.and_then(|s| s.ports).expect("ports")[0];
    assert_eq!(
        (port.port, port.target_port.clone()),
        (
            80,
            Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(80))
        )
    );
    let ingresses = env.api::<Ingress>();
    eventually("the Ingress", || async {
        ingresses.get_opt("hello").await.ok().flatten()
    })
    .await;

    env.kubectl(&[
        "wait",
        "--for=condition=Ready",
        "applications.apps.ferroplane.io/hello",
        "--timeout=30s",
    ]);
    let apps = env.api::<Application>();
    let status = apps
        .get("hello")
        .await
        .expect("app")
        .status
        .expect("status");
    assert_eq!(status.url.as_deref(), Some("http://hello.example.com/"));
    assert_eq!(status.available_replicas, 2);

    // Scale.
    env.kubectl(&[
        "patch",
        "applications.apps.ferroplane.io",
        "hello",
        "--type=merge",
        "-p",
        r#"{"spec":{"replicas":3}}"#,
    ]);
    eventually("3 replicas", || async {
        deployments
            .get("hello")
            .await
            .ok()
            .filter(|d| d.spec.as_ref().and_then(|s| s.replicas) == Some(3))
    })
    .await;

    // A hand edit of a child is reverted.
    env.kubectl(&[
        "patch",
        "deployment",
        "hello",
        "--type=json",
        "-p",
        r#"[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"evil:1"}]"#,
    ]);
    eventually("the image edit to be reverted", || async {
        deployments
            .get("hello")
            .await
            .ok()
            .filter(|d| image(d).as_deref() == Some("nginx:1.27"))
    })
    .await;

    // Removing `ingress` removes the Ingress; the URL falls back to the Service.
    env.kubectl(&[
        "patch",
        "applications.apps.ferroplane.io",
        "hello",
        "--type=json",
        "-p",
        r#"[{"op":"remove","path":"/spec/ingress"}]"#,
    ]);
    eventually("the Ingress to go", || async {
        ingresses
            .get_opt("hello")
            .await
            .ok()
            .filter(Option::is_none)
    })
    .await;
    eventually("the in-cluster URL", || async {
        apps.get("hello")
            .await
            .ok()
            .and_then(|a| a.status)
            .and_then(|s| s.url)
            .filter(|u| u == "http://hello.default.svc.cluster.local")
    })
    .await;

    // Delete removes the children.
    env.kubectl(&[
        "delete",
        "applications.apps.ferroplane.io",
        "hello",
        "--wait=true",
        "--timeout=30s",
    ]);
    eventually("the children to go", || async {
        let d = deployments.get_opt("hello").await.ok()?;
        let s = env.api::<Service>().get_opt("hello").await.ok()?;
        (d.is_none() && s.is_none()).then_some(())
    })
    .await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn orphan_policy_leaves_the_children_without_owner() {
    let env = start_env().await;
    let manifest = env.dir.path().join("orphan.yaml");
    std::fs::write(
        &manifest,
        "apiVersion: apps.ferroplane.io/v1alpha1\nkind: Application\nmetadata:\n  name: keep\n  namespace: default\nspec:\n  image: nginx:1.27\n  deletionPolicy: Orphan\n",
    )
    .expect("write manifest");
    env.kubectl(&["apply", "-f", &manifest.to_string_lossy()]);
    env.kubectl(&[
        "wait",
        "--for=condition=Ready",
        "applications.apps.ferroplane.io/keep",
        "--timeout=30s",
    ]);
    env.kubectl(&[
        "delete",
        "applications.apps.ferroplane.io",
        "keep",
        "--wait=true",
        "--timeout=30s",
    ]);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let d = env
        .api::<Deployment>()
        .get("keep")
        .await
        .expect("the Deployment is left running");
    assert!(d.owner_references().is_empty());
    env.api::<Service>()
        .get("keep")
        .await
        .expect("the Service is left");
    env.stop().await;
}
