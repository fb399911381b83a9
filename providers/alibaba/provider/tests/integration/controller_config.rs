//! ProviderConfig and ClusterProviderConfig: users, Ready, the in-use finalizer, Secret
//! rotation, the JSON Secret layout, STS AssumeRole on top of a Secret.

use crate::controller_support::*;
use alibaba_mock::{AccessKey, DEFAULT_ACCOUNT_ID};
use ferroplane_apis::alibabacloud::{ClusterProviderConfig, ECSInstance, EIP, ProviderConfig};
use ferroplane_apis::common::{
    Condition, ConditionStatus, ProviderConfigKind, ProviderConfigReference,
};
use ferroplane_testkit::eventually;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::{DeleteParams, PostParams};
use serde_json::json;

fn ready(conditions: &[Condition]) -> Option<&Condition> {
    conditions.iter().find(|c| c.type_ == "Ready")
}

async fn wait_config(
    env: &Env,
    name: &str,
    what: &str,
    check: impl Fn(Option<&ProviderConfig>) -> bool,
) {
    let configs = Api::<ProviderConfig>::namespaced(env.client.clone(), NS);
    eventually(format!("ProviderConfig {name}: {what}"))
        .within(WAIT)
        .for_object(&configs, name, check)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn users_ready_and_the_in_use_finalizer() {
    let env = Env::start().await;
    wait_config(&env, "default", "Ready with the finalizer", |c| {
        c.is_some_and(|c| {
            c.metadata
                .finalizers
                .iter()
                .flatten()
                .any(|f| f == "ferroplane.io/in-use")
                && c.status
                    .as_ref()
                    .and_then(|s| ready(&s.conditions))
                    .is_some_and(|r| {
                        r.status == ConditionStatus::True
                            && r.message.contains("loaded")
                            && !r.message.contains(AK)
                            && !r.message.contains(SK)
                    })
        })
    })
    .await;
    env.create(&instance("user-1")).await;
    env.create(&instance("user-2")).await;
    env.wait_ready("user-1").await;
    wait_config(&env, "default", "two users", |c| {
        c.and_then(|c| c.status.as_ref())
            .is_some_and(|s| s.users == 2)
    })
    .await;

    // Deleting a config in use: it stays, and says why.
    Api::<ProviderConfig>::namespaced(env.client.clone(), NS)
        .delete("default", &DeleteParams::default())
        .await
        .expect("delete requested");
    wait_config(&env, "default", "InUse", |c| {
        c.and_then(|c| c.status.as_ref())
            .and_then(|s| ready(&s.conditions))
            .is_some_and(|r| r.reason == "InUse" && r.message.contains("default/user-1"))
    })
    .await;
    // Its users keep working, including their deletion.
    env.delete("user-1").await;
    env.delete("user-2").await;
    env.wait_for("user-1", "gone", |o| o.is_none()).await;
    env.wait_for("user-2", "gone", |o| o.is_none()).await;
    assert!(env.mock().instances().is_empty(), "both released");
    wait_config(&env, "default", "deleted once unused", |c| c.is_none()).await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotated_secret_is_picked_up() {
    let env = Env::start().await;
    // Start with a wrong secret.
    env.put_secret(
        CREDS,
        &[
            ("accessKeyId", AK),
            ("accessKeySecret", "not-the-right-one"),
        ],
    )
    .await;
    env.create(&instance("rotate")).await;
    env.wait_sync_error("rotate", "SignatureDoesNotMatch").await;
    wait_config(
        &env,
        "default",
        "Ready stays about loading (the keys load)",
        |c| {
            c.and_then(|c| c.status.as_ref())
                .and_then(|s| ready(&s.conditions))
                .is_some()
        },
    )
    .await;
    // Fixed: the Secret watch requeues the instance and the new version replaces the client.
    env.put_secret(CREDS, &[("accessKeyId", AK), ("accessKeySecret", SK)])
        .await;
    let id = external_name(&env.wait_ready("rotate").await).expect("id");

    // Rotated to a new key, the old one disabled: still synced, with the new key.
    env.mock().add_access_key(AccessKey::new(
        "LTAIrotated",
        "rotated-secret",
        DEFAULT_ACCOUNT_ID,
    ));
    env.put_secret(
        CREDS,
        &[
            ("accessKeyId", "LTAIrotated"),
            ("accessKeySecret", "rotated-secret"),
        ],
    )
    .await;
    // The status names the Secret version in use, never the AccessKeyId.
    let rotated_version = Api::<Secret>::namespaced(env.client.clone(), NS)
        .get(CREDS)
        .await
        .expect("secret")
        .metadata
        .resource_version
        .expect("a resourceVersion");
    wait_config(&env, "default", "new key loaded", |c| {
        c.and_then(|c| c.status.as_ref())
            .and_then(|s| ready(&s.conditions))
            .is_some_and(|r| {
                r.message
                    .contains(&format!("at resourceVersion {rotated_version}"))
                    && !r.message.contains("LTAIrotated")
            })
    })
    .await;
    env.mock().set_access_key_enabled(AK, false);
    env.patch_for_provider("rotate", json!({"instanceName": "rotated"}))
        .await;
    env.wait_mock(&id, "renamed with the new key", |i| {
        i.is_some_and(|i| i.instance_name == "rotated")
    })
    .await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_secret_cluster_config_and_assumed_role() {
    let env = Env::start().await;
    let endpoint = env.mock().endpoint();
    // Crossplane's JSON layout under one key.
    let json = format!(r#"{{"access_key":"{AK}","secret_key":"{SK}"}}"#);
    env.put_secret("json-creds", &[("credentials", json.as_str())])
        .await;
    env.create_provider_config("json", "json-creds", Some("credentials"), &endpoint)
        .await;
    let mut obj = instance("from-json");
    obj.spec.provider_config_ref = ProviderConfigReference {
        name: "json".into(),
        ..Default::default()
    };
    env.create(&obj).await;
    env.wait_ready("from-json").await;

    // A ClusterProviderConfig assuming a RAM role through STS on top of the Secret.
    let cluster: ClusterProviderConfig = serde_json::from_value(json!({
        "apiVersion": "alibabacloud.ferroplane.io/v1alpha1",
        "kind": "ClusterProviderConfig",
        "metadata": {"name": "shared"},
        "spec": {
            "credentials": {
                "source": "RamRoleArn",
                "secretRef": {"name": CREDS, "namespace": NS},
                "ramRoleArn": {"roleArn": format!("acs:ram::{DEFAULT_ACCOUNT_ID}:role/ferroplane")},
            },
            "endpoint": endpoint,
        }
    }))
    .expect("cluster config");
    Api::<ClusterProviderConfig>::all(env.client.clone())
        .create(&PostParams::default(), &cluster)
        .await
        .expect("created");
    let mut obj = instance("from-role");
    obj.spec.provider_config_ref =
        serde_json::from_value(json!({"kind": "ClusterProviderConfig", "name": "shared"}))
            .expect("ref");
    env.create(&obj).await;
    env.wait_ready("from-role").await;
    assert!(env.mock().stats().calls_of("AssumeRole") >= 1);
    let clusters = Api::<ClusterProviderConfig>::all(env.client.clone());
    eventually("ClusterProviderConfig shared: 1 user and Ready")
        .within(WAIT)
        .for_object(&clusters, "shared", |c| {
            c.expect("exists").status.as_ref().is_some_and(|s| {
                s.users == 1
                    && ready(&s.conditions).is_some_and(|r| r.status == ConditionStatus::True)
            })
        })
        .await;
    env.stop().await;
}

/// Resolved configurations are reused until a watch event says their config or Secret changed:
/// a Secret deleted behind the cache's back is not noticed, a Secret event is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolved_configs_are_kept_until_their_config_or_secret_changes() {
    use provider_alibaba::{ConfigResolver, EndpointAllowList, ResolvedConfigs};

    let env = Env::start().await;
    let mock_allowed = EndpointAllowList::default()
        .with(&env.mock().endpoint())
        .expect("a URL");
    let configs =
        ResolvedConfigs::new(ConfigResolver::new(env.client.clone()).allow_endpoints(mock_allowed));
    let reference = ProviderConfigReference::default();
    let first = configs.resolve(&reference, NS).await.expect("resolves");
    assert_eq!(first.secret, Some((NS.to_owned(), CREDS.to_owned())));

    let secrets: Api<Secret> = Api::namespaced(env.client.clone(), NS);
    let secret = secrets.get(CREDS).await.expect("secret");
    secrets
        .delete(CREDS, &Default::default())
        .await
        .expect("secret deleted");
    let cached = configs.resolve(&reference, NS).await.expect("cached");
    assert!(
        std::sync::Arc::ptr_eq(&first, &cached),
        "served from the cache"
    );

    // Another Secret's event forgets nothing; this Secret's does.
    let mut other = secret.clone();
    other.metadata.name = Some("unrelated".into());
    configs.secret_changed(&other);
    assert!(configs.resolve(&reference, NS).await.is_ok());
    configs.secret_changed(&secret);
    let err = configs
        .resolve(&reference, NS)
        .await
        .expect_err("Secret is gone");
    assert_eq!(err.reason(), "CredentialsSecretNotFound");

    // Back again; a change of the config itself also forgets it.
    env.put_secret(CREDS, &[("accessKeyId", AK), ("accessKeySecret", SK)])
        .await;
    let again = configs.resolve(&reference, NS).await.expect("resolves");
    let config = env.provider_config("default").await.expect("config");
    configs.config_changed(ProviderConfigKind::ProviderConfig, &config);
    let fresh = configs.resolve(&reference, NS).await.expect("resolves");
    assert!(!std::sync::Arc::ptr_eq(&again, &fresh), "resolved again");
    env.stop().await;
}

/// Issue 32, defect 2: moving `providerConfigRef` to a configuration of another account made the
/// object Ready with a new instance there, the first kept running unmanaged, and `kubectl
/// delete` released only the new one. Now the move is refused (nothing is created in the other
/// account), a deletion waits rather than forget the instance, and pointing back lets it finish.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_config_moved_to_another_account_is_refused_and_nothing_leaks() {
    const OTHER_ACCOUNT: &str = "5550002";
    let env = Env::start().await;
    env.mock()
        .add_access_key(AccessKey::new("LTAIsecond", "second-secret", OTHER_ACCOUNT));
    env.put_secret(
        "second-creds",
        &[
            ("accessKeyId", "LTAIsecond"),
            ("accessKeySecret", "second-secret"),
        ],
    )
    .await;
    env.create_provider_config("second", "second-creds", None, &env.mock().endpoint())
        .await;
    env.create(&instance("mover")).await;
    let ready = env.wait_ready("mover").await;
    let id = external_name(&ready).expect("id");
    let scope = ready
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(ferroplane_apis::common::names::EXTERNAL_SCOPE))
        .cloned();
    assert_eq!(scope, Some(format!("{DEFAULT_ACCOUNT_ID}/{REGION}")));

    let point_to = |config: &'static str| {
        let instances = env.instances();
        async move {
            instances
                .patch(
                    "mover",
                    &kube::api::PatchParams::default(),
                    &kube::api::Patch::Merge(
                        json!({"spec": {"providerConfigRef": {"name": config}}}),
                    ),
                )
                .await
                .expect("providerConfigRef changed");
        }
    };
    point_to("second").await;
    let refused = |o: Option<&ECSInstance>| {
        o.and_then(|o| o.status.as_ref())
            .and_then(|s| s.conditions.iter().find(|c| c.type_ == "Synced"))
            .is_some_and(|c| c.reason == ferroplane_runtime::reasons::SCOPE_CHANGED)
    };
    let moved = env
        .wait_for("mover", "Synced=False/ExternalScopeChanged", refused)
        .await
        .expect("exists");
    let message = &moved
        .status
        .as_ref()
        .and_then(|s| s.conditions.iter().find(|c| c.type_ == "Synced"))
        .expect("Synced")
        .message;
    assert!(message.contains(OTHER_ACCOUNT), "{message}");
    assert!(message.contains("deletionPolicy: Orphan"), "{message}");
    let in_other_account = |env: &Env| {
        env.mock()
            .instances()
            .into_iter()
            .filter(|i| i.account_id == OTHER_ACCOUNT)
            .count()
    };
    assert_eq!(
        in_other_account(&env),
        0,
        "nothing created in the other account"
    );

    // Deleted while pointing elsewhere: the finalizer stays, the instance keeps running.
    env.delete("mover").await;
    env.wait_for("mover", "deleting, refused", |o| {
        o.is_some_and(|o| o.metadata.deletion_timestamp.is_some())
            && refused(o)
            && o.and_then(|o| o.status.as_ref())
                .and_then(|s| s.conditions.iter().find(|c| c.type_ == "Ready"))
                .is_some_and(|c| c.reason == "Deleting")
    })
    .await;
    assert!(
        env.mock_instance(&id)
            .is_some_and(|i| i.status == "Running"),
        "the instance is not forgotten"
    );

    // Pointed back: the deletion releases the instance where it lives.
    point_to("default").await;
    env.wait_for("mover", "gone", |o| o.is_none()).await;
    env.wait_mock(&id, "released", |i| i.is_none()).await;
    assert_eq!(in_other_account(&env), 0);
    env.stop().await;
}

