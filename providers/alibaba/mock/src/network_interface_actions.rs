//! DescribeNetworkInterfaces: the network interfaces of the account's instances. The mock gives
//! each instance one, its primary interface (`eni-` and the instance ID's suffix), with the
//! instance's private IP, public IP, IPv6 addresses, vSwitch and security groups; it has no
//! secondary interfaces, so a filter on `Type=Secondary` finds none. `AssociatedPublicIp` (of the
//! interface and of its one private IP) is the instance's own public IP, else the EIP associated
//! with the interface's private IP (`InstanceType=NetworkInterface`), else the EIP associated with
//! the instance, which sits on its primary interface (the EIP reference on ENI association).

use jiff::Timestamp;
use serde_json::{Value, json};

use crate::action::{ActionContext, page_of, requested_region};
use crate::error::ErrorResponse;
use crate::instance::StoredInstance;
use crate::instance_view::{eni_id, mac_address};
use crate::received_params::ReceivedParams;
use crate::store::Store;

/// The filters of a call.
struct Filters<'p> {
    instance_id: Option<&'p str>,
    ids: Vec<String>,
    vswitch_id: Option<&'p str>,
    vpc_id: Option<&'p str>,
    security_group_id: Option<&'p str>,
    primary_ip: Option<&'p str>,
    kind: Option<&'p str>,
    status: Option<&'p str>,
}

impl Filters<'_> {
    fn keep(&self, i: &StoredInstance) -> bool {
        let eni = eni_id(&i.id);
        self.instance_id.is_none_or(|id| id == i.id)
            && (self.ids.is_empty() || self.ids.contains(&eni))
            && self.vswitch_id.is_none_or(|v| v == i.vswitch_id)
            && self.vpc_id.is_none_or(|v| v == i.vpc_id)
            && self
                .security_group_id
                .is_none_or(|g| i.security_group_ids.iter().any(|own| own == g))
            && self
                .primary_ip
                .is_none_or(|ip| ip == i.private_ip.to_string())
            && self.kind.is_none_or(|k| k == "Primary")
            && self.status.is_none_or(|s| s == "InUse")
    }
}

pub fn describe_network_interfaces(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let region = requested_region(p)?;
    let filters = Filters {
        instance_id: p.get("InstanceId"),
        ids: p.list("NetworkInterfaceId", 100)?,
        vswitch_id: p.get("VSwitchId"),
        vpc_id: p.get("VpcId"),
        security_group_id: p.get("SecurityGroupId"),
        primary_ip: p.get("PrimaryIpAddress"),
        kind: match p.get("Type") {
            None => None,
            Some(k @ ("Primary" | "Secondary" | "Trunk" | "Member")) => Some(k),
            Some(_) => return Err(ErrorResponse::invalid("Type")),
        },
        status: p.get("Status"),
    };
    let chosen: Vec<&StoredInstance> = store
        .in_region(&ctx.caller.account_id, region.id)
        .filter(|i| filters.keep(i))
        .collect();
    // Two paging styles: MaxResults/NextToken (the token is the next offset), or
    // PageNumber/PageSize (1–1000, default 10).
    let (total, number, size, page, next) =
        if let Some(max) = p.number_in::<usize>("MaxResults", 10, 500)? {
            let start = match p.get("NextToken") {
                None => 0,
                Some(t) => t
                    .parse::<usize>()
                    .map_err(|_| ErrorResponse::invalid("NextToken"))?,
            };
            let end = start.saturating_add(max).min(chosen.len());
            let page = chosen.get(start.min(end)..end).unwrap_or_default().to_vec();
            let next = if end < chosen.len() {
                end.to_string()
            } else {
                String::new()
            };
            (chosen.len(), 1, max, page, next)
        } else {
            let number = p
                .number_in::<usize>("PageNumber", 1, usize::MAX / 2048)?
                .unwrap_or(1);
            let size = p.number_in::<usize>("PageSize", 1, 1000)?.unwrap_or(10);
            let (total, page) = page_of(&chosen, number, size);
            (total, number, size, page, String::new())
        };
    let owner = ctx.caller.account_id.to_string();
    let sets: Vec<Value> = page
        .iter()
        .map(|i| interface_view(i, &owner, &associated_public_ip(store, i, ctx.now)))
        .collect();
    Ok(json!({
        "TotalCount": total,
        "PageNumber": number,
        "PageSize": size,
        "NextToken": next,
        "NetworkInterfaceSets": {"NetworkInterfaceSet": sets},
    }))
}

/// ECS's time format for interfaces (`2019-12-25T12:31:31Z`).
fn second_time(ts: Timestamp) -> String {
    ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// `AssociatedPublicIp` of the primary interface of `i`: the address and the EIP's ID (empty
/// for the instance's own public IP).
fn associated_public_ip(store: &Store, i: &StoredInstance, now: Timestamp) -> Value {
    let eni = eni_id(&i.id);
    let (address, allocation_id) = match i.public_ip.filter(|_| i.bandwidth_out > 0) {
        Some(own) => (own.to_string(), String::new()),
        None => store
            .eips
            .bound_to_private_ip(&eni, i.private_ip, now)
            .or_else(|| store.eips.bound_to(&i.id, now))
            .map(|e| (e.ip.to_string(), e.id.clone()))
            .unwrap_or_default(),
    };
    json!({"PublicIpAddress": address, "AllocationId": allocation_id})
}

/// The primary interface of `i`, with its `AssociatedPublicIp`.
fn interface_view(i: &StoredInstance, owner: &str, public: &Value) -> Value {
    json!({
        "NetworkInterfaceId": eni_id(&i.id),
        "NetworkInterfaceName": "",
        "Description": "",
        "Type": "Primary",
        "Status": "InUse",
        "InstanceId": i.id,
        "VpcId": i.vpc_id,
        "VSwitchId": i.vswitch_id,
        "ZoneId": i.zone_id,
        "MacAddress": mac_address(i.seq),
        "PrivateIpAddress": i.private_ip.to_string(),
        "PrivateIpSets": {"PrivateIpSet": [{
            "PrivateIpAddress": i.private_ip.to_string(),
            "Primary": true,
            "PrivateDnsName": "",
            "AssociatedPublicIp": public.clone(),
        }]},
        "AssociatedPublicIp": public,
        "Ipv6Sets": {"Ipv6Set": i
            .ipv6_addresses
            .iter()
            .map(|ip| json!({"Ipv6Address": ip.to_string()}))
            .collect::<Vec<_>>()},
        "Ipv4PrefixSets": {"Ipv4PrefixSet": []},
        "Ipv6PrefixSets": {"Ipv6PrefixSet": []},
        "SecurityGroupIds": {"SecurityGroupId": i.security_group_ids},
        "Attachment": {
            "InstanceId": i.id,
            "DeviceIndex": 0,
            "NetworkCardIndex": 0,
            "TrunkNetworkInterfaceId": "",
        },
        "CreationTime": second_time(i.created_at),
        "DeleteOnRelease": true,
        "NetworkInterfaceTrafficMode": "Standard",
        "QueueNumber": i.instance_type.cpu.min(8),
        "ResourceGroupId": i.resource_group_id,
        "ServiceManaged": false,
        // Not a managed interface, so no service provider; queue pairs are for RDMA
        // (`NetworkInterfaceTrafficMode=HighPerformance`) interfaces only.
        "ServiceID": 0,
        "QueuePairNumber": 0,
        "SourceDestCheck": false,
        "OwnerId": owner,
        "Tags": {"Tag": []},
    })
}
