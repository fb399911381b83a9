//! The ECSInstance field classes against the sandbox and the mock: each in-place field edited on
//! a Ready instance reaches the mock's instance and Synced is True after; a change made behind
//! ferroplane's back is reverted at the next poll with an event naming the field; an unchanged
//! instance costs no write call; immutable fields are refused at admission with their message.

use alibaba_mock::resource_groups;
use alibaba_sdk::credentials::Credentials;
use alibaba_sdk::ecs::{DescribeDisksRequest, EcsClient, MetadataOptionsChange};
use ferroplane_apis::alibabacloud::ECSInstance;
use ferroplane_apis::common::ConditionStatus;
use ferroplane_apis::common::names::SYNCED;
use ferroplane_testkit::{events, eventually};
use kube::api::{Patch, PatchParams};
use serde_json::json;

use crate::controller_support::*;

/// A signed client of the mock, to change the instance as the console would.
fn console(env: &Env) -> EcsClient {
    EcsClient::builder(REGION)
        .credentials(Credentials::new(AK, SK))
        .endpoint(env.mock().endpoint())
        .build()
        .expect("ECS client")
}

/// Synced=True with no note, and the instance observed since `generation`.
async fn wait_synced(env: &Env, name: &str) -> ECSInstance {
    env.wait_for(name, "Synced=True without a note", |o| {
        o.is_some_and(|o| {
            condition(o, SYNCED)
                .is_some_and(|c| c.status == ConditionStatus::True && c.message.is_empty())
                && o.status.as_ref().and_then(|s| s.observed_generation) == o.metadata.generation
        })
    })
    .await
    .expect("exists")
}

