//! Instance lifecycle rules of the mock: state machine with a short delay, wrong-state errors,
//! deletion protection, ClientToken idempotency, modifications, account scoping, catalogue errors,
//! quota and stock.

use std::time::Duration;

use alibaba_mock::{AccessKey, DEFAULT_ACCOUNT_ID, OUT_OF_STOCK_TYPE};
use ferroplane_testkit::mock_requests::*;

const DELAY: Duration = Duration::from_millis(500);

#[tokio::test]
async fn state_machine_with_transition_delay() {
    let mock = start(DELAY).await;
    let s = Signer::new(&mock);
    let id = s.run(&[]).await.remove(0);
    assert_eq!(s.status(&id).await, "Pending");
    s.ecs("StopInstance", &[("InstanceId", &id)])
        .await
        .expect_error(403, "IncorrectInstanceStatus");
    s.wait_for(&id, "Starting").await;
    s.wait_for(&id, "Running").await;
    s.ecs("StartInstance", &[("InstanceId", &id)])
        .await
        .expect_error(403, "IncorrectInstanceStatus");
    s.ecs("DeleteInstance", &[("InstanceId", &id)])
        .await
        .expect_error(403, "IncorrectInstanceStatus");

    s.ecs(
        "StopInstance",
        &[("InstanceId", &id), ("StoppedMode", "StopCharging")],
    )
    .await
    .ok();
    assert_eq!(s.status(&id).await, "Stopping");
    s.ecs("StartInstance", &[("InstanceId", &id)])
        .await
        .expect_error(403, "IncorrectInstanceStatus");
    s.wait_for(&id, "Stopped").await;
    let attr = s
        .ecs("DescribeInstanceAttribute", &[("InstanceId", &id)])
        .await
        .ok();
    assert_eq!(attr["StoppedMode"], "StopCharging");
    s.ecs("RebootInstance", &[("InstanceId", &id)])
        .await
        .expect_error(403, "IncorrectInstanceStatus");

    s.ecs("StartInstance", &[("InstanceId", &id)]).await.ok();
    assert_eq!(s.status(&id).await, "Starting");
    s.wait_for(&id, "Running").await;
    s.ecs(
        "RebootInstance",
        &[("InstanceId", &id), ("ForceStop", "true")],
    )
    .await
    .ok();
    assert_eq!(s.status(&id).await, "Starting");
    s.wait_for(&id, "Running").await;

    s.ecs("DeleteInstance", &[("InstanceId", &id), ("Force", "true")])
        .await
        .ok();
    s.ecs("DescribeInstanceAttribute", &[("InstanceId", &id)])
        .await
        .expect_error(404, "InvalidInstanceId.NotFound");
    assert!(instances(&s.describe(&[]).await).is_empty());
    assert!(mock.instance_status(&id).is_none());
}

#[tokio::test]
async fn delete_rules_and_deletion_protection() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let id = s.run(&[("DeletionProtection", "true")]).await.remove(0);
    s.ecs("DeleteInstance", &[("InstanceId", &id), ("Force", "true")])
        .await
        .expect_error(403, "InvalidOperation.DeletionProtection");
    s.ecs(
        "ModifyInstanceAttribute",
        &[("InstanceId", &id), ("DeletionProtection", "false")],
    )
    .await
    .ok();
    s.ecs("StopInstance", &[("InstanceId", &id)]).await.ok();
    s.ecs("DeleteInstance", &[("InstanceId", &id)]).await.ok();
    s.ecs("DeleteInstance", &[("InstanceId", &id)])
        .await
        .expect_error(404, "InvalidInstanceId.NotFound");

    let ids = s.run(&[("Amount", "3")]).await;
    let mut params: Vec<(String, String)> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| (format!("InstanceId.{}", i + 1), id.clone()))
        .collect();
    params.push(("RegionId".into(), REGION.into()));
    let borrowed: Vec<(&str, &str)> = params
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    s.ecs("DeleteInstances", &borrowed)
        .await
        .expect_error(403, "IncorrectInstanceStatus");
    assert_eq!(mock.stats().instances_live, 3, "all or nothing");
    let mut forced = borrowed.clone();
    forced.push(("Force", "true"));
    forced.push(("ClientToken", "del-1"));
    s.ecs("DeleteInstances", &forced).await.ok();
    s.ecs("DeleteInstances", &forced).await.ok();
    assert_eq!(mock.stats().instances_live, 0);
    s.ecs("DeleteInstances", &[("RegionId", REGION)])
        .await
        .expect_error(400, "MissingParameter");
}

