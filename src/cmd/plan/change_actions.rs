//! The field a non-ECSInstance kind's diff line changes, and the cloud action that applies it,
//! by that field (the calls each kind's `update` makes for it; README's field tables list the same).
//! An empty action: the kind's update makes more than one kind of call for it, or it is not
//! known here. One table.

/// The field a `kind`'s diff line changes: its first word, or `association` for an
/// EIPAssociation's (its one change: the EIP associated again).
pub fn field<'a>(kind: &str, line: &'a str) -> &'a str {
    if kind == "EIPAssociation" {
        return "association";
    }
    line.split([':', ' ']).next().unwrap_or_default()
}

/// The action of `field`'s change of a `kind`, whose diff says `line`.
pub fn action(kind: &str, field: &str, line: &str) -> &'static str {
    match (kind, field) {
        (_, "tags") if kind == "Disk" || kind == "SecurityGroup" => "TagResources / UntagResources",
        (_, "tags") => "TagResources / UnTagResources",
        ("VPC", "vpcName" | "description") => "ModifyVpcAttribute",
        ("VSwitch", "vSwitchName" | "description") => "ModifyVSwitchAttribute",
        ("SecurityGroup", "securityGroupName" | "description") => "ModifySecurityGroupAttribute",
        ("SecurityGroup", "ingress" | "egress") => rules_action(line),
        ("SecurityGroupRule", "policy" | "priority" | "description") => {
            "ModifySecurityGroupRule / ModifySecurityGroupEgressRule"
        }
        ("SecurityGroupRule", "rule") => "AuthorizeSecurityGroup",
        ("Disk", "size") => "ResizeDisk",
        ("Disk", "performanceLevel") => "ModifyDiskSpec",
        ("Disk", "diskName" | "description" | "deleteAutoSnapshot") => "ModifyDiskAttribute",
        ("Disk", "detach") => "DetachDisk",
        ("Disk", "attach") => "AttachDisk",
        ("EIP", "name" | "description" | "bandwidth") => "ModifyEipAddressAttribute",
        ("NATGateway", "name" | "description") => "ModifyNatGatewayAttribute",
        ("EIPAssociation", "association") => "AssociateEipAddress",
        // One call takes every changed field of an entry.
        ("SNATEntry", "snatIp" | "name") => "ModifySnatEntry",
        (
            "DNATEntry",
            "externalIp" | "externalPort" | "ipProtocol" | "internalIp" | "internalPort" | "name",
        ) => "ModifyForwardEntry",
        _ => "",
    }
}

/// A group's rules of one direction: revoked, authorized, or both (`RevokeSecurityGroup` first).
fn rules_action(line: &str) -> &'static str {
    match (line.contains("revoke "), line.contains("authorize ")) {
        (true, true) => "RevokeSecurityGroup, AuthorizeSecurityGroup",
        (true, false) => "RevokeSecurityGroup",
        (false, _) => "AuthorizeSecurityGroup",
    }
}

/// The calls of `action` in order (`A, B`), or none where it names alternatives (`A / B`) the
/// change's line does not choose between.
pub fn calls(action: &'static str) -> Vec<&'static str> {
    if action.contains(" / ") {
        return Vec::new();
    }
    action.split(", ").filter(|call| !call.is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::{action, calls};

    #[test]
    fn rules_lines_name_their_calls() {
        let add = "ingress: authorize Accept tcp 443/443 0.0.0.0/0 priority 1";
        assert_eq!(
            action("SecurityGroup", "ingress", add),
            "AuthorizeSecurityGroup"
        );
        let swap =
            "egress: authorize Accept tcp 1/1 a priority 1; revoke Drop tcp 1/1 a priority 1 (r-1)";
        assert_eq!(
            action("SecurityGroup", "egress", swap),
            "RevokeSecurityGroup, AuthorizeSecurityGroup"
        );
        assert_eq!(action("Disk", "size", "size 20 → 40 GiB"), "ResizeDisk");
        assert_eq!(action("KeyPair", "anything", ""), "");
        assert_eq!(
            calls("RevokeSecurityGroup, AuthorizeSecurityGroup"),
            ["RevokeSecurityGroup", "AuthorizeSecurityGroup"]
        );
        assert!(calls("TagResources / UntagResources").is_empty());
        assert!(calls("").is_empty());
    }

    #[test]
    fn nat_entries_and_associations_name_their_modify_and_associate_calls() {
        use super::field;
        let dnat = "externalPort: \"2222\" → \"2223\"";
        assert_eq!(field("DNATEntry", dnat), "externalPort");
        assert_eq!(
            action("DNATEntry", field("DNATEntry", dnat), dnat),
            "ModifyForwardEntry"
        );
        let snat = "snatIp: \"39.96.0.1\" → \"39.96.0.2\"";
        assert_eq!(
            action("SNATEntry", field("SNATEntry", snat), snat),
            "ModifySnatEntry"
        );
        let again =
            "EIP eip-1 was unassociated from i-1 outside ferroplane: it is associated again";
        assert_eq!(field("EIPAssociation", again), "association");
        assert_eq!(
            action("EIPAssociation", "association", again),
            "AssociateEipAddress"
        );
        assert_eq!(calls("AssociateEipAddress"), ["AssociateEipAddress"]);
    }
}
