//! What a create with the fewest parameters is described with, per resource type, compared with
//! the defaults Alibaba's API reference documents for the fields the call left out (so a
//! client that relies on them, such as Terraform's plan, sees no change the user did not ask for).

use std::time::Duration;

use ferroplane_testkit::mock_requests::*;
use serde_json::{Value, json};

const VPC: &str = "2016-04-28";

async fn ecs(s: &Signer, action: &str, params: &[(&str, &str)]) -> Resp {
    let mut all = vec![("RegionId", REGION)];
    all.extend_from_slice(params);
    s.ecs(action, &all).await
}

async fn vpc(s: &Signer, action: &str, params: &[(&str, &str)]) -> Resp {
    let mut all = vec![("RegionId", REGION)];
    all.extend_from_slice(params);
    s.post(action, VPC, &all).await
}

/// Every `(field, value)` of `documented` is what `described` shows.
#[track_caller]
fn assert_defaults(kind: &str, described: &Value, documented: &[(&str, Value)]) {
    let differing: Vec<String> = documented
        .iter()
        .filter(|(field, value)| described[*field] != *value)
        .map(|(field, value)| {
            format!(
                "{field}: documented {value}, described {}",
                described[*field]
            )
        })
        .collect();
    assert!(differing.is_empty(), "{kind}: {differing:#?}\n{described}");
}

#[tokio::test]
async fn a_disk_created_with_zone_and_size_has_the_documented_defaults() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let id = ecs(
        &s,
        "CreateDisk",
        &[("ZoneId", "cn-hangzhou-h"), ("Size", "20")],
    )
    .await
    .ok()["DiskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let disks = ecs(&s, "DescribeDisks", &[("DiskIds", &format!("[\"{id}\"]"))])
        .await
        .ok();
    assert_defaults(
        "CreateDisk",
        &disks["Disks"]["Disk"][0],
        &[
            ("Category", json!("cloud")),
            ("Type", json!("data")),
            ("Status", json!("Available")),
            ("DiskName", json!("")),
            ("Description", json!("")),
            ("Encrypted", json!(false)),
            ("PerformanceLevel", json!("")),
            ("DeleteWithInstance", json!(false)),
            ("DeleteAutoSnapshot", json!(false)),
            ("EnableAutoSnapshot", json!(true)),
            ("Portable", json!(true)),
            ("DiskChargeType", json!("PostPaid")),
            ("MultiAttach", json!("Disabled")),
            ("Tags", json!({"Tag": []})),
        ],
    );
}

#[tokio::test]
async fn an_instances_system_disk_keeps_its_auto_snapshots_by_default() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let id = s.run(&[]).await.remove(0);
    let disks = ecs(&s, "DescribeDisks", &[("InstanceId", &id)]).await.ok();
    assert_defaults(
        "RunInstances system disk",
        &disks["Disks"]["Disk"][0],
        &[
            ("Type", json!("system")),
            ("DeleteWithInstance", json!(true)),
            ("DeleteAutoSnapshot", json!(false)),
            ("EnableAutoSnapshot", json!(true)),
        ],
    );
}

#[tokio::test]
async fn an_instance_run_with_the_fewest_parameters_has_the_documented_defaults() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let id = s.run(&[]).await.remove(0);
    let described = s.describe(&[("InstanceIds", &format!("[\"{id}\"]"))]).await;
    let i = &described["Instances"]["Instance"][0];
    assert_defaults(
        "RunInstances",
        i,
        &[
            ("InstanceName", json!(id)),
            ("Description", json!("")),
            ("InstanceChargeType", json!("PostPaid")),
            ("InternetChargeType", json!("PayByTraffic")),
            ("InternetMaxBandwidthOut", json!(0)),
            ("SpotStrategy", json!("NoSpot")),
            ("DeletionProtection", json!(false)),
            ("KeyPairName", json!("")),
            ("DeploymentSetId", json!("")),
            ("CreditSpecification", json!("")),
            ("AutoReleaseTime", json!("")),
            ("PublicIpAddress", json!({"IpAddress": []})),
            (
                "EipAddress",
                json!({
                    "AllocationId": "",
                    "Bandwidth": 0,
                    "IpAddress": "",
                    "InternetChargeType": "",
                    "IsSupportUnassociate": false,
                }),
            ),
            (
                "MetadataOptions",
                json!({"HttpEndpoint": "enabled", "HttpTokens": "optional", "HttpPutResponseHopLimit": 1}),
            ),
        ],
    );
}

