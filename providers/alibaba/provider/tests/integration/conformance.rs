//! The managed-resource conformance suite (ferroplane-testkit's `conformance`) for every
//! Alibaba managed kind: one registration per kind, the whole matrix in one test, and a test
//! that fails for a managed kind of the group without a registration.
//!
//! `FERROPLANE_CONFORMANCE=long cargo test -p provider-alibaba --test integration --
//! conformance::` runs the long form (README, "Conformance suite").

use std::sync::Arc;

use alibaba_mock::ResourceKind;
use ferroplane_testkit::conformance::{
    self, Build, Case, Form, InPlaceUpdate, Naming, Prerequisite, Registration, Server,
    StartControllers, Steps,
};
use serde_json::{Value, json};

use crate::controller_support::test_options;

const GROUP: &str = "alibabacloud.ferroplane.io";
const IMAGE: &str = "aliyun_3_x64_20G_alibase_20240528.vhd";

/// (kind, case) pairs that fail until the product defect named beside them is fixed (issue
/// 32). Each is asserted to fail: when a fix lands, its entries pass and the suite says to
/// remove them from here.
const EXPECTED_TO_FAIL: &[(&str, Case)] = &[];

fn renamed(build: &Build) -> String {
    format!("{}-renamed", build.name)
}

const ECS_INSTANCE: Registration = Registration {
    kind: "ECSInstance",
    resource: ResourceKind::Instance,
    naming: Naming::CloudAssigned,
    prerequisites: &[],
    for_provider: |b| {
        json!({
            "regionId": b.region, "imageId": IMAGE, "instanceType": "ecs.g6.large",
            "instanceName": b.name,
            "vSwitchId": alibaba_mock::defaults::first_vswitch_id(&b.region),
            "securityGroupIds": [alibaba_mock::defaults::security_group_id(&b.region)],
        })
    },
    update: Some(InPlaceUpdate {
        patch: |b| json!({"instanceName": renamed(b)}),
        cloud_name: renamed,
    }),
    steps: Steps {
        first_look: &["DescribeInstances"],
        create: &["RunInstances"],
        poll: &["DescribeInstances"],
        update: &["ModifyInstanceAttribute"],
        delete: &["DeleteInstance"],
    },
    status_id: "instanceId",
    one_time_secret: None,
    writes_connection_secret: true,
    missing_external_name: "i-2zedoesnotexist00000",
};

const VPC: Registration = Registration {
    kind: "VPC",
    resource: ResourceKind::Vpc,
    naming: Naming::CloudAssigned,
    prerequisites: &[],
    for_provider: |b| json!({"regionId": b.region, "cidrBlock": "192.168.0.0/16", "vpcName": b.name}),
    update: Some(InPlaceUpdate {
        patch: |b| json!({"vpcName": renamed(b)}),
        cloud_name: renamed,
    }),
    steps: Steps {
        first_look: &["DescribeVpcs"],
        create: &["CreateVpc"],
        poll: &["DescribeVpcs"],
        update: &["ModifyVpcAttribute"],
        delete: &["DeleteVpc"],
    },
    status_id: "vpcId",
    one_time_secret: None,
    writes_connection_secret: false,
    missing_external_name: "vpc-2zedoesnotexist00000000",
};

fn in_vpc(b: &Build, fields: Value) -> Value {
    let mut spec = json!({"regionId": b.region, "vpcId": b.vpc_id});
    spec.as_object_mut()
        .expect("an object")
        .extend(fields.as_object().cloned().unwrap_or_default());
    spec
}

const VSWITCH: Registration = Registration {
    kind: "VSwitch",
    resource: ResourceKind::VSwitch,
    naming: Naming::CloudAssigned,
    prerequisites: &[Prerequisite::Vpc],
    for_provider: |b| {
        let cidr = format!("10.0.{}.0/24", b.index);
        in_vpc(
            b,
            json!({"zoneId": b.zone, "cidrBlock": cidr, "vSwitchName": b.name}),
        )
    },
    update: Some(InPlaceUpdate {
        patch: |b| json!({"vSwitchName": renamed(b)}),
        cloud_name: renamed,
    }),
    steps: Steps {
        first_look: &["DescribeVSwitches"],
        create: &["CreateVSwitch"],
        poll: &["DescribeVSwitches"],
        update: &["ModifyVSwitchAttribute"],
        delete: &["DeleteVSwitch"],
    },
    status_id: "vSwitchId",
    one_time_secret: None,
    writes_connection_secret: false,
    missing_external_name: "vsw-2zedoesnotexist00000000",
};

