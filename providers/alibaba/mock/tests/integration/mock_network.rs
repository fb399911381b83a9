//! The network API of the mock: the default network of a fresh account, the VPC API (version
//! 2016-04-28) on the same port, ECS's security-group actions, and the dependency rules between
//! VPCs, vSwitches, security groups and instances.

use std::time::Duration;

use alibaba_mock::defaults;
use ferroplane_testkit::eventually;
use ferroplane_testkit::mock_requests::*;
use serde_json::Value;

const VPC: &str = "2016-04-28";

async fn vpc(s: &Signer, action: &str, params: &[(&str, &str)]) -> Resp {
    let mut all = vec![("RegionId", REGION)];
    all.extend_from_slice(params);
    s.post(action, VPC, &all).await
}

async fn sg(s: &Signer, action: &str, params: &[(&str, &str)]) -> Resp {
    let mut all = vec![("RegionId", REGION)];
    all.extend_from_slice(params);
    s.ecs(action, &all).await
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or_default()
}

#[tokio::test]
async fn a_fresh_account_has_a_default_network_per_region() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let vpcs = vpc(&s, "DescribeVpcs", &[]).await.ok();
    assert_eq!(vpcs["TotalCount"], 1);
    let v = &vpcs["Vpcs"]["Vpc"][0];
    assert_eq!(str_of(v, "VpcId"), defaults::vpc_id(REGION));
    assert_eq!(
        (v["IsDefault"].as_bool(), str_of(v, "Status")),
        (Some(true), "Available")
    );
    assert_eq!(str_of(v, "CidrBlock"), "172.16.0.0/12");
    // cn-hangzhou has six zones in the catalogue: one default vSwitch each.
    let switches = vpc(&s, "DescribeVSwitches", &[("PageSize", "50")])
        .await
        .ok();
    assert_eq!(switches["TotalCount"], 6);
    assert_eq!(v["VSwitchIds"]["VSwitchId"].as_array().unwrap().len(), 6);
    let first = &switches["VSwitches"]["VSwitch"][0];
    assert_eq!(
        (str_of(first, "VSwitchId"), str_of(first, "ZoneId")),
        (VSWITCH, "cn-hangzhou-b")
    );
    assert_eq!(str_of(first, "CidrBlock"), "172.16.0.0/20");
    let groups = sg(&s, "DescribeSecurityGroups", &[]).await.ok();
    assert_eq!(groups["TotalCount"], 1);
    let g = &groups["SecurityGroups"]["SecurityGroup"][0];
    assert_eq!(str_of(g, "SecurityGroupId"), SECURITY_GROUP);
    assert_eq!(str_of(g, "VpcId"), defaults::vpc_id(REGION));
    // Another region has its own.
    let beijing = s
        .post(
            "DescribeVSwitches",
            VPC,
            &[("RegionId", "cn-beijing"), ("ZoneId", "cn-beijing-a")],
        )
        .await
        .ok();
    assert_eq!(
        str_of(&beijing["VSwitches"]["VSwitch"][0], "VSwitchId"),
        defaults::vswitch_id("cn-beijing-a")
    );
    // An unknown version is refused with the versions served.
    s.post("DescribeVpcs", "2099-01-01", &[("RegionId", REGION)])
        .await
        .expect_error(400, "InvalidVersion");
    // A VPC action under the ECS version does not exist.
    s.ecs("DescribeVpcs", &[("RegionId", REGION)])
        .await
        .expect_error(404, "InvalidAction.NotFound");
}

