//! How an instance is shown: [`InstanceView`], one element of DescribeInstances (serialized
//! straight from the stored instance), and [`InstanceSummary`], the mock's own inspection view.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::instance::{POST_PAID_EXPIRY, Status, StoredInstance, minute_time};

impl StoredInstance {
    fn start_time(&self, now: Timestamp) -> String {
        self.lifecycle
            .running_from()
            .filter(|t| *t <= now)
            .map(minute_time)
            .unwrap_or_default()
    }

    /// The instance as one element of `DescribeInstances` `Instances.Instance`, ready to
    /// serialize without building an intermediate JSON tree.
    pub fn view(&self, now: Timestamp) -> InstanceView<'_> {
        let status = self.status(now);
        InstanceView {
            instance_id: &self.id,
            instance_name: &self.name,
            description: &self.description,
            host_name: &self.host_name,
            status: status.as_str(),
            instance_type: self.instance_type.id,
            instance_type_family: family(self.instance_type.id),
            image_id: self.image.id,
            region_id: self.region_id,
            zone_id: &self.zone_id,
            cpu: self.instance_type.cpu,
            memory: self.instance_type.memory_mib,
            os_type: self.image.os_type,
            os_name: self.image.os_name,
            os_name_en: self.image.os_name_en,
            instance_charge_type: self.charge_type,
            spot_strategy: self.spot_strategy,
            internet_charge_type: self.internet_charge_type,
            internet_max_bandwidth_out: self.bandwidth_out,
            internet_max_bandwidth_in: 100,
            instance_network_type: "vpc",
            creation_time: minute_time(self.created_at),
            start_time: self.start_time(now),
            expired_time: self
                .expires_at
                .map_or_else(|| POST_PAID_EXPIRY.to_owned(), minute_time),
            auto_release_time: "",
            stopped_mode: if status == Status::Stopped {
                self.stopped_mode
            } else {
                "Not-applicable"
            },
            deletion_protection: self.deletion_protection,
            key_pair_name: &self.key_pair_name,
            serial_number: serial_number(&self.id),
            vpc_attributes: VpcAttributesView {
                vpc_id: &self.vpc_id,
                vswitch_id: &self.vswitch_id,
                nat_ip_address: "",
                private_ip_address: IpAddressesView {
                    ip_address: vec![self.private_ip.to_string()],
                },
            },
            public_ip_address: IpAddressesView {
                ip_address: self
                    .public_ip
                    .filter(|_| self.bandwidth_out > 0)
                    .map(|ip| ip.to_string())
                    .into_iter()
                    .collect(),
            },
            inner_ip_address: IpAddressesView {
                ip_address: Vec::new(),
            },
            eip_address: EipAddressView::default(),
            security_group_ids: SecurityGroupIdsView {
                security_group_id: &self.security_group_ids,
            },
            tags: TagsView {
                tag: self
                    .tags
                    .iter()
                    .map(|(k, v)| TagView {
                        tag_key: k,
                        tag_value: v,
                    })
                    .collect(),
            },
            operation_locks: OperationLocksView {
                lock_reason: self
                    .recycling
                    .then_some(LockReasonView {
                        lock_reason: "Recycling",
                    })
                    .into_iter()
                    .collect(),
            },
            resource_group_id: &self.resource_group_id,
            spot_price_limit: self.spot.price_limit,
            spot_duration: self.spot.duration,
            spot_interruption_behavior: self.spot.interruption_behavior,
            metadata_options: MetadataOptionsView {
                http_endpoint: self.metadata.http_endpoint,
                http_tokens: self.metadata.http_tokens,
                http_put_response_hop_limit: self.metadata.http_put_response_hop_limit,
            },
            network_interfaces: NetworkInterfacesView {
                network_interface: [NetworkInterfaceView {
                    network_interface_id: eni_id(&self.id),
                    mac_address: mac_address(self.seq),
                    primary_ip_address: self.private_ip.to_string(),
                    type_: "Primary",
                    ipv6_sets: Ipv6SetsView {
                        ipv6_set: self
                            .ipv6_addresses
                            .iter()
                            .map(|ip| Ipv6SetView {
                                ipv6_address: ip.to_string(),
                            })
                            .collect(),
                    },
                    private_ip_sets: PrivateIpSetsView {
                        private_ip_set: [PrivateIpSetView {
                            private_ip_address: self.private_ip.to_string(),
                            primary: true,
                            private_dns_name: "",
                        }],
                    },
                    ipv4_prefix_sets: Ipv4PrefixSetsView {
                        ipv4_prefix_set: [],
                    },
                    ipv6_prefix_sets: Ipv6PrefixSetsView {
                        ipv6_prefix_set: [],
                    },
                }],
            },
            credit_specification: self.credit_specification.unwrap_or_default(),
            deployment_set_id: self.deployment_set_id.as_deref().unwrap_or_default(),
        }
    }

    /// The summary served by `GET /_mock/instances`.
    pub fn summary(&self, now: Timestamp) -> InstanceSummary {
        InstanceSummary {
            instance_id: self.id.clone(),
            instance_name: self.name.clone(),
            status: self.status(now).as_str().to_owned(),
            region_id: self.region_id.to_owned(),
            zone_id: self.zone_id.clone(),
            account_id: self.account_id.to_string(),
            instance_type: self.instance_type.id.to_owned(),
            image_id: self.image.id.to_owned(),
            deletion_protection: self.deletion_protection,
            public_ip_address: self
                .public_ip
                .filter(|_| self.bandwidth_out > 0)
                .map(|ip| ip.to_string()),
            private_ip_address: self.private_ip.to_string(),
            tags: self.tags.iter().cloned().collect(),
            client_token: self.client_token.clone(),
            compute_charged: !(self.stopped_mode == "StopCharging"
                && self.status(now) == Status::Stopped),
            internet_charge_type: self.internet_charge_type.to_owned(),
            internet_max_bandwidth_out: self.bandwidth_out,
            ram_role_name: self.ram_role_name.clone(),
            http_endpoint: self.metadata.http_endpoint.to_owned(),
            http_tokens: self.metadata.http_tokens.to_owned(),
            http_put_response_hop_limit: self.metadata.http_put_response_hop_limit,
            resource_group_id: self.resource_group_id.clone(),
            spot_strategy: self.spot_strategy.to_owned(),
            key_pair_name: self.key_pair_name.clone(),
            credit_specification: self.credit_specification.map(str::to_owned),
            vswitch_id: self.vswitch_id.clone(),
            ipv6_addresses: self
                .ipv6_addresses
                .iter()
                .map(ToString::to_string)
                .collect(),
            deployment_set_id: self.deployment_set_id.clone(),
            description: self.description.clone(),
            host_name: self.host_name.clone(),
            security_group_ids: self.security_group_ids.clone(),
            instance_charge_type: self.charge_type.to_owned(),
            auto_renew: self.renewal.as_ref().map(|r| (r.auto_renew, r.duration)),
            user_data: self.user_data.clone(),
            password_digest: self.password.active.clone(),
            password_pending: self.password.pending.is_some(),
        }
    }
}

