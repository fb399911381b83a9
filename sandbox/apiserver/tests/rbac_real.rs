//! The sandbox's RBAC answers held to a real kube-apiserver's: the same install of deploy/
//! (cluster-wide for every provider, and the namespaced install in one namespace) on both, the
//! same requests as ferroplane's ServiceAccount, and the same status codes and Status bodies
//! back. Starts the real control plane of `ferroplane-testenv` (built on first use, about 13
//! minutes on 2 cores; then cached).

use ferroplane_apis::deploy::{self, ALL_PROVIDERS, Provider};
use ferroplane_testenv::{ControlPlane, Options};
use ferroplane_testkit::TestCluster;
use http::{Method, Request};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use serde_json::{Value, json};

/// One request and what the test sends with it.
struct Probe {
    method: Method,
    path: &'static str,
    body: Option<Value>,
    content_type: &'static str,
}

fn probe(method: Method, path: &'static str) -> Probe {
    Probe {
        method,
        path,
        body: None,
        content_type: "application/json",
    }
}

fn with_body(mut probe: Probe, body: Value, content_type: &'static str) -> Probe {
    probe.body = Some(body);
    probe.content_type = content_type;
    probe
}

/// The requests: granted and refused reads and writes, collections, subresources, the cluster
/// scope, another namespace and self reviews.
fn corpus() -> Vec<Probe> {
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}});
    let review = |verb: &str, resource: &str, namespace: &str| {
        json!({
            "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": {"verb": verb, "resource": resource, "namespace": namespace}},
        })
    };
    let reviews = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
    vec![
        probe(Method::GET, "/api/v1/namespaces/team-a/secrets/nope"),
        probe(Method::GET, "/api/v1/namespaces/team-b/secrets/nope"),
        probe(Method::GET, "/api/v1/namespaces/team-a/secrets"),
        probe(Method::GET, "/api/v1/secrets"),
        with_body(
            probe(Method::PUT, "/api/v1/namespaces/team-a/secrets/s"),
            secret.clone(),
            "application/json",
        ),
        with_body(
            probe(Method::POST, "/api/v1/namespaces/team-a/secrets"),
            secret,
            "application/json",
        ),
        probe(
            Method::GET,
            "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/roles",
        ),
        probe(Method::DELETE, "/api/v1/namespaces/team-a/configmaps"),
        probe(
            Method::GET,
            "/apis/rbac.authorization.k8s.io/v1/clusterroles/ferroplane-alibaba",
        ),
        with_body(
            probe(
                Method::PATCH,
                "/apis/apps/v1/namespaces/team-a/deployments/web/status",
            ),
            json!({}),
            "application/merge-patch+json",
        ),
        probe(Method::GET, "/api/v1/namespaces/team-a"),
        probe(Method::GET, "/api/v1/pods"),
        probe(Method::GET, "/api/v1/namespaces/team-a/pods"),
        probe(Method::DELETE, "/api/v1/namespaces/team-a/pods/p"),
        probe(
            Method::DELETE,
            "/api/v1/namespaces/team-b/persistentvolumeclaims/data-p",
        ),
        probe(Method::GET, "/api/v1/namespaces/team-a/pods/p/log"),
        probe(
            Method::GET,
            "/apis/apps/v1/namespaces/team-a/deployments/web",
        ),
        probe(
            Method::DELETE,
            "/apis/apps/v1/namespaces/team-b/statefulsets/db",
        ),
        probe(
            Method::GET,
            "/apis/coordination.k8s.io/v1/namespaces/ferroplane-system/leases/ferroplane-leader",
        ),
        probe(
            Method::GET,
            "/apis/coordination.k8s.io/v1/namespaces/team-a/leases/ferroplane-leader",
        ),
        with_body(
            // deploy/ grants events.k8s.io Events, not core ones.
            probe(Method::POST, "/api/v1/namespaces/team-b/events"),
            json!({"apiVersion": "v1", "kind": "Event"}),
            "application/json",
        ),
        with_body(
            probe(
                Method::PATCH,
                "/api/v1/namespaces/team-a/configmaps/c?fieldManager=t",
            ),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}),
            "application/apply-patch+yaml",
        ),
        probe(Method::GET, "/api/v1/nodes"),
        with_body(
            probe(Method::POST, reviews),
            review("list", "secrets", "team-b"),
            "application/json",
        ),
        with_body(
            probe(Method::POST, reviews),
            review("update", "secrets", "team-a"),
            "application/json",
        ),
        with_body(
            probe(Method::POST, reviews),
            review("delete", "pods", "team-a"),
            "application/json",
        ),
    ]
}

