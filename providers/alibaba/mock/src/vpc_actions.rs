//! The VPC API (product Vpc, version `2016-04-28`) on the mock's port: CreateVpc, DescribeVpcs,
//! DeleteVpc, CreateVSwitch, DescribeVSwitches and DeleteVSwitch, with the VPC API's rules and
//! codes. New VPCs and vSwitches are `Pending` for the transition delay, then `Available`.

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use crate::catalog::{self, CatalogRegion};
use crate::cidr::Cidr;
use crate::ecs_actions::{ActionContext, action_not_found, dry_run, dry_run_passed, page_of};
use crate::error::ErrorResponse;
use crate::network::{AccountNetwork, VSwitch, Vpc, network_status, random_id, vswitch_not_found};
use crate::network_tags;
use crate::received_params::ReceivedParams;
use crate::store::{Store, fingerprint};

/// The VPC API version.
pub const VERSION: &str = "2016-04-28";

/// Every VPC action the mock serves.
pub const ACTIONS: &[&str] = &[
    "CreateVpc",
    "DescribeVpcs",
    "DeleteVpc",
    "CreateVSwitch",
    "DescribeVSwitches",
    "DeleteVSwitch",
    "TagResources",
    "UnTagResources",
    "ModifyVpcAttribute",
    "ModifyVSwitchAttribute",
];

/// Most VPCs per region and account.
const VPC_QUOTA: usize = 10;
/// Most vSwitches per VPC.
const VSWITCH_QUOTA: usize = 150;

/// Runs a VPC `action`.
pub fn dispatch(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    action: &str,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let region = catalog::region_by_id(p.required("RegionId")?)?;
    match action {
        "CreateVpc" => create_vpc(store, ctx, region, p),
        "DescribeVpcs" => describe_vpcs(store, ctx, region, p),
        "DeleteVpc" => delete_vpc(store, ctx, region, p),
        "CreateVSwitch" => create_vswitch(store, ctx, region, p),
        "DescribeVSwitches" => describe_vswitches(store, ctx, region, p),
        "DeleteVSwitch" => delete_vswitch(store, ctx, region, p),
        "TagResources" => tag_resources(store, ctx, region, p),
        "UnTagResources" => untag_resources(store, ctx, region, p),
        "ModifyVpcAttribute" => modify_vpc_attribute(store, ctx, region, p),
        "ModifyVSwitchAttribute" => modify_vswitch_attribute(store, ctx, region, p),
        _ => Err(action_not_found()),
    }
}

