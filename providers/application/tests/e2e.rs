//! End to end: the Application controller runs in-process against the sandbox API server (whose
//! workload simulator marks Deployments ready) and kubectl drives it, as a user would.

use std::time::Duration;

use ferroplane_apis::application::Application;
use ferroplane_apis::common::ConditionStatus;
use ferroplane_apis::deploy::Provider;
use ferroplane_testkit::wait::Wait;
use ferroplane_testkit::{self as testkit, Rbac, SandboxConfig, TestCluster, samples};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Service};
use k8s_openapi::api::networking::v1::Ingress;
use kube::api::Api;
use kube::{CustomResourceExt, ResourceExt};
use provider_application::Options;

const EVENTUALLY_TIMEOUT: Duration = Duration::from_secs(30);

/// A wait of this suite: re-checked every 100 ms for at most [`EVENTUALLY_TIMEOUT`].
fn eventually(what: &str) -> Wait {
    testkit::eventually(what)
        .within(EVENTUALLY_TIMEOUT)
        .every(Duration::from_millis(100))
}

/// A sandbox with the Application CRD and the controller, started as the binary starts it.
async fn start_env() -> TestCluster {
    let mut env = TestCluster::start_with(SandboxConfig {
        workload_delay: Duration::from_millis(100),
        ..SandboxConfig::default()
    })
    .await;
    env.install_crds([Application::crd()]).await;
    env.spawn_controllers(|runtime, shutdown| async move {
        provider_application::run(&runtime, Options::default(), shutdown.cancelled_owned()).await
    });
    env
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
    env.kubectl()
        .ok(&["apply", "-f", &samples::path("application.yaml")])
        .await;

    let deployments = env.api::<Deployment>();
    let d = eventually("the Deployment")
        .until_async(|| async { deployments.get_opt("hello").await.ok().flatten() })
        .await;
    assert_eq!(d.spec.as_ref().and_then(|s| s.replicas), Some(2));
    assert_eq!(image(&d).as_deref(), Some("nginx:1.27"));
    assert_eq!(d.owner_references()[0].kind, "Application");
    // The controller applies the Service after the Deployment.
    let services = env.api::<Service>();
    let svc = eventually("the Service")
        .until_async(|| async { services.get_opt("hello").await.ok().flatten() })
        .await;
    let port = &svc.spec.and_then(|s| s.ports).expect("ports")[0];
    assert_eq!(
        (port.port, port.target_port.clone()),
        (
            80,
            Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(80))
        )
    );
    let ingresses = env.api::<Ingress>();
    eventually("the Ingress")
        .until_async(|| async { ingresses.get_opt("hello").await.ok().flatten() })
        .await;

    env.kubectl()
        .ok(&[
            "wait",
            "--for=condition=Ready",
            "applications.apps.ferroplane.io/hello",
            "--timeout=30s",
        ])
        .await;
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
    env.kubectl()
        .ok(&[
            "patch",
            "applications.apps.ferroplane.io",
            "hello",
            "--type=merge",
            "-p",
            r#"{"spec":{"replicas":3}}"#,
        ])
        .await;
    eventually("3 replicas")
        .until_async(|| async {
            deployments
                .get("hello")
                .await
                .ok()
                .filter(|d| d.spec.as_ref().and_then(|s| s.replicas) == Some(3))
        })
        .await;

    // A hand edit of a child is reverted.
    env.kubectl().ok(&[
        "patch",
        "deployment",
        "hello",
        "--type=json",
        "-p",
        r#"[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"evil:1"}]"#,
    ])
    .await;
    eventually("the image edit to be reverted")
        .until_async(|| async {
            deployments
                .get("hello")
                .await
                .ok()
                .filter(|d| image(d).as_deref() == Some("nginx:1.27"))
        })
        .await;

    // Removing `ingress` removes the Ingress; the URL falls back to the Service.
    env.kubectl()
        .ok(&[
            "patch",
            "applications.apps.ferroplane.io",
            "hello",
            "--type=json",
            "-p",
            r#"[{"op":"remove","path":"/spec/ingress"}]"#,
        ])
        .await;
    eventually("the Ingress to go")
        .until_async(|| async {
            ingresses
                .get_opt("hello")
                .await
                .ok()
                .filter(Option::is_none)
        })
        .await;
    eventually("the in-cluster URL")
        .until_async(|| async {
            apps.get("hello")
                .await
                .ok()
                .and_then(|a| a.status)
                .and_then(|s| s.url)
                .filter(|u| u == "http://hello.default.svc.cluster.local")
        })
        .await;

    // Delete removes the children.
    env.kubectl()
        .ok(&[
            "delete",
            "applications.apps.ferroplane.io",
            "hello",
            "--wait=true",
            "--timeout=30s",
        ])
        .await;
    eventually("the children to go")
        .until_async(|| async {
            let d = deployments.get_opt("hello").await.ok()?;
            let s = env.api::<Service>().get_opt("hello").await.ok()?;
            (d.is_none() && s.is_none()).then_some(())
        })
        .await;
    env.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn orphan_policy_leaves_the_children_without_owner() {
    let env = start_env().await;
    env.kubectl()
        .apply("apiVersion: apps.ferroplane.io/v1alpha1\nkind: Application\nmetadata:\n  name: keep\n  namespace: default\nspec:\n  image: nginx:1.27\n  deletionPolicy: Orphan\n")
        .await;
    env.kubectl()
        .ok(&[
            "wait",
            "--for=condition=Ready",
            "applications.apps.ferroplane.io/keep",
            "--timeout=30s",
        ])
        .await;
    // A dependent the garbage collector must take: once it is gone, the collector has dealt
    // with the Application's deletion, and what it left stays.
    let uid = env
        .api::<Application>()
        .get("keep")
        .await
        .expect("app")
        .uid()
        .expect("uid");
    env.kubectl()
        .apply(&format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keep-sentinel\n  namespace: default\n  ownerReferences:\n  - apiVersion: apps.ferroplane.io/v1alpha1\n    kind: Application\n    name: keep\n    uid: {uid}\n"
        ))
        .await;
    env.kubectl()
        .ok(&[
            "delete",
            "applications.apps.ferroplane.io",
            "keep",
            "--wait=true",
            "--timeout=30s",
        ])
        .await;
    let configs = env.api::<ConfigMap>();
    eventually("the garbage collector to take the owned sentinel")
        .until_async(|| async {
            configs
                .get_opt("keep-sentinel")
                .await
                .ok()
                .filter(Option::is_none)
        })
        .await;
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
    env.shutdown().await;
}