/// What a server answered: the code, and the Status or the review's status (other successful
/// bodies hold uids, times and versions that differ by nature).
async fn answer(client: &kube::Client, probe: &Probe) -> (u16, Value) {
    let body = probe
        .body
        .as_ref()
        .map(|b| serde_json::to_vec(b).expect("json"))
        .unwrap_or_default();
    let request = Request::builder()
        .method(probe.method.clone())
        .uri(probe.path)
        .header("Content-Type", probe.content_type)
        .body(kube::client::Body::from(body))
        .expect("a request");
    let response = client.send(request).await.expect("an answer");
    let code = response.status().as_u16();
    let bytes = response.into_body().collect_bytes().await.expect("a body");
    let value: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let shown = match value["kind"].as_str() {
        Some("Status") => json!({
            "message": value["message"], "reason": value["reason"],
            "code": value["code"], "details": value["details"],
        }),
        Some("SelfSubjectAccessReview") => value["status"].clone(),
        _ => Value::Null,
    };
    (code, shown)
}

async fn install(client: &kube::Client, objects: &[Value]) {
    for object in objects {
        let api_version = object["apiVersion"].as_str().expect("apiVersion");
        let kind = object["kind"].as_str().expect("kind");
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let plural = format!("{}s", kind.to_lowercase());
        let resource = ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk(group, version, kind),
            &plural,
        );
        let api: Api<DynamicObject> = match object["metadata"]["namespace"].as_str() {
            Some(namespace) => Api::namespaced_with(client.clone(), namespace, &resource),
            None => Api::all_with(client.clone(), &resource),
        };
        let dynamic: DynamicObject = serde_json::from_value(object.clone()).expect("an object");
        match api.create(&PostParams::default(), &dynamic).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 409 => {}
            Err(error) => panic!("cannot create {kind}: {error}"),
        }
    }
}

/// The cluster install of `providers` and the namespaced install of the application provider in
/// `team-a`, with namespaces team-a and team-b.
fn installs(providers: &[Provider]) -> Vec<Value> {
    let mut objects: Vec<Value> = deploy::cluster_rbac(providers)
        .iter()
        .flat_map(|m| m.objects().expect("parses"))
        .collect();
    for namespace in ["team-a", "team-b"] {
        objects.push(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}),
        );
    }
    objects.extend(deploy::namespaced_rbac(&[Provider::Application], "team-a").expect("parses"));
    objects
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandbox_authorizes_as_a_real_apiserver_does() {
    let real = ControlPlane::start(Options::default())
        .await
        .expect("the control plane starts");
    let sandbox = TestCluster::start().await;
    // Only the alibaba provider cluster-wide: the workload verbs come from team-a's Roles.
    let objects = installs(&[Provider::Alibaba]);
    install(&real.client(), &objects).await;
    install(&sandbox.client(), &objects).await;
    // The sandbox's TestCluster binds every provider; take back what this test does not install.
    for provider in ALL_PROVIDERS.iter().filter(|p| **p != Provider::Alibaba) {
        let name = format!(
            "ferroplane-{}",
            match provider {
                Provider::Etcd => "etcd",
                _ => "application",
            }
        );
        sandbox
            .kubectl()
            .ok(&["delete", "clusterrolebinding", &name])
            .await;
    }

    let real_kubeconfig = real
        .service_account_kubeconfig(deploy::SERVICE_ACCOUNT_NAMESPACE, deploy::SERVICE_ACCOUNT)
        .await
        .expect("a token for the controller");
    let real_sa = ferroplane_testkit::client_from_kubeconfig(&real_kubeconfig).await;
    let sandbox_sa = sandbox.controller_client();

    let mut differences = Vec::new();
    let corpus = corpus();
    for probe in &corpus {
        let want = answer(&real_sa, probe).await;
        let got = answer(&sandbox_sa, probe).await;
        if want != got {
            differences.push(format!(
                "{} {}\n  real:    {} {}\n  sandbox: {} {}",
                probe.method, probe.path, want.0, want.1, got.0, got.1
            ));
        }
    }
    real.stop();
    sandbox.shutdown().await;
    assert!(
        differences.is_empty(),
        "{} of {} answers differ:\n{}",
        differences.len(),
        corpus.len(),
        differences.join("\n")
    );
}
