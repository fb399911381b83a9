//! The attribute reads of one VPC and one vSwitch: DescribeVpcAttribute and
//! DescribeVSwitchAttributes. Every list of the answers is present with its wrapper even when
//! empty, as the VPC API answers (clients such as Terraform's provider index into them).
//!
//! Not found: DescribeVpcAttribute answers `InvalidVpcID.NotFound` and DescribeVSwitchAttributes
//! `InvalidVswitchID.NotFound` (404), spelled as the VPC API spells them for these two actions
//! and as Terraform's alicloud provider compares them (case-sensitively); the create and delete
//! actions keep their own spelling (`InvalidVpcId.NotFound`, `InvalidVSwitchId.NotFound`).

use serde_json::{Value, json};

use super::common::{owner_id, second_time};
use crate::action::{ActionContext, dry_run, dry_run_passed};
use crate::catalog::CatalogRegion;
use crate::error::ErrorResponse;
use crate::network::{VSwitch, network_status};
use crate::received_params::ReceivedParams;
use crate::store::Store;
use crate::tags;

/// `InvalidVpcID.NotFound` (404), DescribeVpcAttribute's spelling.
fn vpc_attribute_not_found() -> ErrorResponse {
    ErrorResponse::not_found("InvalidVpcID.NotFound", "Specified VPC can not be found.")
}

/// `InvalidVswitchID.NotFound` (404), DescribeVSwitchAttributes' spelling.
fn vswitch_attribute_not_found() -> ErrorResponse {
    ErrorResponse::not_found(
        "InvalidVswitchID.NotFound",
        "Specified virtual switch can not be found.",
    )
}

/// Addresses of a vSwitch still free: ECS reserves the first and the last three of a block, and
/// each instance in it holds one.
pub fn free_addresses(store: &Store, ctx: &ActionContext<'_>, vswitch: &VSwitch) -> u64 {
    let used = store
        .in_region(&ctx.caller.account_id, vswitch.region_id)
        .filter(|i| i.vswitch_id == vswitch.id)
        .count() as u64;
    vswitch.cidr.size().saturating_sub(4).saturating_sub(used)
}

pub fn describe_vpc_attribute(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let id = p.required("VpcId")?;
    let is_default = p.bool("IsDefault")?;
    let network = store.network.account(&ctx.caller.account_id);
    let vpc = network
        .vpcs
        .get(id)
        .filter(|v| v.region_id == region.id)
        .filter(|v| is_default.is_none_or(|d| d == v.is_default))
        .ok_or_else(vpc_attribute_not_found)?;
    if dry_run(p)? {
        return Err(dry_run_passed());
    }
    let mut switches: Vec<&VSwitch> = network
        .vswitches
        .values()
        .filter(|s| s.vpc_id == vpc.id)
        .collect();
    switches.sort_unstable_by_key(|s| s.seq);
    let ipv6 = vpc.ipv6_block.map(|b| crate::ipv6::block_text(b, 56));
    Ok(json!({
        "VpcId": vpc.id,
        "RegionId": vpc.region_id,
        "Status": network_status(vpc.ready_at, ctx.now),
        "VpcName": vpc.name,
        "Description": vpc.description,
        "CidrBlock": vpc.cidr.to_string(),
        "Ipv6CidrBlock": ipv6.clone().unwrap_or_default(),
        "Ipv6CidrBlocks": {"Ipv6CidrBlock": ipv6
            .iter()
            .map(|b| json!({"Ipv6CidrBlock": b, "Ipv6Isp": "BGP"}))
            .collect::<Vec<_>>()},
        "EnabledIpv6": vpc.ipv6_block.is_some(),
        "IsDefault": vpc.is_default,
        "ClassicLinkEnabled": false,
        "CreationTime": second_time(vpc.created_at),
        "VRouterId": vpc.vrouter_id,
        "VSwitchIds": {"VSwitchId": switches.iter().map(|s| s.id.as_str()).collect::<Vec<_>>()},
        "SecondaryCidrBlocks": {"SecondaryCidrBlock": []},
        "UserCidrs": {"UserCidr": []},
        "AssociatedCens": {"AssociatedCen": []},
        "AssociatedPropagationSources": {"AssociatedPropagationSources": []},
        "CloudResources": {"CloudResourceSetType": cloud_resources(switches.len())},
        "DhcpOptionsSetId": "",
        "DhcpOptionsSetStatus": "",
        "DnsHostnameStatus": "DISABLED",
        "Ipv4GatewayId": "",
        "SupportIpv4Gateway": true,
        "ResourceGroupId": "",
        "OwnerId": owner_id(&ctx.caller.account_id),
        "Tags": tags::vpc_view(&vpc.tags),
    }))
}

/// `CloudResources`: the counts of the resources in a VPC the mock keeps (its vSwitches and its
/// system route table).
fn cloud_resources(vswitches: usize) -> Vec<Value> {
    vec![
        json!({"ResourceType": "VSwitch", "ResourceCount": vswitches}),
        json!({"ResourceType": "RouteTable", "ResourceCount": 1}),
    ]
}

pub fn describe_vswitch_attributes(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let id = p.required("VSwitchId")?;
    let account = ctx.caller.account_id.clone();
    let network = store.network.account(&account);
    let vswitch = network
        .vswitches
        .get(id)
        .filter(|s| s.region_id == region.id)
        .cloned()
        .ok_or_else(vswitch_attribute_not_found)?;
    let route_table = network
        .vpcs
        .get(&vswitch.vpc_id)
        .map(|v| v.route_table_id.clone())
        .unwrap_or_default();
    if dry_run(p)? {
        return Err(dry_run_passed());
    }
    Ok(json!({
        "VSwitchId": vswitch.id,
        "VpcId": vswitch.vpc_id,
        "Status": network_status(vswitch.ready_at, ctx.now),
        "CidrBlock": vswitch.cidr.to_string(),
        "Ipv6CidrBlock": vswitch.ipv6_block.map(|b| crate::ipv6::block_text(b, 64)).unwrap_or_default(),
        "EnabledIpv6": vswitch.ipv6_block.is_some(),
        "ZoneId": vswitch.zone_id,
        "AvailableIpAddressCount": free_addresses(store, ctx, &vswitch),
        "Description": vswitch.description,
        "VSwitchName": vswitch.name,
        "CreationTime": second_time(vswitch.created_at),
        "IsDefault": vswitch.is_default,
        "NetworkAclId": "",
        "ShareType": "",
        "ResourceGroupId": "",
        "RouteTable": {"RouteTableId": route_table, "RouteTableType": "System"},
        "OwnerId": owner_id(&account),
        "Tags": tags::vpc_view(&vswitch.tags),
    }))
}
