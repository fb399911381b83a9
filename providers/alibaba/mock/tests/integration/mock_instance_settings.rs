//! The instance settings changed in place, through alibaba-sdk against the mock, with ECS's rules:
//! network billing, metadata options, RAM role, resource group, billing method, auto-renewal and
//! ReplaceSystemDisk, the CPU credit mode of burstable types, each accepted when ECS accepts it and refused with ECS's code otherwise.

use std::time::Duration;

use alibaba_mock::{MockConfig, MockServer, resource_groups};
use alibaba_sdk::credentials::Credentials;
use alibaba_sdk::ecs::{
    AutoRenewChange, EcsClient, MetadataOptionsChange, ModifyInstanceAttributeRequest,
    NetworkSpecChange, RunInstancesRequest,
};

const AK: &str = "settings-ak";
const SK: &str = "settings-secret";
const REGION: &str = "cn-hangzhou";
const IMAGE: &str = "centos_7_8_x64_20G_alibase_20200519.vhd";

async fn setup() -> (MockServer, EcsClient) {
    let mock = MockServer::start(MockConfig::new(AK, SK).with_transition_delay(Duration::ZERO))
        .await
        .expect("mock starts");
    let client = EcsClient::builder(REGION)
        .endpoint(mock.endpoint())
        .credentials(Credentials::new(AK, SK))
        .build()
        .expect("client");
    (mock, client)
}

fn request(name: &str) -> RunInstancesRequest {
    RunInstancesRequest {
        image_id: IMAGE.into(),
        instance_type: "ecs.g6.large".into(),
        instance_name: Some(name.into()),
        vswitch_id: alibaba_mock::defaults::first_vswitch_id(REGION),
        security_group_ids: vec![alibaba_mock::defaults::security_group_id(REGION)],
        ..RunInstancesRequest::default()
    }
}

async fn launch(client: &EcsClient, request: &RunInstancesRequest) -> String {
    client
        .run_instances(request)
        .await
        .expect("launched")
        .instance_ids()[0]
        .clone()
}

fn code(e: &alibaba_sdk::Error) -> &str {
    e.code().unwrap_or_default()
}

#[tokio::test]
async fn launch_settings_are_reported_and_changed_in_place() {
    let (mock, client) = setup().await;
    let mut r = request("settings-1");
    r.http_tokens = Some("required".into());
    r.http_put_response_hop_limit = Some(2);
    r.ram_role_name = Some("app-role".into());
    r.resource_group_id = Some(resource_groups::OTHERS[0].into());
    let id = launch(&client, &r).await;
    let i = client
        .describe_instance_attribute(&id)
        .await
        .expect("described");
    assert_eq!(i.metadata_options.http_tokens, "required");
    assert_eq!(i.metadata_options.http_put_response_hop_limit, 2);
    assert_eq!(i.resource_group_id, resource_groups::OTHERS[0]);
    assert_eq!(i.network_interfaces.items.len(), 1);
    let roles = client
        .describe_instance_ram_roles(std::slice::from_ref(&id))
        .await
        .expect("roles");
    assert_eq!(roles[0].ram_role_name, "app-role");

    // An instance holds one role: attaching another fails for it until the first is detached.
    let err = client
        .attach_instance_ram_role(std::slice::from_ref(&id), "other-role")
        .await
        .expect_err("a second role is refused");
    assert_eq!(code(&err), "InvalidRamRole.Attached");
    client
        .detach_instance_ram_role(std::slice::from_ref(&id), Some("app-role"))
        .await
        .expect("detached");
    client
        .attach_instance_ram_role(std::slice::from_ref(&id), "other-role")
        .await
        .expect("attached");

    // Metadata options: values outside ECS's lists are refused.
    let bad = MetadataOptionsChange {
        http_endpoint: "enabled".into(),
        http_tokens: Some("always".into()),
        http_put_response_hop_limit: None,
    };
    let err = client
        .modify_instance_metadata_options(&id, &bad)
        .await
        .expect_err("unknown HttpTokens");
    assert_eq!(code(&err), "InvalidHttpTokens.NotSupported");

    // Network billing: switched, and unchanged billing is refused.
    let to_bandwidth = NetworkSpecChange {
        internet_max_bandwidth_out: Some(10),
        network_charge_type: Some("PayByBandwidth".into()),
        allocate_public_ip: true,
    };
    client
        .modify_instance_network_spec(&id, &to_bandwidth)
        .await
        .expect("network spec changed");
    let i = client
        .describe_instance_attribute(&id)
        .await
        .expect("described");
    assert_eq!(i.internet_charge_type, "PayByBandwidth");
    assert_eq!(i.internet_max_bandwidth_out, 10);
    assert!(
        i.public_ip().is_some(),
        "AllocatePublicIp gives a public IP"
    );

    // Resource groups of the account only.
    let err = client
        .join_resource_group(&id, "rg-notmine")
        .await
        .expect_err("unknown group");
    assert_eq!(code(&err), "InvalidResourceGroup.NotFound");

    // Auto-renewal is for subscriptions only.
    let err = client
        .modify_instance_auto_renew_attribute(
            &id,
            &AutoRenewChange {
                auto_renew: true,
                duration: Some(1),
                period_unit: None,
            },
        )
        .await
        .expect_err("pay-as-you-go instances do not renew");
    assert_eq!(code(&err), "ChargeTypeViolation");

    // To a subscription and back; the renewal settings exist while it is one.
    client
        .modify_instance_charge_type(&id, "PrePaid", Some(1), None)
        .await
        .expect("now a subscription");
    client
        .modify_instance_auto_renew_attribute(
            &id,
            &AutoRenewChange {
                auto_renew: true,
                duration: Some(6),
                period_unit: Some("Month".into()),
            },
        )
        .await
        .expect("auto-renewal on");
    let renewal = client
        .describe_instance_auto_renew_attribute(std::slice::from_ref(&id))
        .await
        .expect("renewal");
    assert!(renewal[0].auto_renew_enabled && renewal[0].duration == 6);
    let err = client
        .modify_instance_auto_renew_attribute(
            &id,
            &AutoRenewChange {
                auto_renew: true,
                duration: Some(5),
                period_unit: Some("Month".into()),
            },
        )
        .await
        .expect_err("5 months is not a renewal length");
    assert_eq!(code(&err), "InvalidParameter.Duration");
    client
        .modify_instance_charge_type(&id, "PostPaid", None, None)
        .await
        .expect("pay-as-you-go again");
    assert!(
        client
            .describe_instance_auto_renew_attribute(std::slice::from_ref(&id))
            .await
            .expect("renewal")
            .is_empty()
    );
    mock.shutdown().await;
}