/// `yyyy-MM-ddTHH:mm:ssZ`, as the VPC API reports times.
fn second_time(ts: Timestamp) -> String {
    ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

fn ready_at(ctx: &ActionContext<'_>) -> Timestamp {
    SignedDuration::try_from(ctx.delay)
        .ok()
        .and_then(|d| ctx.now.checked_add(d).ok())
        .unwrap_or(ctx.now)
}

/// A name or description: `min`–`max` characters, not starting with `http://` or `https://`.
fn check_text(
    value: Option<&str>,
    min: usize,
    max: usize,
    code: &'static str,
    message: &'static str,
) -> Result<(), ErrorResponse> {
    match value {
        Some(v)
            if !(min..=max).contains(&v.chars().count())
                || v.starts_with("http://")
                || v.starts_with("https://") =>
        {
            Err(ErrorResponse::bad_request(code, message))
        }
        _ => Ok(()),
    }
}

fn malformed_cidr() -> ErrorResponse {
    ErrorResponse::bad_request(
        "InvalidCidrBlock.Malformed",
        "Specified CIDR block is not valid.",
    )
}

fn incorrect_vpc_status() -> ErrorResponse {
    ErrorResponse::bad_request(
        "IncorrectVpcStatus",
        "Current VPC status does not support this operation.",
    )
}

fn dependency(code: &'static str, message: &'static str) -> ErrorResponse {
    ErrorResponse::bad_request(code, message)
}

/// A VPC block: inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16, with a mask of 8 to 28.
fn vpc_cidr(p: &ReceivedParams) -> Result<Cidr, ErrorResponse> {
    let Some(text) = p.get("CidrBlock") else {
        return Ok(crate::defaults::vpc_cidr());
    };
    let cidr = Cidr::parse(text, false).ok_or_else(malformed_cidr)?;
    let private = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"]
        .iter()
        .filter_map(|r| Cidr::parse(r, false))
        .any(|range| range.contains(&cidr));
    if !private || !(8..=28).contains(&cidr.prefix()) {
        return Err(malformed_cidr());
    }
    Ok(cidr)
}

fn create_vpc(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let cidr = vpc_cidr(p)?;
    let name = p.get("VpcName");
    let description = p.get("Description");
    check_text(
        name,
        1,
        128,
        "InvalidVpcName.Malformed",
        "Specified VPC name is not valid: 1 to 128 characters, not starting with http:// or https://.",
    )?;
    check_text(
        description,
        1,
        256,
        "InvalidVpcDiscription.Malformed",
        "Specified VPC description is not valid: 1 to 256 characters, not starting with http:// or https://.",
    )?;
    if let Some(token) = p.get("ClientToken") {
        crate::launch::check_client_token(token)?;
    }
    let tags = network_tags::parse(p)?;
    let enable_ipv6 = p.bool("EnableIpv6")?.unwrap_or(false);
    let network = store.network.account(&ctx.caller.account_id);
    let token = p.get("ClientToken");
    let print = fingerprint(&(cidr, name, description, &tags, enable_ipv6));
    if let Some(reply) = network.replay("CreateVpc", token, print)? {
        return Ok(reply);
    }
    if network
        .vpcs
        .values()
        .filter(|v| v.region_id == region.id)
        .count()
        >= VPC_QUOTA
    {
        return Err(ErrorResponse::bad_request(
            "QuotaExceeded.Vpc",
            format!("VPC quota exceeded: at most {VPC_QUOTA} VPCs per region."),
        ));
    }
    if dry_run(p)? {
        return Err(dry_run_passed());
    }
    let id = random_id("vpc");
    let seq = network.seq();
    let vpc = Vpc {
        id: id.clone(),
        seq,
        region_id: region.id,
        cidr,
        name: name.unwrap_or_default().to_owned(),
        description: description.unwrap_or_default().to_owned(),
        is_default: false,
        created_at: ctx.now,
        ready_at: ready_at(ctx),
        vrouter_id: random_id("vrt"),
        route_table_id: random_id("vtb"),
        tags,
        ipv6_block: enable_ipv6.then(|| crate::ipv6::vpc_block(seq)),
    };
    let reply = json!({
        "VpcId": vpc.id,
        "VRouterId": vpc.vrouter_id,
        "RouteTableId": vpc.route_table_id,
        "ResourceGroupId": "",
    });
    network.vpcs.insert(id, vpc);
    network.remember("CreateVpc", token, print, &reply);
    Ok(reply)
}

fn vpc_view(network: &AccountNetwork, vpc: &Vpc, now: Timestamp, owner: &str) -> Value {
    let mut switches: Vec<&VSwitch> = network
        .vswitches
        .values()
        .filter(|s| s.vpc_id == vpc.id)
        .collect();
    switches.sort_unstable_by_key(|s| s.seq);
    json!({
        "VpcId": vpc.id,
        "RegionId": vpc.region_id,
        "Status": network_status(vpc.ready_at, now),
        "VpcName": vpc.name,
        "Description": vpc.description,
        "CidrBlock": vpc.cidr.to_string(),
        "Ipv6CidrBlock": vpc.ipv6_block.map(|b| crate::ipv6::block_text(b, 56)).unwrap_or_default(),
        "IsDefault": vpc.is_default,
        "CreationTime": second_time(vpc.created_at),
        "VRouterId": vpc.vrouter_id,
        "VSwitchIds": {"VSwitchId": switches.iter().map(|s| s.id.as_str()).collect::<Vec<_>>()},
        "RouterTableIds": {"RouterTableIds": [vpc.route_table_id]},
        "ResourceGroupId": "",
        "OwnerId": owner,
        "Tags": network_tags::vpc_view(&vpc.tags),
    })
}

/// `PageNumber` (from 1) and `PageSize` (1–50, default 10) of the VPC API.
fn paging(p: &ReceivedParams) -> Result<(usize, usize), ErrorResponse> {
    let number = p
        .number_in::<usize>("PageNumber", 1, usize::MAX / 64)?
        .unwrap_or(1);
    let size = p.number_in::<usize>("PageSize", 1, 50)?.unwrap_or(10);
    Ok((number, size))
}

/// A comma-separated ID list (at most 20), as `VpcId` / `VSwitchId` filters take.
fn id_list(p: &ReceivedParams, name: &str) -> Result<Option<Vec<String>>, ErrorResponse> {
    let Some(raw) = p.get(name) else {
        return Ok(None);
    };
    let ids: Vec<String> = raw
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    if ids.len() > 20 {
        return Err(ErrorResponse::invalid(name));
    }
    Ok(Some(ids))
}

fn describe_vpcs(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let ids = id_list(p, "VpcId")?;
    let name = p.get("VpcName");
    let is_default = p.bool("IsDefault")?;
    let tag_filter = network_tags::filter(p)?;
    let (number, size) = paging(p)?;
    let network = store.network.account(&ctx.caller.account_id);
    let mut vpcs: Vec<&Vpc> = network
        .vpcs
        .values()
        .filter(|v| v.region_id == region.id)
        .filter(|v| ids.as_ref().is_none_or(|ids| ids.contains(&v.id)))
        .filter(|v| name.is_none_or(|n| n == v.name))
        .filter(|v| is_default.is_none_or(|d| d == v.is_default))
        .filter(|v| network_tags::matches(&v.tags, &tag_filter))
        .collect();
    vpcs.sort_unstable_by_key(|v| v.seq);
    let (total, page) = page_of(&vpcs, number, size);
    let owner = ctx.caller.account_id.to_string();
    Ok(json!({
        "TotalCount": total,
        "PageNumber": number,
        "PageSize": size,
        "Vpcs": {"Vpc": page.iter().map(|v| vpc_view(network, v, ctx.now, &owner)).collect::<Vec<_>>()},
    }))
}

fn delete_vpc(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let id = p.required("VpcId")?;
    let network = store.network.account(&ctx.caller.account_id);
    let vpc = network.vpc(region.id, id)?;
    if network_status(vpc.ready_at, ctx.now) != "Available" {
        return Err(incorrect_vpc_status());
    }
    if network.vswitches.values().any(|s| s.vpc_id == id) {
        return Err(dependency(
            "DependencyViolation.VSwitch",
            "Specified object has dependent resources: delete the VPC's vSwitches first.",
        ));
    }
    if network.groups.values().any(|g| g.vpc_id == id) {
        return Err(dependency(
            "DependencyViolation.SecurityGroup",
            "Specified object has dependent resources SecurityGroup: delete the VPC's security groups first.",
        ));
    }
    if dry_run(p)? {
        return Err(dry_run_passed());
    }
    network.vpcs.remove(id);
    Ok(json!({}))
}

fn create_vswitch(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let vpc_id = p.required("VpcId")?;
    let zone_id = p.required("ZoneId")?;
    let cidr_text = p.required("CidrBlock")?;
    let name = p.get("VSwitchName");
    let description = p.get("Description");
    check_text(
        name,
        1,
        128,
        "InvalidVSwitchName.Malformed",
        "Specified virtual switch name is not valid: 1 to 128 characters, not starting with http:// or https://.",
    )?;
    check_text(
        description,
        1,
        256,
        "InvalidVSwitchDiscription.Malformed",
        "Specified virtual switch description is not valid: 1 to 256 characters, not starting with http:// or https://.",
    )?;
    if let Some(token) = p.get("ClientToken") {
        crate::launch::check_client_token(token)?;
    }
    let network = store.network.account(&ctx.caller.account_id);
    let token = p.get("ClientToken");
    let tags = network_tags::parse(p)?;
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

fn describe_vswitches(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let vpc_id = p.get("VpcId");
    let ids = id_list(p, "VSwitchId")?;
    let zone_id = p.get("ZoneId");
    let name = p.get("VSwitchName");
    let tag_filter = network_tags::filter(p)?;
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
        .filter(|s| network_tags::matches(&s.tags, &tag_filter))
        .collect();
    switches.sort_unstable_by_key(|s| s.seq);
    let (total, page) = page_of(&switches, number, size);
    let owner = account.to_string();
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
            "ResourceGroupId": "",
            "RouteTable": {"RouteTableId": route_table, "RouteTableType": "System"},
            "OwnerId": owner,
            "Tags": network_tags::vpc_view(&s.tags),
        })
    };
    Ok(json!({
        "TotalCount": total,
        "PageNumber": number,
        "PageSize": size,
        "VSwitches": {"VSwitch": page.iter().map(|s| view(s)).collect::<Vec<_>>()},
    }))
}

