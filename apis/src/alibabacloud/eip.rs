//! `EIP`: an elastic IP address of a region, allocated with AllocateEipAddress and released with
//! ReleaseEipAddress; what it is associated with is an `EIPAssociation`'s business.

use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::network::{
    TAG_KEYS_MESSAGE, TAG_KEYS_RULE, TAG_VALUES_MESSAGE, TAG_VALUES_RULE, Tags, tag_values_schema,
};
use crate::common::CloudStatus;
use crate::managed_kind::managed_spec;
use crate::references::{ReferenceField, ReferenceValue, TargetKind};

/// The `EIP` kind, as references name it.
pub const EIP_KIND: TargetKind = TargetKind {
    group: "alibabacloud.ferroplane.io",
    version: "v1alpha1",
    kind: "EIP",
    plural: "eips",
};

/// `allocationId` (of an EIPAssociation) from `allocationIdRef` / `allocationIdSelector`.
pub const ALLOCATION_ID_REFERENCE: ReferenceField = ReferenceField {
    field: "allocationId",
    reference: "allocationIdRef",
    selector: "allocationIdSelector",
    many: false,
    target: EIP_KIND,
    value: ReferenceValue::ExternalName,
};

managed_spec! {
    columns: [
        printcolumn(name = "ADDRESS", type_ = "string", json_path = ".status.atProvider.ipAddress"),
        printcolumn(name = "STATE", type_ = "string", json_path = ".status.atProvider.status"),
        printcolumn(
            name = "INSTANCE",
            type_ = "string",
            json_path = ".status.atProvider.instanceId",
            priority = 1
        ),
    ];
    /// An elastic IP address.
    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
    #[kube(
        group = "alibabacloud.ferroplane.io",
        version = "v1alpha1",
        kind = "EIP",
        plural = "eips",
        singular = "eip",
        status = "EIPStatus",
        doc = "An Alibaba Cloud elastic IP address (pay-as-you-go). ferroplane allocates it with AllocateEipAddress, changes its bandwidth, name and description in place (ModifyEipAddressAttribute), its deletion protection (DeletionProtection) and its tags (TagResources), and releases it when the object is deleted (unless deletionPolicy is Orphan). An EIP still associated with an instance is released only once the association is gone: the object waits (WaitingToDelete) until its EIPAssociation is deleted."
    )]
    #[serde(rename_all = "camelCase")]
    pub struct EIPSpec {
        /// `Delete` releases the EIP with the object; `Orphan` leaves it allocated.
        deletion_policy,
        management_policies,
        provider_config_ref,
        /// When set, ferroplane writes `allocationId` and `ipAddress` to this Secret in the
        /// object's namespace.
        write_connection_secret_to_ref,
        /// The desired EIP, with the VPC API's parameter names.
        pub for_provider: EIPParameters,
    }
}

/// How the EIP's traffic is billed (`InternetChargeType`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum EIPInternetChargeType {
    /// By the bandwidth cap (1 to 500 Mbit/s).
    PayByBandwidth,
    /// By the traffic (a cap of 1 to 200 Mbit/s).
    PayByTraffic,
}

impl EIPInternetChargeType {
    /// The API's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PayByBandwidth => "PayByBandwidth",
            Self::PayByTraffic => "PayByTraffic",
        }
    }
}

/// AllocateEipAddress parameters.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(self.internetChargeType) == has(oldSelf.internetChargeType) && (!has(self.internetChargeType) || self.internetChargeType == oldSelf.internetChargeType)").message("internetChargeType is set when the EIP is allocated; allocate a new EIP to change it"))]
#[x_kube(validation = Rule::new("has(self.isp) == has(oldSelf.isp) && (!has(self.isp) || self.isp == oldSelf.isp)").message("isp is set when the EIP is allocated; allocate a new EIP to change it"))]
#[x_kube(validation = Rule::new("!has(oldSelf.resourceGroupId) || has(self.resourceGroupId)").message("resourceGroupId cannot be removed once set"))]
#[x_kube(validation = Rule::new("!has(self.bandwidth) || !has(self.internetChargeType) || self.internetChargeType != 'PayByTraffic' || self.bandwidth <= 200").message("bandwidth is at most 200 Mbit/s with internetChargeType PayByTraffic"))]
pub struct EIPParameters {
    /// Region, e.g. `cn-beijing`. Immutable.
    #[schemars(
        regex(pattern = r"^[a-z]{2,4}-[a-z0-9-]+[0-9a-z]$"),
        length(min = 4, max = 64)
    )]
    #[x_kube(validation = Rule::new("self == oldSelf").message("regionId is immutable; allocate a new EIP in the other region"))]
    pub region_id: String,
    /// The bandwidth cap in Mbit/s: 1 to 500 (PayByBandwidth) or 1 to 200 (PayByTraffic).
    /// Absent: the API's default, 5. Changed in place (ModifyEipAddressAttribute); a change
    /// made elsewhere is reverted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 500))]
    pub bandwidth: Option<i32>,
    /// `PayByBandwidth` (the API's default) or `PayByTraffic`. Set at allocation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub internet_charge_type: Option<EIPInternetChargeType>,
    /// The line: `BGP` (the default, every region) or `BGP_PRO` (BGP premium, where the region
    /// offers it). Set at allocation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub isp: Option<String>,
    /// Name, 1 to 128 characters, starting with a letter; letters, digits, `.`, `_` and `-`.
    /// Changed in place (ModifyEipAddressAttribute); a change made elsewhere is reverted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128))]
    pub name: Option<String>,
    /// Description, 1 to 256 characters, starting with a letter, not with `http://` or
    /// `https://`. Changed in place (ModifyEipAddressAttribute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 256))]
    pub description: Option<String>,
    /// The resource group, `rg-...`. Absent: the account's default group. Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("resourceGroupId is immutable"))]
    pub resource_group_id: Option<String>,
    /// Whether the cloud refuses to release the EIP (`DeletionProtection`, `Type` `EIP`).
    /// Absent: left as the cloud has it (off for a new EIP). Changed in place; a change made
    /// elsewhere is reverted. Deleting the object while it is true fails with the reason
    /// `DeletionProtection` until it is set to false (allowed while the object is being
    /// deleted), or deletionPolicy is Orphan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_protection: Option<bool>,
    /// Tags. Changed in place (TagResources / UnTagResources): tags the EIP has beyond these
    /// are removed, except ferroplane's UID tag and the cloud's own (`acs:`, `aliyun`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("maxProperties" = 19))]
    #[schemars(transform = tag_values_schema)]
    #[x_kube(validation = Rule::new(TAG_KEYS_RULE).message(TAG_KEYS_MESSAGE))]
    #[x_kube(validation = Rule::new(TAG_VALUES_RULE).message(TAG_VALUES_MESSAGE))]
    pub tags: Option<Tags>,
}

/// What ferroplane observed of the EIP.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EIPObservation {
    /// `eip-...`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocation_id: Option<String>,
    /// The public address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_address: Option<String>,
    /// `Available`, `Associating`, `InUse`, `Unassociating` or `Releasing`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// The bandwidth cap in Mbit/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth: Option<i32>,
    /// What the EIP is associated with, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_id: Option<String>,
    /// The type of that resource (`EcsInstance`, `Nat`, `NetworkInterface`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_type: Option<String>,
}

/// Observed state of an EIP.
pub type EIPStatus = CloudStatus<EIPObservation>;

crate::impl_managed!(EIP, provider_config);
