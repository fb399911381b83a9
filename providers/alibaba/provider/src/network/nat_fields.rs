//! The class of every `spec.forProvider` property of `NATGateway`, `SNATEntry` and `DNATEntry`
//! (see `field_class`): what changes in place and by which call, what is fixed at creation. The
//! in-place rows are compared in `nat_gateway`, `snat_entry` and `dnat_entry` at every poll.

use super::field_class::{Field, immutable, in_place, management};

const MODIFY: &str = "ModifyNatGatewayAttribute";

/// `NATGateway`.
pub const NAT_GATEWAY_FIELDS: &[Field] = &[
    immutable("regionId"),
    immutable("vpcId"),
    management("vpcIdRef", "names the VPC object whose ID becomes vpcId"),
    management(
        "vpcIdSelector",
        "selects the VPC object whose ID becomes vpcId",
    ),
    immutable("vSwitchId"),
    management(
        "vSwitchIdRef",
        "names the VSwitch object whose ID becomes vSwitchId",
    ),
    management(
        "vSwitchIdSelector",
        "selects the VSwitch object whose ID becomes vSwitchId",
    ),
    immutable("natType"),
    immutable("networkType"),
    in_place("name", MODIFY),
    in_place("description", MODIFY),
    in_place("deletionProtection", "DeletionProtection"),
    in_place("tags", "TagResources / UnTagResources"),
];

/// `SNATEntry`.
pub const SNAT_ENTRY_FIELDS: &[Field] = &[
    immutable("regionId"),
    immutable("natGatewayId"),
    management(
        "natGatewayIdRef",
        "names the NATGateway object whose ID becomes natGatewayId",
    ),
    management(
        "natGatewayIdSelector",
        "selects the NATGateway object whose ID becomes natGatewayId",
    ),
    immutable("sourceVSwitchId"),
    management(
        "sourceVSwitchIdRef",
        "names the VSwitch object whose ID becomes sourceVSwitchId",
    ),
    management(
        "sourceVSwitchIdSelector",
        "selects the VSwitch object whose ID becomes sourceVSwitchId",
    ),
    immutable("sourceCIDR"),
    immutable("eipId"),
    management("eipIdRef", "names the EIP object whose ID becomes eipId"),
    management(
        "eipIdSelector",
        "selects the EIP object whose ID becomes eipId",
    ),
    in_place("snatIp", "ModifySnatEntry"),
    in_place("name", "ModifySnatEntry"),
];

const MODIFY_FORWARD: &str = "ModifyForwardEntry";

/// `DNATEntry`.
pub const DNAT_ENTRY_FIELDS: &[Field] = &[
    immutable("regionId"),
    immutable("natGatewayId"),
    management(
        "natGatewayIdRef",
        "names the NATGateway object whose ID becomes natGatewayId",
    ),
    management(
        "natGatewayIdSelector",
        "selects the NATGateway object whose ID becomes natGatewayId",
    ),
    immutable("eipId"),
    management("eipIdRef", "names the EIP object whose ID becomes eipId"),
    management(
        "eipIdSelector",
        "selects the EIP object whose ID becomes eipId",
    ),
    in_place("externalIp", MODIFY_FORWARD),
    in_place("externalPort", MODIFY_FORWARD),
    in_place("ipProtocol", MODIFY_FORWARD),
    in_place("internalIp", MODIFY_FORWARD),
    immutable("ecsInstanceId"),
    management(
        "ecsInstanceIdRef",
        "names the ECSInstance object whose ID becomes ecsInstanceId",
    ),
    management(
        "ecsInstanceIdSelector",
        "selects the ECSInstance object whose ID becomes ecsInstanceId",
    ),
    in_place("internalPort", MODIFY_FORWARD),
    in_place("name", MODIFY_FORWARD),
];

#[cfg(test)]
mod tests {
    use ferroplane_apis::alibabacloud::{DNATEntry, NATGateway, SNATEntry};
    use kube::CustomResourceExt;

    use super::*;
    use crate::network::field_class::checks;

    #[test]
    fn every_nat_gateway_property_has_a_class() {
        let crd = serde_json::to_value(NATGateway::crd()).expect("CRD serializes");
        checks::classes_match_the_crd(&crd, NAT_GATEWAY_FIELDS);
    }

    #[test]
    fn every_snat_entry_property_has_a_class() {
        let crd = serde_json::to_value(SNATEntry::crd()).expect("CRD serializes");
        checks::classes_match_the_crd(&crd, SNAT_ENTRY_FIELDS);
    }

    #[test]
    fn every_dnat_entry_property_has_a_class() {
        let crd = serde_json::to_value(DNATEntry::crd()).expect("CRD serializes");
        checks::classes_match_the_crd(&crd, DNAT_ENTRY_FIELDS);
    }

    #[test]
    fn readme_lists_the_tables() {
        checks::readme_lists_the_table("dnatentry-fields", DNAT_ENTRY_FIELDS);
        checks::readme_lists_the_table("natgateway-fields", NAT_GATEWAY_FIELDS);
        checks::readme_lists_the_table("snatentry-fields", SNAT_ENTRY_FIELDS);
    }
}
