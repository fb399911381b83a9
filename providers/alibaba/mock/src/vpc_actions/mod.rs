//! The VPC API (product Vpc, version `2016-04-28`) on the mock's port: CreateVpc, DescribeVpcs,
//! DeleteVpc, CreateVSwitch, DescribeVSwitches and DeleteVSwitch, the EIP actions (allocate,
//! describe, modify, release, associate, unassociate), with the VPC API's rules and codes. New
//! VPCs and vSwitches are `Pending` for the transition delay, then `Available`.
//! This module is the API's action table; the handlers are in `vpcs`, `vswitches`, `attributes`
//! (DescribeVpcAttribute, DescribeVSwitchAttributes), `route_tables`, `eips`, `eip_associations`
//! and `tagging`.

mod attributes;
mod common;
mod eip_associations;
mod eips;
mod route_tables;
mod tagging;
mod vpcs;
mod vswitches;

use crate::action::{Action, requested_region};

/// The VPC API version.
pub const VERSION: &str = "2016-04-28";

/// Every VPC action the mock serves, with its handler.
pub const ACTIONS: &[Action] = &[
    Action::fields("CreateVpc", |s, c, p| {
        vpcs::create_vpc(s, c, requested_region(p)?, p)
    }),
    Action::fields("DescribeVpcs", |s, c, p| {
        vpcs::describe_vpcs(s, c, requested_region(p)?, p)
    }),
    Action::fields("DeleteVpc", |s, c, p| {
        vpcs::delete_vpc(s, c, requested_region(p)?, p)
    }),
    Action::fields("CreateVSwitch", |s, c, p| {
        vswitches::create_vswitch(s, c, requested_region(p)?, p)
    }),
    Action::fields("DescribeVSwitches", |s, c, p| {
        vswitches::describe_vswitches(s, c, requested_region(p)?, p)
    }),
    Action::fields("DescribeVpcAttribute", |s, c, p| {
        attributes::describe_vpc_attribute(s, c, requested_region(p)?, p)
    }),
    Action::fields("DescribeVSwitchAttributes", |s, c, p| {
        attributes::describe_vswitch_attributes(s, c, requested_region(p)?, p)
    }),
    Action::fields("DescribeRouteTableList", |s, c, p| {
        route_tables::describe_route_table_list(s, c, requested_region(p)?, p)
    }),
    Action::fields("DeleteVSwitch", |s, c, p| {
        vswitches::delete_vswitch(s, c, requested_region(p)?, p)
    }),
    Action::fields("TagResources", |s, c, p| {
        tagging::tag_resources(s, c, requested_region(p)?, p)
    }),
    Action::fields("UnTagResources", |s, c, p| {
        tagging::untag_resources(s, c, requested_region(p)?, p)
    }),
    Action::fields("ModifyVpcAttribute", |s, c, p| {
        vpcs::modify_vpc_attribute(s, c, requested_region(p)?, p)
    }),
    Action::fields("ModifyVSwitchAttribute", |s, c, p| {
        vswitches::modify_vswitch_attribute(s, c, requested_region(p)?, p)
    }),
    // EIPs and their associations (`eips`, `eip_associations`).
    Action::fields("AllocateEipAddress", |s, c, p| {
        eips::allocate_eip_address(s, c, requested_region(p)?, p)
    }),
    Action::fields("DescribeEipAddresses", |s, c, p| {
        eips::describe_eip_addresses(s, c, requested_region(p)?, p)
    }),
    Action::fields("ModifyEipAddressAttribute", |s, c, p| {
        eips::modify_eip_address_attribute(s, c, requested_region(p)?, p)
    }),
    Action::fields("ReleaseEipAddress", |s, c, p| {
        eips::release_eip_address(s, c, requested_region(p)?, p)
    }),
    Action::fields("AssociateEipAddress", |s, c, p| {
        eip_associations::associate_eip_address(s, c, requested_region(p)?, p)
    }),
    Action::fields("UnassociateEipAddress", |s, c, p| {
        eip_associations::unassociate_eip_address(s, c, requested_region(p)?, p)
    }),
];
