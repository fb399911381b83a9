//! EIPs associated with a network interface (`InstanceType=NetworkInterface`): one EIP per
//! private IP of the interface, in NAT mode, asynchronous like the other kinds; every refusal
//! (missing or foreign private IP, unknown interface, other region, other modes, a private IP
//! that already has a public address); both describe actions show the association; releasing
//! the instance leaves the EIP, unassociated.

use std::time::Duration;

use alibaba_mock::MockServer;
use ferroplane_testkit::eventually;
use ferroplane_testkit::mock_requests::*;
use serde_json::Value;

const VPC: &str = "2016-04-28";

async fn vpc(s: &Signer, action: &str, params: &[(&str, &str)]) -> Resp {
    let mut all = vec![("RegionId", REGION)];
    all.extend_from_slice(params);
    s.post(action, VPC, &all).await
}

async fn allocate(s: &Signer) -> (String, String) {
    let r = vpc(s, "AllocateEipAddress", &[]).await.ok();
    (
        r["AllocationId"].as_str().unwrap().to_owned(),
        r["EipAddress"].as_str().unwrap().to_owned(),
    )
}

async fn eip(s: &Signer, id: &str) -> Value {
    let r = vpc(s, "DescribeEipAddresses", &[("AllocationId", id)])
        .await
        .ok();
    r["EipAddresses"]["EipAddress"][0].clone()
}

/// A Running instance of the default network (with `bandwidth`, a public IP of its own), and
/// its primary interface's ID and private IP.
async fn running_instance(mock: &MockServer, s: &Signer, bandwidth: Option<&str>) -> Instance {
    let mut params = vec![
        ("RegionId", REGION),
        ("ImageId", IMAGE),
        ("InstanceType", TYPE),
        ("VSwitchId", VSWITCH),
        ("SecurityGroupId", SECURITY_GROUP),
    ];
    if let Some(b) = bandwidth {
        params.push(("InternetMaxBandwidthOut", b));
    }
    let id = ids(&s.ecs("RunInstances", &params).await.ok()).remove(0);
    eventually(format!("{id} Running"))
        .within(Duration::from_secs(10))
        .until(|| mock.instance_status(&id).as_deref() == Some("Running"))
        .await;
    let eni = interface(s, &id).await;
    Instance {
        eni: eni["NetworkInterfaceId"].as_str().unwrap().to_owned(),
        private_ip: eni["PrivateIpAddress"].as_str().unwrap().to_owned(),
        id,
    }
}

struct Instance {
    id: String,
    eni: String,
    private_ip: String,
}

/// The instance's primary network interface as DescribeNetworkInterfaces lists it.
async fn interface(s: &Signer, instance_id: &str) -> Value {
    let r = s
        .ecs(
            "DescribeNetworkInterfaces",
            &[("RegionId", REGION), ("InstanceId", instance_id)],
        )
        .await
        .ok();
    r["NetworkInterfaceSets"]["NetworkInterfaceSet"][0].clone()
}

fn to_interface<'a>(eip: &'a str, eni: &'a str, ip: &'a str) -> [(&'a str, &'a str); 4] {
    [
        ("AllocationId", eip),
        ("InstanceId", eni),
        ("InstanceType", "NetworkInterface"),
        ("PrivateIpAddress", ip),
    ]
}