#[tokio::test]
async fn vpcs_and_vswitches_are_validated_and_deleted_only_without_dependents() {
    // Long enough that the calls made while the new VPC must still be Pending finish inside it,
    // even on a loaded machine.
    let mock = start(Duration::from_secs(3)).await;
    let s = Signer::new(&mock);
    for (params, code) in [
        (
            vec![("CidrBlock", "8.8.0.0/16")],
            "InvalidCidrBlock.Malformed",
        ),
        (
            vec![("CidrBlock", "192.168.1.1/16")],
            "InvalidCidrBlock.Malformed",
        ),
        (
            vec![("CidrBlock", "10.0.0.0/30")],
            "InvalidCidrBlock.Malformed",
        ),
        (vec![("VpcName", "http://x")], "InvalidVpcName.Malformed"),
    ] {
        vpc(&s, "CreateVpc", &params).await.expect_error(400, code);
    }
    let created = vpc(
        &s,
        "CreateVpc",
        &[
            ("CidrBlock", "192.168.0.0/16"),
            ("VpcName", "app"),
            ("Description", "for tests"),
        ],
    )
    .await
    .ok();
    let vpc_id = str_of(&created, "VpcId").to_owned();
    assert!(vpc_id.starts_with("vpc-") && str_of(&created, "VRouterId").starts_with("vrt-"));
    let status = |s: Signer, id: String| async move {
        let v = vpc(&s, "DescribeVpcs", &[("VpcId", &id)]).await.ok();
        str_of(&v["Vpcs"]["Vpc"][0], "Status").to_owned()
    };
    assert_eq!(status(s.clone(), vpc_id.clone()).await, "Pending");
    let vsw = |cidr: &'static str, zone: &'static str| {
        let s = s.clone();
        let vpc_id = vpc_id.clone();
        async move {
            vpc(
                &s,
                "CreateVSwitch",
                &[
                    ("VpcId", &vpc_id),
                    ("ZoneId", zone),
                    ("CidrBlock", cidr),
                    ("VSwitchName", "web"),
                ],
            )
            .await
        }
    };
    vsw("192.168.1.0/24", "cn-hangzhou-h")
        .await
        .expect_error(400, "IncorrectVpcStatus");
    eventually("the new VPC is Available")
        .within(Duration::from_secs(20))
        .until_async(|| {
            let (s, id) = (s.clone(), vpc_id.clone());
            async move { status(s, id).await == "Available" }
        })
        .await;
    vsw("192.168.1.0/24", "cn-hangzhou-z")
        .await
        .expect_error(404, "InvalidZoneId.NotFound");
    vsw("10.0.0.0/24", "cn-hangzhou-h")
        .await
        .expect_error(400, "InvalidParameter");
    vsw("192.168.0.0/30", "cn-hangzhou-h")
        .await
        .expect_error(400, "InvalidCirdrBlock.MaskLength");
    vpc(
        &s,
        "CreateVSwitch",
        &[
            ("VpcId", "vpc-nosuchvpc"),
            ("ZoneId", "cn-hangzhou-h"),
            ("CidrBlock", "192.168.1.0/24"),
        ],
    )
    .await
    .expect_error(404, "InvalidVpcId.NotFound");
    let vswitch_id = str_of(
        &vsw("192.168.1.0/24", "cn-hangzhou-h").await.ok(),
        "VSwitchId",
    )
    .to_owned();
    vsw("192.168.1.128/25", "cn-hangzhou-i")
        .await
        .expect_error(400, "InvalidCidrBlock.Overlapped");
    let listed = vpc(&s, "DescribeVSwitches", &[("VpcId", &vpc_id)])
        .await
        .ok();
    assert_eq!(listed["TotalCount"], 1);
    let listed = &listed["VSwitches"]["VSwitch"][0];
    assert_eq!(
        (str_of(listed, "ZoneId"), str_of(listed, "VSwitchName")),
        ("cn-hangzhou-h", "web")
    );
    assert_eq!(listed["AvailableIpAddressCount"], 252);

    // A group of the new VPC; an instance must use a vSwitch of the same VPC.
    let group = str_of(
        &sg(
            &s,
            "CreateSecurityGroup",
            &[("VpcId", &vpc_id), ("SecurityGroupName", "app-sg")],
        )
        .await
        .ok(),
        "SecurityGroupId",
    )
    .to_owned();
    let placed = |vsw: &str| {
        vec![
            ("RegionId".to_owned(), REGION.to_owned()),
            ("ImageId".to_owned(), IMAGE.to_owned()),
            ("InstanceType".to_owned(), TYPE.to_owned()),
            ("VSwitchId".to_owned(), vsw.to_owned()),
            ("SecurityGroupId".to_owned(), group.clone()),
        ]
    };
    let params = placed(VSWITCH);
    let refs: Vec<(&str, &str)> = params
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    s.ecs("RunInstances", &refs)
        .await
        .expect_error(400, "InvalidParameter.Mismatch");
    let mut two_vpcs = refs.clone();
    two_vpcs.retain(|(k, _)| *k != "SecurityGroupId");
    two_vpcs.push(("SecurityGroupIds.1", SECURITY_GROUP));
    two_vpcs.push(("SecurityGroupIds.2", &group));
    s.ecs("RunInstances", &two_vpcs)
        .await
        .expect_error(400, "InvalidSecurityGroup.VpcMismatch");
    assert_eq!(mock.stats().instances_created, 0, "nothing was created");
    eventually("the new vSwitch is Available")
        .within(Duration::from_secs(20))
        .until_async(|| {
            let s = s.clone();
            let id = vswitch_id.clone();
            async move {
                let v = vpc(&s, "DescribeVSwitches", &[("VSwitchId", &id)])
                    .await
                    .ok();
                str_of(&v["VSwitches"]["VSwitch"][0], "Status") == "Available"
            }
        })
        .await;
    let params = placed(&vswitch_id);
    let refs: Vec<(&str, &str)> = params
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let instance = ids(&s.ecs("RunInstances", &refs).await.ok()).remove(0);
    let attr = s
        .ecs("DescribeInstanceAttribute", &[("InstanceId", &instance)])
        .await
        .ok();
    assert_eq!(attr["VpcAttributes"]["VpcId"], vpc_id.as_str());
    assert!(
        attr["VpcAttributes"]["PrivateIpAddress"]["IpAddress"][0]
            .as_str()
            .unwrap()
            .starts_with("192.168.1.")
    );

    // Nothing in use can go.
    vpc(&s, "DeleteVSwitch", &[("VSwitchId", &vswitch_id)])
        .await
        .expect_error(400, "DependencyViolation");
    sg(&s, "DeleteSecurityGroup", &[("SecurityGroupId", &group)])
        .await
        .expect_error(403, "DependencyViolation");
    vpc(&s, "DeleteVpc", &[("VpcId", &vpc_id)])
        .await
        .expect_error(400, "DependencyViolation.VSwitch");
    s.wait_for(&instance, "Running").await;
    s.ecs(
        "DeleteInstance",
        &[("InstanceId", &instance), ("Force", "true")],
    )
    .await
    .ok();
    vpc(&s, "DeleteVSwitch", &[("VSwitchId", &vswitch_id)])
        .await
        .ok();
    vpc(&s, "DeleteVpc", &[("VpcId", &vpc_id)])
        .await
        .expect_error(400, "DependencyViolation.SecurityGroup");
    sg(&s, "DeleteSecurityGroup", &[("SecurityGroupId", &group)])
        .await
        .ok();
    vpc(&s, "DeleteVpc", &[("VpcId", &vpc_id)]).await.ok();
    vpc(&s, "DeleteVpc", &[("VpcId", &vpc_id)])
        .await
        .expect_error(404, "InvalidVpcId.NotFound");
    assert_eq!(vpc(&s, "DescribeVpcs", &[]).await.ok()["TotalCount"], 1);
}

