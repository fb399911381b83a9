//! SNAT entries: CreateSnatEntry, DescribeSnatTableEntries, ModifySnatEntry and
//! DeleteSnatEntry, with the VPC API's rules: the source is a vSwitch of the gateway's VPC or a
//! CIDR block (one of them), used by one entry of the table only; the address is an EIP bound to
//! an internet gateway (the gateway's private address for an intranet one), not one a DNAT IP
//! mapping holds; the gateway `Available` and no entry of the table `Pending` or `Modifying`
//! while one changes; `Pending` for the transition delay; ClientToken replays.

use serde_json::{Value, json};

use super::common::ready_at;
use super::nat_rules::{available, bound_ip, check_entry_name, snat_table_busy};
use crate::action::{ActionContext, dry_run, dry_run_passed, page_of};
use crate::catalog::CatalogRegion;
use crate::cidr::Cidr;
use crate::error::ErrorResponse;
use crate::idempotency::fingerprint;
use crate::ids::random_id;
use crate::nat_gateways::{Deleted, NatGateway, NetworkType, SNAT_ENTRY_QUOTA, SnatEntry};
use crate::param_checks;
use crate::received_params::ReceivedParams;
use crate::store::Store;
use crate::visibility::after_lag;

fn table_not_found() -> ErrorResponse {
    ErrorResponse::not_found(
        "InvalidSnatTableId.NotFound",
        "Specified SNAT table does not exist.",
    )
}

fn entry_not_found() -> ErrorResponse {
    ErrorResponse::not_found(
        "InvalidSnatEntryId.NotFound",
        "Specified SNAT entry does not exist.",
    )
}

/// The gateway whose SNAT table `SnatTableId` names.
fn gateway_of<'s>(
    store: &'s Store,
    ctx: &ActionContext<'_>,
    region: &CatalogRegion,
    p: &ReceivedParams,
) -> Result<&'s NatGateway, ErrorResponse> {
    let table = p.required("SnatTableId")?;
    store
        .nat
        .gateway_of_table(&ctx.caller.account_id, region.id, table, false)
        .ok_or_else(table_not_found)
}

/// `SnatIp`: addresses of EIPs bound to an internet gateway, the private address of an intranet
/// one (its default), none a DNAT IP mapping holds.
fn snat_ip(
    store: &Store,
    g: &NatGateway,
    given: Option<&str>,
    now: jiff::Timestamp,
) -> Result<String, ErrorResponse> {
    let Some(text) = given else {
        return match g.network_type {
            NetworkType::Intranet => Ok(g.private_ip.to_string()),
            NetworkType::Internet => Err(ErrorResponse::missing("SnatIp")),
        };
    };
    let ips: Vec<&str> = text.split(',').map(str::trim).collect();
    for ip in &ips {
        if ip.parse::<std::net::Ipv4Addr>().is_err() {
            return Err(ErrorResponse::bad_request(
                "InvalidSnatIp.Malformed",
                "The specified SnatIp is not a valid IP address.",
            ));
        }
        let known = match g.network_type {
            NetworkType::Internet => bound_ip(store, g, ip, now),
            NetworkType::Intranet => *ip == g.private_ip.to_string(),
        };
        if !known {
            return Err(ErrorResponse::not_found(
                "InvalidSnatIp.NotFound",
                "Specified SnatIp does not found on the NAT Gateway: associate the EIP with the NAT gateway first.",
            ));
        }
        let mapped = store
            .nat
            .forward_of(&g.forward_table_id)
            .iter()
            .any(|f| f.ip_protocol == "Any" && f.external_ip == *ip);
        if mapped {
            return Err(ErrorResponse::bad_request(
                "Forbidden.IpUsedInForwardTable",
                "The specified SnatIp already used in forward table as an IP mapping: use another address.",
            ));
        }
    }
    Ok(ips.join(","))
}

/// Refuses a change while an entry of the table is `Pending` or `Modifying`.
fn quiet(store: &Store, table: &str, now: jiff::Timestamp) -> Result<(), ErrorResponse> {
    if store
        .nat
        .snat_of(table)
        .iter()
        .any(|e| e.status(now) != "Available")
    {
        return Err(snat_table_busy());
    }
    Ok(())
}

