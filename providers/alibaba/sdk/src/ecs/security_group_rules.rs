//! One security group rule at a time, with any peer ECS takes (an IPv4 or IPv6 block, a
//! security group or a prefix list): authorized, changed in place by its `SecurityGroupRuleId`
//! (ModifySecurityGroupRule / ModifySecurityGroupEgressRule) and revoked by that ID. Authorize
//! answers no rule ID: the caller finds it in DescribeSecurityGroupAttribute.

use super::client::EcsClient;
use super::request::resolve_client_token;
use super::response::AckResponse;
use super::security_groups::{Direction, Permission};
use crate::error::Error;
use crate::rpc::Params;

/// A rule's authorization object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RulePeer {
    /// An IPv4 address or block (`SourceCidrIp` / `DestCidrIp`).
    Cidr(String),
    /// An IPv6 address or block (`Ipv6SourceCidrIp` / `Ipv6DestCidrIp`).
    Ipv6Cidr(String),
    /// A security group (`SourceGroupId` / `DestGroupId`).
    Group(String),
    /// A prefix list, `pl-…` (`SourcePrefixListId` / `DestPrefixListId`).
    PrefixList(String),
}

impl RulePeer {
    /// The request parameter of this peer in `direction`, and its value.
    fn param(&self, direction: Direction) -> (&'static str, &str) {
        match (self, direction) {
            (Self::Cidr(v), Direction::Ingress) => ("SourceCidrIp", v),
            (Self::Cidr(v), Direction::Egress) => ("DestCidrIp", v),
            (Self::Ipv6Cidr(v), Direction::Ingress) => ("Ipv6SourceCidrIp", v),
            (Self::Ipv6Cidr(v), Direction::Egress) => ("Ipv6DestCidrIp", v),
            (Self::Group(v), Direction::Ingress) => ("SourceGroupId", v),
            (Self::Group(v), Direction::Egress) => ("DestGroupId", v),
            (Self::PrefixList(v), Direction::Ingress) => ("SourcePrefixListId", v),
            (Self::PrefixList(v), Direction::Egress) => ("DestPrefixListId", v),
        }
    }

    /// Whether `reported` names this peer. ECS may report an IPv6 block in another spelling
    /// (`2001:DB8::/32`), so blocks compare case-insensitively.
    fn matches(&self, reported: &RulePeer) -> bool {
        match (self, reported) {
            (Self::Cidr(a), Self::Cidr(b))
            | (Self::Group(a), Self::Group(b))
            | (Self::PrefixList(a), Self::PrefixList(b)) => a == b,
            (Self::Ipv6Cidr(a), Self::Ipv6Cidr(b)) => a.eq_ignore_ascii_case(b),
            _ => false,
        }
    }
}

impl std::fmt::Display for RulePeer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Cidr(v) | Self::Ipv6Cidr(v) | Self::Group(v) | Self::PrefixList(v) => {
                f.write_str(v)
            }
        }
    }
}

/// One rule to authorize: everything ECS compares two rules by, and the description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerRule {
    pub direction: Direction,
    /// `tcp`, `udp`, `icmp`, `icmpv6`, `gre` or `all`.
    pub ip_protocol: String,
    /// `22/22`, or `-1/-1` for protocols without ports.
    pub port_range: String,
    pub peer: RulePeer,
    /// `accept` or `drop`.
    pub policy: String,
    /// 1 (highest) to 100.
    pub priority: u32,
    pub description: String,
}

impl PeerRule {
    /// Whether `reported` is this rule to ECS (protocol, ports, peer, policy, priority), whatever
    /// its description: an identical rule authorized again adds nothing.
    pub fn same_as(&self, reported: &Permission) -> bool {
        (reported.direction.is_empty() || reported.direction == self.direction.as_str())
            && reported.ip_protocol.eq_ignore_ascii_case(&self.ip_protocol)
            && reported.port_range == self.port_range
            && reported
                .peer(self.direction)
                .is_some_and(|p| self.peer.matches(&p))
            && reported.policy.eq_ignore_ascii_case(&self.policy)
            && reported.priority == self.priority
    }
}

impl Permission {
    /// The rule's authorization object in `direction`; `None` when it reports none of the
    /// four kinds (a peer ECS added after this module, e.g. a port range list alone).
    pub fn peer(&self, direction: Direction) -> Option<RulePeer> {
        let (v4, v6, group, list) = match direction {
            Direction::Ingress => (
                &self.source_cidr_ip,
                &self.ipv6_source_cidr_ip,
                &self.source_group_id,
                &self.source_prefix_list_id,
            ),
            Direction::Egress => (
                &self.dest_cidr_ip,
                &self.ipv6_dest_cidr_ip,
                &self.dest_group_id,
                &self.dest_prefix_list_id,
            ),
        };
        if !v4.is_empty() {
            Some(RulePeer::Cidr(v4.clone()))
        } else if !v6.is_empty() {
            Some(RulePeer::Ipv6Cidr(v6.clone()))
        } else if !group.is_empty() {
            Some(RulePeer::Group(group.clone()))
        } else if !list.is_empty() {
            Some(RulePeer::PrefixList(list.clone()))
        } else {
            None
        }
    }
}

/// The in-place settings of a rule: `None` leaves one as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleChange<'a> {
    pub policy: Option<&'a str>,
    pub priority: Option<u32>,
    pub description: Option<&'a str>,
}

fn modify_action(direction: Direction) -> &'static str {
    match direction {
        Direction::Ingress => "ModifySecurityGroupRule",
        Direction::Egress => "ModifySecurityGroupEgressRule",
    }
}