#[tokio::test]
async fn client_token_idempotency() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let first = s
        .run(&[
            ("ClientToken", "tok-1"),
            ("Amount", "2"),
            ("InstanceName", "web"),
        ])
        .await;
    let again = s
        .run(&[
            ("ClientToken", "tok-1"),
            ("Amount", "2"),
            ("InstanceName", "web"),
        ])
        .await;
    assert_eq!(first, again);
    // Same token through V3 with the same parameters.
    let v3 = s
        .v3(
            "RunInstances",
            ECS,
            &[
                ("RegionId", REGION),
                ("ImageId", IMAGE),
                ("InstanceType", TYPE),
                ("VSwitchId", VSWITCH),
                ("SecurityGroupId", SECURITY_GROUP),
                ("ClientToken", "tok-1"),
                ("Amount", "2"),
                ("InstanceName", "web"),
            ],
            &[],
        )
        .await
        .ok();
    assert_eq!(ids(&v3), first);
    assert_eq!(mock.stats().instances_created, 2);
    s.ecs(
        "RunInstances",
        &[
            ("RegionId", REGION),
            ("ImageId", IMAGE),
            ("InstanceType", TYPE),
            ("VSwitchId", VSWITCH),
            ("SecurityGroupId", SECURITY_GROUP),
            ("ClientToken", "tok-1"),
            ("Amount", "2"),
            ("InstanceName", "db"),
        ],
    )
    .await
    .expect_error(400, "IdempotentParameterMismatch");
    assert_eq!(mock.instances()[0].client_token.as_deref(), Some("tok-1"));
    // Tokens are per account: another account may reuse it.
    mock.add_access_key(AccessKey::new("ak2", "s2", "42"));
    let other = Signer::with_key(&mock, "ak2", "s2")
        .run(&[
            ("ClientToken", "tok-1"),
            ("Amount", "2"),
            ("InstanceName", "web"),
        ])
        .await;
    assert_ne!(other, first);
}

#[tokio::test]
async fn instances_are_scoped_by_account_and_region() {
    let mock = start(Duration::ZERO).await;
    mock.add_access_key(AccessKey::new("ak2", "s2", "42"));
    mock.add_access_key(AccessKey::new("ak3", "s3", DEFAULT_ACCOUNT_ID));
    let s = Signer::new(&mock);
    let id = s.run(&[]).await.remove(0);
    let other = Signer::with_key(&mock, "ak2", "s2");
    other
        .ecs("DescribeInstanceAttribute", &[("InstanceId", &id)])
        .await
        .expect_error(404, "InvalidInstanceId.NotFound");
    other
        .ecs("DeleteInstance", &[("InstanceId", &id), ("Force", "true")])
        .await
        .expect_error(404, "InvalidInstanceId.NotFound");
    assert!(instances(&other.describe(&[]).await).is_empty());
    // A second key of the same account sees it.
    let same = Signer::with_key(&mock, "ak3", "s3");
    assert_eq!(instances(&same.describe(&[]).await).len(), 1);
    // Another region does not.
    let bj = s
        .ecs(
            "DescribeInstances",
            &[
                ("RegionId", "cn-beijing"),
                ("InstanceIds", &format!("[\"{id}\"]")),
            ],
        )
        .await
        .ok();
    assert_eq!(bj["TotalCount"], 0);
}

