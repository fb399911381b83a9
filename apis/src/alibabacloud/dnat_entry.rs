//! `DNATEntry`: one entry of a NAT gateway's forward table (CreateForwardEntry), forwarding an
//! EIP's port to a private address and port of the gateway's VPC. Entries take no tags: the
//! object knows its entry by the ID the create returned, never by a search.

use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::disk::ECS_INSTANCE_KIND;
use super::nat_gateway::{EIP_ID_REFERENCE, NAT_GATEWAY_ID_REFERENCE};
use crate::common::CloudStatus;
use crate::managed_kind::managed_spec;
use crate::references::{Reference, ReferenceField, ReferenceValue, Selector};

/// `ecsInstanceId` from `ecsInstanceIdRef` / `ecsInstanceIdSelector`.
const ECS_INSTANCE_ID_REFERENCE: ReferenceField = ReferenceField {
    field: "ecsInstanceId",
    reference: "ecsInstanceIdRef",
    selector: "ecsInstanceIdSelector",
    many: false,
    target: ECS_INSTANCE_KIND,
    value: ReferenceValue::ExternalName,
};

managed_spec! {
    columns: [
        printcolumn(name = "EXTERNAL", type_ = "string", json_path = ".status.atProvider.externalIp"),
        printcolumn(name = "PORT", type_ = "string", json_path = ".status.atProvider.externalPort"),
        printcolumn(name = "INTERNAL", type_ = "string", json_path = ".status.atProvider.internalIp"),
    ];
    /// A DNAT entry of a NAT gateway.
    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
    #[kube(
        group = "alibabacloud.ferroplane.io",
        version = "v1alpha1",
        kind = "DNATEntry",
        plural = "dnatentries",
        singular = "dnatentry",
        status = "DNATEntryStatus",
        doc = "An entry of an Alibaba Cloud NAT gateway's forward (DNAT) table: traffic to an EIP's address and port (eipId, or the EIP object its reference names, bound to the gateway by an EIPAssociation with instanceType Nat; or externalIp) is forwarded to a private address and port (internalIp, or the private address of the ECSInstance that ecsInstanceId or its reference names). ferroplane creates it with CreateForwardEntry once the gateway is known (natGatewayId, or the NATGateway object its reference names), changes the mapping and name in place (ModifyForwardEntry), reverting changes made elsewhere, and deletes it with the object (unless deletionPolicy is Orphan). Entries carry no tags: the object knows its entry by the ID the create returned (fwd-...) and never adopts an entry it did not make; a mapping that clashes with another entry is refused (DuplicateNATEntry)."
    )]
    #[serde(rename_all = "camelCase")]
    pub struct DNATEntrySpec {
        /// `Delete` deletes the entry with the object; `Orphan` leaves it in the table.
        deletion_policy,
        management_policies,
        provider_config_ref,
        /// When set, ferroplane writes `forwardEntryId`, `forwardTableId`, `externalIp` and
        /// `externalPort` to this Secret in the object's namespace.
        write_connection_secret_to_ref,
        /// The desired entry, with the VPC API's parameter names.
        pub for_provider: DNATEntryParameters,
    }
}

/// The forwarded protocol (`IpProtocol`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DNATProtocol {
    /// TCP on one port.
    Tcp,
    /// UDP on one port.
    Udp,
    /// Every port and protocol: an IP mapping (no ports; no SNAT entry may use the address).
    Any,
}

impl DNATProtocol {
    /// The API's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Tcp => "TCP",
            Self::Udp => "UDP",
            Self::Any => "Any",
        }
    }
}

