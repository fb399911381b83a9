//! Deployment sets: every region of a mock account has [`defaults::DEPLOYMENT_SETS`] of them
//! (Availability strategy, at most [`INSTANCES_PER_SET`] instances each), named at RunInstances
//! (`DeploymentSetId`) or joined later (`ModifyInstanceDeployment`, in
//! `instance_deployment_actions`), with ECS's codes.

use crate::defaults;
use crate::error::ErrorResponse;

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
