//! NAT gateways in the mock's VPC API: creation in a vSwitch of its VPC (`Creating`, then
//! `Available`), ClientToken replays, dry runs, tags and in-place changes; EIPs bound with
//! `InstanceType=Nat`; SNAT entries (a bound EIP, one entry per source) and DNAT entries (a bound
//! external address, no duplicate mapping), `Pending` then `Available`; deletion refused while
//! entries or EIPs remain (unless forced), a VPC and a vSwitch kept while a gateway needs them;
//! and the mock's records.

use std::time::Duration;

use alibaba_mock::{MockServer, ResourceKind};
use ferroplane_testkit::eventually;
use ferroplane_testkit::mock_requests::*;
use serde_json::Value;

const VPC: &str = "2016-04-28";

async fn vpc(s: &Signer, action: &str, params: &[(&str, &str)]) -> Resp {
    let mut all = vec![("RegionId", REGION)];
    all.extend_from_slice(params);
    s.post(action, VPC, &all).await
}

fn text(v: &Value, key: &str) -> String {
    v[key].as_str().unwrap_or_default().to_owned()
}

/// A VPC 10.0.0.0/16 with vSwitches 10.0.1.0/24 and 10.0.2.0/24.
async fn network(s: &Signer) -> (String, String, String) {
    let vpc_id = text(
        &vpc(s, "CreateVpc", &[("CidrBlock", "10.0.0.0/16")])
            .await
            .ok(),
        "VpcId",
    );
    let mut switches = Vec::new();
    for block in ["10.0.1.0/24", "10.0.2.0/24"] {
        let r = vpc(
            s,
            "CreateVSwitch",
            &[
                ("VpcId", &vpc_id),
                ("ZoneId", "cn-hangzhou-b"),
                ("CidrBlock", block),
            ],
        )
        .await
        .ok();
        switches.push(text(&r, "VSwitchId"));
    }
    (vpc_id, switches.remove(0), switches.remove(0))
}

async fn gateway(s: &Signer, id: &str) -> Value {
    let r = vpc(s, "DescribeNatGateways", &[("NatGatewayId", id)])
        .await
        .ok();
    r["NatGateways"]["NatGateway"][0].clone()
}

async fn wait_gateway(s: &Signer, id: &str, status: &str) {
    eventually(format!("{id} listed as {status}"))
        .within(Duration::from_secs(5))
        .until_async(|| async { text(&gateway(s, id).await, "Status") == status })
        .await;
}

/// A gateway with an EIP bound; its ID, SNAT table, forward table and the EIP's address.
async fn gateway_with_eip(
    s: &Signer,
    vpc_id: &str,
    vswitch: &str,
) -> (String, String, String, String) {
    let r = vpc(
        s,
        "CreateNatGateway",
        &[("VpcId", vpc_id), ("VSwitchId", vswitch)],
    )
    .await
    .ok();
    let id = text(&r, "NatGatewayId");
    let snat = r["SnatTableIds"]["SnatTableId"][0]
        .as_str()
        .unwrap()
        .to_owned();
    let fwd = r["ForwardTableIds"]["ForwardTableId"][0]
        .as_str()
        .unwrap()
        .to_owned();
    let eip = vpc(s, "AllocateEipAddress", &[]).await.ok();
    let (allocation, ip) = (text(&eip, "AllocationId"), text(&eip, "EipAddress"));
    vpc(
        s,
        "AssociateEipAddress",
        &[
            ("AllocationId", &allocation),
            ("InstanceId", &id),
            ("InstanceType", "Nat"),
        ],
    )
    .await
    .ok();
    (id, snat, fwd, ip)
}

