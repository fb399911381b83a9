//! The VPC API's attribute reads Terraform's alicloud provider makes (DescribeVpcAttribute,
//! DescribeVSwitchAttributes, DescribeRouteTableList) and the completeness of DescribeVpcs and
//! DescribeVSwitches: every list present with its wrapper, numeric owners, real creation times.

use std::time::Duration;

use alibaba_mock::defaults;
use ferroplane_testkit::mock_requests::*;
use serde_json::Value;

const VPC: &str = "2016-04-28";

async fn vpc(s: &Signer, action: &str, params: &[(&str, &str)]) -> Resp {
    let mut all = vec![("RegionId", REGION)];
    all.extend_from_slice(params);
    s.post(action, VPC, &all).await
}

/// `value[wrapper][inner]` is a list (present even when empty).
fn list<'a>(value: &'a Value, wrapper: &str, inner: &str) -> &'a Vec<Value> {
    value[wrapper][inner]
        .as_array()
        .unwrap_or_else(|| panic!("{wrapper}.{inner} is not a list in {value}"))
}

#[tokio::test]
async fn describe_vpc_attribute_answers_a_new_vpc_with_every_list() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let created = vpc(
        &s,
        "CreateVpc",
        &[("CidrBlock", "10.0.0.0/16"), ("VpcName", "stack")],
    )
    .await
    .ok();
    let id = created["VpcId"].as_str().unwrap();
    let switch = vpc(
        &s,
        "CreateVSwitch",
        &[
            ("VpcId", id),
            ("ZoneId", "cn-hangzhou-h"),
            ("CidrBlock", "10.0.1.0/24"),
        ],
    )
    .await
    .ok();
    let a = vpc(&s, "DescribeVpcAttribute", &[("VpcId", id)]).await.ok();
    assert_eq!(a["VpcId"], id);
    assert_eq!(a["VpcName"], "stack");
    assert_eq!(a["CidrBlock"], "10.0.0.0/16");
    assert_eq!(a["Status"], "Available");
    assert_eq!(a["IsDefault"], false);
    assert_eq!(a["VRouterId"], created["VRouterId"]);
    assert_eq!(
        list(&a, "VSwitchIds", "VSwitchId"),
        &[switch["VSwitchId"].clone()]
    );
    for (wrapper, inner) in [
        ("SecondaryCidrBlocks", "SecondaryCidrBlock"),
        ("UserCidrs", "UserCidr"),
        ("AssociatedCens", "AssociatedCen"),
        ("Ipv6CidrBlocks", "Ipv6CidrBlock"),
        ("Tags", "Tag"),
    ] {
        assert!(list(&a, wrapper, inner).is_empty(), "{wrapper}");
    }
    assert_eq!(
        a["OwnerId"].as_u64(),
        Some(alibaba_mock::DEFAULT_ACCOUNT_ID.parse().unwrap())
    );
    assert_eq!(a["EnabledIpv6"], false);
    // A VPC that does not exist, or of another region, is InvalidVpcID.NotFound (this
    // action's spelling); a default filter that does not match, too.
    vpc(&s, "DescribeVpcAttribute", &[("VpcId", "vpc-nope")])
        .await
        .expect_error(404, "InvalidVpcID.NotFound");
    vpc(
        &s,
        "DescribeVpcAttribute",
        &[("VpcId", id), ("IsDefault", "true")],
    )
    .await
    .expect_error(404, "InvalidVpcID.NotFound");
    s.post(
        "DescribeVpcAttribute",
        VPC,
        &[("RegionId", "cn-beijing"), ("VpcId", id)],
    )
    .await
    .expect_error(404, "InvalidVpcID.NotFound");
    vpc(&s, "DescribeVpcAttribute", &[])
        .await
        .expect_error(400, "MissingParameter");
    vpc(
        &s,
        "DescribeVpcAttribute",
        &[("VpcId", id), ("DryRun", "true")],
    )
    .await
    .expect_error(400, "DryRunOperation");
}

#[tokio::test]
async fn describe_vswitch_attributes_matches_describe_vswitches() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let listed = vpc(&s, "DescribeVSwitches", &[("VSwitchId", VSWITCH)])
        .await
        .ok();
    let listed = &listed["VSwitches"]["VSwitch"][0];
    let a = vpc(&s, "DescribeVSwitchAttributes", &[("VSwitchId", VSWITCH)])
        .await
        .ok();
    for key in [
        "VSwitchId",
        "VpcId",
        "Status",
        "CidrBlock",
        "ZoneId",
        "AvailableIpAddressCount",
        "CreationTime",
        "IsDefault",
        "RouteTable",
        "OwnerId",
        "EnabledIpv6",
        "NetworkAclId",
    ] {
        assert_eq!(a[key], listed[key], "{key}");
    }
    assert_eq!(a["AvailableIpAddressCount"], 4092);
    assert_eq!(a["RouteTable"]["RouteTableType"], "System");
    assert!(list(&a, "Tags", "Tag").is_empty());
    // An instance takes one address.
    s.run(&[]).await;
    let a = vpc(&s, "DescribeVSwitchAttributes", &[("VSwitchId", VSWITCH)])
        .await
        .ok();
    assert_eq!(a["AvailableIpAddressCount"], 4091);
    vpc(
        &s,
        "DescribeVSwitchAttributes",
        &[("VSwitchId", "vsw-nope")],
    )
    .await
    .expect_error(404, "InvalidVswitchID.NotFound");
}