fn duplicated() -> ErrorResponse {
    ErrorResponse::bad_request(
        "Forbidden.SourceVSwitchId.Duplicated",
        "The specified SourceCIDR is duplicated: the table already has an entry for this source.",
    )
}

/// `CreateSnatEntry`.
pub fn create_snat_entry(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let (vswitch_id, cidr) = (p.get("SourceVSwitchId"), p.get("SourceCIDR"));
    let name = p.get("SnatEntryName");
    check_entry_name(name)?;
    let token = p.get("ClientToken");
    if let Some(token) = token {
        param_checks::check_client_token(token)?;
    }
    let account = ctx.caller.account_id.clone();
    let g = gateway_of(store, ctx, region, p)?;
    let print = fingerprint(&(&g.snat_table_id, vswitch_id, cidr, p.get("SnatIp"), name));
    if let Some(reply) = store
        .nat
        .replay(&account, "CreateSnatEntry", token, print)?
    {
        return Ok(reply);
    }
    available(g, ctx.now)?;
    let source_cidr = match (vswitch_id, cidr) {
        (Some(id), None) => {
            let vswitch = store
                .network
                .get(&account)
                .and_then(|n| n.vswitch(region.id, id).ok())
                .filter(|s| s.vpc_id == g.vpc_id)
                .ok_or_else(|| {
                    ErrorResponse::not_found(
                        "InvalidVSwitchId.NotFound",
                        "The specified virtual switch does not exist in the NAT gateway's VPC.",
                    )
                })?;
            vswitch.cidr.to_string()
        }
        (None, Some(c)) => Cidr::parse(c, false)
            .ok_or_else(|| ErrorResponse::invalid("SourceCIDR"))?
            .to_string(),
        (None, None) => return Err(ErrorResponse::missing("SourceVSwitchId")),
        (Some(_), Some(_)) => {
            return Err(ErrorResponse::bad_request(
                "INVALID_PARAMETER",
                "Give SourceVSwitchId or SourceCIDR, not both.",
            ));
        }
    };
    let ip = snat_ip(store, g, p.get("SnatIp"), ctx.now)?;
    let existing = store.nat.snat_of(&g.snat_table_id);
    if existing.iter().any(|e| {
        e.source_cidr == source_cidr
            || (vswitch_id.is_some() && e.source_vswitch_id.as_deref() == vswitch_id)
    }) {
        return Err(duplicated());
    }
    if existing.len() >= SNAT_ENTRY_QUOTA {
        return Err(ErrorResponse::bad_request(
            "Forbidden.SnatEntryCountLimited",
            "SNAT entry in the specified SNAT table reach its limit.",
        ));
    }
    quiet(store, &g.snat_table_id, ctx.now)?;
    if dry_run(p)? {
        return Err(dry_run_passed());
    }
    let (gateway_id, table_id) = (g.id.clone(), g.snat_table_id.clone());
    let seq = store.nat.seq();
    let entry = SnatEntry {
        id: random_id("snat"),
        seq,
        account_id: account.clone(),
        region_id: region.id,
        gateway_id,
        table_id,
        source_vswitch_id: vswitch_id.map(str::to_owned),
        source_cidr,
        snat_ip: ip,
        name: name.unwrap_or_default().to_owned(),
        ready_at: ready_at(ctx),
        modified: false,
        visible_from: after_lag(ctx.now, store.visibility_lag),
    };
    let reply = json!({"SnatEntryId": entry.id});
    store
        .nat
        .remember(&account, "CreateSnatEntry", token, print, &reply);
    store.nat.snat_entries.insert(entry.id.clone(), entry);
    Ok(reply)
}

fn view(e: &SnatEntry, status: &str) -> Value {
    json!({
        "SnatEntryId": e.id,
        "SnatTableId": e.table_id,
        "NatGatewayId": e.gateway_id,
        "SourceVSwitchId": e.source_vswitch_id.as_deref().unwrap_or_default(),
        "SourceCIDR": e.source_cidr,
        "SnatIp": e.snat_ip,
        "SnatEntryName": e.name,
        "Status": status,
        // CreateSnatEntry here takes neither `EipAffinity` nor `NetworkInterfaceId`: affinity
        // stays off (`0`; the docs name no default) and no entry is for an ENI.
        "EipAffinity": "0",
        "NetworkInterfaceId": "",
    })
}

