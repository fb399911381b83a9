//! `EIPAssociation`: one EIP associated with one resource of its region (AssociateEipAddress),
//! undone when the object is deleted (UnassociateEipAddress). The resource is an ECS instance, a
//! NAT gateway or a network interface (one of its private IPs, in NAT mode); `instanceType`
//! names the resource's kind.

use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::disk::{ECS_INSTANCE_KIND, INSTANCE_ID_REFERENCE};
use super::eip::ALLOCATION_ID_REFERENCE;
use super::nat_gateway::NAT_GATEWAY_KIND;
use crate::common::CloudStatus;
use crate::managed_kind::managed_spec;
use crate::references::{Reference, ReferenceField, ReferenceValue, Selector};

/// `instanceId` of an association with a network interface, from `networkInterfaceIdRef` /
/// `networkInterfaceIdSelector`: the primary network interface an ECSInstance reports.
const NETWORK_INTERFACE_INSTANCE_REFERENCE: ReferenceField = ReferenceField {
    field: "instanceId",
    reference: "networkInterfaceIdRef",
    selector: "networkInterfaceIdSelector",
    many: false,
    target: ECS_INSTANCE_KIND,
    value: ReferenceValue::StatusListItem {
        list: "/status/atProvider/networkInterfaces",
        key: "type",
        equals: "Primary",
        field: "networkInterfaceId",
    },
};

/// `instanceId` of an association with a NAT gateway, from `natGatewayIdRef` /
/// `natGatewayIdSelector`.
const NAT_GATEWAY_INSTANCE_REFERENCE: ReferenceField = ReferenceField {
    field: "instanceId",
    reference: "natGatewayIdRef",
    selector: "natGatewayIdSelector",
    many: false,
    target: NAT_GATEWAY_KIND,
    value: ReferenceValue::ExternalName,
};

managed_spec! {
    columns: [
        printcolumn(name = "EIP", type_ = "string", json_path = ".spec.forProvider.allocationId"),
        printcolumn(name = "INSTANCE", type_ = "string", json_path = ".spec.forProvider.instanceId"),
        printcolumn(name = "ADDRESS", type_ = "string", json_path = ".status.atProvider.ipAddress"),
    ];
    /// An EIP associated with a resource.
    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
    #[kube(
        group = "alibabacloud.ferroplane.io",
        version = "v1alpha1",
        kind = "EIPAssociation",
        plural = "eipassociations",
        singular = "eipassociation",
        status = "EIPAssociationStatus",
        doc = "Associates an Alibaba Cloud EIP with an ECS instance or, with instanceType Nat, a NAT gateway or, with instanceType NetworkInterface, one private IP of a network interface (in NAT mode) of its region (AssociateEipAddress) once both are known (allocationId / instanceId, or the EIP and ECSInstance or NATGateway objects their references name; networkInterfaceIdRef takes an ECSInstance's primary network interface). An association undone elsewhere is made again at the next poll; an EIP associated with another resource is never taken from it. Deleting the object unassociates the EIP (UnassociateEipAddress) unless deletionPolicy is Orphan. The instance, or the private IP, must have no public IP of its own (internetMaxBandwidthOut 0) and no other EIP."
    )]
    #[serde(rename_all = "camelCase")]
    pub struct EIPAssociationSpec {
        /// `Delete` unassociates the EIP with the object; `Orphan` leaves it associated.
        deletion_policy,
        management_policies,
        provider_config_ref,
        /// When set, ferroplane writes `allocationId`, `instanceId` and `ipAddress` to this
        /// Secret in the object's namespace.
        write_connection_secret_to_ref,
        /// The desired association, with the VPC API's parameter names.
        pub for_provider: EIPAssociationParameters,
    }
}

