//! `AssignIpv6Addresses` / `UnassignIpv6Addresses` on an instance's primary network interface
//! (the only ENI the mock models), with ECS's rules: the vSwitch has IPv6 turned on, the instance
//! is Running or Stopped, an ENI holds at most as many addresses as its type allows, addresses
//! asked for lie in the vSwitch's `/64` and are free.

use std::collections::BTreeSet;
use std::net::Ipv6Addr;

use serde_json::{Value, json};

use crate::action::ActionContext;
use crate::error::ErrorResponse;
use crate::instance::Status;
use crate::ipv6;
use crate::received_params::ReceivedParams;
use crate::store::Store;

/// Most addresses one call names (`Ipv6Address.N`, `Ipv6AddressCount`).
const MAX_PER_CALL: usize = 10;

fn eni_not_found(eni: &str) -> ErrorResponse {
    ErrorResponse::not_found(
        "InvalidEniId.NotFound",
        format!("The specified EniId \"{eni}\" is not found."),
    )
}

fn bad_address(text: &str) -> ErrorResponse {
    ErrorResponse::forbidden(
        "InvalidIp.Address",
        format!("The specified IPv6 address \"{text}\" is not valid for this network interface."),
    )
}

/// The instance whose primary ENI is `eni` in `region_id`.
fn instance_of<'a>(
    store: &'a Store,
    ctx: &ActionContext<'_>,
    region_id: &str,
    eni: &str,
) -> Result<&'a crate::instance::StoredInstance, ErrorResponse> {
    let id = eni
        .strip_prefix("eni-")
        .map(|rest| format!("i-{rest}"))
        .ok_or_else(|| eni_not_found(eni))?;
    store
        .find(&ctx.caller.account_id, Some(region_id), &id)
        .map_err(|_| eni_not_found(eni))
}

pub(crate) fn assign(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let region_id = p.required("RegionId")?;
    let eni = p.required("NetworkInterfaceId")?;
    let count = p.number::<usize>("Ipv6AddressCount")?;
    let named = p.list("Ipv6Address", MAX_PER_CALL)?;
    // Both or neither: ECS takes exactly one of the two.
    if count.is_some() != named.is_empty() {
        return Err(ErrorResponse::bad_request(
            "InvalidParameter.Conflict",
            "Specify either Ipv6AddressCount or Ipv6Address.N.",
        ));
    }
    if count.is_some_and(|n| n == 0 || n > MAX_PER_CALL) {
        return Err(ErrorResponse::invalid("Ipv6AddressCount"));
    }
    let instance = instance_of(store, ctx, region_id, eni)?;
    let (id, region, vswitch_id, cpu, type_id) = (
        instance.id.clone(),
        instance.region_id,
        instance.vswitch_id.clone(),
        instance.instance_type.cpu,
        instance.instance_type.id,
    );
    if !matches!(instance.status(ctx.now), Status::Running | Status::Stopped) {
        return Err(ErrorResponse::incorrect_status());
    }
    let have = instance.ipv6_addresses.len();
    let block = store
        .network
        .account(&ctx.caller.account_id)
        .vswitch(region, &vswitch_id)?
        .ipv6_block
        .ok_or_else(|| ipv6::not_turned_on(&vswitch_id))?;
    let wanted = count.unwrap_or(named.len());
    let limit = ipv6::limit_for(cpu);
    if have + wanted > limit {
        return Err(ErrorResponse::forbidden(
            "InvalidOperation.Ipv6CountExceeded",
            format!(
                "The number of eni {eni} ipv6 address exceeds the limit({limit}). target instanceType {type_id}. Assigned:{have}. Expecting assign:{wanted}."
            ),
        ));
    }
    let held: BTreeSet<Ipv6Addr> = store
        .in_region(&ctx.caller.account_id, region)
        .filter(|i| i.vswitch_id == vswitch_id)
        .flat_map(|i| i.ipv6_addresses.iter().copied())
        .collect();
    let new: Vec<Ipv6Addr> = if named.is_empty() {
        ipv6::allocate(block, &held, wanted)
    } else {
        let mut picked = Vec::new();
        for text in &named {
            let ip: Ipv6Addr = text.parse().map_err(|_| bad_address(text))?;
            if !ipv6::in_block(block, ip) {
                return Err(bad_address(text));
            }
            if held.contains(&ip) || picked.contains(&ip) {
                return Err(ErrorResponse::forbidden(
                    "InvalidIp.IpAssigned",
                    format!("The specified IPv6 address \"{ip}\" is already assigned."),
                ));
            }
            picked.push(ip);
        }
        picked
    };
    let instance = store.find_mut(&ctx.caller.account_id, None, &id)?;
    instance.ipv6_addresses.extend(new.iter().copied());
    Ok(json!({
        "NetworkInterfaceId": eni,
        "Ipv6Sets": {"Ipv6Address": new.iter().map(ToString::to_string).collect::<Vec<_>>()},
        // The mock assigns no IPv6 prefixes (it takes no `Ipv6Prefix.N` / `Ipv6PrefixCount`).
        "Ipv6PrefixSets": {"Ipv6Prefix": []},
    }))
}

pub(crate) fn unassign(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let region_id = p.required("RegionId")?;
    let eni = p.required("NetworkInterfaceId")?;
    let named = p.list("Ipv6Address", MAX_PER_CALL)?;
    if named.is_empty() {
        return Err(ErrorResponse::missing("Ipv6Address.1"));
    }
    let instance = instance_of(store, ctx, region_id, eni)?;
    if !matches!(instance.status(ctx.now), Status::Running | Status::Stopped) {
        return Err(ErrorResponse::incorrect_status());
    }
    let id = instance.id.clone();
    let mut gone = Vec::new();
    for text in &named {
        let ip: Ipv6Addr = text.parse().map_err(|_| bad_address(text))?;
        if !instance.ipv6_addresses.contains(&ip) {
            return Err(bad_address(text));
        }
        gone.push(ip);
    }
    let instance = store.find_mut(&ctx.caller.account_id, None, &id)?;
    instance.ipv6_addresses.retain(|ip| !gone.contains(ip));
    Ok(json!({}))
}
