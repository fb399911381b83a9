//! The network store: VPCs, vSwitches and security groups per account, seeded with the default
//! network of [`crate::defaults`] the first time an account is seen, and the placement rules
//! RunInstances applies with them.

use crate::tags::Tags;
use std::collections::HashMap;
use std::sync::Arc;

use jiff::Timestamp;

use crate::catalog::{self, CatalogRegion};
use crate::cidr::Cidr;
use crate::defaults;
use crate::error::{ErrorResponse, truncate};

/// `Pending` until `ready_at`, then `Available` (VPCs and vSwitches).
pub fn network_status(ready_at: Timestamp, now: Timestamp) -> &'static str {
    if now < ready_at {
        "Pending"
    } else {
        "Available"
    }
}

/// A VPC.
#[derive(Debug, Clone)]
pub struct Vpc {
    pub id: String,
    pub seq: u64,
    pub region_id: &'static str,
    pub cidr: Cidr,
    pub name: String,
    pub description: String,
    pub is_default: bool,
    pub created_at: Timestamp,
    pub ready_at: Timestamp,
    pub vrouter_id: String,
    pub route_table_id: String,
    pub tags: Tags,
    /// The `/56` IPv6 block of a VPC created with `EnableIpv6`.
    pub ipv6_block: Option<u128>,
}

/// A vSwitch.
#[derive(Debug, Clone)]
pub struct VSwitch {
    pub id: String,
    pub seq: u64,
    pub vpc_id: String,
    pub region_id: &'static str,
    pub zone_id: String,
    pub cidr: Cidr,
    pub name: String,
    pub description: String,
    pub is_default: bool,
    pub created_at: Timestamp,
    pub ready_at: Timestamp,
    pub tags: Tags,
    /// The `/64` IPv6 block of a vSwitch created with `Ipv6CidrBlock`.
    pub ipv6_block: Option<u128>,
}

/// Direction of a security-group rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Ingress,
    Egress,
}

impl Direction {
    /// `ingress` / `egress`, as DescribeSecurityGroupAttribute spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ingress => "ingress",
            Self::Egress => "egress",
        }
    }
}

/// One security-group rule. `peer_cidr` is `SourceCidrIp` (ingress) or `DestCidrIp` (egress);
/// `peer_group` is `SourceGroupId` / `DestGroupId`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub id: String,
    pub direction: Direction,
    pub ip_protocol: String,
    pub port_range: String,
    pub peer_cidr: String,
    pub peer_group: String,
    /// `pl-…`, or empty when the peer is a block or a group.
    pub peer_prefix_list: String,
    pub policy: String,
    pub priority: u32,
    pub description: String,
    pub nic_type: String,
    pub created_at: Timestamp,
}

impl Rule {
    /// Whether two rules are the same rule (everything but ID, description and time).
    pub fn same_as(&self, other: &Rule) -> bool {
        self.direction == other.direction
            && self.ip_protocol == other.ip_protocol
            && self.port_range == other.port_range
            && self.peer_cidr == other.peer_cidr
            && self.peer_group == other.peer_group
            && self.peer_prefix_list == other.peer_prefix_list
            && self.policy == other.policy
            && self.priority == other.priority
            && self.nic_type == other.nic_type
    }
}

/// A security group (always of the VPC type in the mock).
#[derive(Debug, Clone)]
pub struct SecurityGroup {
    pub id: String,
    pub seq: u64,
    pub region_id: &'static str,
    pub vpc_id: String,
    pub name: String,
    pub description: String,
    pub group_type: &'static str,
    pub created_at: Timestamp,
    pub rules: Vec<Rule>,
    pub tags: Tags,
}

/// Where RunInstances puts an instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    pub zone_id: String,
    pub vpc_id: String,
    pub vswitch_id: String,
    pub vswitch_cidr: Cidr,
}

