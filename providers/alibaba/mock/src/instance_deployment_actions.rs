//! ModifyInstanceDeployment: an instance joins another of its region's deployment sets (see
//! `deployment_sets`).

use serde_json::{Value, json};

use crate::action::ActionContext;
use crate::deployment_sets;
use crate::error::ErrorResponse;
use crate::instance::Status;
use crate::received_params::ReceivedParams;
use crate::store::Store;

/// `ModifyInstanceDeployment` into another deployment set, on the instance's current host
/// (`Force` is accepted; the mock has no hosts to move between).
pub fn modify_instance_deployment(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let id = p.required("InstanceId")?;
    let set = p.required("DeploymentSetId")?;
    p.bool("Force")?;
    let account = ctx.caller.account_id.clone();
    let (region_id, status, current) = {
        let i = store.find(&account, None, id)?;
        (i.region_id, i.status(ctx.now), i.deployment_set_id.clone())
    };
    if !deployment_sets::exists(region_id, set) {
        return Err(ErrorResponse::bad_request(
            "DeploymentSet.InvalidId",
            "The specified Deployment Set id doesn't exist.",
        ));
    }
    if !matches!(status, Status::Running | Status::Stopped) {
        return Err(ErrorResponse::incorrect_status());
    }
    if current.as_deref() != Some(set)
        && store.deployment_set_members(&account, region_id, set)
            >= deployment_sets::INSTANCES_PER_SET
    {
        return Err(deployment_sets::full());
    }
    store.find_mut(&account, None, id)?.deployment_set_id = Some(set.to_owned());
    Ok(json!({}))
}