#[tokio::test]
async fn every_vpc_has_its_system_route_table() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let created = vpc(&s, "CreateVpc", &[("CidrBlock", "10.0.0.0/16")])
        .await
        .ok();
    let id = created["VpcId"].as_str().unwrap();
    let tables = vpc(&s, "DescribeRouteTableList", &[("VpcId", id)])
        .await
        .ok();
    assert_eq!(tables["TotalCount"], 1);
    let t = &tables["RouterTableList"]["RouterTableListType"][0];
    assert_eq!(t["RouteTableId"], created["RouteTableId"]);
    assert_eq!(t["RouterId"], created["VRouterId"]);
    assert_eq!(t["RouteTableType"], "System");
    assert_eq!(t["RouterType"], "VRouter");
    assert_eq!(t["VpcId"], id);
    assert!(list(t, "VSwitchIds", "VSwitchId").is_empty());
    assert!(list(t, "GatewayIds", "GatewayIds").is_empty());
    // Found by its own ID and by its router; the default VPC has one too.
    let by_id = vpc(
        &s,
        "DescribeRouteTableList",
        &[("RouteTableId", created["RouteTableId"].as_str().unwrap())],
    )
    .await
    .ok();
    assert_eq!(by_id["TotalCount"], 1);
    let all = vpc(&s, "DescribeRouteTableList", &[]).await.ok();
    assert_eq!(all["TotalCount"], 2);
    let default = vpc(
        &s,
        "DescribeRouteTableList",
        &[("VpcId", &defaults::vpc_id(REGION))],
    )
    .await
    .ok();
    assert_eq!(
        list(
            &default["RouterTableList"]["RouterTableListType"][0],
            "VSwitchIds",
            "VSwitchId"
        )
        .len(),
        6
    );
    // No custom tables: asking for one finds none.
    let custom = vpc(
        &s,
        "DescribeRouteTableList",
        &[("RouteTableType", "Custom")],
    )
    .await
    .ok();
    assert_eq!(custom["TotalCount"], 0);
    assert!(list(&custom, "RouterTableList", "RouterTableListType").is_empty());
    // Gone with its VPC.
    vpc(&s, "DeleteVpc", &[("VpcId", id)]).await.ok();
    let after = vpc(&s, "DescribeRouteTableList", &[("VpcId", id)])
        .await
        .ok();
    assert_eq!(after["TotalCount"], 0);
}

#[tokio::test]
async fn describe_vpcs_lists_every_list_and_the_default_network_has_a_real_creation_time() {
    let before = jiff::Timestamp::now();
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let vpcs = vpc(&s, "DescribeVpcs", &[]).await.ok();
    let v = &vpcs["Vpcs"]["Vpc"][0];
    for (wrapper, inner) in [
        ("SecondaryCidrBlocks", "SecondaryCidrBlock"),
        ("UserCidrs", "UserCidr"),
        ("NatGatewayIds", "NatGatewayIds"),
        ("Ipv6CidrBlocks", "Ipv6CidrBlock"),
        ("Tags", "Tag"),
    ] {
        assert!(list(v, wrapper, inner).is_empty(), "{wrapper}");
    }
    assert_eq!(list(v, "RouterTableIds", "RouterTableIds").len(), 1);
    assert!(v["OwnerId"].is_u64(), "{v}");
    let created: jiff::Timestamp = v["CreationTime"].as_str().unwrap().parse().unwrap();
    // Second precision: the account was first seen within this test.
    assert!(
        created.as_second() >= before.as_second(),
        "{created} < {before}"
    );
    let switches = vpc(&s, "DescribeVSwitches", &[]).await.ok();
    let first = &switches["VSwitches"]["VSwitch"][0];
    let created: jiff::Timestamp = first["CreationTime"].as_str().unwrap().parse().unwrap();
    assert!(created.as_second() >= before.as_second());
    assert!(first["OwnerId"].is_u64());
}

#[tokio::test]
async fn an_errors_recommend_names_the_product_that_answered() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let recommend = |r: &Resp| r.body["Recommend"].as_str().unwrap_or_default().to_owned();
    let vpc_error = vpc(&s, "DescribeVpcAttribute", &[("VpcId", "vpc-nope")]).await;
    assert!(
        recommend(&vpc_error).contains("q=InvalidVpcID.NotFound&product=Vpc&"),
        "{}",
        vpc_error.body
    );
    let ecs_error = s.ecs("DescribeUserData", &[("RegionId", REGION)]).await;
    assert!(
        recommend(&ecs_error).contains("&product=Ecs&"),
        "{}",
        ecs_error.body
    );
    let sts_error = s.post("AssumeRole", STS, &[]).await;
    assert!(sts_error.status >= 400);
    assert!(
        recommend(&sts_error).contains("&product=Sts&"),
        "{}",
        sts_error.body
    );
}
