//! Failures a user will hit: each ends in `Synced=False` with a reason and a message that says
//! what to do, a Warning event, and retries without a hot loop; secrets never show up.

use std::time::Duration;

use crate::controller_support::*;
use alibaba_mock::{Faults, MockConfig};
use ferroplane_apis::alibabacloud::ECSInstance;
use ferroplane_apis::common::{ConditionStatus, ProviderConfigReference};
use serde_json::json;

fn using(name: &str, config: &str) -> ECSInstance {
    let mut obj = instance(name);
    obj.spec.provider_config_ref = ProviderConfigReference {
        name: config.into(),
        ..ProviderConfigReference::default()
    };
    obj
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credential_problems_name_what_to_fix() {
    // The unreachable endpoint below must pass the allow-list to be tried at all.
    let mut options = test_options();
    options
        .allowed_endpoints
        .allow("http://127.0.0.1:1")
        .expect("a URL");
    let env = Env::start_with(options, MockConfig::new(AK, SK)).await;
    let endpoint = env.mock().endpoint();

    // A ProviderConfig that does not exist.
    env.create(&using("no-config", "ghost")).await;
    let msg = env
        .wait_sync_error("no-config", "ProviderConfigNotFound")
        .await;
    assert!(
        msg.contains("ProviderConfig ghost not found in namespace default"),
        "{msg}"
    );

    // A Secret that does not exist yet: waits, then works once it is created.
    env.create_provider_config("late", "late-creds", None, &endpoint)
        .await;
    env.create(&using("late-secret", "late")).await;
    let msg = env
        .wait_sync_error("late-secret", "CredentialsSecretNotFound")
        .await;
    assert!(msg.contains("default/late-creds not found"), "{msg}");
    env.put_secret(
        "late-creds",
        &[("accessKeyId", AK), ("accessKeySecret", SK)],
    )
    .await;
    env.wait_ready("late-secret").await;

    // A key missing from the Secret.
    env.put_secret("half-creds", &[("accessKeyId", AK)]).await;
    env.create_provider_config("half", "half-creds", None, &endpoint)
        .await;
    env.create(&using("missing-key", "half")).await;
    let msg = env
        .wait_sync_error("missing-key", "CredentialsKeyMissing")
        .await;
    assert!(msg.contains("has no key accessKeySecret"), "{msg}");

    // Malformed credentials JSON: the value never appears.
    let leaky = r#"{"access_key": "LTAIx", "secret_key": "json-secret-value-42""#;
    env.put_secret("json-creds", &[("credentials", leaky)])
        .await;
    env.create_provider_config("json", "json-creds", Some("credentials"), &endpoint)
        .await;
    env.create(&using("bad-json", "json")).await;
    let msg = env
        .wait_sync_error("bad-json", "MalformedCredentials")
        .await;
    assert!(msg.contains("not valid credentials JSON"), "{msg}");
    assert!(!msg.contains("json-secret-value-42"), "{msg}");

    // Unknown AccessKeyId.
    env.put_secret(
        "unknown-creds",
        &[("accessKeyId", "LTAInobody"), ("accessKeySecret", SK)],
    )
    .await;
    env.create_provider_config("unknown", "unknown-creds", None, &endpoint)
        .await;
    env.create(&using("unknown-key", "unknown")).await;
    let msg = env
        .wait_sync_error("unknown-key", "InvalidAccessKeyId.NotFound")
        .await;
    assert!(
        msg.contains("InvalidCredentials") && msg.contains("request id"),
        "{msg}"
    );

    // Wrong AccessKeySecret: signature mismatch, secret not echoed.
    let wrong = "wrong-secret-value-for-test";
    env.put_secret(
        "wrong-creds",
        &[("accessKeyId", AK), ("accessKeySecret", wrong)],
    )
    .await;
    env.create_provider_config("wrong", "wrong-creds", None, &endpoint)
        .await;
    env.create(&using("bad-signature", "wrong")).await;
    let msg = env
        .wait_sync_error("bad-signature", "SignatureDoesNotMatch")
        .await;
    assert!(msg.contains("does not belong to its AccessKeyId"), "{msg}");
    assert!(!msg.contains(wrong) && !msg.contains(SK), "{msg}");

    // An endpoint nobody listens on.
    env.create_provider_config("dead", CREDS, None, "http://127.0.0.1:1")
        .await;
    env.create(&using("unreachable", "dead")).await;
    let msg = env
        .wait_sync_error("unreachable", "EndpointUnreachable")
        .await;
    assert!(msg.contains("spec.endpoint"), "{msg}");

    let reasons = env.event_reasons("unknown-key").await;
    assert!(
        reasons.iter().any(|r| r == "CannotConnectToProvider"),
        "{reasons:?}"
    );
    // Only the object whose Secret appeared got an instance.
    assert_eq!(env.mock().instances().len(), 1);
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disabled_access_key_is_reported() {
    let env = Env::start().await;
    assert!(env.mock().set_access_key_enabled(AK, false));
    env.create(&instance("disabled")).await;
    let msg = env
        .wait_sync_error("disabled", "InvalidAccessKeyId.Inactive")
        .await;
    assert!(
        msg.contains("disabled") && msg.contains("RAM console"),
        "{msg}"
    );
    // Enabled again: recovers on its own (retried with backoff).
    env.mock().set_access_key_enabled(AK, true);
    env.wait_ready("disabled").await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spec_errors_wait_for_a_spec_change() {
    let env = Env::start().await;
    let cases = [
        (
            "bad-region",
            json!({"regionId": "xx-nowhere-1"}),
            "InvalidRegionId",
        ),
        (
            "bad-image",
            json!({"imageId": "m-doesnotexist"}),
            "InvalidImageId",
        ),
        (
            "bad-type",
            json!({"instanceType": "ecs.nope.large"}),
            "InvalidInstanceType",
        ),
        (
            "no-stock",
            json!({"instanceType": "ecs.gn6i-c4g1.xlarge"}),
            "NoStock",
        ),
    ];
    for (name, patch, _) in &cases {
        let mut obj = instance(name);
        let mut params = serde_json::to_value(&obj.spec.for_provider).expect("json");
        for (field, value) in patch.as_object().expect("flat patch") {
            params[field] = value.clone();
        }
        obj.spec.for_provider = serde_json::from_value(params).expect("params");
        env.create(&obj).await;
    }
    for (name, _, needle) in &cases {
        let msg = env.wait_sync_error(name, needle).await;
        assert!(msg.contains("request id"), "{msg}");
    }
    let msg = env.wait_sync_error("no-stock", "NoStock").await;
    assert!(
        msg.contains("choose another instanceType or zoneId"),
        "{msg}"
    );
    // No hot loop: spec errors are retried at most once per poll interval (500 ms here). The
    // bound comes from the time that really passed; a loaded machine only makes fewer calls.
    let before = env.mock().stats().calls_of("RunInstances");
    let started = std::time::Instant::now();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let during = env.mock().stats().calls_of("RunInstances") - before;
    let polls = started.elapsed().as_millis() / 500;
    let allowed = 4 * (polls as u64 + 1);
    assert!(
        during <= allowed,
        "{during} RunInstances calls in {:?} for 4 broken objects (at most {allowed})",
        started.elapsed()
    );
    // Fixing the spec creates the instance.
    env.patch_for_provider("no-stock", json!({"instanceType": TYPE}))
        .await;
    env.wait_ready("no-stock").await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quota_and_throttling() {
    let env = Env::start_with(
        test_options(),
        MockConfig::new(AK, SK).with_instance_quota(0),
    )
    .await;
    env.create(&instance("over-quota")).await;
    let msg = env.wait_sync_error("over-quota", "QuotaExceed").await;
    assert!(
        msg.contains("QuotaExceeded") && msg.contains("Quota Center"),
        "{msg}"
    );
    env.mock().set_instance_quota(None);
    env.wait_ready("over-quota").await;

    env.mock()
        .set_faults(Faults {
            throttle_rate: 1.0,
            ..Faults::default()
        })
        .expect("faults");
    env.patch_for_provider("over-quota", json!({"instanceName": "throttled"}))
        .await;
    let msg = env.wait_sync_error("over-quota", "Throttl").await;
    assert!(msg.contains("backs off"), "{msg}");
    env.mock().set_faults(Faults::default()).expect("faults");
    env.wait_for("over-quota", "synced again", |o| {
        o.and_then(|o| condition(o, "Synced"))
            .is_some_and(|c| c.status == ConditionStatus::True)
    })
    .await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletion_protection_blocks_delete_until_lifted() {
    let env = Env::start().await;
    let mut obj = instance("protected");
    obj.spec.for_provider.deletion_protection = Some(true);
    env.create(&obj).await;
    let id = external_name(&env.wait_ready("protected").await).expect("id");
    env.delete("protected").await;
    let msg = env.wait_sync_error("protected", "DeletionProtection").await;
    assert!(msg.contains("deletionProtection: false"), "{msg}");
    assert!(env.mock_instance(&id).is_some(), "not released");
    // The Warning event is recorded beside the condition, not before it: wait for it.
    ferroplane_testkit::eventually("a CannotDeleteExternalResource event")
        .within(WAIT)
        .until_async(|| async {
            let reasons = env.event_reasons("protected").await;
            if reasons.iter().any(|r| r == "CannotDeleteExternalResource") {
                Ok(())
            } else {
                Err(reasons)
            }
        })
        .await;
    env.patch_for_provider("protected", json!({"deletionProtection": false}))
        .await;
    env.wait_for("protected", "object removed", |o| o.is_none())
        .await;
    assert!(env.mock_instance(&id).is_none(), "released");
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_config_cannot_read_other_namespaces() {
    let env = Env::start().await;
    let api: kube::Api<ferroplane_apis::alibabacloud::ProviderConfig> =
        kube::Api::namespaced(env.client.clone(), NS);
    let mut config: ferroplane_apis::alibabacloud::ProviderConfig = serde_json::from_value(json!({
        "apiVersion": "alibabacloud.ferroplane.io/v1alpha1",
        "kind": "ProviderConfig",
        "metadata": {"name": "sneaky", "namespace": NS},
        "spec": {
            "credentials": {"source": "Secret", "secretRef": {"name": "admin-creds", "namespace": "kube-system"}},
            "endpoint": env.mock().endpoint(),
        }
    }))
    .expect("config");
    config.metadata.namespace = Some(NS.into());
    api.create(&Default::default(), &config)
        .await
        .expect("created");
    env.create(&using("cross-ns", "sneaky")).await;
    let msg = env
        .wait_sync_error("cross-ns", "SecretNamespaceNotAllowed")
        .await;
    assert!(
        msg.contains("may only read Secrets in its own namespace default"),
        "{msg}"
    );
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_immutable_field_that_differs_from_the_cloud_is_reported() {
    let env = Env::start().await;
    let spec = alibaba_mock::LaunchSpec {
        region_id: REGION.into(),
        image_id: IMAGE.into(),
        instance_type: TYPE.into(),
        instance_name: Some("existing".into()),
        vswitch_id: alibaba_mock::defaults::first_vswitch_id(REGION),
        security_group_ids: vec![alibaba_mock::defaults::security_group_id(REGION)],
        ..alibaba_mock::LaunchSpec::default()
    };
    let id = env
        .mock()
        .create_instances(alibaba_mock::DEFAULT_ACCOUNT_ID, &spec, 1)
        .expect("instance")
        .remove(0);
    let mut obj = instance("imported-wrong");
    obj.metadata.annotations =
        Some([("ferroplane.io/external-name".to_owned(), id.clone())].into());
    // The instance runs in the region's first zone; the spec claims another.
    obj.spec.for_provider.zone_id = Some("cn-beijing-b".into());
    env.create(&obj).await;
    let msg = env
        .wait_sync_error("imported-wrong", "ImmutableFieldChanged")
        .await;
    assert!(
        msg.contains("zoneId is") && msg.contains("create a new ECSInstance"),
        "{msg}"
    );
    // In-place changes are still applied.
    env.wait_mock(&id, "renamed", |i| {
        i.is_some_and(|i| i.instance_name == "imported-wrong")
    })
    .await;
    env.stop().await;
}
