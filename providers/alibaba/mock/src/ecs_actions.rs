//! The ECS instance actions (version `2014-05-26`): the table of their names and handlers, and
//! the lifecycle actions (start, stop, reboot, release) and DescribeRegions. The handlers of the
//! other instance actions are in the `instance_*_actions` modules and `tag_actions`; the
//! security-group, disk and key-pair actions have their own tables (see `products`).

use serde_json::{Value, json};

use crate::action::{Action, ActionContext, dry_run, dry_run_passed};
use crate::catalog;
use crate::error::ErrorResponse;
use crate::instance_attribute_actions;
use crate::instance_deployment_actions;
use crate::instance_describe_actions;
use crate::instance_ipv6_actions;
use crate::instance_launch_actions;
use crate::instance_settings_actions;
use crate::instance_vpc_actions;
use crate::param_checks;
use crate::received_params::ReceivedParams;
use crate::store::Store;
use crate::store::lifecycle::Release;
use crate::tag_actions;

/// The ECS API version.
pub const VERSION: &str = "2014-05-26";

/// Every ECS instance action the mock serves, with its handler.
pub const ACTIONS: &[Action] = &[
    Action::fields("RunInstances", instance_launch_actions::run_instances),
    Action::encoded("DescribeInstances", |s, c, p| {
        instance_describe_actions::describe_instances(s, c, p)
    }),
    Action::encoded("DescribeInstanceAttribute", |s, c, p| {
        instance_describe_actions::describe_instance_attribute(s, c, p)
    }),
    Action::fields("StartInstance", start_instance),
    Action::fields("StopInstance", stop_instance),
    Action::fields("RebootInstance", reboot_instance),
    Action::fields("DeleteInstance", delete_instance),
    Action::fields("DeleteInstances", delete_instances),
    Action::fields(
        "ModifyInstanceAttribute",
        instance_attribute_actions::modify_attribute,
    ),
    Action::fields(
        "ModifyInstanceSpec",
        instance_attribute_actions::modify_spec,
    ),
    Action::fields("TagResources", tag_actions::tag_resources),
    Action::fields("UntagResources", tag_actions::untag_resources),
    Action::fields("ListTagResources", |s, c, p| {
        tag_actions::list_tag_resources(s, c, p)
    }),
    Action::fields("DescribeRegions", |_, _, _| Ok(describe_regions())),
    Action::fields(
        "ModifyInstanceNetworkSpec",
        instance_settings_actions::modify_network_spec,
    ),
    Action::fields(
        "ModifyInstanceMetadataOptions",
        instance_settings_actions::modify_metadata_options,
    ),
    Action::fields(
        "AttachInstanceRamRole",
        instance_settings_actions::attach_ram_role,
    ),
    Action::fields(
        "DetachInstanceRamRole",
        instance_settings_actions::detach_ram_role,
    ),
    Action::fields(
        "DescribeInstanceRamRole",
        instance_settings_actions::describe_ram_role,
    ),
    Action::fields(
        "JoinResourceGroup",
        instance_settings_actions::join_resource_group,
    ),
    Action::fields(
        "ModifyInstanceAutoRenewAttribute",
        instance_settings_actions::modify_auto_renew,
    ),
    Action::fields(
        "DescribeInstanceAutoRenewAttribute",
        instance_settings_actions::describe_auto_renew,
    ),
    Action::fields(
        "ModifyInstanceChargeType",
        instance_settings_actions::modify_charge_type,
    ),
    Action::fields(
        "ReplaceSystemDisk",
        instance_settings_actions::replace_system_disk,
    ),
    Action::fields(
        "ModifyInstanceVpcAttribute",
        instance_vpc_actions::modify_instance_vpc_attribute,
    ),
    Action::fields("AssignIpv6Addresses", instance_ipv6_actions::assign),
    Action::fields("UnassignIpv6Addresses", instance_ipv6_actions::unassign),
    Action::fields(
        "ModifyInstanceDeployment",
        instance_deployment_actions::modify_instance_deployment,
    ),
];

