//! EIPs in the mock's VPC API: allocation with its parameter rules, dry runs and ClientToken
//! replays; describe filters and tags; in-place changes; association with an ECS instance (one
//! at a time, in its region, never with an instance that has a public IP, asynchronous); no
//! release while associated; the instance's view and the mock's records and ledger.

use std::time::Duration;

use alibaba_mock::{Change, MockConfig, MockServer, ResourceKind};
use ferroplane_testkit::eventually;
use ferroplane_testkit::mock_requests::*;
use serde_json::Value;

const VPC: &str = "2016-04-28";

async fn vpc(s: &Signer, action: &str, params: &[(&str, &str)]) -> Resp {
    let mut all = vec![("RegionId", REGION)];
    all.extend_from_slice(params);
    s.post(action, VPC, &all).await
}

async fn allocate(s: &Signer, params: &[(&str, &str)]) -> (String, String) {
    let r = vpc(s, "AllocateEipAddress", params).await.ok();
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

/// A running instance of the default network; with `bandwidth`, a public IP of its own.
async fn instance(s: &Signer, bandwidth: Option<&str>) -> String {
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
    ids(&s.ecs("RunInstances", &params).await.ok()).remove(0)
}

async fn wait_running(mock: &MockServer, id: &str) {
    eventually(format!("{id} Running"))
        .within(Duration::from_secs(10))
        .until(|| mock.instance_status(id).as_deref() == Some("Running"))
        .await;
}

#[tokio::test]
async fn allocation_follows_the_apis_rules() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    vpc(&s, "AllocateEipAddress", &[("Bandwidth", "0")])
        .await
        .expect_error(400, "InvalidParameter");
    vpc(
        &s,
        "AllocateEipAddress",
        &[("InternetChargeType", "PayByTraffic"), ("Bandwidth", "201")],
    )
    .await
    .expect_error(400, "InvalidParameter");
    vpc(&s, "AllocateEipAddress", &[("Bandwidth", "500")])
        .await
        .ok();
    vpc(&s, "AllocateEipAddress", &[("ISP", "BGP_PRO")])
        .await
        .expect_error(400, "InvalidParameter");
    vpc(&s, "AllocateEipAddress", &[("Name", "1st")])
        .await
        .expect_error(400, "InvalidName.Malformed");
    vpc(&s, "AllocateEipAddress", &[("ResourceGroupId", "rg-nope")])
        .await
        .expect_error(400, "InvalidResourceGroupId");
    vpc(
        &s,
        "AllocateEipAddress",
        &[("InstanceChargeType", "PrePaid")],
    )
    .await
    .expect_error(400, "InvalidInstanceChargeType.ValueNotSupported");
    vpc(&s, "AllocateEipAddress", &[("DryRun", "true")])
        .await
        .expect_error(400, "DryRunOperation");
    let listed = vpc(&s, "DescribeEipAddresses", &[]).await.ok();
    assert_eq!(listed["TotalCount"], 1, "only the 500 Mbit/s EIP: {listed}");

    // ClientToken: the same call answers the same EIP; other parameters are refused.
    let first = allocate(&s, &[("ClientToken", "tok-1"), ("Name", "web")]).await;
    let again = allocate(&s, &[("ClientToken", "tok-1"), ("Name", "web")]).await;
    assert_eq!(first, again);
    vpc(
        &s,
        "AllocateEipAddress",
        &[("ClientToken", "tok-1"), ("Name", "other")],
    )
    .await
    .expect_error(400, "IdempotentParameterMismatch");
    let e = eip(&s, &first.0).await;
    assert_eq!(
        (
            e["Status"].as_str(),
            e["Bandwidth"].as_str(),
            e["ISP"].as_str()
        ),
        (Some("Available"), Some("5"), Some("BGP"))
    );
    assert_eq!(e["InternetChargeType"], "PayByBandwidth");
    assert_eq!(e["IpAddress"], first.1.as_str());

    // The quota: 20 per region.
    for _ in 0..18 {
        allocate(&s, &[]).await;
    }
    vpc(&s, "AllocateEipAddress", &[])
        .await
        .expect_error(400, "QuotaExceeded.Eip");
}

