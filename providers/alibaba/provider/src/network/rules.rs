//! Security group rules: the spec's lists as API rules, and what to authorize and revoke so the
//! group holds them as its `rulesPolicy` says (exactly them, or at least them). A rule the group
//! holds is compared by its whole identity, its peer of any kind included (an IPv4 or IPv6
//! block, a group, a prefix list), and revoked by its `SecurityGroupRuleId`: a rule whose peer
//! is not an IPv4 block is never mistaken for a listed one, nor revoked by parameters that name
//! no peer. The spec's own lists take IPv4 blocks only; a prefix-list rule of a shared group is
//! a `SecurityGroupRule`. Pure.

use std::collections::BTreeSet;

use alibaba_sdk::ecs::{Direction, Permission, Rule, RulePeer};
use ferroplane_apis::alibabacloud::{
    EgressRule, IngressRule, RulesPolicy, SecurityGroupParameters,
};

fn rule(
    protocol: &str,
    port_range: &str,
    cidr: &str,
    policy: &str,
    priority: i32,
    description: Option<&str>,
) -> Rule {
    Rule {
        ip_protocol: protocol.to_owned(),
        port_range: port_range.to_owned(),
        cidr_ip: cidr.to_owned(),
        policy: policy.to_owned(),
        priority: u32::try_from(priority).unwrap_or(1),
        description: description.unwrap_or_default().to_owned(),
    }
}

fn ingress(r: &IngressRule) -> Rule {
    rule(
        r.ip_protocol.as_str(),
        &r.port_range,
        &r.source_cidr_ip,
        r.policy.as_str(),
        r.priority,
        r.description.as_deref(),
    )
}

fn egress(r: &EgressRule) -> Rule {
    rule(
        r.ip_protocol.as_str(),
        &r.port_range,
        &r.dest_cidr_ip,
        r.policy.as_str(),
        r.priority,
        r.description.as_deref(),
    )
}

/// The rules the spec asks for in one direction.
pub fn desired(p: &SecurityGroupParameters, direction: Direction) -> BTreeSet<Rule> {
    match direction {
        Direction::Ingress => p.ingress.iter().map(ingress).collect(),
        Direction::Egress => p.egress.iter().map(egress).collect(),
    }
}

/// A rule the group holds, as `DescribeSecurityGroupAttribute` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldRule {
    /// `sgr-…`: what a revoke names.
    pub id: String,
    /// Lower case.
    pub ip_protocol: String,
    pub port_range: String,
    /// `None` only for a rule that reports none of the four peers ECS has had (an IPv4 or IPv6
    /// block, a group, a prefix list).
    pub peer: Option<RulePeer>,
    /// Lower case.
    pub policy: String,
    pub priority: u32,
    pub description: String,
}

impl HeldRule {
    pub fn new(p: &Permission, direction: Direction) -> Self {
        Self {
            id: p.security_group_rule_id.clone(),
            ip_protocol: p.ip_protocol.to_ascii_lowercase(),
            port_range: p.port_range.clone(),
            peer: p.peer(direction),
            policy: p.policy.to_ascii_lowercase(),
            priority: p.priority,
            description: p.description.clone(),
        }
    }

    /// Whether this is `wanted` to ECS (protocol, ports, an IPv4 peer, policy, priority),
    /// whatever the description: an identical rule authorized again adds nothing.
    fn same_rule(&self, wanted: &Rule) -> bool {
        self.ip_protocol == wanted.ip_protocol
            && self.port_range == wanted.port_range
            && self.peer.as_ref() == Some(&RulePeer::Cidr(wanted.cidr_ip.clone()))
            && self.policy == wanted.policy
            && self.priority == wanted.priority
    }

    /// The same rule with the same description.
    fn is(&self, wanted: &Rule) -> bool {
        self.same_rule(wanted) && self.description == wanted.description
    }
}

/// What makes one direction's rules match the spec.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct RulePlan {
    /// Missing from the group.
    pub authorize: Vec<Rule>,
    /// In the group, not in the spec (added in the console, or removed from the spec).
    pub revoke: Vec<HeldRule>,
}

