//! DescribeRouteTableList: the route tables of the account's VPCs. The mock keeps one per VPC,
//! its system route table, made with the VPC (`CreateVpc` answers its ID) and gone with it; it
//! serves every vSwitch of the VPC (the mock has no custom route tables).

use serde_json::{Value, json};

use super::common::{owner_id, paging, second_time};
use crate::action::{ActionContext, page_of};
use crate::catalog::CatalogRegion;
use crate::error::ErrorResponse;
use crate::network::{VSwitch, Vpc, network_status};
use crate::received_params::ReceivedParams;
use crate::store::Store;

pub fn describe_route_table_list(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let vpc_id = p.get("VpcId");
    let router_id = p.get("RouterId");
    let table_id = p.get("RouteTableId");
    let name = p.get("RouteTableName");
    match p.get("RouterType") {
        None | Some("VRouter" | "VBR") => {}
        Some(_) => return Err(ErrorResponse::invalid("RouterType")),
    }
    let wanted_type = p.get("RouteTableType");
    let (number, size) = paging(p)?;
    let network = store.network.account(&ctx.caller.account_id);
    let mut vpcs: Vec<&Vpc> = network
        .vpcs
        .values()
        .filter(|v| v.region_id == region.id)
        .filter(|v| vpc_id.is_none_or(|id| id == v.id))
        .filter(|v| router_id.is_none_or(|id| id == v.vrouter_id))
        .filter(|v| table_id.is_none_or(|id| id == v.route_table_id))
        // A system route table has no name.
        .filter(|_| name.is_none_or(str::is_empty))
        .filter(|_| p.get("RouterType").is_none_or(|t| t == "VRouter"))
        .filter(|_| wanted_type.is_none_or(|t| t == "System"))
        .collect();
    vpcs.sort_unstable_by_key(|v| v.seq);
    let (total, page) = page_of(&vpcs, number, size);
    let owner = owner_id(&ctx.caller.account_id);
    let tables: Vec<Value> = page
        .iter()
        .map(|vpc| {
            let mut switches: Vec<&VSwitch> = network
                .vswitches
                .values()
                .filter(|s| s.vpc_id == vpc.id)
                .collect();
            switches.sort_unstable_by_key(|s| s.seq);
            json!({
                "RouteTableId": vpc.route_table_id,
                "RouteTableName": "",
                "RouteTableType": "System",
                "AssociateType": "VSwitch",
                "RouterId": vpc.vrouter_id,
                "RouterType": "VRouter",
                "VpcId": vpc.id,
                "Status": network_status(vpc.ready_at, ctx.now),
                "Description": "",
                "CreationTime": second_time(vpc.created_at),
                "ResourceGroupId": "",
                "RoutePropagationEnable": true,
                "OwnerId": owner,
                "VSwitchIds": {"VSwitchId": switches.iter().map(|s| s.id.as_str()).collect::<Vec<_>>()},
                "GatewayIds": {"GatewayIds": []},
                "Tags": {"Tag": []},
            })
        })
        .collect();
    Ok(json!({
        "TotalCount": total,
        "PageNumber": number,
        "PageSize": size,
        "RouterTableList": {"RouterTableListType": tables},
    }))
}
