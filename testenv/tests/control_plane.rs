//! The real control plane does what the sandbox cannot: nodes, the real version, Deployments
//! that get ReplicaSets and Running pods, StatefulSets that claim volumes, RBAC that forbids.
//! One control plane serves every check, in order; each check waits on a condition, never on a
//! fixed sleep. The first run builds the programs (about 13 minutes on 2 cores).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use ferroplane_testenv::{ControlPlane, Options};
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{
    Namespace, PersistentVolume, PersistentVolumeClaim, Pod, Secret, ServiceAccount,
};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::api::{DeleteParams, ListParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Api, Client, Config};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(120);

#[tokio::test]
async fn a_real_control_plane_behaves_like_kubernetes() {
    let cp = ControlPlane::start(Options::default())
        .await
        .expect("the control plane starts");
    eprintln!(
        "control plane started in {:.1} s",
        cp.started_in().as_secs_f64()
    );
    let kubeconfig = cp.kubeconfig_path();

    kubectl_lists_the_fake_nodes(&cp, &kubeconfig);
    kubectl_shows_the_real_server_version(&cp, &kubeconfig);
    a_deployment_gets_a_replicaset_and_running_pods(&cp, &kubeconfig).await;
    a_statefulset_claims_volumes_that_bind_to_static_volumes(&cp).await;
    rbac_forbids_a_service_account_without_a_binding(&cp, &kubeconfig).await;

    cp.stop();
}

fn kubectl_lists_the_fake_nodes(cp: &ControlPlane, kubeconfig: &Path) {
    let out = kubectl(kubeconfig, &["get", "nodes", "--no-headers"]);
    for node in cp.nodes() {
        let line = out
            .lines()
            .find(|l| l.split_whitespace().next() == Some(node))
            .unwrap_or_else(|| panic!("{node} missing from `kubectl get nodes`:\n{out}"));
        assert!(line.contains(" Ready "), "{node} is not Ready: {line}");
    }
}

fn kubectl_shows_the_real_server_version(cp: &ControlPlane, kubeconfig: &Path) {
    let out = kubectl(kubeconfig, &["version", "-o", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("kubectl version prints JSON");
    assert_eq!(
        v["serverVersion"]["gitVersion"].as_str(),
        Some(cp.versions().kubernetes.as_str()),
        "{out}"
    );
    let plain = kubectl(kubeconfig, &["version"]);
    assert!(
        plain.contains(&format!("Server Version: {}", cp.versions().kubernetes)),
        "{plain}"
    );
}

async fn a_deployment_gets_a_replicaset_and_running_pods(cp: &ControlPlane, kubeconfig: &Path) {
    let client = cp.client();
    create_namespace(&client, "apps").await;
    // Through kubectl, as a user would: it sends protobuf, which the sandbox refused.
    kubectl(
        kubeconfig,
        &[
            "create",
            "deployment",
            "web",
            "-n",
            "apps",
            "--image=registry.invalid/web:1",
            "--replicas=2",
        ],
    );
    let replicasets: Api<ReplicaSet> = Api::namespaced(client.clone(), "apps");
    let rs = eventually("a ReplicaSet owned by Deployment web", || async {
        let list = replicasets.list(&ListParams::default()).await.ok()?;
        list.items.into_iter().find(|rs| {
            rs.metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.kind == "Deployment" && o.name == "web")
        })
    })
    .await;
    let rs_name = rs.metadata.name.unwrap();

    let pods: Api<Pod> = Api::namespaced(client.clone(), "apps");
    let running = eventually(
        "2 Running pods of web with pod IPs on fake nodes",
        || async {
            let list = pods
                .list(&ListParams::default().labels("app=web"))
                .await
                .ok()?;
            let running: Vec<Pod> = list
                .items
                .into_iter()
                .filter(|p| {
                    let s = p.status.clone().unwrap_or_default();
                    s.phase.as_deref() == Some("Running") && s.pod_ip.is_some()
                })
                .collect();
            (running.len() == 2).then_some(running)
        },
    )
    .await;
    for p in &running {
        let node = p
            .spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .unwrap_or_default();
        assert!(cp.nodes().contains(&node), "pod on unknown node {node}");
        assert!(
            p.metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.name == rs_name),
            "pod not owned by {rs_name}"
        );
    }
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "apps");
    eventually("Deployment web with 2 available replicas", || async {
        let d = deployments.get("web").await.ok()?;
        (d.status?.available_replicas == Some(2)).then_some(())
    })
    .await;
    let history = kubectl(
        kubeconfig,
        &["rollout", "history", "deployment/web", "-n", "apps"],
    );
    assert!(history.contains("REVISION"), "{history}");

    // Deleting it: the garbage collector deletes the ReplicaSet and the pods, kwok lets the
    // pods go once their deletion is requested.
    deployments
        .delete("web", &DeleteParams::foreground())
        .await
        .expect("delete web");
    eventually("no pods left of web", || async {
        let list = pods
            .list(&ListParams::default().labels("app=web"))
            .await
            .ok()?;
        list.items.is_empty().then_some(())
    })
    .await;
}

