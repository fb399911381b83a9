//! `SNATEntry`: one entry of a NAT gateway's SNAT table (CreateSnatEntry), translating the
//! outbound traffic of a vSwitch or a CIDR block to an EIP's address. Entries take no tags:
//! the object knows its entry by the ID the create returned, never by a search.

use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::nat_gateway::{EIP_ID_REFERENCE, NAT_GATEWAY_ID_REFERENCE};
use super::network::VSWITCH_KIND;
use crate::common::CloudStatus;
use crate::managed_kind::managed_spec;
use crate::references::{Reference, ReferenceField, ReferenceValue, Selector};

/// `sourceVSwitchId` from `sourceVSwitchIdRef` / `sourceVSwitchIdSelector`.
const SOURCE_VSWITCH_ID_REFERENCE: ReferenceField = ReferenceField {
    field: "sourceVSwitchId",
    reference: "sourceVSwitchIdRef",
    selector: "sourceVSwitchIdSelector",
    many: false,
    target: VSWITCH_KIND,
    value: ReferenceValue::ExternalName,
};

managed_spec! {
    columns: [
        printcolumn(name = "SOURCE", type_ = "string", json_path = ".status.atProvider.sourceCIDR"),
        printcolumn(name = "ADDRESS", type_ = "string", json_path = ".status.atProvider.snatIp"),
        printcolumn(
            name = "GATEWAY",
            type_ = "string",
            json_path = ".spec.forProvider.natGatewayId",
            priority = 1
        ),
    ];
    /// An SNAT entry of a NAT gateway.
    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
    #[kube(
        group = "alibabacloud.ferroplane.io",
        version = "v1alpha1",
        kind = "SNATEntry",
        plural = "snatentries",
        singular = "snatentry",
        status = "SNATEntryStatus",
        doc = "An entry of an Alibaba Cloud NAT gateway's SNAT table: the outbound traffic of a vSwitch (sourceVSwitchId, or the VSwitch object its reference names) or of a CIDR block (sourceCIDR) leaves through an EIP's address (eipId, or the EIP object its reference names; the EIP must be bound to the gateway by an EIPAssociation with instanceType Nat) or the addresses in snatIp. ferroplane creates it with CreateSnatEntry once the gateway is known (natGatewayId, or the NATGateway object its reference names), changes its address and name in place (ModifySnatEntry), reverting changes made elsewhere, and deletes it with the object (unless deletionPolicy is Orphan). Entries carry no tags: the object knows its entry by the ID the create returned (snat-...) and never adopts an entry it did not make; a source that already has an entry is refused (DuplicateNATEntry)."
    )]
    #[serde(rename_all = "camelCase")]
    pub struct SNATEntrySpec {
        /// `Delete` deletes the entry with the object; `Orphan` leaves it in the table.
        deletion_policy,
        management_policies,
        provider_config_ref,
        /// When set, ferroplane writes `snatEntryId`, `snatTableId` and `snatIp` to this Secret
        /// in the object's namespace.
        write_connection_secret_to_ref,
        /// The desired entry, with the VPC API's parameter names.
        pub for_provider: SNATEntryParameters,
    }
}

