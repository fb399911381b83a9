//! vSwitches: CreateVSwitch, DescribeVSwitches, DeleteVSwitch and ModifyVSwitchAttribute.

use serde_json::{Value, json};

use super::common::{
    VSWITCH_TEXT, dependency, id_list, incorrect_vpc_status, malformed_cidr, name_and_description,
    owner_id, paging, ready_at, rename, second_time,
};
use crate::action::{ActionContext, dry_run, dry_run_passed, page_of};
use crate::catalog::CatalogRegion;
use crate::cidr::Cidr;
use crate::error::ErrorResponse;
use crate::idempotency::fingerprint;
use crate::ids::random_id;
use crate::network::{VSwitch, network_status, vswitch_not_found};
use crate::param_checks;
use crate::received_params::ReceivedParams;
use crate::store::Store;
use crate::tags;

/// Most vSwitches per VPC.
const VSWITCH_QUOTA: usize = 150;

pub fn create_vswitch(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let vpc_id = p.required("VpcId")?;
    let zone_id = p.required("ZoneId")?;
    let cidr_text = p.required("CidrBlock")?;
    let (name, description) = name_and_description(p, &VSWITCH_TEXT)?;
    if let Some(token) = p.get("ClientToken") {
        param_checks::check_client_token(token)?;
    }
    let network = store.network.account(&ctx.caller.account_id);
    let token = p.get("ClientToken");
    let tags = tags::parse(p)?;
    let ipv6_index = p.number::<u8>("Ipv6CidrBlock")?;
    let print = fingerprint(&(
        vpc_id,
        zone_id,
        cidr_text,
        name,
        description,
        &tags,
        ipv6_index,
    ));
    if let Some(reply) = network.replay("CreateVSwitch", token, print)? {
        return Ok(reply);
    }
    let vpc = network.vpc(region.id, vpc_id)?;
    if network_status(vpc.ready_at, ctx.now) != "Available" {
        return Err(incorrect_vpc_status());
    }
    if !region.has_zone(zone_id) {
        return Err(ErrorResponse::not_found(
            "InvalidZoneId.NotFound",
            "Specified zone does not exist.",
        ));
    }
    let cidr = Cidr::parse(cidr_text, false).ok_or_else(malformed_cidr)?;
    if !(16..=29).contains(&cidr.prefix()) {
        return Err(ErrorResponse::bad_request(
            "InvalidCirdrBlock.MaskLength",
            "Specified CIDR block is not valid: the mask must be 16 to 29 bits.",
        ));
    }
    if !vpc.cidr.contains(&cidr) {
        return Err(ErrorResponse::bad_request(
            "InvalidParameter",
            "Specified CIDR block is not valid in VPC.",
        ));
    }
    let ipv6_block = match (ipv6_index, vpc.ipv6_block) {
        (None, _) => None,
        (Some(index), Some(block)) => Some(crate::ipv6::vswitch_block(block, index)),
        (Some(_), None) => {
            return Err(ErrorResponse::bad_request(
                "InvalidParameter",
                "Specified Ipv6CidrBlock is not valid: the VPC has no IPv6 CIDR block (create it with EnableIpv6).",
            ));
        }
    };
    let siblings: Vec<&VSwitch> = network
        .vswitches
        .values()
        .filter(|s| s.vpc_id == vpc_id)
        .collect();
    if ipv6_block.is_some() && siblings.iter().any(|s| s.ipv6_block == ipv6_block) {
        return Err(ErrorResponse::bad_request(
            "InvalidCidrBlock.Overlapped",
            "Specified IPv6 CIDR block overlapped with other subnets.",
        ));
    }
    if siblings.iter().any(|s| s.cidr.overlaps(&cidr)) {
        return Err(ErrorResponse::bad_request(
            "InvalidCidrBlock.Overlapped",
            "Specified CIDR block overlapped with other subnets.",
        ));
    }
    if siblings.len() >= VSWITCH_QUOTA {
        return Err(ErrorResponse::bad_request(
            "QuotaExceeded.VSwitch",
            format!("Virtual switch quota exceeded: at most {VSWITCH_QUOTA} per VPC."),
        ));
    }
    if dry_run(p)? {
        return Err(dry_run_passed());
    }
    let id = random_id("vsw");
    let vswitch = VSwitch {
        id: id.clone(),
        seq: network.seq(),
        vpc_id: vpc_id.to_owned(),
        region_id: region.id,
        zone_id: zone_id.to_owned(),
        cidr,
        name: name.unwrap_or_default().to_owned(),
        description: description.unwrap_or_default().to_owned(),
        is_default: false,
        created_at: ctx.now,
        ready_at: ready_at(ctx),
        tags,
        ipv6_block,
    };
    network.vswitches.insert(id.clone(), vswitch);
    let reply = json!({"VSwitchId": id});
    network.remember("CreateVSwitch", token, print, &reply);
    Ok(reply)
}