/// `status.users` counts the users of every kind (an EIP beside an ECSInstance), exactly as they
/// come and go, and the in-use finalizer holds the configuration for any of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn users_of_every_kind_are_counted_and_keep_the_config() {
    let env = Env::start().await;
    let users = |n: i64| {
        move |c: Option<&ProviderConfig>| {
            c.and_then(|c| c.status.as_ref())
                .is_some_and(|s| s.users == n)
        }
    };
    wait_config(&env, "default", "no users", users(0)).await;
    let eip_doc = ferroplane_testkit::samples::read("eip.yaml")
        .split("\n---\n")
        .map(|doc| serde_saphyr::from_str::<serde_json::Value>(doc).expect("eip.yaml document"))
        .find(|d| d["kind"] == "EIP")
        .expect("eip.yaml has an EIP");
    let eip: EIP = serde_json::from_value(eip_doc).expect("an EIP");
    let eips = Api::<EIP>::namespaced(env.client.clone(), NS);
    eips.create(&PostParams::default(), &eip)
        .await
        .expect("EIP created");
    wait_config(&env, "default", "the EIP counted", users(1)).await;
    env.create(&instance("vm-user")).await;
    wait_config(&env, "default", "the EIP and the instance", users(2)).await;
    env.delete("vm-user").await;
    env.wait_for("vm-user", "gone", |o| o.is_none()).await;
    wait_config(&env, "default", "the instance gone", users(1)).await;

    // Only the EIP is left, and it alone holds the configuration.
    Api::<ProviderConfig>::namespaced(env.client.clone(), NS)
        .delete("default", &DeleteParams::default())
        .await
        .expect("delete requested");
    wait_config(&env, "default", "InUse by the EIP", |c| {
        c.and_then(|c| c.status.as_ref())
            .and_then(|s| ready(&s.conditions))
            .is_some_and(|r| r.reason == "InUse" && r.message.contains("EIP default/bastion"))
    })
    .await;
    eips.delete("bastion", &DeleteParams::default())
        .await
        .expect("EIP delete requested");
    wait_config(&env, "default", "deleted once unused", |c| c.is_none()).await;
    assert!(
        !env.mock()
            .resources()
            .iter()
            .any(|r| r.kind == alibaba_mock::ResourceKind::Eip),
        "the EIP was released with the configuration's credentials"
    );
    env.stop().await;
}
