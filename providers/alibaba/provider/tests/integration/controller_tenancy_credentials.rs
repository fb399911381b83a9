//! Tenancy of credentials: a namespaced ProviderConfig cannot use the controller's own identity
//! (refused by the CRD at admission, and by the resolver at reconcile), cannot point the
//! controller at an endpoint off the allow-list, and a ClusterProviderConfig serves only the
//! namespaces its `allowedNamespaces` admits. In every refused case nothing reaches the cloud.
//!
//! The controller's environment is injected (`ClientOverrides::environment`) and holds the mock's
//! valid AccessKey, so a refusal is the only thing standing between a tenant and that identity;
//! the ClusterProviderConfig with `source: Environment` shows the same environment does work.

use std::collections::BTreeMap;

use crate::controller_support::*;
use alibaba_mock::MockConfig;
use alibaba_sdk::credentials::{ENV_ACCESS_KEY_ID, ENV_ACCESS_KEY_SECRET, EnvLookup};
use ferroplane_apis::alibabacloud::{ClusterProviderConfig, ECSInstance, ProviderConfig};
use ferroplane_apis::common::ConditionStatus;
use ferroplane_apis::common::names::{READY, SYNCED};
use ferroplane_testkit::eventually;
use k8s_openapi::api::core::v1::Namespace;
use kube::Api;
use kube::api::{ObjectMeta, PostParams};
use provider_alibaba::ConfigResolver;
use serde_json::{Value, json};

/// Options whose "process environment" holds the mock's valid AccessKey.
fn options_with_controller_identity() -> provider_alibaba::Options {
    let mut options = test_options();
    options.client.environment =
        EnvLookup::from_pairs([(ENV_ACCESS_KEY_ID, AK), (ENV_ACCESS_KEY_SECRET, SK)]);
    options
}

async fn start() -> Env {
    Env::start_with(options_with_controller_identity(), MockConfig::new(AK, SK)).await
}

fn namespaced_config(name: &str, spec: Value) -> ProviderConfig {
    let mut config: ProviderConfig = serde_json::from_value(json!({
        "apiVersion": "alibabacloud.ferroplane.io/v1alpha1",
        "kind": "ProviderConfig",
        "metadata": {"name": name, "namespace": NS},
        "spec": spec,
    }))
    .expect("a ProviderConfig");
    config.metadata.namespace = Some(NS.into());
    config
}

async fn create_namespace(env: &Env, name: &str, labels: &[(&str, &str)]) {
    let namespace = Namespace {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect::<BTreeMap<_, _>>(),
            ),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    Api::<Namespace>::all(env.client.clone())
        .create(&PostParams::default(), &namespace)
        .await
        .expect("namespace created");
}

/// An instance in `namespace` using `config` of `kind`.
async fn create_instance(env: &Env, namespace: &str, name: &str, kind: &str, config: &str) {
    let mut obj = instance(name);
    obj.metadata.namespace = Some(namespace.into());
    obj.spec.provider_config_ref =
        serde_json::from_value(json!({"kind": kind, "name": config})).expect("a reference");
    Api::<ECSInstance>::namespaced(env.client.clone(), namespace)
        .create(&PostParams::default(), &obj)
        .await
        .expect("ECSInstance created");
}

/// Waits until the instance's `type_` condition is `status` with `reason` (for Synced=False the
/// framework's reason is ReconcileError and the message starts with the provider's reason);
/// returns its message.
async fn wait_condition(
    env: &Env,
    namespace: &str,
    name: &str,
    type_: &'static str,
    status: ConditionStatus,
    reason: &str,
) -> String {
    let api = Api::<ECSInstance>::namespaced(env.client.clone(), namespace);
    let obj = eventually(format!("{namespace}/{name}: {type_}={status:?} {reason}"))
        .within(WAIT)
        .for_object(&api, name, |o| {
            o.and_then(|o| condition(o, type_)).is_some_and(|c| {
                c.status == status
                    && (c.reason == reason || c.message.starts_with(&format!("{reason}:")))
            })
        })
        .await
        .expect("exists");
    condition(&obj, type_).expect("condition").message.clone()
}

