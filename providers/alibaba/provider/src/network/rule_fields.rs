//! The class of every `spec.forProvider` property of `SecurityGroupRule` (see `field_class`):
//! the rule's identity is fixed at creation, its policy, priority and description change in
//! place and are compared in `rule_spec::change` at every poll.

use super::field_class::{Field, immutable, in_place, management};

const MODIFY: &str = "ModifySecurityGroupRule / ModifySecurityGroupEgressRule";

/// `SecurityGroupRule`.
pub const SECURITY_GROUP_RULE_FIELDS: &[Field] = &[
    immutable("regionId"),
    immutable("securityGroupId"),
    management(
        "securityGroupIdRef",
        "names the SecurityGroup object whose ID becomes securityGroupId",
    ),
    management(
        "securityGroupIdSelector",
        "selects the SecurityGroup object whose ID becomes securityGroupId",
    ),
    immutable("direction"),
    immutable("ipProtocol"),
    immutable("portRange"),
    immutable("sourceCidrIp"),
    immutable("ipv6SourceCidrIp"),
    immutable("sourceGroupId"),
    management(
        "sourceGroupIdRef",
        "names the SecurityGroup object whose ID becomes sourceGroupId",
    ),
    management(
        "sourceGroupIdSelector",
        "selects the SecurityGroup object whose ID becomes sourceGroupId",
    ),
    immutable("sourcePrefixListId"),
    immutable("destCidrIp"),
    immutable("ipv6DestCidrIp"),
    immutable("destGroupId"),
    management(
        "destGroupIdRef",
        "names the SecurityGroup object whose ID becomes destGroupId",
    ),
    management(
        "destGroupIdSelector",
        "selects the SecurityGroup object whose ID becomes destGroupId",
    ),
    immutable("destPrefixListId"),
    in_place("policy", MODIFY),
    in_place("priority", MODIFY),
    in_place("description", MODIFY),
];

#[cfg(test)]
mod tests {
    use ferroplane_apis::alibabacloud::SecurityGroupRule;
    use kube::CustomResourceExt;

    use super::*;
    use crate::network::field_class::checks;

    #[test]
    fn every_security_group_rule_property_has_a_class() {
        let crd = serde_json::to_value(SecurityGroupRule::crd()).expect("CRD serializes");
        checks::classes_match_the_crd(&crd, SECURITY_GROUP_RULE_FIELDS);
    }

    #[test]
    fn readme_lists_the_table() {
        checks::readme_lists_the_table("securitygrouprule-fields", SECURITY_GROUP_RULE_FIELDS);
    }
}
