//! NAT gateways: CreateNatGateway, DescribeNatGateways, ModifyNatGatewayAttribute and
//! DeleteNatGateway, with the VPC API's rules: the enhanced type only, pay-as-you-go, in a
//! vSwitch of its VPC (both Available); `Creating` for the transition delay, when nothing but a
//! query is accepted; ClientToken replays; and no deletion while SNAT or DNAT entries or bound
//! EIPs remain, unless `Force` removes them.

use serde_json::{Value, json};

use super::common::{id_list, paging, ready_at, second_time};
use crate::action::{ActionContext, dry_run, dry_run_passed, page_of};
use crate::catalog::CatalogRegion;
use crate::error::ErrorResponse;
use crate::idempotency::fingerprint;
use crate::ids::random_id;
use crate::nat_gateways::{Deleted, NatGateway, NetworkType, incorrect_gateway_status};
use crate::network::network_status;
use crate::param_checks;
use crate::received_params::ReceivedParams;
use crate::store::Store;
use crate::tags;
use crate::visibility::after_lag;

/// A gateway's `Name` (2–128, starting with a letter; letters, digits, `_`, `-`, `.`) and
/// `Description` (2–256, not starting with `http://` or `https://`).
fn check_texts(p: &ReceivedParams) -> Result<(Option<&str>, Option<&str>), ErrorResponse> {
    let (name, description) = (p.get("Name"), p.get("Description"));
    if let Some(n) = name {
        let fine = (2..=128).contains(&n.chars().count())
            && n.chars().next().is_some_and(char::is_alphabetic)
            && n.chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if !fine {
            return Err(ErrorResponse::bad_request(
                "InvalidNatGatewayName.MalFormed",
                "NatGateway name is not valid: 2 to 128 characters, starting with a letter; letters, digits, '_', '-' and '.'.",
            ));
        }
    }
    if let Some(d) = description {
        let fine = (2..=256).contains(&d.chars().count())
            && !d.starts_with("http://")
            && !d.starts_with("https://");
        if !fine {
            return Err(ErrorResponse::bad_request(
                "InvalidNatGatewayDescription.MalFormed",
                "NatGateway description is not valid: 2 to 256 characters, not starting with http:// or https://.",
            ));
        }
    }
    Ok((name, description))
}

fn network_type(p: &ReceivedParams) -> Result<NetworkType, ErrorResponse> {
    match p.get("NetworkType").unwrap_or("internet") {
        "internet" => Ok(NetworkType::Internet),
        "intranet" => Ok(NetworkType::Intranet),
        _ => Err(ErrorResponse::invalid("NetworkType")),
    }
}

/// `CreateNatGateway`.
pub fn create_nat_gateway(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let vpc_id = p.required("VpcId")?;
    if p.get("NatType").unwrap_or("Enhanced") != "Enhanced" {
        return Err(ErrorResponse::bad_request(
            "InvalidParameter.NatType",
            "Only enhanced NAT gateways (NatType=Enhanced) can be created.",
        ));
    }
    if p.get("InstanceChargeType").unwrap_or("PostPaid") != "PostPaid" {
        return Err(ErrorResponse::bad_request(
            "InvalidInstanceChargeType.ValueNotSupported",
            "The mock creates pay-as-you-go (PostPaid) NAT gateways only.",
        ));
    }
    let vswitch_id = p.required("VSwitchId")?;
    let kind = network_type(p)?;
    let (name, description) = check_texts(p)?;
    let token = p.get("ClientToken");
    if let Some(token) = token {
        param_checks::check_client_token(token)?;
    }
    let account = ctx.caller.account_id.clone();
    let print = fingerprint(&(vpc_id, vswitch_id, kind, name, description));
    if let Some(reply) = store
        .nat
        .replay(&account, "CreateNatGateway", token, print)?
    {
        return Ok(reply);
    }
    let network = store.network.account(&account);
    let vpc = network.vpc(region.id, vpc_id)?;
    if network_status(vpc.ready_at, ctx.now) != "Available" {
        return Err(ErrorResponse::bad_request(
            "InvalidVPCStatus",
            "vpc incorrect status: wait until the VPC is Available.",
        ));
    }
    let vswitch = network
        .vswitch(region.id, vswitch_id)
        .ok()
        .filter(|s| s.vpc_id == vpc_id)
        .ok_or_else(|| {
            ErrorResponse::not_found(
                "InvalidVSwitchId.NotFound",
                "The specified vSwitch does not exist in the NAT gateway's VPC.",
            )
        })?;
    if network_status(vswitch.ready_at, ctx.now) != "Available" {
        return Err(ErrorResponse::bad_request(
            "IncorrectVSwitchStatus",
            "The current status of virtual switch does not support this operation.",
        ));
    }
    if dry_run(p)? {
        return Err(dry_run_passed());
    }
    let (zone_id, block) = (vswitch.zone_id.clone(), vswitch.cidr);
    let seq = store.nat.seq();
    let gateway = NatGateway {
        id: random_id("ngw"),
        seq,
        account_id: account.clone(),
        region_id: region.id,
        vpc_id: vpc_id.to_owned(),
        vswitch_id: vswitch_id.to_owned(),
        zone_id,
        network_type: kind,
        private_ip: block.address(3 + seq % 7),
        snat_table_id: random_id("stb"),
        forward_table_id: random_id("ftb"),
        name: name.unwrap_or_default().to_owned(),
        description: description.unwrap_or_default().to_owned(),
        tags: Vec::new(),
        deletion_protection: false,
        created_at: ctx.now,
        ready_at: ready_at(ctx),
        visible_from: after_lag(ctx.now, store.visibility_lag),
    };
    let reply = json!({
        "NatGatewayId": gateway.id,
        "SnatTableIds": {"SnatTableId": [gateway.snat_table_id]},
        "ForwardTableIds": {"ForwardTableId": [gateway.forward_table_id]},
        // The mock makes no FULLNAT table (a VPC NAT gateway's PrivateLink feature).
        "FullNatTableIds": {"FullNatTableId": []},
    });
    store
        .nat
        .remember(&account, "CreateNatGateway", token, print, &reply);
    store.nat.gateways.insert(gateway.id.clone(), gateway);
    Ok(reply)
}