fn assert_tenant_safe(message: &str) {
    assert!(!message.contains(AK), "{message}");
    assert!(!message.contains(SK), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_controllers_identity_is_refused_to_namespaced_configs() {
    let env = start().await;
    let configs = Api::<ProviderConfig>::namespaced(env.client.clone(), NS);
    let role = json!({"roleArn": "acs:ram::1234567890123:role/platform"});
    for (name, credentials, needle) in [
        (
            "env",
            json!({"source": "Environment"}),
            "may only use credentials.source Secret or RamRoleArn",
        ),
        (
            "rrsa",
            json!({"source": "RRSA", "rrsa": {"oidcTokenFile": "/etc/passwd"}}),
            "may only use credentials.source Secret or RamRoleArn",
        ),
        (
            "instance-role",
            json!({"source": "InstanceRole"}),
            "may only use credentials.source Secret or RamRoleArn",
        ),
        (
            "role-on-controller",
            json!({"source": "RamRoleArn", "ramRoleArn": role}),
            "needs credentials.secretRef",
        ),
        (
            "token-file",
            json!({"source": "Secret", "secretRef": {"name": CREDS}, "rrsa": {"oidcTokenFile": "/etc/passwd"}}),
            "not allowed in a namespaced ProviderConfig",
        ),
    ] {
        let config = namespaced_config(name, json!({"credentials": credentials}));
        let error = configs
            .create(&PostParams::default(), &config)
            .await
            .expect_err("admission refuses it");
        let text = error.to_string();
        assert!(text.contains(needle), "{name}: {text}");
        assert!(
            configs.get_opt(name).await.expect("read").is_none(),
            "{name}"
        );
    }

    // The same rule at reconcile, for a config the API server let through (one that predates
    // the CRD rule): the resolver refuses before reading anything.
    let resolver = ConfigResolver::new(env.client.clone());
    let config = namespaced_config("env", json!({"credentials": {"source": "Environment"}}));
    let error = resolver
        .resolve_config(&config)
        .await
        .expect_err("refused at reconcile");
    assert_eq!(error.reason(), "CredentialsSourceNotAllowed");
    assert!(
        error.to_string().contains("ClusterProviderConfig"),
        "{error}"
    );

    // The same environment does work for an administrator's ClusterProviderConfig: the refusal
    // above is what kept a tenant from it.
    let cluster: ClusterProviderConfig = serde_json::from_value(json!({
        "apiVersion": "alibabacloud.ferroplane.io/v1alpha1",
        "kind": "ClusterProviderConfig",
        "metadata": {"name": "platform"},
        "spec": {"credentials": {"source": "Environment"}, "endpoint": env.mock().endpoint()}
    }))
    .expect("cluster config");
    Api::<ClusterProviderConfig>::all(env.client.clone())
        .create(&PostParams::default(), &cluster)
        .await
        .expect("created");
    create_instance(&env, NS, "admin-env", "ClusterProviderConfig", "platform").await;
    env.wait_ready("admin-env").await;
    assert_eq!(env.mock().stats().calls_of("RunInstances"), 1);
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespaced_endpoint_off_the_allow_list_is_refused_before_any_call() {
    let env = start().await;
    // Only ever a string here: the resolver refuses it before a client exists.
    let metadata_service = "http://100.100.100.200/";
    let configs = Api::<ProviderConfig>::namespaced(env.client.clone(), NS);
    for (name, field) in [
        ("to-metadata", "endpoint"),
        ("sts-to-metadata", "stsEndpoint"),
    ] {
        let mut spec = json!({"credentials": {"source": "Secret", "secretRef": {"name": CREDS}}});
        spec[field] = json!(metadata_service);
        configs
            .create(&PostParams::default(), &namespaced_config(name, spec))
            .await
            .expect("the CRD accepts the URL shape");
    }
    eventually("ProviderConfig to-metadata: Ready=False EndpointNotAllowed")
        .within(WAIT)
        .for_object(&configs, "to-metadata", |c| {
            c.and_then(|c| c.status.as_ref())
                .and_then(|s| s.conditions.iter().find(|c| c.type_ == READY))
                .is_some_and(|r| {
                    r.status == ConditionStatus::False && r.reason == "EndpointNotAllowed"
                })
        })
        .await;
    for (name, config) in [
        ("via-endpoint", "to-metadata"),
        ("via-sts", "sts-to-metadata"),
    ] {
        create_instance(&env, NS, name, "ProviderConfig", config).await;
        let message = wait_condition(
            &env,
            NS,
            name,
            SYNCED,
            ConditionStatus::False,
            "EndpointNotAllowed",
        )
        .await;
        assert!(message.contains(metadata_service), "{message}");
        assert!(message.contains("--allow-endpoint"), "{message}");
        assert_tenant_safe(&message);
    }
    // The allowed mock endpoint still works in the same namespace.
    env.create(&instance("allowed")).await;
    env.wait_ready("allowed").await;
    assert_eq!(
        env.mock().stats().calls_of("RunInstances"),
        1,
        "only the allowed instance was created"
    );
    assert_eq!(env.mock().instances().len(), 1);
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_config_serves_only_the_namespaces_it_allows() {
    let env = start().await;
    create_namespace(&env, "team-a", &[("ferroplane.io/tenant", "true")]).await;
    create_namespace(&env, "team-b", &[]).await;
    let clusters = Api::<ClusterProviderConfig>::all(env.client.clone());

    // Admission: a Selector without a selector says what is missing.
    let incomplete: ClusterProviderConfig = serde_json::from_value(json!({
        "apiVersion": "alibabacloud.ferroplane.io/v1alpha1",
        "kind": "ClusterProviderConfig",
        "metadata": {"name": "incomplete"},
        "spec": {"credentials": {"source": "Environment"}, "allowedNamespaces": {"from": "Selector"}}
    }))
    .expect("cluster config");
    let error = clusters
        .create(&PostParams::default(), &incomplete)
        .await
        .expect_err("refused");
    assert!(
        error
            .to_string()
            .contains("needs allowedNamespaces.selector"),
        "{error}"
    );

    let shared: ClusterProviderConfig = serde_json::from_value(json!({
        "apiVersion": "alibabacloud.ferroplane.io/v1alpha1",
        "kind": "ClusterProviderConfig",
        "metadata": {"name": "tenants"},
        "spec": {
            "credentials": {"source": "Environment"},
            "endpoint": env.mock().endpoint(),
            "allowedNamespaces": {
                "from": "Selector",
                "selector": {"matchLabels": {"ferroplane.io/tenant": "true"}}
            }
        }
    }))
    .expect("cluster config");
    clusters
        .create(&PostParams::default(), &shared)
        .await
        .expect("created");

    create_instance(
        &env,
        "team-b",
        "outsider",
        "ClusterProviderConfig",
        "tenants",
    )
    .await;
    let message = wait_condition(
        &env,
        "team-b",
        "outsider",
        SYNCED,
        ConditionStatus::False,
        "NamespaceNotAllowed",
    )
    .await;
    assert!(
        message.contains("does not allow namespace team-b"),
        "{message}"
    );
    assert_tenant_safe(&message);

    create_instance(&env, "team-a", "member", "ClusterProviderConfig", "tenants").await;
    wait_condition(
        &env,
        "team-a",
        "member",
        READY,
        ConditionStatus::True,
        "Available",
    )
    .await;
    // The outsider is still refused after the member's resolve cached the configuration.
    wait_condition(
        &env,
        "team-b",
        "outsider",
        SYNCED,
        ConditionStatus::False,
        "NamespaceNotAllowed",
    )
    .await;
    assert_eq!(
        env.mock().stats().calls_of("RunInstances"),
        1,
        "only team-a's instance was created"
    );
    assert_eq!(env.mock().instances().len(), 1);

    // Labelling team-b into the selector admits its object: the Namespace watch requeues it.
    let label = json!({"metadata": {"labels": {"ferroplane.io/tenant": "true"}}});
    Api::<Namespace>::all(env.client.clone())
        .patch(
            "team-b",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(&label),
        )
        .await
        .expect("namespace labelled");
    wait_condition(
        &env,
        "team-b",
        "outsider",
        READY,
        ConditionStatus::True,
        "Available",
    )
    .await;
    assert_eq!(env.mock().instances().len(), 2);
    env.stop().await;
}

/// A stand-in for the ECS metadata service on 127.0.0.1 (IMDSv2: a token first, then the role
/// listing and its credentials), handing out STS credentials the mock issued. Records the paths
/// it served with a valid token.
struct FakeMetadata {
    url: String,
    served: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    credentials: std::sync::Arc<std::sync::Mutex<Option<alibaba_mock::StsCredentials>>>,
    task: tokio::task::JoinHandle<()>,
}

const METADATA_TOKEN: &str = "imds-token-for-test";
const NODE_ROLE: &str = "ecs-node-role";

impl FakeMetadata {
    async fn start() -> Self {
        use axum::http::{HeaderMap, StatusCode};
        use axum::routing::{get, put};
        type Shared<T> = std::sync::Arc<std::sync::Mutex<T>>;
        let served: Shared<Vec<String>> = Shared::default();
        let credentials: Shared<Option<alibaba_mock::StsCredentials>> = Shared::default();
        let authorized = |headers: &HeaderMap| {
            headers
                .get("x-aliyun-ecs-metadata-token")
                .is_some_and(|v| v == METADATA_TOKEN)
        };
        let app = axum::Router::new()
            .route(
                "/latest/api/token",
                put(|headers: HeaderMap| async move {
                    if headers.contains_key("x-aliyun-ecs-metadata-token-ttl-seconds") {
                        (StatusCode::OK, METADATA_TOKEN.to_owned())
                    } else {
                        (StatusCode::BAD_REQUEST, String::new())
                    }
                }),
            )
            .route(
                "/latest/meta-data/ram/security-credentials/",
                get({
                    let served = served.clone();
                    move |headers: HeaderMap| async move {
                        if !authorized(&headers) {
                            return (StatusCode::UNAUTHORIZED, String::new());
                        }
                        served.lock().unwrap().push("list".into());
                        (StatusCode::OK, format!("{NODE_ROLE}\n"))
                    }
                }),
            )
            .route(
                &format!("/latest/meta-data/ram/security-credentials/{NODE_ROLE}"),
                get({
                    let served = served.clone();
                    let credentials = credentials.clone();
                    move |headers: HeaderMap| async move {
                        let issued = credentials.lock().unwrap().clone();
                        match (authorized(&headers), issued) {
                            (true, Some(c)) => {
                                served.lock().unwrap().push(NODE_ROLE.into());
                                let body = json!({
                                    "AccessKeyId": c.access_key_id,
                                    "AccessKeySecret": c.access_key_secret,
                                    "SecurityToken": c.security_token,
                                    "Expiration": c.expiration.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
                                    "Code": "Success"
                                });
                                (StatusCode::OK, body.to_string())
                            }
                            _ => (StatusCode::UNAUTHORIZED, String::new()),
                        }
                    }
                }),
            );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            url,
            served,
            credentials,
            task,
        }
    }
}

impl Drop for FakeMetadata {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_role_cluster_config_uses_the_metadata_service() {
    let metadata = FakeMetadata::start().await;
    let mut options = options_with_controller_identity();
    options.client.metadata_endpoint = Some(metadata.url.clone());
    let env = Env::start_with(options, MockConfig::new(AK, SK)).await;
    *metadata.credentials.lock().unwrap() = Some(env.mock().issue_sts_credentials(
        alibaba_mock::DEFAULT_ACCOUNT_ID,
        std::time::Duration::from_secs(6 * 3600),
    ));
    let cluster: ClusterProviderConfig = serde_json::from_value(json!({
        "apiVersion": "alibabacloud.ferroplane.io/v1alpha1",
        "kind": "ClusterProviderConfig",
        "metadata": {"name": "node-role"},
        "spec": {"credentials": {"source": "InstanceRole"}, "endpoint": env.mock().endpoint()}
    }))
    .expect("cluster config");
    Api::<ClusterProviderConfig>::all(env.client.clone())
        .create(&PostParams::default(), &cluster)
        .await
        .expect("created");
    create_instance(
        &env,
        NS,
        "on-node-role",
        "ClusterProviderConfig",
        "node-role",
    )
    .await;
    env.wait_ready("on-node-role").await;
    let served = metadata.served.lock().unwrap().clone();
    assert!(
        served.iter().any(|p| p == "list"),
        "the role name was discovered: {served:?}"
    );
    assert!(
        served.iter().any(|p| p == NODE_ROLE),
        "its credentials were read with a token: {served:?}"
    );
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signature_mismatch_leaves_no_access_key_id_in_status_or_events() {
    let env = start().await;
    let key_id = "LTAI5tTenantVisible77";
    env.mock().add_access_key(alibaba_mock::AccessKey::new(
        key_id,
        "the-right-secret",
        alibaba_mock::DEFAULT_ACCOUNT_ID,
    ));
    env.put_secret(
        "mismatch",
        &[
            ("accessKeyId", key_id),
            ("accessKeySecret", "a-wrong-secret"),
        ],
    )
    .await;
    env.create_provider_config("mismatch", "mismatch", None, &env.mock().endpoint())
        .await;
    create_instance(&env, NS, "mismatched", "ProviderConfig", "mismatch").await;
    let message = env
        .wait_sync_error("mismatched", "SignatureDoesNotMatch")
        .await;
    assert!(message.contains("AccessKeySecret"), "a hint: {message}");

    let instance = env.get("mismatched").await.expect("exists");
    let config = env.provider_config("mismatch").await.expect("exists");
    let status = format!(
        "{} {}",
        serde_json::to_string(&instance.status).expect("json"),
        serde_json::to_string(&config.status).expect("json")
    );
    assert!(!status.contains(key_id), "{status}");
    assert!(
        !status.to_lowercase().contains("string to sign is"),
        "{status}"
    );
    // Events are published beside the status write, not before it: wait for them.
    ferroplane_testkit::eventually("the failure recorded as events")
        .within(WAIT)
        .until_async(|| async {
            !ferroplane_testkit::events::about(&env.client, NS, "mismatched")
                .await
                .is_empty()
        })
        .await;
    let events = format!(
        "{:?} {:?}",
        ferroplane_testkit::events::about(&env.client, NS, "mismatched").await,
        ferroplane_testkit::events::about(&env.client, NS, "mismatch").await
    );
    assert!(!events.contains(key_id), "{events}");
    assert!(
        !events.to_lowercase().contains("string to sign is"),
        "{events}"
    );
    env.stop().await;
}
