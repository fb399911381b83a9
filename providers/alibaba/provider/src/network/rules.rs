//! Security group rules: the spec's lists as API rules, and what to authorize and revoke so the
//! group holds exactly them. Pure.

use std::collections::BTreeSet;

use alibaba_sdk::ecs::{Direction, Rule};
use ferroplane_apis::alibabacloud::{EgressRule, IngressRule, SecurityGroupParameters};

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

impl RulePlan {
    pub fn new(desired: &BTreeSet<Rule>, actual: &BTreeSet<Rule>) -> Self {
        Self {
            authorize: desired.difference(actual).cloned().collect(),
            revoke: actual.difference(desired).cloned().collect(),
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
        let plan = RulePlan::new(&want, &actual);
        assert_eq!(plan.authorize, vec![ingress(&ssh())]);
        assert_eq!(plan.revoke, vec![console]);
        assert_eq!(
            plan.describe(Direction::Ingress),
            "ingress: authorize accept tcp 22/22 203.0.113.0/24 priority 1; revoke accept all -1/-1 0.0.0.0/0 priority 1"
        );
        assert!(RulePlan::new(&want, &want).is_empty());
        assert!(desired(&p, Direction::Egress).is_empty());
    }
}
