//! One security group rule as DescribeSecurityGroupAttribute's `Permissions.Permission` lists
//! it.

use serde_json::{Value, json};

use crate::network::{Direction, Rule};

/// One rule as DescribeSecurityGroupAttribute lists it; `group_name` names a peer group and
/// `list_name` a peer prefix list.
pub fn rule_view(
    r: &Rule,
    group_name: &dyn Fn(&str) -> String,
    list_name: &dyn Fn(&str) -> String,
) -> Value {
    let (v4, v6) = if r.peer_cidr.contains(':') {
        ("", r.peer_cidr.as_str())
    } else {
        (r.peer_cidr.as_str(), "")
    };
    let (source_cidr, dest_cidr, source_group, dest_group) = match r.direction {
        Direction::Ingress => (v4, "", r.peer_group.as_str(), ""),
        Direction::Egress => ("", v4, "", r.peer_group.as_str()),
    };
    let (v6_source, v6_dest) = match r.direction {
        Direction::Ingress => (v6, ""),
        Direction::Egress => ("", v6),
    };
    let (source_list, dest_list) = match r.direction {
        Direction::Ingress => (r.peer_prefix_list.as_str(), ""),
        Direction::Egress => ("", r.peer_prefix_list.as_str()),
    };
    let named = |id: &str| {
        if id.is_empty() {
            String::new()
        } else {
            list_name(id)
        }
    };
    let policy = if r.policy == "drop" { "Drop" } else { "Accept" };
    json!({
        "SecurityGroupRuleId": r.id,
        "Direction": r.direction.as_str(),
        "IpProtocol": r.ip_protocol.to_ascii_uppercase(),
        "PortRange": r.port_range,
        "SourceCidrIp": source_cidr,
        "DestCidrIp": dest_cidr,
        "SourceGroupId": source_group,
        "DestGroupId": dest_group,
        "Policy": policy,
        "Priority": r.priority.to_string(),
        "Description": r.description,
        "NicType": r.nic_type,
        "CreateTime": r.created_at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        "Ipv6SourceCidrIp": v6_source,
        "Ipv6DestCidrIp": v6_dest,
        "SourcePortRange": "",
        "DestPortRange": "",
        "SourceGroupName": if source_group.is_empty() { String::new() } else { group_name(source_group) },
        "DestGroupName": if dest_group.is_empty() { String::new() } else { group_name(dest_group) },
        "SourcePrefixListId": source_list,
        "SourcePrefixListName": named(source_list),
        "DestPrefixListId": dest_list,
        "DestPrefixListName": named(dest_list),
        // The mock's rules name peer groups of the caller's own account only and take no
        // `*GroupOwnerAccount` or port range list: neutral empty strings.
        "SourceGroupOwnerAccount": "",
        "DestGroupOwnerAccount": "",
        "PortRangeListId": "",
        "PortRangeListName": "",
    })
}