/// One instance in the shape ECS describes it (wrapped lists, minute-precision times).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct InstanceView<'a> {
    pub instance_id: &'a str,
    pub instance_name: &'a str,
    pub description: &'a str,
    pub host_name: &'a str,
    pub status: &'static str,
    pub instance_type: &'static str,
    pub instance_type_family: &'static str,
    pub image_id: &'static str,
    pub region_id: &'static str,
    pub zone_id: &'a str,
    pub cpu: u32,
    pub memory: u32,
    #[serde(rename = "OSType")]
    pub os_type: &'static str,
    #[serde(rename = "OSName")]
    pub os_name: &'static str,
    #[serde(rename = "OSNameEn")]
    pub os_name_en: &'static str,
    pub instance_charge_type: &'static str,
    pub spot_strategy: &'static str,
    pub internet_charge_type: &'static str,
    pub internet_max_bandwidth_out: u32,
    pub internet_max_bandwidth_in: u32,
    pub instance_network_type: &'static str,
    pub creation_time: String,
    pub start_time: String,
    pub expired_time: String,
    pub auto_release_time: &'static str,
    pub stopped_mode: &'static str,
    pub deletion_protection: bool,
    pub key_pair_name: &'a str,
    pub serial_number: String,
    pub vpc_attributes: VpcAttributesView<'a>,
    pub public_ip_address: IpAddressesView,
    pub inner_ip_address: IpAddressesView,
    pub eip_address: EipAddressView<'a>,
    pub security_group_ids: SecurityGroupIdsView<'a>,
    pub tags: TagsView<'a>,
    pub operation_locks: OperationLocksView,
    pub resource_group_id: &'a str,
    pub spot_price_limit: f64,
    pub spot_duration: u32,
    pub spot_interruption_behavior: &'static str,
    pub metadata_options: MetadataOptionsView,
    pub network_interfaces: NetworkInterfacesView,
    /// Empty for types that are not burstable.
    pub credit_specification: &'static str,
    /// Empty when the instance is in no deployment set.
    pub deployment_set_id: &'a str,
}

