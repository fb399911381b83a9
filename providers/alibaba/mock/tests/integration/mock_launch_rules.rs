//! RunInstances placement and subscription rules, and DeleteInstance's refusals, over HTTP:
//! each refused launch answers ECS's code and creates nothing.

use std::time::Duration;

use alibaba_mock::defaults;
use ferroplane_testkit::mock_requests::*;

/// Extra RunInstances parameters, and the HTTP status and code they are refused with.
type Case<'a> = (Vec<(&'a str, &'a str)>, u16, &'a str);

/// RunInstances with exactly `params` (no default placement added).
async fn run_exact(s: &Signer, params: &[(&str, &str)]) -> Resp {
    let mut all = vec![
        ("RegionId", REGION),
        ("ImageId", IMAGE),
        ("InstanceType", TYPE),
    ];
    all.extend_from_slice(params);
    s.ecs("RunInstances", &all).await
}

#[tokio::test]
async fn placement_needs_a_security_group_and_a_vswitch_of_its_vpc() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let other_region_group = defaults::security_group_id("cn-beijing");
    let beijing_vswitch = defaults::vswitch_id("cn-beijing-a");
    let cases: Vec<Case<'_>> = vec![
        (vec![("VSwitchId", VSWITCH)], 400, "MissingParameter"),
        (
            vec![("SecurityGroupId", SECURITY_GROUP)],
            400,
            "MissingParameter",
        ),
        (
            vec![
                ("VSwitchId", VSWITCH),
                ("SecurityGroupId", SECURITY_GROUP),
                ("SecurityGroupIds.1", SECURITY_GROUP),
            ],
            400,
            "InvalidSecurityGroupId.SingleIdAndMultiIdConflict",
        ),
        (
            vec![
                ("VSwitchId", VSWITCH),
                ("SecurityGroupIds.1", SECURITY_GROUP),
                ("SecurityGroupIds.2", SECURITY_GROUP),
            ],
            400,
            "InvalidParameter.SecurityGroupIdRepeated",
        ),
        (
            vec![
                ("VSwitchId", VSWITCH),
                ("SecurityGroupId", "sg-nosuchgroup"),
            ],
            404,
            "InvalidSecurityGroupId.NotFound",
        ),
        (
            vec![
                ("VSwitchId", VSWITCH),
                ("SecurityGroupId", &other_region_group),
            ],
            404,
            "InvalidSecurityGroupId.NotFound",
        ),
        (
            vec![
                ("VSwitchId", "vsw-nosuchswitch"),
                ("SecurityGroupId", SECURITY_GROUP),
            ],
            404,
            "InvalidVSwitchId.NotFound",
        ),
        (
            vec![
                ("VSwitchId", &beijing_vswitch),
                ("SecurityGroupId", SECURITY_GROUP),
            ],
            404,
            "InvalidVSwitchId.NotFound",
        ),
        (
            vec![
                ("VSwitchId", VSWITCH),
                ("SecurityGroupId", SECURITY_GROUP),
                ("ZoneId", "cn-hangzhou-h"),
            ],
            400,
            "InvalidParameter.Mismatch",
        ),
    ];
    for (params, status, code) in &cases {
        let resp = run_exact(&s, params).await;
        assert_eq!(
            (resp.status, resp.code()),
            (*status, *code),
            "{params:?}: {}",
            resp.body
        );
        if params.iter().any(|(k, _)| *k == "VSwitchId")
            && !params.iter().any(|(k, _)| k.starts_with("SecurityGroupId"))
        {
            assert!(
                resp.body.to_string().contains("SecurityGroupId"),
                "{}",
                resp.body
            );
        }
    }
    // DryRun applies the same rules.
    run_exact(&s, &[("VSwitchId", VSWITCH), ("DryRun", "true")])
        .await
        .expect_error(400, "MissingParameter");
    assert_eq!(mock.stats().instances_created, 0, "nothing was created");
    assert!(mock.instances().is_empty());

    // Valid: the zone, VPC and address come from the vSwitch.
    let ids = run_exact(
        &s,
        &[
            ("VSwitchId", VSWITCH),
            ("SecurityGroupIds.1", SECURITY_GROUP),
        ],
    )
    .await
    .ok();
    let id = ids["InstanceIdSets"]["InstanceIdSet"][0]
        .as_str()
        .unwrap()
        .to_owned();
    let i = s
        .ecs("DescribeInstanceAttribute", &[("InstanceId", &id)])
        .await
        .ok();
    assert_eq!(i["ZoneId"], "cn-hangzhou-b");
    assert_eq!(i["VpcAttributes"]["VpcId"], defaults::vpc_id(REGION));
    assert_eq!(i["VpcAttributes"]["VSwitchId"], VSWITCH);
}

