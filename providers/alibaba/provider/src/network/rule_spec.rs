//! A `SecurityGroupRule`'s spec as the rule ECS is asked for, and what the group's rules say of
//! it: which one is this object's (by its ID, or by the `ferroplane:<uid>` description marker it
//! is authorized with), which identical rule belongs to someone else, and what to change in
//! place. Pure.

use alibaba_sdk::ecs::{Direction, PeerRule, Permission, RuleChange, RulePeer};
use ferroplane_apis::alibabacloud::{
    RULE_MARKER_PREFIX, RuleDirection, SecurityGroupRule, SecurityGroupRuleParameters,
};
use ferroplane_runtime::ReconcileError;
use ferroplane_runtime::references::REFERENCE_NOT_RESOLVED;

/// The description a rule is authorized with, which finds it again before its ID is stored.
pub fn marker(uid: &str) -> String {
    format!("{RULE_MARKER_PREFIX}{uid}")
}

/// The UID a marker description names, if it is one.
pub fn marked_uid(description: &str) -> Option<&str> {
    description
        .strip_prefix(RULE_MARKER_PREFIX)
        .filter(|uid| !uid.is_empty())
}

pub fn direction(p: &SecurityGroupRuleParameters) -> Direction {
    match p.direction {
        RuleDirection::Ingress => Direction::Ingress,
        RuleDirection::Egress => Direction::Egress,
    }
}

/// The peer the spec names for its direction; `None` while a peer group reference is
/// unresolved.
fn peer(p: &SecurityGroupRuleParameters) -> Option<RulePeer> {
    let (v4, v6, group, list) = match p.direction {
        RuleDirection::Ingress => (
            &p.source_cidr_ip,
            &p.ipv6_source_cidr_ip,
            &p.source_group_id,
            &p.source_prefix_list_id,
        ),
        RuleDirection::Egress => (
            &p.dest_cidr_ip,
            &p.ipv6_dest_cidr_ip,
            &p.dest_group_id,
            &p.dest_prefix_list_id,
        ),
    };
    v4.clone()
        .map(RulePeer::Cidr)
        .or_else(|| v6.clone().map(RulePeer::Ipv6Cidr))
        .or_else(|| group.clone().map(RulePeer::Group))
        .or_else(|| list.clone().map(RulePeer::PrefixList))
}

/// The group and the rule the spec asks for, described as `description` (the user's, or the
/// marker). An unresolved reference is a dependency error: nothing is called.
pub fn wanted(mr: &SecurityGroupRule, uid: &str) -> Result<(String, PeerRule), ReconcileError> {
    let p = &mr.spec.for_provider;
    let (Some(group), Some(peer)) = (p.security_group_id.clone(), peer(p)) else {
        return Err(ReconcileError::dependency(
            REFERENCE_NOT_RESOLVED,
            "the group or the peer group is not known yet: set securityGroupId (or its Ref / Selector) and the peer (sourceGroupId / destGroupId or its Ref / Selector)",
        ));
    };
    let rule = PeerRule {
        direction: direction(p),
        ip_protocol: p.ip_protocol.as_str().to_owned(),
        port_range: p.port_range.clone(),
        peer,
        policy: p.policy.unwrap_or_default().as_str().to_owned(),
        priority: p.priority.unwrap_or(1),
        description: p.description.clone().unwrap_or_else(|| marker(uid)),
    };
    Ok((group, rule))
}

/// Which rule of the group is this object's.
#[derive(Debug, PartialEq)]
pub enum Found<'a> {
    /// By its recorded ID.
    ById(&'a Permission),
    /// By the marker: authorized for this object, its ID not recorded yet (or authorized again
    /// after a revoke elsewhere).
    ByMarker(&'a Permission),
    /// Not in the group.
    None,
}

/// This object's rule among `rules`: the one of `id`, else the one carrying `uid`'s marker.
pub fn find<'a>(rules: &'a [Permission], id: Option<&str>, uid: &str) -> Found<'a> {
    if let Some(rule) = id.and_then(|id| rules.iter().find(|r| r.security_group_rule_id == id)) {
        return Found::ById(rule);
    }
    let marker = marker(uid);
    match rules.iter().find(|r| r.description == marker) {
        Some(rule) => Found::ByMarker(rule),
        None => Found::None,
    }
}

/// A rule identical to `want` (all but the description) that is not this object's: the
/// group's owner or another object authorized it, and this object must never take it.
pub fn taken<'a>(rules: &'a [Permission], want: &PeerRule, uid: &str) -> Option<&'a Permission> {
    let marker = marker(uid);
    rules
        .iter()
        .find(|r| want.same_as(r) && r.description != marker)
}

/// The in-place settings of `have` that differ from `want`; `None` when none do.
pub fn change<'a>(want: &'a PeerRule, have: &Permission) -> Option<RuleChange<'a>> {
    let change = RuleChange {
        policy: (!have.policy.eq_ignore_ascii_case(&want.policy)).then_some(want.policy.as_str()),
        priority: (have.priority != want.priority).then_some(want.priority),
        description: (have.description != want.description).then_some(want.description.as_str()),
    };
    (change != RuleChange::default()).then_some(change)
}

