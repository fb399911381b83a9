//! ModifySecurityGroupRule: an inbound rule changed in place. By `SecurityGroupRuleId`, any of
//! its protocol, ports, source, policy, priority and description change, keeping the kind of
//! its source (a CIDR block stays a CIDR block, a group a group) and without becoming a copy of
//! another rule; without an ID, the rule is the one the flat parameters (`IpProtocol`,
//! `PortRange`, `SourceCidrIp`/`SourceGroupId`, `Policy`, `NicType`, `Priority`) describe, and
//! only its description changes.

use serde_json::{Value, json};

use crate::action::{ActionContext, requested_region};
use crate::error::ErrorResponse;
use crate::network::{Direction, Rule};
use crate::received_params::ReceivedParams;
use crate::security_group_rules::parse_rules;
use crate::store::Store;

/// The fields of a rule a call may change.
const CHANGEABLE: &[&str] = &[
    "IpProtocol",
    "PortRange",
    "SourceCidrIp",
    "SourceGroupId",
    "Policy",
    "Priority",
    "Description",
    "NicType",
];

fn rule_not_found() -> ErrorResponse {
    ErrorResponse::not_found(
        "InvalidSecurityGroupRule.RuleNotExist",
        "The specified security group rule does not exist: describe the group's rules for their IDs.",
    )
}

/// `rule` as the flat parameters of an inbound rule.
fn as_params(rule: &Rule) -> Vec<(&'static str, String)> {
    vec![
        ("IpProtocol", rule.ip_protocol.clone()),
        ("PortRange", rule.port_range.clone()),
        ("SourceCidrIp", rule.peer_cidr.clone()),
        ("SourceGroupId", rule.peer_group.clone()),
        ("Policy", rule.policy.clone()),
        ("Priority", rule.priority.to_string()),
        ("Description", rule.description.clone()),
        ("NicType", rule.nic_type.clone()),
    ]
}

pub fn modify_security_group_rule(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<Value, ErrorResponse> {
    let region = requested_region(p)?;
    let group_id = p.required("SecurityGroupId")?;
    let account = ctx.caller.account_id.clone();
    let group = store.network.account(&account).group(region.id, group_id)?;
    let Some(rule_id) = p.get("SecurityGroupRuleId") else {
        let wanted = parse_rules(store, ctx, region, p, Direction::Ingress)?;
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
        .find(|r| r.id == rule_id && r.direction == Direction::Ingress)
        .cloned()
        .ok_or_else(rule_not_found)?;
    let to_group = p.get("SourceGroupId").is_some() && current.peer_group.is_empty();
    let to_cidr = p.get("SourceCidrIp").is_some() && current.peer_cidr.is_empty();
    if to_group || to_cidr {
        return Err(ErrorResponse::bad_request(
            "InvalidParameter",
            "The kind of a rule's source cannot change (a CIDR block to a security group or back): add a new rule and revoke this one.",
        ));
    }
    let mut merged: Vec<(&str, String)> = as_params(&current);
    for (name, value) in &mut merged {
        if let Some(given) = p.get(name) {
            given.clone_into(value);
        }
    }
    let merged: std::collections::BTreeMap<String, String> = merged
        .into_iter()
        .filter(|(name, value)| CHANGEABLE.contains(name) && !value.is_empty())
        .map(|(name, value)| (name.to_owned(), value))
        .collect();
    let merged = ReceivedParams::merge(&merged, &std::collections::BTreeMap::new());
    let mut changed = parse_rules(store, ctx, region, &merged, Direction::Ingress)?
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