/// CreateNatGateway's default `EipBindMode`, the only one the mock makes.
const EIP_BIND_MODE: &str = "MULTI_BINDED";

fn view(store: &Store, g: &NatGateway, status: &str, now: jiff::Timestamp) -> Value {
    let ips: Vec<Value> = store
        .eips
        .bound_all(&g.id, now)
        .into_iter()
        .map(|e| {
            let (snat, forward) = store.nat.uses_ip(&g.id, &e.ip.to_string());
            let using = if snat || forward {
                "UsedBySnatTable"
            } else {
                "Idle"
            };
            // An EIP in an IP-mapping (`Any`) DNAT entry cannot go into an SNAT entry too
            // (snat_entries' `Forbidden.IpUsedInForwardTable`); a port mapping's can.
            let ip_mapped = store
                .nat
                .forward_of(&g.forward_table_id)
                .iter()
                .any(|f| f.ip_protocol == "Any" && f.external_ip == e.ip.to_string());
            json!({
                "AllocationId": e.id,
                "IpAddress": e.ip.to_string(),
                "UsingStatus": using,
                "PrivateIpAddress": g.private_ip.to_string(),
                "SnatEntryEnabled": !ip_mapped,
            })
        })
        .collect();
    json!({
        "NatGatewayId": g.id,
        "RegionId": g.region_id,
        "VpcId": g.vpc_id,
        "Name": g.name,
        "Description": g.description,
        "Status": status,
        "NatType": "Enhanced",
        "NetworkType": g.network_type.as_str(),
        "Spec": "",
        "InstanceChargeType": "PostPaid",
        "InternetChargeType": "PayByLcu",
        "BusinessStatus": "Normal",
        "DeletionProtection": g.deletion_protection,
        "CreationTime": second_time(g.created_at),
        "ResourceGroupId": crate::resource_groups::DEFAULT,
        "SnatTableIds": {"SnatTableId": [g.snat_table_id]},
        "ForwardTableIds": {"ForwardTableId": [g.forward_table_id]},
        "IpLists": {"IpList": ips},
        "NatGatewayPrivateInfo": {
            "VswitchId": g.vswitch_id,
            "IzNo": g.zone_id,
            "PrivateIpAddress": g.private_ip.to_string(),
            "MaxBandwidth": 5120,
            // The mock models no ENI behind a gateway; the docs give no session limits: the
            // neutral values of the types.
            "EniInstanceId": "",
            "EniType": "",
            "MaxSessionEstablishRate": 0,
            "MaxSessionQuota": 0,
        },
        "Tags": tags::vpc_view(&g.tags),
        // CreateNatGateway's defaults (API reference), which the mock does not let a caller
        // change: multi-EIP-to-ENI binding, ICMP reply on, no PrivateLink, no firewall.
        "EipBindMode": EIP_BIND_MODE,
        "IcmpReplyEnabled": true,
        "PrivateLinkEnabled": false,
        "PrivateLinkMode": "",
        "AccessMode": {"ModeValue": "", "TunnelType": ""},
        "SecurityProtectionEnabled": false,
        // Pay-as-you-go: no expiry, nothing to pay automatically.
        "ExpiredTime": "",
        "AutoPay": false,
        // Features the mock does not serve (the docs give no default): neutral values.
        "EcsMetricEnabled": false,
        "EnableSessionLog": "",
        "FullNatTableIds": {"FullNatTableId": []},
    })
}