// A Deployment made by hand is never adopted by an Application of the same name: the
// Application says which object is in the way, nothing of the Deployment changes, and deleting
// the Application leaves it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_same_named_deployment_made_by_hand_is_left_alone() {
    let env = start_env().await;
    env.kubectl()
        .apply("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: default\n  labels:\n    app: web\nspec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n      labels:\n        app: web\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:1.25\n")
        .await;
    let deployments = env.api::<Deployment>();
    let before = deployments
        .get("web")
        .await
        .expect("the hand-made Deployment");
    env.kubectl()
        .apply("apiVersion: apps.ferroplane.io/v1alpha1\nkind: Application\nmetadata:\n  name: web\n  namespace: default\nspec:\n  image: nginx:1.27\n")
        .await;
    let apps = env.api::<Application>();
    let message = eventually("Synced=False naming the Deployment")
        .until_async(|| async {
            let app = apps.get("web").await.ok()?;
            let synced = app
                .status?
                .conditions
                .into_iter()
                .find(|c| c.type_ == "Synced")?;
            (synced.status == ConditionStatus::False).then_some(synced.message)
        })
        .await;
    assert!(message.contains("Deployment/web"), "{message}");
    let after = deployments.get("web").await.expect("still there");
    // (its status moves on: the sandbox's workload simulator rolls it out)
    assert_eq!(after.spec, before.spec, "spec unchanged");
    assert_eq!(after.metadata.labels, before.metadata.labels);
    assert!(after.owner_references().is_empty());
    let writers: Vec<String> = after
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .filter_map(|m| m.manager)
        .collect();
    assert!(
        !writers.iter().any(|w| w.starts_with("ferroplane")),
        "ferroplane wrote to it: {writers:?}"
    );
    assert!(
        env.api::<Service>()
            .get_opt("web")
            .await
            .expect("get")
            .is_none()
    );

    env.kubectl()
        .ok(&[
            "delete",
            "applications.apps.ferroplane.io",
            "web",
            "--wait=true",
            "--timeout=30s",
        ])
        .await;
    let left = deployments
        .get("web")
        .await
        .expect("the Deployment is left");
    assert_eq!(image(&left).as_deref(), Some("nginx:1.25"));
    env.shutdown().await;
}