const SECURITY_GROUP: Registration = Registration {
    kind: "SecurityGroup",
    resource: ResourceKind::SecurityGroup,
    naming: Naming::CloudAssigned,
    prerequisites: &[Prerequisite::Vpc],
    for_provider: |b| in_vpc(b, json!({"securityGroupName": b.name})),
    update: Some(InPlaceUpdate {
        patch: |b| json!({"securityGroupName": renamed(b)}),
        cloud_name: renamed,
    }),
    steps: Steps {
        first_look: &["DescribeSecurityGroups"],
        create: &["CreateSecurityGroup"],
        poll: &["DescribeSecurityGroups"],
        update: &["ModifySecurityGroupAttribute"],
        delete: &["DeleteSecurityGroup"],
    },
    status_id: "securityGroupId",
    one_time_secret: None,
    writes_connection_secret: false,
    missing_external_name: "sg-2zedoesnotexist0000",
};

const DISK: Registration = Registration {
    kind: "Disk",
    resource: ResourceKind::Disk,
    naming: Naming::CloudAssigned,
    prerequisites: &[],
    for_provider: |b| json!({"regionId": b.region, "zoneId": b.zone, "category": "cloud_essd", "size": 20, "diskName": b.name}),
    update: Some(InPlaceUpdate {
        patch: |b| json!({"diskName": renamed(b)}),
        cloud_name: renamed,
    }),
    steps: Steps {
        first_look: &["DescribeDisks"],
        create: &["CreateDisk"],
        poll: &["DescribeDisks"],
        update: &["ModifyDiskAttribute"],
        delete: &["DeleteDisk"],
    },
    status_id: "diskId",
    one_time_secret: None,
    writes_connection_secret: false,
    missing_external_name: "d-2zedoesnotexist00000",
};

const KEY_PAIR: Registration = Registration {
    kind: "KeyPair",
    resource: ResourceKind::KeyPair,
    naming: Naming::UserChosen,
    prerequisites: &[],
    for_provider: |b| json!({"regionId": b.region, "keyPairName": b.name}),
    update: None,
    steps: Steps {
        first_look: &["DescribeKeyPairs"],
        // A generated key is made by ferroplane and stored first, then imported.
        create: &["ImportKeyPair"],
        poll: &["DescribeKeyPairs"],
        update: &[],
        delete: &["DeleteKeyPairs"],
    },
    status_id: "keyPairName",
    one_time_secret: Some("privateKey"),
    writes_connection_secret: true,
    missing_external_name: "conformance-missing-pair",
};

const EIP: Registration = Registration {
    kind: "EIP",
    resource: ResourceKind::Eip,
    naming: Naming::CloudAssigned,
    prerequisites: &[],
    for_provider: |b| json!({"regionId": b.region, "bandwidth": 5, "name": b.name}),
    update: Some(InPlaceUpdate {
        patch: |b| json!({"name": renamed(b)}),
        cloud_name: renamed,
    }),
    steps: Steps {
        first_look: &["DescribeEipAddresses"],
        // AllocateEipAddress takes no tags: the UID tag follows at once.
        create: &["AllocateEipAddress", "TagResources"],
        poll: &["DescribeEipAddresses"],
        update: &["ModifyEipAddressAttribute"],
        delete: &["ReleaseEipAddress"],
    },
    status_id: "allocationId",
    one_time_secret: None,
    writes_connection_secret: true,
    missing_external_name: "eip-2zedoesnotexist00000000",
};

