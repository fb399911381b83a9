//! A private IP asked for at launch and `ModifyInstanceVpcAttribute`, through alibaba-sdk against
//! the mock, with ECS's rules: the address lies in the vSwitch's block and is free, the instance
//! is Stopped to move, the new vSwitch is in the instance's zone and VPC.

use std::time::Duration;

use alibaba_mock::{MockConfig, MockServer, defaults};
use alibaba_sdk::credentials::Credentials;
use alibaba_sdk::ecs::{EcsClient, RunInstancesRequest};
use alibaba_sdk::endpoint::parse_endpoint;
use alibaba_sdk::vpc::{CreateVSwitchRequest, VpcClient};

const AK: &str = "vpc-attr-ak";
const SK: &str = "vpc-attr-secret";
const REGION: &str = "cn-hangzhou";
const IMAGE: &str = "centos_7_8_x64_20G_alibase_20200519.vhd";

async fn setup() -> (MockServer, EcsClient, VpcClient) {
    let mock = MockServer::start(MockConfig::new(AK, SK).with_transition_delay(Duration::ZERO))
        .await
        .expect("mock starts");
    let ecs = EcsClient::builder(REGION)
        .endpoint(mock.endpoint())
        .credentials(Credentials::new(AK, SK))
        .build()
        .expect("client");
    let vpc = VpcClient::with_settings_of(&ecs, parse_endpoint(&mock.endpoint()).expect("url"))
        .expect("VPC client");
    (mock, ecs, vpc)
}

fn request(name: &str, private_ip: Option<&str>) -> RunInstancesRequest {
    RunInstancesRequest {
        image_id: IMAGE.into(),
        instance_type: "ecs.g6.large".into(),
        instance_name: Some(name.into()),
        vswitch_id: defaults::first_vswitch_id(REGION),
        security_group_ids: vec![defaults::security_group_id(REGION)],
        private_ip_address: private_ip.map(str::to_owned),
        ..RunInstancesRequest::default()
    }
}

fn code(e: &alibaba_sdk::Error) -> &str {
    e.code().unwrap_or_default()
}

async fn private_ip(ecs: &EcsClient, id: &str) -> (String, String) {
    let i = ecs
        .describe_instance_attribute(id)
        .await
        .expect("described");
    (
        i.vpc_attributes.vswitch_id.clone(),
        i.vpc_attributes.private_ip_address.items[0].clone(),
    )
}

#[tokio::test]
async fn a_private_ip_at_launch_must_be_in_the_vswitch_and_free() {
    let (mock, ecs, _) = setup().await;
    // The first default vSwitch is 172.16.0.0/20.
    let r = ecs
        .run_instances(&request("ip-1", Some("172.16.3.7")))
        .await
        .expect("launched");
    let id = r.instance_ids()[0].clone();
    assert_eq!(private_ip(&ecs, &id).await.1, "172.16.3.7");
    let cases = [
        ("172.16.3.7", "InvalidPrivateIpAddress.Duplicated"),
        ("10.0.0.5", "InvalidPrivateIpAddress"),
        ("172.16.15.254", "InvalidPrivateIpAddress"),
        ("172.16.3", "InvalidPrivateIpAddress.Malformed"),
    ];
    for (ip, want) in cases {
        let err = ecs
            .run_instances(&request("ip-2", Some(ip)))
            .await
            .expect_err(ip);
        assert_eq!(code(&err), want, "{ip}");
    }
    let mut two = request("ip-3", Some("172.16.3.8"));
    two.amount = Some(2);
    let err = ecs
        .run_instances(&two)
        .await
        .expect_err("two with one address");
    assert_eq!(code(&err), "InvalidPrivateIpAddress.Duplicated");
    // An address the mock picks never collides with one asked for.
    let r = ecs
        .run_instances(&request("ip-4", None))
        .await
        .expect("launched");
    assert_ne!(private_ip(&ecs, &r.instance_ids()[0]).await.1, "172.16.3.7");
    mock.shutdown().await;
}

