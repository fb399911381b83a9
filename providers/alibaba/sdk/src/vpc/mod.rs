//! VPC (API version `2016-04-28`): virtual private clouds, their vSwitches, and elastic IP
//! addresses, NAT gateways and their SNAT and DNAT entries.
//!
//! - `client`: [`VpcClient`], built from an [`EcsClient`](crate::ecs::EcsClient)'s credentials and
//!   transport settings, and the VPC endpoints;
//! - `types`: request and response types;
//! - `actions`: the typed actions (`CreateVpc`, `DescribeVpcs`, `DeleteVpc`, `CreateVSwitch`,
//!   `DescribeVSwitches`, `DeleteVSwitch`), paging to the last page;
//! - `eips`: EIPs and their associations (`AllocateEipAddress` … `UnassociateEipAddress`);
//! - `nat_gateways`: NAT gateways (`CreateNatGateway` … `DeleteNatGateway`);
//! - `nat_entries`: their SNAT and DNAT (forward) entries;
//! - `deletion_protection`: `DeletionProtection` of EIPs and NAT gateways.
//!
//! Security groups belong to the ECS API: see [`crate::ecs`].

mod actions;
mod client;
mod deletion_protection;
mod eips;
mod nat_entries;
mod nat_gateways;
mod types;

pub use client::{VPC_API_VERSION, VpcClient, vpc_endpoint};
pub use deletion_protection::{ALREADY_ENABLED, PROTECTED, Protected};
pub use eips::{
    AllocateEipAddressRequest, AllocateEipAddressResponse, EipAddress, EipAddressList, EipTarget,
    MAX_EIP_IDS_PER_CALL, eip_status,
};
pub use nat_entries::{
    CreateSnatEntryRequest, ForwardEntry, ForwardEntryList, ForwardMapping, SnatEntry,
    SnatEntryList, nat_entry_status,
};
pub use nat_gateways::{
    CreateNatGatewayRequest, CreateNatGatewayResponse, ForwardTableIdList, NatGateway,
    NatGatewayIp, NatGatewayIpList, NatGatewayList, NatGatewayPrivateInfo, SnatTableIdList,
    nat_gateway_dependency, nat_gateway_status,
};
pub use types::{
    CreateVSwitchRequest, CreateVSwitchResponse, CreateVpcRequest, CreateVpcResponse,
    DescribeVSwitchesResponse, DescribeVpcsResponse, Tag, TagList, VSwitch, VSwitchIdList,
    VSwitchList, Vpc, VpcList, status,
};