// The namespaced install: with `namespace` set and only deploy/namespaced/'s Roles in it, the
// controller reconciles the Applications of that namespace (every watch stays there, or RBAC
// would refuse it and `shutdown` would fail the test) and never sees another namespace's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespaced_install_reconciles_its_namespace_only() {
    let mut env = TestCluster::start_with_rbac(
        SandboxConfig {
            workload_delay: Duration::from_millis(100),
            ..SandboxConfig::default()
        },
        Rbac::Namespaced {
            namespace: "team-a".into(),
            providers: vec![Provider::Application],
        },
    )
    .await;
    env.install_crds([Application::crd()]).await;
    env.kubectl().ok(&["create", "namespace", "team-b"]).await;
    env.spawn_controllers(|runtime, shutdown| async move {
        let mut options = Options::default();
        options.namespace = Some("team-a".into());
        provider_application::run(&runtime, options, shutdown.cancelled_owned()).await
    });
    let sample = std::fs::read_to_string(samples::path("application.yaml")).expect("the sample");
    for namespace in ["team-a", "team-b"] {
        env.kubectl()
            .ok_with_input(
                &["apply", "-n", namespace, "-f", "-"],
                &sample.replace("namespace: default", &format!("namespace: {namespace}")),
            )
            .await;
    }
    let team_a: Api<Application> = Api::namespaced(env.client(), "team-a");
    eventually("team-a's Application Ready")
        .until_async(|| async {
            let app = team_a.get("hello").await.ok()?;
            app.status
                .as_ref()?
                .conditions
                .iter()
                .any(|c| c.type_ == "Ready" && c.status == ConditionStatus::True)
                .then_some(())
        })
        .await;
    let team_b: Api<Application> = Api::namespaced(env.client(), "team-b");
    let untouched = team_b.get("hello").await.expect("team-b's Application");
    assert!(untouched.status.is_none(), "{:?}", untouched.status);
    assert!(untouched.metadata.finalizers.is_none());
    let deployments: Api<Deployment> = Api::namespaced(env.client(), "team-b");
    assert!(deployments.get_opt("hello").await.expect("get").is_none());
    env.shutdown().await;
}

/// Every `(spec.replicas, managers that own it)` the Deployment `name` had, as a watch saw it.
type Seen = std::sync::Arc<std::sync::Mutex<Vec<(i32, Vec<String>)>>>;

fn record_replicas(
    deployments: Api<Deployment>,
    name: &str,
) -> (Seen, tokio::task::JoinHandle<()>) {
    use futures::StreamExt;
    use kube::runtime::{WatchStreamExt, watcher};
    let seen: Seen = Seen::default();
    let record = seen.clone();
    let config = watcher::Config::default().fields(&format!("metadata.name={name}"));
    let task = tokio::spawn(async move {
        let mut events = watcher(deployments, config).applied_objects().boxed();
        while let Some(Ok(d)) = events.next().await {
            let replicas = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
            let owners = d
                .metadata
                .managed_fields
                .iter()
                .flatten()
                .filter(|m| {
                    m.fields_v1
                        .as_ref()
                        .is_some_and(|f| f.0["f:spec"].get("f:replicas").is_some())
                })
                .filter_map(|m| m.manager.clone())
                .collect();
            record
                .lock()
                .expect("not poisoned")
                .push((replicas, owners));
        }
    });
    (seen, task)
}

// Turning autoscaling on must not scale the application down: the apply that leaves out
// `replicas` would remove the field (defaulted to 1) until the autoscaler's next sync, unless
// the replicas are handed over first. A watch records every value the Deployment had.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turning_autoscaling_on_hands_the_replicas_over_without_a_dip() {
    let env = start_env().await;
    let manifest = |extra: &str| {
        format!(
            "apiVersion: apps.ferroplane.io/v1alpha1\nkind: Application\nmetadata:\n  name: web\n  namespace: default\nspec:\n  image: nginx:1.27\n  replicas: 3\n{extra}"
        )
    };
    env.kubectl().apply(&manifest("")).await;
    env.kubectl()
        .ok(&[
            "wait",
            "--for=condition=Ready",
            "applications.apps.ferroplane.io/web",
            "--timeout=30s",
        ])
        .await;
    let (seen, recorder) = record_replicas(env.api::<Deployment>(), "web");
    eventually("the recorder to see the Deployment")
        .until(|| (!seen.lock().expect("not poisoned").is_empty()).then_some(()))
        .await;

    env.kubectl()
        .apply(&manifest(
            "  autoscaling:\n    minReplicas: 2\n    maxReplicas: 5\n",
        ))
        .await;
    eventually("ferroplane's apply to give up the replicas")
        .until(|| {
            let seen = seen.lock().expect("not poisoned");
            seen.last()
                .filter(|(_, owners)| !owners.iter().any(|m| m == "ferroplane-application"))
                .map(|_| ())
        })
        .await;
    let autoscalers = env.api::<k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler>();
    eventually("the autoscaler")
        .until_async(|| async { autoscalers.get_opt("web").await.ok().flatten() })
        .await;
    recorder.abort();
    let seen = seen.lock().expect("not poisoned").clone();
    assert!(
        seen.iter().all(|(replicas, _)| *replicas == 3),
        "the Deployment kept 3 replicas through the handover: {seen:?}"
    );
    assert!(
        seen.last().is_some_and(|(_, owners)| owners
            .iter()
            .any(|m| m == "ferroplane-application-handover")),
        "{seen:?}"
    );
    env.shutdown().await;
}

