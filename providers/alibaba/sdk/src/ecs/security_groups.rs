//! Security groups, which the ECS API serves: their requests, responses and typed actions on
//! [`EcsClient`]. Rules are sent in the `Permissions.N.*` form (up to 100 per call).

use serde::{Deserialize, Deserializer};

use super::client::EcsClient;
use super::request::{resolve_client_token, set_tags};
use super::response::{AckResponse, Tag, TagList};
use crate::error::Error;
use crate::rpc::Params;
use crate::wire::wrapped_list;

/// Most rules one `AuthorizeSecurityGroup` / `RevokeSecurityGroup` call takes.
pub const MAX_RULES_PER_CALL: usize = 100;
/// Most security group IDs one `DescribeSecurityGroups` takes.
pub const MAX_SECURITY_GROUP_IDS_PER_CALL: usize = 100;

/// Which traffic a rule governs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Inbound: the rule names a source (`SourceCidrIp`).
    Ingress,
    /// Outbound: the rule names a destination (`DestCidrIp`).
    Egress,
}

impl Direction {
    /// The API value (`ingress` / `egress`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ingress => "ingress",
            Self::Egress => "egress",
        }
    }

    pub(super) fn actions(self) -> (&'static str, &'static str) {
        match self {
            Self::Ingress => ("AuthorizeSecurityGroup", "RevokeSecurityGroup"),
            Self::Egress => ("AuthorizeSecurityGroupEgress", "RevokeSecurityGroupEgress"),
        }
    }

    fn cidr_param(self) -> &'static str {
        match self {
            Self::Ingress => "SourceCidrIp",
            Self::Egress => "DestCidrIp",
        }
    }
}

/// One rule with an IPv4 peer to authorize; the CIDR is the source (ingress) or destination
/// (egress). Rules are revoked by their IDs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Rule {
    /// `tcp`, `udp`, `icmp`, `gre` or `all`.
    pub ip_protocol: String,
    /// `22/22`, `1/65535`, or `-1/-1` for protocols without ports.
    pub port_range: String,
    /// The peer's IPv4 CIDR block.
    pub cidr_ip: String,
    /// `accept` or `drop`.
    pub policy: String,
    /// 1 (highest) to 100.
    pub priority: u32,
    /// The rule's description.
    pub description: String,
}

/// `CreateSecurityGroup` parameters.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CreateSecurityGroupRequest {
    /// `VpcId`: the VPC the group belongs to.
    pub vpc_id: Option<String>,
    /// `SecurityGroupName`.
    pub security_group_name: Option<String>,
    /// `Description`.
    pub description: Option<String>,
    /// `Tag.N.Key` / `Tag.N.Value`.
    pub tags: Vec<Tag>,
    /// `ClientToken`.
    pub client_token: Option<String>,
}

/// `CreateSecurityGroup` response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct CreateSecurityGroupResponse {
    /// The request ID.
    pub request_id: String,
    /// `sg-...`.
    pub security_group_id: String,
}

/// One security group as `DescribeSecurityGroups` lists it.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct SecurityGroup {
    /// `sg-...`.
    pub security_group_id: String,
    /// The name.
    pub security_group_name: String,
    /// The description.
    pub description: String,
    /// Its VPC.
    pub vpc_id: String,
    /// `normal` or `enterprise`.
    pub security_group_type: String,
    /// Tags.
    pub tags: TagList,
}

impl SecurityGroup {
    /// A tag's value.
    pub fn tag(&self, key: &str) -> Option<&str> {
        self.tags.get(key)
    }
}

wrapped_list!(SecurityGroupList, "SecurityGroup", SecurityGroup);
wrapped_list!(PermissionList, "Permission", Permission);

/// `DescribeSecurityGroups` response (one page).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct DescribeSecurityGroupsResponse {
    /// The request ID.
    pub request_id: String,
    /// Matches across all pages.
    pub total_count: u64,
    /// This page's number.
    pub page_number: u32,
    /// This page.
    pub security_groups: SecurityGroupList,
}

/// One rule as `DescribeSecurityGroupAttribute` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Permission {
    /// `sgr-...`.
    pub security_group_rule_id: String,
    /// `ingress` or `egress`.
    pub direction: String,
    /// Lower case as ECS reports it (`tcp`, `all`, ...).
    pub ip_protocol: String,
    /// `22/22`.
    pub port_range: String,
    /// Ingress peer.
    pub source_cidr_ip: String,
    /// Egress peer.
    pub dest_cidr_ip: String,
    /// Ingress peer, an IPv6 block.
    pub ipv6_source_cidr_ip: String,
    /// Egress peer, an IPv6 block.
    pub ipv6_dest_cidr_ip: String,
    /// Ingress peer, a security group.
    pub source_group_id: String,
    /// Egress peer, a security group.
    pub dest_group_id: String,
    /// Ingress peer, a prefix list (`pl-…`).
    pub source_prefix_list_id: String,
    /// Egress peer, a prefix list (`pl-…`).
    pub dest_prefix_list_id: String,
    /// `Accept` or `Drop` (ECS capitalizes what it reports).
    pub policy: String,
    /// 1 to 100 (reported as a number or a string).
    #[serde(deserialize_with = "number_or_string")]
    pub priority: u32,
    /// The description.
    pub description: String,
}