#[tokio::test]
async fn a_stopped_instance_moves_to_another_vswitch_of_its_zone() {
    let (mock, ecs, vpc) = setup().await;
    let first = defaults::first_vswitch_id(REGION).expect("region in the catalogue");
    let switches = vpc
        .describe_vswitches(None, Some(&defaults::vpc_id(REGION)), &[])
        .await
        .expect("default vSwitches");
    let first_zone = switches
        .iter()
        .find(|v| v.vswitch_id == first)
        .expect("the first default vSwitch")
        .zone_id
        .clone();
    let other_zone_vswitch = switches
        .iter()
        .find(|v| v.zone_id != first_zone)
        .expect("a vSwitch in another zone")
        .vswitch_id
        .clone();
    let created = vpc
        .create_vswitch(&CreateVSwitchRequest {
            vpc_id: defaults::vpc_id(REGION),
            zone_id: first_zone.clone(),
            cidr_block: "172.31.1.0/24".into(),
            vswitch_name: Some("moved-to".into()),
            description: None,
            tags: Vec::new(),
            client_token: None,
            ipv6_cidr_block: None,
        })
        .await
        .expect("vSwitch created");
    let target = created.vswitch_id;
    let id = ecs
        .run_instances(&request("move-1", None))
        .await
        .expect("launched")
        .instance_ids()[0]
        .clone();

    // Running: refused.
    let err = ecs
        .modify_instance_vpc_attribute(&id, &target, None)
        .await
        .expect_err("a Running instance does not move");
    assert_eq!(code(&err), "IncorrectInstanceStatus");
    ecs.stop_instance(&id, false, None).await.expect("stopped");
    let cases = [
        (
            other_zone_vswitch.as_str(),
            None,
            "InvalidVSwitchId.Mismatch",
        ),
        (
            "vsw-doesnotexist0000000000",
            None,
            "InvalidVSwitchId.NotFound",
        ),
        (
            target.as_str(),
            Some("172.16.3.9"),
            "InvalidPrivateIpAddress.Mismatch",
        ),
    ];
    for (vswitch, ip, want) in cases {
        let err = ecs
            .modify_instance_vpc_attribute(&id, vswitch, ip)
            .await
            .expect_err(want);
        assert_eq!(code(&err), want, "{vswitch} {ip:?}");
    }
    ecs.modify_instance_vpc_attribute(&id, &target, Some("172.31.1.20"))
        .await
        .expect("moved");
    assert_eq!(
        private_ip(&ecs, &id).await,
        (target.clone(), "172.31.1.20".to_owned())
    );
    // A new address in the same vSwitch; without one, the instance keeps its own.
    ecs.modify_instance_vpc_attribute(&id, &target, Some("172.31.1.21"))
        .await
        .expect("readdressed");
    ecs.modify_instance_vpc_attribute(&id, &target, None)
        .await
        .expect("unchanged");
    assert_eq!(private_ip(&ecs, &id).await.1, "172.31.1.21");
    mock.shutdown().await;
}

