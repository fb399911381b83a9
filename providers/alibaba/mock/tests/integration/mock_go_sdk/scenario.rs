//! A stack driven through every action the mock serves, each successful answer captured raw:
//! the listings first on an empty account, then create → describe (lists filled) → change →
//! delete → describe again (lists empty).

use std::collections::BTreeMap;

use ferroplane_testkit::mock_requests::*;
use serde_json::{Value, json};

const VPC_VERSION: &str = "2016-04-28";
const ZONE: &str = "cn-hangzhou-b";

/// Signs the calls and keeps every answer as `{"api", "action", "body"}`.
pub struct Recorder {
    signer: Signer,
    pub answers: Vec<Value>,
}

impl Recorder {
    pub fn new(signer: Signer) -> Self {
        Self {
            signer,
            answers: Vec::new(),
        }
    }

    fn keep(&mut self, api: &str, action: &str, resp: Resp) -> Value {
        assert_eq!(resp.status, 200, "{api} {action} failed: {}", resp.body);
        self.answers
            .push(json!({"api": api, "action": action, "body": resp.body.clone()}));
        resp.body
    }

    /// An ECS call in the test region.
    pub async fn ecs(&mut self, action: &str, params: &[(&str, &str)]) -> Value {
        let mut all = vec![("RegionId", REGION)];
        all.extend_from_slice(params);
        let resp = self.signer.ecs(action, &all).await;
        self.keep("ECS", action, resp)
    }

    /// A VPC call in the test region.
    pub async fn vpc(&mut self, action: &str, params: &[(&str, &str)]) -> Value {
        let mut all = vec![("RegionId", REGION)];
        all.extend_from_slice(params);
        let resp = self.signer.post(action, VPC_VERSION, &all).await;
        self.keep("VPC", action, resp)
    }

    /// An STS call signed with the test key.
    pub async fn sts(&mut self, action: &str, params: &[(&str, &str)]) -> Value {
        let resp = self.signer.post(action, STS, params).await;
        self.keep("STS", action, resp)
    }

