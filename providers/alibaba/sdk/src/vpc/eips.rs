//! Elastic IP addresses on [`VpcClient`]: `AllocateEipAddress`, `DescribeEipAddresses`,
//! `ModifyEipAddressAttribute`, `ReleaseEipAddress`, `AssociateEipAddress` and
//! `UnassociateEipAddress`, with their request and response types. Allocation and the
//! association calls carry a `ClientToken` (a fresh one unless the caller gives one).

use serde::{Deserialize, Deserializer};

use super::actions::for_each_page;
use super::client::VpcClient;
use super::types::{Tag, TagList, set_tags};
use crate::ecs::{AckResponse, resolve_client_token};
use crate::error::Error;
use crate::rpc::Params;
use crate::wire::wrapped_list;

/// Most EIP IDs one `DescribeEipAddresses` takes.
pub const MAX_EIP_IDS_PER_CALL: usize = 50;
/// The largest page `DescribeEipAddresses` returns.
const PAGE_SIZE: u32 = 100;

/// EIP statuses.
pub mod eip_status {
    /// Allocated and associated with nothing.
    pub const AVAILABLE: &str = "Available";
    /// Being associated.
    pub const ASSOCIATING: &str = "Associating";
    /// Associated.
    pub const IN_USE: &str = "InUse";
    /// Being unassociated.
    pub const UNASSOCIATING: &str = "Unassociating";
    /// Being released.
    pub const RELEASING: &str = "Releasing";
}

/// `AllocateEipAddress` parameters (pay-as-you-go).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AllocateEipAddressRequest {
    /// `Bandwidth` in Mbit/s (the API's default: 5).
    pub bandwidth: Option<u32>,
    /// `InternetChargeType`: `PayByBandwidth` or `PayByTraffic`.
    pub internet_charge_type: Option<String>,
    /// `ISP`: `BGP` or `BGP_PRO`.
    pub isp: Option<String>,
    /// `Name`.
    pub name: Option<String>,
    /// `Description`.
    pub description: Option<String>,
    /// `ResourceGroupId`.
    pub resource_group_id: Option<String>,
    /// `ClientToken`: a repeat with the same token allocates nothing new.
    pub client_token: Option<String>,
}

/// `AllocateEipAddress` response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct AllocateEipAddressResponse {
    /// The request ID.
    pub request_id: String,
    /// `eip-...`.
    pub allocation_id: String,
    /// The public address.
    pub eip_address: String,
}

/// A number the API sends as a string (`"5"`) or as a number.
fn lenient_u32<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        Number(u32),
        Text(String),
    }
    match Option::<Either>::deserialize(d)? {
        None => Ok(0),
        Some(Either::Number(n)) => Ok(n),
        Some(Either::Text(t)) => Ok(t.trim().parse().unwrap_or(0)),
    }
}

/// One EIP.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct EipAddress {
    /// `eip-...`.
    pub allocation_id: String,
    /// The public address.
    pub ip_address: String,
    /// See [`eip_status`].
    pub status: String,
    /// Mbit/s.
    #[serde(deserialize_with = "lenient_u32")]
    pub bandwidth: u32,
    /// `PayByBandwidth` or `PayByTraffic`.
    pub internet_charge_type: String,
    /// `BGP`, `BGP_PRO`, …
    #[serde(rename = "ISP")]
    pub isp: String,
    /// The name.
    pub name: String,
    /// The description.
    pub description: String,
    /// The resource group.
    pub resource_group_id: String,
    /// What it is associated with (empty when nothing).
    pub instance_id: String,
    /// The type of that resource (`EcsInstance`, `Nat`, …).
    pub instance_type: String,
    /// The private IP of the network interface it maps to (`NetworkInterface` only).
    pub private_ip_address: String,
    /// The association mode: `NAT` (the default), `MULTI_BINDED` or `BINDED`.
    pub mode: String,
    /// Whether ReleaseEipAddress refuses it (set by `DeletionProtection`).
    pub deletion_protection: bool,
    /// Tags.
    pub tags: TagList,
}

impl EipAddress {
    /// A tag's value.
    pub fn tag(&self, key: &str) -> Option<&str> {
        self.tags.get(key)
    }
}

wrapped_list!(EipAddressList, "EipAddress", EipAddress);

#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
struct DescribeEipAddressesResponse {
    total_count: u64,
    eip_addresses: EipAddressList,
}

/// What an association names: the EIP, the resource and its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EipTarget<'a> {
    /// `AllocationId`.
    pub allocation_id: &'a str,
    /// `InstanceId`.
    pub instance_id: &'a str,
    /// `InstanceType`: `EcsInstance`, `Nat`, `NetworkInterface`, …
    pub instance_type: &'a str,
    /// `PrivateIpAddress`: the network interface's private IP (required for
    /// `NetworkInterface`; the association is then in the default `NAT` mode).
    pub private_ip_address: Option<&'a str>,
}