pub fn describe_vswitches(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let vpc_id = p.get("VpcId");
    let ids = id_list(p, "VSwitchId")?;
    let zone_id = p.get("ZoneId");
    let name = p.get("VSwitchName");
    let tag_filter = tags::filter(p)?;
    let is_default = p.bool("IsDefault")?;
    let (number, size) = paging(p)?;
    let account = ctx.caller.account_id.clone();
    let mut used: std::collections::HashMap<String, u64> = std::collections::HashMap::new();
    for i in store.in_region(&account, region.id) {
        *used.entry(i.vswitch_id.clone()).or_default() += 1;
    }
    let network = store.network.account(&account);
    let mut switches: Vec<&VSwitch> = network
        .vswitches
        .values()
        .filter(|s| s.region_id == region.id)
        .filter(|s| vpc_id.is_none_or(|v| v == s.vpc_id))
        .filter(|s| ids.as_ref().is_none_or(|ids| ids.contains(&s.id)))
        .filter(|s| zone_id.is_none_or(|z| z == s.zone_id))
        .filter(|s| name.is_none_or(|n| n == s.name))
        .filter(|s| is_default.is_none_or(|d| d == s.is_default))
        .filter(|s| tags::matches(&s.tags, &tag_filter))
        .collect();
    switches.sort_unstable_by_key(|s| s.seq);
    let (total, page) = page_of(&switches, number, size);
    let owner = owner_id(&account);
    let view = |s: &VSwitch| {
        // ECS reserves the first and the last three addresses of a block.
        let free = s
            .cidr
            .size()
            .saturating_sub(4)
            .saturating_sub(used.get(&s.id).copied().unwrap_or(0));
        let route_table = network
            .vpcs
            .get(&s.vpc_id)
            .map(|v| v.route_table_id.clone())
            .unwrap_or_default();
        json!({
            "VSwitchId": s.id,
            "VpcId": s.vpc_id,
            "Status": network_status(s.ready_at, ctx.now),
            "CidrBlock": s.cidr.to_string(),
            "Ipv6CidrBlock": s.ipv6_block.map(|b| crate::ipv6::block_text(b, 64)).unwrap_or_default(),
            "ZoneId": s.zone_id,
            "AvailableIpAddressCount": free,
            "Description": s.description,
            "VSwitchName": s.name,
            "CreationTime": second_time(s.created_at),
            "IsDefault": s.is_default,
            "EnabledIpv6": s.ipv6_block.is_some(),
            "NetworkAclId": "",
            "ShareType": "",
            "ResourceGroupId": "",
            "RouteTable": {"RouteTableId": route_table, "RouteTableType": "System"},
            "OwnerId": owner,
            "Tags": tags::vpc_view(&s.tags),
        })
    };
    Ok(json!({
        "TotalCount": total,
        "PageNumber": number,
        "PageSize": size,
        "VSwitches": {"VSwitch": page.iter().map(|s| view(s)).collect::<Vec<_>>()},
    }))
}

pub fn delete_vswitch(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let id = p.required("VSwitchId")?;
    let account = ctx.caller.account_id.clone();
    let in_use = store
        .in_region(&account, region.id)
        .any(|i| i.vswitch_id == id);
    let has_gateway = store
        .nat
        .in_region(&account, region.id)
        .iter()
        .any(|g| g.vswitch_id == id);
    let has_snat = store
        .nat
        .snat_entries
        .values()
        .any(|e| e.account_id == account && e.source_vswitch_id.as_deref() == Some(id));
    let network = store.network.account(&account);
    let vswitch = network
        .vswitches
        .get(id)
        .filter(|s| s.region_id == region.id)
        .ok_or_else(vswitch_not_found)?;
    if network_status(vswitch.ready_at, ctx.now) != "Available" {
        return Err(ErrorResponse::bad_request(
            "IncorrectVSwitchStatus",
            "The current status of virtual switch does not support this operation.",
        ));
    }
    if has_gateway {
        return Err(dependency(
            "DependencyViolation.EnhancedNatgw",
            "Specified object has dependent resources: an enhanced NAT gateway is in the virtual switch; delete it first.",
        ));
    }
    if has_snat {
        return Err(dependency(
            "DependencyViolation.SnatEntry",
            "Specified object has dependent resources: an SNAT entry names the virtual switch; delete it first.",
        ));
    }
    if in_use {
        return Err(dependency(
            "DependencyViolation",
            "Specified object has dependent resources: instances are still in the virtual switch.",
        ));
    }
    if dry_run(p)? {
        return Err(dry_run_passed());
    }
    network.vswitches.remove(id);
    Ok(json!({}))
}

/// `ModifyVSwitchAttribute`: the name and description.
pub fn modify_vswitch_attribute(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let id = p.required("VSwitchId")?;
    let (name, description) = name_and_description(p, &VSWITCH_TEXT)?;
    let network = store.network.account(&ctx.caller.account_id);
    network.vswitch(region.id, id)?;
    let Some(vswitch) = network.vswitches.get_mut(id) else {
        return Ok(json!({}));
    };
    rename(
        (name, description),
        &mut vswitch.name,
        &mut vswitch.description,
    );
    Ok(json!({}))
}
