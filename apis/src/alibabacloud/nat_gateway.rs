//! `NATGateway`: an enhanced NAT gateway in a vSwitch of a VPC (CreateNatGateway), whose SNAT
//! and forward tables hold `SNATEntry` and `DNATEntry` objects' entries; it is deleted only once
//! they and the EIPs bound to it are gone (DeleteNatGateway, never with `Force`).

use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::network::{
    TAG_KEYS_MESSAGE, TAG_KEYS_RULE, TAG_VALUES_MESSAGE, TAG_VALUES_RULE, Tags, VPC_ID_REFERENCE,
    VSWITCH_KIND, tag_values_schema,
};
use crate::common::CloudStatus;
use crate::managed_kind::managed_spec;
use crate::references::{Reference, ReferenceField, ReferenceValue, Selector, TargetKind};

/// The `NATGateway` kind, as references name it.
pub const NAT_GATEWAY_KIND: TargetKind = TargetKind {
    group: "alibabacloud.ferroplane.io",
    version: "v1alpha1",
    kind: "NATGateway",
    plural: "natgateways",
};

/// `natGatewayId` (of an SNAT or DNAT entry, or an EIPAssociation) from `natGatewayIdRef` /
/// `natGatewayIdSelector`.
pub const NAT_GATEWAY_ID_REFERENCE: ReferenceField = ReferenceField {
    field: "natGatewayId",
    reference: "natGatewayIdRef",
    selector: "natGatewayIdSelector",
    many: false,
    target: NAT_GATEWAY_KIND,
    value: ReferenceValue::ExternalName,
};

/// `eipId` (of an SNAT or DNAT entry: the EIP whose address it uses) from `eipIdRef` /
/// `eipIdSelector`.
pub const EIP_ID_REFERENCE: ReferenceField = ReferenceField {
    field: "eipId",
    reference: "eipIdRef",
    selector: "eipIdSelector",
    many: false,
    target: super::eip::EIP_KIND,
    value: ReferenceValue::ExternalName,
};

/// `vSwitchId` of a NAT gateway from `vSwitchIdRef` / `vSwitchIdSelector`.
const VSWITCH_ID_REFERENCE: ReferenceField = ReferenceField {
    field: "vSwitchId",
    reference: "vSwitchIdRef",
    selector: "vSwitchIdSelector",
    many: false,
    target: VSWITCH_KIND,
    value: ReferenceValue::ExternalName,
};

managed_spec! {
    columns: [
        printcolumn(name = "STATE", type_ = "string", json_path = ".status.atProvider.status"),
        printcolumn(name = "NETWORK", type_ = "string", json_path = ".spec.forProvider.networkType"),
        printcolumn(
            name = "VPC",
            type_ = "string",
            json_path = ".spec.forProvider.vpcId",
            priority = 1
        ),
    ];
    /// A NAT gateway.
    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
    #[kube(
        group = "alibabacloud.ferroplane.io",
        version = "v1alpha1",
        kind = "NATGateway",
        plural = "natgateways",
        singular = "natgateway",
        status = "NATGatewayStatus",
        shortname = "ngw",
        doc = "An Alibaba Cloud enhanced NAT gateway (pay-as-you-go) in a vSwitch of a VPC. ferroplane creates it with CreateNatGateway once its VPC and vSwitch are known (vpcId / vSwitchId, or the objects their references name), changes its name and description in place (ModifyNatGatewayAttribute), its deletion protection (DeletionProtection) and its tags (TagResources), and reports its SNAT and forward table IDs. Deleting it (unless deletionPolicy is Orphan) waits (WaitingToDelete) while SNAT or DNAT entries or EIPs hold it: delete those first; ferroplane never deletes with Force."
    )]
    #[serde(rename_all = "camelCase")]
    pub struct NATGatewaySpec {
        /// `Delete` deletes the gateway with the object; `Orphan` leaves it in the cloud.
        deletion_policy,
        management_policies,
        provider_config_ref,
        /// When set, ferroplane writes `natGatewayId`, `snatTableId` and `forwardTableId` to
        /// this Secret in the object's namespace.
        write_connection_secret_to_ref,
        /// The desired NAT gateway, with the VPC API's parameter names.
        pub for_provider: NATGatewayParameters,
    }
}

/// The gateway type (`NatType`): only enhanced gateways can be created.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum NATGatewayType {
    /// An enhanced NAT gateway.
    #[default]
    Enhanced,
}

/// Whether the gateway faces the internet or the VPC's peers (`NetworkType`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NATGatewayNetworkType {
    /// An internet NAT gateway: its SNAT and DNAT entries use EIPs bound to it.
    #[default]
    Internet,
    /// A VPC NAT gateway: it translates to its own private address.
    Intranet,
}

impl NATGatewayNetworkType {
    /// The API's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Internet => "internet",
            Self::Intranet => "intranet",
        }
    }
}