impl Permission {
    /// The rule in the form requests take (protocol and policy lower case), for comparison with a
    /// desired rule.
    pub fn to_rule(&self, direction: Direction) -> Rule {
        Rule {
            ip_protocol: self.ip_protocol.to_ascii_lowercase(),
            port_range: self.port_range.clone(),
            cidr_ip: match direction {
                Direction::Ingress => self.source_cidr_ip.clone(),
                Direction::Egress => self.dest_cidr_ip.clone(),
            },
            policy: self.policy.to_ascii_lowercase(),
            priority: self.priority,
            description: self.description.clone(),
        }
    }
}

fn number_or_string<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Wire {
        Number(u32),
        Text(String),
        Null,
    }
    match Wire::deserialize(deserializer)? {
        Wire::Number(n) => Ok(n),
        Wire::Text(t) if t.is_empty() => Ok(0),
        Wire::Text(t) => t.parse().map_err(serde::de::Error::custom),
        Wire::Null => Ok(0),
    }
}

/// `DescribeSecurityGroupAttribute` response.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct DescribeSecurityGroupAttributeResponse {
    /// The request ID.
    pub request_id: String,
    /// `sg-...`.
    pub security_group_id: String,
    /// Its VPC.
    pub vpc_id: String,
    /// The rules of the asked direction.
    pub permissions: PermissionList,
}

fn rule_params(direction: Direction, security_group_id: &str, rules: &[Rule]) -> Params {
    let mut p = Params::new();
    p.set("SecurityGroupId", security_group_id);
    for (i, rule) in rules.iter().enumerate() {
        let n = i + 1;
        p.set(format!("Permissions.{n}.IpProtocol"), &rule.ip_protocol)
            .set(format!("Permissions.{n}.PortRange"), &rule.port_range)
            .set(
                format!("Permissions.{n}.{}", direction.cidr_param()),
                &rule.cidr_ip,
            )
            .set(format!("Permissions.{n}.Policy"), &rule.policy)
            .set(format!("Permissions.{n}.Priority"), rule.priority);
        if !rule.description.is_empty() {
            p.set(format!("Permissions.{n}.Description"), &rule.description);
        }
    }
    p
}

impl EcsClient {
    /// `CreateSecurityGroup`.
    pub async fn create_security_group(
        &self,
        request: &CreateSecurityGroupRequest,
    ) -> Result<CreateSecurityGroupResponse, Error> {
        let token = resolve_client_token("CreateSecurityGroup", request.client_token.as_deref())?;
        let mut p = Params::new();
        p.opt("VpcId", request.vpc_id.as_ref())
            .opt("SecurityGroupName", request.security_group_name.as_ref())
            .opt("Description", request.description.as_ref())
            .set("ClientToken", token);
        set_tags(&mut p, &request.tags);
        self.call_typed("CreateSecurityGroup", &p).await
    }

    /// `DescribeSecurityGroups` of the given IDs (all groups of the region when empty) carrying
    /// every tag in `tags`, all pages.
    pub async fn describe_security_groups(
        &self,
        security_group_ids: &[String],
        tags: &[Tag],
    ) -> Result<Vec<SecurityGroup>, Error> {
        let chunks: Vec<&[String]> = if security_group_ids.is_empty() {
            vec![&[]]
        } else {
            security_group_ids
                .chunks(MAX_SECURITY_GROUP_IDS_PER_CALL)
                .collect()
        };
        let mut found = Vec::new();
        for chunk in chunks {
            for page in 1u32.. {
                let mut p = Params::new();
                if !chunk.is_empty() {
                    let ids = serde_json::to_string(chunk).expect("strings serialize");
                    p.set("SecurityGroupIds", ids);
                }
                set_tags(&mut p, tags);
                p.set("PageNumber", page).set("PageSize", 50u32);
                let r: DescribeSecurityGroupsResponse =
                    self.call_typed("DescribeSecurityGroups", &p).await?;
                let empty = r.security_groups.items.is_empty();
                found.extend(r.security_groups.items);
                if empty || found.len() as u64 >= r.total_count {
                    break;
                }
            }
        }
        Ok(found)
    }

    /// `DescribeSecurityGroupAttribute`: the group's rules in one direction.
    pub async fn describe_security_group_rules(
        &self,
        security_group_id: &str,
        direction: Direction,
    ) -> Result<DescribeSecurityGroupAttributeResponse, Error> {
        let mut p = Params::new();
        p.set("SecurityGroupId", security_group_id)
            .set("Direction", direction.as_str());
        self.call_typed("DescribeSecurityGroupAttribute", &p).await
    }

    /// `AuthorizeSecurityGroup` / `AuthorizeSecurityGroupEgress`, at most
    /// [`MAX_RULES_PER_CALL`] rules per call.
    pub async fn authorize_security_group(
        &self,
        security_group_id: &str,
        direction: Direction,
        rules: &[Rule],
    ) -> Result<(), Error> {
        let (action, _) = direction.actions();
        for chunk in rules.chunks(MAX_RULES_PER_CALL) {
            let mut p = rule_params(direction, security_group_id, chunk);
            p.set("ClientToken", resolve_client_token(action, None)?);
            self.call_typed::<AckResponse>(action, &p).await?;
        }
        Ok(())
    }