#[tokio::test]
async fn a_gateway_needs_a_vswitch_of_its_vpc_and_is_creating_first() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let (vpc_id, vswitch, _) = network(&s).await;
    vpc(&s, "CreateNatGateway", &[("VpcId", &vpc_id)])
        .await
        .expect_error(400, "MissingParameter");
    vpc(
        &s,
        "CreateNatGateway",
        &[("VpcId", &vpc_id), ("VSwitchId", VSWITCH)],
    )
    .await
    .expect_error(404, "InvalidVSwitchId.NotFound");
    let enhanced = [("VpcId", vpc_id.as_str()), ("VSwitchId", vswitch.as_str())];
    let with = |extra: (&'static str, &'static str)| {
        let mut v = enhanced.to_vec();
        v.push(extra);
        v
    };
    vpc(&s, "CreateNatGateway", &with(("NatType", "Normal")))
        .await
        .expect_error(400, "InvalidParameter.NatType");
    vpc(&s, "CreateNatGateway", &with(("Name", "1st")))
        .await
        .expect_error(400, "InvalidNatGatewayName.MalFormed");
    vpc(&s, "CreateNatGateway", &with(("DryRun", "true")))
        .await
        .expect_error(400, "DryRunOperation");
    assert_eq!(
        vpc(&s, "DescribeNatGateways", &[]).await.ok()["TotalCount"],
        0
    );

    mock.set_transition_delay(Duration::from_millis(300));
    let first = vpc(&s, "CreateNatGateway", &with(("ClientToken", "tok-1")))
        .await
        .ok();
    let again = vpc(&s, "CreateNatGateway", &with(("ClientToken", "tok-1")))
        .await
        .ok();
    assert_eq!(
        (&first["NatGatewayId"], &first["SnatTableIds"]),
        (&again["NatGatewayId"], &again["SnatTableIds"]),
        "a repeat with the token answers the same gateway"
    );
    let mut other = with(("ClientToken", "tok-1"));
    other.push(("Name", "other"));
    vpc(&s, "CreateNatGateway", &other)
        .await
        .expect_error(400, "IdempotentParameterMismatch");
    let id = text(&first, "NatGatewayId");
    let g = gateway(&s, &id).await;
    assert_eq!(g["Status"], "Creating");
    assert_eq!(g["NatType"], "Enhanced");
    assert_eq!(g["NatGatewayPrivateInfo"]["VswitchId"], vswitch.as_str());
    assert_eq!(
        g["SnatTableIds"]["SnatTableId"],
        first["SnatTableIds"]["SnatTableId"]
    );
    vpc(
        &s,
        "ModifyNatGatewayAttribute",
        &[("NatGatewayId", &id), ("Name", "edge")],
    )
    .await
    .expect_error(400, "IncorrectStatus.NatGateway");
    wait_gateway(&s, &id, "Available").await;
    vpc(
        &s,
        "ModifyNatGatewayAttribute",
        &[("NatGatewayId", &id), ("Name", "edge")],
    )
    .await
    .ok();
    vpc(
        &s,
        "TagResources",
        &[
            ("ResourceType", "NATGATEWAY"),
            ("ResourceId.1", &id),
            ("Tag.1.Key", "team"),
            ("Tag.1.Value", "a"),
        ],
    )
    .await
    .ok();
    let tagged = vpc(
        &s,
        "DescribeNatGateways",
        &[("Tag.1.Key", "team"), ("Tag.1.Value", "a")],
    )
    .await
    .ok();
    assert_eq!(tagged["TotalCount"], 1);
    assert_eq!(tagged["NatGateways"]["NatGateway"][0]["Name"], "edge");
}

