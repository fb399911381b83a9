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
