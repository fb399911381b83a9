//! The chart installed on the real control plane: its rendered manifests applied server-side,
//! then `ferroplane run` started as the Deployment's pod would run it (the container's
//! arguments and environment, a token of the chart's ServiceAccount, so only the chart's RBAC
//! applies), making an ECSInstance Ready against the ECS mock and releasing it on delete.
//!
//! The install is namespaced (`watchNamespace`): the shared control plane runs other tests'
//! controllers, and a second cluster-wide one would reconcile their objects. The controller's
//! process binds its metrics on 127.0.0.1 (the chart's `0.0.0.0` is for a pod's network); the
//! Deployment's pods, which kwok reports Running, run nothing.

use std::process::Stdio;
use std::time::Duration;

use alibaba_mock::MockConfig;
use ferroplane_apis::alibabacloud::ECSInstance;
use ferroplane_apis::common::DeletionPolicy;
use ferroplane_testkit::conditions::is_ready;
use ferroplane_testkit::{ecs_mock, eventually, real_cluster};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, ObjectMeta, PostParams};
use serde_json::Value;

use crate::support::daemon::instance;
use crate::support::helm::{self, args, container, object};
use crate::support::{ACCESS_KEY_ID, ACCESS_KEY_SECRET};

/// The release: its name holds the chart's, so its objects are named `ferroplane-e2e…`.
const RELEASE: &str = "ferroplane-e2e";
/// The Lease `ferroplane run --leader-elect` holds (src/cmd/run.rs).
const LEASE: &str = "ferroplane-leader";
/// The pod name the controller reports in the Lease (the Deployment's POD_NAME).
const POD_NAME: &str = "ferroplane-e2e-pod-0";
/// A create through the mock's transition delay, the first poll and the status write, on a
/// loaded machine.
const READY_WITHIN: Duration = Duration::from_secs(120);

async fn create_namespace(client: &kube::Client, name: &str) {
    let api: Api<Namespace> = Api::all(client.clone());
    let namespace = Namespace {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..Default::default()
        },
        ..Default::default()
    };
    api.create(&PostParams::default(), &namespace)
        .await
        .unwrap_or_else(|e| panic!("namespace {name} created: {e}"));
}

/// The value of an environment variable of the container, as the kubelet would set it: a
/// literal, or the pod's name or namespace.
fn env_value(entry: &Value, namespace: &str) -> String {
    if let Some(value) = entry["value"].as_str() {
        return value.to_owned();
    }
    match entry["valueFrom"]["fieldRef"]["fieldPath"].as_str() {
        Some("metadata.name") => POD_NAME.to_owned(),
        Some("metadata.namespace") => namespace.to_owned(),
        other => panic!("an environment variable the test cannot fill: {other:?} in {entry}"),
    }
}

pub(crate) async fn the_chart_installs_a_controller_that_makes_an_ecsinstance_ready() {
    let cluster = real_cluster::shared().await;
    let admin = cluster.admin_client().await;
    let suffix = &uuid::Uuid::new_v4().simple().to_string()[..8];
    let release_namespace = format!("helm-{suffix}");
    let watched = format!("helm-objects-{suffix}");
    create_namespace(&admin, &release_namespace).await;
    create_namespace(&admin, &watched).await;
    let mock = ecs_mock::start(
        MockConfig::new(ACCESS_KEY_ID, ACCESS_KEY_SECRET)
            .with_transition_delay(Duration::from_millis(300)),
    )
    .await;

    let dir = tempfile::tempdir().expect("temp dir");
    let values = helm::values_file(
        dir.path(),
        "values.yaml",
        &format!(
            "watchNamespace: {watched}\nkinds: [ecsinstance]\nreplicas: 1\n\
             leaderElection: {{enabled: true}}\npollInterval: 2s\n\
             allowedEndpoints: [\"{}\"]\n",
            mock.endpoint()
        ),
    );
    let objects = helm::template(RELEASE, &release_namespace, Some(&values)).await;
    real_cluster::apply_objects(&admin, &objects).await;

    // The pod of the Deployment, run here: its ServiceAccount, arguments and environment.
    let deployment = object(&objects, "Deployment", RELEASE);
    let pod = &deployment["spec"]["template"]["spec"];
    let account = pod["serviceAccountName"]
        .as_str()
        .expect("a ServiceAccount");
    object(&objects, "ServiceAccount", account);
    let kubeconfig = cluster
        .access()
        .service_account_kubeconfig(&release_namespace, account)
        .await
        .unwrap_or_else(|e| panic!("a token of the chart's ServiceAccount {account}: {e}"));
    let mut run_args = args(deployment);
    let metrics = run_args
        .iter()
        .position(|a| a.starts_with("--metrics-addr="))
        .expect("the chart sets --metrics-addr");
    run_args[metrics] = "--metrics-addr=127.0.0.1:0".to_owned();
    let log_path = dir.path().join("controller.log");
    let log = std::fs::File::create(&log_path).expect("log file");
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_ferroplane"));
    command.args(&run_args);
    for entry in container(deployment)["env"].as_array().expect("env") {
        let name = entry["name"].as_str().expect("a named variable");
        command.env(name, env_value(entry, &release_namespace));
    }
    let mut controller = command
        .env("KUBECONFIG", &kubeconfig)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(log))
        .kill_on_drop(true)
        .spawn()
        .expect("ferroplane run starts");

    ecs_mock::use_mock(
        &admin,
        &watched,
        &mock,
        "credentials",
        (ACCESS_KEY_ID, ACCESS_KEY_SECRET),
    )
    .await;
    let api: Api<ECSInstance> = Api::namespaced(admin.clone(), &watched);
    let mut wanted = instance("helm-1", DeletionPolicy::Delete);
    wanted.metadata.namespace = Some(watched.clone());
    api.create(&PostParams::default(), &wanted)
        .await
        .expect("ECSInstance created");
    let ready = eventually("the chart's controller makes the ECSInstance Ready")
        .within(READY_WITHIN)
        .for_object(&api, "helm-1", |o| o.is_some_and(is_ready))
        .await
        .expect("the ECSInstance exists");
    let uid = ready.metadata.uid.clone().expect("a uid");
    let created = ecs_mock::instances_of(&mock, &uid);
    assert_eq!(created.len(), 1, "one instance in the mock: {created:?}");

    // It reconciles as the leader, through the Lease its Role in the release's namespace allows.
    let leases: Api<Lease> = Api::namespaced(admin.clone(), &release_namespace);
    let lease = leases.get(LEASE).await.expect("the leader's Lease exists");
    assert_eq!(
        lease.spec.and_then(|s| s.holder_identity).as_deref(),
        Some(POD_NAME)
    );

    // Deleting the object releases the instance, with the chart's RBAC only.
    api.delete("helm-1", &DeleteParams::default())
        .await
        .expect("ECSInstance deleted");
    eventually("the deleted ECSInstance is gone")
        .within(READY_WITHIN)
        .for_object(&api, "helm-1", |o| o.is_none())
        .await;
    assert!(
        ecs_mock::instances_of(&mock, &uid).is_empty(),
        "the instance is released"
    );
    assert!(
        controller
            .try_wait()
            .expect("the controller's status")
            .is_none(),
        "the controller ran throughout; its log:\n{}",
        std::fs::read_to_string(&log_path).unwrap_or_default()
    );

    controller.start_kill().expect("kill the controller");
    controller.wait().await.expect("reaped");
    let namespaces: Api<Namespace> = Api::all(admin.clone());
    for name in [&watched, &release_namespace] {
        let _ = namespaces.delete(name, &DeleteParams::default()).await;
    }
    mock.shutdown().await;
}
