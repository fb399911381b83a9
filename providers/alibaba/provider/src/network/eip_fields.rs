//! The class of every `spec.forProvider` property of `EIP` and `EIPAssociation` (see
//! `field_class`): what changes in place and by which call, what is fixed at creation. The
//! EIP's in-place rows are compared in `eip` at every poll.

use super::field_class::{Field, immutable, in_place, management};

const MODIFY: &str = "ModifyEipAddressAttribute";

/// `EIP`.
pub const EIP_FIELDS: &[Field] = &[
    immutable("regionId"),
    in_place("bandwidth", MODIFY),
    immutable("internetChargeType"),
    immutable("isp"),
    in_place("name", MODIFY),
    in_place("description", MODIFY),
    immutable("resourceGroupId"),
    in_place("deletionProtection", "DeletionProtection"),
    in_place("tags", "TagResources / UnTagResources"),
];

/// `EIPAssociation`: an association is made or undone, never changed.
pub const EIP_ASSOCIATION_FIELDS: &[Field] = &[
    immutable("regionId"),
    immutable("allocationId"),
    management(
        "allocationIdRef",
        "names the EIP object whose ID becomes allocationId",
    ),
    management(
        "allocationIdSelector",
        "selects the EIP object whose ID becomes allocationId",
    ),
    immutable("instanceType"),
    immutable("instanceId"),
    management(
        "instanceIdRef",
        "names the ECSInstance object whose ID becomes instanceId",
    ),
    management(
        "instanceIdSelector",
        "selects the ECSInstance object whose ID becomes instanceId",
    ),
    management(
        "natGatewayIdRef",
        "names the NATGateway object whose ID becomes instanceId",
    ),
    management(
        "natGatewayIdSelector",
        "selects the NATGateway object whose ID becomes instanceId",
    ),
    management(
        "networkInterfaceIdRef",
        "names the ECSInstance object whose primary network interface becomes instanceId",
    ),
    management(
        "networkInterfaceIdSelector",
        "selects the ECSInstance object whose primary network interface becomes instanceId",
    ),
    immutable("privateIpAddress"),
];

#[cfg(test)]
mod tests {
    use ferroplane_apis::alibabacloud::{EIP, EIPAssociation};
    use kube::CustomResourceExt;

    use super::*;
    use crate::network::field_class::checks;

    #[test]
    fn every_eip_property_has_a_class() {
        let crd = serde_json::to_value(EIP::crd()).expect("CRD serializes");
        checks::classes_match_the_crd(&crd, EIP_FIELDS);
    }

    #[test]
    fn every_eip_association_property_has_a_class() {
        let crd = serde_json::to_value(EIPAssociation::crd()).expect("CRD serializes");
        checks::classes_match_the_crd(&crd, EIP_ASSOCIATION_FIELDS);
    }

    #[test]
    fn readme_lists_both_tables() {
        checks::readme_lists_the_table("eip-fields", EIP_FIELDS);
        checks::readme_lists_the_table("eipassociation-fields", EIP_ASSOCIATION_FIELDS);
    }
}
