//! Authentication and RBAC: the administrator (no credentials) may do anything; a
//! ServiceAccount's token gets what the stored Roles and ClusterRoles bound to it grant, and the
//! rest is answered with kube-apiserver's 403. The expected bodies were recorded from a real
//! kube-apiserver (v1.37.2, `ferroplane-testenv up`) for the same requests.

use crate::common;

use k8s_openapi::api::core::v1::{ConfigMap, Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::Role;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use reqwest::StatusCode;
use serde_json::{Value, json};

const SA_USER: &str = "system:serviceaccount:ferroplane-system:ferroplane";

async fn send(request: reqwest::RequestBuilder) -> (StatusCode, Value) {
    let response = request.send().await.expect("answered");
    let status = response.status();
    let body = response.json::<Value>().await.unwrap_or(Value::Null);
    (status, body)
}

fn forbidden(message: &str, details: Value) -> Value {
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "Forbidden",
        "details": details,
        "code": 403,
    })
}

// Real apiserver, as ferroplane's ServiceAccount bound to deploy/'s rules: an update of a Secret
// (deploy/ grants get, list, watch, create and patch only), a list of Roles in a namespace, a
// deletecollection, a cluster-scoped get and a subresource are refused with these bodies.
#[tokio::test]
async fn the_controller_account_is_refused_what_deploy_does_not_grant() {
    let harness = common::start().await;
    let token = harness
        .sandbox()
        .service_account_token("ferroplane-system", "ferroplane");
    let base = harness.sandbox().url();
    let http = reqwest::Client::new();
    let as_sa = |request: reqwest::RequestBuilder| request.bearer_auth(&token);

    let update = send(as_sa(
        http.put(format!("{base}/api/v1/namespaces/default/secrets/s"))
            .json(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}})),
    ))
    .await;
    assert_eq!(update.0, StatusCode::FORBIDDEN);
    assert_eq!(
        update.1,
        forbidden(
            &format!(
                "secrets \"s\" is forbidden: User \"{SA_USER}\" cannot update resource \"secrets\" in API group \"\" in the namespace \"default\""
            ),
            json!({"name": "s", "kind": "secrets"}),
        )
    );

    let roles = send(as_sa(http.get(format!(
        "{base}/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles"
    ))))
    .await;
    assert_eq!(
        roles.1,
        forbidden(
            &format!(
                "roles.rbac.authorization.k8s.io is forbidden: User \"{SA_USER}\" cannot list resource \"roles\" in API group \"rbac.authorization.k8s.io\" in the namespace \"default\""
            ),
            json!({"group": "rbac.authorization.k8s.io", "kind": "roles"}),
        )
    );

    let wipe = send(as_sa(
        http.delete(format!("{base}/api/v1/namespaces/default/configmaps")),
    ))
    .await;
    assert_eq!(
        wipe.1["message"],
        format!(
            "configmaps is forbidden: User \"{SA_USER}\" cannot deletecollection resource \"configmaps\" in API group \"\" in the namespace \"default\""
        )
    );

    let role = send(as_sa(http.get(format!(
        "{base}/apis/rbac.authorization.k8s.io/v1/clusterroles/ferroplane-alibaba"
    ))))
    .await;
    assert_eq!(
        role.1,
        forbidden(
            &format!(
                "clusterroles.rbac.authorization.k8s.io \"ferroplane-alibaba\" is forbidden: User \"{SA_USER}\" cannot get resource \"clusterroles\" in API group \"rbac.authorization.k8s.io\" at the cluster scope"
            ),
            json!({"name": "ferroplane-alibaba", "group": "rbac.authorization.k8s.io", "kind": "clusterroles"}),
        )
    );

    let status = send(as_sa(
        http.patch(format!(
            "{base}/apis/apps/v1/namespaces/default/deployments/web/status"
        ))
        .header("Content-Type", "application/merge-patch+json")
        .body("{}"),
    ))
    .await;
    assert_eq!(
        status.1,
        forbidden(
            &format!(
                "deployments.apps \"web\" is forbidden: User \"{SA_USER}\" cannot patch resource \"deployments/status\" in API group \"apps\" in the namespace \"default\""
            ),
            json!({"name": "web", "group": "apps", "kind": "deployments"}),
        )
    );

    // Reading a Namespace is granted (a ClusterProviderConfig's allowedNamespaces selector
    // matches its labels); deleting one is not.
    let namespace = send(as_sa(http.delete(format!("{base}/api/v1/namespaces/team")))).await;
    assert_eq!(
        namespace.1["message"],
        format!(
            "namespaces \"team\" is forbidden: User \"{SA_USER}\" cannot delete resource \"namespaces\" in API group \"\" in the namespace \"team\""
        )
    );
    harness.shutdown().await;
}