#[tokio::test]
async fn catalogue_quota_and_stock_errors() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let run = |region: &'static str, image: &'static str, itype: &'static str| {
        let s = s.clone();
        async move {
            s.ecs(
                "RunInstances",
                &[
                    ("RegionId", region),
                    ("ImageId", image),
                    ("InstanceType", itype),
                    ("VSwitchId", VSWITCH),
                    ("SecurityGroupId", SECURITY_GROUP),
                ],
            )
            .await
        }
    };
    run("mars-north-1", IMAGE, TYPE)
        .await
        .expect_error(404, "InvalidRegionId.NotFound");
    run(REGION, "no_such_image.vhd", TYPE)
        .await
        .expect_error(404, "InvalidImageId.NotFound");
    run(REGION, IMAGE, "ecs.nope.large")
        .await
        .expect_error(400, "InvalidInstanceType.ValueNotSupported");
    run(REGION, IMAGE, OUT_OF_STOCK_TYPE)
        .await
        .expect_error(403, "OperationDenied.NoStock");
    s.ecs("DescribeInstances", &[("RegionId", "nowhere")])
        .await
        .expect_error(404, "InvalidRegionId.NotFound");
    for amount in ["0", "101", "x"] {
        let resp = s
            .ecs(
                "RunInstances",
                &[
                    ("RegionId", REGION),
                    ("ImageId", IMAGE),
                    ("InstanceType", TYPE),
                    ("VSwitchId", VSWITCH),
                    ("SecurityGroupId", SECURITY_GROUP),
                    ("Amount", amount),
                ],
            )
            .await;
        assert_eq!(resp.status, 400, "Amount={amount}: {}", resp.body);
    }
    let hundred = s.run(&[("Amount", "100")]).await;
    assert_eq!(hundred.len(), 100);

    mock.set_instance_quota(Some(101));
    s.run(&[]).await;
    s.ecs(
        "RunInstances",
        &[
            ("RegionId", REGION),
            ("ImageId", IMAGE),
            ("InstanceType", TYPE),
            ("VSwitchId", VSWITCH),
            ("SecurityGroupId", SECURITY_GROUP),
        ],
    )
    .await
    .expect_error(403, "QuotaExceed.ElasticQuota");
    let dry = s
        .ecs(
            "RunInstances",
            &[
                ("RegionId", REGION),
                ("ImageId", IMAGE),
                ("InstanceType", "ecs.c6.large"),
                ("VSwitchId", VSWITCH),
                ("SecurityGroupId", SECURITY_GROUP),
                ("DryRun", "true"),
            ],
        )
        .await;
    dry.expect_error(400, "DryRunOperation");
}