#[tokio::test]
async fn security_group_rules_in_both_forms() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let id = str_of(
        &sg(
            &s,
            "CreateSecurityGroup",
            &[("SecurityGroupName", "web"), ("Description", "web tier")],
        )
        .await
        .ok(),
        "SecurityGroupId",
    )
    .to_owned();
    let group = |extra: &[(&'static str, &'static str)]| {
        let mut p = vec![("SecurityGroupId", id.as_str())];
        p.extend_from_slice(extra);
        p
    };
    for (extra, code) in [
        (
            vec![
                ("IpProtocol", "sctp"),
                ("PortRange", "1/2"),
                ("SourceCidrIp", "0.0.0.0/0"),
            ],
            "InvalidIpProtocol.Malformed",
        ),
        (
            vec![
                ("IpProtocol", "tcp"),
                ("PortRange", "22"),
                ("SourceCidrIp", "0.0.0.0/0"),
            ],
            "InvalidPortRange.Malformed",
        ),
        (
            vec![
                ("IpProtocol", "tcp"),
                ("PortRange", "80/22"),
                ("SourceCidrIp", "0.0.0.0/0"),
            ],
            "InvalidPortRange.Malformed",
        ),
        (
            vec![
                ("IpProtocol", "icmp"),
                ("PortRange", "1/1"),
                ("SourceCidrIp", "0.0.0.0/0"),
            ],
            "InvalidPortRange.Malformed",
        ),
        (
            vec![
                ("IpProtocol", "tcp"),
                ("PortRange", "22/22"),
                ("SourceCidrIp", "300.0.0.0/8"),
            ],
            "InvalidSourceCidrIp.Malformed",
        ),
        (
            vec![
                ("IpProtocol", "tcp"),
                ("PortRange", "22/22"),
                ("SourceCidrIp", "0.0.0.0/0"),
                ("Policy", "maybe"),
            ],
            "InvalidPolicy.Malformed",
        ),
        (
            vec![
                ("IpProtocol", "tcp"),
                ("PortRange", "22/22"),
                ("SourceCidrIp", "0.0.0.0/0"),
                ("Priority", "101"),
            ],
            "InvalidPriority.Malformed",
        ),
        (
            vec![("IpProtocol", "tcp"), ("PortRange", "22/22")],
            "MissingParameter",
        ),
        (
            vec![("PortRange", "22/22"), ("SourceCidrIp", "0.0.0.0/0")],
            "MissingParameter",
        ),
    ] {
        sg(&s, "AuthorizeSecurityGroup", &group(&extra))
            .await
            .expect_error(400, code);
    }
    sg(
        &s,
        "AuthorizeSecurityGroup",
        &[
            ("SecurityGroupId", "sg-nosuchgroup"),
            ("IpProtocol", "tcp"),
            ("PortRange", "22/22"),
            ("SourceCidrIp", "0.0.0.0/0"),
        ],
    )
    .await
    .expect_error(404, "InvalidSecurityGroupId.NotFound");
    // Flat form, then the Permissions.N form (two rules), then the same rule again (no change).
    sg(
        &s,
        "AuthorizeSecurityGroup",
        &group(&[
            ("IpProtocol", "TCP"),
            ("PortRange", "22/22"),
            ("SourceCidrIp", "10.0.0.0/8"),
            ("Description", "ssh"),
        ]),
    )
    .await
    .ok();
    sg(
        &s,
        "AuthorizeSecurityGroup",
        &group(&[
            ("Permissions.1.IpProtocol", "tcp"),
            ("Permissions.1.PortRange", "443/443"),
            ("Permissions.1.SourceCidrIp", "0.0.0.0/0"),
            ("Permissions.1.Priority", "10"),
            ("Permissions.2.IpProtocol", "icmp"),
            ("Permissions.2.PortRange", "-1/-1"),
            ("Permissions.2.SourceCidrIp", "0.0.0.0/0"),
            ("Permissions.2.Policy", "drop"),
        ]),
    )
    .await
    .ok();
    sg(
        &s,
        "AuthorizeSecurityGroup",
        &group(&[
            ("IpProtocol", "tcp"),
            ("PortRange", "22/22"),
            ("SourceCidrIp", "10.0.0.0/8"),
        ]),
    )
    .await
    .ok();
    sg(
        &s,
        "AuthorizeSecurityGroupEgress",
        &group(&[
            ("Permissions.1.IpProtocol", "all"),
            ("Permissions.1.PortRange", "-1/-1"),
            ("Permissions.1.DestCidrIp", "0.0.0.0/0"),
        ]),
    )
    .await
    .ok();
    sg(
        &s,
        "AuthorizeSecurityGroupEgress",
        &group(&[
            ("IpProtocol", "udp"),
            ("PortRange", "53/53"),
            ("DestCidrIp", "nope"),
        ]),
    )
    .await
    .expect_error(400, "InvalidDestCidrIp.Malformed");
    let attr = sg(&s, "DescribeSecurityGroupAttribute", &group(&[]))
        .await
        .ok();
    let rules = attr["Permissions"]["Permission"].as_array().unwrap();
    assert_eq!(rules.len(), 4, "{attr}");
    let ssh = &rules[0];
    assert_eq!(
        (
            str_of(ssh, "IpProtocol"),
            str_of(ssh, "PortRange"),
            str_of(ssh, "SourceCidrIp"),
            str_of(ssh, "Policy"),
            str_of(ssh, "Priority"),
            str_of(ssh, "Description"),
            str_of(ssh, "Direction")
        ),
        (
            "TCP",
            "22/22",
            "10.0.0.0/8",
            "Accept",
            "1",
            "ssh",
            "ingress"
        )
    );
    assert_eq!(str_of(&rules[2], "Policy"), "Drop");
    let egress = sg(
        &s,
        "DescribeSecurityGroupAttribute",
        &group(&[("Direction", "egress")]),
    )
    .await
    .ok();
    assert_eq!(
        egress["Permissions"]["Permission"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        str_of(&egress["Permissions"]["Permission"][0], "DestCidrIp"),
        "0.0.0.0/0"
    );

    // Revoke in both forms; revoking by parameters a rule that is not there succeeds.
    sg(
        &s,
        "RevokeSecurityGroup",
        &group(&[
            ("IpProtocol", "tcp"),
            ("PortRange", "22/22"),
            ("SourceCidrIp", "10.0.0.0/8"),
        ]),
    )
    .await
    .ok();
    sg(
        &s,
        "RevokeSecurityGroup",
        &group(&[
            ("Permissions.1.IpProtocol", "tcp"),
            ("Permissions.1.PortRange", "443/443"),
            ("Permissions.1.SourceCidrIp", "0.0.0.0/0"),
            ("Permissions.1.Priority", "10"),
        ]),
    )
    .await
    .ok();
    sg(
        &s,
        "RevokeSecurityGroup",
        &group(&[
            ("IpProtocol", "tcp"),
            ("PortRange", "8080/8080"),
            ("SourceCidrIp", "0.0.0.0/0"),
        ]),
    )
    .await
    .ok();
    sg(
        &s,
        "RevokeSecurityGroupEgress",
        &group(&[
            ("IpProtocol", "all"),
            ("PortRange", "-1/-1"),
            ("DestCidrIp", "0.0.0.0/0"),
        ]),
    )
    .await
    .ok();
    let attr = sg(&s, "DescribeSecurityGroupAttribute", &group(&[]))
        .await
        .ok();
    let left = attr["Permissions"]["Permission"].as_array().unwrap();
    assert_eq!(left.len(), 1, "{attr}");
    assert_eq!(str_of(&left[0], "IpProtocol"), "ICMP");

    // A create repeated with its ClientToken answers the first result; other parameters with
    // the same token are refused.
    let token = [
        ("ClientToken", "sg-token-1"),
        ("SecurityGroupName", "tokened"),
    ];
    let first = sg(&s, "CreateSecurityGroup", &token).await.ok();
    let again = sg(&s, "CreateSecurityGroup", &token).await.ok();
    assert_eq!(first["SecurityGroupId"], again["SecurityGroupId"]);
    sg(
        &s,
        "CreateSecurityGroup",
        &[
            ("ClientToken", "sg-token-1"),
            ("SecurityGroupName", "other"),
        ],
    )
    .await
    .expect_error(400, "IdempotentParameterMismatch");
    sg(
        &s,
        "DeleteSecurityGroup",
        &[("SecurityGroupId", str_of(&first, "SecurityGroupId"))],
    )
    .await
    .ok();

    // A group another group's rule refers to cannot be deleted.
    let other = str_of(
        &sg(&s, "CreateSecurityGroup", &[]).await.ok(),
        "SecurityGroupId",
    )
    .to_owned();
    sg(
        &s,
        "AuthorizeSecurityGroup",
        &[
            ("SecurityGroupId", &other),
            ("IpProtocol", "tcp"),
            ("PortRange", "80/80"),
            ("SourceGroupId", &id),
        ],
    )
    .await
    .ok();
    sg(&s, "DeleteSecurityGroup", &group(&[]))
        .await
        .expect_error(403, "DependencyViolation");
    sg(&s, "DeleteSecurityGroup", &[("SecurityGroupId", &other)])
        .await
        .ok();
    sg(&s, "DeleteSecurityGroup", &group(&[])).await.ok();
    sg(&s, "DescribeSecurityGroupAttribute", &group(&[]))
        .await
        .expect_error(404, "InvalidSecurityGroupId.NotFound");
    let listed = sg(&s, "DescribeSecurityGroups", &[]).await.ok();
    assert_eq!(listed["TotalCount"], 1, "only the default group is left");
}