#[tokio::test]
async fn spot_instances_stay_spot_and_system_disks_are_replaced_only_when_stopped() {
    let (mock, client) = setup().await;
    let mut r = request("spot-1");
    r.spot_strategy = Some("SpotWithPriceLimit".into());
    r.spot_price_limit = Some(0.25);
    r.spot_interruption_behavior = Some("Stop".into());
    let id = launch(&client, &r).await;
    let i = client
        .describe_instance_attribute(&id)
        .await
        .expect("described");
    assert_eq!(i.spot_price_limit, 0.25);
    assert_eq!(i.spot_interruption_behavior, "Stop");
    let err = client
        .modify_instance_charge_type(&id, "PrePaid", Some(1), None)
        .await
        .expect_err("a spot instance cannot be a subscription");
    assert_eq!(code(&err), "InvalidSpotPrepaid");

    // A price limit without SpotWithPriceLimit is refused at launch.
    let mut bad = request("spot-2");
    bad.spot_price_limit = Some(0.25);
    let err = client.run_instances(&bad).await.expect_err("refused");
    assert_eq!(code(&err), "InvalidSpotPriceLimit.LowerThanPublicPrice");

    let other = "centos_7_9_x64_20G_alibase_20240628.vhd";
    let err = client
        .replace_system_disk(&id, other, None, None, None)
        .await
        .expect_err("a Running instance keeps its disk");
    assert_eq!(code(&err), "IncorrectInstanceStatus");
    client
        .stop_instance(&id, false, None)
        .await
        .expect("stopped");
    let system_disks = || async {
        client
            .describe_disks(&alibaba_sdk::ecs::DescribeDisksRequest {
                instance_id: Some(id.clone()),
                disk_type: Some("system".into()),
                ..Default::default()
            })
            .await
            .expect("disks described")
    };
    let before = system_disks().await;
    assert_eq!(before.len(), 1, "{before:?}");
    let err = client
        .replace_system_disk(&id, other, Some(before[0].size - 1), None, None)
        .await
        .expect_err("a system disk never shrinks");
    assert_eq!(code(&err), "InvalidSystemDiskSize.ValueNotSupported");
    let new_disk = client
        .replace_system_disk(&id, other, Some(before[0].size + 10), None, None)
        .await
        .expect("replaced")
        .disk_id;
    // ECS releases the old system disk: the instance has one system disk, the new one.
    let after = system_disks().await;
    assert_eq!(after.len(), 1, "{after:?}");
    assert_eq!(after[0].disk_id, new_disk);
    assert_ne!(new_disk, before[0].disk_id);
    assert_eq!(after[0].image_id, other);
    assert_eq!(after[0].size, before[0].size + 10);
    assert_eq!(after[0].category, before[0].category);
    let old = client
        .describe_disks(&alibaba_sdk::ecs::DescribeDisksRequest {
            disk_ids: vec![before[0].disk_id.clone()],
            ..Default::default()
        })
        .await
        .expect("described");
    assert!(old.is_empty(), "the old system disk is released: {old:?}");
    let i = client
        .describe_instance_attribute(&id)
        .await
        .expect("described");
    assert_eq!(i.image_id, other);
    let err = client
        .replace_system_disk(&id, "no_such_image.vhd", None, None, None)
        .await
        .expect_err("unknown image");
    assert_eq!(code(&err), "InvalidImageId.NotFound");
    mock.shutdown().await;
}