    /// STS `AssumeRoleWithOIDC`, which is not signed (the OIDC token is the credential).
    async fn assume_role_with_oidc(&mut self) -> Value {
        let stamp = now_stamp();
        let once = nonce();
        let params: BTreeMap<String, String> = [
            ("Action", "AssumeRoleWithOIDC"),
            ("Version", STS),
            ("Format", "JSON"),
            ("Timestamp", stamp.as_str()),
            ("SignatureNonce", once.as_str()),
            ("RoleArn", "acs:ram::777:role/rrsa"),
            ("OIDCProviderArn", "acs:ram::777:oidc-provider/ack-rrsa"),
            (
                "OIDCToken",
                "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW0ifQ.c2ln",
            ),
            ("RoleSessionName", "gosdk"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let url = format!("{}/?{}", self.signer.endpoint, encode_query(&params));
        let resp = send(self.signer.client.post(url)).await;
        self.keep("STS", "AssumeRoleWithOIDC", resp)
    }
}

fn text(value: &Value, field: &str) -> String {
    value[field]
        .as_str()
        .unwrap_or_else(|| panic!("{field} is not a string in {value}"))
        .to_owned()
}

/// The listings that can be empty, on whatever the account holds now.
async fn listings(r: &mut Recorder) {
    r.ecs("DescribeInstances", &[]).await;
    r.ecs("DescribeDisks", &[]).await;
    r.ecs("DescribeKeyPairs", &[]).await;
    r.ecs("DescribeNetworkInterfaces", &[]).await;
    r.ecs("DescribeSecurityGroups", &[]).await;
    r.ecs("DescribePrefixLists", &[]).await;
    r.vpc("DescribeVpcs", &[]).await;
    r.vpc("DescribeVSwitches", &[]).await;
    r.vpc("DescribeEipAddresses", &[]).await;
    r.vpc("DescribeNatGateways", &[]).await;
}

/// Drives the whole scenario.
pub async fn drive(r: &mut Recorder) {
    listings(r).await;
    r.ecs("DescribeRegions", &[]).await;
    r.ecs(
        "DescribeAvailableResource",
        &[("DestinationResource", "InstanceType")],
    )
    .await;
    r.ecs(
        "DescribeAvailableResource",
        &[("DestinationResource", "DataDisk")],
    )
    .await;
    r.ecs("DescribeImages", &[]).await;
    r.sts("GetCallerIdentity", &[]).await;
    r.sts(
        "AssumeRole",
        &[
            ("RoleArn", "acs:ram::5550001:role/ferroplane"),
            ("RoleSessionName", "gosdk"),
        ],
    )
    .await;
    r.assume_role_with_oidc().await;

    let network = network(r).await;
    let groups = security_groups(r, &network).await;
    prefix_lists(r, &groups).await;
    let key_pairs = key_pairs(r).await;
    let instance = instance(r, &network, &groups, &key_pairs).await;
    disks(r, &instance).await;
    nat(r, &network).await;
    listings(r).await;
    teardown(r, &network, &groups, &key_pairs, &instance).await;
    listings(r).await;
}

/// The VPC and vSwitch the stack lives in.
struct Network {
    vpc: String,
    vswitch: String,
}

async fn network(r: &mut Recorder) -> Network {
    let vpc = text(
        &r.vpc(
            "CreateVpc",
            &[
                ("CidrBlock", "10.0.0.0/16"),
                ("VpcName", "gosdk"),
                ("EnableIpv6", "true"),
            ],
        )
        .await,
        "VpcId",
    );
    let vswitch = text(
        &r.vpc(
            "CreateVSwitch",
            &[
                ("VpcId", &vpc),
                ("ZoneId", ZONE),
                ("CidrBlock", "10.0.1.0/24"),
                ("Ipv6CidrBlock", "1"),
            ],
        )
        .await,
        "VSwitchId",
    );
    r.vpc("DescribeVpcAttribute", &[("VpcId", &vpc)]).await;
    r.vpc("DescribeVSwitchAttributes", &[("VSwitchId", &vswitch)])
        .await;
    r.vpc("DescribeRouteTableList", &[("VpcId", &vpc)]).await;
    r.vpc(
        "ModifyVpcAttribute",
        &[("VpcId", &vpc), ("Description", "gosdk")],
    )
    .await;
    r.vpc(
        "ModifyVSwitchAttribute",
        &[("VSwitchId", &vswitch), ("VSwitchName", "gosdk")],
    )
    .await;
    r.vpc(
        "TagResources",
        &[
            ("ResourceType", "VPC"),
            ("ResourceId.1", &vpc),
            ("Tag.1.Key", "team"),
            ("Tag.1.Value", "a"),
        ],
    )
    .await;
    r.vpc("DescribeVpcs", &[("VpcId", &vpc)]).await;
    r.vpc(
        "UnTagResources",
        &[
            ("ResourceType", "VPC"),
            ("ResourceId.1", &vpc),
            ("TagKey.1", "team"),
        ],
    )
    .await;
    Network { vpc, vswitch }
}

/// Two security groups of the stack's VPC, the first with an ingress and an egress rule.
struct Groups {
    first: String,
    second: String,
}

async fn security_groups(r: &mut Recorder, network: &Network) -> Groups {
    let mut ids = Vec::new();
    for name in ["gosdk-1", "gosdk-2"] {
        let created = r
            .ecs(
                "CreateSecurityGroup",
                &[("VpcId", &network.vpc), ("SecurityGroupName", name)],
            )
            .await;
        ids.push(text(&created, "SecurityGroupId"));
    }
    let first = ids[0].clone();
    let rule = [
        ("SecurityGroupId", first.as_str()),
        ("IpProtocol", "tcp"),
        ("PortRange", "22/22"),
    ];
    let ingress = [rule.as_slice(), &[("SourceCidrIp", "10.0.0.0/8")]].concat();
    let egress = [rule.as_slice(), &[("DestCidrIp", "10.0.0.0/8")]].concat();
    r.ecs("AuthorizeSecurityGroup", &ingress).await;
    r.ecs("AuthorizeSecurityGroupEgress", &egress).await;
    r.ecs(
        "DescribeSecurityGroupAttribute",
        &[("SecurityGroupId", &first)],
    )
    .await;
    r.ecs(
        "ModifySecurityGroupRule",
        &[ingress.as_slice(), &[("Description", "ssh")]].concat(),
    )
    .await;
    r.ecs(
        "ModifySecurityGroupEgressRule",
        &[egress.as_slice(), &[("Description", "ssh")]].concat(),
    )
    .await;
    r.ecs(
        "ModifySecurityGroupAttribute",
        &[("SecurityGroupId", &first), ("Description", "gosdk")],
    )
    .await;
    r.ecs(
        "DescribeSecurityGroupAttribute",
        &[("SecurityGroupId", &first), ("Direction", "egress")],
    )
    .await;
    r.ecs("RevokeSecurityGroup", &ingress).await;
    r.ecs("RevokeSecurityGroupEgress", &egress).await;
    r.ecs(
        "DescribeSecurityGroupAttribute",
        &[("SecurityGroupId", &first)],
    )
    .await;
    Groups {
        first,
        second: ids[1].clone(),
    }
}

/// A prefix list named by a rule of the first group (associated, then not), changed and deleted.
async fn prefix_lists(r: &mut Recorder, groups: &Groups) {
    let list = text(
        &r.ecs(
            "CreatePrefixList",
            &[
                ("AddressFamily", "IPv4"),
                ("MaxEntries", "5"),
                ("PrefixListName", "gosdk"),
                ("Description", "gosdk"),
                ("Entry.1.Cidr", "10.0.0.0/8"),
                ("Entry.1.Description", "private"),
            ],
        )
        .await,
        "PrefixListId",
    );
    let rule = [
        ("SecurityGroupId", groups.first.as_str()),
        ("IpProtocol", "tcp"),
        ("PortRange", "443/443"),
        ("SourcePrefixListId", list.as_str()),
    ];
    r.ecs("AuthorizeSecurityGroup", &rule).await;
    r.ecs(
        "DescribeSecurityGroupAttribute",
        &[("SecurityGroupId", &groups.first)],
    )
    .await;
    r.ecs("DescribePrefixLists", &[("PrefixListId.1", &list)])
        .await;
    r.ecs("DescribePrefixListAssociations", &[("PrefixListId", &list)])
        .await;
    r.ecs(
        "ModifyPrefixList",
        &[
            ("PrefixListId", &list),
            ("AddEntry.1.Cidr", "192.168.0.0/16"),
            ("AddEntry.1.Description", "office"),
        ],
    )
    .await;
    r.ecs("DescribePrefixListAttributes", &[("PrefixListId", &list)])
        .await;
    r.ecs("RevokeSecurityGroup", &rule).await;
    r.ecs("DescribePrefixListAssociations", &[("PrefixListId", &list)])
        .await;
    r.ecs("DeletePrefixList", &[("PrefixListId", &list)]).await;
}

/// A key pair created by the mock and one imported.
struct KeyPairs {
    created: String,
    imported: String,
}

async fn key_pairs(r: &mut Recorder) -> KeyPairs {
    r.ecs("CreateKeyPair", &[("KeyPairName", "gosdk-created")])
        .await;
    let described = r
        .ecs(
            "DescribeKeyPairs",
            &[
                ("KeyPairName", "gosdk-created"),
                ("IncludePublicKey", "true"),
            ],
        )
        .await;
    let public = format!(
        "{} me@laptop",
        described["KeyPairs"]["KeyPair"][0]["PublicKey"]
            .as_str()
            .expect("the created pair's public key")
    );
    r.ecs(
        "ImportKeyPair",
        &[
            ("KeyPairName", "gosdk-imported"),
            ("PublicKeyBody", &public),
        ],
    )
    .await;
    KeyPairs {
        created: "gosdk-created".into(),
        imported: "gosdk-imported".into(),
    }
}

/// The instance of the stack, with its settings changed by every instance action.
async fn instance(r: &mut Recorder, network: &Network, groups: &Groups, keys: &KeyPairs) -> String {
    let launched = r
        .ecs(
            "RunInstances",
            &[
                ("ImageId", IMAGE),
                ("InstanceType", TYPE),
                ("VSwitchId", &network.vswitch),
                ("SecurityGroupId", &groups.first),
                ("KeyPairName", &keys.created),
                ("UserData", "ZWNobyBoaQ=="),
            ],
        )
        .await;
    let id = ids(&launched).remove(0);
    let one = [("InstanceId", id.as_str())];
    let ids_list = format!("[\"{id}\"]");
    r.ecs("DescribeInstances", &[("InstanceIds", &ids_list)])
        .await;
    r.ecs("DescribeInstanceAttribute", &one).await;
    r.ecs("DescribeUserData", &one).await;
    r.ecs(
        "DescribeInstanceMaintenanceAttributes",
        &[("InstanceId.1", &id)],
    )
    .await;
    r.ecs(
        "DescribeInstanceAttachmentAttributes",
        &[("InstanceIds", &ids_list)],
    )
    .await;
    r.ecs("DescribeInstanceAutoRenewAttribute", &one).await;
    let nics = r.ecs("DescribeNetworkInterfaces", &one).await;
    let eni = nics["NetworkInterfaceSets"]["NetworkInterfaceSet"][0]["NetworkInterfaceId"]
        .as_str()
        .expect("the primary ENI")
        .to_owned();
    let private_ip = nics["NetworkInterfaceSets"]["NetworkInterfaceSet"][0]["PrivateIpAddress"]
        .as_str()
        .expect("the primary ENI's private IP")
        .to_owned();
    eni_eip(r, &eni, &private_ip, &one).await;
    r.ecs(
        "JoinSecurityGroup",
        &[("InstanceId", &id), ("SecurityGroupId", &groups.second)],
    )
    .await;
    r.ecs(
        "LeaveSecurityGroup",
        &[("InstanceId", &id), ("SecurityGroupId", &groups.second)],
    )
    .await;
    r.ecs(
        "AttachInstanceRamRole",
        &[("InstanceIds", &ids_list), ("RamRoleName", "app-role")],
    )
    .await;
    r.ecs("DescribeInstanceRamRole", &[("InstanceIds", &ids_list)])
        .await;
    r.ecs(
        "DetachInstanceRamRole",
        &[("InstanceIds", &ids_list), ("RamRoleName", "app-role")],
    )
    .await;
    r.ecs("DescribeInstanceRamRole", &[("InstanceIds", &ids_list)])
        .await;
    r.ecs(
        "ModifyInstanceAttribute",
        &[("InstanceId", &id), ("InstanceName", "gosdk")],
    )
    .await;
    r.ecs(
        "ModifyInstanceMetadataOptions",
        &[("InstanceId", &id), ("HttpTokens", "required")],
    )
    .await;
    r.ecs(
        "AssignIpv6Addresses",
        &[("NetworkInterfaceId", &eni), ("Ipv6AddressCount", "1")],
    )
    .await;
    let ipv6 = r.ecs("DescribeNetworkInterfaces", &one).await;
    let address = ipv6["NetworkInterfaceSets"]["NetworkInterfaceSet"][0]["Ipv6Sets"]["Ipv6Set"][0]
        ["Ipv6Address"]
        .as_str()
        .expect("the assigned IPv6 address")
        .to_owned();
    r.ecs("DescribeInstances", &[("InstanceIds", &ids_list)])
        .await;
    r.ecs(
        "UnassignIpv6Addresses",
        &[("NetworkInterfaceId", &eni), ("Ipv6Address.1", &address)],
    )
    .await;
    r.ecs(
        "JoinResourceGroup",
        &[
            ("ResourceType", "instance"),
            ("ResourceId", &id),
            ("ResourceGroupId", alibaba_mock::resource_groups::OTHERS[0]),
        ],
    )
    .await;
    let tagged = [("ResourceType", "instance"), ("ResourceId.1", id.as_str())];
    r.ecs(
        "TagResources",
        &[
            tagged.as_slice(),
            &[("Tag.1.Key", "team"), ("Tag.1.Value", "a")],
        ]
        .concat(),
    )
    .await;
    r.ecs("ListTagResources", &tagged).await;
    r.ecs(
        "UntagResources",
        &[tagged.as_slice(), &[("TagKey.1", "team")]].concat(),
    )
    .await;
    r.ecs("ListTagResources", &tagged).await;
    r.ecs(
        "ModifyInstanceDeployment",
        &[
            ("InstanceId", &id),
            (
                "DeploymentSetId",
                &alibaba_mock::defaults::deployment_set_id(REGION, 0),
            ),
        ],
    )
    .await;
    r.ecs(
        "ModifyInstanceNetworkSpec",
        &[("InstanceId", &id), ("InternetMaxBandwidthOut", "5")],
    )
    .await;
    r.ecs(
        "ModifyInstanceChargeType",
        &[
            ("InstanceIds", &ids_list),
            ("InstanceChargeType", "PrePaid"),
            ("Period", "1"),
            ("PeriodUnit", "Month"),
        ],
    )
    .await;
    r.ecs(
        "ModifyInstanceAutoRenewAttribute",
        &[
            ("InstanceId", &id),
            ("RenewalStatus", "AutoRenewal"),
            ("Duration", "1"),
        ],
    )
    .await;
    r.ecs("DescribeInstanceAutoRenewAttribute", &one).await;
    // Back to pay-as-you-go, so that the teardown can release it.
    r.ecs(
        "ModifyInstanceChargeType",
        &[
            ("InstanceIds", &ids_list),
            ("InstanceChargeType", "PostPaid"),
        ],
    )
    .await;
    r.ecs("RebootInstance", &one).await;
    r.ecs("StopInstance", &one).await;
    r.ecs(
        "ModifyInstanceSpec",
        &[("InstanceId", &id), ("InstanceType", "ecs.g6.xlarge")],
    )
    .await;
    r.ecs(
        "ModifyInstanceVpcAttribute",
        &[
            ("InstanceId", &id),
            ("VSwitchId", &network.vswitch),
            ("PrivateIpAddress", "10.0.1.77"),
        ],
    )
    .await;
    r.ecs(
        "ReplaceSystemDisk",
        &[("InstanceId", &id), ("ImageId", IMAGE)],
    )
    .await;
    r.ecs(
        "DetachKeyPair",
        &[("KeyPairName", &keys.created), ("InstanceIds", &ids_list)],
    )
    .await;
    r.ecs(
        "AttachKeyPair",
        &[("KeyPairName", &keys.imported), ("InstanceIds", &ids_list)],
    )
    .await;
    r.ecs("StartInstance", &one).await;
    r.ecs("DescribeInstances", &[("InstanceIds", &ids_list)])
        .await;
    r.ecs("DescribeInstanceAttribute", &one).await;
    id
}

/// A data disk created apart, attached to the instance, changed, detached and deleted.
async fn disks(r: &mut Recorder, instance: &str) {
    let disk = text(
        &r.ecs(
            "CreateDisk",
            &[
                ("ZoneId", ZONE),
                ("Size", "20"),
                ("DiskCategory", "cloud_essd"),
            ],
        )
        .await,
        "DiskId",
    );
    let one = [("DiskId", disk.as_str())];
    r.ecs("AttachDisk", &[("DiskId", &disk), ("InstanceId", instance)])
        .await;
    r.ecs("DescribeDisks", &[]).await;
    r.ecs(
        "ModifyDiskAttribute",
        &[("DiskId", &disk), ("DiskName", "gosdk")],
    )
    .await;
    r.ecs("ResizeDisk", &[("DiskId", &disk), ("NewSize", "40")])
        .await;
    r.ecs(
        "ModifyDiskSpec",
        &[("DiskId", &disk), ("PerformanceLevel", "PL0")],
    )
    .await;
    r.ecs("DetachDisk", &[("DiskId", &disk), ("InstanceId", instance)])
        .await;
    r.ecs("DescribeDisks", &[("DiskIds", &format!("[\"{disk}\"]"))])
        .await;
    r.ecs("DeleteDisk", &one).await;
}

/// An EIP associated with the private IP of a network interface, seen on both sides, and freed.
async fn eni_eip(r: &mut Recorder, eni: &str, private_ip: &str, instance: &[(&str, &str)]) {
    let eip = r.vpc("AllocateEipAddress", &[]).await;
    let eip_id = text(&eip, "AllocationId");
    let binding = [
        ("AllocationId", eip_id.as_str()),
        ("InstanceId", eni),
        ("InstanceType", "NetworkInterface"),
        ("PrivateIpAddress", private_ip),
    ];
    r.vpc("AssociateEipAddress", &binding).await;
    r.vpc("DescribeEipAddresses", &[("AllocationId", &eip_id)])
        .await;
    r.ecs("DescribeNetworkInterfaces", instance).await;
    r.vpc("UnassociateEipAddress", &binding).await;
    r.vpc("ReleaseEipAddress", &[("AllocationId", &eip_id)])
        .await;
}

/// A NAT gateway with an EIP, an SNAT and a DNAT entry, changed and taken apart.
async fn nat(r: &mut Recorder, network: &Network) {
    let gateway = r
        .vpc(
            "CreateNatGateway",
            &[
                ("VpcId", &network.vpc),
                ("VSwitchId", &network.vswitch),
                ("NatType", "Enhanced"),
            ],
        )
        .await;
    let nat_id = text(&gateway, "NatGatewayId");
    let snat_table = gateway["SnatTableIds"]["SnatTableId"][0]
        .as_str()
        .expect("the gateway's SNAT table")
        .to_owned();
    let forward_table = gateway["ForwardTableIds"]["ForwardTableId"][0]
        .as_str()
        .expect("the gateway's DNAT table")
        .to_owned();
    let eip = r.vpc("AllocateEipAddress", &[]).await;
    let (eip_id, eip_address) = (text(&eip, "AllocationId"), text(&eip, "EipAddress"));
    r.vpc(
        "AssociateEipAddress",
        &[
            ("AllocationId", &eip_id),
            ("InstanceId", &nat_id),
            ("InstanceType", "Nat"),
        ],
    )
    .await;
    r.vpc(
        "ModifyEipAddressAttribute",
        &[("AllocationId", &eip_id), ("Name", "gosdk")],
    )
    .await;
    r.vpc(
        "ModifyNatGatewayAttribute",
        &[("NatGatewayId", &nat_id), ("Name", "gosdk")],
    )
    .await;
    let snat = text(
        &r.vpc(
            "CreateSnatEntry",
            &[
                ("SnatTableId", &snat_table),
                ("SourceVSwitchId", &network.vswitch),
                ("SnatIp", &eip_address),
            ],
        )
        .await,
        "SnatEntryId",
    );
    let dnat = text(
        &r.vpc(
            "CreateForwardEntry",
            &[
                ("ForwardTableId", &forward_table),
                ("ExternalIp", &eip_address),
                ("ExternalPort", "80"),
                ("InternalIp", "10.0.1.10"),
                ("InternalPort", "8080"),
                ("IpProtocol", "TCP"),
            ],
        )
        .await,
        "ForwardEntryId",
    );
    let snat_listing = [("SnatTableId", snat_table.as_str())];
    let dnat_listing = [("ForwardTableId", forward_table.as_str())];
    r.vpc("DescribeSnatTableEntries", &snat_listing).await;
    r.vpc("DescribeForwardTableEntries", &dnat_listing).await;
    r.vpc(
        "ModifySnatEntry",
        &[
            ("SnatTableId", &snat_table),
            ("SnatEntryId", &snat),
            ("SnatEntryName", "gosdk"),
        ],
    )
    .await;
    r.vpc(
        "ModifyForwardEntry",
        &[
            ("ForwardTableId", &forward_table),
            ("ForwardEntryId", &dnat),
            ("ForwardEntryName", "gosdk"),
        ],
    )
    .await;
    for (kind, id, on) in [
        ("NATGW", &nat_id, "true"),
        ("EIP", &eip_id, "true"),
        ("NATGW", &nat_id, "false"),
        ("EIP", &eip_id, "false"),
    ] {
        if on == "false" {
            r.vpc("DescribeEipAddresses", &[]).await;
            r.vpc("DescribeNatGateways", &[]).await;
        }
        r.vpc(
            "DeletionProtection",
            &[("Type", kind), ("InstanceId", id), ("ProtectionEnable", on)],
        )
        .await;
    }
    r.vpc(
        "DeleteSnatEntry",
        &[("SnatTableId", &snat_table), ("SnatEntryId", &snat)],
    )
    .await;
    r.vpc(
        "DeleteForwardEntry",
        &[
            ("ForwardTableId", &forward_table),
            ("ForwardEntryId", &dnat),
        ],
    )
    .await;
    r.vpc("DescribeSnatTableEntries", &snat_listing).await;
    r.vpc("DescribeForwardTableEntries", &dnat_listing).await;
    r.vpc(
        "UnassociateEipAddress",
        &[
            ("AllocationId", &eip_id),
            ("InstanceId", &nat_id),
            ("InstanceType", "Nat"),
        ],
    )
    .await;
    r.vpc("ReleaseEipAddress", &[("AllocationId", &eip_id)])
        .await;
    r.vpc("DeleteNatGateway", &[("NatGatewayId", &nat_id)])
        .await;
}

/// Everything the stack made, deleted.
async fn teardown(
    r: &mut Recorder,
    network: &Network,
    groups: &Groups,
    keys: &KeyPairs,
    instance: &str,
) {
    r.ecs("StopInstance", &[("InstanceId", instance)]).await;
    r.ecs(
        "DeleteInstance",
        &[("InstanceId", instance), ("Force", "true")],
    )
    .await;
    let spare = r
        .ecs(
            "RunInstances",
            &[
                ("ImageId", IMAGE),
                ("InstanceType", TYPE),
                ("VSwitchId", &network.vswitch),
                ("SecurityGroupId", &groups.first),
            ],
        )
        .await;
    let spare = ids(&spare).remove(0);
    r.ecs(
        "DeleteInstances",
        &[("InstanceId.1", &spare), ("Force", "true")],
    )
    .await;
    r.ecs(
        "DeleteKeyPairs",
        &[(
            "KeyPairNames",
            &format!("[\"{}\", \"{}\"]", keys.created, keys.imported),
        )],
    )
    .await;
    for group in [&groups.first, &groups.second] {
        r.ecs("DeleteSecurityGroup", &[("SecurityGroupId", group)])
            .await;
    }
    r.vpc("DeleteVSwitch", &[("VSwitchId", &network.vswitch)])
        .await;
    r.vpc("DeleteVpc", &[("VpcId", &network.vpc)]).await;
}