#[tokio::test]
async fn an_eip_maps_to_one_private_ip_of_a_network_interface() {
    let mock = start(Duration::from_millis(500)).await;
    let s = Signer::new(&mock);
    let (id, address) = allocate(&s).await;
    let (second, _) = allocate(&s).await;
    let plain = running_instance(&mock, &s, None).await;
    let public = running_instance(&mock, &s, Some("5")).await;
    assert_eq!(plain.eni, format!("eni-{}", &plain.id[2..]));

    // The private IP is required for this type, and must be the interface's.
    vpc(
        &s,
        "AssociateEipAddress",
        &[
            ("AllocationId", &id),
            ("InstanceId", &plain.eni),
            ("InstanceType", "NetworkInterface"),
        ],
    )
    .await
    .expect_error(400, "MissingParameter");
    vpc(
        &s,
        "AssociateEipAddress",
        &to_interface(&id, &plain.eni, "10.0.0.x"),
    )
    .await
    .expect_error(400, "InvalidPrivateIpAddress.Malformed");
    vpc(
        &s,
        "AssociateEipAddress",
        &to_interface(&id, &plain.eni, &public.private_ip),
    )
    .await
    .expect_error(400, "InvalidPrivateIpAddress.NotFound");
    vpc(
        &s,
        "AssociateEipAddress",
        &to_interface(&id, "eni-nope", &plain.private_ip),
    )
    .await
    .expect_error(404, "InvalidEniId.NotFound");
    // An instance ID is not an interface ID.
    vpc(
        &s,
        "AssociateEipAddress",
        &to_interface(&id, &plain.id, &plain.private_ip),
    )
    .await
    .expect_error(404, "InvalidEniId.NotFound");
    // NAT mode only.
    for mode in ["BINDED", "MULTI_BINDED", "nat"] {
        let mut params = to_interface(&id, &plain.eni, &plain.private_ip).to_vec();
        params.push(("Mode", mode));
        vpc(&s, "AssociateEipAddress", &params)
            .await
            .expect_error(400, "InvalidParameter");
    }
    // A private IP with a public IP of its own takes none.
    vpc(
        &s,
        "AssociateEipAddress",
        &to_interface(&id, &public.eni, &public.private_ip),
    )
    .await
    .expect_error(400, "InvalidAssociation.Duplicated");
    let mut dry = to_interface(&id, &plain.eni, &plain.private_ip).to_vec();
    dry.push(("DryRun", "true"));
    vpc(&s, "AssociateEipAddress", &dry)
        .await
        .expect_error(400, "DryRunOperation");
    assert_eq!(eip(&s, &id).await["Status"], "Available");

    let mut associate = to_interface(&id, &plain.eni, &plain.private_ip).to_vec();
    associate.extend([("Mode", "NAT"), ("ClientToken", "eni-1")]);
    vpc(&s, "AssociateEipAddress", &associate).await.ok();
    assert_eq!(eip(&s, &id).await["Status"], "Associating");
    vpc(&s, "AssociateEipAddress", &associate).await.ok();
    eventually("InUse")
        .within(Duration::from_secs(5))
        .until_async(|| async { eip(&s, &id).await["Status"] == "InUse" })
        .await;
    let e = eip(&s, &id).await;
    assert_eq!(
        (
            e["InstanceType"].as_str(),
            e["InstanceId"].as_str(),
            e["PrivateIpAddress"].as_str(),
            e["Mode"].as_str()
        ),
        (
            Some("NetworkInterface"),
            Some(plain.eni.as_str()),
            Some(plain.private_ip.as_str()),
            Some("NAT")
        )
    );
    let by_kind = |kind: &'static str| {
        let s = &s;
        async move {
            vpc(
                s,
                "DescribeEipAddresses",
                &[("AssociatedInstanceType", kind)],
            )
            .await
            .ok()["TotalCount"]
                .clone()
        }
    };
    assert_eq!(by_kind("NetworkInterface").await, 1);
    assert_eq!(by_kind("EcsInstance").await, 0);

    // The interface shows the address, on itself and on its private IP; the instance has no
    // EIP of its own.
    let nic = interface(&s, &plain.id).await;
    let expected = serde_json::json!({"PublicIpAddress": address, "AllocationId": id});
    assert_eq!(nic["AssociatedPublicIp"], expected);
    assert_eq!(
        nic["PrivateIpSets"]["PrivateIpSet"][0]["AssociatedPublicIp"],
        expected
    );
    let attr = s
        .ecs("DescribeInstanceAttribute", &[("InstanceId", &plain.id)])
        .await
        .ok();
    assert_eq!(attr["EipAddress"]["AllocationId"], "");

    // One EIP per private IP, and none for the instance on top of it.
    vpc(
        &s,
        "AssociateEipAddress",
        &to_interface(&second, &plain.eni, &plain.private_ip),
    )
    .await
    .expect_error(400, "InvalidAssociation.Duplicated");
    vpc(
        &s,
        "AssociateEipAddress",
        &[("AllocationId", &second), ("InstanceId", &plain.id)],
    )
    .await
    .expect_error(400, "InvalidAssociation.Duplicated");
    vpc(&s, "ReleaseEipAddress", &[("AllocationId", &id)])
        .await
        .expect_error(400, "IncorrectEipStatus");

    // Unassociation names what it is associated with.
    let mut wrong_ip = to_interface(&id, &plain.eni, &public.private_ip).to_vec();
    wrong_ip.push(("ClientToken", "un-0"));
    vpc(&s, "UnassociateEipAddress", &wrong_ip)
        .await
        .expect_error(400, "InvalidBindingStatus");
    vpc(
        &s,
        "UnassociateEipAddress",
        &[
            ("AllocationId", &id),
            ("InstanceId", &plain.eni),
            ("InstanceType", "EcsInstance"),
        ],
    )
    .await
    .expect_error(400, "InvalidBindingStatus");
    let mut unassociate = to_interface(&id, &plain.eni, &plain.private_ip).to_vec();
    unassociate.push(("ClientToken", "un-1"));
    vpc(&s, "UnassociateEipAddress", &unassociate).await.ok();
    assert_eq!(eip(&s, &id).await["Status"], "Unassociating");
    vpc(&s, "UnassociateEipAddress", &unassociate).await.ok();
    eventually("Available")
        .within(Duration::from_secs(5))
        .until_async(|| async { eip(&s, &id).await["Status"] == "Available" })
        .await;
    let nic = interface(&s, &plain.id).await;
    assert_eq!(nic["AssociatedPublicIp"]["PublicIpAddress"], "");
    vpc(&s, "ReleaseEipAddress", &[("AllocationId", &id)])
        .await
        .ok();
}