impl EipTarget<'_> {
    fn params(&self) -> Params {
        let mut p = Params::new();
        p.set("AllocationId", self.allocation_id)
            .set("InstanceId", self.instance_id)
            .set("InstanceType", self.instance_type);
        if let Some(ip) = self.private_ip_address {
            p.set("PrivateIpAddress", ip);
        }
        p
    }
}

impl VpcClient {
    /// `AllocateEipAddress` (pay-as-you-go).
    pub async fn allocate_eip_address(
        &self,
        request: &AllocateEipAddressRequest,
    ) -> Result<AllocateEipAddressResponse, Error> {
        let token = resolve_client_token("AllocateEipAddress", request.client_token.as_deref())?;
        let mut p = Params::new();
        p.opt("Bandwidth", request.bandwidth)
            .opt("InternetChargeType", request.internet_charge_type.as_ref())
            .opt("ISP", request.isp.as_ref())
            .opt("Name", request.name.as_ref())
            .opt("Description", request.description.as_ref())
            .opt("ResourceGroupId", request.resource_group_id.as_ref())
            .set("InstanceChargeType", "PostPaid")
            .set("ClientToken", token);
        self.call_typed("AllocateEipAddress", &p).await
    }

    /// `DescribeEipAddresses` of the given IDs (all EIPs of the region when empty) carrying
    /// every tag in `tags`, all pages.
    pub async fn describe_eip_addresses(
        &self,
        allocation_ids: &[String],
        tags: &[Tag],
    ) -> Result<Vec<EipAddress>, Error> {
        let mut found = Vec::new();
        let chunks: Vec<&[String]> = if allocation_ids.is_empty() {
            vec![&[]]
        } else {
            allocation_ids.chunks(MAX_EIP_IDS_PER_CALL).collect()
        };
        for chunk in chunks {
            let mut base = Params::new();
            if !chunk.is_empty() {
                base.set("AllocationId", chunk.join(","));
            }
            set_tags(&mut base, tags);
            let mut items = for_each_page(|page| {
                let mut p = base.clone();
                p.set("PageNumber", page).set("PageSize", PAGE_SIZE);
                async move {
                    let r: DescribeEipAddressesResponse =
                        self.call_typed("DescribeEipAddresses", &p).await?;
                    Ok((r.eip_addresses.items, r.total_count))
                }
            })
            .await?;
            found.append(&mut items);
        }
        Ok(found)
    }

    /// `ModifyEipAddressAttribute`: the bandwidth, name and/or description.
    pub async fn modify_eip_address_attribute(
        &self,
        allocation_id: &str,
        bandwidth: Option<u32>,
        name: Option<&str>,
        description: Option<&str>,
    ) -> Result<AckResponse, Error> {
        let mut p = Params::new();
        p.set("AllocationId", allocation_id)
            .opt("Bandwidth", bandwidth)
            .opt("Name", name)
            .opt("Description", description);
        self.call_typed("ModifyEipAddressAttribute", &p).await
    }

    /// `ReleaseEipAddress` (only an EIP associated with nothing).
    pub async fn release_eip_address(&self, allocation_id: &str) -> Result<AckResponse, Error> {
        let mut p = Params::new();
        p.set("AllocationId", allocation_id);
        self.call_typed("ReleaseEipAddress", &p).await
    }

    /// `AssociateEipAddress`.
    pub async fn associate_eip_address(
        &self,
        target: &EipTarget<'_>,
        client_token: Option<&str>,
    ) -> Result<AckResponse, Error> {
        let mut p = target.params();
        p.set(
            "ClientToken",
            resolve_client_token("AssociateEipAddress", client_token)?,
        );
        self.call_typed("AssociateEipAddress", &p).await
    }

    /// `UnassociateEipAddress`.
    pub async fn unassociate_eip_address(
        &self,
        target: &EipTarget<'_>,
        client_token: Option<&str>,
    ) -> Result<AckResponse, Error> {
        let mut p = target.params();
        p.set(
            "ClientToken",
            resolve_client_token("UnassociateEipAddress", client_token)?,
        );
        self.call_typed("UnassociateEipAddress", &p).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bandwidth_is_read_as_a_string_or_a_number() {
        let text: EipAddress =
            serde_json::from_str(r#"{"AllocationId":"eip-1","Bandwidth":"5"}"#).unwrap();
        let number: EipAddress = serde_json::from_str(r#"{"Bandwidth":200}"#).unwrap();
        assert_eq!((text.allocation_id.as_str(), text.bandwidth), ("eip-1", 5));
        assert_eq!(number.bandwidth, 200);
    }
}
