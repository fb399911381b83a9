//! Security group rules as ECS keeps them: each with its own `SecurityGroupRuleId` (learned from
//! DescribeSecurityGroupAttribute: AuthorizeSecurityGroup answers only a RequestId), IPv4 or
//! IPv6 peers, outbound rules changed in place by ID (ModifySecurityGroupEgressRule), revoked by
//! ID, an identical rule authorized again left as the one rule, and every rule a record of its
//! own in the mock's ledger.

use std::time::Duration;

use alibaba_mock::{Change, ResourceKind};
use ferroplane_testkit::mock_requests::*;
use serde_json::Value;

async fn ecs(s: &Signer, action: &str, params: &[(&str, &str)]) -> Resp {
    let mut all = vec![("RegionId", REGION)];
    all.extend_from_slice(params);
    s.ecs(action, &all).await
}

async fn new_group(s: &Signer) -> String {
    ecs(s, "CreateSecurityGroup", &[]).await.ok()["SecurityGroupId"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn rules(s: &Signer, group: &str, direction: &str) -> Vec<Value> {
    let a = ecs(
        s,
        "DescribeSecurityGroupAttribute",
        &[("SecurityGroupId", group), ("Direction", direction)],
    )
    .await
    .ok();
    a["Permissions"]["Permission"].as_array().unwrap().clone()
}

#[tokio::test]
async fn every_rule_has_an_id_and_an_identical_rule_stays_one() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let group = new_group(&s).await;
    let v6 = [
        ("SecurityGroupId", group.as_str()),
        ("IpProtocol", "tcp"),
        ("PortRange", "443/443"),
        ("Ipv6SourceCidrIp", "2001:db8::/32"),
    ];
    let answer = ecs(&s, "AuthorizeSecurityGroup", &v6).await.ok();
    // As ECS: the answer names no rule.
    assert_eq!(answer.get("SecurityGroupRuleId"), None);
    // The same rule again succeeds and adds nothing.
    ecs(&s, "AuthorizeSecurityGroup", &v6).await.ok();
    let ingress = rules(&s, &group, "ingress").await;
    assert_eq!(ingress.len(), 1, "{ingress:?}");
    assert_eq!(ingress[0]["Ipv6SourceCidrIp"], "2001:db8::/32");
    assert_eq!(ingress[0]["SourceCidrIp"], "");
    let id = ingress[0]["SecurityGroupRuleId"].as_str().unwrap();
    assert!(id.starts_with("sgr-"), "{id}");
    // One authorization object per rule, and a well-formed one.
    let mut both = v6.to_vec();
    both.push(("SourceCidrIp", "10.0.0.0/8"));
    ecs(&s, "AuthorizeSecurityGroup", &both)
        .await
        .expect_error(400, "InvalidParameter");
    ecs(
        &s,
        "AuthorizeSecurityGroup",
        &[
            ("SecurityGroupId", group.as_str()),
            ("IpProtocol", "tcp"),
            ("PortRange", "443/443"),
            ("Ipv6SourceCidrIp", "2001:db8::/300"),
        ],
    )
    .await
    .expect_error(400, "InvalidIpv6CidrIp.Malformed");
    let record = mock
        .resources()
        .into_iter()
        .find(|r| r.kind == ResourceKind::SecurityGroupRule)
        .expect("the rule is a record");
    assert_eq!(record.id, id);
    let created: Vec<_> = mock
        .ledger()
        .into_iter()
        .filter(|e| e.kind == ResourceKind::SecurityGroupRule && e.change == Change::Created)
        .map(|e| e.resource_id)
        .collect();
    assert_eq!(created, [id.to_owned()]);
}

#[tokio::test]
async fn an_outbound_rule_changes_in_place_by_id_and_is_revoked_by_id() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let group = new_group(&s).await;
    ecs(
        &s,
        "AuthorizeSecurityGroupEgress",
        &[
            ("SecurityGroupId", group.as_str()),
            ("IpProtocol", "udp"),
            ("PortRange", "53/53"),
            ("DestCidrIp", "10.0.0.0/8"),
            ("Description", "dns"),
        ],
    )
    .await
    .ok();
    let egress = rules(&s, &group, "egress").await;
    let id = egress[0]["SecurityGroupRuleId"]
        .as_str()
        .unwrap()
        .to_owned();
    let by_id = |extra: &[(&'static str, &'static str)]| {
        let mut params = vec![
            ("SecurityGroupId", group.clone()),
            ("SecurityGroupRuleId", id.clone()),
        ];
        params.extend(extra.iter().map(|(k, v)| (*k, (*v).to_owned())));
        params
    };
    let call = |params: Vec<(&'static str, String)>| {
        let s = &s;
        async move {
            let borrowed: Vec<(&str, &str)> =
                params.iter().map(|(k, v)| (*k, v.as_str())).collect();
            ecs(s, "ModifySecurityGroupEgressRule", &borrowed).await
        }
    };
    call(by_id(&[
        ("Priority", "7"),
        ("Policy", "drop"),
        ("Description", "no dns"),
    ]))
    .await
    .ok();
    let egress = rules(&s, &group, "egress").await;
    assert_eq!(egress.len(), 1);
    assert_eq!(egress[0]["SecurityGroupRuleId"], id.as_str());
    assert_eq!(egress[0]["Priority"], "7");
    assert_eq!(egress[0]["Policy"], "Drop");
    assert_eq!(egress[0]["Description"], "no dns");
    assert_eq!(egress[0]["DestCidrIp"], "10.0.0.0/8");
    // An IPv4 destination does not become IPv6, and an empty description changes nothing.
    call(by_id(&[("Ipv6DestCidrIp", "2001:db8::/32")]))
        .await
        .expect_error(400, "InvalidParameter");
    call(by_id(&[("Description", "")])).await.ok();
    assert_eq!(
        rules(&s, &group, "egress").await[0]["Description"],
        "no dns"
    );
    // An inbound rule's ID is not an outbound rule.
    ecs(
        &s,
        "ModifySecurityGroupRule",
        &[("SecurityGroupId", &group), ("SecurityGroupRuleId", &id)],
    )
    .await
    .expect_error(404, "InvalidSecurityGroupRule.RuleNotExist");
    // Revoked by its ID.
    ecs(
        &s,
        "RevokeSecurityGroupEgress",
        &[("SecurityGroupId", &group), ("SecurityGroupRuleId.1", &id)],
    )
    .await
    .ok();
    assert!(rules(&s, &group, "egress").await.is_empty());
    // Since July 2024 ECS refuses to revoke an ID the group does not hold, in either direction.
    ecs(
        &s,
        "RevokeSecurityGroupEgress",
        &[("SecurityGroupId", &group), ("SecurityGroupRuleId.1", &id)],
    )
    .await
    .expect_error(404, "InvalidSecurityGroupRule.RuleNotExist");
    ecs(
        &s,
        "RevokeSecurityGroup",
        &[("SecurityGroupId", &group), ("SecurityGroupRuleId.1", &id)],
    )
    .await
    .expect_error(400, "InvalidParam.SecurityGroupRuleId");
    assert!(
        mock.ledger()
            .iter()
            .any(|e| e.resource_id == id && e.change == Change::Deleted)
    );
}
