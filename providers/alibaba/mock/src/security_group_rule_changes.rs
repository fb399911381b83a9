//! ModifySecurityGroupRule and ModifySecurityGroupEgressRule: an inbound or outbound rule changed
//! in place. By `SecurityGroupRuleId`, any of its protocol, ports, peer, policy, priority and
//! description change, keeping the kind of its peer (an IPv4 block stays IPv4, an IPv6 block
//! IPv6, a group a group), an empty parameter being no change (a value is never emptied), and without becoming a copy
//! of another rule; without an ID, the rule is the one the flat parameters (`IpProtocol`,
//! `PortRange`, the peer, `Policy`, `NicType`, `Priority`) describe, and only its description
//! changes.

use serde_json::{Value, json};

use crate::action::{ActionContext, requested_region};
use crate::error::ErrorResponse;
use crate::network::{Direction, Rule};
use crate::received_params::ReceivedParams;
use crate::security_group_rules::parse_rules;
use crate::store::Store;

/// The parameter names of a direction's peer: IPv4 block, IPv6 block, group, prefix list.
fn peer_fields(direction: Direction) -> [&'static str; 4] {
    match direction {
        Direction::Ingress => [
            "SourceCidrIp",
            "Ipv6SourceCidrIp",
            "SourceGroupId",
            "SourcePrefixListId",
        ],
        Direction::Egress => [
            "DestCidrIp",
            "Ipv6DestCidrIp",
            "DestGroupId",
            "DestPrefixListId",
        ],
    }
}

fn rule_not_found() -> ErrorResponse {
    ErrorResponse::not_found(
        "InvalidSecurityGroupRule.RuleNotExist",
        "The specified security group rule does not exist: describe the group's rules for their IDs.",
    )
}

/// `rule` as the flat parameters of a rule of its direction.
fn as_params(rule: &Rule) -> Vec<(&'static str, String)> {
    let [v4, v6, group, list] = peer_fields(rule.direction);
    let (v4_value, v6_value) = if rule.peer_cidr.contains(':') {
        (String::new(), rule.peer_cidr.clone())
    } else {
        (rule.peer_cidr.clone(), String::new())
    };
    vec![
        ("IpProtocol", rule.ip_protocol.clone()),
        ("PortRange", rule.port_range.clone()),
        (v4, v4_value),
        (v6, v6_value),
        (group, rule.peer_group.clone()),
        (list, rule.peer_prefix_list.clone()),
        ("Policy", rule.policy.clone()),
        ("Priority", rule.priority.to_string()),
        ("Description", rule.description.clone()),
        ("NicType", rule.nic_type.clone()),
    ]
}

/// ModifySecurityGroupRule (inbound rules).
pub fn modify_security_group_rule(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    modify_rule(store, ctx, p, Direction::Ingress)
}

/// ModifySecurityGroupEgressRule (outbound rules).
pub fn modify_security_group_egress_rule(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    modify_rule(store, ctx, p, Direction::Egress)
}

fn modify_rule(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
    direction: Direction,
) -> Result<Value, ErrorResponse> {
    let region = requested_region(p)?;
    let group_id = p.required("SecurityGroupId")?;
    let account = ctx.caller.account_id.clone();
    let group = store.network.account(&account).group(region.id, group_id)?;
    let Some(rule_id) = p.get("SecurityGroupRuleId") else {
        let wanted = parse_rules(store, ctx, region, p, direction)?;
        let group = store
            .network
            .account(&account)
            .group_mut(region.id, group_id)?;
        let rule = group
            .rules
            .iter_mut()
            .find(|r| wanted.iter().any(|w| w.same_as(r)))
            .ok_or_else(rule_not_found)?;
        if let Some(description) = wanted.first().map(|w| &w.description)
            && p.get("Description").is_some()
        {
            description.clone_into(&mut rule.description);
        }
        return Ok(json!({}));
    };
    let current = group
        .rules
        .iter()
        .find(|r| r.id == rule_id && r.direction == direction)
        .cloned()
        .ok_or_else(rule_not_found)?;
    let current_params = as_params(&current);
    let held = |field: &str| {
        current_params
            .iter()
            .any(|(name, value)| *name == field && !value.is_empty())
    };
    let peer_changes_kind = peer_fields(direction)
        .iter()
        .any(|field| p.get(field).is_some_and(|v| !v.is_empty()) && !held(field));
    if peer_changes_kind {
        return Err(ErrorResponse::bad_request(
            "InvalidParameter",
            "The kind of a rule's authorization object cannot change (IPv4 block, IPv6 block, security group or prefix list): add a new rule and revoke this one.",
        ));
    }
    let mut merged: Vec<(&str, String)> = current_params;
    for (name, value) in &mut merged {
        if let Some(given) = p.get(name) {
            given.clone_into(value);
        }
    }
    let merged: std::collections::BTreeMap<String, String> = merged
        .into_iter()
        .filter(|(_, value)| !value.is_empty())
        .map(|(name, value)| (name.to_owned(), value))
        .collect();
    let merged = ReceivedParams::merge(&merged, &std::collections::BTreeMap::new());
    let mut changed = parse_rules(store, ctx, region, &merged, direction)?
        .pop()
        .ok_or_else(rule_not_found)?;
    changed.id = current.id.clone();
    changed.created_at = current.created_at;
    let group = store
        .network
        .account(&account)
        .group_mut(region.id, group_id)?;
    if group
        .rules
        .iter()
        .any(|r| r.id != changed.id && r.same_as(&changed))
    {
        return Err(ErrorResponse::bad_request(
            "InvalidParameter",
            "The changed rule would be the same as another rule of the group: revoke one of them instead.",
        ));
    }
    if let Some(rule) = group.rules.iter_mut().find(|r| r.id == changed.id) {
        *rule = changed;
    }
    Ok(json!({}))
}