/// `DescribeNatGateways`: by `NatGatewayId`, `VpcId`, `Name`, `Status`, `NatType`,
/// `NetworkType`, `Tag.N`; pages of up to 50. A new gateway is listed once the visibility lag has
/// passed; a deleted one stays listed as `Deleting` for the lag.
pub fn describe_nat_gateways(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let ids = id_list(p, "NatGatewayId")?;
    let (vpc, name, status) = (p.get("VpcId"), p.get("Name"), p.get("Status"));
    if p.get("NatType").is_some_and(|t| t != "Enhanced") {
        return Ok(
            json!({"TotalCount": 0, "PageNumber": 1, "PageSize": 10, "NatGateways": {"NatGateway": []}}),
        );
    }
    let kind = p.get("NetworkType").map(|_| network_type(p)).transpose()?;
    let tag_filter = tags::filter(p)?;
    let (number, size) = paging(p)?;
    if dry_run(p)? {
        return Err(dry_run_passed());
    }
    let now = ctx.now;
    let account = ctx.caller.account_id.to_string();
    let live = store
        .nat
        .in_region(&account, region.id)
        .into_iter()
        .filter(|g| g.visible_from <= now)
        .map(|g| (g, g.status(now)));
    let deleting = store.nat.deleting(now).filter_map(|d| match d {
        Deleted::Gateway(g) if *g.account_id == *account && g.region_id == region.id => {
            Some((g, "Deleting"))
        }
        _ => None,
    });
    let listed: Vec<(&NatGateway, &str)> = live
        .chain(deleting)
        .filter(|(g, _)| ids.as_ref().is_none_or(|ids| ids.contains(&g.id)))
        .filter(|(g, _)| vpc.is_none_or(|v| v == g.vpc_id))
        .filter(|(g, _)| name.is_none_or(|n| n == g.name))
        .filter(|(_, s)| status.is_none_or(|want| want == *s))
        .filter(|(g, _)| kind.is_none_or(|k| k == g.network_type))
        .filter(|(g, _)| tags::matches(&g.tags, &tag_filter))
        .collect();
    let (total, page) = page_of(&listed, number, size);
    Ok(json!({
        "TotalCount": total,
        "PageNumber": number,
        "PageSize": size,
        "NatGateways": {"NatGateway": page.iter().map(|(g, s)| view(store, g, s, now)).collect::<Vec<_>>()},
    }))
}

/// `ModifyNatGatewayAttribute`: the name and description of an `Available` gateway.
pub fn modify_nat_gateway_attribute(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let id = p.required("NatGatewayId")?;
    let (name, description) = check_texts(p)?;
    let account = ctx.caller.account_id.clone();
    let gateway = store.nat.gateway(&account, region.id, id)?;
    if gateway.status(ctx.now) != "Available" {
        return Err(incorrect_gateway_status());
    }
    if dry_run(p)? {
        return Err(dry_run_passed());
    }
    if let Some(g) = store.nat.gateways.get_mut(id) {
        super::common::rename((name, description), &mut g.name, &mut g.description);
    }
    Ok(json!({}))
}

/// `DeleteNatGateway`: an `Available` gateway without deletion protection (even with `Force`);
/// its SNAT entries, DNAT entries and bound EIPs refuse it (in that order) unless `Force=true`,
/// which removes and unbinds them.
pub fn delete_nat_gateway(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let id = p.required("NatGatewayId")?;
    let force = p.bool("Force")?.unwrap_or(false);
    let account = ctx.caller.account_id.clone();
    let gateway = store.nat.gateway(&account, region.id, id)?;
    if gateway.status(ctx.now) != "Available" {
        return Err(incorrect_gateway_status());
    }
    if gateway.deletion_protection {
        return Err(super::deletion_protection::protected());
    }
    let snat: Vec<String> = store
        .nat
        .snat_of(&gateway.snat_table_id)
        .iter()
        .map(|e| e.id.clone())
        .collect();
    let forward: Vec<String> = store
        .nat
        .forward_of(&gateway.forward_table_id)
        .iter()
        .map(|e| e.id.clone())
        .collect();
    let eips: Vec<String> = store
        .eips
        .bound_all(id, ctx.now)
        .iter()
        .map(|e| e.id.clone())
        .collect();
    if !force {
        if !snat.is_empty() {
            return Err(ErrorResponse::bad_request(
                "DependencyViolation.SnatEntry",
                "The specified NAT gateway has SNAT entries: delete them first, or delete with Force.",
            ));
        }
        if !forward.is_empty() {
            return Err(ErrorResponse::bad_request(
                "DependencyViolation.ForwardEntry",
                "The specified NAT gateway has DNAT entries: delete them first, or delete with Force.",
            ));
        }
        if !eips.is_empty() {
            return Err(ErrorResponse::bad_request(
                "DependencyViolation.EIPS",
                "The specified NAT gateway has EIPs bound: unassociate them first, or delete with Force.",
            ));
        }
    }
    if dry_run(p)? {
        return Err(dry_run_passed());
    }
    let until = ready_at(ctx).max(after_lag(ctx.now, store.visibility_lag));
    for entry in snat.iter().chain(&forward) {
        store.nat.delete(entry, ctx.now, ctx.now);
    }
    store.eips.instance_released(id);
    store.nat.delete(id, ctx.now, until);
    Ok(json!({}))
}