/// One account's network.
#[derive(Debug, Default)]
pub struct AccountNetwork {
    pub vpcs: HashMap<String, Vpc>,
    pub vswitches: HashMap<String, VSwitch>,
    pub groups: HashMap<String, SecurityGroup>,
    /// Answers of create calls by (action, ClientToken), with the fingerprint of their parameters.
    tokens: HashMap<(&'static str, String), (u64, serde_json::Value)>,
    next_seq: u64,
}

/// `InvalidVpcId.NotFound` (404).
pub fn vpc_not_found() -> ErrorResponse {
    ErrorResponse::not_found("InvalidVpcId.NotFound", "Specified VPC does not exist.")
}

/// `InvalidVSwitchId.NotFound` (404).
pub fn vswitch_not_found() -> ErrorResponse {
    ErrorResponse::not_found(
        "InvalidVSwitchId.NotFound",
        "Specified virtual switch does not exist.",
    )
}

/// `InvalidSecurityGroupId.NotFound` (404).
pub fn security_group_not_found(id: &str) -> ErrorResponse {
    ErrorResponse::not_found(
        "InvalidSecurityGroupId.NotFound",
        format!(
            "The SecurityGroupId provided does not exist in our records: \"{}\".",
            truncate(id, 64)
        ),
    )
}

fn mismatch(message: &str) -> ErrorResponse {
    ErrorResponse::bad_request("InvalidParameter.Mismatch", message)
}

impl AccountNetwork {
    /// The default network of every catalogue region, created at `created` (when the mock first
    /// sees the account, as the cloud creates it when an account first uses a region). It is
    /// Available from the start: no request can find it Pending.
    pub fn seeded(created: Timestamp) -> Self {
        let mut network = Self::default();
        let epoch = Timestamp::UNIX_EPOCH;
        for region in catalog::regions() {
            let vpc_id = defaults::vpc_id(region.id);
            let seq = network.seq();
            network.vpcs.insert(
                vpc_id.clone(),
                Vpc {
                    id: vpc_id.clone(),
                    seq,
                    region_id: region.id,
                    cidr: defaults::vpc_cidr(),
                    name: String::new(),
                    description: String::new(),
                    is_default: true,
                    created_at: created,
                    ready_at: epoch,
                    vrouter_id: defaults::stable_id("vrt", &vpc_id),
                    route_table_id: defaults::stable_id("vtb", &vpc_id),
                    tags: Tags::new(),
                    ipv6_block: None,
                },
            );
            for (zone_id, id, cidr) in defaults::region_vswitches(region) {
                let seq = network.seq();
                network.vswitches.insert(
                    id.clone(),
                    VSwitch {
                        id,
                        seq,
                        vpc_id: vpc_id.clone(),
                        region_id: region.id,
                        zone_id,
                        cidr,
                        name: String::new(),
                        description: String::new(),
                        is_default: true,
                        created_at: created,
                        ready_at: epoch,
                        tags: Tags::new(),
                        ipv6_block: None,
                    },
                );
            }
            let sg_id = defaults::security_group_id(region.id);
            let seq = network.seq();
            network.groups.insert(
                sg_id.clone(),
                SecurityGroup {
                    id: sg_id,
                    seq,
                    region_id: region.id,
                    vpc_id,
                    name: "default".to_owned(),
                    description: "System created security group.".to_owned(),
                    group_type: "normal",
                    created_at: created,
                    rules: Vec::new(),
                    tags: Tags::new(),
                },
            );
        }
        network
    }

    /// The earlier answer of a create call repeated with its `ClientToken` (the same parameters,
    /// fingerprint `print`), `IdempotentParameterMismatch` when the parameters differ, `None` for
    /// a new call.
    pub fn replay(
        &self,
        action: &'static str,
        token: Option<&str>,
        print: u64,
    ) -> Result<Option<serde_json::Value>, ErrorResponse> {
        let Some(token) = token else {
            return Ok(None);
        };
        match self.tokens.get(&(action, token.to_owned())) {
            None => Ok(None),
            Some((earlier, reply)) if *earlier == print => Ok(Some(reply.clone())),
            Some(_) => Err(crate::idempotency::idempotent_mismatch()),
        }
    }

    /// Records the answer of a create call made with `token`.
    pub fn remember(
        &mut self,
        action: &'static str,
        token: Option<&str>,
        print: u64,
        reply: &serde_json::Value,
    ) {
        if let Some(token) = token {
            self.tokens
                .insert((action, token.to_owned()), (print, reply.clone()));
        }
    }

    /// The next creation sequence number.
    pub fn seq(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq
    }

    /// The VPC in `region_id`, or `InvalidVpcId.NotFound`.
    pub fn vpc(&self, region_id: &str, id: &str) -> Result<&Vpc, ErrorResponse> {
        self.vpcs
            .get(id)
            .filter(|v| v.region_id == region_id)
            .ok_or_else(vpc_not_found)
    }

    /// The vSwitch in `region_id`, or `InvalidVSwitchId.NotFound`.
    pub fn vswitch(&self, region_id: &str, id: &str) -> Result<&VSwitch, ErrorResponse> {
        self.vswitches
            .get(id)
            .filter(|v| v.region_id == region_id)
            .ok_or_else(vswitch_not_found)
    }

    /// The security group in `region_id`, or `InvalidSecurityGroupId.NotFound`.
    pub fn group(&self, region_id: &str, id: &str) -> Result<&SecurityGroup, ErrorResponse> {
        self.groups
            .get(id)
            .filter(|g| g.region_id == region_id)
            .ok_or_else(|| security_group_not_found(id))
    }

    /// Mutable [`Self::group`].
    pub fn group_mut(
        &mut self,
        region_id: &str,
        id: &str,
    ) -> Result<&mut SecurityGroup, ErrorResponse> {
        self.groups
            .get_mut(id)
            .filter(|g| g.region_id == region_id)
            .ok_or_else(|| security_group_not_found(id))
    }

