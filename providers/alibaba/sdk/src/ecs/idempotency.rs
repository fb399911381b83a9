//! Which ECS calls may be repeated safely after a lost response: reads always, writes only with
//! a `ClientToken` (ECS then answers a repeat with the first call's result instead of acting
//! twice). Alibaba's official SDKs add a token to the actions that take one and never retry
//! other writes; `ferroplane ecs call` does the same through [`retry_safety`].

use crate::rpc::Params;

/// ECS actions (version 2014-05-26) whose API reference documents a `ClientToken` parameter
/// ("ensures the idempotence of the request"). `AllocatePublicIpAddress` is not among them: it
/// takes `InstanceId`, `IpAddress` and `VlanId` only. An action belongs here only when its
/// reference was checked: one missing is merely never retried, one listed wrongly would be retried
/// with a token ECS ignores (so `CopyImage`, whose reference here could not be confirmed to take
/// one, is left out).
pub const CLIENT_TOKEN_ACTIONS: &[&str] = &[
    "RunInstances",
    "CreateInstance",
    "DeleteInstances",
    "ModifyInstanceSpec",
    "ModifyPrepayInstanceSpec",
    "ModifyInstanceChargeType",
    "ModifyInstanceNetworkSpec",
    "RenewInstance",
    "ReplaceSystemDisk",
    "CreateDisk",
    "ResizeDisk",
    "ModifyDiskChargeType",
    "CreateSnapshot",
    "CreateSnapshotGroup",
    "CreateImage",
    "CreateSecurityGroup",
    "AuthorizeSecurityGroup",
    "AuthorizeSecurityGroupEgress",
    "RevokeSecurityGroup",
    "RevokeSecurityGroupEgress",
    "CreateNetworkInterface",
    "AssignPrivateIpAddresses",
    "AssignIpv6Addresses",
    "CreateDeploymentSet",
    "AllocateDedicatedHosts",
    "CreateDedicatedHostCluster",
    "CreateCapacityReservation",
    "CreateElasticityAssurance",
    "PurchaseReservedInstancesOffering",
    "RunCommand",
    "InvokeCommand",
];

/// Whether the action's API reference documents a `ClientToken`.
pub fn takes_client_token(action: &str) -> bool {
    CLIENT_TOKEN_ACTIONS.contains(&action)
}

/// Whether the action only reads (`Describe*`, `List*`, `Get*`, `Query*`), so repeating it
/// changes nothing.
pub fn is_read_only(action: &str) -> bool {
    ["Describe", "List", "Get", "Query"]
        .iter()
        .any(|prefix| action.starts_with(prefix))
}

/// Whether a call may be retried after a lost response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetrySafety {
    /// A read: retry freely.
    ReadOnly,
    /// A write carrying a `ClientToken`: a retry with the same token cannot act twice.
    Idempotent,
    /// A write without a token: a retry after a lost response may act twice, so never retry.
    NotIdempotent,
}

/// Adds a fresh `ClientToken` (a UUID) to a call of an action that takes one when the caller
/// gave none, and says whether the call may then be retried.
pub fn retry_safety(action: &str, params: &mut Params) -> RetrySafety {
    if is_read_only(action) {
        return RetrySafety::ReadOnly;
    }
    if takes_client_token(action) && !params.contains("ClientToken") {
        params.set("ClientToken", uuid::Uuid::new_v4());
    }
    if params.contains("ClientToken") {
        RetrySafety::Idempotent
    } else {
        RetrySafety::NotIdempotent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_added_to_actions_that_take_one() {
        let mut params = Params::new();
        assert_eq!(
            retry_safety("RunInstances", &mut params),
            RetrySafety::Idempotent
        );
        let token = params.get("ClientToken").unwrap().to_owned();
        assert_eq!(token.len(), 36);
        // A token the caller chose is kept.
        let mut params = Params::new();
        params.set("ClientToken", "mine");
        assert_eq!(
            retry_safety("CreateDisk", &mut params),
            RetrySafety::Idempotent
        );
        assert_eq!(params.get("ClientToken"), Some("mine"));
    }

    #[test]
    fn other_writes_are_not_idempotent_and_reads_are_safe() {
        for action in ["StartInstance", "DeleteInstance", "AllocatePublicIpAddress"] {
            let mut params = Params::new();
            assert_eq!(
                retry_safety(action, &mut params),
                RetrySafety::NotIdempotent,
                "{action}"
            );
            assert!(!params.contains("ClientToken"), "{action}");
        }
        for action in ["DescribeInstances", "ListTagResources", "DescribeRegions"] {
            let mut params = Params::new();
            assert_eq!(retry_safety(action, &mut params), RetrySafety::ReadOnly);
            assert!(!params.contains("ClientToken"));
        }
        assert!(CLIENT_TOKEN_ACTIONS.iter().all(|a| !is_read_only(a)));
    }
}
