//! Deployment sets: every region of a mock account has [`defaults::DEPLOYMENT_SETS`] of them
//! (Availability strategy, at most [`INSTANCES_PER_SET`] instances each), named at RunInstances
//! (`DeploymentSetId`) or joined later (`ModifyInstanceDeployment`), with ECS's codes.

use serde_json::{Value, json};

use crate::defaults;
use crate::ecs_actions::ActionContext;
use crate::error::ErrorResponse;
use crate::instance::Status;
use crate::received_params::ReceivedParams;
use crate::store::Store;

/// Instances an Availability deployment set spreads over distinct hosts in one zone.
pub const INSTANCES_PER_SET: usize = 20;

/// Whether `id` is one of `region_id`'s deployment sets.
pub fn exists(region_id: &str, id: &str) -> bool {
    (0..defaults::DEPLOYMENT_SETS).any(|n| defaults::deployment_set_id(region_id, n) == id)
}

/// `DeploymentSet.NotFound` (404), as RunInstances answers it.
pub fn not_found() -> ErrorResponse {
    ErrorResponse::not_found(
        "DeploymentSet.NotFound",
        "The specified deployment set does not exist.",
    )
}

/// `DeploymentSet.InstanceLimitExceeded` (403).
pub fn full() -> ErrorResponse {
    ErrorResponse::forbidden(
        "DeploymentSet.InstanceLimitExceeded",
        "The number of instances on the specified Deployment Set has reached the limit.",
    )
}

/// Instances of `account_id` in `region_id` that are in deployment set `id`.
pub fn members(
    store: &Store,
    account_id: &std::sync::Arc<str>,
    region_id: &'static str,
    id: &str,
) -> usize {
    store
        .in_region(account_id, region_id)
        .filter(|i| i.deployment_set_id.as_deref() == Some(id))
        .count()
}

/// `ModifyInstanceDeployment` into another deployment set, on the instance's current host
/// (`Force` is accepted; the mock has no hosts to move between).
pub(crate) fn modify_instance_deployment(
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
    if !exists(region_id, set) {
        return Err(ErrorResponse::bad_request(
            "DeploymentSet.InvalidId",
            "The specified Deployment Set id doesn't exist.",
        ));
    }
    if !matches!(status, Status::Running | Status::Stopped) {
        return Err(ErrorResponse::incorrect_status());
    }
    if current.as_deref() != Some(set)
        && members(store, &account, region_id, set) >= INSTANCES_PER_SET
    {
        return Err(full());
    }
    store.find_mut(&account, None, id)?.deployment_set_id = Some(set.to_owned());
    Ok(json!({}))
}