/// CreateForwardEntry parameters.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(self.natGatewayId) || has(self.natGatewayIdRef) || has(self.natGatewayIdSelector)").message("set the NAT gateway: natGatewayId, natGatewayIdRef or natGatewayIdSelector"))]
#[x_kube(validation = Rule::new("(has(self.eipId) || has(self.eipIdRef) || has(self.eipIdSelector)) != has(self.externalIp)").message("set the external address: eipId (or eipIdRef / eipIdSelector) or externalIp"))]
#[x_kube(validation = Rule::new("(has(self.ecsInstanceId) || has(self.ecsInstanceIdRef) || has(self.ecsInstanceIdSelector)) != has(self.internalIp)").message("set the internal address: ecsInstanceId (or ecsInstanceIdRef / ecsInstanceIdSelector) or internalIp"))]
#[x_kube(validation = Rule::new("self.ipProtocol == 'any' ? (!has(self.externalPort) && !has(self.internalPort)) : (has(self.externalPort) && has(self.internalPort))").message("externalPort and internalPort are set for tcp and udp, and absent for any (an IP mapping)"))]
#[x_kube(validation = Rule::new("!has(oldSelf.natGatewayId) || has(self.natGatewayId)").message("natGatewayId cannot be removed once set"))]
#[x_kube(validation = Rule::new("!has(oldSelf.eipId) || has(self.eipId)").message("eipId cannot be removed once set"))]
#[x_kube(validation = Rule::new("!has(oldSelf.ecsInstanceId) || has(self.ecsInstanceId)").message("ecsInstanceId cannot be removed once set"))]
pub struct DNATEntryParameters {
    /// Region of the gateway, e.g. `cn-beijing`. Immutable.
    #[schemars(
        regex(pattern = r"^[a-z]{2,4}-[a-z0-9-]+[0-9a-z]$"),
        length(min = 4, max = 64)
    )]
    #[x_kube(validation = Rule::new("self == oldSelf").message("regionId is immutable"))]
    pub region_id: String,
    /// The NAT gateway, `ngw-...`, whose forward table holds the entry. Written by ferroplane
    /// from `natGatewayIdRef` / `natGatewayIdSelector` when those are used. Immutable once set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^ngw-[a-z0-9]+$"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("natGatewayId is immutable; create a new DNATEntry for the other gateway"))]
    pub nat_gateway_id: Option<String>,
    /// A `NATGateway` object of this namespace whose ID becomes `natGatewayId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nat_gateway_id_ref: Option<Reference>,
    /// Labels of a `NATGateway` object of this namespace whose ID becomes `natGatewayId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nat_gateway_id_selector: Option<Selector>,
    /// The EIP, `eip-...`, bound to the gateway, whose address is the external one. Written by
    /// ferroplane from `eipIdRef` / `eipIdSelector` when those are used. Immutable once set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^eip-[a-z0-9]+$"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("eipId is immutable; create a new DNATEntry for the other EIP"))]
    pub eip_id: Option<String>,
    /// An `EIP` object of this namespace whose ID becomes `eipId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eip_id_ref: Option<Reference>,
    /// Labels of an `EIP` object of this namespace whose ID becomes `eipId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eip_id_selector: Option<Selector>,
    /// The external address (of an EIP bound to the gateway), when no `eipId` is given.
    /// Changed in place (ModifyForwardEntry); a change made elsewhere is reverted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^([0-9]{1,3}\.){3}[0-9]{1,3}$"))]
    pub external_ip: Option<String>,
    /// The external port, 1 to 65535 (absent with `ipProtocol: any`). Changed in place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 65535))]
    pub external_port: Option<i32>,
    /// `tcp`, `udp` or `any` (an IP mapping: every port). Changed in place.
    pub ip_protocol: DNATProtocol,
    /// The private address traffic goes to, in the gateway's VPC, when no `ecsInstanceId` is
    /// given. Changed in place (ModifyForwardEntry); a change made elsewhere is reverted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^([0-9]{1,3}\.){3}[0-9]{1,3}$"))]
    pub internal_ip: Option<String>,
    /// The ECS instance, `i-...`, whose private address traffic goes to. Written by ferroplane
    /// from `ecsInstanceIdRef` / `ecsInstanceIdSelector` when those are used. Immutable once
    /// set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^i-[a-z0-9]+$"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("ecsInstanceId is immutable; create a new DNATEntry for the other instance"))]
    pub ecs_instance_id: Option<String>,
    /// An `ECSInstance` object of this namespace whose ID becomes `ecsInstanceId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecs_instance_id_ref: Option<Reference>,
    /// Labels of an `ECSInstance` object of this namespace whose ID becomes `ecsInstanceId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecs_instance_id_selector: Option<Selector>,
    /// The internal port, 1 to 65535 (absent with `ipProtocol: any`). Changed in place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 65535))]
    pub internal_port: Option<i32>,
    /// Name, 2 to 128 characters, starting with a letter, not with `http://` or `https://`.
    /// Changed in place (ModifyForwardEntry); a change made elsewhere is reverted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 2, max = 128), regex(pattern = r"^[A-Za-z]"))]
    #[x_kube(validation = Rule::new("!self.startsWith('http://') && !self.startsWith('https://')").message("name must not start with http:// or https://"))]
    pub name: Option<String>,
}

/// What ferroplane observed of the entry.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DNATEntryObservation {
    /// `fwd-...`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forward_entry_id: Option<String>,
    /// The gateway's forward table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forward_table_id: Option<String>,
    /// The external address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_ip: Option<String>,
    /// The external port (`Any` for an IP mapping).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_port: Option<String>,
    /// The private address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub internal_ip: Option<String>,
    /// The private port (`Any` for an IP mapping).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub internal_port: Option<String>,
    /// `Pending`, `Available`, `Modifying` or `Deleting`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
}

/// Observed state of a DNATEntry.
pub type DNATEntryStatus = CloudStatus<DNATEntryObservation>;

crate::impl_managed!(
    DNATEntry,
    provider_config,
    references = &[
        NAT_GATEWAY_ID_REFERENCE,
        EIP_ID_REFERENCE,
        ECS_INSTANCE_ID_REFERENCE
    ]
);
