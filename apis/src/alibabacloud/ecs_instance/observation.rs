//! What ferroplane observed of an ECS instance: `status.atProvider` of an `ECSInstance`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::CloudStatus;

/// What ferroplane observed of the instance in the cloud.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ECSInstanceObservation {
    /// The instance ID, `i-...` (also in the `ferroplane.io/external-name` annotation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_id: Option<String>,
    /// ECS status: Pending, Starting, Running, Stopping or Stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Public IP address, when `internetMaxBandwidthOut` is greater than 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public_ip_address: Option<String>,
    /// Private (VPC) IP address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_ip_address: Option<String>,
    /// Zone the instance runs in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone_id: Option<String>,
    /// Instance type currently in effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_type: Option<String>,
    /// When ECS created the instance (minute precision, as ECS reports it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creation_time: Option<String>,
    /// Number of vCPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<i32>,
    /// Memory in MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<i64>,
    /// Operating system name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os_name: Option<String>,
    /// Billing method: `PostPaid` or `PrePaid`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_charge_type: Option<String>,
    /// When a `PrePaid` instance's subscription expires (minute precision); ECS releases it only
    /// after that.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expired_time: Option<String>,
    /// How the stopped instance is billed: `KeepCharging` or `StopCharging`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_mode: Option<String>,
    /// Region of the instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region_id: Option<String>,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_name: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Host name of the guest OS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_name: Option<String>,
    /// Image the instance runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_id: Option<String>,
    /// Instance type family, e.g. `ecs.g6`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_type_family: Option<String>,
    /// `linux` or `windows`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os_type: Option<String>,
    /// Serial number of the instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial_number: Option<String>,
    /// When the instance last started (minute precision).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<String>,
    /// VPC of the instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vpc_id: Option<String>,
    /// vSwitch of the instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v_switch_id: Option<String>,
    /// Every private IPv4 address of the instance.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub private_ip_addresses: Vec<String>,
    /// IPv6 addresses of the primary network interface.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ipv6_addresses: Vec<String>,
    /// The elastic IP bound to the instance, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eip_address: Option<String>,
    /// Security groups the instance is in.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub security_group_ids: Vec<String>,
    /// Network interfaces attached to the instance.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network_interfaces: Vec<NetworkInterfaceObservation>,
    /// `PayByTraffic` or `PayByBandwidth`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub internet_charge_type: Option<String>,
    /// Outbound public bandwidth in Mbit/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub internet_max_bandwidth_out: Option<i32>,
    /// Inbound public bandwidth in Mbit/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub internet_max_bandwidth_in: Option<i32>,
    /// `NoSpot`, `SpotWithPriceLimit` or `SpotAsPriceGo`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spot_strategy: Option<String>,
    /// Highest hourly price of a `SpotWithPriceLimit` instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spot_price_limit: Option<f64>,
    /// Protection period of a spot instance, in hours.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spot_duration: Option<i32>,
    /// What ECS does when it reclaims the spot instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spot_interruption_behavior: Option<String>,
    /// Whether ECS refuses to release the instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_protection: Option<bool>,
    /// SSH key pair bound to the instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_pair_name: Option<String>,
    /// Instance RAM role attached to the instance (DescribeInstanceRamRole; reported when
    /// `ramRoleName` is in the spec).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ram_role_name: Option<String>,
    /// Resource group of the instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_group_id: Option<String>,
    /// Metadata service settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata_options: Option<MetadataOptionsObservation>,
    /// Deployment set the instance belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment_set_id: Option<String>,
    /// CPU credit mode of a burstable instance: `Standard` or `Unlimited`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credit_specification: Option<String>,
    /// Why the instance is locked (e.g. `financial`), if it is.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub operation_locks: Vec<String>,
    /// The system disk (DescribeDisks; reported when the spec sets `systemDisk` or
    /// `dataDisks`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_disk: Option<InstanceDiskObservation>,
    /// IDs of the data disks attached to the instance (DescribeDisks, as `systemDisk`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub data_disk_ids: Vec<String>,
    /// Tags on the instance, ferroplane's own included.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<String, String>,
}

/// A network interface of the instance.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NetworkInterfaceObservation {
    /// `eni-...`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_interface_id: Option<String>,
    /// `Primary` or `Secondary`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub interface_type: Option<String>,
    /// MAC address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mac_address: Option<String>,
    /// Primary private IPv4 address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary_ip_address: Option<String>,
    /// IPv6 addresses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ipv6_addresses: Vec<String>,
}

/// A disk of the instance.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstanceDiskObservation {
    /// `d-...`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_id: Option<String>,
    /// E.g. `cloud_essd`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// GiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<i32>,
    /// `PL0`–`PL3` (cloud_essd).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub performance_level: Option<String>,
}

/// The metadata service settings of the instance.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MetadataOptionsObservation {
    /// `enabled` or `disabled`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_endpoint: Option<String>,
    /// `optional` or `required`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_tokens: Option<String>,
    /// Hop limit of token responses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_put_response_hop_limit: Option<i32>,
}

/// Observed state of an ECSInstance.
pub type ECSInstanceStatus = CloudStatus<ECSInstanceObservation>;