const EIP_ASSOCIATION: Registration = Registration {
    kind: "EIPAssociation",
    resource: ResourceKind::EipAssociation,
    naming: Naming::Binding,
    prerequisites: &[Prerequisite::Eip, Prerequisite::Instance],
    for_provider: |b| {
        let i = usize::from(b.index);
        json!({
            "regionId": b.region,
            "allocationId": b.eip_ids[i],
            "instanceId": b.instance_ids[i],
        })
    },
    update: None,
    steps: Steps {
        first_look: &["DescribeEipAddresses"],
        create: &["AssociateEipAddress"],
        poll: &["DescribeEipAddresses"],
        update: &[],
        delete: &["UnassociateEipAddress"],
    },
    status_id: "associationId",
    one_time_secret: None,
    writes_connection_secret: true,
    missing_external_name: "eip-2zedoesnotexist00000000:i-2zedoesnotexist00000",
};

const NAT_GATEWAY: Registration = Registration {
    kind: "NATGateway",
    resource: ResourceKind::NatGateway,
    naming: Naming::CloudAssigned,
    prerequisites: &[Prerequisite::VSwitch],
    for_provider: |b| in_vpc(b, json!({"vSwitchId": b.vswitch_id, "name": b.name})),
    update: Some(InPlaceUpdate {
        patch: |b| json!({"name": renamed(b)}),
        cloud_name: renamed,
    }),
    steps: Steps {
        first_look: &["DescribeNatGateways"],
        // CreateNatGateway takes no tags here: the UID tag follows at once.
        create: &["CreateNatGateway", "TagResources"],
        poll: &["DescribeNatGateways"],
        update: &["ModifyNatGatewayAttribute"],
        delete: &["DeleteNatGateway"],
    },
    status_id: "natGatewayId",
    one_time_secret: None,
    writes_connection_secret: true,
    missing_external_name: "ngw-2zedoesnotexist00000000",
};

const SNAT_ENTRY: Registration = Registration {
    kind: "SNATEntry",
    resource: ResourceKind::SnatEntry,
    naming: Naming::Binding,
    prerequisites: &[Prerequisite::NatGateway],
    for_provider: |b| {
        let i = usize::from(b.index);
        json!({
            "regionId": b.region, "natGatewayId": b.nat_gateway_id,
            "sourceCIDR": format!("10.0.{}.0/24", 100 + i), "eipId": b.eip_ids[i], "name": b.name,
        })
    },
    update: Some(InPlaceUpdate {
        patch: |b| json!({"name": renamed(b)}),
        cloud_name: renamed,
    }),
    steps: Steps {
        // An object without an entry of its own looks nothing up: it never adopts one.
        first_look: &[],
        create: &[
            "DescribeNatGateways",
            "DescribeEipAddresses",
            "CreateSnatEntry",
        ],
        poll: &[
            "DescribeNatGateways",
            "DescribeSnatTableEntries",
            "DescribeEipAddresses",
        ],
        update: &["ModifySnatEntry"],
        delete: &["DeleteSnatEntry"],
    },
    status_id: "snatEntryId",
    one_time_secret: None,
    writes_connection_secret: true,
    missing_external_name: "snat-2zedoesnotexist00000000",
};

const DNAT_ENTRY: Registration = Registration {
    kind: "DNATEntry",
    resource: ResourceKind::ForwardEntry,
    naming: Naming::Binding,
    prerequisites: &[Prerequisite::NatGateway],
    for_provider: |b| {
        let i = usize::from(b.index);
        json!({
            "regionId": b.region, "natGatewayId": b.nat_gateway_id, "eipId": b.eip_ids[i],
            "ipProtocol": "tcp", "externalPort": 2200 + i, "internalIp": format!("10.0.0.{}", 20 + i),
            "internalPort": 22, "name": b.name,
        })
    },
    update: Some(InPlaceUpdate {
        patch: |b| json!({"name": renamed(b)}),
        cloud_name: renamed,
    }),
    steps: Steps {
        first_look: &[],
        create: &[
            "DescribeNatGateways",
            "DescribeEipAddresses",
            "CreateForwardEntry",
        ],
        poll: &[
            "DescribeNatGateways",
            "DescribeForwardTableEntries",
            "DescribeEipAddresses",
        ],
        update: &["ModifyForwardEntry"],
        delete: &["DeleteForwardEntry"],
    },
    status_id: "forwardEntryId",
    one_time_secret: None,
    writes_connection_secret: true,
    missing_external_name: "fwd-2zedoesnotexist00000000",
};

