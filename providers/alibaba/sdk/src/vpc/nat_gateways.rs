//! NAT gateways on [`VpcClient`]: `CreateNatGateway` (enhanced, pay-as-you-go),
//! `DescribeNatGateways`, `ModifyNatGatewayAttribute` and `DeleteNatGateway`, with their request
//! and response types. A create carries a `ClientToken` (a fresh one unless the caller gives
//! one); a delete never sends `Force`, so a gateway with entries or bound EIPs is refused.

use serde::Deserialize;

use super::actions::for_each_page;
use super::client::VpcClient;
use super::types::{Tag, TagList, set_tags};
use crate::ecs::{AckResponse, resolve_client_token};
use crate::error::Error;
use crate::rpc::Params;
use crate::wire::wrapped_list;

/// The largest page `DescribeNatGateways` returns.
const PAGE_SIZE: u32 = 50;

/// NAT gateway statuses.
pub mod nat_gateway_status {
    /// Being created.
    pub const CREATING: &str = "Creating";
    /// Ready.
    pub const AVAILABLE: &str = "Available";
    /// Being changed.
    pub const MODIFYING: &str = "Modifying";
    /// Being deleted.
    pub const DELETING: &str = "Deleting";
    /// Being converted (to the enhanced type).
    pub const CONVERTING: &str = "Converting";
}

/// The VPC API's codes that refuse `DeleteNatGateway` while something holds the gateway.
pub mod nat_gateway_dependency {
    /// SNAT entries remain.
    pub const SNAT_ENTRY: &str = "DependencyViolation.SnatEntry";
    /// DNAT entries remain.
    pub const FORWARD_ENTRY: &str = "DependencyViolation.ForwardEntry";
    /// EIPs are still bound.
    pub const EIPS: &str = "DependencyViolation.EIPS";
}

/// `CreateNatGateway` parameters (the enhanced type, pay-as-you-go).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CreateNatGatewayRequest {
    /// `VpcId`.
    pub vpc_id: String,
    /// `VSwitchId`: a vSwitch of the VPC.
    pub vswitch_id: String,
    /// `NetworkType`: `internet` (the default) or `intranet`.
    pub network_type: Option<String>,
    /// `Name`.
    pub name: Option<String>,
    /// `Description`.
    pub description: Option<String>,
    /// `ClientToken`: a repeat with the same token creates nothing new.
    pub client_token: Option<String>,
}

wrapped_list!(SnatTableIdList, "SnatTableId", String);
wrapped_list!(ForwardTableIdList, "ForwardTableId", String);

/// `CreateNatGateway` response.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct CreateNatGatewayResponse {
    /// The request ID.
    pub request_id: String,
    /// `ngw-...`.
    pub nat_gateway_id: String,
    /// The SNAT table.
    pub snat_table_ids: SnatTableIdList,
    /// The forward (DNAT) table.
    pub forward_table_ids: ForwardTableIdList,
}

/// An EIP bound to a gateway.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct NatGatewayIp {
    /// `eip-...`.
    pub allocation_id: String,
    /// The address.
    pub ip_address: String,
    /// `Idle` or `UsedBySnatTable` / `UsedByForwardTable`.
    pub using_status: String,
}

wrapped_list!(NatGatewayIpList, "IpList", NatGatewayIp);

/// Where the gateway sits in its VPC.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct NatGatewayPrivateInfo {
    /// The vSwitch (the API spells it `VswitchId`).
    #[serde(rename = "VswitchId")]
    pub vswitch_id: String,
    /// The gateway's private address.
    pub private_ip_address: String,
}

/// One NAT gateway.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct NatGateway {
    /// `ngw-...`.
    pub nat_gateway_id: String,
    /// The VPC.
    pub vpc_id: String,
    /// The name.
    pub name: String,
    /// The description.
    pub description: String,
    /// See [`nat_gateway_status`].
    pub status: String,
    /// `Enhanced`.
    pub nat_type: String,
    /// `internet` or `intranet`.
    pub network_type: String,
    /// Whether DeleteNatGateway refuses it (set by `DeletionProtection`).
    pub deletion_protection: bool,
    /// The SNAT table.
    pub snat_table_ids: SnatTableIdList,
    /// The forward (DNAT) table.
    pub forward_table_ids: ForwardTableIdList,
    /// The EIPs bound to it.
    pub ip_lists: NatGatewayIpList,
    /// Its vSwitch and private address.
    pub nat_gateway_private_info: NatGatewayPrivateInfo,
    /// Tags.
    pub tags: TagList,
}

impl NatGateway {
    /// A tag's value.
    pub fn tag(&self, key: &str) -> Option<&str> {
        self.tags.get(key)
    }

