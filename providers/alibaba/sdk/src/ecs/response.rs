//! Typed ECS responses.
//!
//! ECS wraps every list in an object (`"Instances":{"Instance":[...]}`,
//! `"Tags":{"Tag":[...]}`), and omits fields freely; these types unwrap the lists and default
//! anything missing, so an older or newer API shape still decodes. Instance times have minute
//! precision (`2017-12-10T04:04Z`) and decode into [`jiff::Timestamp`].

use serde::{Deserialize, Deserializer};

use crate::wire::wrapped_list;

/// A tag as ECS returns it (`TagKey`/`TagValue`; requests say `Key`/`Value`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Tag {
    /// The key.
    #[serde(rename = "TagKey")]
    pub key: String,
    /// The value.
    #[serde(rename = "TagValue")]
    pub value: String,
}

impl Tag {
    /// A tag.
    pub fn new(key: impl Into<String>, value: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            value: value.into(),
        }
    }
}

wrapped_list!(IpAddressList, "IpAddress", String);
wrapped_list!(SecurityGroupIdList, "SecurityGroupId", String);
wrapped_list!(TagList, "Tag", Tag);
wrapped_list!(LockReasonList, "LockReason", LockReason);
wrapped_list!(InstanceList, "Instance", Instance);
wrapped_list!(InstanceIdList, "InstanceIdSet", String);
wrapped_list!(RegionList, "Region", Region);

impl TagList {
    /// Each tag as (key, value).
    pub fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.items
            .iter()
            .map(|t| (t.key.as_str(), t.value.as_str()))
    }

    /// A tag's value.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs().find(|(k, _)| *k == key).map(|(_, v)| v)
    }
}
wrapped_list!(TagResourceList, "TagResource", TagResource);
wrapped_list!(NetworkInterfaceList, "NetworkInterface", NetworkInterface);
wrapped_list!(Ipv6SetList, "Ipv6Set", Ipv6Set);

/// Why an instance is locked (e.g. `financial`, `security`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct LockReason {
    /// The reason code.
    pub lock_reason: String,
    /// A human-readable explanation, when given.
    pub lock_msg: Option<String>,
}

/// VPC placement of an instance.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct VpcAttributes {
    /// The VPC.
    pub vpc_id: String,
    /// The vSwitch.
    #[serde(rename = "VSwitchId")]
    pub vswitch_id: String,
    /// Private IPv4 addresses.
    pub private_ip_address: IpAddressList,
}

/// The elastic IP bound to an instance.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct EipAddress {
    /// The EIP's allocation ID (empty when none).
    pub allocation_id: String,
    /// The address (empty when none).
    pub ip_address: String,
}

