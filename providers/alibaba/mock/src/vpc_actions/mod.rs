//! The VPC API (product Vpc, version `2016-04-28`) on the mock's port: CreateVpc, DescribeVpcs,
//! DeleteVpc, CreateVSwitch, DescribeVSwitches and DeleteVSwitch, the EIP actions (allocate,
//! describe, modify, release, associate, unassociate), and NAT gateways with their SNAT and
//! DNAT entries, and the deletion protection of EIPs and NAT gateways, with the VPC API's rules
//! and codes. New VPCs and vSwitches are `Pending` for
//! the transition delay, then `Available`.
//! This module is the API's action table; the handlers are in `vpcs`, `vswitches`, `attributes`
//! (DescribeVpcAttribute, DescribeVSwitchAttributes), `route_tables`, `eips`, `eip_associations`
//! (with `eni_binding`, a network interface's checks), `nat_gateways`, `snat_entries`,
//! `forward_entries` (with `nat_rules`, what the entries share), `deletion_protection` and
//! `tagging`.

mod attributes;
mod common;
mod deletion_protection;
mod eip_associations;
mod eips;
mod eni_binding;
mod forward_entries;
mod nat_gateways;
mod nat_rules;
mod route_tables;
mod snat_entries;
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
    // NAT gateways and their SNAT and DNAT entries.
    Action::fields("CreateNatGateway", |s, c, p| {
        nat_gateways::create_nat_gateway(s, c, requested_region(p)?, p)
    }),
    Action::fields("DescribeNatGateways", |s, c, p| {
        nat_gateways::describe_nat_gateways(s, c, requested_region(p)?, p)
    }),
    Action::fields("ModifyNatGatewayAttribute", |s, c, p| {
        nat_gateways::modify_nat_gateway_attribute(s, c, requested_region(p)?, p)
    }),
    Action::fields("DeleteNatGateway", |s, c, p| {
        nat_gateways::delete_nat_gateway(s, c, requested_region(p)?, p)
    }),
    Action::fields("CreateSnatEntry", |s, c, p| {
        snat_entries::create_snat_entry(s, c, requested_region(p)?, p)
    }),
    Action::fields("DescribeSnatTableEntries", |s, c, p| {
        snat_entries::describe_snat_table_entries(s, c, requested_region(p)?, p)
    }),
    Action::fields("ModifySnatEntry", |s, c, p| {
        snat_entries::modify_snat_entry(s, c, requested_region(p)?, p)
    }),
    Action::fields("DeleteSnatEntry", |s, c, p| {
        snat_entries::delete_snat_entry(s, c, requested_region(p)?, p)
    }),
    Action::fields("CreateForwardEntry", |s, c, p| {
        forward_entries::create_forward_entry(s, c, requested_region(p)?, p)
    }),
    Action::fields("DescribeForwardTableEntries", |s, c, p| {
        forward_entries::describe_forward_table_entries(s, c, requested_region(p)?, p)
    }),
    Action::fields("ModifyForwardEntry", |s, c, p| {
        forward_entries::modify_forward_entry(s, c, requested_region(p)?, p)
    }),
    Action::fields("DeleteForwardEntry", |s, c, p| {
        forward_entries::delete_forward_entry(s, c, requested_region(p)?, p)
    }),
    Action::fields("DeletionProtection", |s, c, p| {
        deletion_protection::deletion_protection(s, c, requested_region(p)?, p)
    }),
];