fn authorize_params(security_group_id: &str, rule: &PeerRule) -> Params {
    let mut p = Params::new();
    let (peer_param, peer) = rule.peer.param(rule.direction);
    p.set("SecurityGroupId", security_group_id)
        .set("Permissions.1.IpProtocol", &rule.ip_protocol)
        .set("Permissions.1.PortRange", &rule.port_range)
        .set(format!("Permissions.1.{peer_param}"), peer)
        .set("Permissions.1.Policy", &rule.policy)
        .set("Permissions.1.Priority", rule.priority);
    if !rule.description.is_empty() {
        p.set("Permissions.1.Description", &rule.description);
    }
    p
}

impl EcsClient {
    /// `AuthorizeSecurityGroup` / `AuthorizeSecurityGroupEgress` of one rule.
    pub async fn authorize_rule(
        &self,
        security_group_id: &str,
        rule: &PeerRule,
    ) -> Result<(), Error> {
        let (action, _) = rule.direction.actions();
        let mut p = authorize_params(security_group_id, rule);
        p.set("ClientToken", resolve_client_token(action, None)?);
        self.call_typed::<AckResponse>(action, &p).await?;
        Ok(())
    }

    /// `ModifySecurityGroupRule` / `ModifySecurityGroupEgressRule` of the rule `rule_id`.
    pub async fn modify_rule(
        &self,
        security_group_id: &str,
        direction: Direction,
        rule_id: &str,
        change: &RuleChange<'_>,
    ) -> Result<(), Error> {
        let mut p = Params::new();
        p.set("SecurityGroupId", security_group_id)
            .set("SecurityGroupRuleId", rule_id)
            .opt("Policy", change.policy)
            .opt("Priority", change.priority)
            .opt("Description", change.description);
        self.call_typed::<AckResponse>(modify_action(direction), &p)
            .await?;
        Ok(())
    }

    /// `RevokeSecurityGroup` / `RevokeSecurityGroupEgress` of the rule `rule_id`. Since July
    /// 2024 ECS refuses a rule that is gone already ([`Error::is_rule_not_found`]).
    pub async fn revoke_rule(
        &self,
        security_group_id: &str,
        direction: Direction,
        rule_id: &str,
    ) -> Result<(), Error> {
        let (_, action) = direction.actions();
        let mut p = Params::new();
        p.set("SecurityGroupId", security_group_id)
            .set("SecurityGroupRuleId.1", rule_id)
            .set("ClientToken", resolve_client_token(action, None)?);
        self.call_typed::<AckResponse>(action, &p).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(peer: RulePeer, direction: Direction) -> PeerRule {
        PeerRule {
            direction,
            ip_protocol: "tcp".into(),
            port_range: "443/443".into(),
            peer,
            policy: "accept".into(),
            priority: 5,
            description: "ferroplane:u".into(),
        }
    }

    #[test]
    fn each_peer_goes_in_its_directions_parameter() {
        let v6 = authorize_params(
            "sg-1",
            &rule(
                RulePeer::Ipv6Cidr("2001:db8::/32".into()),
                Direction::Egress,
            ),
        );
        assert_eq!(
            v6.get("Permissions.1.Ipv6DestCidrIp"),
            Some("2001:db8::/32")
        );
        assert_eq!(v6.get("Permissions.1.DestCidrIp"), None);
        let group = authorize_params(
            "sg-1",
            &rule(RulePeer::Group("sg-2".into()), Direction::Ingress),
        );
        assert_eq!(group.get("Permissions.1.SourceGroupId"), Some("sg-2"));
        assert_eq!(group.get("Permissions.1.Priority"), Some("5"));
        assert_eq!(group.get("Permissions.1.Description"), Some("ferroplane:u"));
        let list = authorize_params(
            "sg-1",
            &rule(RulePeer::PrefixList("pl-1".into()), Direction::Egress),
        );
        assert_eq!(list.get("Permissions.1.DestPrefixListId"), Some("pl-1"));
        assert_eq!(list.get("Permissions.1.SourcePrefixListId"), None);
    }

    #[test]
    fn a_prefix_list_peer_is_read_from_its_directions_field() {
        let want = rule(RulePeer::PrefixList("pl-1".into()), Direction::Ingress);
        let reported = Permission {
            direction: "ingress".into(),
            ip_protocol: "TCP".into(),
            port_range: "443/443".into(),
            source_prefix_list_id: "pl-1".into(),
            policy: "Accept".into(),
            priority: 5,
            ..Permission::default()
        };
        assert_eq!(
            reported.peer(Direction::Ingress),
            Some(RulePeer::PrefixList("pl-1".into()))
        );
        assert_eq!(reported.peer(Direction::Egress), None);
        assert!(want.same_as(&reported));
        let other = Permission {
            source_prefix_list_id: "pl-2".into(),
            ..reported
        };
        assert!(!want.same_as(&other));
    }

    #[test]
    fn a_reported_rule_is_the_same_whatever_its_description_and_case() {
        let want = rule(
            RulePeer::Ipv6Cidr("2001:db8::/32".into()),
            Direction::Ingress,
        );
        let reported = Permission {
            direction: "ingress".into(),
            ip_protocol: "TCP".into(),
            port_range: "443/443".into(),
            ipv6_source_cidr_ip: "2001:DB8::/32".into(),
            policy: "Accept".into(),
            priority: 5,
            description: "someone else's".into(),
            ..Permission::default()
        };
        assert!(want.same_as(&reported));
        let drop = Permission {
            policy: "Drop".into(),
            ..reported.clone()
        };
        assert!(!want.same_as(&drop));
        let v4 = Permission {
            ipv6_source_cidr_ip: String::new(),
            source_cidr_ip: "10.0.0.0/8".into(),
            ..reported
        };
        assert!(!want.same_as(&v4));
    }
}