/// `MetadataOptions`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct MetadataOptionsView {
    pub http_endpoint: &'static str,
    pub http_tokens: &'static str,
    pub http_put_response_hop_limit: u32,
}

/// `{"NetworkInterface": [...]}` (the primary interface only in the mock).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct NetworkInterfacesView {
    pub network_interface: [NetworkInterfaceView; 1],
}

/// One network interface.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct NetworkInterfaceView {
    pub network_interface_id: String,
    pub mac_address: String,
    pub primary_ip_address: String,
    #[serde(rename = "Type")]
    pub type_: &'static str,
    pub ipv6_sets: Ipv6SetsView,
    pub private_ip_sets: PrivateIpSetsView,
    /// No IPv4 / IPv6 prefixes: the mock assigns none.
    pub ipv4_prefix_sets: Ipv4PrefixSetsView,
    pub ipv6_prefix_sets: Ipv6PrefixSetsView,
}

/// `{"PrivateIpSet": [...]}`: the primary private IP (the mock assigns no secondary ones).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct PrivateIpSetsView {
    pub private_ip_set: [PrivateIpSetView; 1],
}

/// One private IP of a network interface.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct PrivateIpSetView {
    pub private_ip_address: String,
    pub primary: bool,
    /// Empty, as DescribeNetworkInterfaces reports it here.
    pub private_dns_name: &'static str,
}

/// `{"Ipv4PrefixSet": []}`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Ipv4PrefixSetsView {
    pub ipv4_prefix_set: [(); 0],
}

/// `{"Ipv6PrefixSet": []}`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Ipv6PrefixSetsView {
    pub ipv6_prefix_set: [(); 0],
}

/// `{"Ipv6Set": [{"Ipv6Address": ...}]}`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Ipv6SetsView {
    pub ipv6_set: Vec<Ipv6SetView>,
}

/// One IPv6 address of a network interface.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Ipv6SetView {
    pub ipv6_address: String,
}

/// `VpcAttributes`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct VpcAttributesView<'a> {
    pub vpc_id: &'a str,
    #[serde(rename = "VSwitchId")]
    pub vswitch_id: &'a str,
    pub nat_ip_address: &'static str,
    pub private_ip_address: IpAddressesView,
}

/// `{"IpAddress": [...]}`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct IpAddressesView {
    pub ip_address: Vec<String>,
}

/// `EipAddress`: the EIP associated with the instance (empty fields when none; the describe
/// actions fill it from the EIP store).
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct EipAddressView<'a> {
    pub allocation_id: &'a str,
    pub ip_address: String,
    pub internet_charge_type: &'a str,
    pub bandwidth: u32,
    /// An associated EIP can be unassociated (UnassociateEipAddress); with none, nothing can.
    pub is_support_unassociate: bool,
}

/// `{"SecurityGroupId": [...]}`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct SecurityGroupIdsView<'a> {
    pub security_group_id: &'a [String],
}

/// `{"Tag": [...]}`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct TagsView<'a> {
    pub tag: Vec<TagView<'a>>,
}

/// `{"TagKey", "TagValue"}`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct TagView<'a> {
    pub tag_key: &'a str,
    pub tag_value: &'a str,
}

/// `{"LockReason": [{"LockReason": "Recycling"}]}`: a spot instance being reclaimed; empty
/// otherwise (the mock models no other lock).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct OperationLocksView {
    pub lock_reason: Vec<LockReasonView>,
}

