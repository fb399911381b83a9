//! VPCs: CreateVpc, DescribeVpcs, DeleteVpc and ModifyVpcAttribute.

use jiff::Timestamp;
use serde_json::{Value, json};

use super::common::{
    VPC_TEXT, dependency, id_list, incorrect_vpc_status, malformed_cidr, name_and_description,
    owner_id, paging, ready_at, rename, second_time,
};
use crate::action::{ActionContext, dry_run, dry_run_passed, page_of};
use crate::catalog::CatalogRegion;
use crate::cidr::Cidr;
use crate::error::ErrorResponse;
use crate::idempotency::fingerprint;
use crate::ids::random_id;
use crate::network::{AccountNetwork, VSwitch, Vpc, network_status};
use crate::param_checks;
use crate::received_params::ReceivedParams;
use crate::store::Store;
use crate::tags;

/// Most VPCs per region and account.
const VPC_QUOTA: usize = 10;

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

pub fn create_vpc(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let cidr = vpc_cidr(p)?;
    let (name, description) = name_and_description(p, &VPC_TEXT)?;
    if let Some(token) = p.get("ClientToken") {
        param_checks::check_client_token(token)?;
    }
    let tags = tags::parse(p)?;
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

fn vpc_view(network: &AccountNetwork, vpc: &Vpc, now: Timestamp, owner: &Value) -> Value {
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
        "Ipv6CidrBlocks": {"Ipv6CidrBlock": vpc
            .ipv6_block
            .map(|b| json!({"Ipv6CidrBlock": crate::ipv6::block_text(b, 56), "Ipv6Isp": "BGP"}))
            .into_iter()
            .collect::<Vec<_>>()},
        "EnabledIpv6": vpc.ipv6_block.is_some(),
        "SecondaryCidrBlocks": {"SecondaryCidrBlock": []},
        "UserCidrs": {"UserCidr": []},
        "NatGatewayIds": {"NatGatewayIds": []},
        "CenStatus": "Detached",
        "DhcpOptionsSetId": "",
        "DhcpOptionsSetStatus": "",
        "DnsHostnameStatus": "DISABLED",
        "ResourceGroupId": "",
        "OwnerId": owner,
        "Tags": tags::vpc_view(&vpc.tags),
    })
}

pub fn describe_vpcs(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let ids = id_list(p, "VpcId")?;
    let name = p.get("VpcName");
    let is_default = p.bool("IsDefault")?;
    let tag_filter = tags::filter(p)?;
    let (number, size) = paging(p)?;
    let network = store.network.account(&ctx.caller.account_id);
    let mut vpcs: Vec<&Vpc> = network
        .vpcs
        .values()
        .filter(|v| v.region_id == region.id)
        .filter(|v| ids.as_ref().is_none_or(|ids| ids.contains(&v.id)))
        .filter(|v| name.is_none_or(|n| n == v.name))
        .filter(|v| is_default.is_none_or(|d| d == v.is_default))
        .filter(|v| tags::matches(&v.tags, &tag_filter))
        .collect();
    vpcs.sort_unstable_by_key(|v| v.seq);
    let (total, page) = page_of(&vpcs, number, size);
    let owner = owner_id(&ctx.caller.account_id);
    Ok(json!({
        "TotalCount": total,
        "PageNumber": number,
        "PageSize": size,
        "Vpcs": {"Vpc": page.iter().map(|v| vpc_view(network, v, ctx.now, &owner)).collect::<Vec<_>>()},
    }))
}

pub fn delete_vpc(
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
    let has_gateway = store
        .nat
        .in_region(&ctx.caller.account_id, region.id)
        .iter()
        .any(|g| g.vpc_id == id);
    let network = store.network.account(&ctx.caller.account_id);
    if has_gateway {
        return Err(dependency(
            "DependencyViolation.NatGateway",
            "Specified object has dependent resources NatGateway: delete the VPC's NAT gateways first.",
        ));
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

/// `ModifyVpcAttribute`: the name and description (the mock changes nothing else).
pub fn modify_vpc_attribute(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let id = p.required("VpcId")?;
    let (name, description) = name_and_description(p, &VPC_TEXT)?;
    let network = store.network.account(&ctx.caller.account_id);
    network.vpc(region.id, id)?;
    let Some(vpc) = network.vpcs.get_mut(id) else {
        return Ok(json!({}));
    };
    rename((name, description), &mut vpc.name, &mut vpc.description);
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