    /// The SNAT table's ID (empty when the API sent none).
    pub fn snat_table_id(&self) -> &str {
        self.snat_table_ids.items.first().map_or("", String::as_str)
    }

    /// The forward table's ID (empty when the API sent none).
    pub fn forward_table_id(&self) -> &str {
        self.forward_table_ids
            .items
            .first()
            .map_or("", String::as_str)
    }
}

wrapped_list!(NatGatewayList, "NatGateway", NatGateway);

#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
struct DescribeNatGatewaysResponse {
    total_count: u64,
    nat_gateways: NatGatewayList,
}

impl VpcClient {
    /// `CreateNatGateway`: an enhanced, pay-as-you-go (`PayByLcu`) gateway.
    pub async fn create_nat_gateway(
        &self,
        request: &CreateNatGatewayRequest,
    ) -> Result<CreateNatGatewayResponse, Error> {
        let token = resolve_client_token("CreateNatGateway", request.client_token.as_deref())?;
        let mut p = Params::new();
        p.set("VpcId", &request.vpc_id)
            .set("VSwitchId", &request.vswitch_id)
            .set("NatType", "Enhanced")
            .set("InstanceChargeType", "PostPaid")
            .set("InternetChargeType", "PayByLcu")
            .opt("NetworkType", request.network_type.as_ref())
            .opt("Name", request.name.as_ref())
            .opt("Description", request.description.as_ref())
            .set("ClientToken", token);
        self.call_typed("CreateNatGateway", &p).await
    }

    /// `DescribeNatGateways`: the one with this ID, or those carrying every tag in `tags`; all
    /// pages.
    pub async fn describe_nat_gateways(
        &self,
        nat_gateway_id: Option<&str>,
        tags: &[Tag],
    ) -> Result<Vec<NatGateway>, Error> {
        let mut base = Params::new();
        base.opt("NatGatewayId", nat_gateway_id);
        set_tags(&mut base, tags);
        for_each_page(|page| {
            let mut p = base.clone();
            p.set("PageNumber", page).set("PageSize", PAGE_SIZE);
            async move {
                let r: DescribeNatGatewaysResponse =
                    self.call_typed("DescribeNatGateways", &p).await?;
                Ok((r.nat_gateways.items, r.total_count))
            }
        })
        .await
    }

    /// `ModifyNatGatewayAttribute`: the name and/or description.
    pub async fn modify_nat_gateway_attribute(
        &self,
        nat_gateway_id: &str,
        name: Option<&str>,
        description: Option<&str>,
    ) -> Result<AckResponse, Error> {
        let mut p = Params::new();
        p.set("NatGatewayId", nat_gateway_id)
            .opt("Name", name)
            .opt("Description", description);
        self.call_typed("ModifyNatGatewayAttribute", &p).await
    }

    /// `DeleteNatGateway` without `Force`: refused while SNAT or DNAT entries or bound EIPs
    /// remain (see [`nat_gateway_dependency`]).
    pub async fn delete_nat_gateway(&self, nat_gateway_id: &str) -> Result<AckResponse, Error> {
        let mut p = Params::new();
        p.set("NatGatewayId", nat_gateway_id);
        self.call_typed("DeleteNatGateway", &p).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gateway_reads_its_tables_addresses_and_vswitch() {
        let g: NatGateway = serde_json::from_value(serde_json::json!({
            "NatGatewayId": "ngw-1", "Status": "Available",
            "SnatTableIds": {"SnatTableId": ["stb-1"]},
            "ForwardTableIds": {"ForwardTableId": ["ftb-1"]},
            "IpLists": {"IpList": [{"AllocationId": "eip-1", "IpAddress": "39.96.0.1", "UsingStatus": "Idle"}]},
            "NatGatewayPrivateInfo": {"VswitchId": "vsw-1", "PrivateIpAddress": "10.0.0.3"},
            "Tags": {"Tag": [{"Key": "team", "Value": "a"}]},
        }))
        .unwrap();
        assert_eq!(
            (g.snat_table_id(), g.forward_table_id()),
            ("stb-1", "ftb-1")
        );
        assert_eq!(g.ip_lists.items[0].allocation_id, "eip-1");
        assert_eq!(g.nat_gateway_private_info.vswitch_id, "vsw-1");
        assert_eq!(g.tag("team"), Some("a"));
        let bare: NatGateway = serde_json::from_str(r#"{"NatGatewayId":"ngw-2"}"#).unwrap();
        assert_eq!((bare.snat_table_id(), bare.forward_table_id()), ("", ""));
    }
}