    /// `RevokeSecurityGroup` / `RevokeSecurityGroupEgress` of rules by their
    /// `SecurityGroupRuleId.N`, at most [`MAX_RULES_PER_CALL`] per call: whatever their peer (a
    /// block, a group, a prefix list). ECS refuses an ID the group does not hold
    /// ([`Error::is_rule_not_found`]).
    pub async fn revoke_security_group_rules(
        &self,
        security_group_id: &str,
        direction: Direction,
        rule_ids: &[String],
    ) -> Result<(), Error> {
        let (_, action) = direction.actions();
        for chunk in rule_ids.chunks(MAX_RULES_PER_CALL) {
            let mut p = Params::new();
            p.set("SecurityGroupId", security_group_id);
            for (i, id) in chunk.iter().enumerate() {
                p.set(format!("SecurityGroupRuleId.{}", i + 1), id);
            }
            p.set("ClientToken", resolve_client_token(action, None)?);
            self.call_typed::<AckResponse>(action, &p).await?;
        }
        Ok(())
    }

    /// `TagResources` on one security group: adds or overwrites these tags.
    pub async fn tag_security_group(
        &self,
        security_group_id: &str,
        tags: &[Tag],
    ) -> Result<(), Error> {
        let mut p = Params::new();
        p.set("ResourceType", "securitygroup")
            .set("ResourceId.1", security_group_id);
        set_tags(&mut p, tags);
        self.call_typed::<AckResponse>("TagResources", &p).await?;
        Ok(())
    }

    /// `UntagResources` on one security group: removes these tag keys.
    pub async fn untag_security_group(
        &self,
        security_group_id: &str,
        keys: &[String],
    ) -> Result<(), Error> {
        let mut p = Params::new();
        p.set("ResourceType", "securitygroup")
            .set("ResourceId.1", security_group_id);
        for (i, key) in keys.iter().enumerate() {
            p.set(format!("TagKey.{}", i + 1), key);
        }
        self.call_typed::<AckResponse>("UntagResources", &p).await?;
        Ok(())
    }

    /// `ModifySecurityGroupAttribute`: a new name and/or description.
    pub async fn modify_security_group_attribute(
        &self,
        security_group_id: &str,
        name: Option<&str>,
        description: Option<&str>,
    ) -> Result<AckResponse, Error> {
        let mut p = Params::new();
        p.set("SecurityGroupId", security_group_id)
            .opt("SecurityGroupName", name)
            .opt("Description", description);
        self.call_typed("ModifySecurityGroupAttribute", &p).await
    }

    /// `DeleteSecurityGroup` (no instance may use it, no other group may reference it).
    pub async fn delete_security_group(
        &self,
        security_group_id: &str,
    ) -> Result<AckResponse, Error> {
        let mut p = Params::new();
        p.set("SecurityGroupId", security_group_id);
        self.call_typed("DeleteSecurityGroup", &p).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_in_the_permissions_form() {
        let rule = Rule {
            ip_protocol: "tcp".into(),
            port_range: "22/22".into(),
            cidr_ip: "10.0.0.0/8".into(),
            policy: "accept".into(),
            priority: 1,
            description: String::new(),
        };
        let p = rule_params(Direction::Egress, "sg-1", &[rule.clone(), rule]);
        assert_eq!(p.get("Permissions.2.DestCidrIp"), Some("10.0.0.0/8"));
        assert_eq!(p.get("Permissions.1.SourceCidrIp"), None);
        assert_eq!(p.get("Permissions.1.Priority"), Some("1"));
        assert_eq!(p.get("Permissions.1.Description"), None);
    }

    #[test]
    fn decodes_reported_rules_either_priority_shape() {
        let r: DescribeSecurityGroupAttributeResponse = serde_json::from_str(
            r#"{"RequestId":"R","SecurityGroupId":"sg-1","VpcId":"vpc-1","Permissions":{"Permission":[
                {"Direction":"ingress","IpProtocol":"TCP","PortRange":"22/22","SourceCidrIp":"0.0.0.0/0",
                 "Policy":"Accept","Priority":"1","SecurityGroupRuleId":"sgr-1"},
                {"Direction":"ingress","IpProtocol":"ALL","PortRange":"-1/-1","SourceCidrIp":"10.0.0.0/8",
                 "Policy":"Drop","Priority":100}]}}"#,
        )
        .unwrap();
        let rules: Vec<Rule> = r
            .permissions
            .items
            .iter()
            .map(|p| p.to_rule(Direction::Ingress))
            .collect();
        assert_eq!(rules[0].ip_protocol, "tcp");
        assert_eq!(rules[0].policy, "accept");
        assert_eq!(rules[0].priority, 1);
        assert_eq!(rules[1].priority, 100);
        assert_eq!(rules[1].cidr_ip, "10.0.0.0/8");
    }
}