/// One instance, as `DescribeInstances` and `DescribeInstanceAttribute` describe it.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Instance {
    /// `i-...`.
    pub instance_id: String,
    /// The display name.
    pub instance_name: String,
    /// The description.
    pub description: String,
    /// The OS host name.
    pub host_name: String,
    /// `Pending`, `Starting`, `Running`, `Stopping` or `Stopped`.
    pub status: String,
    /// E.g. `ecs.g7.large`.
    pub instance_type: String,
    /// The image it was created from.
    pub image_id: String,
    /// The region.
    pub region_id: String,
    /// The zone.
    pub zone_id: String,
    /// vCPUs.
    pub cpu: u32,
    /// Memory in MiB.
    pub memory: u64,
    /// `linux` or `windows`.
    #[serde(rename = "OSType")]
    pub os_type: String,
    /// E.g. `Alibaba Cloud Linux 3`.
    #[serde(rename = "OSName")]
    pub os_name: String,
    /// `PostPaid` or `PrePaid`.
    pub instance_charge_type: String,
    /// `PayByTraffic` or `PayByBandwidth`.
    pub internet_charge_type: String,
    /// Outbound public bandwidth in Mbit/s.
    pub internet_max_bandwidth_out: u32,
    /// `NoSpot`, `SpotWithPriceLimit` or `SpotAsPriceGo` (empty when not reported).
    pub spot_strategy: String,
    /// The SSH key pair bound to the instance (empty when none).
    pub key_pair_name: String,
    /// When it was created.
    #[serde(deserialize_with = "minute_time")]
    pub creation_time: Option<jiff::Timestamp>,
    /// When it last started.
    #[serde(deserialize_with = "minute_time")]
    pub start_time: Option<jiff::Timestamp>,
    /// When a subscription (`PrePaid`) instance expires; pay-as-you-go instances report a date
    /// far in the future.
    #[serde(deserialize_with = "minute_time")]
    pub expired_time: Option<jiff::Timestamp>,
    /// How a stopped instance is billed: `KeepCharging`, `StopCharging` or `Not-applicable`.
    pub stopped_mode: String,
    /// Whether deletion protection is on.
    pub deletion_protection: bool,
    /// VPC placement.
    pub vpc_attributes: VpcAttributes,
    /// Public IPv4 addresses (not EIPs).
    pub public_ip_address: IpAddressList,
    /// The bound EIP.
    pub eip_address: EipAddress,
    /// Security groups.
    pub security_group_ids: SecurityGroupIdList,
    /// Tags.
    pub tags: TagList,
    /// Locks preventing operations.
    pub operation_locks: LockReasonList,
    /// E.g. `ecs.g7`.
    pub instance_type_family: String,
    /// The serial number.
    pub serial_number: String,
    /// Inbound public bandwidth in Mbit/s.
    pub internet_max_bandwidth_in: u32,
    /// The resource group.
    pub resource_group_id: String,
    /// The price limit of a `SpotWithPriceLimit` instance.
    pub spot_price_limit: f64,
    /// The protection period of a spot instance, in hours.
    pub spot_duration: u32,
    /// `Terminate` or `Stop`.
    pub spot_interruption_behavior: String,
    /// Metadata service settings.
    pub metadata_options: MetadataOptions,
    /// Network interfaces.
    pub network_interfaces: NetworkInterfaceList,
    /// The deployment set, if any.
    pub deployment_set_id: String,
    /// `Standard` or `Unlimited` (burstable types).
    pub credit_specification: String,
}

/// The metadata service settings of an instance.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct MetadataOptions {
    /// `enabled` or `disabled`.
    pub http_endpoint: String,
    /// `optional` or `required`.
    pub http_tokens: String,
    /// The hop limit of token responses.
    pub http_put_response_hop_limit: u32,
}

/// An IPv6 address of a network interface.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Ipv6Set {
    /// The address.
    pub ipv6_address: String,
}

/// A network interface of an instance.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct NetworkInterface {
    /// `eni-...`.
    pub network_interface_id: String,
    /// `Primary` or `Secondary`.
    #[serde(rename = "Type")]
    pub interface_type: String,
    /// The MAC address.
    pub mac_address: String,
    /// The primary private IPv4 address.
    pub primary_ip_address: String,
    /// IPv6 addresses.
    pub ipv6_sets: Ipv6SetList,
}

impl Instance {
    /// The first public address: the EIP if bound, else the first public IP.
    pub fn public_ip(&self) -> Option<&str> {
        Some(self.eip_address.ip_address.as_str())
            .filter(|ip| !ip.is_empty())
            .or_else(|| self.public_ip_address.items.first().map(String::as_str))
    }

    /// The first private IPv4 address.
    pub fn private_ip(&self) -> Option<&str> {
        self.vpc_attributes
            .private_ip_address
            .items
            .first()
            .map(String::as_str)
    }

    /// A subscription instance that has not expired at `now`: ECS refuses to release it.
    pub fn is_unexpired_subscription(&self, now: jiff::Timestamp) -> bool {
        self.instance_charge_type == "PrePaid" && self.expired_time.is_none_or(|t| t > now)
    }

    /// A tag's value.
    pub fn tag(&self, key: &str) -> Option<&str> {
        self.tags.get(key)
    }
}

/// The `DescribeInstances` response (one page).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct DescribeInstancesResponse {
    /// The request ID.
    pub request_id: String,
    /// Matching instances in total (all pages).
    pub total_count: u64,
    /// The page number (page-number pagination).
    pub page_number: u32,
    /// The page size (page-number pagination).
    pub page_size: u32,
    /// The token of the next page; empty or absent on the last one.
    pub next_token: Option<String>,
    /// This page's instances.
    pub instances: InstanceList,
}