#[tokio::test]
async fn snat_and_dnat_entries_need_an_eip_bound_to_the_gateway() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let (vpc_id, public, private) = network(&s).await;
    // An EIP that is not bound is refused as the address of either entry.
    let r = vpc(
        &s,
        "CreateNatGateway",
        &[("VpcId", &vpc_id), ("VSwitchId", &public)],
    )
    .await
    .ok();
    let (snat_table, fwd_table) = (
        r["SnatTableIds"]["SnatTableId"][0]
            .as_str()
            .unwrap()
            .to_owned(),
        r["ForwardTableIds"]["ForwardTableId"][0]
            .as_str()
            .unwrap()
            .to_owned(),
    );
    let loose = text(&vpc(&s, "AllocateEipAddress", &[]).await.ok(), "EipAddress");
    vpc(
        &s,
        "CreateSnatEntry",
        &[
            ("SnatTableId", &snat_table),
            ("SourceVSwitchId", &private),
            ("SnatIp", &loose),
        ],
    )
    .await
    .expect_error(404, "InvalidSnatIp.NotFound");
    let dnat = |table: &str, ip: &str, port: &str, internal: &str| {
        [
            ("ForwardTableId", table.to_owned()),
            ("ExternalIp", ip.to_owned()),
            ("ExternalPort", port.to_owned()),
            ("IpProtocol", "TCP".to_owned()),
            ("InternalIp", internal.to_owned()),
            ("InternalPort", "22".to_owned()),
        ]
    };
    let signer = &s;
    let call = |p: [(&'static str, String); 6]| async move {
        let params: Vec<(&str, &str)> = p.iter().map(|(k, v)| (*k, v.as_str())).collect();
        vpc(signer, "CreateForwardEntry", &params).await
    };
    call(dnat(&fwd_table, &loose, "2222", "10.0.2.10"))
        .await
        .expect_error(400, "InvalidIp.NotInNatgw");

    let (id, snat_table, fwd_table, ip) = gateway_with_eip(&s, &vpc_id, &public).await;
    let snat = |source: (&'static str, String), token: &'static str| {
        let table = snat_table.clone();
        let ip = ip.clone();
        async move {
            let p = [
                ("SnatTableId", table),
                source,
                ("SnatIp", ip),
                ("ClientToken", token.to_owned()),
            ];
            let params: Vec<(&str, &str)> = p.iter().map(|(k, v)| (*k, v.as_str())).collect();
            vpc(signer, "CreateSnatEntry", &params).await
        }
    };
    let entry = snat(("SourceVSwitchId", private.clone()), "t-1").await.ok();
    let replay = snat(("SourceVSwitchId", private.clone()), "t-1").await.ok();
    assert_eq!(
        entry["SnatEntryId"], replay["SnatEntryId"],
        "a repeat with the token answers the same entry"
    );
    snat(("SourceVSwitchId", private.clone()), "t-2")
        .await
        .expect_error(400, "Forbidden.SourceVSwitchId.Duplicated");
    snat(("SourceCIDR", "10.0.2.0/24".to_owned()), "t-3")
        .await
        .expect_error(400, "Forbidden.SourceVSwitchId.Duplicated");
    let listed = vpc(
        &s,
        "DescribeSnatTableEntries",
        &[("SnatTableId", &snat_table)],
    )
    .await
    .ok();
    let e = &listed["SnatTableEntries"]["SnatTableEntry"][0];
    assert_eq!(e["SourceCIDR"], "10.0.2.0/24");
    assert_eq!(e["SnatIp"], ip.as_str());
    assert_eq!(e["Status"], "Available");

    call(dnat(&fwd_table, &ip, "2222", "10.9.0.1"))
        .await
        .expect_error(400, "Forbidden.DestnationIpOutOfVpcCIDR");
    call(dnat(&fwd_table, &ip, "70000", "10.0.2.10"))
        .await
        .expect_error(400, "InvalidExternalPort.Malformed");
    let fwd = call(dnat(&fwd_table, &ip, "2222", "10.0.2.10")).await.ok();
    call(dnat(&fwd_table, &ip, "2222", "10.0.2.11"))
        .await
        .expect_error(400, "OperationUnsupported.ForwardEntry");
    let fwd_id = text(&fwd, "ForwardEntryId");
    vpc(
        &s,
        "ModifyForwardEntry",
        &[
            ("ForwardTableId", &fwd_table),
            ("ForwardEntryId", &fwd_id),
            ("ExternalPort", "2200"),
        ],
    )
    .await
    .ok();
    let listed = vpc(
        &s,
        "DescribeForwardTableEntries",
        &[("ForwardTableId", &fwd_table)],
    )
    .await
    .ok();
    assert_eq!(
        listed["ForwardTableEntries"]["ForwardTableEntry"][0]["ExternalPort"],
        "2200"
    );

    // The EIP the entries use stays bound; the gateway, its vSwitch and its VPC stay.
    let allocation = text(
        &gateway(&s, &id).await["IpLists"]["IpList"][0],
        "AllocationId",
    );
    vpc(
        &s,
        "UnassociateEipAddress",
        &[("AllocationId", &allocation)],
    )
    .await
    .expect_error(400, "DependencyViolation.SnatEntry");
    vpc(&s, "DeleteNatGateway", &[("NatGatewayId", &id)])
        .await
        .expect_error(400, "DependencyViolation.SnatEntry");
    vpc(&s, "DeleteVSwitch", &[("VSwitchId", &public)])
        .await
        .expect_error(400, "DependencyViolation.EnhancedNatgw");
    vpc(&s, "DeleteVSwitch", &[("VSwitchId", &private)])
        .await
        .expect_error(400, "DependencyViolation.SnatEntry");
    vpc(&s, "DeleteVpc", &[("VpcId", &vpc_id)])
        .await
        .expect_error(400, "DependencyViolation.NatGateway");

    let snat_id = text(&entry, "SnatEntryId");
    vpc(
        &s,
        "DeleteSnatEntry",
        &[("SnatTableId", &snat_table), ("SnatEntryId", &snat_id)],
    )
    .await
    .ok();
    vpc(&s, "DeleteNatGateway", &[("NatGatewayId", &id)])
        .await
        .expect_error(400, "DependencyViolation.ForwardEntry");
    vpc(
        &s,
        "DeleteForwardEntry",
        &[("ForwardTableId", &fwd_table), ("ForwardEntryId", &fwd_id)],
    )
    .await
    .ok();
    vpc(&s, "DeleteNatGateway", &[("NatGatewayId", &id)])
        .await
        .expect_error(400, "DependencyViolation.EIPS");
    vpc(
        &s,
        "UnassociateEipAddress",
        &[("AllocationId", &allocation)],
    )
    .await
    .ok();
    vpc(
        &s,
        "DeleteNatGateway",
        &[("NatGatewayId", &id), ("DryRun", "true")],
    )
    .await
    .expect_error(400, "DryRunOperation");
    vpc(&s, "DeleteNatGateway", &[("NatGatewayId", &id)])
        .await
        .ok();
    assert!(gateway(&s, &id).await.is_null(), "gone without a lag");
}

#[tokio::test]
async fn entries_are_pending_first_and_force_deletes_everything() {
    let mock: MockServer = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let (vpc_id, public, private) = network(&s).await;
    let (id, snat_table, _, ip) = gateway_with_eip(&s, &vpc_id, &public).await;
    mock.set_transition_delay(Duration::from_millis(400));
    let entry = vpc(
        &s,
        "CreateSnatEntry",
        &[
            ("SnatTableId", &snat_table),
            ("SourceVSwitchId", &private),
            ("SnatIp", &ip),
        ],
    )
    .await
    .ok();
    let snat_id = text(&entry, "SnatEntryId");
    let status = |r: Value| text(&r["SnatTableEntries"]["SnatTableEntry"][0], "Status");
    let listed = vpc(
        &s,
        "DescribeSnatTableEntries",
        &[("SnatTableId", &snat_table)],
    )
    .await;
    assert_eq!(status(listed.ok()), "Pending");
    // A table with a Pending entry takes no other change.
    vpc(
        &s,
        "CreateSnatEntry",
        &[
            ("SnatTableId", &snat_table),
            ("SourceCIDR", "10.0.3.0/24"),
            ("SnatIp", &ip),
        ],
    )
    .await
    .expect_error(400, "IncorretSnatEntryStatus");
    vpc(
        &s,
        "DeleteSnatEntry",
        &[("SnatTableId", &snat_table), ("SnatEntryId", &snat_id)],
    )
    .await
    .expect_error(400, "IncorretSnatEntryStatus");
    let records = || mock.resources();
    assert!(
        records()
            .iter()
            .any(|r| r.kind == ResourceKind::SnatEntry && r.id == snat_id)
    );
    assert!(
        records()
            .iter()
            .any(|r| r.kind == ResourceKind::NatGateway && r.id == id)
    );
    eventually("the SNAT entry Available")
        .within(Duration::from_secs(5))
        .until(|| {
            mock.resources()
                .iter()
                .any(|r| r.id == snat_id && r.status == "Available")
        })
        .await;
    mock.set_transition_delay(Duration::ZERO);
    vpc(
        &s,
        "DeleteNatGateway",
        &[("NatGatewayId", &id), ("Force", "true")],
    )
    .await
    .ok();
    let left: Vec<_> = records()
        .into_iter()
        .filter(|r| {
            matches!(
                r.kind,
                ResourceKind::NatGateway | ResourceKind::SnatEntry | ResourceKind::EipAssociation
            )
        })
        .collect();
    assert!(
        left.is_empty(),
        "Force removes entries and unbinds EIPs: {left:?}"
    );
    vpc(&s, "DeleteVSwitch", &[("VSwitchId", &private)])
        .await
        .ok();
}

#[tokio::test]
async fn a_new_gateway_is_listed_after_the_lag_and_a_deleted_one_during_it() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let (vpc_id, public, _) = network(&s).await;
    mock.set_visibility_lag(Duration::from_millis(400));
    let r = vpc(
        &s,
        "CreateNatGateway",
        &[("VpcId", &vpc_id), ("VSwitchId", &public)],
    )
    .await
    .ok();
    let id = text(&r, "NatGatewayId");
    assert!(
        gateway(&s, &id).await.is_null(),
        "not listed during the lag"
    );
    wait_gateway(&s, &id, "Available").await;
    vpc(&s, "DeleteNatGateway", &[("NatGatewayId", &id)])
        .await
        .ok();
    assert_eq!(gateway(&s, &id).await["Status"], "Deleting");
    vpc(
        &s,
        "ModifyNatGatewayAttribute",
        &[("NatGatewayId", &id), ("Name", "edge")],
    )
    .await
    .expect_error(404, "InvalidNatGatewayId.NotFound");
}

