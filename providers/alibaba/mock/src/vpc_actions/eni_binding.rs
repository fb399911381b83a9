//! What AssociateEipAddress checks for `InstanceType=NetworkInterface`: the EIP maps, in NAT
//! mode, to one private IP of one network interface of the caller's region, one EIP per private
//! IP (the EIP reference, "Associate an EIP with an ENI": primary and secondary ENIs in NAT mode;
//! `PrivateIpAddress` is required for this type). The mock's only ENIs are the instances' primary
//! ones, each with one private IP, the instance's.
//!
//! The reference names no code for these refusals, so the mock is strict and picks them (README
//! and [`crate::unproduced_codes`] say so): an unknown ENI is `InvalidEniId.NotFound` (ECS's
//! spelling in its ENI actions); a private IP the ENI does not hold is
//! `InvalidPrivateIpAddress.NotFound`; a private IP that already maps to a public address (an
//! EIP on it, an EIP associated with the instance, or the instance's own public IP, which all sit
//! on the primary ENI's primary IP) is `InvalidAssociation.Duplicated`, as an instance's is; an
//! ENI of another region is `InvalidParameter.Mismatch`; an instance neither Running nor Stopped
//! is `IncorrectInstanceStatus`, as for an instance; `Mode` other than `NAT` is `InvalidParameter`
//! (the mock associates in NAT mode only: cut-through needs a secondary ENI the mock does not
//! have, and multi-EIP-to-ENI mode takes no new users).

use std::net::Ipv4Addr;

use crate::action::ActionContext;
use crate::catalog::CatalogRegion;
use crate::error::ErrorResponse;
use crate::instance::Status;
use crate::instance_view::eni_instance_id;
use crate::private_ip;
use crate::received_params::ReceivedParams;
use crate::store::Store;

/// `Mode`: absent or `NAT`, the API's default and the only mode the mock associates in.
pub fn check_mode(p: &ReceivedParams) -> Result<(), ErrorResponse> {
    match p.get("Mode") {
        None | Some("NAT") => Ok(()),
        Some("MULTI_BINDED" | "BINDED") => Err(ErrorResponse::bad_request(
            "InvalidParameter",
            "The mock associates EIPs in NAT mode only (Mode=NAT).",
        )),
        Some(_) => Err(ErrorResponse::invalid("Mode")),
    }
}

/// `InvalidEniId.NotFound` (404).
pub fn eni_not_found() -> ErrorResponse {
    ErrorResponse::not_found(
        "InvalidEniId.NotFound",
        "The specified network interface does not exist.",
    )
}

/// The network interface `eni` of the caller in `region`, attached to a Running or Stopped
/// instance, and its private IP `PrivateIpAddress` free of any public address: that IP.
pub fn check_network_interface(
    store: &Store,
    ctx: &ActionContext<'_>,
    region: &CatalogRegion,
    eni: &str,
    p: &ReceivedParams,
) -> Result<Ipv4Addr, ErrorResponse> {
    let asked = private_ip::parse(p.required("PrivateIpAddress")?)?;
    let instance = eni_instance_id(eni)
        .and_then(|id| store.find(&ctx.caller.account_id, None, &id).ok())
        .ok_or_else(eni_not_found)?;
    if instance.region_id != region.id {
        return Err(ErrorResponse::bad_request(
            "InvalidParameter.Mismatch",
            "Specified elastic IP address and network interface are not in the same region.",
        ));
    }
    if asked != instance.private_ip {
        return Err(ErrorResponse::bad_request(
            "InvalidPrivateIpAddress.NotFound",
            "The specified private IP address is not an address of the network interface.",
        ));
    }
    if !matches!(instance.status(ctx.now), Status::Running | Status::Stopped) {
        return Err(ErrorResponse::bad_request(
            "IncorrectInstanceStatus",
            "Current instance status does not support this operation.",
        ));
    }
    let has_public_ip = instance.public_ip.is_some() && instance.bandwidth_out > 0;
    if has_public_ip
        || store.eips.bound_to(&instance.id, ctx.now).is_some()
        || store
            .eips
            .bound_to_private_ip(eni, asked, ctx.now)
            .is_some()
    {
        return Err(ErrorResponse::bad_request(
            "InvalidAssociation.Duplicated",
            "Specified private IP address already is associated: it has an EIP or a public IP.",
        ));
    }
    Ok(asked)
}