#[tokio::test]
async fn prepaid_needs_a_period_and_cannot_be_released_before_it_ends() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let placement = [("VSwitchId", VSWITCH), ("SecurityGroupId", SECURITY_GROUP)];
    let refused: &[(&[(&str, &str)], &str)] = &[
        (&[("InstanceChargeType", "PrePaid")], "MissingParamter"),
        (
            &[("InstanceChargeType", "PrePaid"), ("Period", "10")],
            "InvalidPeriod",
        ),
        (
            &[
                ("InstanceChargeType", "PrePaid"),
                ("Period", "5"),
                ("PeriodUnit", "Week"),
            ],
            "InvalidPeriod",
        ),
        (
            &[
                ("InstanceChargeType", "PrePaid"),
                ("Period", "1"),
                ("PeriodUnit", "Year"),
            ],
            "InvalidPeriodUnit.ValueNotSupported",
        ),
        (
            &[
                ("InstanceChargeType", "PrePaid"),
                ("Period", "1"),
                ("AutoRenew", "true"),
                ("AutoRenewPeriod", "5"),
            ],
            "InvalidAutoRenewPeriod.ValueNotSupported",
        ),
    ];
    for (extra, code) in refused {
        let mut params = placement.to_vec();
        params.extend_from_slice(extra);
        run_exact(&s, &params).await.expect_error(400, code);
    }
    assert_eq!(mock.stats().instances_created, 0, "nothing was created");

    let id = s
        .run(&[
            ("InstanceChargeType", "PrePaid"),
            ("Period", "1"),
            ("PeriodUnit", "Month"),
            ("AutoRenew", "true"),
            ("AutoRenewPeriod", "1"),
        ])
        .await
        .remove(0);
    let i = s
        .ecs("DescribeInstanceAttribute", &[("InstanceId", &id)])
        .await
        .ok();
    assert_eq!(i["InstanceChargeType"], "PrePaid");
    let expired = i["ExpiredTime"].as_str().unwrap().to_owned();
    assert_ne!(expired, "2099-12-31T15:59Z");
    let created: jiff::Timestamp = format!(
        "{}:00Z",
        i["CreationTime"].as_str().unwrap().trim_end_matches('Z')
    )
    .parse()
    .unwrap();
    let ends: jiff::Timestamp = format!("{}:00Z", expired.trim_end_matches('Z'))
        .parse()
        .unwrap();
    let days = ends.duration_since(created).as_secs() / 86_400;
    assert!((28..=31).contains(&days), "one month: {days} days");
    assert_eq!(i["AutoReleaseTime"], "");

    for force in ["false", "true"] {
        s.ecs(
            "DeleteInstance",
            &[
                ("InstanceId", &id),
                ("Force", force),
                ("TerminateSubscription", "true"),
            ],
        )
        .await
        .expect_error(403, "ChargeTypeViolation");
    }
    s.ecs(
        "DeleteInstances",
        &[
            ("RegionId", REGION),
            ("InstanceId.1", &id),
            ("Force", "true"),
        ],
    )
    .await
    .expect_error(403, "ChargeTypeViolation");
    assert!(mock.expire_subscription(&id));
    // Expired, but released only when asked to terminate the subscription.
    s.ecs("DeleteInstance", &[("InstanceId", &id), ("Force", "true")])
        .await
        .expect_error(403, "ChargeTypeViolation");
    s.ecs(
        "DeleteInstance",
        &[
            ("InstanceId", &id),
            ("Force", "true"),
            ("TerminateSubscription", "true"),
        ],
    )
    .await
    .ok();
    assert!(mock.instances().is_empty());

    // Pay-as-you-go instances report the far-future expiry and cannot be "expired".
    let post = s.run(&[]).await.remove(0);
    assert!(!mock.expire_subscription(&post));
    let i = s
        .ecs("DescribeInstanceAttribute", &[("InstanceId", &post)])
        .await
        .ok();
    assert_eq!(i["ExpiredTime"], "2099-12-31T15:59Z");
}

#[tokio::test]
async fn delete_while_starting_or_stopping_is_an_incorrect_status() {
    // Each transitional status lasts 2 s: long enough for the calls made in it.
    let mock = start(Duration::from_secs(2)).await;
    let s = Signer::new(&mock);
    let id = s.run(&[]).await.remove(0);
    s.ecs("DeleteInstance", &[("InstanceId", &id), ("Force", "true")])
        .await
        .expect_error(403, "IncorrectInstanceStatus.Initializing");
    s.wait_for(&id, "Starting").await;
    for force in ["false", "true"] {
        s.ecs("DeleteInstance", &[("InstanceId", &id), ("Force", force)])
            .await
            .expect_error(403, "IncorrectInstanceStatus");
    }
    s.wait_for(&id, "Running").await;
    s.ecs("StopInstance", &[("InstanceId", &id)]).await.ok();
    s.ecs("DeleteInstance", &[("InstanceId", &id), ("Force", "true")])
        .await
        .expect_error(403, "IncorrectInstanceStatus");
    assert_eq!(mock.instances().len(), 1);
    s.wait_for(&id, "Stopped").await;
    s.ecs("DeleteInstance", &[("InstanceId", &id)]).await.ok();
    assert!(mock.instances().is_empty());
}
