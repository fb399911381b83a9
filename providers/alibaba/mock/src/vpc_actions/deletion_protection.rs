//! `DeletionProtection` of the VPC API: turns an EIP's (`Type=EIP`) or a NAT gateway's
//! (`Type=NATGW`) deletion protection on or off (`ProtectionEnable`); DescribeEipAddresses and
//! DescribeNatGateways report it as `DeletionProtection`, and ReleaseEipAddress and
//! DeleteNatGateway refuse a protected resource.
//!
//! From the API reference: `RegionId`, `ProtectionEnable`, `Type` (`EIP`, `CBWP`, `NATGW`) and
//! `InstanceId` are required; `DeletionProtection.ResourceNotExist`,
//! `DeletionProtection.TypeNotSupport` and `DeletionProtection.AlreadyEnabled` are 400s, and
//! ReleaseEipAddress answers a protected EIP with `InvalidOperation.DeletionProtection` (400).
//! The reference is silent on three things the mock therefore decides: DeleteNatGateway's code
//! for a protected gateway (the same `InvalidOperation.DeletionProtection`), turning off a
//! protection that is off (succeeds, no change), and bandwidth plans (`CBWP`: the mock has
//! none, so every ID is `ResourceNotExist`).

use serde_json::{Value, json};

use crate::action::ActionContext;
use crate::catalog::CatalogRegion;
use crate::error::ErrorResponse;
use crate::received_params::ReceivedParams;
use crate::store::Store;

/// What ReleaseEipAddress and DeleteNatGateway answer for a protected resource.
pub fn protected() -> ErrorResponse {
    ErrorResponse::bad_request(
        "InvalidOperation.DeletionProtection",
        "The instance cannot be deleted because of deletion protection.",
    )
}

fn not_exist() -> ErrorResponse {
    ErrorResponse::bad_request(
        "DeletionProtection.ResourceNotExist",
        "The resource is not exist.",
    )
}

/// `DeletionProtection`.
pub fn deletion_protection(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let enable = p
        .bool("ProtectionEnable")?
        .ok_or_else(|| ErrorResponse::missing("ProtectionEnable"))?;
    let kind = p.required("Type")?;
    let id = p.required("InstanceId")?;
    let account = ctx.caller.account_id.clone();
    let protection = match kind {
        "EIP" => {
            &mut store
                .eips
                .find_mut(&account, region.id, id)
                .map_err(|_| not_exist())?
                .deletion_protection
        }
        "NATGW" => {
            store
                .nat
                .gateway(&account, region.id, id)
                .map_err(|_| not_exist())?;
            match store.nat.gateways.get_mut(id) {
                Some(g) => &mut g.deletion_protection,
                None => return Err(not_exist()),
            }
        }
        "CBWP" => return Err(not_exist()),
        _ => {
            return Err(ErrorResponse::bad_request(
                "DeletionProtection.TypeNotSupport",
                "The resource is not support.",
            ));
        }
    };
    if enable && *protection {
        return Err(ErrorResponse::bad_request(
            "DeletionProtection.AlreadyEnabled",
            "The resource deletion protection is already enabled.",
        ));
    }
    *protection = enable;
    Ok(json!({}))
}