fn start_instance(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let account = &ctx.caller.account_id;
    let id = p.required("InstanceId")?;
    dry_run_on_instance(store, account, id, p)?;
    store.start(account, id, ctx.now, ctx.delay)?;
    Ok(json!({}))
}

fn stop_instance(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let account = &ctx.caller.account_id;
    let id = p.required("InstanceId")?;
    p.bool("ForceStop")?;
    let stop_charging = match p.get("StoppedMode") {
        None | Some("KeepCharging") => false,
        Some("StopCharging") => true,
        Some(_) => return Err(ErrorResponse::invalid("StoppedMode")),
    };
    dry_run_on_instance(store, account, id, p)?;
    store.stop(account, id, stop_charging, ctx.now, ctx.delay)?;
    Ok(json!({}))
}

fn reboot_instance(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let account = &ctx.caller.account_id;
    let id = p.required("InstanceId")?;
    p.bool("ForceStop")?;
    dry_run_on_instance(store, account, id, p)?;
    store.reboot(account, id, ctx.now, ctx.delay)?;
    Ok(json!({}))
}

fn delete_instance(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let account = &ctx.caller.account_id;
    let id = p.required("InstanceId")?.to_owned();
    let release = release(p)?;
    dry_run_on_instance(store, account, &id, p)?;
    store.delete(account, None, &[id], release, None, ctx.now)?;
    Ok(json!({}))
}

fn delete_instances(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let account = &ctx.caller.account_id;
    let region = catalog::region_by_id(p.required("RegionId")?)?;
    let ids = p.list("InstanceId", 100)?;
    if ids.is_empty() {
        return Err(ErrorResponse::missing("InstanceId.1"));
    }
    let release = release(p)?;
    let token = p.get("ClientToken");
    if let Some(t) = token {
        param_checks::check_client_token(t)?;
    }
    if dry_run(p)? {
        for id in &ids {
            store
                .find(account, Some(region.id), id)
                .map_err(ids_not_found)?;
        }
        return Err(dry_run_passed());
    }
    store
        .delete(account, Some(region.id), &ids, release, token, ctx.now)
        .map_err(ids_not_found)?;
    Ok(json!({}))
}

/// DeleteInstances names an unknown instance with its own code, `InvalidInstanceIds.NotFound`
/// (404); other errors pass.
fn ids_not_found(error: ErrorResponse) -> ErrorResponse {
    if error.code == "InvalidInstanceId.NotFound" {
        ErrorResponse::not_found(
            "InvalidInstanceIds.NotFound",
            format!(
                "The specified InstanceIds does not exist: {}",
                error.message
            ),
        )
    } else {
        error
    }
}

/// With `DryRun`, `DryRunOperation` once the instance is found (or its not-found error).
fn dry_run_on_instance(
    store: &Store,
    account: &str,
    id: &str,
    p: &ReceivedParams,
) -> Result<(), ErrorResponse> {
    if dry_run(p)? {
        store.find(account, None, id)?;
        return Err(dry_run_passed());
    }
    Ok(())
}

/// `Force` and `TerminateSubscription` of DeleteInstance(s).
fn release(p: &ReceivedParams) -> Result<Release, ErrorResponse> {
    Ok(Release {
        force: p.bool("Force")?.unwrap_or(false),
        terminate_subscription: p.bool("TerminateSubscription")?.unwrap_or(false),
    })
}

fn describe_regions() -> Value {
    let regions: Vec<Value> = catalog::regions()
        .iter()
        .map(|r| {
            json!({
                "RegionId": r.id,
                "LocalName": r.local_name,
                "RegionEndpoint": r.endpoint(),
                "Status": "available",
            })
        })
        .collect();
    json!({"Regions": {"Region": regions}})
}