    /// RunInstances' placement rules: at least one security group, all existing in the region
    /// and in one VPC; a vSwitch (required for VPC groups) of that VPC, Available, and in
    /// `zone_id` when one is given.
    pub fn placement(
        &self,
        region: &CatalogRegion,
        zone_id: Option<&str>,
        vswitch_id: Option<&str>,
        group_ids: &[String],
        now: Timestamp,
    ) -> Result<Placement, ErrorResponse> {
        if let Some(zone) = zone_id
            && !region.has_zone(zone)
        {
            return Err(ErrorResponse::not_found(
                "InvalidZoneId.NotFound",
                "The specified zoneId does not exist.",
            ));
        }
        let Some(first) = group_ids.first() else {
            return Err(ErrorResponse::missing("SecurityGroupId"));
        };
        let vpc_id = &self.group(region.id, first)?.vpc_id;
        for id in &group_ids[1..] {
            if &self.group(region.id, id)?.vpc_id != vpc_id {
                return Err(ErrorResponse::bad_request(
                    "InvalidSecurityGroup.VpcMismatch",
                    "The specified security groups are not in the same VPC.",
                ));
            }
        }
        let Some(vswitch_id) = vswitch_id else {
            return Err(ErrorResponse::missing("VSwitchId"));
        };
        let vswitch = self.vswitch(region.id, vswitch_id)?;
        if &vswitch.vpc_id != vpc_id {
            return Err(mismatch(
                "Specified security group and virtual switch are not in the same VPC.",
            ));
        }
        if zone_id.is_some_and(|z| z != vswitch.zone_id) {
            return Err(mismatch(
                "Specified virtual switch is not in the specified zone.",
            ));
        }
        if network_status(vswitch.ready_at, now) != "Available" {
            return Err(ErrorResponse::bad_request(
                "IncorrectVSwitchStatus",
                "The current status of virtual switch does not support this operation.",
            ));
        }
        Ok(Placement {
            zone_id: vswitch.zone_id.clone(),
            vpc_id: vpc_id.clone(),
            vswitch_id: vswitch.id.clone(),
            vswitch_cidr: vswitch.cidr,
        })
    }
}

/// Every account's network, seeded on first use.
#[derive(Debug, Default)]
pub struct NetworkStore {
    accounts: HashMap<Arc<str>, AccountNetwork>,
}

impl NetworkStore {
    /// The account's network (seeded with the defaults the first time).
    pub fn account(&mut self, account_id: &Arc<str>) -> &mut AccountNetwork {
        self.accounts
            .entry(account_id.clone())
            .or_insert_with(|| AccountNetwork::seeded(Timestamp::now()))
    }

    /// The account's network, if it has been used (read-only: seeds nothing).
    pub fn get(&self, account_id: &str) -> Option<&AccountNetwork> {
        self.accounts.get(account_id)
    }

    /// Every account's network seen so far.
    pub fn accounts(&self) -> impl Iterator<Item = (&Arc<str>, &AccountNetwork)> {
        self.accounts.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hangzhou() -> &'static CatalogRegion {
        catalog::region_by_id("cn-hangzhou").unwrap()
    }

    #[test]
    fn placement_rules() {
        let net = AccountNetwork::seeded(Timestamp::now());
        let r = hangzhou();
        let now = Timestamp::now();
        let sg = vec![defaults::security_group_id(r.id)];
        let vsw = defaults::vswitch_id("cn-hangzhou-h");
        let code = |zone: Option<&str>, vsw: Option<&str>, sg: &[String]| {
            net.placement(r, zone, vsw, sg, now).unwrap_err().code
        };
        assert_eq!(code(None, Some(&vsw), &[]), "MissingParameter");
        assert_eq!(code(None, None, &sg), "MissingParameter");
        assert_eq!(
            code(None, Some(&vsw), &["sg-nope".to_owned()]),
            "InvalidSecurityGroupId.NotFound"
        );
        assert_eq!(
            code(None, Some("vsw-nope"), &sg),
            "InvalidVSwitchId.NotFound"
        );
        assert_eq!(
            code(Some("cn-hangzhou-b"), Some(&vsw), &sg),
            "InvalidParameter.Mismatch"
        );
        assert_eq!(
            code(Some("cn-hangzhou-z"), Some(&vsw), &sg),
            "InvalidZoneId.NotFound"
        );
        // A group of another region does not exist here.
        assert_eq!(
            code(
                None,
                Some(&vsw),
                &[defaults::security_group_id("cn-beijing")]
            ),
            "InvalidSecurityGroupId.NotFound"
        );
        let p = net.placement(r, None, Some(&vsw), &sg, now).unwrap();
        assert_eq!(p.zone_id, "cn-hangzhou-h");
        assert_eq!(p.vpc_id, defaults::vpc_id("cn-hangzhou"));
    }
}