impl RulePlan {
    pub fn new(desired: &BTreeSet<Rule>, held: &[HeldRule], policy: RulesPolicy) -> Self {
        match policy {
            // A listed rule held under another description is revoked and authorized again
            // with the listed one.
            RulesPolicy::Exclusive => Self {
                authorize: desired
                    .iter()
                    .filter(|d| !held.iter().any(|h| h.is(d)))
                    .cloned()
                    .collect(),
                revoke: held
                    .iter()
                    .filter(|h| !desired.iter().any(|d| h.is(d)))
                    .cloned()
                    .collect(),
            },
            // Authorizing a rule that exists with another description would change nothing
            // (and plan it again at every poll): it counts as there.
            RulesPolicy::Additive => Self {
                authorize: desired
                    .iter()
                    .filter(|d| !held.iter().any(|h| h.same_rule(d)))
                    .cloned()
                    .collect(),
                revoke: Vec::new(),
            },
        }
    }

    pub fn is_empty(&self) -> bool {
        self.authorize.is_empty() && self.revoke.is_empty()
    }

    /// The IDs of the rules to revoke.
    pub fn revoke_ids(&self) -> Vec<String> {
        self.revoke.iter().map(|h| h.id.clone()).collect()
    }

    /// `ingress: authorize accept tcp 22/22 0.0.0.0/0 priority 1; revoke accept all -1/-1
    /// sg-… priority 1 (sgr-…)`.
    pub fn describe(&self, direction: Direction) -> String {
        let authorize = self
            .authorize
            .iter()
            .map(|r| {
                format!(
                    "{} {} {} {} priority {}",
                    r.policy, r.ip_protocol, r.port_range, r.cidr_ip, r.priority
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        let revoke = self
            .revoke
            .iter()
            .map(|h| {
                let peer = h
                    .peer
                    .as_ref()
                    .map_or_else(|| "no known peer".to_owned(), RulePeer::to_string);
                format!(
                    "{} {} {} {peer} priority {} ({})",
                    h.policy, h.ip_protocol, h.port_range, h.priority, h.id
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        let mut parts = Vec::new();
        if !self.authorize.is_empty() {
            parts.push(format!("authorize {authorize}"));
        }
        if !self.revoke.is_empty() {
            parts.push(format!("revoke {revoke}"));
        }
        format!("{}: {}", direction.as_str(), parts.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroplane_apis::alibabacloud::{IpProtocol, RulePolicy};

    fn ssh() -> IngressRule {
        IngressRule {
            ip_protocol: IpProtocol::Tcp,
            port_range: "22/22".into(),
            source_cidr_ip: "203.0.113.0/24".into(),
            policy: RulePolicy::Accept,
            priority: 1,
            description: None,
        }
    }

    /// A rule as ECS lists it: protocol and policy capitalized.
    fn held(id: &str, protocol: &str, ports: &str, peer: RulePeer, description: &str) -> HeldRule {
        let mut p = Permission {
            security_group_rule_id: id.into(),
            direction: "ingress".into(),
            ip_protocol: protocol.to_ascii_uppercase(),
            port_range: ports.into(),
            policy: "Accept".into(),
            priority: 1,
            description: description.into(),
            ..Permission::default()
        };
        match peer {
            RulePeer::Cidr(c) => p.source_cidr_ip = c,
            RulePeer::Ipv6Cidr(c) => p.ipv6_source_cidr_ip = c,
            RulePeer::Group(g) => p.source_group_id = g,
            RulePeer::PrefixList(l) => p.source_prefix_list_id = l,
        }
        HeldRule::new(&p, Direction::Ingress)
    }

    #[test]
    fn a_console_rule_is_revoked_by_its_id_and_a_missing_one_authorized() {
        let p = SecurityGroupParameters {
            ingress: vec![ssh()],
            ..SecurityGroupParameters::default()
        };
        let want = desired(&p, Direction::Ingress);
        let console = held(
            "sgr-1",
            "all",
            "-1/-1",
            RulePeer::Cidr("0.0.0.0/0".into()),
            "",
        );
        let plan = RulePlan::new(
            &want,
            std::slice::from_ref(&console),
            RulesPolicy::Exclusive,
        );
        assert_eq!(plan.authorize, vec![ingress(&ssh())]);
        assert_eq!(plan.revoke, vec![console]);
        assert_eq!(plan.revoke_ids(), ["sgr-1"]);
        assert_eq!(
            plan.describe(Direction::Ingress),
            "ingress: authorize accept tcp 22/22 203.0.113.0/24 priority 1; revoke accept all -1/-1 0.0.0.0/0 priority 1 (sgr-1)"
        );
        let listed = held(
            "sgr-2",
            "tcp",
            "22/22",
            RulePeer::Cidr("203.0.113.0/24".into()),
            "",
        );
        assert!(RulePlan::new(&want, &[listed], RulesPolicy::Exclusive).is_empty());
        assert!(desired(&p, Direction::Egress).is_empty());
    }

    #[test]
    fn a_group_ipv6_or_prefix_list_peer_is_never_the_listed_rule() {
        let p = SecurityGroupParameters {
            ingress: vec![ssh()],
            ..SecurityGroupParameters::default()
        };
        let want = desired(&p, Direction::Ingress);
        let listed = held(
            "sgr-1",
            "tcp",
            "22/22",
            RulePeer::Cidr("203.0.113.0/24".into()),
            "",
        );
        let group = held(
            "sgr-2",
            "tcp",
            "22/22",
            RulePeer::Group("sg-peer".into()),
            "",
        );
        let v6 = held(
            "sgr-3",
            "tcp",
            "22/22",
            RulePeer::Ipv6Cidr("2001:db8::/32".into()),
            "",
        );
        let prefix_list = held(
            "sgr-4",
            "tcp",
            "22/22",
            RulePeer::PrefixList("pl-office".into()),
            "",
        );
        assert_eq!(
            prefix_list.peer,
            Some(RulePeer::PrefixList("pl-office".into()))
        );
        let all = [listed, group, v6, prefix_list];
        let plan = RulePlan::new(&want, &all, RulesPolicy::Exclusive);
        assert!(plan.authorize.is_empty(), "{plan:?}");
        assert_eq!(plan.revoke_ids(), ["sgr-2", "sgr-3", "sgr-4"]);
        assert!(
            plan.describe(Direction::Ingress)
                .ends_with("sg-peer priority 1 (sgr-2), accept tcp 22/22 2001:db8::/32 priority 1 (sgr-3), accept tcp 22/22 pl-office priority 1 (sgr-4)"),
            "{}",
            plan.describe(Direction::Ingress)
        );
        // Without the IPv4 rule, the others do not stand in for it.
        let plan = RulePlan::new(&want, &all[1..], RulesPolicy::Additive);
        assert_eq!(plan.authorize, vec![ingress(&ssh())]);
        assert!(plan.revoke.is_empty());
    }

    #[test]
    fn an_additive_group_only_authorizes_and_takes_a_rule_there_whatever_its_description() {
        let p = SecurityGroupParameters {
            ingress: vec![IngressRule {
                description: Some("ssh".into()),
                ..ssh()
            }],
            ..SecurityGroupParameters::default()
        };
        let want = desired(&p, Direction::Ingress);
        // Another team's rule stays; the listed one is authorized.
        let theirs = held(
            "sgr-1",
            "tcp",
            "443/443",
            RulePeer::Cidr("0.0.0.0/0".into()),
            "web",
        );
        let plan = RulePlan::new(&want, std::slice::from_ref(&theirs), RulesPolicy::Additive);
        assert_eq!(plan.authorize, want.iter().cloned().collect::<Vec<_>>());
        assert!(plan.revoke.is_empty());
        // The listed rule there under another description is there: nothing to do, while
        // Exclusive would revoke and authorize it again.
        let relabelled = held(
            "sgr-2",
            "tcp",
            "22/22",
            RulePeer::Cidr("203.0.113.0/24".into()),
            "bastion",
        );
        let actual = [theirs, relabelled];
        assert!(RulePlan::new(&want, &actual, RulesPolicy::Additive).is_empty());
        assert_eq!(
            RulePlan::new(&want, &actual, RulesPolicy::Exclusive)
                .revoke
                .len(),
            2
        );
    }
}