/// A VPC with IPv6, a vSwitch with an IPv6 `/64` in the region's first zone, and a security
/// group of that VPC: (vSwitch, security group).
async fn ipv6_network(ecs: &EcsClient, vpc: &VpcClient, zone_id: &str) -> (String, String) {
    let vpc_id = vpc
        .create_vpc(&alibaba_sdk::vpc::CreateVpcRequest {
            cidr_block: Some("10.0.0.0/16".into()),
            enable_ipv6: true,
            ..Default::default()
        })
        .await
        .expect("IPv6 VPC")
        .vpc_id;
    let vswitch = vpc
        .create_vswitch(&CreateVSwitchRequest {
            vpc_id: vpc_id.clone(),
            zone_id: zone_id.to_owned(),
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
    (vswitch, group)
}

fn eni_of(id: &str) -> String {
    format!("eni-{}", id.trim_start_matches("i-"))
}

async fn ipv6_of(ecs: &EcsClient, id: &str) -> Vec<String> {
    let i = ecs
        .describe_instance_attribute(id)
        .await
        .expect("described");
    i.network_interfaces.items[0]
        .ipv6_sets
        .items
        .iter()
        .map(|a| a.ipv6_address.clone())
        .collect()
}

#[tokio::test]
async fn ipv6_addresses_need_a_vswitch_with_ipv6_and_fit_the_type() {
    let (mock, ecs, vpc) = setup().await;
    // The default vSwitches have no IPv6.
    let plain = ecs
        .run_instances(&request("v6-0", None))
        .await
        .expect("launched")
        .instance_ids()[0]
        .clone();
    let err = ecs
        .assign_ipv6_addresses(&eni_of(&plain), 1)
        .await
        .expect_err("no IPv6 on the default vSwitch");
    assert_eq!(code(&err), "InvalidVSwitch.Ipv6NotTurnOn");
    let err = ecs
        .assign_ipv6_addresses("eni-doesnotexist", 1)
        .await
        .expect_err("unknown interface");
    assert_eq!(code(&err), "InvalidEniId.NotFound");

    let zone = ecs
        .describe_instance_attribute(&plain)
        .await
        .expect("described")
        .zone_id;
    let (vswitch, group) = ipv6_network(&ecs, &vpc, &zone).await;
    let mut r = request("v6-1", None);
    r.vswitch_id = Some(vswitch);
    r.security_group_ids = vec![group];
    let id = ecs
        .run_instances(&r)
        .await
        .expect("launched")
        .instance_ids()[0]
        .clone();
    ecs.assign_ipv6_addresses(&eni_of(&id), 2)
        .await
        .expect("two addresses");
    let held = ipv6_of(&ecs, &id).await;
    assert_eq!(held.len(), 2);

    // Ipv6AddressCount at RunInstances: free addresses of the vSwitch, with Assign's rules.
    let mut at_launch = r.clone();
    at_launch.instance_name = Some("v6-launch".into());
    at_launch.ipv6_address_count = Some(3);
    let launched = ecs
        .run_instances(&at_launch)
        .await
        .expect("launched with IPv6")
        .instance_ids()[0]
        .clone();
    let own = ipv6_of(&ecs, &launched).await;
    assert_eq!(own.len(), 3, "{own:?}");
    assert!(own.iter().all(|a| !held.contains(a)), "{own:?} vs {held:?}");
    at_launch.instance_name = Some("v6-launch-2".into());
    at_launch.ipv6_address_count = Some(11);
    let err = ecs
        .run_instances(&at_launch)
        .await
        .expect_err("over the type's limit");
    assert_eq!(code(&err), "InvalidOperation.Ipv6CountExceeded");
    let mut no_v6 = request("v6-launch-3", None);
    no_v6.ipv6_address_count = Some(1);
    let err = ecs
        .run_instances(&no_v6)
        .await
        .expect_err("no IPv6 on the default vSwitch");
    assert_eq!(code(&err), "InvalidVSwitch.Ipv6NotTurnOn");
    assert!(held.iter().all(|a| a.starts_with("2408:4005:")), "{held:?}");
    // ecs.g6.large (2 vCPUs) holds at most 10 in the mock.
    let err = ecs
        .assign_ipv6_addresses(&eni_of(&id), 9)
        .await
        .expect_err("over the type's limit");
    assert_eq!(code(&err), "InvalidOperation.Ipv6CountExceeded");
    ecs.unassign_ipv6_addresses(&eni_of(&id), &held[1..])
        .await
        .expect("released");
    assert_eq!(ipv6_of(&ecs, &id).await, held[..1].to_vec());
    let err = ecs
        .unassign_ipv6_addresses(&eni_of(&id), &held[1..])
        .await
        .expect_err("not held any more");
    assert_eq!(code(&err), "InvalidIp.Address");

    // Its remaining IPv6 address belongs to its vSwitch's block: no move to another vSwitch.
    let own_vswitch = r.vswitch_id.clone().expect("launched on a vSwitch");
    let vpc_id = vpc
        .describe_vswitches(Some(&own_vswitch), None, &[])
        .await
        .expect("described")[0]
        .vpc_id
        .clone();
    let other = vpc
        .create_vswitch(&CreateVSwitchRequest {
            vpc_id,
            zone_id: zone.clone(),
            cidr_block: "10.0.2.0/24".into(),
            ipv6_cidr_block: Some(2),
            ..Default::default()
        })
        .await
        .expect("a second IPv6 vSwitch")
        .vswitch_id;
    ecs.stop_instance(&id, false, None).await.expect("stopped");
    let err = ecs
        .modify_instance_vpc_attribute(&id, &other, None)
        .await
        .expect_err("IPv6 addresses of the old block are held");
    assert_eq!(code(&err), "InvalidIp.Ipv6Assigned");
    ecs.unassign_ipv6_addresses(&eni_of(&id), &held[..1])
        .await
        .expect("released");
    ecs.modify_instance_vpc_attribute(&id, &other, None)
        .await
        .expect("moved once no IPv6 address is held");
    mock.shutdown().await;
}