// Real apiserver: what a binding grants passes authorization and gets the resource's own answer
// (here 404 for a missing Secret); discovery and /version are open to every authenticated
// user; an unknown token is 401 "Unauthorized"; server-side apply of a missing object needs
// `create` as well as `patch`.
#[tokio::test]
async fn granted_requests_pass_and_unknown_tokens_are_unauthorized() {
    let harness = common::start().await;
    let controller = harness.controller_client();
    let secrets: Api<Secret> = Api::namespaced(controller.clone(), "default");
    secrets
        .list(&ListParams::default())
        .await
        .expect("deploy/ lets the controller list Secrets");
    let missing = secrets.get("nope").await.expect_err("no such Secret");
    assert!(
        matches!(&missing, kube::Error::Api(s) if s.code == 404),
        "{missing}"
    );
    let version = controller.apiserver_version().await.expect("/version");
    assert_eq!(version.major, "1");

    let http = reqwest::Client::new();
    let base = harness.sandbox().url();
    let bogus = send(
        http.get(format!("{base}/api/v1/namespaces/default/configmaps"))
            .bearer_auth("not-a-token"),
    )
    .await;
    assert_eq!(
        (
            bogus.0,
            bogus.1["message"].clone(),
            bogus.1["reason"].clone()
        ),
        (
            StatusCode::UNAUTHORIZED,
            json!("Unauthorized"),
            json!("Unauthorized")
        )
    );

    // A Role that lets an account patch ConfigMaps but not create them.
    let admin = harness.client();
    let accounts: Api<ServiceAccount> = Api::namespaced(admin.clone(), "default");
    accounts
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "patcher"}})).unwrap(),
        )
        .await
        .expect("account created");
    let role: Role = serde_json::from_value(json!({
        "metadata": {"name": "cm-patch"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "patch"]}],
    }))
    .unwrap();
    Api::<Role>::namespaced(admin.clone(), "default")
        .create(&PostParams::default(), &role)
        .await
        .expect("role created");
    harness
        .sandbox()
        .create_objects(&[json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "cm-patch", "namespace": "default"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-patch"},
            "subjects": [{"kind": "ServiceAccount", "name": "patcher", "namespace": "default"}],
        })])
        .expect("binding created");
    let token = harness
        .sandbox()
        .service_account_token("default", "patcher");
    let apply = |name: &str| {
        http.patch(format!(
            "{base}/api/v1/namespaces/default/configmaps/{name}?fieldManager=t"
        ))
        .bearer_auth(&token)
        .header("Content-Type", "application/apply-patch+yaml")
        .body(format!(
            "{{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{{\"name\":\"{name}\"}},\"data\":{{\"a\":\"b\"}}}}"
        ))
    };
    let created = send(apply("new")).await;
    assert_eq!(
        created.1["message"],
        "configmaps \"new\" is forbidden: User \"system:serviceaccount:default:patcher\" cannot create resource \"configmaps\" in API group \"\" in the namespace \"default\""
    );
    Api::<ConfigMap>::namespaced(admin.clone(), "default")
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "old"}})).unwrap(),
        )
        .await
        .expect("admin creates");
    let applied = send(apply("old")).await;
    assert_eq!(applied.0, StatusCode::OK, "{}", applied.1);
    let other_namespace = send(
        http.get(format!(
            "{base}/api/v1/namespaces/kube-system/configmaps/old"
        ))
        .bearer_auth(&token),
    )
    .await;
    assert_eq!(
        other_namespace.0,
        StatusCode::FORBIDDEN,
        "a Role grants in its namespace only"
    );

    // A token outlives nothing: the account deleted, it is refused.
    accounts
        .delete("patcher", &Default::default())
        .await
        .expect("account deleted");
    let gone = send(apply("old")).await;
    assert_eq!(gone.0, StatusCode::UNAUTHORIZED, "{}", gone.1);
    harness.shutdown().await;
}