async fn a_statefulset_claims_volumes_that_bind_to_static_volumes(cp: &ControlPlane) {
    let client = cp.client();
    create_namespace(&client, "stores").await;
    let sts: StatefulSet = serde_json::from_value(json!({
        "metadata": {"name": "db"},
        "spec": {
            "replicas": 2,
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{
                    "name": "db", "image": "registry.invalid/db:1",
                    "volumeMounts": [{"name": "data", "mountPath": "/data"}]
                }]}
            },
            "volumeClaimTemplates": [{
                "metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
            }]
        }
    }))
    .unwrap();
    let statefulsets: Api<StatefulSet> = Api::namespaced(client.clone(), "stores");
    statefulsets
        .create(&PostParams::default(), &sts)
        .await
        .expect("create db");

    // No storage provisioner runs: the first claim is made and stays Pending, and so does its
    // pod, which the scheduler will not place with an unbound claim.
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), "stores");
    eventually("claim data-db-0, Pending", || async {
        let c = claims.get("data-db-0").await.ok()?;
        (c.status?.phase.as_deref() == Some("Pending")).then_some(())
    })
    .await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "stores");
    eventually(
        "pod db-0 Pending, unschedulable while its claim is unbound",
        || async {
            let status = pods.get("db-0").await.ok()?.status?;
            let unschedulable = status.conditions.iter().flatten().any(|c| {
                c.type_ == "PodScheduled"
                    && c.status == "False"
                    && c.reason.as_deref() == Some("Unschedulable")
            });
            (status.phase.as_deref() == Some("Pending") && unschedulable).then_some(())
        },
    )
    .await;

    // A static volume per claim, as an admin would make: the volume controller binds them.
    let volumes: Api<PersistentVolume> = Api::all(client.clone());
    for i in 0..2 {
        let pv: PersistentVolume = serde_json::from_value(json!({
            "metadata": {"name": format!("testenv-pv-{i}")},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "persistentVolumeReclaimPolicy": "Delete",
                "hostPath": {"path": format!("/nonexistent/testenv-pv-{i}")}
            }
        }))
        .unwrap();
        volumes
            .create(&PostParams::default(), &pv)
            .await
            .expect("create a volume");
    }
    eventually("both claims Bound and both pods Running", || async {
        for i in 0..2 {
            let c = claims.get(&format!("data-db-{i}")).await.ok()?;
            if c.status?.phase.as_deref() != Some("Bound") {
                return None;
            }
            let p = pods.get(&format!("db-{i}")).await.ok()?;
            if p.status?.phase.as_deref() != Some("Running") {
                return None;
            }
        }
        Some(())
    })
    .await;
    eventually("StatefulSet db with 2 ready replicas", || async {
        let s = statefulsets.get("db").await.ok()?;
        (s.status?.ready_replicas == Some(2)).then_some(())
    })
    .await;
}