/// The `DescribeInstanceAttribute` response: one flat instance.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct DescribeInstanceAttributeResponse {
    /// The request ID.
    #[serde(rename = "RequestId", default)]
    pub request_id: String,
    /// The instance.
    #[serde(flatten)]
    pub instance: Instance,
}

/// The `RunInstances` response.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct RunInstancesResponse {
    /// The request ID.
    pub request_id: String,
    /// The created instances.
    pub instance_id_sets: InstanceIdList,
    /// The order (subscription instances).
    pub order_id: Option<String>,
    /// The price of the order.
    pub trade_price: Option<f64>,
}

impl RunInstancesResponse {
    /// The created instance IDs.
    pub fn instance_ids(&self) -> &[String] {
        &self.instance_id_sets.items
    }
}

/// A response that carries nothing but its request ID (start, stop, modify, tag, ...).
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct AckResponse {
    /// The request ID.
    pub request_id: String,
}

/// One region.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Region {
    /// E.g. `cn-beijing`.
    pub region_id: String,
    /// The local name.
    pub local_name: String,
    /// The region's ECS endpoint host.
    pub region_endpoint: String,
    /// `available` or `soldOut`.
    pub status: String,
}

/// The `DescribeRegions` response.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct DescribeRegionsResponse {
    /// The request ID.
    pub request_id: String,
    /// The regions.
    pub regions: RegionList,
}

/// One (resource, tag) pair of `ListTagResources`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct TagResource {
    /// The resource ID.
    pub resource_id: String,
    /// The resource type, e.g. `instance`.
    pub resource_type: String,
    /// The tag key.
    pub tag_key: String,
    /// The tag value.
    pub tag_value: String,
}

/// The `ListTagResources` response (one page).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ListTagResourcesResponse {
    /// The request ID.
    pub request_id: String,
    /// The next page's token; empty or absent on the last one.
    pub next_token: Option<String>,
    /// The pairs.
    pub tag_resources: TagResourceList,
}

/// Decodes ECS instance times: `2017-12-10T04:04Z` (minute precision) or with seconds; an empty
/// string or null is `None`.
fn minute_time<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<jiff::Timestamp>, D::Error> {
    let Some(text) = Option::<String>::deserialize(deserializer)? else {
        return Ok(None);
    };
    parse_minute_time(&text).map_err(serde::de::Error::custom)
}

/// Parses an ECS instance time; see [`Instance::creation_time`].
pub fn parse_minute_time(text: &str) -> Result<Option<jiff::Timestamp>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    text.parse::<jiff::Timestamp>()
        .or_else(|_| {
            // `YYYY-MM-DDTHH:MMZ`: add the seconds the parser may insist on.
            match text.strip_suffix('Z') {
                Some(base) if base.len() == 16 => format!("{base}:00Z").parse(),
                _ => text.parse(),
            }
        })
        .map(Some)
        .map_err(|e| format!("invalid instance time `{text}`: {e}"))
}

