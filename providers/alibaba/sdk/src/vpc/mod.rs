//! VPC (API version `2016-04-28`): virtual private clouds and their vSwitches.
//!
//! - `client`: [`VpcClient`], built from an [`EcsClient`](crate::ecs::EcsClient)'s credentials and
//!   transport settings, and the VPC endpoints;
//! - `types`: request and response types;
//! - `actions`: the typed actions (`CreateVpc`, `DescribeVpcs`, `DeleteVpc`, `CreateVSwitch`,
//!   `DescribeVSwitches`, `DeleteVSwitch`), paging to the last page.
//!
//! Security groups belong to the ECS API: see [`crate::ecs`].

mod actions;
mod client;
mod types;

pub use client::{VPC_API_VERSION, VpcClient, vpc_endpoint};
pub use types::{
    CreateVSwitchRequest, CreateVSwitchResponse, CreateVpcRequest, CreateVpcResponse,
    DescribeVSwitchesResponse, DescribeVpcsResponse, Tag, TagList, VSwitch, VSwitchIdList,
    VSwitchList, Vpc, VpcList, status,
};
