//! Tags of VPCs, vSwitches, EIPs and NAT gateways: TagResources and UnTagResources of the VPC
//! API.

use serde_json::{Value, json};

use crate::action::ActionContext;
use crate::catalog::CatalogRegion;
use crate::error::ErrorResponse;
use crate::network::AccountNetwork;
use crate::received_params::ReceivedParams;
use crate::store::Store;
use crate::tags::{self, Tags, UntagRequest};

/// `TagResources` of the VPC API: `ResourceType` `VPC`, `VSWITCH`, `EIP` or `NATGATEWAY`,
/// `ResourceId.N`, `Tag.N`.
pub fn tag_resources(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let resource_type = p.required("ResourceType")?.to_ascii_uppercase();
    let (ids, tags) = tags::tag_request(p)?;
    if resource_type == "EIP" {
        return eip_tags(store, ctx, region, &ids, |t| tags::merge(t, &tags));
    }
    if resource_type == "NATGATEWAY" {
        return gateway_tags(store, ctx, region, &ids, |t| tags::merge(t, &tags));
    }
    let network = store.network.account(&ctx.caller.account_id);
    // Check every resource before changing any.
    check_resources(network, region, &resource_type, &ids)?;
    for id in &ids {
        let existing = tags_of(network, &resource_type, id);
        if let Some(existing) = existing {
            tags::merge(existing, &tags)?;
        }
    }
    Ok(json!({}))
}

/// `UnTagResources`: removes the keys named (`TagKey.N`), or every tag with `All=true`.
pub fn untag_resources(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let resource_type = p.required("ResourceType")?.to_ascii_uppercase();
    let request = UntagRequest::parse(p)?;
    if request.keys.is_empty() && !request.all {
        return Err(ErrorResponse::missing("TagKey.1"));
    }
    if resource_type == "EIP" {
        return eip_tags(store, ctx, region, &request.ids, |t| {
            request.remove_from(t);
            Ok(())
        });
    }
    if resource_type == "NATGATEWAY" {
        return gateway_tags(store, ctx, region, &request.ids, |t| {
            request.remove_from(t);
            Ok(())
        });
    }
    let network = store.network.account(&ctx.caller.account_id);
    check_resources(network, region, &resource_type, &request.ids)?;
    for id in &request.ids {
        if let Some(tags) = tags_of(network, &resource_type, id) {
            request.remove_from(tags);
        }
    }
    Ok(json!({}))
}

/// Checks that every one of `ids` is a resource of `resource_type` (`VPC` or `VSWITCH`) in
/// `region`.
fn check_resources(
    network: &AccountNetwork,
    region: &CatalogRegion,
    resource_type: &str,
    ids: &[String],
) -> Result<(), ErrorResponse> {
    for id in ids {
        match resource_type {
            "VPC" => {
                network.vpc(region.id, id)?;
            }
            "VSWITCH" => {
                network.vswitch(region.id, id)?;
            }
            _ => {
                return Err(ErrorResponse::bad_request(
                    "InvalidResourceType.NotSupported",
                    "The specified ResourceType is not supported: use VPC, VSWITCH, EIP or NATGATEWAY.",
                ));
            }
        }
    }
    Ok(())
}

/// The tags of resource `id` of `resource_type` (checked by [`check_resources`]).
fn tags_of<'n>(
    network: &'n mut AccountNetwork,
    resource_type: &str,
    id: &str,
) -> Option<&'n mut Tags> {
    match resource_type {
        "VPC" => network.vpcs.get_mut(id).map(|v| &mut v.tags),
        _ => network.vswitches.get_mut(id).map(|s| &mut s.tags),
    }
}

/// Applies `change` to the tags of the EIPs `ids`, once every one of them is known.
fn eip_tags(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    ids: &[String],
    mut change: impl FnMut(&mut Tags) -> Result<(), ErrorResponse>,
) -> Result<Value, ErrorResponse> {
    let account = &ctx.caller.account_id;
    for id in ids {
        store.eips.find(account, region.id, id)?;
    }
    for id in ids {
        change(&mut store.eips.find_mut(account, region.id, id)?.tags)?;
    }
    Ok(json!({}))
}

/// Applies `change` to the tags of the NAT gateways `ids`, once every one of them is known.
fn gateway_tags(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    ids: &[String],
    mut change: impl FnMut(&mut Tags) -> Result<(), ErrorResponse>,
) -> Result<Value, ErrorResponse> {
    let account = &ctx.caller.account_id;
    for id in ids {
        store.nat.gateway(account, region.id, id)?;
    }
    for id in ids {
        if let Some(g) = store.nat.gateways.get_mut(id) {
            change(&mut g.tags)?;
        }
    }
    Ok(json!({}))
}
