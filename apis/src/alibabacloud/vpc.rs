//! `VPC`: a virtual private cloud.

use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::network::Tags;
use super::network::{
    TAG_KEYS_MESSAGE, TAG_KEYS_RULE, TAG_VALUES_MESSAGE, TAG_VALUES_RULE, tag_values_schema,
};
use crate::common::CloudStatus;
use crate::managed_kind::managed_spec;

managed_spec! {
    columns: [
        printcolumn(name = "CIDR", type_ = "string", json_path = ".status.atProvider.cidrBlock"),
    ];
    /// A virtual private cloud.
    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
    #[kube(
        group = "alibabacloud.ferroplane.io",
        version = "v1alpha1",
        kind = "VPC",
        plural = "vpcs",
        singular = "vpc",
        status = "VPCStatus",
        doc = "An Alibaba Cloud VPC (virtual private cloud). ferroplane creates it with CreateVpc, reports it in status.atProvider and deletes it when the object is deleted (unless deletionPolicy is Orphan); it waits for the VPC's vSwitches and security groups to go first."
    )]
    #[serde(rename_all = "camelCase")]
    pub struct VPCSpec {
        /// `Delete` deletes the VPC with the object; `Orphan` leaves it in the cloud.
        deletion_policy,
        management_policies,
        provider_config_ref,
        /// When set, ferroplane writes `vpcId` to this Secret in the object's namespace.
        write_connection_secret_to_ref,
        /// The desired VPC, with the VPC API's parameter names.
        pub for_provider: VPCParameters,
    }
}

/// CreateVpc parameters.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("!has(oldSelf.cidrBlock) || has(self.cidrBlock)").message("cidrBlock cannot be removed once set"))]
#[x_kube(validation = Rule::new("(has(self.enableIpv6) && self.enableIpv6) == (has(oldSelf.enableIpv6) && oldSelf.enableIpv6)").message("enableIpv6 is set when the VPC is created; create a new VPC to change it"))]
pub struct VPCParameters {
    /// Region, e.g. `cn-beijing`. Immutable.
    #[schemars(
        regex(pattern = r"^[a-z]{2,4}-[a-z0-9-]+[0-9a-z]$"),
        length(min = 4, max = 64)
    )]
    #[x_kube(validation = Rule::new("self == oldSelf").message("regionId is immutable; create a new VPC in the other region"))]
    pub region_id: String,
    /// IPv4 range, e.g. `10.0.0.0/8`, `172.16.0.0/12`, `192.168.0.0/16` or a subnet of one (mask
    /// 8 to 28). Absent: the API's default, `172.16.0.0/12`. Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^([0-9]{1,3}\.){3}[0-9]{1,3}/([89]|1[0-9]|2[0-8])$"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("cidrBlock is immutable; create a new VPC"))]
    pub cidr_block: Option<String>,
    /// Name, 1 to 128 characters, not starting with `http://` or `https://`. Changed in place
    /// (ModifyVpcAttribute); a change made elsewhere is reverted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128))]
    pub vpc_name: Option<String>,
    /// Description, 1 to 256 characters. Changed in place (ModifyVpcAttribute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 256))]
    pub description: Option<String>,
    /// Tags. Changed in place (TagResources / UnTagResources): tags the VPC has beyond these
    /// are removed, except ferroplane's UID tag and the cloud's own (`acs:`, `aliyun`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("maxProperties" = 19))]
    #[schemars(transform = tag_values_schema)]
    #[x_kube(validation = Rule::new(TAG_KEYS_RULE).message(TAG_KEYS_MESSAGE))]
    #[x_kube(validation = Rule::new(TAG_VALUES_RULE).message(TAG_VALUES_MESSAGE))]
    pub tags: Option<Tags>,
    /// `true` gives the VPC an IPv6 `/56` (CreateVpc `EnableIpv6`), which its vSwitches' IPv6
    /// blocks (`ipv6CidrBlock`) come from. Set at creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enable_ipv6: Option<bool>,
}

/// What ferroplane observed of the VPC.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VPCObservation {
    /// `vpc-...`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vpc_id: Option<String>,
    /// `Pending` or `Available`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// The IPv4 range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cidr_block: Option<String>,
    /// The VPC's router.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v_router_id: Option<String>,
    /// The IPv6 `/56`, when the VPC has IPv6.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipv6_cidr_block: Option<String>,
}

/// Observed state of a VPC.
pub type VPCStatus = CloudStatus<VPCObservation>;

crate::impl_managed!(VPC, provider_config);