fn delete_vswitch(
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

/// `TagResources` of the VPC API: `ResourceType` `VPC` or `VSWITCH`, `ResourceId.N`, `Tag.N`.
fn tag_resources(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let resource_type = p.required("ResourceType")?.to_ascii_uppercase();
    let (ids, tags) = network_tags::tag_request(p)?;
    let network = store.network.account(&ctx.caller.account_id);
    // Check every resource before changing any.
    for id in &ids {
        match resource_type.as_str() {
            "VPC" => {
                network.vpc(region.id, id)?;
            }
            "VSWITCH" => {
                if network
                    .vswitches
                    .get(id)
                    .is_none_or(|s| s.region_id != region.id)
                {
                    return Err(vswitch_not_found());
                }
            }
            _ => {
                return Err(ErrorResponse::bad_request(
                    "InvalidResourceType.NotSupported",
                    "The specified ResourceType is not supported: use VPC or VSWITCH.",
                ));
            }
        }
    }
    for id in &ids {
        let existing = match resource_type.as_str() {
            "VPC" => network.vpcs.get_mut(id).map(|v| &mut v.tags),
            _ => network.vswitches.get_mut(id).map(|s| &mut s.tags),
        };
        if let Some(existing) = existing {
            network_tags::merge(existing, &tags)?;
        }
    }
    Ok(json!({}))
}

/// `ModifyVpcAttribute`: the name and description (the mock changes nothing else).
fn modify_vpc_attribute(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let id = p.required("VpcId")?;
    let name = p.get("VpcName");
    let description = p.get("Description");
    check_text(
        name,
        1,
        128,
        "InvalidVpcName.Malformed",
        "Specified VPC name is not valid: 1 to 128 characters, not starting with http:// or https://.",
    )?;
    check_text(
        description,
        1,
        256,
        "InvalidVpcDiscription.Malformed",
        "Specified VPC description is not valid: 1 to 256 characters, not starting with http:// or https://.",
    )?;
    let network = store.network.account(&ctx.caller.account_id);
    network.vpc(region.id, id)?;
    let Some(vpc) = network.vpcs.get_mut(id) else {
        return Ok(json!({}));
    };
    if let Some(v) = name {
        v.clone_into(&mut vpc.name);
    }
    if let Some(v) = description {
        v.clone_into(&mut vpc.description);
    }
    Ok(json!({}))
}

/// `ModifyVSwitchAttribute`: the name and description.
fn modify_vswitch_attribute(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let id = p.required("VSwitchId")?;
    let name = p.get("VSwitchName");
    let description = p.get("Description");
    check_text(
        name,
        1,
        128,
        "InvalidVSwitchName.Malformed",
        "Specified virtual switch name is not valid: 1 to 128 characters, not starting with http:// or https://.",
    )?;
    check_text(
        description,
        1,
        256,
        "InvalidVSwitchDiscription.Malformed",
        "Specified virtual switch description is not valid: 1 to 256 characters, not starting with http:// or https://.",
    )?;
    let network = store.network.account(&ctx.caller.account_id);
    network.vswitch(region.id, id)?;
    let Some(vswitch) = network.vswitches.get_mut(id) else {
        return Ok(json!({}));
    };
    if let Some(v) = name {
        v.clone_into(&mut vswitch.name);
    }
    if let Some(v) = description {
        v.clone_into(&mut vswitch.description);
    }
    Ok(json!({}))
}

/// `UnTagResources`: removes the keys named (`TagKey.N`), or every tag with `All=true`.
fn untag_resources(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let resource_type = p.required("ResourceType")?.to_ascii_uppercase();
    let ids = p.list("ResourceId", 50)?;
    if ids.is_empty() {
        return Err(ErrorResponse::missing("ResourceId.1"));
    }
    let keys = p.list("TagKey", 20)?;
    let all = p.bool("All")?.unwrap_or(false);
    if keys.is_empty() && !all {
        return Err(ErrorResponse::missing("TagKey.1"));
    }
    let network = store.network.account(&ctx.caller.account_id);
    for id in &ids {
        match resource_type.as_str() {
            "VPC" => {
                network.vpc(region.id, id)?;
            }
            "VSWITCH" => {
                network.vswitch(region.id, id)?;
            }
            _ => {
                return Err(ErrorResponse::bad_request(
                    "InvalidResourceType.NotSupported",
                    "The specified ResourceType is not supported: use VPC or VSWITCH.",
                ));
            }
        }
    }
    for id in &ids {
        let existing = match resource_type.as_str() {
            "VPC" => network.vpcs.get_mut(id).map(|v| &mut v.tags),
            _ => network.vswitches.get_mut(id).map(|s| &mut s.tags),
        };
        if let Some(tags) = existing {
            tags.retain(|(k, _)| !all && !keys.contains(k));
        }
    }
    Ok(json!({}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vpc_blocks_must_be_private_and_sized() {
        let cidr = |v: &str| vpc_cidr(&ReceivedParams::from_pairs([("CidrBlock", v)]));
        assert!(cidr("192.168.0.0/16").is_ok());
        assert!(cidr("10.0.0.0/8").is_ok());
        assert!(cidr("172.16.0.0/29").is_err());
        assert!(cidr("8.8.0.0/16").is_err());
        assert!(cidr("192.168.1.1/16").is_err());
        assert!(cidr("192.168.0.0").is_err());
        assert_eq!(
            vpc_cidr(&ReceivedParams::default()).unwrap(),
            crate::defaults::vpc_cidr()
        );
    }
}