#[tokio::test]
async fn deletion_protection_refuses_deleting_a_gateway_or_releasing_an_eip() {
    let mock = start(Duration::ZERO).await;
    let s = Signer::new(&mock);
    let (vpc_id, vswitch, _) = network(&s).await;
    let gateway_id = text(
        &vpc(
            &s,
            "CreateNatGateway",
            &[("VpcId", &vpc_id), ("VSwitchId", &vswitch)],
        )
        .await
        .ok(),
        "NatGatewayId",
    );
    let eip = text(
        &vpc(&s, "AllocateEipAddress", &[]).await.ok(),
        "AllocationId",
    );
    let protect = |kind: &'static str, id: String, on: &'static str| {
        let s = &s;
        async move {
            vpc(
                s,
                "DeletionProtection",
                &[
                    ("Type", kind),
                    ("InstanceId", &id),
                    ("ProtectionEnable", on),
                ],
            )
            .await
        }
    };
    let described_eip = || async {
        vpc(&s, "DescribeEipAddresses", &[("AllocationId", &eip)])
            .await
            .ok()["EipAddresses"]["EipAddress"][0]
            .clone()
    };
    assert_eq!(gateway(&s, &gateway_id).await["DeletionProtection"], false);
    assert_eq!(described_eip().await["DeletionProtection"], false);
    protect("NATGW", gateway_id.clone(), "true").await.ok();
    protect("EIP", eip.clone(), "true").await.ok();
    assert_eq!(gateway(&s, &gateway_id).await["DeletionProtection"], true);
    assert_eq!(described_eip().await["DeletionProtection"], true);
    protect("EIP", eip.clone(), "true")
        .await
        .expect_error(400, "DeletionProtection.AlreadyEnabled");
    // Refused, even with Force.
    for force in ["false", "true"] {
        vpc(
            &s,
            "DeleteNatGateway",
            &[("NatGatewayId", &gateway_id), ("Force", force)],
        )
        .await
        .expect_error(400, "InvalidOperation.DeletionProtection");
    }
    vpc(&s, "ReleaseEipAddress", &[("AllocationId", &eip)])
        .await
        .expect_error(400, "InvalidOperation.DeletionProtection");
    // What the action does not know.
    protect("VPN", gateway_id.clone(), "true")
        .await
        .expect_error(400, "DeletionProtection.TypeNotSupport");
    protect("NATGW", eip.clone(), "true")
        .await
        .expect_error(400, "DeletionProtection.ResourceNotExist");
    protect("CBWP", "cbwp-1".to_owned(), "true")
        .await
        .expect_error(400, "DeletionProtection.ResourceNotExist");
    vpc(
        &s,
        "DeletionProtection",
        &[("Type", "EIP"), ("InstanceId", &eip)],
    )
    .await
    .expect_error(400, "MissingParameter");
    // Lifted: deleted and released.
    protect("NATGW", gateway_id.clone(), "false").await.ok();
    protect("EIP", eip.clone(), "false").await.ok();
    vpc(&s, "DeleteNatGateway", &[("NatGatewayId", &gateway_id)])
        .await
        .ok();
    vpc(&s, "ReleaseEipAddress", &[("AllocationId", &eip)])
        .await
        .ok();
}