fn credit_change(id: &str, mode: &str) -> ModifyInstanceAttributeRequest {
    ModifyInstanceAttributeRequest {
        instance_id: id.to_owned(),
        credit_specification: Some(mode.to_owned()),
        ..ModifyInstanceAttributeRequest::default()
    }
}

#[tokio::test]
async fn credit_mode_is_for_burstable_types_only() {
    let (mock, client) = setup().await;
    // A burstable type: the mode asked for at launch, Standard when none, changed in place.
    let mut r = request("credit-1");
    r.instance_type = "ecs.t6-c1m1.large".into();
    r.credit_specification = Some("Unlimited".into());
    let id = launch(&client, &r).await;
    let i = client
        .describe_instance_attribute(&id)
        .await
        .expect("described");
    assert_eq!(i.credit_specification, "Unlimited");
    client
        .modify_instance_attribute(&credit_change(&id, "Standard"))
        .await
        .expect("burstable instance changes its mode");
    let i = client
        .describe_instance_attribute(&id)
        .await
        .expect("described");
    assert_eq!(i.credit_specification, "Standard");
    let err = client
        .modify_instance_attribute(&credit_change(&id, "Boost"))
        .await
        .expect_err("an unknown mode is refused");
    assert_eq!(code(&err), "InvalidParameter.CreditSpecification");

    let mut r = request("credit-2");
    r.instance_type = "ecs.t5-lc1m1.small".into();
    let id = launch(&client, &r).await;
    let i = client
        .describe_instance_attribute(&id)
        .await
        .expect("described");
    assert_eq!(i.credit_specification, "Standard");

    // Any other type: no mode reported, and asking for one is refused at launch and later.
    let id = launch(&client, &request("credit-3")).await;
    let i = client
        .describe_instance_attribute(&id)
        .await
        .expect("described");
    assert_eq!(i.credit_specification, "");
    let err = client
        .modify_instance_attribute(&credit_change(&id, "Unlimited"))
        .await
        .expect_err("a non-burstable type has no credit mode");
    assert_eq!(code(&err), "InvalidParameter.CreditSpecification");
    let mut r = request("credit-4");
    r.credit_specification = Some("Unlimited".into());
    let err = client
        .run_instances(&r)
        .await
        .expect_err("launching a non-burstable type with a credit mode is refused");
    assert_eq!(code(&err), "InvalidParameter.CreditSpecification");
    assert_eq!(mock.instances().len(), 3);
    mock.shutdown().await;
}

#[tokio::test]
async fn deployment_sets_are_named_at_launch_and_changed_in_place() {
    let (mock, client) = setup().await;
    let first = alibaba_mock::defaults::deployment_set_id(REGION, 0);
    let second = alibaba_mock::defaults::deployment_set_id(REGION, 1);
    let mut r = request("dps-1");
    r.deployment_set_id = Some(first.clone());
    let id = launch(&client, &r).await;
    let i = client
        .describe_instance_attribute(&id)
        .await
        .expect("described");
    assert_eq!(i.deployment_set_id, first);
    client
        .modify_instance_deployment(&id, &second)
        .await
        .expect("moved to the second set");
    let i = client
        .describe_instance_attribute(&id)
        .await
        .expect("described");
    assert_eq!(i.deployment_set_id, second);

    let err = client
        .modify_instance_deployment(&id, "ds-doesnotexist")
        .await
        .expect_err("unknown set");
    assert_eq!(code(&err), "DeploymentSet.InvalidId");
    let mut r = request("dps-2");
    r.deployment_set_id = Some("ds-doesnotexist".into());
    let err = client
        .run_instances(&r)
        .await
        .expect_err("unknown set at launch");
    assert_eq!(code(&err), "DeploymentSet.NotFound");
    // An Availability set spreads at most 20 instances.
    let mut r = request("dps-3");
    r.deployment_set_id = Some(second.clone());
    r.amount = Some(20);
    let err = client.run_instances(&r).await.expect_err("21 in one set");
    assert_eq!(code(&err), "DeploymentSet.InstanceLimitExceeded");
    assert_eq!(mock.instances().len(), 1);
    mock.shutdown().await;
}
