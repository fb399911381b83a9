//! DNAT entries: CreateForwardEntry, DescribeForwardTableEntries, ModifyForwardEntry and
//! DeleteForwardEntry, with the VPC API's rules: the external address is an EIP bound to the
//! gateway; ports 1–65535 (or `Any` with protocol `Any`, an IP mapping, whose address no SNAT
//! entry may use); the internal address in the gateway's VPC; no two entries with the same
//! external address, port and protocol, nor the same protocol, internal address and port; at
//! most 100 per table; the gateway `Available` and no entry `Pending` or `Modifying` while one
//! changes; `Pending` for the transition delay; ClientToken replays.

use std::net::Ipv4Addr;

use serde_json::{Value, json};

use super::common::ready_at;
use super::nat_rules::{available, bound_ip, check_entry_name, forward_table_busy};
use crate::action::{ActionContext, dry_run, dry_run_passed, page_of};
use crate::catalog::CatalogRegion;
use crate::cidr::Cidr;
use crate::error::ErrorResponse;
use crate::idempotency::fingerprint;
use crate::ids::random_id;
use crate::nat_gateways::{Deleted, FORWARD_ENTRY_QUOTA, ForwardEntry, NatGateway};
use crate::param_checks;
use crate::received_params::ReceivedParams;
use crate::store::Store;
use crate::visibility::after_lag;

fn table_not_found() -> ErrorResponse {
    ErrorResponse::not_found(
        "InvalidForwardTableId.NotFound",
        "Specified forward table does not exist.",
    )
}

fn gateway_of<'s>(
    store: &'s Store,
    ctx: &ActionContext<'_>,
    region: &CatalogRegion,
    p: &ReceivedParams,
) -> Result<&'s NatGateway, ErrorResponse> {
    let table = p.required("ForwardTableId")?;
    store
        .nat
        .gateway_of_table(&ctx.caller.account_id, region.id, table, true)
        .ok_or_else(table_not_found)
}

/// The five fields of an entry, as a create gives them or a modify leaves them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Mapping {
    external_ip: String,
    external_port: String,
    ip_protocol: String,
    internal_ip: String,
    internal_port: String,
}

fn port(value: &str, protocol: &str, code: &'static str) -> Result<String, ErrorResponse> {
    let malformed = || {
        ErrorResponse::bad_request(
            code,
            "The specified port is not valid: 1 to 65535, or Any with IpProtocol Any.",
        )
    };
    if protocol == "Any" {
        return if value == "Any" {
            Ok(value.to_owned())
        } else {
            Err(malformed())
        };
    }
    value
        .parse::<u16>()
        .ok()
        .filter(|p| *p >= 1)
        .map(|p| p.to_string())
        .ok_or_else(malformed)
}

/// Checks the mapping against the gateway, its VPC and the table's other entries (`except`, the
/// entry being modified).
fn check(
    store: &Store,
    g: &NatGateway,
    m: &Mapping,
    except: Option<&str>,
    now: jiff::Timestamp,
) -> Result<(), ErrorResponse> {
    if !matches!(m.ip_protocol.as_str(), "TCP" | "UDP" | "Any") {
        return Err(ErrorResponse::bad_request(
            "InvalidProtocal.ValueNotSupported",
            "The specified IpProtocol does not support: use TCP, UDP or Any.",
        ));
    }
    port(
        &m.external_port,
        &m.ip_protocol,
        "InvalidExternalPort.Malformed",
    )?;
    port(
        &m.internal_port,
        &m.ip_protocol,
        "InvalidInternalPort.Malformed",
    )?;
    if m.external_ip.parse::<Ipv4Addr>().is_err() {
        return Err(ErrorResponse::bad_request(
            "InvalidExternalIp.Malformed",
            "The specified ExternalIp is not a valid IP address.",
        ));
    }
    let Ok(internal) = m.internal_ip.parse::<Ipv4Addr>() else {
        return Err(ErrorResponse::bad_request(
            "InvalidInternalIp.Malformed",
            "The specified InternalIp is not a valid IP address.",
        ));
    };
    if !bound_ip(store, g, &m.external_ip, now) {
        return Err(ErrorResponse::bad_request(
            "InvalidIp.NotInNatgw",
            "The specified Ip not belong to natgateway: associate the EIP with the NAT gateway first.",
        ));
    }
    let in_vpc = store
        .network
        .get(&g.account_id)
        .and_then(|n| n.vpcs.get(&g.vpc_id))
        .is_some_and(|v| v.cidr.contains(&Cidr::new(u32::from(internal), 32)));
    if !in_vpc {
        return Err(ErrorResponse::bad_request(
            "Forbidden.DestnationIpOutOfVpcCIDR",
            "The specified Internal Ip is Out of VPC CIDR.",
        ));
    }
    if m.ip_protocol == "Any" && store.nat.uses_ip(&g.id, &m.external_ip).0 {
        return Err(ErrorResponse::bad_request(
            "Forbidden.ExternalIp.UsedInSnatTable",
            "The specified ExternalIp is already used in SnatTable: an IP mapping needs an address of its own.",
        ));
    }
    let others = store.nat.forward_of(&g.forward_table_id);
    let clash = others
        .iter()
        .filter(|e| Some(e.id.as_str()) != except)
        .any(|e| {
            let same_protocol =
                e.ip_protocol == m.ip_protocol || e.ip_protocol == "Any" || m.ip_protocol == "Any";
            same_protocol
                && ((e.external_ip == m.external_ip && e.external_port == m.external_port)
                    || (e.internal_ip == m.internal_ip && e.internal_port == m.internal_port))
        });
    if clash {
        return Err(ErrorResponse::bad_request(
            "OperationUnsupported.ForwardEntry",
            "Duplicated destination ip port is unsupported: another entry forwards this external address, port and protocol, or to this internal address, port and protocol.",
        ));
    }
    Ok(())
}