/// Calls that change something in the cloud.
fn write_calls(env: &Env) -> u64 {
    env.mock()
        .stats()
        .calls
        .iter()
        .filter(|(action, _)| {
            !["Describe", "List", "Get", "Query"]
                .iter()
                .any(|p| action.starts_with(p))
        })
        .map(|(_, n)| n)
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_place_fields_reach_the_instance_and_drift_is_reverted() {
    let env = Env::start().await;
    env.create(&instance("fields-1")).await;
    let ready = env.wait_ready("fields-1").await;
    let id = external_name(&ready).expect("external name");
    let at = ready.status.as_ref().expect("status").observed();
    // atProvider shows the instance as DescribeInstances does.
    assert!(at.vpc_id.is_some() && at.v_switch_id.is_some(), "{at:?}");
    assert_eq!(
        at.resource_group_id.as_deref(),
        Some(resource_groups::DEFAULT)
    );
    assert_eq!(
        at.metadata_options
            .as_ref()
            .and_then(|m| m.http_tokens.as_deref()),
        Some("optional")
    );
    assert_eq!(at.network_interfaces.len(), 1, "{at:?}");
    assert_eq!(at.security_group_ids.len(), 1);
    assert!(at.tags.contains_key(ferroplane_runtime::UID_TAG), "{at:?}");

    // Every in-place field of this slice, edited at once on the Ready instance.
    env.patch_for_provider(
        "fields-1",
        json!({
            "internetChargeType": "PayByBandwidth",
            "internetMaxBandwidthOut": 20,
            "httpTokens": "required",
            "httpPutResponseHopLimit": 3,
            "ramRoleName": "web-role",
            "resourceGroupId": resource_groups::OTHERS[0],
        }),
    )
    .await;
    env.wait_mock(&id, "network, metadata, role and group applied", |i| {
        i.is_some_and(|i| {
            i.internet_charge_type == "PayByBandwidth"
                && i.internet_max_bandwidth_out == 20
                && i.http_tokens == "required"
                && i.http_put_response_hop_limit == 3
                && i.ram_role_name.as_deref() == Some("web-role")
                && i.resource_group_id == resource_groups::OTHERS[0]
        })
    })
    .await;
    wait_synced(&env, "fields-1").await;
    env.wait_for("fields-1", "atProvider shows the new settings", |o| {
        o.and_then(|o| o.status.as_ref()).is_some_and(|s| {
            let at = s.observed();
            at.ram_role_name.as_deref() == Some("web-role")
                && at.internet_charge_type.as_deref() == Some("PayByBandwidth")
                && at.resource_group_id.as_deref() == Some(resource_groups::OTHERS[0])
                && at
                    .metadata_options
                    .as_ref()
                    .and_then(|m| m.http_tokens.as_deref())
                    == Some("required")
        })
    })
    .await;

    // Another role: the old one is detached first (an instance holds one), then the new one
    // attached; the metadata endpoint can be turned off.
    env.patch_for_provider(
        "fields-1",
        json!({"ramRoleName": "batch-role", "httpEndpoint": "disabled"}),
    )
    .await;
    env.wait_mock(&id, "role replaced, endpoint disabled", |i| {
        i.is_some_and(|i| {
            i.ram_role_name.as_deref() == Some("batch-role") && i.http_endpoint == "disabled"
        })
    })
    .await;
    wait_synced(&env, "fields-1").await;
    assert!(env.mock().stats().calls_of("DetachInstanceRamRole") >= 1);

    // Drift: the console relaxes the metadata tokens, moves the group and drops the role.
    let ecs = console(&env);
    ecs.modify_instance_metadata_options(
        &id,
        &MetadataOptionsChange {
            http_endpoint: "enabled".into(),
            http_tokens: Some("optional".into()),
            http_put_response_hop_limit: None,
        },
    )
    .await
    .expect("console changes metadata options");
    ecs.join_resource_group(&id, resource_groups::OTHERS[1])
        .await
        .expect("console moves the group");
    ecs.detach_instance_ram_role(std::slice::from_ref(&id), None)
        .await
        .expect("console detaches the role");
    env.wait_mock(&id, "drift reverted", |i| {
        i.is_some_and(|i| {
            i.http_tokens == "required"
                && i.http_endpoint == "disabled"
                && i.resource_group_id == resource_groups::OTHERS[0]
                && i.ram_role_name.as_deref() == Some("batch-role")
        })
    })
    .await;
    let notes: Vec<(String, String)> = eventually("an event naming the reverted fields")
        .within(WAIT)
        .until_async(|| async {
            let about = events::about(&env.client, NS, "fields-1").await;
            let named = ["httpTokens", "resourceGroupId", "ramRoleName"]
                .iter()
                .all(|f| about.iter().any(|(_, note)| note.contains(f)));
            if named { Ok(about) } else { Err(about) }
        })
        .await;
    assert!(
        notes
            .iter()
            .any(|(reason, note)| reason == "UpdatedExternalResource"
                && note.contains("httpTokens: \"optional\" → \"required\"")),
        "{notes:?}"
    );
    wait_synced(&env, "fields-1").await;

    // Nothing differs now: several polls later, not one more write call.
    let writes = write_calls(&env);
    let describes = env.mock().stats().calls_of("DescribeInstances");
    eventually("four more polls")
        .within(WAIT)
        .until(|| {
            let now = env.mock().stats().calls_of("DescribeInstances");
            if now >= describes + 4 {
                Ok(())
            } else {
                Err(now)
            }
        })
        .await;
    assert_eq!(
        write_calls(&env),
        writes,
        "an unchanged instance made write calls: {:?}",
        env.mock().stats().calls
    );
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn immutable_fields_are_refused_at_admission_with_what_to_do() {
    let env = Env::start().await;
    let mut obj = instance("spot-1");
    let p = &mut obj.spec.for_provider;
    p.spot_strategy = Some(ferroplane_apis::alibabacloud::SpotStrategy::SpotWithPriceLimit);
    p.spot_price_limit = Some(0.5);
    p.spot_duration = Some(1);
    p.spot_interruption_behavior =
        Some(ferroplane_apis::alibabacloud::SpotInterruptionBehavior::Stop);
    p.security_enhancement_strategy =
        Some(ferroplane_apis::alibabacloud::SecurityEnhancementStrategy::Active);
    p.system_disk = Some(ferroplane_apis::alibabacloud::SystemDisk {
        category: None,
        size: Some(40),
        performance_level: None,
    });
    env.create(&obj).await;
    let ready = env.wait_ready("spot-1").await;
    // zoneId is late-initialized from the cloud; from then on it is immutable.
    env.wait_for("spot-1", "zoneId filled in", |o| {
        o.is_some_and(|o| o.spec.for_provider.zone_id.is_some())
    })
    .await;
    let id = external_name(&ready).expect("external name");
    let at = ready.status.as_ref().expect("status").observed();
    assert_eq!(at.spot_strategy.as_deref(), Some("SpotWithPriceLimit"));
    assert_eq!(at.spot_price_limit, Some(0.5));
    assert_eq!(at.spot_interruption_behavior.as_deref(), Some("Stop"));
    assert_eq!(
        env.mock_instance(&id).expect("in the mock").spot_strategy,
        "SpotWithPriceLimit"
    );

    let cases = [
        (
            json!({"spotStrategy": "SpotAsPriceGo"}),
            "spotStrategy is immutable",
        ),
        (
            json!({"spotStrategy": null}),
            "spotStrategy cannot be removed",
        ),
        (
            json!({"spotPriceLimit": 0.9}),
            "spotPriceLimit is immutable",
        ),
        (json!({"spotDuration": 2}), "spotDuration is immutable"),
        (
            json!({"spotInterruptionBehavior": "Terminate"}),
            "spotInterruptionBehavior is immutable",
        ),
        (
            json!({"securityEnhancementStrategy": "Deactive"}),
            "securityEnhancementStrategy is immutable",
        ),
        (
            json!({"systemDisk": {"size": 30}}),
            "systemDisk.size cannot shrink",
        ),
        (json!({"zoneId": "cn-beijing-b"}), "zoneId is immutable"),
        (
            json!({"dataDisks": [{"category": "cloud_essd", "size": 40}]}),
            "dataDisks cannot be added or removed after creation",
        ),
        (
            json!({"spotDuration": null}),
            "spotDuration cannot be added or removed",
        ),
    ];
    for (patch, message) in cases {
        let body = json!({"spec": {"forProvider": patch}});
        let err = env
            .instances()
            .patch("spot-1", &PatchParams::default(), &Patch::Merge(body))
            .await
            .expect_err(&format!("{patch} is refused"));
        assert!(
            err.to_string().contains(message),
            "{patch}: {err} does not say {message:?}"
        );
    }
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn key_pair_and_system_disk_change_in_place() {
    let env = Env::start().await;
    let ecs = console(&env);
    for name in ["key-a", "key-b"] {
        ecs.create_key_pair(name, &[])
            .await
            .expect("key pair created");
    }
    let mut obj = instance("disk-1");
    obj.spec.for_provider.key_pair_name = Some("key-a".into());
    obj.spec.for_provider.system_disk = Some(ferroplane_apis::alibabacloud::SystemDisk {
        category: Some(ferroplane_apis::alibabacloud::DiskCategory::CloudEssd),
        size: Some(40),
        performance_level: Some("PL1".into()),
    });
    env.create(&obj).await;
    let ready = env.wait_ready("disk-1").await;
    let id = external_name(&ready).expect("external name");
    let ready = env
        .wait_for("disk-1", "atProvider.systemDisk reported", |o| {
            o.and_then(|o| o.status.as_ref())
                .is_some_and(|s| s.observed().system_disk.is_some())
        })
        .await
        .expect("exists");
    let at = ready.status.as_ref().expect("status").observed();
    let system = at.system_disk.as_ref().expect("system disk");
    assert_eq!(system.size, Some(40));
    assert_eq!(system.category.as_deref(), Some("cloud_essd"));
    assert_eq!(at.key_pair_name.as_deref(), Some("key-a"));
    let disk_id = system.disk_id.clone().expect("disk id");

    // Another key pair, a bigger and faster system disk, on the Running instance.
    env.patch_for_provider(
        "disk-1",
        json!({"keyPairName": "key-b", "systemDisk": {"size": 60, "performanceLevel": "PL0"}}),
    )
    .await;
    env.wait_mock(&id, "key pair replaced", |i| {
        i.is_some_and(|i| i.key_pair_name == "key-b" && i.status == "Running")
    })
    .await;
    let disk = eventually("system disk resized to 60 GiB at PL0")
        .within(WAIT)
        .until_async(|| async {
            let disks = ecs
                .describe_disks(&DescribeDisksRequest {
                    disk_ids: vec![disk_id.clone()],
                    ..DescribeDisksRequest::default()
                })
                .await
                .expect("DescribeDisks");
            match disks.first() {
                Some(d) if d.size == 60 && d.performance_level == "PL0" => Ok(d.clone()),
                other => Err(other.cloned()),
            }
        })
        .await;
    assert_eq!(disk.instance_id, id);
    wait_synced(&env, "disk-1").await;
    let notes = events::about(&env.client, NS, "disk-1").await;
    assert!(
        notes.iter().any(|(_, note)| note.contains("keyPairName")
            && note.contains("effective at the next start")),
        "{notes:?}"
    );

    // Detached behind ferroplane's back: bound again at the next poll.
    let detached = ecs
        .detach_key_pair("key-b", std::slice::from_ref(&id))
        .await
        .expect("console detaches the key pair");
    assert!(detached.failures().is_empty(), "{detached:?}");
    env.wait_mock(&id, "key pair bound again", |i| {
        i.is_some_and(|i| i.key_pair_name == "key-b")
    })
    .await;

    // Disks never shrink: refused at admission.
    let err = env
        .instances()
        .patch(
            "disk-1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"forProvider": {"systemDisk": {"size": 50}}}})),
        )
        .await
        .expect_err("a smaller system disk is refused");
    assert!(
        err.to_string().contains("systemDisk.size cannot shrink"),
        "{err}"
    );
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_renewal_of_a_subscription_changes_in_place() {
    let env = Env::start().await;
    let ecs = console(&env);
    let mut obj = instance("sub-1");
    let p = &mut obj.spec.for_provider;
    p.instance_charge_type = Some(ferroplane_apis::alibabacloud::InstanceChargeType::PrePaid);
    p.period = Some(1);
    p.auto_renew = Some(false);
    env.create(&obj).await;
    let ready = env.wait_ready("sub-1").await;
    let id = external_name(&ready).expect("external name");
    let renewal = |want_enabled: bool, want_duration: u32| {
        let ecs = ecs.clone();
        let id = id.clone();
        async move {
            let found = ecs
                .describe_instance_auto_renew_attribute(std::slice::from_ref(&id))
                .await
                .expect("DescribeInstanceAutoRenewAttribute");
            match found.first() {
                Some(r) if r.auto_renew_enabled == want_enabled && r.duration == want_duration => {
                    Ok(())
                }
                other => Err(other.cloned()),
            }
        }
    };

    env.patch_for_provider("sub-1", json!({"autoRenew": true, "autoRenewPeriod": 3}))
        .await;
    eventually("auto-renewal on, 3 months at a time")
        .within(WAIT)
        .until_async(|| renewal(true, 3))
        .await;
    wait_synced(&env, "sub-1").await;

    // Turned off in the console: on again at the next poll.
    ecs.modify_instance_auto_renew_attribute(
        &id,
        &alibaba_sdk::ecs::AutoRenewChange {
            auto_renew: false,
            duration: None,
            period_unit: None,
        },
    )
    .await
    .expect("console turns auto-renewal off");
    eventually("auto-renewal restored")
        .within(WAIT)
        .until_async(|| renewal(true, 3))
        .await;
    assert!(
        env.mock()
            .stats()
            .calls_of("ModifyInstanceAutoRenewAttribute")
            >= 3
    );
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn billing_changes_between_pay_as_you_go_and_subscription_in_place() {
    let env = Env::start().await;
    env.create(&instance("bill-1")).await;
    env.wait_ready("bill-1").await;
    let charge = |want: &'static str, expiry: bool| {
        move |o: Option<&ECSInstance>| {
            o.and_then(|o| o.status.as_ref()).is_some_and(|s| {
                let at = s.observed();
                at.instance_charge_type.as_deref() == Some(want)
                    && at.expired_time.is_some() == expiry
            })
        }
    };
    env.wait_for("bill-1", "PostPaid", charge("PostPaid", false))
        .await;

    // Pay-as-you-go → subscription for one month.
    env.patch_for_provider(
        "bill-1",
        json!({"instanceChargeType": "PrePaid", "period": 1}),
    )
    .await;
    env.wait_for("bill-1", "PrePaid with an expiry", charge("PrePaid", true))
        .await;
    wait_synced(&env, "bill-1").await;

    // And back, removing the subscription fields.
    env.patch_for_provider(
        "bill-1",
        json!({"instanceChargeType": "PostPaid", "period": null}),
    )
    .await;
    env.wait_for("bill-1", "PostPaid again", charge("PostPaid", false))
        .await;
    wait_synced(&env, "bill-1").await;
    assert_eq!(env.mock().stats().calls_of("ModifyInstanceChargeType"), 2);
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_image_replaces_the_system_disk_only_with_allow_restart() {
    let env = Env::start().await;
    env.create(&instance("img-1")).await;
    let ready = env.wait_ready("img-1").await;
    let id = external_name(&ready).expect("external name");
    let other = "ubuntu_20_04_x64_20G_alibase_20240130.vhd";

    // Without allowRestart: the change waits and Synced says why.
    env.patch_for_provider("img-1", json!({"imageId": other}))
        .await;
    let message = env
        .wait_for("img-1", "RestartPending naming imageId", |o| {
            o.and_then(|o| condition(o, SYNCED)).is_some_and(|c| {
                c.message.contains("RestartPending") && c.message.contains("imageId")
            })
        })
        .await
        .and_then(|o| condition(&o, SYNCED).map(|c| c.message.clone()))
        .expect("synced condition");
    assert!(message.contains("allowRestart"), "{message}");
    assert_eq!(env.mock().stats().calls_of("ReplaceSystemDisk"), 0);
    assert_eq!(env.mock_instance(&id).expect("instance").image_id, IMAGE);

    // With it: stop, replace the system disk, start.
    env.patch_for_provider("img-1", json!({"allowRestart": true}))
        .await;
    env.wait_mock(&id, "new image, running again", |i| {
        i.is_some_and(|i| i.image_id == other && i.status == "Running")
    })
    .await;
    wait_synced(&env, "img-1").await;
    assert_eq!(env.mock().stats().calls_of("ReplaceSystemDisk"), 1);
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credit_mode_of_a_burstable_instance_changes_in_place() {
    let env = Env::start().await;
    let mut obj = instance("burst-1");
    obj.spec.for_provider.instance_type = "ecs.t6-c1m1.large".into();
    obj.spec.for_provider.credit_specification =
        Some(ferroplane_apis::alibabacloud::CreditSpecification::Unlimited);
    env.create(&obj).await;
    let ready = env.wait_ready("burst-1").await;
    let id = external_name(&ready).expect("external name");
    // Asked for at RunInstances, not changed afterwards.
    assert_eq!(
        env.mock_instance(&id)
            .expect("in the mock")
            .credit_specification
            .as_deref(),
        Some("Unlimited")
    );
    wait_synced(&env, "burst-1").await;
    assert_eq!(env.mock().stats().calls_of("ModifyInstanceAttribute"), 0);

    env.patch_for_provider("burst-1", json!({"creditSpecification": "Standard"}))
        .await;
    env.wait_mock(&id, "Standard mode", |i| {
        i.is_some_and(|i| i.credit_specification.as_deref() == Some("Standard"))
    })
    .await;
    wait_synced(&env, "burst-1").await;
    env.wait_for("burst-1", "atProvider shows Standard", |o| {
        o.and_then(|o| o.status.as_ref())
            .is_some_and(|s| s.observed().credit_specification.as_deref() == Some("Standard"))
    })
    .await;

    // Drift: the console switches back to Unlimited; the next poll reverts it.
    let console_change = alibaba_sdk::ecs::ModifyInstanceAttributeRequest {
        instance_id: id.clone(),
        credit_specification: Some("Unlimited".into()),
        ..Default::default()
    };
    console(&env)
        .modify_instance_attribute(&console_change)
        .await
        .expect("console changes the mode");
    env.wait_mock(&id, "drift reverted to Standard", |i| {
        i.is_some_and(|i| i.credit_specification.as_deref() == Some("Standard"))
    })
    .await;
    eventually("an event naming creditSpecification")
        .within(WAIT)
        .until_async(|| async {
            let about = events::about(&env.client, NS, "burst-1").await;
            if about
                .iter()
                .any(|(_, note)| note.contains("creditSpecification: \"Unlimited\" → \"Standard\""))
            {
                Ok(())
            } else {
                Err(about)
            }
        })
        .await;
    wait_synced(&env, "burst-1").await;

    // A type that is not burstable has no credit mode: refused at admission.
    let err = env
        .instances()
        .patch(
            "burst-1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"forProvider": {"instanceType": "ecs.g6.large"}}})),
        )
        .await
        .expect_err("a non-burstable type with creditSpecification is refused");
    assert!(
        err.to_string()
            .contains("creditSpecification applies only to burstable instance types"),
        "{err}"
    );
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_ip_and_vswitch_change_through_a_restart() {
    let env = Env::start().await;
    // The first default vSwitch of the region is 172.16.0.0/20.
    let mut obj = instance("net-1");
    obj.spec.for_provider.private_ip_address = Some("172.16.5.5".into());
    env.create(&obj).await;
    let ready = env.wait_ready("net-1").await;
    let id = external_name(&ready).expect("external name");
    let first_vswitch = alibaba_mock::defaults::first_vswitch_id(REGION).expect("region");
    let created = env.mock_instance(&id).expect("in the mock");
    assert_eq!(created.private_ip_address, "172.16.5.5");
    let zone = created.zone_id.clone();

    // Another vSwitch of the same VPC and zone, made as the console would.
    let ecs = console(&env);
    let vpc = alibaba_sdk::vpc::VpcClient::with_settings_of(
        &ecs,
        alibaba_sdk::endpoint::parse_endpoint(&env.mock().endpoint()).expect("url"),
    )
    .expect("VPC client");
    let target = vpc
        .create_vswitch(&alibaba_sdk::vpc::CreateVSwitchRequest {
            vpc_id: alibaba_mock::defaults::vpc_id(REGION),
            zone_id: zone,
            cidr_block: "172.31.2.0/24".into(),
            vswitch_name: Some("moved-to".into()),
            description: None,
            tags: Vec::new(),
            client_token: None,
            ipv6_cidr_block: None,
        })
        .await
        .expect("vSwitch created")
        .vswitch_id;

    // Without allowRestart the move waits, and Synced says so.
    env.patch_for_provider(
        "net-1",
        json!({"vSwitchId": target, "privateIpAddress": "172.31.2.30"}),
    )
    .await;
    let message = env
        .wait_for("net-1", "RestartPending naming vSwitchId", |o| {
            o.and_then(|o| condition(o, SYNCED)).is_some_and(|c| {
                c.message.contains("RestartPending") && c.message.contains("vSwitchId")
            })
        })
        .await
        .and_then(|o| condition(&o, SYNCED).map(|c| c.message.clone()))
        .expect("synced condition");
    assert!(message.contains("allowRestart"), "{message}");
    assert_eq!(env.mock().stats().calls_of("ModifyInstanceVpcAttribute"), 0);
    assert_eq!(
        env.mock_instance(&id).expect("instance").vswitch_id,
        first_vswitch
    );

    // With it: stop, move, start.
    env.patch_for_provider("net-1", json!({"allowRestart": true}))
        .await;
    env.wait_mock(&id, "moved and running again", |i| {
        i.is_some_and(|i| {
            i.vswitch_id == target && i.private_ip_address == "172.31.2.30" && i.status == "Running"
        })
    })
    .await;
    wait_synced(&env, "net-1").await;
    assert_eq!(env.mock().stats().calls_of("ModifyInstanceVpcAttribute"), 1);

    // Another address in the same vSwitch, the same way.
    env.patch_for_provider("net-1", json!({"privateIpAddress": "172.31.2.31"}))
        .await;
    env.wait_mock(&id, "readdressed and running again", |i| {
        i.is_some_and(|i| i.private_ip_address == "172.31.2.31" && i.status == "Running")
    })
    .await;
    wait_synced(&env, "net-1").await;
    env.wait_for("net-1", "atProvider shows the new address", |o| {
        o.and_then(|o| o.status.as_ref()).is_some_and(|s| {
            let at = s.observed();
            at.private_ip_address.as_deref() == Some("172.31.2.31")
                && at.v_switch_id.as_deref() == Some(target.as_str())
        })
    })
    .await;
    assert_eq!(env.mock().stats().calls_of("ModifyInstanceVpcAttribute"), 2);
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ipv6_address_count_changes_in_place_on_a_vswitch_with_ipv6() {
    let env = Env::start().await;
    let ecs = console(&env);
    let vpc = alibaba_sdk::vpc::VpcClient::with_settings_of(
        &ecs,
        alibaba_sdk::endpoint::parse_endpoint(&env.mock().endpoint()).expect("url"),
    )
    .expect("VPC client");
    // An IPv6 network made as the console would: VPC, vSwitch with a /64, security group.
    let first = alibaba_mock::defaults::first_vswitch_id(REGION).expect("region");
    let zone = vpc
        .describe_vswitches(Some(&first), None, &[])
        .await
        .expect("default vSwitch")[0]
        .zone_id
        .clone();
    let vpc_id = vpc
        .create_vpc(&alibaba_sdk::vpc::CreateVpcRequest {
            cidr_block: Some("10.0.0.0/16".into()),
            enable_ipv6: true,
            ..Default::default()
        })
        .await
        .expect("IPv6 VPC")
        .vpc_id;
    let ids = [vpc_id.clone()];
    eventually("the new VPC Available")
        .within(WAIT)
        .until_async(|| async {
            let found = vpc.describe_vpcs(&ids, &[]).await.expect("described");
            match found.first().map(|v| v.status.as_str()) {
                Some("Available") => Ok(()),
                other => Err(other.map(str::to_owned)),
            }
        })
        .await;
    let vswitch = vpc
        .create_vswitch(&alibaba_sdk::vpc::CreateVSwitchRequest {
            vpc_id: vpc_id.clone(),
            zone_id: zone,
            cidr_block: "10.0.1.0/24".into(),
            ipv6_cidr_block: Some(1),
            ..Default::default()
        })
        .await
        .expect("IPv6 vSwitch")
        .vswitch_id;
    let group = ecs
        .create_security_group(&alibaba_sdk::ecs::CreateSecurityGroupRequest {
            vpc_id: Some(vpc_id),
            ..Default::default()
        })
        .await
        .expect("security group")
        .security_group_id;

    let mut obj = instance("v6-1");
    obj.spec.for_provider.v_switch_id = Some(vswitch);
    obj.spec.for_provider.security_group_ids = Some(vec![group]);
    obj.spec.for_provider.ipv6_address_count = Some(2);
    env.create(&obj).await;
    let ready = env.wait_ready("v6-1").await;
    let id = external_name(&ready).expect("external name");
    env.wait_mock(&id, "two IPv6 addresses", |i| {
        i.is_some_and(|i| i.ipv6_addresses.len() == 2)
    })
    .await;
    wait_synced(&env, "v6-1").await;
    // RunInstances asked for them (Ipv6AddressCount): no AssignIpv6Addresses after creation.
    assert_eq!(env.mock().stats().calls_of("AssignIpv6Addresses"), 0);
    env.wait_for("v6-1", "atProvider lists two IPv6 addresses", |o| {
        o.and_then(|o| o.status.as_ref())
            .is_some_and(|s| s.observed().ipv6_addresses.len() == 2)
    })
    .await;

    // Fewer: the newest is released.
    let before = env.mock_instance(&id).expect("instance").ipv6_addresses;
    env.patch_for_provider("v6-1", json!({"ipv6AddressCount": 1}))
        .await;
    env.wait_mock(&id, "one IPv6 address, the first", |i| {
        i.is_some_and(|i| i.ipv6_addresses == before[..1])
    })
    .await;
    wait_synced(&env, "v6-1").await;

    // Drift: the console adds one; the next poll releases it again.
    let eni = format!("eni-{}", id.trim_start_matches("i-"));
    ecs.assign_ipv6_addresses(&eni, 1)
        .await
        .expect("console assigns one more");
    env.wait_mock(&id, "drift reverted to one address", |i| {
        i.is_some_and(|i| i.ipv6_addresses == before[..1])
    })
    .await;
    wait_synced(&env, "v6-1").await;
    assert_eq!(env.mock().stats().calls_of("UnassignIpv6Addresses"), 2);

    // Nothing differs now (IPv6 addresses counted, not compared by value): several polls
    // later, not one more write call.
    let writes = write_calls(&env);
    let describes = env.mock().stats().calls_of("DescribeInstances");
    eventually("four more polls")
        .within(WAIT)
        .until(|| {
            let now = env.mock().stats().calls_of("DescribeInstances");
            if now >= describes + 4 {
                Ok(())
            } else {
                Err(now)
            }
        })
        .await;
    assert_eq!(
        write_calls(&env),
        writes,
        "an unchanged instance with IPv6 made write calls: {:?}",
        env.mock().stats().calls
    );

    // On a vSwitch without IPv6, ECS refuses the launch and Synced says why.
    let mut plain = instance("v6-2");
    plain.spec.for_provider.ipv6_address_count = Some(1);
    env.create(&plain).await;
    env.wait_for("v6-2", "Synced=False naming Ipv6NotTurnOn", |o| {
        o.and_then(|o| condition(o, SYNCED)).is_some_and(|c| {
            c.status == ConditionStatus::False && c.message.contains("Ipv6NotTurnOn")
        })
    })
    .await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deployment_set_changes_in_place_and_drift_is_reverted() {
    let env = Env::start().await;
    let first = alibaba_mock::defaults::deployment_set_id(REGION, 0);
    let second = alibaba_mock::defaults::deployment_set_id(REGION, 1);
    let mut obj = instance("dps-1");
    obj.spec.for_provider.deployment_set_id = Some(first.clone());
    env.create(&obj).await;
    let ready = env.wait_ready("dps-1").await;
    let id = external_name(&ready).expect("external name");
    // Named at RunInstances: no change call.
    assert_eq!(
        env.mock_instance(&id).expect("instance").deployment_set_id,
        Some(first.clone())
    );
    wait_synced(&env, "dps-1").await;
    assert_eq!(env.mock().stats().calls_of("ModifyInstanceDeployment"), 0);

    env.patch_for_provider("dps-1", json!({"deploymentSetId": second}))
        .await;
    env.wait_mock(&id, "in the second set", |i| {
        i.is_some_and(|i| i.deployment_set_id.as_deref() == Some(second.as_str()))
    })
    .await;
    wait_synced(&env, "dps-1").await;

    // Drift: the console moves it back; the next poll returns it to the spec's set.
    console(&env)
        .modify_instance_deployment(&id, &first)
        .await
        .expect("console moves it");
    env.wait_mock(&id, "drift reverted", |i| {
        i.is_some_and(|i| i.deployment_set_id.as_deref() == Some(second.as_str()))
    })
    .await;
    wait_synced(&env, "dps-1").await;
    assert_eq!(env.mock().stats().calls_of("ModifyInstanceDeployment"), 3);
    env.stop().await;
}