/// `policy: Drop → accept; description: "x" → "y"`, for events and conditions.
pub fn describe(change: &RuleChange<'_>, have: &Permission) -> String {
    let mut lines = Vec::new();
    if let Some(policy) = change.policy {
        lines.push(format!("policy: {} → {policy}", have.policy));
    }
    if let Some(priority) = change.priority {
        lines.push(format!("priority: {} → {priority}", have.priority));
    }
    if let Some(description) = change.description {
        lines.push(format!(
            "description: {:?} → {description:?}",
            have.description
        ));
    }
    lines.join("; ")
}

/// `ingress tcp 22/22 from 10.0.0.0/8, accept, priority 1`.
pub fn show(rule: &PeerRule) -> String {
    let (way, word) = match rule.direction {
        Direction::Ingress => ("ingress", "from"),
        Direction::Egress => ("egress", "to"),
    };
    format!(
        "{way} {} {} {word} {}, {}, priority {}",
        rule.ip_protocol, rule.port_range, rule.peer, rule.policy, rule.priority
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(description: Option<&str>) -> SecurityGroupRule {
        let mut for_provider = serde_json::json!({
            "regionId": "cn-beijing", "securityGroupId": "sg-1", "direction": "ingress",
            "ipProtocol": "tcp", "portRange": "22/22", "sourceGroupId": "sg-2", "policy": "drop",
        });
        if let Some(d) = description {
            for_provider["description"] = d.into();
        }
        serde_json::from_value(serde_json::json!({
            "apiVersion": "alibabacloud.ferroplane.io/v1alpha1",
            "kind": "SecurityGroupRule",
            "metadata": {"name": "ssh"},
            "spec": {"forProvider": for_provider},
        }))
        .expect("a valid object")
    }

    fn reported(id: &str, description: &str) -> Permission {
        Permission {
            security_group_rule_id: id.into(),
            direction: "ingress".into(),
            ip_protocol: "TCP".into(),
            port_range: "22/22".into(),
            source_group_id: "sg-2".into(),
            policy: "Drop".into(),
            priority: 1,
            description: description.into(),
            ..Permission::default()
        }
    }

    #[test]
    fn the_spec_is_the_rule_with_the_marker_until_it_has_a_description() {
        let (group, rule) = wanted(&object(None), "u1").unwrap();
        assert_eq!(group, "sg-1");
        assert_eq!(rule.peer, RulePeer::Group("sg-2".into()));
        assert_eq!(rule.policy, "drop");
        assert_eq!(rule.priority, 1);
        assert_eq!(rule.description, "ferroplane:u1");
        assert_eq!(marked_uid(&rule.description), Some("u1"));
        let (_, described) = wanted(&object(Some("ssh from bastions")), "u1").unwrap();
        assert_eq!(described.description, "ssh from bastions");
        let mut unresolved = object(None);
        unresolved.spec.for_provider.source_group_id = None;
        assert_eq!(
            wanted(&unresolved, "u1").unwrap_err().reason(),
            REFERENCE_NOT_RESOLVED
        );
        let mut by_list = unresolved;
        by_list.spec.for_provider.source_prefix_list_id = Some("pl-1".into());
        let (_, rule) = wanted(&by_list, "u1").unwrap();
        assert_eq!(rule.peer, RulePeer::PrefixList("pl-1".into()));
        assert_eq!(show(&rule), "ingress tcp 22/22 from pl-1, drop, priority 1");
    }

    #[test]
    fn our_rule_is_found_by_id_then_by_marker_and_another_identical_one_is_taken() {
        let rules = vec![
            reported("sgr-a", "theirs"),
            reported("sgr-b", "ferroplane:u1"),
        ];
        assert_eq!(find(&rules, Some("sgr-b"), "u1"), Found::ById(&rules[1]));
        assert_eq!(find(&rules, None, "u1"), Found::ByMarker(&rules[1]));
        assert_eq!(
            find(&rules, Some("sgr-gone"), "u1"),
            Found::ByMarker(&rules[1])
        );
        assert_eq!(find(&rules, None, "u2"), Found::None);
        let (_, want) = wanted(&object(None), "u1").unwrap();
        assert_eq!(taken(&rules, &want, "u1"), Some(&rules[0]));
        assert_eq!(taken(&rules[1..], &want, "u1"), None);
        // Another object's marker is someone else's rule too.
        assert_eq!(taken(&rules[1..], &want, "u2"), Some(&rules[1]));
    }

    #[test]
    fn only_differing_settings_change_in_place() {
        let (_, want) = wanted(&object(Some("ssh")), "u1").unwrap();
        assert_eq!(change(&want, &reported("sgr-a", "ssh")), None);
        let drifted = Permission {
            policy: "Accept".into(),
            priority: 7,
            ..reported("sgr-a", "ferroplane:u1")
        };
        let c = change(&want, &drifted).unwrap();
        assert_eq!(
            c,
            RuleChange {
                policy: Some("drop"),
                priority: Some(1),
                description: Some("ssh"),
            }
        );
        assert_eq!(
            describe(&c, &drifted),
            "policy: Accept → drop; priority: 7 → 1; description: \"ferroplane:u1\" → \"ssh\""
        );
        assert_eq!(show(&want), "ingress tcp 22/22 from sg-2, drop, priority 1");
    }
}
