//! `VSwitch`: a zone's subnet of a VPC.

use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::network::{
    TAG_KEYS_MESSAGE, TAG_KEYS_RULE, TAG_VALUES_MESSAGE, TAG_VALUES_RULE, tag_values_schema,
};
use super::network::{Tags, VPC_ID_REFERENCE};
use crate::common::CloudStatus;
use crate::managed_kind::managed_spec;
use crate::references::{Reference, Selector};

managed_spec! {
    columns: [
        printcolumn(name = "ZONE", type_ = "string", json_path = ".spec.forProvider.zoneId"),
        printcolumn(name = "CIDR", type_ = "string", json_path = ".spec.forProvider.cidrBlock"),
        printcolumn(
            name = "VPC",
            type_ = "string",
            json_path = ".spec.forProvider.vpcId",
            priority = 1
        ),
    ];
    /// A vSwitch.
    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
    #[kube(
        group = "alibabacloud.ferroplane.io",
        version = "v1alpha1",
        kind = "VSwitch",
        plural = "vswitches",
        singular = "vswitch",
        status = "VSwitchStatus",
        shortname = "vsw",
        doc = "An Alibaba Cloud vSwitch: a subnet of a VPC in one zone. ferroplane creates it with CreateVSwitch once its VPC is known (vpcId, or the VPC object named by vpcIdRef / vpcIdSelector), and deletes it when the object is deleted (unless deletionPolicy is Orphan), waiting while instances still use it."
    )]
    #[serde(rename_all = "camelCase")]
    pub struct VSwitchSpec {
        /// `Delete` deletes the vSwitch with the object; `Orphan` leaves it in the cloud.
        deletion_policy,
        management_policies,
        provider_config_ref,
        /// When set, ferroplane writes `vSwitchId` to this Secret in the object's namespace.
        write_connection_secret_to_ref,
        /// The desired vSwitch, with the VPC API's parameter names.
        pub for_provider: VSwitchParameters,
    }
}

/// CreateVSwitch parameters.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(self.vpcId) || has(self.vpcIdRef) || has(self.vpcIdSelector)").message("set the VPC: vpcId, vpcIdRef or vpcIdSelector"))]
#[x_kube(validation = Rule::new("!has(oldSelf.vpcId) || has(self.vpcId)").message("vpcId cannot be removed once set"))]
#[x_kube(validation = Rule::new("has(self.ipv6CidrBlock) == has(oldSelf.ipv6CidrBlock) && (!has(self.ipv6CidrBlock) || self.ipv6CidrBlock == oldSelf.ipv6CidrBlock)").message("ipv6CidrBlock is set when the VSwitch is created; create a new VSwitch to change it"))]
pub struct VSwitchParameters {
    /// Region, e.g. `cn-beijing`; the VPC's. Immutable.
    #[schemars(
        regex(pattern = r"^[a-z]{2,4}-[a-z0-9-]+[0-9a-z]$"),
        length(min = 4, max = 64)
    )]
    #[x_kube(validation = Rule::new("self == oldSelf").message("regionId is immutable"))]
    pub region_id: String,
    /// Zone, e.g. `cn-beijing-h`. Immutable.
    #[schemars(length(min = 4, max = 64))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("zoneId is immutable; create a new VSwitch in the other zone"))]
    pub zone_id: String,
    /// IPv4 range inside the VPC's, mask 16 to 29, e.g. `172.16.1.0/24`. Immutable.
    #[schemars(regex(pattern = r"^([0-9]{1,3}\.){3}[0-9]{1,3}/(1[6-9]|2[0-9])$"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("cidrBlock is immutable; create a new VSwitch"))]
    pub cidr_block: String,
    /// The VPC, `vpc-...`. Written by ferroplane from `vpcIdRef` / `vpcIdSelector` when those are
    /// used. Immutable once set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^vpc-[a-z0-9]+$"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("vpcId is immutable; create a new VSwitch in the other VPC"))]
    pub vpc_id: Option<String>,
    /// A `VPC` object of this namespace whose ID becomes `vpcId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vpc_id_ref: Option<Reference>,
    /// Labels of a `VPC` object of this namespace whose ID becomes `vpcId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vpc_id_selector: Option<Selector>,
    /// Name, 1 to 128 characters. Changed in place (ModifyVSwitchAttribute); a change made
    /// elsewhere is reverted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128))]
    pub v_switch_name: Option<String>,
    /// Description, 1 to 256 characters. Changed in place (ModifyVSwitchAttribute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 256))]
    pub description: Option<String>,
    /// Tags. Changed in place (TagResources / UnTagResources): tags the vSwitch has beyond
    /// these are removed, except ferroplane's UID tag and the cloud's own (`acs:`, `aliyun`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("maxProperties" = 19))]
    #[schemars(transform = tag_values_schema)]
    #[x_kube(validation = Rule::new(TAG_KEYS_RULE).message(TAG_KEYS_MESSAGE))]
    #[x_kube(validation = Rule::new(TAG_VALUES_RULE).message(TAG_VALUES_MESSAGE))]
    pub tags: Option<Tags>,
    /// The vSwitch's IPv6 `/64`: the last eight bits (0 to 255) of its prefix inside the VPC's
    /// `/56` (CreateVSwitch `Ipv6CidrBlock`); the VPC needs `enableIpv6`. Set at creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 255))]
    pub ipv6_cidr_block: Option<i32>,
}

/// What ferroplane observed of the vSwitch.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VSwitchObservation {
    /// `vsw-...`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v_switch_id: Option<String>,
    /// `Pending` or `Available`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Its VPC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vpc_id: Option<String>,
    /// Free private addresses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_ip_address_count: Option<i64>,
    /// The IPv6 `/64`, when the vSwitch has IPv6.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipv6_cidr_block: Option<String>,
}

/// Observed state of a VSwitch.
pub type VSwitchStatus = CloudStatus<VSwitchObservation>;

crate::impl_managed!(VSwitch, provider_config, references = &[VPC_ID_REFERENCE]);
