//! VPC API requests and responses. Like ECS, the API wraps every list in an object
//! (`"Vpcs":{"Vpc":[...]}`) and omits fields freely; unlike ECS, its tags are `Key`/`Value`.

use serde::Deserialize;

use crate::rpc::Params;
use crate::wire::wrapped_list;

/// Resource statuses the VPC API reports.
pub mod status {
    /// Being created.
    pub const PENDING: &str = "Pending";
    /// Ready for use.
    pub const AVAILABLE: &str = "Available";
}

/// A tag as the VPC API returns and takes it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Tag {
    /// The key.
    pub key: String,
    /// The value.
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

pub(crate) fn set_tags(params: &mut Params, tags: &[Tag]) {
    for (i, tag) in tags.iter().enumerate() {
        params.set(format!("Tag.{}.Key", i + 1), &tag.key);
        params.set(format!("Tag.{}.Value", i + 1), &tag.value);
    }
}

wrapped_list!(TagList, "Tag", Tag);
wrapped_list!(VSwitchIdList, "VSwitchId", String);
wrapped_list!(VpcList, "Vpc", Vpc);
wrapped_list!(VSwitchList, "VSwitch", VSwitch);

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

/// `CreateVpc` parameters.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CreateVpcRequest {
    /// `CidrBlock`, e.g. `172.16.0.0/12` (the API's default when absent).
    pub cidr_block: Option<String>,
    /// `VpcName`.
    pub vpc_name: Option<String>,
    /// `Description`.
    pub description: Option<String>,
    /// `Tag.N.Key` / `Tag.N.Value`.
    pub tags: Vec<Tag>,
    /// `ClientToken`: a repeat with the same token creates nothing new.
    pub client_token: Option<String>,
    /// `EnableIpv6`: give the VPC an IPv6 `/56`.
    pub enable_ipv6: bool,
}

impl CreateVpcRequest {
    pub(crate) fn to_params(&self) -> Params {
        let mut p = Params::new();
        p.opt("CidrBlock", self.cidr_block.as_ref())
            .opt("EnableIpv6", self.enable_ipv6.then_some(true))
            .opt("VpcName", self.vpc_name.as_ref())
            .opt("Description", self.description.as_ref())
            .opt("ClientToken", self.client_token.as_ref());
        set_tags(&mut p, &self.tags);
        p
    }
}

/// `CreateVpc` response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct CreateVpcResponse {
    /// The request ID.
    pub request_id: String,
    /// `vpc-...`.
    pub vpc_id: String,
    /// The VPC's router.
    #[serde(rename = "VRouterId")]
    pub vrouter_id: String,
}

/// One VPC.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Vpc {
    /// `vpc-...`.
    pub vpc_id: String,
    /// The region.
    pub region_id: String,
    /// `Pending` or `Available`.
    pub status: String,
    /// The name.
    pub vpc_name: String,
    /// The IPv4 CIDR block.
    pub cidr_block: String,
    /// The router.
    #[serde(rename = "VRouterId")]
    pub vrouter_id: String,
    /// The description.
    pub description: String,
    /// Whether it is the region's default VPC.
    pub is_default: bool,
    /// Its vSwitches.
    #[serde(rename = "VSwitchIds")]
    pub vswitch_ids: VSwitchIdList,
    /// The IPv6 `/56` of a VPC created with `EnableIpv6`; empty otherwise.
    pub ipv6_cidr_block: String,
    /// Tags.
    pub tags: TagList,
}

impl Vpc {
    /// A tag's value.
    pub fn tag(&self, key: &str) -> Option<&str> {
        self.tags.get(key)
    }
}

/// `DescribeVpcs` response (one page).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct DescribeVpcsResponse {
    /// The request ID.
    pub request_id: String,
    /// Matches across all pages.
    pub total_count: u64,
    /// This page's number (from 1).
    pub page_number: u32,
    /// The page size.
    pub page_size: u32,
    /// This page.
    pub vpcs: VpcList,
}

/// `CreateVSwitch` parameters.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CreateVSwitchRequest {
    /// `VpcId`.
    pub vpc_id: String,
    /// `ZoneId`.
    pub zone_id: String,
    /// `CidrBlock`, inside the VPC's.
    pub cidr_block: String,
    /// `VSwitchName`.
    pub vswitch_name: Option<String>,
    /// `Description`.
    pub description: Option<String>,
    /// `Tag.N.Key` / `Tag.N.Value`.
    pub tags: Vec<Tag>,
    /// `ClientToken`.
    pub client_token: Option<String>,
    /// `Ipv6CidrBlock`: the last eight bits (0–255) of the vSwitch's IPv6 `/64` inside the
    /// VPC's `/56`; the VPC must have IPv6 enabled.
    pub ipv6_cidr_block: Option<u8>,
}

