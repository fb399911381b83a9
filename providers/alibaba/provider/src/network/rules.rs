//! Security group rules: the spec's lists as API rules, and what to authorize and revoke so the
//! group holds them as its `rulesPolicy` says (exactly them, or at least them). Pure.

use std::collections::BTreeSet;

use alibaba_sdk::ecs::{Direction, Rule};
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

/// What makes one direction's rules match the spec.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct RulePlan {
    /// Missing from the group.
    pub authorize: Vec<Rule>,
    /// In the group, not in the spec (added in the console, or removed from the spec).
    pub revoke: Vec<Rule>,
}

/// Whether two rules are one rule to ECS: all but the description (an identical rule
/// authorized again is no new rule).
fn same_rule(a: &Rule, b: &Rule) -> bool {
    a.ip_protocol == b.ip_protocol
        && a.port_range == b.port_range
        && a.cidr_ip == b.cidr_ip
        && a.policy == b.policy
        && a.priority == b.priority
}

impl RulePlan {
    pub fn new(desired: &BTreeSet<Rule>, actual: &BTreeSet<Rule>, policy: RulesPolicy) -> Self {
        match policy {
            RulesPolicy::Exclusive => Self {
                authorize: desired.difference(actual).cloned().collect(),
                revoke: actual.difference(desired).cloned().collect(),
            },
            // Authorizing a rule that exists with another description would change nothing
            // (and plan it again at every poll): it counts as there.
            RulesPolicy::Additive => Self {
                authorize: desired
                    .iter()
                    .filter(|d| !actual.iter().any(|a| same_rule(a, d)))
                    .cloned()
                    .collect(),
                revoke: Vec::new(),
            },
        }
    }

    pub fn is_empty(&self) -> bool {
        self.authorize.is_empty() && self.revoke.is_empty()
    }

    /// `ingress: authorize tcp 22/22 0.0.0.0/0; revoke all -1/-1 10.0.0.0/8`.
    pub fn describe(&self, direction: Direction) -> String {
        let show = |rules: &[Rule]| {
            rules
                .iter()
                .map(|r| {
                    format!(
                        "{} {} {} {} priority {}",
                        r.policy, r.ip_protocol, r.port_range, r.cidr_ip, r.priority
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut parts = Vec::new();
        if !self.authorize.is_empty() {
            parts.push(format!("authorize {}", show(&self.authorize)));
        }
        if !self.revoke.is_empty() {
            parts.push(format!("revoke {}", show(&self.revoke)));
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

    #[test]
    fn a_console_rule_is_revoked_and_a_missing_one_authorized() {
        let p = SecurityGroupParameters {
            ingress: vec![ssh()],
            ..SecurityGroupParameters::default()
        };
        let want = desired(&p, Direction::Ingress);
        let console = rule("all", "-1/-1", "0.0.0.0/0", "accept", 1, None);
        let actual: BTreeSet<Rule> = [console.clone()].into();
        let plan = RulePlan::new(&want, &actual, RulesPolicy::Exclusive);
        assert_eq!(plan.authorize, vec![ingress(&ssh())]);
        assert_eq!(plan.revoke, vec![console]);
        assert_eq!(
            plan.describe(Direction::Ingress),
            "ingress: authorize accept tcp 22/22 203.0.113.0/24 priority 1; revoke accept all -1/-1 0.0.0.0/0 priority 1"
        );
        assert!(RulePlan::new(&want, &want, RulesPolicy::Exclusive).is_empty());
        assert!(desired(&p, Direction::Egress).is_empty());
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
        let theirs = rule("tcp", "443/443", "0.0.0.0/0", "accept", 1, Some("web"));
        let plan = RulePlan::new(&want, &[theirs.clone()].into(), RulesPolicy::Additive);
        assert_eq!(plan.authorize, want.iter().cloned().collect::<Vec<_>>());
        assert!(plan.revoke.is_empty());
        // The listed rule there under another description is there: nothing to do, while
        // Exclusive would revoke and authorize it again.
        let relabelled = rule(
            "tcp",
            "22/22",
            "203.0.113.0/24",
            "accept",
            1,
            Some("bastion"),
        );
        let actual: BTreeSet<Rule> = [theirs, relabelled].into();
        assert!(RulePlan::new(&want, &actual, RulesPolicy::Additive).is_empty());
        assert_eq!(
            RulePlan::new(&want, &actual, RulesPolicy::Exclusive)
                .revoke
                .len(),
            2
        );
    }
}