/// `DescribeSnatTableEntries`: a table's entries, by `SnatEntryId`, `SourceVSwitchId`,
/// `SourceCIDR`, `SnatIp`, `SnatEntryName`; pages of up to 100. New entries are listed after
/// the visibility lag; deleted ones as `Deleting` during it.
pub fn describe_snat_table_entries(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let table = gateway_of(store, ctx, region, p)?.snat_table_id.clone();
    let filters = [
        "SnatEntryId",
        "SourceVSwitchId",
        "SourceCIDR",
        "SnatIp",
        "SnatEntryName",
    ]
    .map(|k| p.get(k));
    let number = p
        .number_in::<usize>("PageNumber", 1, usize::MAX / 128)?
        .unwrap_or(1);
    let size = p.number_in::<usize>("PageSize", 1, 100)?.unwrap_or(10);
    let now = ctx.now;
    let live = store
        .nat
        .snat_of(&table)
        .into_iter()
        .filter(|e| e.visible_from <= now)
        .map(|e| (e, e.status(now)));
    let deleting = store.nat.deleting(now).filter_map(|d| match d {
        Deleted::Snat(e) if e.table_id == table => Some((e, "Deleting")),
        _ => None,
    });
    let listed: Vec<(&SnatEntry, &str)> = live
        .chain(deleting)
        .filter(|(e, _)| {
            let fields = [
                e.id.as_str(),
                e.source_vswitch_id.as_deref().unwrap_or_default(),
                e.source_cidr.as_str(),
                e.snat_ip.as_str(),
                e.name.as_str(),
            ];
            filters
                .iter()
                .zip(fields)
                .all(|(want, have)| want.is_none_or(|w| w == have))
        })
        .collect();
    let (total, page) = page_of(&listed, number, size);
    Ok(json!({
        "TotalCount": total,
        "PageNumber": number,
        "PageSize": size,
        "SnatTableEntries": {"SnatTableEntry": page.iter().map(|(e, s)| view(e, s)).collect::<Vec<_>>()},
    }))
}

/// The entry `SnatEntryId` of the table `SnatTableId`.
fn entry<'s>(
    store: &'s Store,
    ctx: &ActionContext<'_>,
    region: &CatalogRegion,
    p: &ReceivedParams,
) -> Result<(&'s NatGateway, &'s SnatEntry), ErrorResponse> {
    let g = gateway_of(store, ctx, region, p)?;
    let id = p.required("SnatEntryId")?;
    let e = store
        .nat
        .snat_entries
        .get(id)
        .filter(|e| e.table_id == g.snat_table_id)
        .ok_or_else(entry_not_found)?;
    Ok((g, e))
}

/// `ModifySnatEntry`: the address and the name; `Modifying` for the transition delay.
pub fn modify_snat_entry(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let name = p.get("SnatEntryName");
    check_entry_name(name)?;
    let (g, e) = entry(store, ctx, region, p)?;
    available(g, ctx.now)?;
    let ip = p
        .get("SnatIp")
        .map(|ip| snat_ip(store, g, Some(ip), ctx.now))
        .transpose()?;
    quiet(store, &g.snat_table_id, ctx.now)?;
    if dry_run(p)? {
        return Err(dry_run_passed());
    }
    let id = e.id.clone();
    let until = ready_at(ctx);
    if let Some(e) = store.nat.snat_entries.get_mut(&id) {
        if let Some(ip) = ip {
            e.snat_ip = ip;
        }
        if let Some(n) = name {
            n.clone_into(&mut e.name);
        }
        e.ready_at = until;
        e.modified = true;
    }
    Ok(json!({}))
}

/// `DeleteSnatEntry`: an `Available` entry of a quiet table; listed as `Deleting` for the lag.
pub fn delete_snat_entry(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let (g, e) = entry(store, ctx, region, p)?;
    quiet(store, &g.snat_table_id, ctx.now)?;
    if dry_run(p)? {
        return Err(dry_run_passed());
    }
    let id = e.id.clone();
    let until = ready_at(ctx).max(after_lag(ctx.now, store.visibility_lag));
    store.nat.delete(&id, ctx.now, until);
    Ok(json!({}))
}