/// CreateNatGateway parameters.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(self.vpcId) || has(self.vpcIdRef) || has(self.vpcIdSelector)").message("set the VPC: vpcId, vpcIdRef or vpcIdSelector"))]
#[x_kube(validation = Rule::new("has(self.vSwitchId) || has(self.vSwitchIdRef) || has(self.vSwitchIdSelector)").message("set the vSwitch: vSwitchId, vSwitchIdRef or vSwitchIdSelector"))]
#[x_kube(validation = Rule::new("!has(oldSelf.vpcId) || has(self.vpcId)").message("vpcId cannot be removed once set"))]
#[x_kube(validation = Rule::new("!has(oldSelf.vSwitchId) || has(self.vSwitchId)").message("vSwitchId cannot be removed once set"))]
#[x_kube(validation = Rule::new("has(self.natType) == has(oldSelf.natType) && (!has(self.natType) || self.natType == oldSelf.natType)").message("natType is set when the NAT gateway is created"))]
#[x_kube(validation = Rule::new("has(self.networkType) == has(oldSelf.networkType) && (!has(self.networkType) || self.networkType == oldSelf.networkType)").message("networkType is set when the NAT gateway is created; create a new NATGateway to change it"))]
pub struct NATGatewayParameters {
    /// Region, e.g. `cn-beijing`; the VPC's. Immutable.
    #[schemars(
        regex(pattern = r"^[a-z]{2,4}-[a-z0-9-]+[0-9a-z]$"),
        length(min = 4, max = 64)
    )]
    #[x_kube(validation = Rule::new("self == oldSelf").message("regionId is immutable"))]
    pub region_id: String,
    /// The VPC, `vpc-...`. Written by ferroplane from `vpcIdRef` / `vpcIdSelector` when those are
    /// used. Immutable once set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^vpc-[a-z0-9]+$"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("vpcId is immutable; create a new NATGateway in the other VPC"))]
    pub vpc_id: Option<String>,
    /// A `VPC` object of this namespace whose ID becomes `vpcId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vpc_id_ref: Option<Reference>,
    /// Labels of a `VPC` object of this namespace whose ID becomes `vpcId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vpc_id_selector: Option<Selector>,
    /// The vSwitch of the VPC the gateway sits in, `vsw-...`. Written by ferroplane from
    /// `vSwitchIdRef` / `vSwitchIdSelector` when those are used. Immutable once set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^vsw-[a-z0-9]+$"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("vSwitchId is immutable; create a new NATGateway in the other vSwitch"))]
    pub v_switch_id: Option<String>,
    /// A `VSwitch` object of this namespace whose ID becomes `vSwitchId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v_switch_id_ref: Option<Reference>,
    /// Labels of a `VSwitch` object of this namespace whose ID becomes `vSwitchId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v_switch_id_selector: Option<Selector>,
    /// `Enhanced` (the default and the only type that can be created). Set at creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nat_type: Option<NATGatewayType>,
    /// `internet` (the default: SNAT and DNAT through EIPs bound to it) or `intranet` (a VPC
    /// NAT gateway). Set at creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_type: Option<NATGatewayNetworkType>,
    /// Name, 2 to 128 characters, starting with a letter; letters, digits, `_`, `-` and `.`.
    /// Changed in place (ModifyNatGatewayAttribute); a change made elsewhere is reverted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(min = 2, max = 128),
        regex(pattern = r"^[A-Za-z][A-Za-z0-9_.-]*$")
    )]
    pub name: Option<String>,
    /// Description, 2 to 256 characters, not starting with `http://` or `https://`. Changed in
    /// place (ModifyNatGatewayAttribute); a change made elsewhere is reverted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 2, max = 256))]
    #[x_kube(validation = Rule::new("!self.startsWith('http://') && !self.startsWith('https://')").message("description must not start with http:// or https://"))]
    pub description: Option<String>,
    /// Whether the cloud refuses to delete the gateway (`DeletionProtection`, `Type` `NATGW`).
    /// Absent: left as the cloud has it (off for a new gateway). Changed in place; a change
    /// made elsewhere is reverted. Deleting the object while it is true fails with the reason
    /// `DeletionProtection` until it is set to false (allowed while the object is being
    /// deleted), or deletionPolicy is Orphan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_protection: Option<bool>,
    /// Tags. Changed in place (TagResources / UnTagResources): tags the gateway has beyond
    /// these are removed, except ferroplane's UID tag and the cloud's own (`acs:`, `aliyun`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("maxProperties" = 19))]
    #[schemars(transform = tag_values_schema)]
    #[x_kube(validation = Rule::new(TAG_KEYS_RULE).message(TAG_KEYS_MESSAGE))]
    #[x_kube(validation = Rule::new(TAG_VALUES_RULE).message(TAG_VALUES_MESSAGE))]
    pub tags: Option<Tags>,
}

/// What ferroplane observed of the NAT gateway.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NATGatewayObservation {
    /// `ngw-...`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nat_gateway_id: Option<String>,
    /// `Creating`, `Available`, `Modifying`, `Deleting` or `Converting`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// The SNAT table, which `SNATEntry` objects fill.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snat_table_id: Option<String>,
    /// The forward table, which `DNATEntry` objects fill.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forward_table_id: Option<String>,
    /// The gateway's private address in its vSwitch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_ip_address: Option<String>,
    /// The addresses of the EIPs bound to it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ip_addresses: Vec<String>,
}

/// Observed state of a NATGateway.
pub type NATGatewayStatus = CloudStatus<NATGatewayObservation>;

crate::impl_managed!(
    NATGateway,
    provider_config,
    references = &[VPC_ID_REFERENCE, VSWITCH_ID_REFERENCE]
);