/// Formats a time the way ECS does in instance descriptions (`2017-12-10T04:04Z`).
pub fn format_minute_time(time: jiff::Timestamp) -> String {
    time.strftime("%Y-%m-%dT%H:%MZ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const INSTANCE: &str = r#"{
        "InstanceId": "i-bp67acfmxazb4p****", "InstanceName": "web-1", "Description": "",
        "HostName": "web-1", "Status": "Running", "InstanceType": "ecs.g7.large",
        "ImageId": "aliyun_3_x64_20G_alibase_20240819.vhd", "RegionId": "cn-hangzhou",
        "ZoneId": "cn-hangzhou-i", "Cpu": 2, "Memory": 8192, "OSType": "linux",
        "OSName": "Alibaba Cloud Linux 3", "InstanceChargeType": "PostPaid",
        "InternetChargeType": "PayByTraffic", "InternetMaxBandwidthOut": 5,
        "CreationTime": "2017-12-10T04:04Z", "StartTime": "2017-12-10T04:05Z",
        "DeletionProtection": false,
        "VpcAttributes": {"VpcId": "vpc-1", "VSwitchId": "vsw-1",
            "PrivateIpAddress": {"IpAddress": ["172.16.0.10"]}, "NatIpAddress": ""},
        "PublicIpAddress": {"IpAddress": ["47.1.2.3"]},
        "EipAddress": {"AllocationId": "", "IpAddress": "", "InternetChargeType": ""},
        "SecurityGroupIds": {"SecurityGroupId": ["sg-1", "sg-2"]},
        "Tags": {"Tag": [{"TagKey": "ferroplane.io/uid", "TagValue": "u-1"}]},
        "OperationLocks": {"LockReason": []},
        "SomeFutureField": {"Nested": true}
    }"#;

    #[test]
    fn decodes_a_full_instance() {
        let instance: Instance = serde_json::from_str(INSTANCE).unwrap();
        assert_eq!(instance.instance_id, "i-bp67acfmxazb4p****");
        assert_eq!(instance.cpu, 2);
        assert_eq!(instance.memory, 8192);
        assert_eq!(instance.os_name, "Alibaba Cloud Linux 3");
        assert_eq!(instance.public_ip(), Some("47.1.2.3"));
        assert_eq!(instance.private_ip(), Some("172.16.0.10"));
        assert_eq!(instance.security_group_ids.items, ["sg-1", "sg-2"]);
        assert_eq!(instance.tag("ferroplane.io/uid"), Some("u-1"));
        let created = instance.creation_time.unwrap();
        assert_eq!(format_minute_time(created), "2017-12-10T04:04Z");
    }

    #[test]
    fn decodes_a_page_with_empty_wrapped_lists_and_missing_fields() {
        let page: DescribeInstancesResponse = serde_json::from_str(
            r#"{"RequestId":"R","TotalCount":0,"PageNumber":1,"PageSize":10,"NextToken":"",
                "Instances":{"Instance":[]}}"#,
        )
        .unwrap();
        assert!(page.instances.items.is_empty());
        let sparse: Instance = serde_json::from_str(
            r#"{"InstanceId":"i-1","PublicIpAddress":{},"Tags":null,"CreationTime":""}"#,
        )
        .unwrap();
        assert!(sparse.public_ip().is_none() && sparse.creation_time.is_none());
    }

    #[test]
    fn describe_instance_attribute_is_flat() {
        let body = INSTANCE.replacen('{', r#"{"RequestId":"R-1","#, 1);
        let response: DescribeInstanceAttributeResponse = serde_json::from_str(&body).unwrap();
        assert_eq!(response.request_id, "R-1");
        assert_eq!(response.instance.status, "Running");
    }

    #[test]
    fn run_instances_response() {
        let response: RunInstancesResponse = serde_json::from_str(
            r#"{"RequestId":"R","InstanceIdSets":{"InstanceIdSet":["i-1","i-2"]},"TradePrice":0.5}"#,
        )
        .unwrap();
        assert_eq!(response.instance_ids(), ["i-1", "i-2"]);
    }

    #[test]
    fn only_an_unexpired_subscription_is_unreleasable() {
        let at = |s: &str| parse_minute_time(s).unwrap();
        let now = at("2026-06-01T00:00Z").unwrap();
        let instance = |charge: &str, expiry: &str| -> Instance {
            serde_json::from_str(&format!(
                r#"{{"InstanceChargeType":"{charge}","ExpiredTime":"{expiry}","StoppedMode":"KeepCharging"}}"#
            ))
            .unwrap()
        };
        let prepaid = instance("PrePaid", "2026-07-01T16:00Z");
        assert_eq!(prepaid.expired_time, at("2026-07-01T16:00Z"));
        assert_eq!(prepaid.stopped_mode, "KeepCharging");
        assert!(prepaid.is_unexpired_subscription(now));
        assert!(!instance("PrePaid", "2026-05-01T16:00Z").is_unexpired_subscription(now));
        assert!(!instance("PostPaid", "2099-12-31T15:59Z").is_unexpired_subscription(now));
    }

    #[test]
    fn instance_times_with_and_without_seconds() {
        assert_eq!(
            parse_minute_time("2024-01-01T00:00:30Z")
                .unwrap()
                .unwrap()
                .as_second(),
            1_704_067_230
        );
        assert_eq!(
            parse_minute_time("2024-01-01T00:01Z")
                .unwrap()
                .unwrap()
                .as_second(),
            1_704_067_260
        );
        assert!(parse_minute_time("yesterday").is_err());
        assert!(serde_json::from_str::<Instance>(r#"{"CreationTime":"garbage"}"#).is_err());
    }
}