#[tokio::test]
async fn run_parameters_are_validated_and_reflected() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let bad = |extra: Vec<(&'static str, &'static str)>, code: &'static str| {
        let s = s.clone();
        async move {
            let mut p = vec![
                ("RegionId", REGION),
                ("ImageId", IMAGE),
                ("InstanceType", TYPE),
                ("VSwitchId", VSWITCH),
                ("SecurityGroupId", SECURITY_GROUP),
            ];
            p.retain(|(k, _)| !extra.iter().any(|(e, _)| e == k));
            p.extend(extra);
            let resp = s.ecs("RunInstances", &p).await;
            assert_eq!(resp.code(), code, "{}", resp.body);
        }
    };
    bad(vec![("InstanceName", "x")], "InvalidInstanceName.Malformed").await;
    bad(
        vec![("InternetMaxBandwidthOut", "101")],
        "InvalidInternetMaxBandwidthOut.Malformed",
    )
    .await;
    bad(
        vec![("Tag.1.Key", "aliyun:x"), ("Tag.1.Value", "v")],
        "InvalidTagKey.Malformed",
    )
    .await;
    bad(vec![("Tag.1.Key", "acs:x")], "InvalidTagKey.Malformed").await;
    bad(vec![("Password", "weak")], "InvalidPassword.Malformed").await;
    bad(vec![("ZoneId", "cn-shanghai-b")], "InvalidZoneId.NotFound").await;
    bad(vec![("VSwitchId", "nope")], "InvalidVSwitchId.NotFound").await;
    bad(
        vec![("SecurityGroupId", "nope")],
        "InvalidSecurityGroupId.NotFound",
    )
    .await;
    bad(
        vec![("UserData", "%%%")],
        "InvalidUserData.Base64FormatInvalid",
    )
    .await;
    bad(
        vec![("InstanceChargeType", "Free")],
        "InvalidInstanceChargeType.ValueNotSupported",
    )
    .await;
    bad(vec![("DeletionProtection", "maybe")], "InvalidParameter").await;

    let id = s
        .run(&[
            ("InstanceName", "web-1"),
            ("HostName", "web-1"),
            ("Description", "front end"),
            ("ZoneId", "cn-hangzhou-h"),
            ("VSwitchId", "vsw-k3l5df6vk6n7t4iwvwm2ox"),
            ("SecurityGroupIds.1", SECURITY_GROUP),
            ("InternetMaxBandwidthOut", "5"),
            ("Password", "Passw0rd!"),
            ("Tag.1.Key", "env"),
            ("Tag.1.Value", "dev"),
        ])
        .await
        .remove(0);
    let i = s
        .ecs("DescribeInstanceAttribute", &[("InstanceId", &id)])
        .await
        .ok();
    assert_eq!(i["InstanceName"], "web-1");
    assert_eq!(i["HostName"], "web-1");
    assert_eq!(i["ZoneId"], "cn-hangzhou-h");
    assert_eq!(
        i["VpcAttributes"]["VSwitchId"],
        alibaba_mock::defaults::vswitch_id("cn-hangzhou-h")
    );
    assert_eq!(
        i["VpcAttributes"]["VpcId"],
        alibaba_mock::defaults::vpc_id(REGION)
    );
    assert!(
        i["VpcAttributes"]["PrivateIpAddress"]["IpAddress"][0]
            .as_str()
            .unwrap()
            .starts_with("172.16.")
    );
    assert_eq!(
        i["SecurityGroupIds"]["SecurityGroupId"],
        serde_json::json!([SECURITY_GROUP])
    );
    assert_eq!(
        i["PublicIpAddress"]["IpAddress"].as_array().unwrap().len(),
        1
    );
    assert_eq!(i["Cpu"], 2);
    assert_eq!(i["Memory"], 8192);
    assert_eq!(i["OSName"], "CentOS  7.8 64位");
    assert!(
        !i.to_string().contains("Passw0rd!"),
        "password never echoed"
    );
}