#[tokio::test]
async fn network_resources_carry_tags_found_by_filters_and_rewritten_by_tag_resources() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let created = vpc(
        &s,
        "CreateVpc",
        &[("Tag.1.Key", "ferroplane.io/uid"), ("Tag.1.Value", "u-1")],
    )
    .await
    .ok();
    let vpc_id = str_of(&created, "VpcId").to_owned();
    let by_tag = |value: &'static str| {
        let s = s.clone();
        async move {
            vpc(
                &s,
                "DescribeVpcs",
                &[("Tag.1.Key", "ferroplane.io/uid"), ("Tag.1.Value", value)],
            )
            .await
            .ok()
        }
    };
    let found = by_tag("u-1").await;
    assert_eq!(found["TotalCount"], 1);
    assert_eq!(
        found["Vpcs"]["Vpc"][0]["Tags"]["Tag"][0],
        serde_json::json!({"Key": "ferroplane.io/uid", "Value": "u-1"})
    );
    vpc(
        &s,
        "TagResources",
        &[
            ("ResourceType", "VPC"),
            ("ResourceId.1", &vpc_id),
            ("Tag.1.Key", "ferroplane.io/uid"),
            ("Tag.1.Value", "u-2"),
        ],
    )
    .await
    .ok();
    assert_eq!(by_tag("u-1").await["TotalCount"], 0);
    assert_eq!(by_tag("u-2").await["TotalCount"], 1);
    vpc(
        &s,
        "TagResources",
        &[
            ("ResourceType", "VSWITCH"),
            ("ResourceId.1", "vsw-missing"),
            ("Tag.1.Key", "k"),
        ],
    )
    .await
    .expect_error(404, "InvalidVSwitchId.NotFound");

    let group = sg(
        &s,
        "CreateSecurityGroup",
        &[
            ("VpcId", &vpc_id),
            ("Tag.1.Key", "team"),
            ("Tag.1.Value", "a"),
        ],
    )
    .await
    .ok();
    let group_id = str_of(&group, "SecurityGroupId").to_owned();
    sg(
        &s,
        "TagResources",
        &[
            ("ResourceType", "securitygroup"),
            ("ResourceId.1", &group_id),
            ("Tag.1.Key", "team"),
            ("Tag.1.Value", "b"),
        ],
    )
    .await
    .ok();
    let groups = sg(
        &s,
        "DescribeSecurityGroups",
        &[("Tag.1.Key", "team"), ("Tag.1.Value", "b")],
    )
    .await
    .ok();
    assert_eq!(groups["TotalCount"], 1);
    assert_eq!(
        groups["SecurityGroups"]["SecurityGroup"][0]["Tags"]["Tag"][0],
        serde_json::json!({"TagKey": "team", "TagValue": "b"})
    );
}