/// The type of resource an EIP is associated with (`InstanceType`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum EIPAssociationInstanceType {
    /// An ECS instance in a VPC.
    #[default]
    EcsInstance,
    /// A NAT gateway (internet type), whose SNAT and DNAT entries then use the EIP's address.
    Nat,
    /// A network interface (`eni-...`): the EIP maps to one of its private IPs
    /// (`privateIpAddress`, by default its primary one) in NAT mode, one EIP per private IP.
    NetworkInterface,
}

impl EIPAssociationInstanceType {
    /// The API's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::EcsInstance => "EcsInstance",
            Self::Nat => "Nat",
            Self::NetworkInterface => "NetworkInterface",
        }
    }
}

/// AssociateEipAddress parameters.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(self.allocationId) || has(self.allocationIdRef) || has(self.allocationIdSelector)").message("set the EIP: allocationId, allocationIdRef or allocationIdSelector"))]
#[x_kube(validation = Rule::new("has(self.instanceId) || has(self.instanceIdRef) || has(self.instanceIdSelector) || has(self.natGatewayIdRef) || has(self.natGatewayIdSelector) || has(self.networkInterfaceIdRef) || has(self.networkInterfaceIdSelector)").message("set the instance: instanceId, instanceIdRef or instanceIdSelector (or, for a NAT gateway, natGatewayIdRef or natGatewayIdSelector; for a network interface, networkInterfaceIdRef or networkInterfaceIdSelector)"))]
#[x_kube(validation = Rule::new("!(has(self.natGatewayIdRef) || has(self.natGatewayIdSelector)) || (has(self.instanceType) && self.instanceType == 'Nat' && !has(self.instanceIdRef) && !has(self.instanceIdSelector))").message("natGatewayIdRef and natGatewayIdSelector need instanceType Nat, and no instanceIdRef or instanceIdSelector"))]
#[x_kube(validation = Rule::new("!(has(self.networkInterfaceIdRef) || has(self.networkInterfaceIdSelector)) || (has(self.instanceType) && self.instanceType == 'NetworkInterface' && !has(self.instanceIdRef) && !has(self.instanceIdSelector))").message("networkInterfaceIdRef and networkInterfaceIdSelector need instanceType NetworkInterface, and no instanceIdRef or instanceIdSelector"))]
#[x_kube(validation = Rule::new("!(has(self.instanceType) && self.instanceType == 'NetworkInterface') || (!has(self.instanceIdRef) && !has(self.instanceIdSelector))").message("instanceType NetworkInterface takes instanceId (eni-...), networkInterfaceIdRef or networkInterfaceIdSelector, not instanceIdRef or instanceIdSelector"))]
#[x_kube(validation = Rule::new("!has(self.instanceId) || self.instanceId.startsWith('eni-') == (has(self.instanceType) && self.instanceType == 'NetworkInterface')").message("a network interface ID (eni-...) goes with instanceType NetworkInterface, and instanceType NetworkInterface takes one"))]
#[x_kube(validation = Rule::new("!has(self.privateIpAddress) || (has(self.instanceType) && self.instanceType == 'NetworkInterface')").message("privateIpAddress needs instanceType NetworkInterface"))]
#[x_kube(validation = Rule::new("!has(oldSelf.allocationId) || has(self.allocationId)").message("allocationId cannot be removed once set"))]
#[x_kube(validation = Rule::new("!has(oldSelf.instanceId) || has(self.instanceId)").message("instanceId cannot be removed once set"))]
#[x_kube(validation = Rule::new("!has(oldSelf.privateIpAddress) || has(self.privateIpAddress)").message("privateIpAddress cannot be removed once set"))]
#[x_kube(validation = Rule::new("has(self.instanceType) == has(oldSelf.instanceType) && (!has(self.instanceType) || self.instanceType == oldSelf.instanceType)").message("instanceType is immutable; create a new EIPAssociation"))]
pub struct EIPAssociationParameters {
    /// Region of the EIP and the instance, e.g. `cn-beijing`. Immutable.
    #[schemars(
        regex(pattern = r"^[a-z]{2,4}-[a-z0-9-]+[0-9a-z]$"),
        length(min = 4, max = 64)
    )]
    #[x_kube(validation = Rule::new("self == oldSelf").message("regionId is immutable; create a new EIPAssociation"))]
    pub region_id: String,
    /// The EIP, `eip-...`. Written by ferroplane from `allocationIdRef` / `allocationIdSelector`
    /// when those are used. Immutable once set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^eip-[a-z0-9]+$"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("allocationId is immutable; create a new EIPAssociation for the other EIP"))]
    pub allocation_id: Option<String>,
    /// An `EIP` object of this namespace whose ID becomes `allocationId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocation_id_ref: Option<Reference>,
    /// Labels of an `EIP` object of this namespace whose ID becomes `allocationId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocation_id_selector: Option<Selector>,
    /// The type of `instanceId`: `EcsInstance` (the default), `Nat` (a NAT gateway) or
    /// `NetworkInterface` (a network interface). Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_type: Option<EIPAssociationInstanceType>,
    /// The instance, `i-...`, the NAT gateway, `ngw-...`, or the network interface, `eni-...`.
    /// Written by ferroplane from `instanceIdRef` / `instanceIdSelector` (or
    /// `natGatewayIdRef` / `natGatewayIdSelector`, `networkInterfaceIdRef` /
    /// `networkInterfaceIdSelector`) when those are used. Immutable once set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^(i|ngw|eni)-[a-z0-9]+$"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("instanceId is immutable; create a new EIPAssociation for the other instance"))]
    pub instance_id: Option<String>,
    /// An `ECSInstance` object of this namespace whose ID becomes `instanceId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_id_ref: Option<Reference>,
    /// Labels of an `ECSInstance` object of this namespace whose ID becomes `instanceId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_id_selector: Option<Selector>,
    /// A `NATGateway` object of this namespace whose ID becomes `instanceId` (with
    /// `instanceType: Nat`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nat_gateway_id_ref: Option<Reference>,
    /// Labels of a `NATGateway` object of this namespace whose ID becomes `instanceId` (with
    /// `instanceType: Nat`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nat_gateway_id_selector: Option<Selector>,
    /// An `ECSInstance` object of this namespace whose primary network interface (the
    /// `Primary` one of its `status.atProvider.networkInterfaces`) becomes `instanceId` (with
    /// `instanceType: NetworkInterface`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_interface_id_ref: Option<Reference>,
    /// Labels of an `ECSInstance` object of this namespace whose primary network interface
    /// becomes `instanceId` (with `instanceType: NetworkInterface`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_interface_id_selector: Option<Selector>,
    /// The private IPv4 address of the network interface the EIP maps to (with
    /// `instanceType: NetworkInterface`); by default the interface's primary private IP, which
    /// ferroplane writes here. Immutable once set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^([0-9]{1,3}\.){3}[0-9]{1,3}$"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("privateIpAddress is immutable; create a new EIPAssociation for the other address"))]
    pub private_ip_address: Option<String>,
}

/// What ferroplane observed of the association.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EIPAssociationObservation {
    /// `<allocationId>:<instanceId>`, the association's external name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub association_id: Option<String>,
    /// The EIP's public address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_address: Option<String>,
    /// The private IP of the network interface the EIP maps to (`instanceType:
    /// NetworkInterface`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_ip_address: Option<String>,
    /// The EIP's status: `Associating`, `InUse` or `Unassociating`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
}

/// Observed state of an EIPAssociation.
pub type EIPAssociationStatus = CloudStatus<EIPAssociationObservation>;

crate::impl_managed!(
    EIPAssociation,
    provider_config,
    references = &[
        ALLOCATION_ID_REFERENCE,
        INSTANCE_ID_REFERENCE,
        NAT_GATEWAY_INSTANCE_REFERENCE,
        NETWORK_INTERFACE_INSTANCE_REFERENCE
    ]
);