const SECURITY_GROUP_RULE: Registration = Registration {
    kind: "SecurityGroupRule",
    resource: ResourceKind::SecurityGroupRule,
    naming: Naming::Binding,
    prerequisites: &[Prerequisite::SecurityGroup],
    // One port per object: the case's objects share the group and never ask for one rule.
    for_provider: |b| {
        json!({
            "regionId": b.region, "securityGroupId": b.security_group_id,
            "direction": "ingress", "ipProtocol": "tcp",
            "portRange": format!("{0}/{0}", 8000 + u16::from(b.index)),
            "sourceCidrIp": "10.0.0.0/8",
        })
    },
    update: Some(InPlaceUpdate {
        patch: |b| json!({"description": renamed(b)}),
        cloud_name: renamed,
    }),
    steps: Steps {
        first_look: &["DescribeSecurityGroups", "DescribeSecurityGroupAttribute"],
        create: &["AuthorizeSecurityGroup"],
        poll: &["DescribeSecurityGroupAttribute"],
        update: &["ModifySecurityGroupRule"],
        delete: &["RevokeSecurityGroup"],
    },
    status_id: "securityGroupRuleId",
    one_time_secret: None,
    writes_connection_secret: true,
    missing_external_name: "sgr-2zedoesnotexist0000",
};

/// Every Alibaba managed kind.
const REGISTRATIONS: &[Registration] = &[
    ECS_INSTANCE,
    VPC,
    VSWITCH,
    SECURITY_GROUP,
    SECURITY_GROUP_RULE,
    DISK,
    KEY_PAIR,
    EIP,
    EIP_ASSOCIATION,
    NAT_GATEWAY,
    SNAT_ENTRY,
    DNAT_ENTRY,
];

fn start_controllers() -> StartControllers {
    Arc::new(|runtime, endpoint, stop| {
        Box::pin(async move {
            let mut options = test_options();
            options.client.sts_endpoint = Some(endpoint.clone());
            options
                .allowed_endpoints
                .allow(&endpoint)
                .expect("the mock's endpoint is a URL");
            provider_alibaba::run(&runtime, options, stop.cancelled_owned()).await
        })
    })
}

/// Runs the whole matrix on `server` and fails unless it is as expected.
async fn whole_matrix_on(server: Server) {
    let started = std::time::Instant::now();
    let matrix =
        conformance::run(REGISTRATIONS, start_controllers(), Form::from_env(), server).await;
    println!(
        "conformance matrix on the {}:\n{}",
        server.name(),
        matrix.render()
    );
    println!(
        "conformance matrix on the {} in {:?}",
        server.name(),
        started.elapsed()
    );
    let wrong = matrix.verdict(EXPECTED_TO_FAIL);
    assert!(
        wrong.is_empty(),
        "the conformance matrix on the {} is not as expected:\n{}",
        server.name(),
        wrong.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_managed_kind_keeps_the_guarantees_through_the_whole_matrix() {
    whole_matrix_on(Server::Sandbox).await;
}

/// The same matrix on a real kube-apiserver (built by ferroplane-testenv from Go modules on
/// first use), with the controllers as ferroplane's ServiceAccount under deploy/'s RBAC.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_managed_kind_keeps_the_guarantees_on_a_real_control_plane() {
    whole_matrix_on(Server::RealControlPlane).await;
}

#[test]
fn every_managed_kind_of_the_group_is_registered() {
    let registered: Vec<&str> = REGISTRATIONS.iter().map(|r| r.kind).collect();
    let missing: Vec<String> = conformance::managed_kinds(GROUP)
        .into_iter()
        .filter(|kind| !registered.contains(&kind.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "managed kinds of {GROUP} without a conformance registration (add one in {}): {missing:?}",
        file!()
    );
    let managed = conformance::managed_kinds(GROUP);
    let unknown: Vec<&&str> = registered
        .iter()
        .filter(|kind| !managed.iter().any(|m| m == *kind))
        .collect();
    assert!(
        unknown.is_empty(),
        "registrations of no managed kind of {GROUP}: {unknown:?}"
    );
}