/// The `Ready` condition of the Application `name` in `default`, as (status, reason, message).
async fn ready_condition(
    apps: &Api<Application>,
    name: &str,
) -> Option<(ConditionStatus, String, String)> {
    let app = apps.get(name).await.ok()?;
    let ready = app
        .status?
        .conditions
        .into_iter()
        .find(|c| c.type_ == "Ready")?;
    Some((ready.status, ready.reason, ready.message))
}

// On a real cluster a pod whose env names a missing Secret, or a missing key of one, never
// starts (CreateContainerConfigError); the sandbox runs no pods, so the controller checks the
// references itself. The Application stays Ready=False naming what is missing (never a value)
// and turns Ready as soon as the last one appears: the Secrets and ConfigMaps are watched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_secret_or_key_keeps_the_application_not_ready_until_it_exists() {
    const VALUE: &str = "hunter2-never-shown";
    let env = start_env().await;
    env.kubectl()
        .apply("apiVersion: apps.ferroplane.io/v1alpha1\nkind: Application\nmetadata:\n  name: api\n  namespace: default\nspec:\n  image: nginx:1.27\n  env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef: {name: db, key: password}\n  - name: THEME\n    valueFrom:\n      configMapKeyRef: {name: ui, key: theme, optional: true}\n  envFrom:\n  - configMapRef: {name: settings}\n  volumes:\n  - name: certs\n    mountPath: /certs\n    secret: {secretName: certs, optional: true}\n")
        .await;
    let apps = env.api::<Application>();
    let (_, _, message) = eventually("Ready=False naming the Secret and the ConfigMap")
        .until_async(|| async {
            ready_condition(&apps, "api")
                .await
                .filter(|(status, reason, _)| {
                    *status == ConditionStatus::False && reason == "ReferencedSecretMissing"
                })
                .filter(|(_, _, message)| message.contains("ConfigMap settings"))
        })
        .await;
    assert!(
        message.contains("Secret db") && message.contains("key password"),
        "{message}"
    );
    assert!(
        !message.contains("certs") && !message.contains(" ui"),
        "optional references are not required: {message}"
    );

    // The Secret without the key: still not Ready, now naming the key.
    env.kubectl()
        .ok(&[
            "create",
            "secret",
            "generic",
            "db",
            "-n",
            "default",
            &format!("--from-literal=user={VALUE}"),
        ])
        .await;
    let (_, _, message) = eventually("Ready=False naming the missing key")
        .until_async(|| async {
            ready_condition(&apps, "api")
                .await
                .filter(|(_, reason, _)| reason == "ReferencedSecretMissing")
                .filter(|(_, _, message)| message.contains("has no key password"))
        })
        .await;
    assert!(!message.contains(VALUE), "{message}");

    // The ConfigMap and the key: Ready.
    env.kubectl()
        .ok(&[
            "create",
            "configmap",
            "settings",
            "-n",
            "default",
            "--from-literal=mode=prod",
        ])
        .await;
    env.kubectl()
        .ok(&[
            "patch",
            "secret",
            "db",
            "-n",
            "default",
            "--type=merge",
            "-p",
            r#"{"stringData":{"password":"hunter3-never-shown"}}"#,
        ])
        .await;
    eventually("Ready once everything referenced exists")
        .until_async(|| async {
            ready_condition(&apps, "api")
                .await
                .filter(|(status, _, _)| *status == ConditionStatus::True)
        })
        .await;
    let events = env
        .kubectl()
        .ok(&["get", "events", "-n", "default", "-o", "yaml"])
        .await;
    assert!(
        !events.contains(VALUE) && !events.contains("hunter3"),
        "a Secret value in an event"
    );
    env.shutdown().await;
}