/// One lock of `OperationLocks`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct LockReasonView {
    pub lock_reason: &'static str,
}

/// A live instance as `GET /_mock/instances` and [`crate::MockServer::instances`] show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InstanceSummary {
    pub instance_id: String,
    pub instance_name: String,
    /// `Pending`, `Starting`, `Running`, `Stopping` or `Stopped`.
    pub status: String,
    pub region_id: String,
    pub zone_id: String,
    pub account_id: String,
    pub instance_type: String,
    pub image_id: String,
    pub deletion_protection: bool,
    pub public_ip_address: Option<String>,
    pub private_ip_address: String,
    pub tags: BTreeMap<String, String>,
    pub client_token: Option<String>,
    /// Whether its vCPUs and memory are charged: false once stopped with `StopCharging`.
    #[serde(default)]
    pub compute_charged: bool,
    /// `PayByTraffic` or `PayByBandwidth`.
    #[serde(default)]
    pub internet_charge_type: String,
    /// Outbound public bandwidth in Mbit/s.
    #[serde(default)]
    pub internet_max_bandwidth_out: u32,
    /// The attached instance RAM role.
    #[serde(default)]
    pub ram_role_name: Option<String>,
    /// `enabled` or `disabled`.
    #[serde(default)]
    pub http_endpoint: String,
    /// `optional` or `required`.
    #[serde(default)]
    pub http_tokens: String,
    /// Metadata token hop limit.
    #[serde(default)]
    pub http_put_response_hop_limit: u32,
    /// The resource group.
    #[serde(default)]
    pub resource_group_id: String,
    /// `NoSpot`, `SpotWithPriceLimit` or `SpotAsPriceGo`.
    #[serde(default)]
    pub spot_strategy: String,
    /// The bound SSH key pair (empty when none).
    #[serde(default)]
    pub key_pair_name: String,
    /// `Standard` or `Unlimited` for a burstable type.
    #[serde(default)]
    pub credit_specification: Option<String>,
    /// The vSwitch of the primary network interface.
    #[serde(default)]
    pub vswitch_id: String,
    /// IPv6 addresses of the primary network interface.
    #[serde(default)]
    pub ipv6_addresses: Vec<String>,
    /// The deployment set, if any.
    #[serde(default)]
    pub deployment_set_id: Option<String>,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub host_name: String,
    #[serde(default)]
    pub security_group_ids: Vec<String>,
    /// `PostPaid` or `PrePaid`.
    #[serde(default)]
    pub instance_charge_type: String,
    /// (auto-renew, renewal duration) of a subscription instance.
    #[serde(default)]
    pub auto_renew: Option<(bool, u32)>,
    /// Base64, as RunInstances / ModifyInstanceAttribute took it.
    #[serde(default)]
    pub user_data: Option<String>,
    /// The digest ([`crate::password_digest`]) of the password the instance booted with.
    #[serde(default)]
    pub password_digest: Option<String>,
    /// A password set since, waiting for the next start.
    #[serde(default)]
    pub password_pending: bool,
}

/// The primary network interface's ID, derived from the instance ID.
pub fn eni_id(instance_id: &str) -> String {
    format!("eni-{}", instance_id.trim_start_matches("i-"))
}

/// The instance whose primary network interface `eni` is ([`eni_id`]'s inverse).
pub fn eni_instance_id(eni: &str) -> Option<String> {
    eni.strip_prefix("eni-")
        .filter(|suffix| !suffix.is_empty())
        .map(|suffix| format!("i-{suffix}"))
}

/// A MAC address of Alibaba's `00:16:3e` prefix, unique per instance sequence.
pub fn mac_address(seq: u64) -> String {
    let b = seq.to_be_bytes();
    format!("00:16:3e:{:02x}:{:02x}:{:02x}", b[5], b[6], b[7])
}

/// `ecs.g6.large` → `ecs.g6`.
fn family(type_id: &str) -> &str {
    type_id
        .rsplit_once('.')
        .map_or(type_id, |(family, _)| family)
}

/// A stable UUID-shaped serial number derived from the instance ID.
fn serial_number(id: &str) -> String {
    uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_OID, id.as_bytes()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_family() {
        assert_eq!(family("ecs.g6.large"), "ecs.g6");
    }
}
