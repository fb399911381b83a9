//! JoinSecurityGroup / LeaveSecurityGroup within ECS's limits (1 to 5 groups, one VPC, Running
//! or Stopped) and ModifySecurityGroupRule by rule ID and by the rule's parameters.

use std::time::Duration;

use ferroplane_testkit::mock_requests::*;
use serde_json::Value;

async fn ecs(s: &Signer, action: &str, params: &[(&str, &str)]) -> Resp {
    let mut all = vec![("RegionId", REGION)];
    all.extend_from_slice(params);
    s.ecs(action, &all).await
}

async fn new_group(s: &Signer, vpc_id: Option<&str>) -> String {
    let mut params = vec![];
    if let Some(v) = vpc_id {
        params.push(("VpcId", v));
    }
    ecs(s, "CreateSecurityGroup", &params).await.ok()["SecurityGroupId"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn groups_of(s: &Signer, id: &str) -> Vec<Value> {
    let d = s.describe(&[("InstanceIds", &format!("[\"{id}\"]"))]).await;
    d["Instances"]["Instance"][0]["SecurityGroupIds"]["SecurityGroupId"]
        .as_array()
        .unwrap()
        .clone()
}

#[tokio::test]
async fn an_instance_joins_and_leaves_groups_within_ecs_limits() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let id = s.run(&[]).await.remove(0);
    let second = new_group(&s, None).await;
    ecs(
        &s,
        "JoinSecurityGroup",
        &[("InstanceId", &id), ("SecurityGroupId", &second)],
    )
    .await
    .ok();
    assert_eq!(
        groups_of(&s, &id).await,
        [Value::from(SECURITY_GROUP), Value::from(second.as_str())]
    );
    // The interface shows it too.
    let eni = ecs(&s, "DescribeNetworkInterfaces", &[("InstanceId", &id)])
        .await
        .ok();
    assert_eq!(
        eni["NetworkInterfaceSets"]["NetworkInterfaceSet"][0]["SecurityGroupIds"]["SecurityGroupId"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    ecs(
        &s,
        "JoinSecurityGroup",
        &[("InstanceId", &id), ("SecurityGroupId", &second)],
    )
    .await
    .expect_error(403, "InvalidInstanceId.AlreadyExists");
    // Up to five groups.
    for _ in 0..3 {
        let g = new_group(&s, None).await;
        ecs(
            &s,
            "JoinSecurityGroup",
            &[("InstanceId", &id), ("SecurityGroupId", &g)],
        )
        .await
        .ok();
    }
    let sixth = new_group(&s, None).await;
    ecs(
        &s,
        "JoinSecurityGroup",
        &[("InstanceId", &id), ("SecurityGroupId", &sixth)],
    )
    .await
    .expect_error(400, "InstanceSecurityGroupLimitExceeded");
    // A group of another VPC.
    let vpc = s
        .post(
            "CreateVpc",
            "2016-04-28",
            &[("RegionId", REGION), ("CidrBlock", "10.0.0.0/16")],
        )
        .await
        .ok();
    let elsewhere = new_group(&s, vpc["VpcId"].as_str()).await;
    ecs(
        &s,
        "LeaveSecurityGroup",
        &[("InstanceId", &id), ("SecurityGroupId", &second)],
    )
    .await
    .ok();
    ecs(
        &s,
        "JoinSecurityGroup",
        &[("InstanceId", &id), ("SecurityGroupId", &elsewhere)],
    )
    .await
    .expect_error(400, "InvalidInstanceId.Mismatch");
    ecs(
        &s,
        "LeaveSecurityGroup",
        &[("InstanceId", &id), ("SecurityGroupId", &second)],
    )
    .await
    .expect_error(404, "InvalidSecurityGroupAssociation.NotFound");
    ecs(
        &s,
        "JoinSecurityGroup",
        &[("InstanceId", "i-nope"), ("SecurityGroupId", &second)],
    )
    .await
    .expect_error(404, "InvalidInstanceId.NotFound");
    ecs(
        &s,
        "JoinSecurityGroup",
        &[("InstanceId", &id), ("SecurityGroupId", "sg-nope")],
    )
    .await
    .expect_error(404, "InvalidSecurityGroupId.NotFound");
    // Down to one group, which stays; by the primary interface's ID as well.
    let eni_id = eni["NetworkInterfaceSets"]["NetworkInterfaceSet"][0]["NetworkInterfaceId"]
        .as_str()
        .unwrap()
        .to_owned();
    for g in groups_of(&s, &id).await.iter().skip(1) {
        ecs(
            &s,
            "LeaveSecurityGroup",
            &[
                ("NetworkInterfaceId", &eni_id),
                ("SecurityGroupId", g.as_str().unwrap()),
            ],
        )
        .await
        .ok();
    }
    assert_eq!(groups_of(&s, &id).await, [Value::from(SECURITY_GROUP)]);
    ecs(
        &s,
        "LeaveSecurityGroup",
        &[("InstanceId", &id), ("SecurityGroupId", SECURITY_GROUP)],
    )
    .await
    .expect_error(403, "InstanceLastSecurityGroup");
    ecs(
        &s,
        "JoinSecurityGroup",
        &[
            ("InstanceId", &id),
            ("NetworkInterfaceId", &eni_id),
            ("SecurityGroupId", &second),
        ],
    )
    .await
    .expect_error(400, "InvalidParameter");
}

#[tokio::test]
async fn a_pending_instance_keeps_its_groups() {
    let mock = start(Duration::from_secs(600)).await;
    let s = Signer::new(&mock);
    let id = s.run(&[]).await.remove(0);
    let second = new_group(&s, None).await;
    ecs(
        &s,
        "JoinSecurityGroup",
        &[("InstanceId", &id), ("SecurityGroupId", &second)],
    )
    .await
    .expect_error(403, "IncorrectInstanceStatus");
}

async fn ingress_rules(s: &Signer, group: &str) -> Vec<Value> {
    let a = ecs(
        s,
        "DescribeSecurityGroupAttribute",
        &[("SecurityGroupId", group)],
    )
    .await
    .ok();
    a["Permissions"]["Permission"].as_array().unwrap().clone()
}

#[tokio::test]
async fn modify_security_group_rule_by_id_and_by_its_parameters() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let group = new_group(&s, None).await;
    let rule = [
        ("SecurityGroupId", group.as_str()),
        ("IpProtocol", "tcp"),
        ("PortRange", "22/22"),
        ("SourceCidrIp", "10.0.0.0/8"),
    ];
    ecs(&s, "AuthorizeSecurityGroup", &rule).await.ok();
    // By its parameters: only the description changes.
    let mut by_params = rule.to_vec();
    by_params.push(("Description", "ssh from the office"));
    ecs(&s, "ModifySecurityGroupRule", &by_params).await.ok();
    let rules = ingress_rules(&s, &group).await;
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0]["Description"], "ssh from the office");
    let rule_id = rules[0]["SecurityGroupRuleId"].as_str().unwrap().to_owned();
    // By its ID: the ports and the priority change, the ID and the description stay.
    ecs(
        &s,
        "ModifySecurityGroupRule",
        &[
            ("SecurityGroupId", &group),
            ("SecurityGroupRuleId", &rule_id),
            ("PortRange", "2222/2222"),
            ("Priority", "5"),
        ],
    )
    .await
    .ok();
    let rules = ingress_rules(&s, &group).await;
    assert_eq!(rules[0]["SecurityGroupRuleId"], rule_id.as_str());
    assert_eq!(rules[0]["PortRange"], "2222/2222");
    assert_eq!(rules[0]["Priority"], "5");
    assert_eq!(rules[0]["Description"], "ssh from the office");
    // A CIDR source cannot become a group; bad values are refused as Authorize refuses them.
    ecs(
        &s,
        "ModifySecurityGroupRule",
        &[
            ("SecurityGroupId", &group),
            ("SecurityGroupRuleId", &rule_id),
            ("SourceGroupId", SECURITY_GROUP),
        ],
    )
    .await
    .expect_error(400, "InvalidParameter");
    ecs(
        &s,
        "ModifySecurityGroupRule",
        &[
            ("SecurityGroupId", &group),
            ("SecurityGroupRuleId", &rule_id),
            ("PortRange", "0/99999"),
        ],
    )
    .await
    .expect_error(400, "InvalidPortRange.Malformed");
    // Not the same as another rule.
    let other = [
        ("SecurityGroupId", group.as_str()),
        ("IpProtocol", "tcp"),
        ("PortRange", "80/80"),
        ("SourceCidrIp", "10.0.0.0/8"),
    ];
    ecs(&s, "AuthorizeSecurityGroup", &other).await.ok();
    ecs(
        &s,
        "ModifySecurityGroupRule",
        &[
            ("SecurityGroupId", &group),
            ("SecurityGroupRuleId", &rule_id),
            ("PortRange", "80/80"),
            ("Priority", "1"),
        ],
    )
    .await
    .expect_error(400, "InvalidParameter");
    // Rules that do not exist.
    ecs(
        &s,
        "ModifySecurityGroupRule",
        &[
            ("SecurityGroupId", &group),
            ("SecurityGroupRuleId", "sgr-nope"),
        ],
    )
    .await
    .expect_error(404, "InvalidSecurityGroupRule.RuleNotExist");
    let mut missing = rule.to_vec();
    missing[2] = ("PortRange", "23/23");
    ecs(&s, "ModifySecurityGroupRule", &missing)
        .await
        .expect_error(404, "InvalidSecurityGroupRule.RuleNotExist");
}