/// Refuses a change while an entry of the table is `Pending` or `Modifying`.
fn quiet(store: &Store, table: &str, now: jiff::Timestamp) -> Result<(), ErrorResponse> {
    if store
        .nat
        .forward_of(table)
        .iter()
        .any(|e| e.status(now) != "Available")
    {
        return Err(forward_table_busy());
    }
    Ok(())
}

/// `CreateForwardEntry`.
pub fn create_forward_entry(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let m = Mapping {
        external_ip: p.required("ExternalIp")?.to_owned(),
        external_port: p.required("ExternalPort")?.to_owned(),
        ip_protocol: p.required("IpProtocol")?.to_owned(),
        internal_ip: p.required("InternalIp")?.to_owned(),
        internal_port: p.required("InternalPort")?.to_owned(),
    };
    let name = p.get("ForwardEntryName");
    check_entry_name(name)?;
    let token = p.get("ClientToken");
    if let Some(token) = token {
        param_checks::check_client_token(token)?;
    }
    let account = ctx.caller.account_id.clone();
    let g = gateway_of(store, ctx, region, p)?;
    let print = fingerprint(&(&g.forward_table_id, &m, name));
    if let Some(reply) = store
        .nat
        .replay(&account, "CreateForwardEntry", token, print)?
    {
        return Ok(reply);
    }
    available(g, ctx.now)?;
    check(store, g, &m, None, ctx.now)?;
    if store.nat.forward_of(&g.forward_table_id).len() >= FORWARD_ENTRY_QUOTA {
        return Err(ErrorResponse::bad_request(
            "QuotaExceeded.ForwardEntry",
            "A forward table holds at most 100 DNAT entries.",
        ));
    }
    quiet(store, &g.forward_table_id, ctx.now)?;
    if dry_run(p)? {
        return Err(dry_run_passed());
    }
    let (gateway_id, table_id) = (g.id.clone(), g.forward_table_id.clone());
    let seq = store.nat.seq();
    let entry = ForwardEntry {
        id: random_id("fwd"),
        seq,
        account_id: account.clone(),
        region_id: region.id,
        gateway_id,
        table_id,
        external_ip: m.external_ip,
        external_port: m.external_port,
        ip_protocol: m.ip_protocol,
        internal_ip: m.internal_ip,
        internal_port: m.internal_port,
        name: name.unwrap_or_default().to_owned(),
        ready_at: ready_at(ctx),
        modified: false,
        visible_from: after_lag(ctx.now, store.visibility_lag),
    };
    let reply = json!({"ForwardEntryId": entry.id});
    store
        .nat
        .remember(&account, "CreateForwardEntry", token, print, &reply);
    store.nat.forward_entries.insert(entry.id.clone(), entry);
    Ok(reply)
}

fn view(e: &ForwardEntry, status: &str) -> Value {
    json!({
        "ForwardEntryId": e.id,
        "ForwardTableId": e.table_id,
        "NatGatewayId": e.gateway_id,
        "ExternalIp": e.external_ip,
        "ExternalPort": e.external_port,
        "IpProtocol": e.ip_protocol,
        "InternalIp": e.internal_ip,
        "InternalPort": e.internal_port,
        "ForwardEntryName": e.name,
        "Status": status,
    })
}