impl CreateVSwitchRequest {
    pub(crate) fn to_params(&self) -> Params {
        let mut p = Params::new();
        p.set("VpcId", &self.vpc_id)
            .set("ZoneId", &self.zone_id)
            .set("CidrBlock", &self.cidr_block)
            .opt("VSwitchName", self.vswitch_name.as_ref())
            .opt("Description", self.description.as_ref())
            .opt("ClientToken", self.client_token.as_ref())
            .opt("Ipv6CidrBlock", self.ipv6_cidr_block);
        set_tags(&mut p, &self.tags);
        p
    }
}

/// `CreateVSwitch` response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct CreateVSwitchResponse {
    /// The request ID.
    pub request_id: String,
    /// `vsw-...`.
    #[serde(rename = "VSwitchId")]
    pub vswitch_id: String,
}

/// One vSwitch.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct VSwitch {
    /// `vsw-...`.
    #[serde(rename = "VSwitchId")]
    pub vswitch_id: String,
    /// Its VPC.
    pub vpc_id: String,
    /// `Pending` or `Available`.
    pub status: String,
    /// The IPv4 CIDR block.
    pub cidr_block: String,
    /// The zone.
    pub zone_id: String,
    /// Free private addresses.
    pub available_ip_address_count: u64,
    /// The description.
    pub description: String,
    /// The name.
    #[serde(rename = "VSwitchName")]
    pub vswitch_name: String,
    /// Whether it is its zone's default vSwitch.
    /// The IPv6 `/64` of a vSwitch created with `Ipv6CidrBlock`; empty otherwise.
    pub ipv6_cidr_block: String,
    pub is_default: bool,
    /// Tags.
    pub tags: TagList,
}

impl VSwitch {
    /// A tag's value.
    pub fn tag(&self, key: &str) -> Option<&str> {
        self.tags.get(key)
    }
}

/// `DescribeVSwitches` response (one page).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct DescribeVSwitchesResponse {
    /// The request ID.
    pub request_id: String,
    /// Matches across all pages.
    pub total_count: u64,
    /// This page's number (from 1).
    pub page_number: u32,
    /// The page size.
    pub page_size: u32,
    /// This page.
    #[serde(rename = "VSwitches")]
    pub vswitches: VSwitchList,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_vpcs_and_vswitches() {
        let vpcs: DescribeVpcsResponse = serde_json::from_str(
            r#"{"RequestId":"R","TotalCount":1,"PageNumber":1,"PageSize":50,
                "Vpcs":{"Vpc":[{"VpcId":"vpc-1","RegionId":"cn-beijing","Status":"Available",
                "VpcName":"n","CidrBlock":"10.0.0.0/8","VRouterId":"vrt-1","IsDefault":false,
                "VSwitchIds":{"VSwitchId":["vsw-1"]},
                "Tags":{"Tag":[{"Key":"ferroplane.io/uid","Value":"u"}]}}]}}"#,
        )
        .unwrap();
        let vpc = &vpcs.vpcs.items[0];
        assert_eq!(vpc.vrouter_id, "vrt-1");
        assert_eq!(vpc.vswitch_ids.items, ["vsw-1"]);
        assert_eq!(vpc.tag("ferroplane.io/uid"), Some("u"));
        let vsws: DescribeVSwitchesResponse = serde_json::from_str(
            r#"{"RequestId":"R","TotalCount":1,"VSwitches":{"VSwitch":[{"VSwitchId":"vsw-1",
                "VpcId":"vpc-1","Status":"Pending","CidrBlock":"10.1.0.0/24","ZoneId":"cn-beijing-a",
                "AvailableIpAddressCount":252,"VSwitchName":"a","Tags":{"Tag":[]}}]}}"#,
        )
        .unwrap();
        assert_eq!(vsws.vswitches.items[0].zone_id, "cn-beijing-a");
        assert_eq!(vsws.vswitches.items[0].available_ip_address_count, 252);
        let empty: DescribeVSwitchesResponse =
            serde_json::from_str(r#"{"RequestId":"R","VSwitches":{"VSwitch":null}}"#).unwrap();
        assert!(empty.vswitches.items.is_empty());
    }

    #[test]
    fn create_requests_map_to_parameters() {
        let p = CreateVSwitchRequest {
            vpc_id: "vpc-1".into(),
            zone_id: "cn-beijing-a".into(),
            cidr_block: "10.1.0.0/24".into(),
            tags: vec![Tag::new("team", "a")],
            client_token: Some("tok".into()),
            ..CreateVSwitchRequest::default()
        }
        .to_params();
        assert_eq!(p.get("VpcId"), Some("vpc-1"));
        assert_eq!(p.get("Tag.1.Key"), Some("team"));
        assert_eq!(p.get("ClientToken"), Some("tok"));
        assert_eq!(p.get("VSwitchName"), None);
        let p = CreateVpcRequest::default().to_params();
        assert_eq!(p.get("CidrBlock"), None);
    }
}