/// CreateSnatEntry parameters.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(self.natGatewayId) || has(self.natGatewayIdRef) || has(self.natGatewayIdSelector)").message("set the NAT gateway: natGatewayId, natGatewayIdRef or natGatewayIdSelector"))]
#[x_kube(validation = Rule::new("(has(self.sourceVSwitchId) || has(self.sourceVSwitchIdRef) || has(self.sourceVSwitchIdSelector)) != has(self.sourceCIDR)").message("set one source: sourceVSwitchId (or sourceVSwitchIdRef / sourceVSwitchIdSelector) or sourceCIDR"))]
#[x_kube(validation = Rule::new("!((has(self.eipId) || has(self.eipIdRef) || has(self.eipIdSelector)) && has(self.snatIp))").message("set the address by eipId (or eipIdRef / eipIdSelector) or by snatIp, not both"))]
#[x_kube(validation = Rule::new("!has(oldSelf.natGatewayId) || has(self.natGatewayId)").message("natGatewayId cannot be removed once set"))]
#[x_kube(validation = Rule::new("!has(oldSelf.sourceVSwitchId) || has(self.sourceVSwitchId)").message("sourceVSwitchId cannot be removed once set"))]
#[x_kube(validation = Rule::new("!has(oldSelf.eipId) || has(self.eipId)").message("eipId cannot be removed once set"))]
#[x_kube(validation = Rule::new("has(self.sourceCIDR) == has(oldSelf.sourceCIDR) && (!has(self.sourceCIDR) || self.sourceCIDR == oldSelf.sourceCIDR)").message("sourceCIDR is set when the entry is created; create a new SNATEntry for another source"))]
pub struct SNATEntryParameters {
    /// Region of the gateway, e.g. `cn-beijing`. Immutable.
    #[schemars(
        regex(pattern = r"^[a-z]{2,4}-[a-z0-9-]+[0-9a-z]$"),
        length(min = 4, max = 64)
    )]
    #[x_kube(validation = Rule::new("self == oldSelf").message("regionId is immutable"))]
    pub region_id: String,
    /// The NAT gateway, `ngw-...`, whose SNAT table holds the entry. Written by ferroplane from
    /// `natGatewayIdRef` / `natGatewayIdSelector` when those are used. Immutable once set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^ngw-[a-z0-9]+$"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("natGatewayId is immutable; create a new SNATEntry for the other gateway"))]
    pub nat_gateway_id: Option<String>,
    /// A `NATGateway` object of this namespace whose ID becomes `natGatewayId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nat_gateway_id_ref: Option<Reference>,
    /// Labels of a `NATGateway` object of this namespace whose ID becomes `natGatewayId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nat_gateway_id_selector: Option<Selector>,
    /// The source vSwitch (of the gateway's VPC), `vsw-...`. Written by ferroplane from
    /// `sourceVSwitchIdRef` / `sourceVSwitchIdSelector` when those are used. Immutable once set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^vsw-[a-z0-9]+$"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("sourceVSwitchId is immutable; create a new SNATEntry for the other vSwitch"))]
    pub source_v_switch_id: Option<String>,
    /// A `VSwitch` object of this namespace whose ID becomes `sourceVSwitchId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_v_switch_id_ref: Option<Reference>,
    /// Labels of a `VSwitch` object of this namespace whose ID becomes `sourceVSwitchId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_v_switch_id_selector: Option<Selector>,
    /// The source block instead of a vSwitch, e.g. `10.0.8.0/24`. Set at creation.
    #[serde(
        default,
        rename = "sourceCIDR",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(regex(pattern = r"^([0-9]{1,3}\.){3}[0-9]{1,3}/([0-9]|[12][0-9]|3[0-2])$"))]
    pub source_cidr: Option<String>,
    /// The EIP, `eip-...`, whose address the traffic leaves through; it must be bound to the
    /// gateway. Written by ferroplane from `eipIdRef` / `eipIdSelector` when those are used.
    /// Immutable once set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^eip-[a-z0-9]+$"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("eipId is immutable; create a new SNATEntry for the other EIP"))]
    pub eip_id: Option<String>,
    /// An `EIP` object of this namespace whose ID becomes `eipId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eip_id_ref: Option<Reference>,
    /// Labels of an `EIP` object of this namespace whose ID becomes `eipId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eip_id_selector: Option<Selector>,
    /// The addresses, comma-separated, of EIPs bound to the gateway (or an intranet gateway's
    /// own), when no `eipId` is given. Changed in place (ModifySnatEntry); with `eipId`, the
    /// EIP's address is kept. A change made elsewhere is reverted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 7, max = 512))]
    pub snat_ip: Option<String>,
    /// Name, 2 to 128 characters, starting with a letter, not with `http://` or `https://`.
    /// Changed in place (ModifySnatEntry); a change made elsewhere is reverted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 2, max = 128), regex(pattern = r"^[A-Za-z]"))]
    #[x_kube(validation = Rule::new("!self.startsWith('http://') && !self.startsWith('https://')").message("name must not start with http:// or https://"))]
    pub name: Option<String>,
}

/// What ferroplane observed of the entry.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SNATEntryObservation {
    /// `snat-...`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snat_entry_id: Option<String>,
    /// The gateway's SNAT table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snat_table_id: Option<String>,
    /// The translated source block (the vSwitch's, for a vSwitch source).
    #[serde(
        default,
        rename = "sourceCIDR",
        skip_serializing_if = "Option::is_none"
    )]
    pub source_cidr: Option<String>,
    /// The addresses the traffic leaves through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snat_ip: Option<String>,
    /// `Pending`, `Available`, `Modifying` or `Deleting`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
}

/// Observed state of an SNATEntry.
pub type SNATEntryStatus = CloudStatus<SNATEntryObservation>;

crate::impl_managed!(
    SNATEntry,
    provider_config,
    references = &[
        NAT_GATEWAY_ID_REFERENCE,
        SOURCE_VSWITCH_ID_REFERENCE,
        EIP_ID_REFERENCE
    ]
);
