//! ECS prefix lists as the API reference describes them: created with a fixed address family and
//! `MaxEntries`, entries in canonical form and never more than `MaxEntries`, named as a rule's
//! peer (`SourcePrefixListId` / `DestPrefixListId`) and reported so by
//! DescribeSecurityGroupAttribute, associated with the groups whose rules name them, and not
//! deleted while associated (`NotAllowed.AssociationExist`).

use std::time::Duration;

use alibaba_mock::{AccessKey, MockConfig, MockServer};
use ferroplane_testkit::mock_requests::*;
use serde_json::Value;

async fn ecs(s: &Signer, action: &str, params: &[(&str, &str)]) -> Resp {
    let mut all = vec![("RegionId", REGION)];
    all.extend_from_slice(params);
    s.ecs(action, &all).await
}

async fn new_list(s: &Signer, family: &str, max: &str, entries: &[&str]) -> String {
    let keys: Vec<String> = (1..=entries.len())
        .map(|n| format!("Entry.{n}.Cidr"))
        .collect();
    let mut params = vec![
        ("AddressFamily", family),
        ("MaxEntries", max),
        ("PrefixListName", "office"),
    ];
    params.extend(keys.iter().map(String::as_str).zip(entries.iter().copied()));
    ecs(s, "CreatePrefixList", &params).await.ok()["PrefixListId"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn attributes(s: &Signer, list: &str) -> Value {
    ecs(s, "DescribePrefixListAttributes", &[("PrefixListId", list)])
        .await
        .ok()
}

async fn associations(s: &Signer, list: &str) -> Vec<Value> {
    ecs(
        s,
        "DescribePrefixListAssociations",
        &[("PrefixListId", list)],
    )
    .await
    .ok()["PrefixListAssociations"]["PrefixListAssociation"]
        .as_array()
        .unwrap()
        .clone()
}

#[tokio::test]
async fn a_list_is_created_changed_and_deleted_with_its_entries_canonical() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let token = [
        ("AddressFamily", "IPv4"),
        ("MaxEntries", "2"),
        ("PrefixListName", "office"),
        ("Entry.1.Cidr", "10.0.0.1"),
        ("Entry.1.Description", "bastion"),
        ("ClientToken", "pl-token-1"),
    ];
    let id = ecs(&s, "CreatePrefixList", &token).await.ok()["PrefixListId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(id.starts_with("pl-"), "{id}");
    // The same ClientToken answers the same list; other parameters under it are refused.
    let again = ecs(&s, "CreatePrefixList", &token).await.ok();
    assert_eq!(again["PrefixListId"], id.as_str());
    let mut other = token.to_vec();
    other[1] = ("MaxEntries", "3");
    ecs(&s, "CreatePrefixList", &other)
        .await
        .expect_error(400, "IdempotentParameterMismatch");
    let listed = ecs(&s, "DescribePrefixLists", &[]).await.ok();
    assert_eq!(
        listed["PrefixLists"]["PrefixList"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let a = attributes(&s, &id).await;
    assert_eq!(a["AddressFamily"], "IPv4");
    assert_eq!(a["MaxEntries"], 2);
    assert_eq!(a["Entries"]["Entry"][0]["Cidr"], "10.0.0.1/32");
    assert_eq!(a["Entries"]["Entry"][0]["Description"], "bastion");

    // Add one (the list is then full), rename it, and change the first entry's description.
    ecs(
        &s,
        "ModifyPrefixList",
        &[
            ("PrefixListId", &id),
            ("AddEntry.1.Cidr", "192.168.0.0/16"),
            ("AddEntry.2.Cidr", "10.0.0.1/32"),
            ("AddEntry.2.Description", "jump"),
            ("PrefixListName", "offices"),
        ],
    )
    .await
    .ok();
    let a = attributes(&s, &id).await;
    assert_eq!(a["PrefixListName"], "offices");
    let entries = a["Entries"]["Entry"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "{entries:?}");
    assert!(
        entries
            .iter()
            .any(|e| e["Cidr"] == "10.0.0.1/32" && e["Description"] == "jump")
    );
    // A third entry exceeds MaxEntries; removing one makes room in the same call.
    ecs(
        &s,
        "ModifyPrefixList",
        &[("PrefixListId", &id), ("AddEntry.1.Cidr", "172.16.0.0/12")],
    )
    .await
    .expect_error(400, "LimitExceed.MaxEntries");
    ecs(
        &s,
        "ModifyPrefixList",
        &[
            ("PrefixListId", &id),
            ("AddEntry.1.Cidr", "172.16.0.0/12"),
            ("RemoveEntry.1.Cidr", "192.168.0.0/16"),
        ],
    )
    .await
    .ok();
    ecs(&s, "DeletePrefixList", &[("PrefixListId", &id)])
        .await
        .ok();
    ecs(&s, "DescribePrefixListAttributes", &[("PrefixListId", &id)])
        .await
        .expect_error(404, "InvalidPrefixListId.NotFound");
    ecs(&s, "DeletePrefixList", &[("PrefixListId", &id)])
        .await
        .expect_error(404, "InvalidPrefixListId.NotFound");
}

#[tokio::test]
async fn creates_and_changes_outside_the_api_rules_are_refused() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let base = [("MaxEntries", "1"), ("PrefixListName", "office")];
    let with = |extra: &[(&'static str, &'static str)]| [base.as_slice(), extra].concat();
    let cases: &[(&[(&str, &str)], &str)] = &[
        (
            &[("AddressFamily", "ipv4")],
            "InvalidParameter.AddressFamily",
        ),
        (
            &[("AddressFamily", "IPv4"), ("Entry.1.Cidr", "10.0.0.1/8")],
            "InvalidParameter.CidrMalformed",
        ),
        (
            &[("AddressFamily", "IPv6"), ("Entry.1.Cidr", "10.0.0.0/8")],
            "InvalidParameter.CidrMalformed",
        ),
        (
            &[
                ("AddressFamily", "IPv4"),
                ("Entry.1.Cidr", "10.0.0.0/8"),
                ("Entry.2.Cidr", "11.0.0.0/8"),
            ],
            "LimitExceed.MaxEntries",
        ),
        (
            &[
                ("AddressFamily", "IPv6"),
                ("Entry.1.Cidr", "2001:fd01:0:0:0:0:0:0/32"),
                ("Entry.2.Cidr", "2001:fd01::/32"),
            ],
            "InvalidParameter.CidrDuplicated",
        ),
    ];
    for (extra, code) in cases {
        ecs(&s, "CreatePrefixList", &with(extra))
            .await
            .expect_error(400, code);
    }
    let bad_name = [
        ("AddressFamily", "IPv4"),
        ("MaxEntries", "1"),
        ("PrefixListName", "com.aliyun.office"),
    ];
    ecs(&s, "CreatePrefixList", &bad_name)
        .await
        .expect_error(400, "InvalidParameter.PrefixListName");
    let too_big = [
        ("AddressFamily", "IPv4"),
        ("MaxEntries", "201"),
        ("PrefixListName", "office"),
    ];
    ecs(&s, "CreatePrefixList", &too_big)
        .await
        .expect_error(400, "InvalidParameter");
    let list = new_list(&s, "IPv4", "5", &["10.0.0.0/8"]).await;
    // Adding and removing one block in the same call.
    ecs(
        &s,
        "ModifyPrefixList",
        &[
            ("PrefixListId", &list),
            ("AddEntry.1.Cidr", "10.0.0.0/8"),
            ("RemoveEntry.1.Cidr", "10.0.0.0/8"),
        ],
    )
    .await
    .expect_error(400, "InvalidParameter.CidrDuplicated");
    ecs(
        &s,
        "ModifyPrefixList",
        &[("PrefixListId", "pl-nope"), ("PrefixListName", "x1")],
    )
    .await
    .expect_error(404, "InvalidPrefixListId.NotFound");
    // Nothing was created by the refused calls.
    let listed = ecs(&s, "DescribePrefixLists", &[]).await.ok();
    assert_eq!(
        listed["PrefixLists"]["PrefixList"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn a_rule_names_a_list_which_then_cannot_be_deleted_until_the_rule_is_revoked() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let group = ecs(&s, "CreateSecurityGroup", &[]).await.ok()["SecurityGroupId"]
        .as_str()
        .unwrap()
        .to_owned();
    let v4 = new_list(&s, "IPv4", "5", &["10.0.0.0/8"]).await;
    let v6 = new_list(&s, "IPv6", "5", &["2001:db8::/32"]).await;
    let egress = [
        ("SecurityGroupId", group.as_str()),
        ("IpProtocol", "tcp"),
        ("PortRange", "443/443"),
        ("DestPrefixListId", v4.as_str()),
    ];
    // An unknown list, and a list beside a block of the other family, are refused.
    let mut unknown = egress.to_vec();
    unknown[3] = ("DestPrefixListId", "pl-nope");
    ecs(&s, "AuthorizeSecurityGroupEgress", &unknown)
        .await
        .expect_error(404, "InvalidPrefixListId.NotFound");
    let mut mixed = egress.to_vec();
    mixed.push(("Ipv6DestCidrIp", "2001:db8::/32"));
    ecs(&s, "AuthorizeSecurityGroupEgress", &mixed)
        .await
        .expect_error(400, "InvalidParam.PrefixListAddressFamilyMismatch");
    let mut two = egress.to_vec();
    two.push(("DestCidrIp", "10.0.0.0/8"));
    ecs(&s, "AuthorizeSecurityGroupEgress", &two)
        .await
        .expect_error(400, "InvalidParameter");

    ecs(&s, "AuthorizeSecurityGroupEgress", &egress).await.ok();
    let ingress = [
        ("SecurityGroupId", group.as_str()),
        ("IpProtocol", "icmpv6"),
        ("PortRange", "-1/-1"),
        ("SourcePrefixListId", v6.as_str()),
    ];
    ecs(&s, "AuthorizeSecurityGroup", &ingress).await.ok();
    let described = ecs(
        &s,
        "DescribeSecurityGroupAttribute",
        &[("SecurityGroupId", &group)],
    )
    .await
    .ok();
    let rules = described["Permissions"]["Permission"].as_array().unwrap();
    let out = rules.iter().find(|r| r["Direction"] == "egress").unwrap();
    assert_eq!(out["DestPrefixListId"], v4.as_str());
    assert_eq!(out["DestPrefixListName"], "office");
    assert_eq!(out["SourcePrefixListId"], "");
    assert_eq!(out["DestCidrIp"], "");
    let inbound = rules.iter().find(|r| r["Direction"] == "ingress").unwrap();
    assert_eq!(inbound["SourcePrefixListId"], v6.as_str());

    let assoc = associations(&s, &v4).await;
    assert_eq!(assoc.len(), 1, "{assoc:?}");
    assert_eq!(assoc[0]["ResourceId"], group.as_str());
    assert_eq!(assoc[0]["ResourceType"], "securitygroup");
    let listed = ecs(&s, "DescribePrefixLists", &[("PrefixListId.1", &v4)])
        .await
        .ok();
    assert_eq!(
        listed["PrefixLists"]["PrefixList"][0]["AssociationCount"],
        1
    );
    ecs(&s, "DeletePrefixList", &[("PrefixListId", &v4)])
        .await
        .expect_error(400, "NotAllowed.AssociationExist");

    // Revoked by its parameters, the rule lets the list go.
    ecs(&s, "RevokeSecurityGroupEgress", &egress).await.ok();
    assert!(associations(&s, &v4).await.is_empty());
    ecs(&s, "DeletePrefixList", &[("PrefixListId", &v4)])
        .await
        .ok();
    // Deleting the group releases the other list.
    ecs(&s, "DeleteSecurityGroup", &[("SecurityGroupId", &group)])
        .await
        .ok();
    ecs(&s, "DeletePrefixList", &[("PrefixListId", &v6)])
        .await
        .ok();
}

#[tokio::test]
async fn another_account_cannot_see_or_name_a_list() {
    let mock = MockServer::start(
        MockConfig::new(AK, SECRET)
            .with_transition_delay(Duration::ZERO)
            .with_access_key(AccessKey::new("other-ak", "other-secret", "5550002")),
    )
    .await
    .unwrap();
    let owner = Signer::new(&mock);
    let list = new_list(&owner, "IPv4", "1", &[]).await;
    let s = Signer::with_key(&mock, "other-ak", "other-secret");
    ecs(
        &s,
        "DescribePrefixListAttributes",
        &[("PrefixListId", &list)],
    )
    .await
    .expect_error(404, "InvalidPrefixListId.NotFound");
    let group = ecs(&s, "CreateSecurityGroup", &[]).await.ok()["SecurityGroupId"]
        .as_str()
        .unwrap()
        .to_owned();
    ecs(
        &s,
        "AuthorizeSecurityGroup",
        &[
            ("SecurityGroupId", &group),
            ("IpProtocol", "tcp"),
            ("PortRange", "22/22"),
            ("SourcePrefixListId", &list),
        ],
    )
    .await
    .expect_error(404, "InvalidPrefixListId.NotFound");
}
