//! The one table of error codes that clients of these APIs check (Terraform's alicloud provider,
//! the official SDKs) and that the mock does not produce by itself, each with the reason. Every
//! other code those clients check on the actions the mock serves is answered under the real
//! condition (the crate's integration tests provoke each). A code whose condition is the
//! cloud's own load or concurrency can still be injected (`/_mock/errors`,
//! [`crate::ErrorInjection`]): [`UnproducedCode::injectable`] says so. README's section "The
//! mock as a local Alibaba Cloud" renders this table ([`readme_table`]); a test keeps the two
//! in step.

/// A code the mock does not produce by itself.
#[derive(Debug, Clone, Copy)]
pub struct UnproducedCode {
    pub code: &'static str,
    /// The actions that answer it in the cloud.
    pub actions: &'static str,
    pub reason: &'static str,
    /// Whether `/_mock/errors` can inject it (with its real HTTP status).
    pub injectable: bool,
}

const fn row(
    code: &'static str,
    actions: &'static str,
    reason: &'static str,
    injectable: bool,
) -> UnproducedCode {
    UnproducedCode {
        code,
        actions,
        reason,
        injectable,
    }
}

const TRANSIENT: &str = "a transient condition of the cloud's back end (load or a concurrent task), which the mock's immediate answers never meet";
const NO_VSWITCH_DEPENDENTS: &str = "the mock has no HaVips, network ACLs or custom route tables, so nothing of these kinds can be left in a vSwitch";

/// Every code the mock does not produce by itself, with the reason.
pub const UNPRODUCED_CODES: &[UnproducedCode] = &[
    row(
        "IncorrectDiskStatus.Initializing",
        "DeleteDisk, AttachDisk",
        "a new disk is Available at once in the mock (it has no Creating phase)",
        true,
    ),
    row(
        "InvalidOperation.Conflict",
        "AttachDisk, DetachDisk, DeleteDisk",
        TRANSIENT,
        true,
    ),
    row(
        "DisksDetachingOnEcsExceeded",
        "DetachDisk",
        "the mock sets no limit on the disks detaching from one instance at once",
        true,
    ),
    row(
        "InvalidRamRole.NotFound",
        "AttachInstanceRamRole, RunInstances",
        "the mock has no RAM: any well-formed role name is accepted",
        false,
    ),
    row(
        "InvalidKeyPair.NotFound",
        "DescribeKeyPairs, DeleteKeyPairs",
        "the actions the mock serves answer an unknown key pair with InvalidKeyPairName.NotFound (produced) or an empty list, as their reference documents",
        false,
    ),
    row(
        "Forbidden.VpcNotFound",
        "DescribeVpcs",
        "answered for a VPC the caller may not see; the mock's accounts see their own VPCs only, and an unknown VpcId lists nothing",
        false,
    ),
    row("TaskConflict", "the VPC API's writes", TRANSIENT, true),
    row("SystemBusy", "the VPC API's writes", TRANSIENT, true),
    row(
        "IncorrectStatus",
        "TagResources, UnTagResources (VPC)",
        TRANSIENT,
        true,
    ),
    row(
        "OperationFailed.LastTokenProcessing",
        "CreateVpc, CreateVSwitch",
        "the VPC API's creates answer at once in the mock, so a repeated ClientToken never meets its first call still processing",
        true,
    ),
    row(
        "Rejected.Throttling",
        "the VPC API",
        "the mock's rate limits answer Throttling.User, as ECS does",
        true,
    ),
    row(
        "OperationDenied.OtherSubnetProcessing",
        "CreateVSwitch, DeleteVSwitch",
        "another vSwitch of the VPC being changed: vSwitch changes are immediate in the mock",
        true,
    ),
    row(
        "DependencyViolation.HaVip",
        "DeleteVSwitch",
        NO_VSWITCH_DEPENDENTS,
        false,
    ),
    row(
        "DependencyViolation.NetworkAcl",
        "DeleteVSwitch",
        NO_VSWITCH_DEPENDENTS,
        false,
    ),
    row(
        "DependencyViolation.RouteTable",
        "DeleteVSwitch",
        NO_VSWITCH_DEPENDENTS,
        false,
    ),
    row(
        "LimitExceed.PrefixListPerRegion",
        "CreatePrefixList",
        "the mock sets no quota on the prefix lists of a region",
        false,
    ),
    row(
        "LimitExceed.PrefixListAssociationResource",
        "AuthorizeSecurityGroup, AuthorizeSecurityGroupEgress",
        "the mock sets no limit on the groups whose rules name one prefix list",
        false,
    ),
    row(
        "NotSupported.ClassicNetworkPrefixList",
        "AuthorizeSecurityGroup, AuthorizeSecurityGroupEgress",
        "the mock's security groups are all of the VPC type: none is classic",
        false,
    ),
];

/// The table as README shows it (Markdown, one row per code).
pub fn readme_table() -> String {
    let mut table = String::from(
        "| code | answered by | why the mock does not produce it | injectable |\n|---|---|---|---|\n",
    );
    for c in UNPRODUCED_CODES {
        table.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            c.code,
            c.actions,
            c.reason,
            if c.injectable { "yes" } else { "no" }
        ));
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorResponse;

    #[test]
    fn injectable_rows_are_injectable_and_the_others_are_not() {
        for c in UNPRODUCED_CODES {
            assert_eq!(
                ErrorResponse::injectable(c.code).is_some(),
                c.injectable,
                "{}",
                c.code
            );
        }
    }

    #[test]
    fn each_code_is_listed_once() {
        let mut codes: Vec<&str> = UNPRODUCED_CODES.iter().map(|c| c.code).collect();
        codes.sort_unstable();
        let before = codes.len();
        codes.dedup();
        assert_eq!(codes.len(), before);
    }

    #[test]
    fn readme_renders_the_table() {
        let readme = include_str!("../../../../README.md");
        assert!(
            readme.contains(&readme_table()),
            "README's table of codes the mock does not produce is out of date; it must read:\n{}",
            readme_table()
        );
    }
}