#[tokio::test]
async fn an_instances_eip_sits_on_its_primary_interface() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let (id, address) = allocate(&s).await;
    let (second, _) = allocate(&s).await;
    let plain = running_instance(&mock, &s, None).await;
    vpc(
        &s,
        "AssociateEipAddress",
        &[("AllocationId", &id), ("InstanceId", &plain.id)],
    )
    .await
    .ok();
    let nic = interface(&s, &plain.id).await;
    assert_eq!(
        nic["AssociatedPublicIp"],
        serde_json::json!({"PublicIpAddress": address, "AllocationId": id})
    );
    vpc(
        &s,
        "AssociateEipAddress",
        &to_interface(&second, &plain.eni, &plain.private_ip),
    )
    .await
    .expect_error(400, "InvalidAssociation.Duplicated");
}

#[tokio::test]
async fn releasing_the_instance_leaves_its_interfaces_eip_unassociated() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let (id, _) = allocate(&s).await;
    let plain = running_instance(&mock, &s, None).await;
    vpc(
        &s,
        "AssociateEipAddress",
        &to_interface(&id, &plain.eni, &plain.private_ip),
    )
    .await
    .ok();
    assert_eq!(eip(&s, &id).await["Status"], "InUse");
    s.ecs(
        "DeleteInstance",
        &[("InstanceId", &plain.id), ("Force", "true")],
    )
    .await
    .ok();
    let e = eip(&s, &id).await;
    assert_eq!(
        (e["Status"].as_str(), e["InstanceId"].as_str()),
        (Some("Available"), Some(""))
    );
    vpc(&s, "ReleaseEipAddress", &[("AllocationId", &id)])
        .await
        .ok();
}

#[tokio::test]
async fn an_interface_takes_an_eip_of_its_own_region_only() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let plain = running_instance(&mock, &s, None).await;
    let other_region = s
        .post("AllocateEipAddress", VPC, &[("RegionId", "cn-beijing")])
        .await
        .ok();
    let id = other_region["AllocationId"].as_str().unwrap();
    let mut params = vec![("RegionId", "cn-beijing")];
    params.extend(to_interface(id, &plain.eni, &plain.private_ip));
    s.post("AssociateEipAddress", VPC, &params)
        .await
        .expect_error(400, "InvalidParameter.Mismatch");
}