async fn rbac_forbids_a_service_account_without_a_binding(cp: &ControlPlane, admin: &Path) {
    let client = cp.client();
    create_namespace(&client, "tenant").await;
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), "tenant");
    let sa: ServiceAccount =
        serde_json::from_value(json!({"metadata": {"name": "reader"}})).unwrap();
    accounts
        .create(&PostParams::default(), &sa)
        .await
        .expect("create reader");
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "tenant");
    let secret: Secret =
        serde_json::from_value(json!({"metadata": {"name": "s"}, "stringData": {"k": "v"}}))
            .unwrap();
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .expect("create a secret");

    let sa_kubeconfig = cp
        .service_account_kubeconfig("tenant", "reader")
        .await
        .expect("a kubeconfig for tenant/reader");
    let out = kubectl_fails(&sa_kubeconfig, &["get", "secrets", "-n", "tenant"]);
    assert!(
        out.contains("Forbidden")
            && out.contains("system:serviceaccount:tenant:reader")
            && out.contains("cannot list resource \"secrets\""),
        "{out}"
    );
    let can = kubectl_fails(
        &sa_kubeconfig,
        &["auth", "can-i", "list", "secrets", "-n", "tenant"],
    );
    assert!(can.trim_start().starts_with("no"), "{can}");

    let as_reader = client_from(&sa_kubeconfig).await;
    let reader_secrets: Api<Secret> = Api::namespaced(as_reader, "tenant");
    match reader_secrets.list(&ListParams::default()).await {
        Err(kube::Error::Api(s)) => assert_eq!(s.code, 403, "{s:?}"),
        other => panic!("listing secrets without a binding: {other:?}"),
    }

    // With a Role and a RoleBinding the same token may list them.
    let role: Role = serde_json::from_value(json!({
        "metadata": {"name": "secret-reader"},
        "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list"]}]
    }))
    .unwrap();
    Api::<Role>::namespaced(client.clone(), "tenant")
        .create(&PostParams::default(), &role)
        .await
        .expect("create the role");
    let binding: RoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "reader-reads-secrets"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "secret-reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": "tenant"}]
    }))
    .unwrap();
    Api::<RoleBinding>::namespaced(client.clone(), "tenant")
        .create(&PostParams::default(), &binding)
        .await
        .expect("create the binding");
    eventually("tenant/reader may list secrets once bound", || async {
        let list = reader_secrets.list(&ListParams::default()).await.ok()?;
        (list.items.len() == 1).then_some(())
    })
    .await;
    // The admin's kubeconfig is untouched by all this.
    kubectl(admin, &["get", "secrets", "-n", "tenant"]);
}

async fn create_namespace(client: &Client, name: &str) {
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": name}})).unwrap();
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .expect("create a namespace");
    // Pods need the namespace's default ServiceAccount, which the controller-manager creates.
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), name);
    eventually("the namespace's default ServiceAccount", || async {
        accounts.get_opt("default").await.ok().flatten()
    })
    .await;
}

async fn client_from(kubeconfig: &Path) -> Client {
    let file = Kubeconfig::read_from(kubeconfig).expect("read the kubeconfig");
    let config = Config::from_custom_kubeconfig(file, &KubeConfigOptions::default())
        .await
        .expect("a client config");
    Client::try_from(config).expect("a client")
}

/// Polls `probe` every 250 ms until it returns Some, for at most [`WAIT`].
async fn eventually<T, F, Fut>(what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let started = Instant::now();
    loop {
        if let Some(v) = probe().await {
            return v;
        }
        assert!(started.elapsed() < WAIT, "waited {WAIT:?} for {what}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

fn run_kubectl(kubeconfig: &Path, args: &[&str]) -> std::process::Output {
    Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .output()
        .expect("kubectl runs (is it installed?)")
}

/// kubectl's stdout; panics with its stderr when it fails.
fn kubectl(kubeconfig: &Path, args: &[&str]) -> String {
    let out = run_kubectl(kubeconfig, args);
    assert!(
        out.status.success(),
        "kubectl {} failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// kubectl's stdout and stderr; panics when it succeeds.
fn kubectl_fails(kubeconfig: &Path, args: &[&str]) -> String {
    let out = run_kubectl(kubeconfig, args);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !out.status.success(),
        "kubectl {} succeeded: {text}",
        args.join(" ")
    );
    text
}