/// `DescribeForwardTableEntries`: a table's entries, by `ForwardEntryId`, `ExternalIp`,
/// `ExternalPort`, `IpProtocol`, `InternalIp`, `InternalPort`, `ForwardEntryName`; pages of up
/// to 50. New entries are listed after the visibility lag; deleted ones as `Deleting` during it.
pub fn describe_forward_table_entries(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let table = gateway_of(store, ctx, region, p)?.forward_table_id.clone();
    let filters = [
        "ForwardEntryId",
        "ExternalIp",
        "ExternalPort",
        "IpProtocol",
        "InternalIp",
        "InternalPort",
        "ForwardEntryName",
    ]
    .map(|k| p.get(k));
    let (number, size) = super::common::paging(p)?;
    let now = ctx.now;
    let live = store
        .nat
        .forward_of(&table)
        .into_iter()
        .filter(|e| e.visible_from <= now)
        .map(|e| (e, e.status(now)));
    let deleting = store.nat.deleting(now).filter_map(|d| match d {
        Deleted::Forward(e) if e.table_id == table => Some((e, "Deleting")),
        _ => None,
    });
    let listed: Vec<(&ForwardEntry, &str)> = live
        .chain(deleting)
        .filter(|(e, _)| {
            let fields = [
                &e.id,
                &e.external_ip,
                &e.external_port,
                &e.ip_protocol,
                &e.internal_ip,
                &e.internal_port,
                &e.name,
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
        "ForwardTableEntries": {"ForwardTableEntry": page.iter().map(|(e, s)| view(e, s)).collect::<Vec<_>>()},
    }))
}

fn entry<'s>(
    store: &'s Store,
    ctx: &ActionContext<'_>,
    region: &CatalogRegion,
    p: &ReceivedParams,
) -> Result<(&'s NatGateway, &'s ForwardEntry), ErrorResponse> {
    let g = gateway_of(store, ctx, region, p)?;
    let id = p.required("ForwardEntryId")?;
    let e = store
        .nat
        .forward_entries
        .get(id)
        .filter(|e| e.table_id == g.forward_table_id)
        .ok_or_else(|| {
            ErrorResponse::not_found(
                "InvalidForwardEntryId.NotFound",
                "Specified forward entry does not exist.",
            )
        })?;
    Ok((g, e))
}

/// `ModifyForwardEntry`: any of the five fields and the name; `Modifying` for the transition
/// delay.
pub fn modify_forward_entry(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let name = p.get("ForwardEntryName");
    check_entry_name(name)?;
    let (g, e) = entry(store, ctx, region, p)?;
    available(g, ctx.now)?;
    let pick = |param: &str, current: &str| p.get(param).unwrap_or(current).to_owned();
    let m = Mapping {
        external_ip: pick("ExternalIp", &e.external_ip),
        external_port: pick("ExternalPort", &e.external_port),
        ip_protocol: pick("IpProtocol", &e.ip_protocol),
        internal_ip: pick("InternalIp", &e.internal_ip),
        internal_port: pick("InternalPort", &e.internal_port),
    };
    check(store, g, &m, Some(&e.id), ctx.now)?;
    quiet(store, &g.forward_table_id, ctx.now)?;
    if dry_run(p)? {
        return Err(dry_run_passed());
    }
    let id = e.id.clone();
    let until = ready_at(ctx);
    if let Some(e) = store.nat.forward_entries.get_mut(&id) {
        e.external_ip = m.external_ip;
        e.external_port = m.external_port;
        e.ip_protocol = m.ip_protocol;
        e.internal_ip = m.internal_ip;
        e.internal_port = m.internal_port;
        if let Some(n) = name {
            n.clone_into(&mut e.name);
        }
        e.ready_at = until;
        e.modified = true;
    }
    Ok(json!({}))
}

/// `DeleteForwardEntry`: an entry of a quiet table; listed as `Deleting` for the lag.
pub fn delete_forward_entry(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let (g, e) = entry(store, ctx, region, p)?;
    quiet(store, &g.forward_table_id, ctx.now)?;
    if dry_run(p)? {
        return Err(dry_run_passed());
    }
    let id = e.id.clone();
    let until = ready_at(ctx).max(after_lag(ctx.now, store.visibility_lag));
    store.nat.delete(&id, ctx.now, until);
    Ok(json!({}))
}
