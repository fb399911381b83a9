//! `ModifyInstanceVpcAttribute`: moves a Stopped instance to another vSwitch of its VPC in the
//! same zone, or gives it another primary private IP, with ECS's rules and codes. The mock does
//! not move instances between VPCs (`VpcId`).

use serde_json::{Value, json};

use crate::action::ActionContext;
use crate::error::ErrorResponse;
use crate::instance::Status;
use crate::private_ip::{self, Asked};
use crate::received_params::ReceivedParams;
use crate::store::Store;

pub(crate) fn modify_instance_vpc_attribute(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let id = p.required("InstanceId")?;
    let vswitch_id = p.required("VSwitchId")?;
    let asked_ip = p
        .get("PrivateIpAddress")
        .map(private_ip::parse)
        .transpose()?;
    let account = ctx.caller.account_id.clone();
    let (region_id, zone_id, vpc_id, status) = {
        let i = store.find(&account, None, id)?;
        (
            i.region_id,
            i.zone_id.clone(),
            i.vpc_id.clone(),
            i.status(ctx.now),
        )
    };
    let vswitch = store
        .network
        .account(&account)
        .vswitch(region_id, vswitch_id)?;
    let block = vswitch.cidr;
    if vswitch.zone_id != zone_id {
        return Err(ErrorResponse::bad_request(
            "InvalidVSwitchId.Mismatch",
            "Specified instance and virtual switch are not in the same zone.",
        ));
    }
    if vswitch.vpc_id != vpc_id {
        return Err(ErrorResponse::new(
            404,
            "InvalidVSwitchId.NotFound",
            "Specified virtual switch is not found in current VPC.",
        ));
    }
    if status != Status::Stopped {
        // This action's own wording and status (400), not the 403 of most instance actions.
        return Err(ErrorResponse::bad_request(
            "IncorrectInstanceStatus",
            "The current status of instance does not support this operation.",
        ));
    }
    let moving = store.find(&account, None, id)?.vswitch_id != vswitch_id;
    if moving && !store.find(&account, None, id)?.ipv6_addresses.is_empty() {
        // Its IPv6 addresses belong to the old vSwitch's block.
        return Err(ErrorResponse::forbidden(
            "InvalidIp.Ipv6Assigned",
            "The specified instance has been assigned IPv6 address.",
        ));
    }
    let mut held = store.private_ips(&account, region_id, vswitch_id);
    let current = store.find(&account, None, id)?.private_ip;
    if !moving {
        // Its own address is free for it to keep.
        held.remove(&current);
    }
    let ip = match asked_ip {
        Some(ip) => private_ip::check(ip, block, &held, Asked::OnMove)?,
        None if moving => private_ip::allocate(block, block.address(10), &held)?,
        None => current,
    };
    let instance = store.find_mut(&account, None, id)?;
    instance.vswitch_id = vswitch_id.to_owned();
    instance.private_ip = ip;
    Ok(json!({}))
}
