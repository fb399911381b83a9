//! An instance's security groups changed one at a time, JoinSecurityGroup and
//! LeaveSecurityGroup (by `InstanceId`, or by `NetworkInterfaceId` naming its primary
//! interface), with ECS's limits: an instance is in 1 to 5 groups, all of its VPC, and only a
//! Running or Stopped instance changes; and ModifySecurityGroupRule / ModifySecurityGroupEgressRule
//! (`security_group_rule_changes`).

use serde_json::{Value, json};

use crate::action::{Action, ActionContext};
use crate::catalog;
use crate::error::ErrorResponse;
use crate::instance::Status;
use crate::received_params::ReceivedParams;
use crate::store::Store;

/// The actions of this module and `security_group_rule_changes`, with their handlers.
pub const ACTIONS: &[Action] = &[
    Action::fields("JoinSecurityGroup", join),
    Action::fields("LeaveSecurityGroup", leave),
    Action::fields(
        "ModifySecurityGroupRule",
        crate::security_group_rule_changes::modify_security_group_rule,
    ),
    Action::fields(
        "ModifySecurityGroupEgressRule",
        crate::security_group_rule_changes::modify_security_group_egress_rule,
    ),
];

/// Most groups an instance is in (ECS's default quota).
pub const MAX_GROUPS_PER_INSTANCE: usize = 5;

/// The instance a call names: `InstanceId`, or `NetworkInterfaceId` of its primary interface
/// (`eni-` and the instance ID's suffix); exactly one of them.
fn instance_named(p: &ReceivedParams) -> Result<String, ErrorResponse> {
    match (p.get("InstanceId"), p.get("NetworkInterfaceId")) {
        (Some(_), Some(_)) => Err(ErrorResponse::bad_request(
            "InvalidParameter",
            "InstanceId and NetworkInterfaceId cannot be specified together: name one of them.",
        )),
        (Some(id), None) => Ok(id.to_owned()),
        (None, Some(eni)) => eni
            .strip_prefix("eni-")
            .map(|suffix| format!("i-{suffix}"))
            .ok_or_else(|| {
                ErrorResponse::not_found(
                    "InvalidEniId.NotFound",
                    "The specified NetworkInterfaceId does not exist.",
                )
            }),
        (None, None) => Err(ErrorResponse::missing("InstanceId")),
    }
}

/// The instance's region, VPC and groups once it is found (in `RegionId`, when given) and
/// Running or Stopped; the group is checked to exist in its region.
fn checked(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<(String, String, Vec<String>), ErrorResponse> {
    let group_id = p.required("SecurityGroupId")?.to_owned();
    let region = p.get("RegionId").map(catalog::region_by_id).transpose()?;
    let id = instance_named(p)?;
    let account = ctx.caller.account_id.clone();
    let instance = store.find(&account, region.map(|r| r.id), &id)?;
    let (region_id, vpc_id, groups) = (
        instance.region_id,
        instance.vpc_id.clone(),
        instance.security_group_ids.clone(),
    );
    let status = instance.status(ctx.now);
    let group_vpc = store
        .network
        .account(&account)
        .group(region_id, &group_id)?
        .vpc_id
        .clone();
    if !matches!(status, Status::Running | Status::Stopped) {
        return Err(ErrorResponse::incorrect_status());
    }
    if group_vpc != vpc_id {
        return Err(ErrorResponse::bad_request(
            "InvalidInstanceId.Mismatch",
            "Specified instance and security group are not in the same VPC.",
        ));
    }
    Ok((id, group_id, groups))
}

/// `JoinSecurityGroup`.
fn join(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let (id, group_id, groups) = checked(store, ctx, p)?;
    if groups.contains(&group_id) {
        return Err(ErrorResponse::forbidden(
            "InvalidInstanceId.AlreadyExists",
            "The specified instance already exists in the specified security group.",
        ));
    }
    if groups.len() >= MAX_GROUPS_PER_INSTANCE {
        return Err(ErrorResponse::bad_request(
            "InstanceSecurityGroupLimitExceeded",
            format!(
                "Exceeding the allowed amount of security groups that an instance can be in: at most {MAX_GROUPS_PER_INSTANCE}. Leave a group first."
            ),
        ));
    }
    store
        .find_mut(&ctx.caller.account_id, None, &id)?
        .security_group_ids
        .push(group_id);
    Ok(json!({}))
}

/// `LeaveSecurityGroup`.
fn leave(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let (id, group_id, groups) = checked(store, ctx, p)?;
    if !groups.contains(&group_id) {
        return Err(ErrorResponse::not_found(
            "InvalidSecurityGroupAssociation.NotFound",
            "The specified instance is not in the specified security group.",
        ));
    }
    if groups.len() == 1 {
        return Err(ErrorResponse::forbidden(
            "InstanceLastSecurityGroup",
            "The specified security group is the last security group for the instance: join another group first.",
        ));
    }
    store
        .find_mut(&ctx.caller.account_id, None, &id)?
        .security_group_ids
        .retain(|g| *g != group_id);
    Ok(json!({}))
}