#[tokio::test]
async fn network_resources_created_with_the_fewest_parameters_have_the_documented_defaults() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let vpc_id = vpc(&s, "CreateVpc", &[]).await.ok()["VpcId"]
        .as_str()
        .unwrap()
        .to_owned();
    let described = vpc(&s, "DescribeVpcAttribute", &[("VpcId", &vpc_id)])
        .await
        .ok();
    assert_defaults(
        "CreateVpc",
        &described,
        &[
            ("CidrBlock", json!("172.16.0.0/12")),
            ("VpcName", json!("")),
            ("Description", json!("")),
            ("IsDefault", json!(false)),
            ("EnabledIpv6", json!(false)),
            ("Ipv6CidrBlock", json!("")),
            ("ClassicLinkEnabled", json!(false)),
            ("SecondaryCidrBlocks", json!({"SecondaryCidrBlock": []})),
            ("UserCidrs", json!({"UserCidr": []})),
            ("Tags", json!({"Tag": []})),
        ],
    );
    let vswitch_id = vpc(
        &s,
        "CreateVSwitch",
        &[
            ("VpcId", &vpc_id),
            ("ZoneId", "cn-hangzhou-h"),
            ("CidrBlock", "172.16.0.0/24"),
        ],
    )
    .await
    .ok()["VSwitchId"]
        .as_str()
        .unwrap()
        .to_owned();
    let described = vpc(
        &s,
        "DescribeVSwitchAttributes",
        &[("VSwitchId", &vswitch_id)],
    )
    .await
    .ok();
    assert_defaults(
        "CreateVSwitch",
        &described,
        &[
            ("VSwitchName", json!("")),
            ("Description", json!("")),
            ("IsDefault", json!(false)),
            ("EnabledIpv6", json!(false)),
            ("Ipv6CidrBlock", json!("")),
            ("AvailableIpAddressCount", json!(252)),
            ("Tags", json!({"Tag": []})),
        ],
    );
    let group = ecs(&s, "CreateSecurityGroup", &[("VpcId", &vpc_id)])
        .await
        .ok()["SecurityGroupId"]
        .as_str()
        .unwrap()
        .to_owned();
    let listed = ecs(&s, "DescribeSecurityGroups", &[("SecurityGroupId", &group)])
        .await
        .ok();
    assert_defaults(
        "CreateSecurityGroup",
        &listed["SecurityGroups"]["SecurityGroup"][0],
        &[
            ("SecurityGroupType", json!("normal")),
            ("SecurityGroupName", json!("")),
            ("Description", json!("")),
            ("ServiceManaged", json!(false)),
            ("RuleCount", json!(0)),
            ("Tags", json!({"Tag": []})),
        ],
    );
    let attribute = ecs(
        &s,
        "DescribeSecurityGroupAttribute",
        &[("SecurityGroupId", &group)],
    )
    .await
    .ok();
    assert_defaults(
        "CreateSecurityGroup",
        &attribute,
        &[
            ("InnerAccessPolicy", json!("Accept")),
            ("Permissions", json!({"Permission": []})),
        ],
    );
}

#[tokio::test]
async fn a_key_pair_created_with_its_name_only_has_the_documented_defaults() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    ecs(&s, "CreateKeyPair", &[("KeyPairName", "defaults")])
        .await
        .ok();
    let listed = ecs(&s, "DescribeKeyPairs", &[("KeyPairName", "defaults")])
        .await
        .ok();
    assert_defaults(
        "CreateKeyPair",
        &listed["KeyPairs"]["KeyPair"][0],
        &[
            ("KeyPairName", json!("defaults")),
            ("ResourceGroupId", json!("")),
            ("Tags", json!({"Tag": []})),
        ],
    );
}
