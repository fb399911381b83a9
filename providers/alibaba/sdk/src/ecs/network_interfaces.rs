//! Network interfaces as `DescribeNetworkInterfaces` lists them: by ID (up to
//! [`MAX_NETWORK_INTERFACE_IDS_PER_CALL`] per call), with their private IPs and the public
//! address each maps to (`AssociatedPublicIp`: the instance's own public IP, or an EIP).

use serde::Deserialize;

use super::client::EcsClient;
use crate::error::Error;
use crate::rpc::Params;
use crate::wire::wrapped_list;

/// Most `NetworkInterfaceId.N` one call takes (API reference: 1–100).
pub const MAX_NETWORK_INTERFACE_IDS_PER_CALL: usize = 100;

/// The public address a network interface or one of its private IPs maps to.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct AssociatedPublicIp {
    /// The address; empty when there is none.
    pub public_ip_address: String,
    /// The EIP's ID, `eip-...`; empty for an instance's own public IP.
    pub allocation_id: String,
}

/// One private IP of a network interface.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct PrivateIpSet {
    pub private_ip_address: String,
    /// Whether it is the interface's primary private IP.
    pub primary: bool,
    pub associated_public_ip: AssociatedPublicIp,
}

wrapped_list!(PrivateIpSetList, "PrivateIpSet", PrivateIpSet);

/// One network interface.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct NetworkInterfaceSet {
    /// `eni-...`.
    pub network_interface_id: String,
    /// `Primary`, `Secondary`, `Trunk` or `Member`.
    #[serde(rename = "Type")]
    pub interface_type: String,
    /// The instance it is attached to (empty when detached).
    pub instance_id: String,
    /// The primary private IPv4 address.
    pub private_ip_address: String,
    /// Every private IPv4 address, the primary one included.
    pub private_ip_sets: PrivateIpSetList,
    /// The public address of the primary private IP.
    pub associated_public_ip: AssociatedPublicIp,
}

wrapped_list!(
    NetworkInterfaceSetList,
    "NetworkInterfaceSet",
    NetworkInterfaceSet
);

#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
struct DescribeNetworkInterfacesResponse {
    network_interface_sets: NetworkInterfaceSetList,
}

impl EcsClient {
    /// `DescribeNetworkInterfaces` of the interfaces `ids` in the client's region (at most
    /// [`MAX_NETWORK_INTERFACE_IDS_PER_CALL`]); an unknown ID is left out of the answer.
    pub async fn describe_network_interfaces(
        &self,
        ids: &[String],
    ) -> Result<Vec<NetworkInterfaceSet>, Error> {
        let mut p = Params::new();
        p.list("NetworkInterfaceId", ids)
            .set("MaxResults", MAX_NETWORK_INTERFACE_IDS_PER_CALL);
        let answer: DescribeNetworkInterfacesResponse =
            self.call_typed("DescribeNetworkInterfaces", &p).await?;
        Ok(answer.network_interface_sets.items)
    }
}
