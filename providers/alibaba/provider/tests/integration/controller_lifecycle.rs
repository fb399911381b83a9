//! The main path against the sandbox and the ECS mock: create → Ready with ID and IPs, edit in
//! place, stop, instance type change with and without `allowRestart`, delete; plus Orphan,
//! import by external name (Observe only) and adoption by the UID tag.

use crate::controller_support::*;
use alibaba_mock::{DEFAULT_ACCOUNT_ID, LaunchSpec};
use ferroplane_apis::common::{
    ConditionStatus, DeletionPolicy, LocalSecretReference, ManagementAction,
};
use ferroplane_runtime::UID_TAG;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::{Patch, PatchParams};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_edit_stop_resize_and_delete() {
    let env = Env::start().await;
    let mut obj = instance("web-1");
    obj.spec.write_connection_secret_to_ref = Some(LocalSecretReference {
        name: "web-1-conn".into(),
    });
    obj.spec.for_provider.tags = Some([("team".to_owned(), "platform".to_owned())].into());
    obj.spec.for_provider.user_data = Some("#cloud-config\n".into());
    let created = env.create(&obj).await;
    let uid = created.metadata.uid.clone().expect("uid");

    // Create → Ready, with instance ID and IPs in status and the connection Secret.
    let ready = env.wait_ready("web-1").await;
    let id = external_name(&ready).expect("external name recorded");
    let at = ready.status.as_ref().expect("status").observed();
    assert_eq!(at.instance_id.as_deref(), Some(id.as_str()));
    assert_eq!(at.status.as_deref(), Some("Running"));
    assert!(at.public_ip_address.is_some(), "{at:?}");
    assert!(at.private_ip_address.is_some(), "{at:?}");
    assert_eq!(at.cpu, Some(2));
    let in_mock = env.mock_instance(&id).expect("instance in the mock");
    assert_eq!(in_mock.tags.get(UID_TAG), Some(&uid));
    assert_eq!(
        in_mock.tags.get("team").map(String::as_str),
        Some("platform")
    );
    assert_eq!(
        in_mock
            .client_token
            .as_deref()
            .map(|t| t.starts_with("fp-")),
        Some(true)
    );
    assert_eq!(env.mock().stats().calls_of("RunInstances"), 1);
    let secrets: Api<Secret> = Api::namespaced(env.client.clone(), NS);
    let conn = secrets.get("web-1-conn").await.expect("connection secret");
    let data = conn.data.expect("data");
    assert_eq!(
        data.get("instanceId").map(|b| b.0.clone()),
        Some(id.clone().into_bytes())
    );
    assert!(data.contains_key("publicIpAddress") && data.contains_key("privateIpAddress"));
    // Late-initialized from the cloud.
    assert!(
        ready.spec.for_provider.zone_id.is_some(),
        "{:?}",
        ready.spec.for_provider
    );

    // Edit name and tags → changed in the mock, the UID tag untouched.
    env.patch_for_provider(
        "web-1",
        json!({"instanceName": "web-one", "tags": {"team": "infra", "env": "dev"}}),
    )
    .await;
    env.wait_mock(&id, "renamed and retagged", |i| {
        i.is_some_and(|i| {
            i.instance_name == "web-one"
                && i.tags.get("team").map(String::as_str) == Some("infra")
                && i.tags.get("env").map(String::as_str) == Some("dev")
                && i.tags.get(UID_TAG) == Some(&uid)
        })
    })
    .await;

    // desiredStatus Stopped → stopped, and Ready again (it is what was asked for).
    env.patch_for_provider("web-1", json!({"desiredStatus": "Stopped"}))
        .await;
    env.wait_mock(&id, "stopped", |i| i.is_some_and(|i| i.status == "Stopped"))
        .await;
    env.wait_for("web-1", "status Stopped and Ready", |o| {
        o.is_some_and(|o| {
            o.status
                .as_ref()
                .and_then(|s| s.at_provider.as_ref()?.status.as_deref())
                == Some("Stopped")
                && condition(o, "Ready").is_some_and(|c| c.status == ConditionStatus::True)
        })
    })
    .await;
    env.patch_for_provider("web-1", json!({"desiredStatus": "Running"}))
        .await;
    env.wait_mock(&id, "running again", |i| {
        i.is_some_and(|i| i.status == "Running")
    })
    .await;

    // Instance type without allowRestart: waits, says why, Synced stays True.
    env.patch_for_provider("web-1", json!({"instanceType": "ecs.g6.xlarge"}))
        .await;
    let waiting = env
        .wait_for("web-1", "RestartPending note", |o| {
            o.and_then(|o| condition(o, "Synced")).is_some_and(|c| {
                c.status == ConditionStatus::True && c.message.contains("RestartPending")
            })
        })
        .await
        .expect("exists");
    let note = &condition(&waiting, "Synced").expect("synced").message;
    assert!(
        note.contains("instanceType") && note.contains("allowRestart"),
        "{note}"
    );
    env.observed_again(2).await;
    let unchanged = env.mock_instance(&id).expect("instance");
    assert_eq!(unchanged.instance_type, TYPE);
    assert_eq!(unchanged.status, "Running");

    // With allowRestart: one stop → modify → start cycle, type and user data applied.
    env.patch_for_provider(
        "web-1",
        json!({"allowRestart": true, "userData": "#cloud-config\nruncmd: [echo hi]\n"}),
    )
    .await;
    env.wait_mock(&id, "resized and running", |i| {
        i.is_some_and(|i| i.instance_type == "ecs.g6.xlarge" && i.status == "Running")
    })
    .await;
    let stats = env.mock().stats();
    assert_eq!(
        stats.calls_of("StopInstance"),
        2,
        "one for desiredStatus, one for the resize"
    );
    assert_eq!(stats.calls_of("StartInstance"), 2);
    env.wait_for("web-1", "Synced without a pending note", |o| {
        o.and_then(|o| condition(o, "Synced")).is_some_and(|c| {
            c.status == ConditionStatus::True && !c.message.contains("RestartPending")
        })
    })
    .await;

    // Delete → released in the mock, then the object goes.
    env.delete("web-1").await;
    env.wait_for("web-1", "object removed", |o| o.is_none())
        .await;
    assert!(env.mock_instance(&id).is_none(), "instance released");
    assert!(env.mock().stats().calls_of("DeleteInstance") >= 1);
    assert_eq!(
        env.mock().stats().calls_of("RunInstances"),
        1,
        "never a second create"
    );
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn orphan_keeps_the_instance() {
    let env = Env::start().await;
    let mut obj = instance("keep-me");
    obj.spec.deletion_policy = DeletionPolicy::Orphan;
    env.create(&obj).await;
    let id = external_name(&env.wait_ready("keep-me").await).expect("id");
    env.delete("keep-me").await;
    env.wait_for("keep-me", "object removed", |o| o.is_none())
        .await;
    let kept = env.mock_instance(&id).expect("instance kept");
    assert_eq!(kept.status, "Running");
    assert_eq!(env.mock().stats().calls_of("DeleteInstance"), 0);
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_by_external_name_observe_only() {
    let env = Env::start().await;
    let spec = LaunchSpec {
        region_id: REGION.into(),
        image_id: IMAGE.into(),
        instance_type: TYPE.into(),
        instance_name: Some("legacy".into()),
        internet_max_bandwidth_out: 1,
        vswitch_id: alibaba_mock::defaults::first_vswitch_id(REGION),
        security_group_ids: vec![alibaba_mock::defaults::security_group_id(REGION)],
        ..LaunchSpec::default()
    };
    let id = env
        .mock()
        .create_instances(DEFAULT_ACCOUNT_ID, &spec, 1)
        .expect("instance made outside ferroplane")
        .remove(0);
    let mut obj = instance("imported");
    obj.metadata.annotations =
        Some([("ferroplane.io/external-name".to_owned(), id.clone())].into());
    obj.spec.management_policies = vec![ManagementAction::Observe];
    obj.spec.for_provider.instance_name = Some("renamed-by-spec".into());
    env.create(&obj).await;
    let ready = env.wait_ready("imported").await;
    assert_eq!(
        ready
            .status
            .as_ref()
            .and_then(|s| s.at_provider.as_ref()?.instance_id.clone()),
        Some(id.clone())
    );
    // Observe only: the name in the spec is not pushed to the cloud.
    env.observed_again(2).await;
    assert_eq!(
        env.mock_instance(&id).expect("instance").instance_name,
        "legacy"
    );
    let synced = env.get("imported").await.expect("exists");
    let message = &condition(&synced, "Synced").expect("synced").message;
    assert!(message.contains("do not allow Update"), "{message}");
    env.delete("imported").await;
    env.wait_for("imported", "object removed", |o| o.is_none())
        .await;
    assert!(
        env.mock_instance(&id).is_some(),
        "Observe-only never deletes"
    );
    assert_eq!(env.mock().stats().calls_of("RunInstances"), 0);
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_external_name_is_adopted_by_the_uid_tag() {
    let env = Env::start().await;
    env.create(&instance("adopt")).await;
    let id = external_name(&env.wait_ready("adopt").await).expect("id");
    // Lose the annotation, as if the write after create had never landed.
    env.instances()
        .patch(
            "adopt",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"metadata": {"annotations": {"ferroplane.io/external-name": null}}}),
            ),
        )
        .await
        .expect("annotation removed");
    env.wait_for("adopt", "external name found again", |o| {
        o.and_then(external_name).as_deref() == Some(id.as_str())
    })
    .await;
    assert_eq!(env.mock().stats().calls_of("RunInstances"), 1);
    assert_eq!(env.mock().instances().len(), 1);
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn password_from_a_secret_and_its_change_waits_for_a_restart() {
    let env = Env::start().await;
    let mut obj = instance("with-pass");
    obj.spec.for_provider.password_secret_ref =
        Some(ferroplane_apis::common::LocalSecretKeySelector {
            name: "with-pass-login".into(),
            key: "password".into(),
        });
    env.create(&obj).await;
    let msg = env
        .wait_sync_error("with-pass", "PasswordSecretNotFound")
        .await;
    assert!(msg.contains("default/with-pass-login"), "{msg}");
    env.put_secret("with-pass-login", &[("password", "Passw0rd!first")])
        .await;
    let id = external_name(&env.wait_ready("with-pass").await).expect("id");

    // A new password needs a restart: reported, not applied.
    env.put_secret("with-pass-login", &[("password", "Passw0rd!second")])
        .await;
    let waiting = env
        .wait_for("with-pass", "RestartPending for the password", |o| {
            o.and_then(|o| condition(o, "Synced")).is_some_and(|c| {
                c.message.contains("RestartPending") && c.message.contains("password")
            })
        })
        .await
        .expect("exists");
    let message = &condition(&waiting, "Synced").expect("synced").message;
    assert!(!message.contains("Passw0rd"), "{message}");
    assert_eq!(env.mock().stats().calls_of("StopInstance"), 0);

    // Allowed: stop, set the password, start.
    env.patch_for_provider("with-pass", json!({"allowRestart": true}))
        .await;
    env.wait_for("with-pass", "password applied", |o| {
        o.and_then(|o| condition(o, "Synced")).is_some_and(|c| {
            c.status == ConditionStatus::True && !c.message.contains("RestartPending")
        })
    })
    .await;
    env.wait_mock(&id, "running again", |i| {
        i.is_some_and(|i| i.status == "Running")
    })
    .await;
    assert_eq!(env.mock().stats().calls_of("StopInstance"), 1);
    assert!(env.mock().stats().calls_of("ModifyInstanceAttribute") >= 1);
    env.stop().await;
}

/// kube-runtime's graceful shutdown waits for a first list that its own shutdown cancelled: a
/// process told to stop right after starting hung until killed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controllers_told_to_stop_before_their_first_list_stop_at_once() {
    let env = Env::start().await;
    // Env::stop fails the test when the controllers take longer than 10 s.
    env.stop().await;
}
