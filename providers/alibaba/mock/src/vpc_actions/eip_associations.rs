//! EIP associations: AssociateEipAddress and UnassociateEipAddress. An EIP is associated with
//! one resource at a time, of its own account and region; an ECS instance (Running or Stopped)
//! takes one EIP, and none while it has a public IP of its own; an internet NAT gateway
//! (`InstanceType=Nat`, Available) takes up to 20, and an EIP its SNAT or DNAT entries use is not
//! unassociated; a network interface (`InstanceType=NetworkInterface`, `eni_binding`) takes one
//! EIP per private IP, in NAT mode. Both calls are asynchronous (`Associating` / `Unassociating`
//! for the transition delay) and answered again for a repeat with the same ClientToken.

use serde_json::{Value, json};

use super::common::ready_at;
use super::eni_binding::{check_mode, check_network_interface};
use crate::action::{ActionContext, dry_run, dry_run_passed};
use crate::catalog::CatalogRegion;
use crate::eips::{Binding, BoundKind, incorrect_eip_status};
use crate::error::ErrorResponse;
use crate::instance::Status;
use crate::instance_view::{eni_id, eni_instance_id};
use crate::nat_gateways::{NetworkType, incorrect_gateway_status};
use crate::param_checks;
use crate::received_params::ReceivedParams;
use crate::store::Store;

fn instance_status_refused() -> ErrorResponse {
    ErrorResponse::bad_request(
        "IncorrectInstanceStatus",
        "Current instance status does not support this operation.",
    )
}

/// The ECS instance `id` of the caller in `region`, Running or Stopped.
fn check_instance(
    store: &Store,
    ctx: &ActionContext<'_>,
    region: &CatalogRegion,
    id: &str,
) -> Result<(), ErrorResponse> {
    let instance = store.find(&ctx.caller.account_id, None, id).map_err(|_| {
        ErrorResponse::not_found(
            "InvalidInstanId.NotFound",
            "Specified instance does not exist.",
        )
    })?;
    if instance.region_id != region.id {
        return Err(ErrorResponse::bad_request(
            "InvalidParameter.Mismatch",
            "Specified elastic IP address and ECS instance are not in the same region.",
        ));
    }
    if !matches!(instance.status(ctx.now), Status::Running | Status::Stopped) {
        return Err(instance_status_refused());
    }
    let has_public_ip = instance.public_ip.is_some() && instance.bandwidth_out > 0;
    // An EIP on the primary network interface's primary IP is where the instance's would go.
    if has_public_ip
        || store.eips.bound_to(id, ctx.now).is_some()
        || store.eips.bound_to(&eni_id(id), ctx.now).is_some()
    {
        return Err(ErrorResponse::bad_request(
            "InvalidAssociation.Duplicated",
            "Specified instance already is associated: it has an EIP or a public IP of its own.",
        ));
    }
    Ok(())
}

/// Most EIPs bound to one NAT gateway.
const EIPS_PER_GATEWAY: usize = 20;

/// The internet NAT gateway `id` of the caller in `region`, Available, with room for an EIP.
fn check_gateway(
    store: &Store,
    ctx: &ActionContext<'_>,
    region: &CatalogRegion,
    id: &str,
) -> Result<(), ErrorResponse> {
    let g = store.nat.gateway(&ctx.caller.account_id, region.id, id)?;
    if g.status(ctx.now) != "Available" {
        return Err(incorrect_gateway_status());
    }
    if g.network_type != NetworkType::Internet {
        return Err(ErrorResponse::bad_request(
            "OperationUnsupported.NatType",
            "A VPC (intranet) NAT gateway takes no EIP: associate it with an internet NAT gateway.",
        ));
    }
    if store.eips.bound_all(id, ctx.now).len() >= EIPS_PER_GATEWAY {
        return Err(ErrorResponse::bad_request(
            "QuotaExceeded.EipsPerNatGateway",
            "A NAT gateway takes at most 20 EIPs.",
        ));
    }
    Ok(())
}