#[tokio::test]
async fn tags_filters_and_in_place_changes() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let (id, _) = allocate(&s, &[("InternetChargeType", "PayByTraffic")]).await;
    let (other, _) = allocate(&s, &[]).await;
    vpc(
        &s,
        "TagResources",
        &[
            ("ResourceType", "EIP"),
            ("ResourceId.1", &id),
            ("Tag.1.Key", "team"),
            ("Tag.1.Value", "a"),
        ],
    )
    .await
    .ok();
    let tagged = vpc(
        &s,
        "DescribeEipAddresses",
        &[("Tag.1.Key", "team"), ("Tag.1.Value", "a")],
    )
    .await
    .ok();
    assert_eq!(tagged["TotalCount"], 1);
    assert_eq!(
        tagged["EipAddresses"]["EipAddress"][0]["AllocationId"],
        id.as_str()
    );
    assert_eq!(
        tagged["EipAddresses"]["EipAddress"][0]["Tags"]["Tag"][0]["Key"],
        "team"
    );
    vpc(
        &s,
        "UnTagResources",
        &[
            ("ResourceType", "EIP"),
            ("ResourceId.1", &id),
            ("TagKey.1", "team"),
        ],
    )
    .await
    .ok();
    assert!(
        eip(&s, &id).await["Tags"]["Tag"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    vpc(
        &s,
        "TagResources",
        &[
            ("ResourceType", "EIP"),
            ("ResourceId.1", "eip-nope"),
            ("Tag.1.Key", "k"),
        ],
    )
    .await
    .expect_error(404, "InvalidAllocationId.NotFound");

    // By traffic: at most 200 Mbit/s.
    vpc(
        &s,
        "ModifyEipAddressAttribute",
        &[("AllocationId", &id), ("Bandwidth", "300")],
    )
    .await
    .expect_error(400, "InvalidParameter");
    vpc(
        &s,
        "ModifyEipAddressAttribute",
        &[
            ("AllocationId", &id),
            ("Bandwidth", "200"),
            ("Name", "web"),
            ("Description", "Front"),
        ],
    )
    .await
    .ok();
    let e = eip(&s, &id).await;
    assert_eq!(
        (
            e["Bandwidth"].as_str(),
            e["Name"].as_str(),
            e["Description"].as_str()
        ),
        (Some("200"), Some("web"), Some("Front"))
    );
    // Another account sees none of them.
    mock.add_access_key(alibaba_mock::AccessKey::new("ak-2", "sk-2", "2222"));
    let stranger = Signer::with_key(&mock, "ak-2", "sk-2");
    vpc(
        &stranger,
        "ModifyEipAddressAttribute",
        &[("AllocationId", &other), ("Name", "mine")],
    )
    .await
    .expect_error(404, "InvalidAllocationId.NotFound");
}

#[tokio::test]
async fn an_eip_associates_with_one_instance_of_its_region_and_is_released_only_when_free() {
    let mock = start(Duration::from_millis(1000)).await;
    let s = Signer::new(&mock);
    let (id, address) = allocate(&s, &[]).await;
    let (second, _) = allocate(&s, &[]).await;
    let plain = instance(&s, None).await;
    let public = instance(&s, Some("5")).await;
    // Not yet Running.
    vpc(
        &s,
        "AssociateEipAddress",
        &[("AllocationId", &id), ("InstanceId", &plain)],
    )
    .await
    .expect_error(400, "IncorrectInstanceStatus");
    wait_running(&mock, &plain).await;
    wait_running(&mock, &public).await;
    // An instance with a public IP of its own takes none.
    vpc(
        &s,
        "AssociateEipAddress",
        &[("AllocationId", &id), ("InstanceId", &public)],
    )
    .await
    .expect_error(400, "InvalidAssociation.Duplicated");
    vpc(
        &s,
        "AssociateEipAddress",
        &[("AllocationId", &id), ("InstanceId", "i-nope")],
    )
    .await
    .expect_error(404, "InvalidInstanId.NotFound");
    vpc(
        &s,
        "AssociateEipAddress",
        &[
            ("AllocationId", &id),
            ("InstanceId", &plain),
            ("InstanceType", "SlbInstance"),
        ],
    )
    .await
    .expect_error(400, "InvalidInstanceType.ValueNotSupported");
    vpc(
        &s,
        "AssociateEipAddress",
        &[
            ("AllocationId", &id),
            ("InstanceId", &plain),
            ("DryRun", "true"),
        ],
    )
    .await
    .expect_error(400, "DryRunOperation");
    let associate = [
        ("AllocationId", id.as_str()),
        ("InstanceId", plain.as_str()),
        ("ClientToken", "assoc-1"),
    ];
    vpc(&s, "AssociateEipAddress", &associate).await.ok();
    assert_eq!(eip(&s, &id).await["Status"], "Associating");
    // A repeat with the token is answered again; without one it is refused while it moves.
    vpc(&s, "AssociateEipAddress", &associate).await.ok();
    vpc(
        &s,
        "AssociateEipAddress",
        &[("AllocationId", &id), ("InstanceId", &plain)],
    )
    .await
    .expect_error(400, "IncorrectEipStatus");
    // Nothing changes while it moves.
    vpc(
        &s,
        "ModifyEipAddressAttribute",
        &[("AllocationId", &id), ("Name", "web")],
    )
    .await
    .expect_error(400, "IncorrectEipStatus");
    eventually("InUse")
        .within(Duration::from_secs(5))
        .until_async(|| async { eip(&s, &id).await["Status"] == "InUse" })
        .await;
    let e = eip(&s, &id).await;
    assert_eq!(
        (e["InstanceId"].as_str(), e["InstanceType"].as_str()),
        (Some(plain.as_str()), Some("EcsInstance"))
    );
    // The instance shows it; it takes no second EIP.
    let attr = s
        .ecs("DescribeInstanceAttribute", &[("InstanceId", &plain)])
        .await
        .ok();
    assert_eq!(attr["EipAddress"]["AllocationId"], id.as_str());
    assert_eq!(attr["EipAddress"]["IpAddress"], address.as_str());
    vpc(
        &s,
        "AssociateEipAddress",
        &[("AllocationId", &second), ("InstanceId", &plain)],
    )
    .await
    .expect_error(400, "InvalidAssociation.Duplicated");
    // Associated: not released.
    vpc(&s, "ReleaseEipAddress", &[("AllocationId", &id)])
        .await
        .expect_error(400, "IncorrectEipStatus");
    vpc(
        &s,
        "UnassociateEipAddress",
        &[("AllocationId", &id), ("InstanceId", &public)],
    )
    .await
    .expect_error(400, "InvalidBindingStatus");
    vpc(
        &s,
        "UnassociateEipAddress",
        &[("AllocationId", &id), ("InstanceId", &plain)],
    )
    .await
    .ok();
    assert_eq!(eip(&s, &id).await["Status"], "Unassociating");
    vpc(&s, "ReleaseEipAddress", &[("AllocationId", &id)])
        .await
        .expect_error(400, "IncorrectEipStatus");
    eventually("Available")
        .within(Duration::from_secs(5))
        .until_async(|| async { eip(&s, &id).await["Status"] == "Available" })
        .await;
    vpc(&s, "UnassociateEipAddress", &[("AllocationId", &id)])
        .await
        .expect_error(400, "IncorrectEipStatus");
    let attr = s
        .ecs("DescribeInstanceAttribute", &[("InstanceId", &plain)])
        .await
        .ok();
    assert_eq!(attr["EipAddress"]["AllocationId"], "");
    vpc(&s, "ReleaseEipAddress", &[("AllocationId", &id)])
        .await
        .ok();
    vpc(&s, "ReleaseEipAddress", &[("AllocationId", &id)])
        .await
        .expect_error(404, "InvalidAllocationId.NotFound");
}

#[tokio::test]
async fn an_eip_is_associated_only_in_its_region() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let plain = instance(&s, None).await;
    wait_running(&mock, &plain).await;
    let other_region = s
        .post("AllocateEipAddress", VPC, &[("RegionId", "cn-beijing")])
        .await
        .ok();
    let id = other_region["AllocationId"].as_str().unwrap();
    s.post(
        "AssociateEipAddress",
        VPC,
        &[
            ("RegionId", "cn-beijing"),
            ("AllocationId", id),
            ("InstanceId", &plain),
        ],
    )
    .await
    .expect_error(400, "InvalidParameter.Mismatch");
}