// kubectl auth can-i: SelfSubjectAccessReview, as the administrator impersonating the
// controller (`--as`), answers from the same rules; "no" exits 1.
#[tokio::test]
async fn kubectl_auth_can_i_answers_from_the_stored_rules() {
    let harness = common::start().await;
    let kubectl = harness.kubectl();
    let yes = kubectl
        .ok(&[
            "auth",
            "can-i",
            "delete",
            "pods",
            "-n",
            "team",
            &format!("--as={SA_USER}"),
        ])
        .await;
    assert_eq!(yes.trim(), "yes");
    let no = kubectl
        .run(&[
            "auth",
            "can-i",
            "update",
            "secrets",
            "-n",
            "team",
            &format!("--as={SA_USER}"),
        ])
        .await;
    assert!(!no.success());
    assert_eq!(no.stdout.trim(), "no", "{no:?}");
    let admin = kubectl
        .ok(&["auth", "can-i", "delete", "clusterroles"])
        .await;
    assert_eq!(admin.trim(), "yes");

    let patch = PatchParams::default();
    // Dropping `delete` from the etcd role is seen by the next review.
    let roles: Api<k8s_openapi::api::rbac::v1::ClusterRole> = Api::all(harness.client());
    let mut role = roles
        .get("ferroplane-etcd")
        .await
        .expect("deploy/'s etcd role");
    for rule in role.rules.iter_mut().flatten() {
        rule.verbs.retain(|v| v != "delete");
    }
    role.metadata.managed_fields = None;
    roles
        .patch("ferroplane-etcd", &patch, &Patch::Merge(&role))
        .await
        .expect("role edited");
    let now = kubectl
        .run(&[
            "auth",
            "can-i",
            "delete",
            "pods",
            "-n",
            "team",
            &format!("--as={SA_USER}"),
        ])
        .await;
    assert_eq!(now.stdout.trim(), "no", "{now:?}");
    harness.shutdown().await;
}

// DNS rebinding: a request whose Host names another server is refused (421) before anything
// else; the loopback names with the server's port are served.
#[tokio::test]
async fn foreign_host_headers_are_refused() {
    let harness = common::start().await;
    let address = harness.sandbox().address();
    let http = reqwest::Client::new();
    let url = format!(
        "{}/api/v1/namespaces/default/configmaps",
        harness.sandbox().url()
    );
    for host in [
        "evil.example",
        "evil.example:80",
        &format!("rebind.example:{}", address.port()),
    ] {
        let (code, body) = send(http.get(&url).header("Host", host)).await;
        assert_eq!(code, StatusCode::MISDIRECTED_REQUEST, "{host}: {body}");
        assert_eq!(body["reason"], "MisdirectedRequest");
    }
    for host in [
        format!("localhost:{}", address.port()),
        format!("127.0.0.1:{}", address.port()),
        format!("[::1]:{}", address.port()),
    ] {
        let (code, body) = send(http.get(&url).header("Host", &host)).await;
        assert_eq!(code, StatusCode::OK, "{host}: {body}");
    }
    harness.shutdown().await;
}