#[tokio::test]
async fn modify_attribute_and_spec() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let id = s.run(&[]).await.remove(0);
    s.ecs(
        "ModifyInstanceAttribute",
        &[
            ("InstanceId", &id),
            ("InstanceName", "renamed"),
            ("Description", "d"),
            ("HostName", "h-1"),
            ("SecurityGroupIds.1", SECURITY_GROUP),
        ],
    )
    .await
    .ok();
    let i = s
        .ecs("DescribeInstanceAttribute", &[("InstanceId", &id)])
        .await
        .ok();
    assert_eq!(
        (
            i["InstanceName"].as_str(),
            i["Description"].as_str(),
            i["HostName"].as_str()
        ),
        (Some("renamed"), Some("d"), Some("h-1"))
    );
    assert_eq!(
        i["SecurityGroupIds"]["SecurityGroupId"],
        serde_json::json!([SECURITY_GROUP])
    );
    s.ecs(
        "ModifyInstanceAttribute",
        &[("InstanceId", &id), ("SecurityGroupIds.1", "sg-z")],
    )
    .await
    .expect_error(404, "InvalidSecurityGroupId.NotFound");
    s.ecs(
        "ModifyInstanceAttribute",
        &[("InstanceId", &id), ("UserData", "ZWNobyBoaQ==")],
    )
    .await
    .expect_error(403, "IncorrectInstanceStatus");
    s.ecs(
        "ModifyInstanceSpec",
        &[("InstanceId", &id), ("InstanceType", "ecs.g6.xlarge")],
    )
    .await
    .expect_error(403, "IncorrectInstanceStatus");
    // Bandwidth changes at any time and brings a public IP.
    assert!(
        i["PublicIpAddress"]["IpAddress"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    s.ecs(
        "ModifyInstanceSpec",
        &[("InstanceId", &id), ("InternetMaxBandwidthOut", "10")],
    )
    .await
    .ok();
    let i = s
        .ecs("DescribeInstanceAttribute", &[("InstanceId", &id)])
        .await
        .ok();
    assert_eq!(i["InternetMaxBandwidthOut"], 10);
    assert_eq!(
        i["PublicIpAddress"]["IpAddress"].as_array().unwrap().len(),
        1
    );

    s.ecs("StopInstance", &[("InstanceId", &id)]).await.ok();
    s.ecs(
        "ModifyInstanceAttribute",
        &[("InstanceId", &id), ("UserData", "ZWNobyBoaQ==")],
    )
    .await
    .ok();
    s.ecs(
        "ModifyInstanceSpec",
        &[("InstanceId", &id), ("InstanceType", "ecs.nope")],
    )
    .await
    .expect_error(400, "InvalidInstanceType.ValueNotSupported");
    s.ecs(
        "ModifyInstanceSpec",
        &[("InstanceId", &id), ("InstanceType", OUT_OF_STOCK_TYPE)],
    )
    .await
    .expect_error(403, "OperationDenied.NoStock");
    // A type sold out in the instance's zone is refused as a launch there would be.
    let zone = i["ZoneId"].as_str().unwrap().to_owned();
    let sold_out = |available| alibaba_mock::StockLimit {
        zone_id: zone.clone(),
        instance_type: "ecs.g6.xlarge".to_owned(),
        available,
    };
    mock.set_stock(&sold_out(Some(0)));
    s.ecs(
        "ModifyInstanceSpec",
        &[("InstanceId", &id), ("InstanceType", "ecs.g6.xlarge")],
    )
    .await
    .expect_error(403, "OperationDenied.NoStock");
    mock.set_stock(&sold_out(Some(1)));
    s.ecs(
        "ModifyInstanceSpec",
        &[("InstanceId", &id), ("InstanceType", "ecs.g6.xlarge")],
    )
    .await
    .ok();
    assert_eq!(
        mock.stock(),
        [sold_out(Some(0))],
        "the change took the zone's last one"
    );
    let i = s
        .ecs("DescribeInstanceAttribute", &[("InstanceId", &id)])
        .await
        .ok();
    assert_eq!(
        (
            i["InstanceType"].as_str(),
            i["Cpu"].as_u64(),
            i["Memory"].as_u64()
        ),
        (Some("ecs.g6.xlarge"), Some(4), Some(16384))
    );
    s.ecs("ModifyInstanceSpec", &[("InstanceId", &id)])
        .await
        .expect_error(400, "MissingParameter");
}

#[tokio::test]
async fn repeated_token_while_in_flight_gets_last_token_processing() {
    let mock = start(Duration::ZERO).await;
    mock.set_faults(alibaba_mock::Faults {
        latency: Duration::from_millis(1500),
        ..Default::default()
    })
    .unwrap();
    let s = Signer::new(&mock);
    let first = {
        let s = s.clone();
        tokio::spawn(async move { s.run(&[("ClientToken", "slow-1")]).await })
    };
    // Wait until the first call is processed (its answer is still delayed).
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while mock.stats().instances_created == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "first call never processed"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let repeat = s
        .ecs(
            "RunInstances",
            &[
                ("RegionId", REGION),
                ("ImageId", IMAGE),
                ("InstanceType", TYPE),
                ("VSwitchId", VSWITCH),
                ("SecurityGroupId", SECURITY_GROUP),
                ("ClientToken", "slow-1"),
            ],
        )
        .await;
    let ids = first.await.unwrap();
    // The first answer is held back 1.5 s after processing; the repeat arrives meanwhile.
    repeat.expect_error(403, "LastTokenProcessing");
    mock.set_faults(alibaba_mock::Faults::default()).unwrap();
    assert_eq!(
        s.run(&[("ClientToken", "slow-1")]).await,
        ids,
        "same IDs once settled"
    );
    assert_eq!(mock.stats().instances_created, 1);
}

#[tokio::test]
async fn stop_charging_releases_the_public_ip_and_start_may_find_no_stock() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let id = s.run(&[("InternetMaxBandwidthOut", "5")]).await.remove(0);
    let public_ip = |i: &serde_json::Value| {
        i["PublicIpAddress"]["IpAddress"]
            .as_array()
            .unwrap()
            .first()
            .and_then(|v| v.as_str())
            .map(str::to_owned)
    };
    let attr = |s: Signer, id: String| async move {
        s.ecs("DescribeInstanceAttribute", &[("InstanceId", &id)])
            .await
            .ok()
    };
    let first = public_ip(&attr(s.clone(), id.clone()).await).expect("a public IP");
    assert_eq!(
        attr(s.clone(), id.clone()).await["StoppedMode"],
        "Not-applicable"
    );
    s.ecs(
        "StopInstance",
        &[("InstanceId", &id), ("StoppedMode", "Economy")],
    )
    .await
    .expect_error(400, "InvalidParameter");

    // KeepCharging keeps the address and the compute charge.
    s.ecs(
        "StopInstance",
        &[("InstanceId", &id), ("StoppedMode", "KeepCharging")],
    )
    .await
    .ok();
    let i = attr(s.clone(), id.clone()).await;
    assert_eq!(
        (i["Status"].as_str(), i["StoppedMode"].as_str()),
        (Some("Stopped"), Some("KeepCharging"))
    );
    assert_eq!(public_ip(&i).as_deref(), Some(first.as_str()));
    assert!(mock.instances()[0].compute_charged);
    s.ecs("StartInstance", &[("InstanceId", &id)]).await.ok();

    // StopCharging releases the address and stops charging vCPUs and memory.
    s.ecs(
        "StopInstance",
        &[("InstanceId", &id), ("StoppedMode", "StopCharging")],
    )
    .await
    .ok();
    let i = attr(s.clone(), id.clone()).await;
    assert_eq!(i["StoppedMode"], "StopCharging");
    assert_eq!(public_ip(&i), None);
    assert!(!mock.instances()[0].compute_charged);
    let described = instances(&s.describe(&[]).await);
    assert_eq!(described[0]["StoppedMode"], "StopCharging");

    // Restarting may find the zone sold out; the instance stays Stopped.
    mock.inject_error(alibaba_mock::ErrorInjection::new(
        "OperationDenied.NoStock",
        Some("StartInstance"),
        1,
    ))
    .unwrap();
    s.ecs("StartInstance", &[("InstanceId", &id)])
        .await
        .expect_error(403, "OperationDenied.NoStock");
    assert_eq!(s.status(&id).await, "Stopped");
    s.ecs("StartInstance", &[("InstanceId", &id)]).await.ok();
    let i = attr(s.clone(), id.clone()).await;
    let second = public_ip(&i).expect("a new public IP on start");
    assert_ne!(second, first);
    assert!(mock.instances()[0].compute_charged);
}