#[tokio::test]
async fn records_and_ledger_show_eips_and_associations_with_lag() {
    let mock = MockServer::start(
        MockConfig::new(AK, SECRET)
            .with_transition_delay(Duration::ZERO)
            .with_visibility_lag(Duration::from_millis(400)),
    )
    .await
    .unwrap();
    let s = Signer::new(&mock);
    let (id, _) = allocate(&s, &[]).await;
    // Allocated, not listed until the lag has passed.
    let listed = vpc(&s, "DescribeEipAddresses", &[]).await.ok();
    assert_eq!(listed["TotalCount"], 0);
    eventually("the EIP is listed")
        .within(Duration::from_secs(5))
        .until_async(|| async {
            vpc(&s, "DescribeEipAddresses", &[]).await.ok()["TotalCount"] == 1
        })
        .await;
    let plain = instance(&s, None).await;
    wait_running(&mock, &plain).await;
    vpc(
        &s,
        "AssociateEipAddress",
        &[("AllocationId", &id), ("InstanceId", &plain)],
    )
    .await
    .ok();
    let association = format!("{id}:{plain}");
    let records = mock.resources();
    assert!(
        records
            .iter()
            .any(|r| r.kind == ResourceKind::Eip && r.id == id)
    );
    assert!(
        records
            .iter()
            .any(|r| r.kind == ResourceKind::EipAssociation && r.id == association)
    );
    vpc(&s, "UnassociateEipAddress", &[("AllocationId", &id)])
        .await
        .ok();
    vpc(&s, "ReleaseEipAddress", &[("AllocationId", &id)])
        .await
        .ok();
    // Released: gone from the records at once, listed as Releasing for the lag.
    assert!(!mock.resources().iter().any(|r| r.id == id));
    let listed = vpc(&s, "DescribeEipAddresses", &[("AllocationId", &id)])
        .await
        .ok();
    assert_eq!(
        listed["EipAddresses"]["EipAddress"][0]["Status"],
        "Releasing"
    );
    let changes: Vec<(String, ResourceKind, Change)> = mock
        .ledger()
        .into_iter()
        .filter(|e| e.resource_id.starts_with("eip-"))
        .map(|e| (e.action, e.kind, e.change))
        .collect();
    assert_eq!(
        changes,
        vec![
            (
                "AllocateEipAddress".into(),
                ResourceKind::Eip,
                Change::Created
            ),
            (
                "AssociateEipAddress".into(),
                ResourceKind::Eip,
                Change::Modified
            ),
            (
                "AssociateEipAddress".into(),
                ResourceKind::EipAssociation,
                Change::Created
            ),
            (
                "UnassociateEipAddress".into(),
                ResourceKind::Eip,
                Change::Modified
            ),
            (
                "UnassociateEipAddress".into(),
                ResourceKind::EipAssociation,
                Change::Deleted
            ),
            (
                "ReleaseEipAddress".into(),
                ResourceKind::Eip,
                Change::Deleted
            ),
        ]
    );
}
