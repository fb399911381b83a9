//! Reads of an instance's settings that Terraform's alicloud provider makes on every refresh:
//! DescribeUserData, DescribeInstanceMaintenanceAttributes and
//! DescribeInstanceAttachmentAttributes (with DescribeNetworkInterfaces, in
//! `network_interface_actions`). The mock keeps no maintenance policy or private pool of its
//! own, so every instance shows ECS's defaults for them: no maintenance window, notifications
//! off, `AutoRecover`, and no private pool (`None`).

use serde_json::{Value, json};

use crate::action::{Action, ActionContext, page_of, requested_region};
use crate::error::ErrorResponse;
use crate::instance::StoredInstance;
use crate::received_params::ReceivedParams;
use crate::store::Store;

/// The actions of this module and `network_interface_actions`, with their handlers.
pub const ACTIONS: &[Action] = &[
    Action::fields("DescribeUserData", describe_user_data),
    Action::fields(
        "DescribeInstanceMaintenanceAttributes",
        describe_maintenance_attributes,
    ),
    Action::fields(
        "DescribeInstanceAttachmentAttributes",
        describe_attachment_attributes,
    ),
    Action::fields(
        "DescribeNetworkInterfaces",
        crate::network_interface_actions::describe_network_interfaces,
    ),
];

/// Most instance IDs one call names.
const MAX_IDS: usize = 100;

/// `DescribeUserData`: the instance's user data as RunInstances or ModifyInstanceAttribute took
/// it (Base64), empty when it has none.
fn describe_user_data(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let region = requested_region(p)?;
    let id = p.required("InstanceId")?;
    let instance = store.find(&ctx.caller.account_id, Some(region.id), id)?;
    Ok(json!({
        "InstanceId": instance.id,
        "RegionId": instance.region_id,
        "UserData": instance.user_data.as_deref().unwrap_or_default(),
    }))
}

/// The account's instances in the request's region named by `ids` (every one when `ids` is
/// empty), oldest first, and the page `PageNumber`/`PageSize` (1–100, default 10) asks for.
/// IDs that name no instance of the account are left out, as ECS's batch reads do.
fn paged_instances<'s>(
    store: &'s Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
    ids: &[String],
) -> Result<(usize, usize, usize, Vec<&'s StoredInstance>), ErrorResponse> {
    let region = requested_region(p)?;
    if ids.len() > MAX_IDS {
        return Err(ErrorResponse::invalid("InstanceIds"));
    }
    let number = p
        .number_in::<usize>("PageNumber", 1, usize::MAX / 128)?
        .unwrap_or(1);
    let size = p.number_in::<usize>("PageSize", 1, 100)?.unwrap_or(10);
    let chosen: Vec<&StoredInstance> = store
        .in_region(&ctx.caller.account_id, region.id)
        .filter(|i| ids.is_empty() || ids.contains(&i.id))
        .collect();
    let (total, page) = page_of(&chosen, number, size);
    Ok((total, number, size, page))
}

/// `DescribeInstanceMaintenanceAttributes` (`InstanceId.N`).
fn describe_maintenance_attributes(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let ids = p.list("InstanceId", MAX_IDS)?;
    let (total, number, size, page) = paged_instances(store, ctx, p, &ids)?;
    let attributes: Vec<Value> = page
        .iter()
        .map(|i| {
            json!({
                "InstanceId": i.id,
                "NotifyOnMaintenance": false,
                "MaintenanceWindows": {"MaintenanceWindow": []},
                "ActionOnMaintenance": {
                    "DefaultValue": "AutoRecover",
                    "Value": "AutoRecover",
                    "SupportedValues": {"SupportedValue": ["Stop", "AutoRecover"]},
                },
            })
        })
        .collect();
    Ok(json!({
        "TotalCount": total,
        "PageNumber": number,
        "PageSize": size,
        "MaintenanceAttributes": {"MaintenanceAttribute": attributes},
    }))
}

/// `DescribeInstanceAttachmentAttributes` (`InstanceIds`, a JSON array, required).
fn describe_attachment_attributes(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let ids = p
        .json_string_array("InstanceIds")?
        .filter(|ids| !ids.is_empty())
        .ok_or_else(|| ErrorResponse::missing("InstanceIds"))?;
    let (total, number, size, page) = paged_instances(store, ctx, p, &ids)?;
    let instances: Vec<Value> = page
        .iter()
        .map(|i| {
            json!({
                "InstanceId": i.id,
                "PrivatePoolOptionsId": "",
                "PrivatePoolOptionsMatchCriteria": "None",
            })
        })
        .collect();
    Ok(json!({
        "TotalCount": total,
        "PageNumber": number,
        "PageSize": size,
        "Instances": {"Instance": instances},
    }))
}