/// `AssociateEipAddress`.
pub fn associate_eip_address(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let id = p.required("AllocationId")?;
    let instance_id = p.required("InstanceId")?;
    let kind = BoundKind::parse(p.get("InstanceType"))?;
    check_mode(p)?;
    let token = p.get("ClientToken");
    if let Some(token) = token {
        param_checks::check_client_token(token)?;
    }
    let account = ctx.caller.account_id.clone();
    let eip = store.eips.find(&account, region.id, id)?;
    if let Some(b) = eip.bound(ctx.now)
        && token.is_some()
        && b.associated_with_token.as_deref() == token
        && b.instance_id == instance_id
        && b.unbinding_until.is_none()
    {
        return Ok(json!({}));
    }
    if eip.status(ctx.now) != "Available" {
        return Err(incorrect_eip_status());
    }
    let private_ip = match kind {
        BoundKind::EcsInstance => check_instance(store, ctx, region, instance_id).map(|()| None)?,
        BoundKind::Nat => check_gateway(store, ctx, region, instance_id).map(|()| None)?,
        BoundKind::NetworkInterface => {
            Some(check_network_interface(store, ctx, region, instance_id, p)?)
        }
    };
    if dry_run(p)? {
        return Err(dry_run_passed());
    }
    let eip = store.eips.find_mut(&account, region.id, id)?;
    eip.binding = Some(Binding {
        kind,
        instance_id: instance_id.to_owned(),
        private_ip,
        settled_at: ready_at(ctx),
        unbinding_until: None,
        associated_with_token: token.map(str::to_owned),
        unassociated_with_token: None,
    });
    Ok(json!({}))
}

/// `UnassociateEipAddress`: an `InUse` EIP; `InstanceId`, `InstanceType` and (for a network
/// interface) `PrivateIpAddress`, when given, must name what it is associated with.
pub fn unassociate_eip_address(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let id = p.required("AllocationId")?;
    let named = p.get("InstanceId");
    let kind = p
        .get("InstanceType")
        .map(|k| BoundKind::parse(Some(k)))
        .transpose()?;
    let token = p.get("ClientToken");
    if let Some(token) = token {
        param_checks::check_client_token(token)?;
    }
    let account = ctx.caller.account_id.clone();
    let eip = store.eips.find(&account, region.id, id)?;
    if let Some(b) = &eip.binding
        && b.unbinding_until.is_some()
        && token.is_some()
        && b.unassociated_with_token.as_deref() == token
    {
        return Ok(json!({}));
    }
    let binding = match eip.bound(ctx.now) {
        Some(b) if eip.status(ctx.now) == "InUse" => b.clone(),
        _ => return Err(incorrect_eip_status()),
    };
    let named_ip = p.get("PrivateIpAddress");
    if named.is_some_and(|n| n != binding.instance_id)
        || kind.is_some_and(|k| k != binding.kind)
        || named_ip.is_some_and(|ip| binding.private_ip.is_none_or(|own| own.to_string() != ip))
    {
        return Err(ErrorResponse::bad_request(
            "InvalidBindingStatus",
            "The eip binding status invalid.",
        ));
    }
    if binding.kind == BoundKind::Nat {
        let (snat, forward) = store.nat.uses_ip(&binding.instance_id, &eip.ip.to_string());
        if snat {
            return Err(ErrorResponse::bad_request(
                "DependencyViolation.SnatEntry",
                "The specified resource of Snat depends on Eip: delete the SNAT entries using the address first.",
            ));
        }
        if forward {
            return Err(ErrorResponse::bad_request(
                "DependencyViolation.ForwardEntry",
                "A DNAT entry depends on the Eip: delete the DNAT entries using the address first.",
            ));
        }
    }
    let instance_id = match binding.kind {
        BoundKind::NetworkInterface => eni_instance_id(&binding.instance_id).unwrap_or_default(),
        _ => binding.instance_id.clone(),
    };
    if let Ok(instance) = store.find(&account, None, &instance_id)
        && !matches!(instance.status(ctx.now), Status::Running | Status::Stopped)
    {
        return Err(instance_status_refused());
    }
    if dry_run(p)? {
        return Err(dry_run_passed());
    }
    let until = ready_at(ctx);
    let eip = store.eips.find_mut(&account, region.id, id)?;
    if let Some(b) = eip.binding.as_mut() {
        b.unbinding_until = Some(until);
        b.unassociated_with_token = token.map(str::to_owned);
    }
    Ok(json!({}))
}
