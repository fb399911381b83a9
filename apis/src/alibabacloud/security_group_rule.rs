//! `SecurityGroupRule`: one inbound or outbound rule of a security group as an object of its own
//! (AuthorizeSecurityGroup / AuthorizeSecurityGroupEgress), so a shared group can carry rules of
//! many owners. Its peer is an IPv4 or IPv6 block, a security group or an ECS prefix list. Its
//! identity (group, direction, protocol, ports, peer) is fixed; its policy,
//! priority and description change in place.

use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::network::SECURITY_GROUP_KIND;
use super::security_group::RulePolicy;
use crate::common::CloudStatus;
use crate::managed_kind::managed_spec;
use crate::references::{Reference, ReferenceField, ReferenceValue, Selector};

/// The group the rule belongs to.
pub const SECURITY_GROUP_ID_REFERENCE: ReferenceField = ReferenceField {
    field: "securityGroupId",
    reference: "securityGroupIdRef",
    selector: "securityGroupIdSelector",
    many: false,
    target: SECURITY_GROUP_KIND,
    value: ReferenceValue::ExternalName,
};

/// The peer group of an inbound rule.
pub const SOURCE_GROUP_ID_REFERENCE: ReferenceField = ReferenceField {
    field: "sourceGroupId",
    reference: "sourceGroupIdRef",
    selector: "sourceGroupIdSelector",
    many: false,
    target: SECURITY_GROUP_KIND,
    value: ReferenceValue::ExternalName,
};

/// The peer group of an outbound rule.
pub const DEST_GROUP_ID_REFERENCE: ReferenceField = ReferenceField {
    field: "destGroupId",
    reference: "destGroupIdRef",
    selector: "destGroupIdSelector",
    many: false,
    target: SECURITY_GROUP_KIND,
    value: ReferenceValue::ExternalName,
};

/// The prefix of the description a rule is authorized with (`ferroplane:<uid>`), which finds it
/// again before its ID is stored; reserved, so no user description can pass for it.
pub const RULE_MARKER_PREFIX: &str = "ferroplane:";

managed_spec! {
    columns: [
        printcolumn(name = "GROUP", type_ = "string", json_path = ".spec.forProvider.securityGroupId"),
        printcolumn(name = "DIRECTION", type_ = "string", json_path = ".spec.forProvider.direction"),
        printcolumn(name = "PROTOCOL", type_ = "string", json_path = ".spec.forProvider.ipProtocol"),
        printcolumn(name = "PORTS", type_ = "string", json_path = ".spec.forProvider.portRange"),
        printcolumn(name = "RULE", type_ = "string", json_path = ".status.atProvider.securityGroupRuleId"),
    ];
    /// One rule of a security group.
    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
    #[kube(
        group = "alibabacloud.ferroplane.io",
        version = "v1alpha1",
        kind = "SecurityGroupRule",
        plural = "securitygrouprules",
        singular = "securitygrouprule",
        status = "SecurityGroupRuleStatus",
        shortname = "sgr",
        doc = "One inbound or outbound rule of an Alibaba Cloud security group (AuthorizeSecurityGroup / AuthorizeSecurityGroupEgress), identified by the SecurityGroupRuleId ECS gives it. Its peer is an IPv4 or IPv6 block, a security group or an ECS prefix list (sourcePrefixListId / destPrefixListId). The group, direction, protocol, ports and peer are fixed; policy, priority and description change in place (ModifySecurityGroupRule / ModifySecurityGroupEgressRule) and a change made elsewhere is reverted. A rule revoked elsewhere is authorized again. An identical rule that another owner put in the group is never adopted (RuleExists), and a group whose SecurityGroup object keeps its rules Exclusive is refused (RulesPolicyExclusive): give that group rulesPolicy Additive. Deleting the object revokes the rule by its ID (RevokeSecurityGroup) unless deletionPolicy is Orphan."
    )]
    #[serde(rename_all = "camelCase")]
    pub struct SecurityGroupRuleSpec {
        /// `Delete` revokes the rule with the object; `Orphan` leaves it in the group.
        deletion_policy,
        management_policies,
        provider_config_ref,
        /// When set, ferroplane writes `securityGroupRuleId` and `securityGroupId` to this Secret
        /// in the object's namespace.
        write_connection_secret_to_ref,
        /// The desired rule, with the ECS API's parameter names.
        pub for_provider: SecurityGroupRuleParameters,
    }
}

/// Which traffic the rule governs.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RuleDirection {
    /// Inbound: the rule names a source.
    Ingress,
    /// Outbound: the rule names a destination.
    Egress,
}

/// Transport protocol of a rule (`icmpv6` only with an IPv6 peer).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RuleProtocol {
    Tcp,
    Udp,
    Icmp,
    Icmpv6,
    Gre,
    All,
}

impl RuleProtocol {
    /// The API value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Tcp => "tcp",
            Self::Udp => "udp",
            Self::Icmp => "icmp",
            Self::Icmpv6 => "icmpv6",
            Self::Gre => "gre",
            Self::All => "all",
        }
    }
}

const PEER_COUNT: &str = "(has(self.sourceCidrIp) ? 1 : 0) + (has(self.ipv6SourceCidrIp) ? 1 : 0) + (has(self.sourceGroupId) || has(self.sourceGroupIdRef) || has(self.sourceGroupIdSelector) ? 1 : 0) + (has(self.sourcePrefixListId) ? 1 : 0) + (has(self.destCidrIp) ? 1 : 0) + (has(self.ipv6DestCidrIp) ? 1 : 0) + (has(self.destGroupId) || has(self.destGroupIdRef) || has(self.destGroupIdSelector) ? 1 : 0) + (has(self.destPrefixListId) ? 1 : 0) == 1";

/// AuthorizeSecurityGroup(Egress) parameters of one rule.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(self.securityGroupId) || has(self.securityGroupIdRef) || has(self.securityGroupIdSelector)").message("set the group: securityGroupId, securityGroupIdRef or securityGroupIdSelector"))]
#[x_kube(validation = Rule::new(PEER_COUNT).message("set exactly one peer: sourceCidrIp, ipv6SourceCidrIp, sourceGroupId (or its Ref/Selector) or sourcePrefixListId for ingress; destCidrIp, ipv6DestCidrIp, destGroupId (or its Ref/Selector) or destPrefixListId for egress"))]
#[x_kube(validation = Rule::new("self.direction == 'ingress' ? !has(self.destCidrIp) && !has(self.ipv6DestCidrIp) && !has(self.destGroupId) && !has(self.destGroupIdRef) && !has(self.destGroupIdSelector) && !has(self.destPrefixListId) : !has(self.sourceCidrIp) && !has(self.ipv6SourceCidrIp) && !has(self.sourceGroupId) && !has(self.sourceGroupIdRef) && !has(self.sourceGroupIdSelector) && !has(self.sourcePrefixListId)").message("an ingress rule names a source (source…), an egress rule a destination (dest…)"))]
#[x_kube(validation = Rule::new("(self.ipProtocol == 'tcp' || self.ipProtocol == 'udp') ? !self.portRange.startsWith('-1') : self.portRange == '-1/-1'").message("portRange is start/end (1 to 65535) for tcp and udp, and -1/-1 for icmp, icmpv6, gre and all"))]
#[x_kube(validation = Rule::new("self.ipProtocol != 'icmpv6' || has(self.ipv6SourceCidrIp) || has(self.ipv6DestCidrIp)").message("icmpv6 needs an IPv6 peer: ipv6SourceCidrIp or ipv6DestCidrIp"))]
#[x_kube(validation = Rule::new("has(self.sourceCidrIp) == has(oldSelf.sourceCidrIp) && has(self.ipv6SourceCidrIp) == has(oldSelf.ipv6SourceCidrIp) && has(self.sourcePrefixListId) == has(oldSelf.sourcePrefixListId) && has(self.destCidrIp) == has(oldSelf.destCidrIp) && has(self.ipv6DestCidrIp) == has(oldSelf.ipv6DestCidrIp) && has(self.destPrefixListId) == has(oldSelf.destPrefixListId)").message("the peer is immutable; create a new SecurityGroupRule"))]
#[x_kube(validation = Rule::new("(!has(oldSelf.securityGroupId) || has(self.securityGroupId)) && (!has(oldSelf.sourceGroupId) || has(self.sourceGroupId)) && (!has(oldSelf.destGroupId) || has(self.destGroupId))").message("securityGroupId, sourceGroupId and destGroupId cannot be removed once set"))]
pub struct SecurityGroupRuleParameters {
    /// Region of the group, e.g. `cn-beijing`. Immutable.
    #[schemars(
        regex(pattern = r"^[a-z]{2,4}-[a-z0-9-]+[0-9a-z]$"),
        length(min = 4, max = 64)
    )]
    #[x_kube(validation = Rule::new("self == oldSelf").message("regionId is immutable; create a new SecurityGroupRule"))]
    pub region_id: String,
    /// The group, `sg-...`. Written by ferroplane from `securityGroupIdRef` /
    /// `securityGroupIdSelector` when those are used. Immutable once set. The group's
    /// SecurityGroup object, if any, must keep its rules `Additive`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^sg-[a-z0-9]+$"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("securityGroupId is immutable; create a new SecurityGroupRule in the other group"))]
    pub security_group_id: Option<String>,
    /// A `SecurityGroup` object of this namespace whose ID becomes `securityGroupId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_group_id_ref: Option<Reference>,
    /// Labels of a `SecurityGroup` object of this namespace whose ID becomes `securityGroupId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_group_id_selector: Option<Selector>,
    /// `ingress` (inbound, the peer is a source) or `egress` (outbound, the peer is a
    /// destination). Immutable.
    #[x_kube(validation = Rule::new("self == oldSelf").message("direction is immutable; create a new SecurityGroupRule"))]
    pub direction: RuleDirection,
    /// `tcp`, `udp`, `icmp`, `icmpv6` (IPv6 peers), `gre` or `all`. Immutable.
    #[x_kube(validation = Rule::new("self == oldSelf").message("ipProtocol is immutable; create a new SecurityGroupRule"))]
    pub ip_protocol: RuleProtocol,
    /// `22/22`, `8000/8080`; `-1/-1` for icmp, icmpv6, gre and all. Immutable.
    #[schemars(regex(pattern = r"^(-1/-1|[0-9]{1,5}/[0-9]{1,5})$"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("portRange is immutable; create a new SecurityGroupRule"))]
    pub port_range: String,
    /// Ingress: the IPv4 CIDR block traffic comes from, e.g. `203.0.113.0/24`. Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^([0-9]{1,3}\.){3}[0-9]{1,3}(/[0-9]{1,2})?$"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("sourceCidrIp is immutable; create a new SecurityGroupRule"))]
    pub source_cidr_ip: Option<String>,
    /// Ingress: the IPv6 CIDR block traffic comes from, e.g. `2001:db8::/32`. Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^[0-9a-fA-F:]+(/[0-9]{1,3})?$"), length(max = 64))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("ipv6SourceCidrIp is immutable; create a new SecurityGroupRule"))]
    pub ipv6_source_cidr_ip: Option<String>,
    /// Ingress: the security group traffic comes from, `sg-...`. Written by ferroplane from
    /// `sourceGroupIdRef` / `sourceGroupIdSelector`. Immutable once set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^sg-[a-z0-9]+$"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("sourceGroupId is immutable; create a new SecurityGroupRule"))]
    pub source_group_id: Option<String>,
    /// A `SecurityGroup` object of this namespace whose ID becomes `sourceGroupId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_group_id_ref: Option<Reference>,
    /// Labels of a `SecurityGroup` object of this namespace whose ID becomes `sourceGroupId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_group_id_selector: Option<Selector>,
    /// Ingress: the ECS prefix list traffic comes from, `pl-...` (CreatePrefixList): the rule
    /// admits every block of the list, as the list changes. Of the rule's region and account;
    /// ECS refuses to delete the list while the rule names it. Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^pl-[a-z0-9]+$"), length(max = 64))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("sourcePrefixListId is immutable; create a new SecurityGroupRule"))]
    pub source_prefix_list_id: Option<String>,
    /// Egress: the IPv4 CIDR block traffic goes to, e.g. `0.0.0.0/0`. Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^([0-9]{1,3}\.){3}[0-9]{1,3}(/[0-9]{1,2})?$"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("destCidrIp is immutable; create a new SecurityGroupRule"))]
    pub dest_cidr_ip: Option<String>,
    /// Egress: the IPv6 CIDR block traffic goes to, e.g. `::/0`. Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^[0-9a-fA-F:]+(/[0-9]{1,3})?$"), length(max = 64))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("ipv6DestCidrIp is immutable; create a new SecurityGroupRule"))]
    pub ipv6_dest_cidr_ip: Option<String>,
    /// Egress: the security group traffic goes to, `sg-...`. Written by ferroplane from
    /// `destGroupIdRef` / `destGroupIdSelector`. Immutable once set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^sg-[a-z0-9]+$"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("destGroupId is immutable; create a new SecurityGroupRule"))]
    pub dest_group_id: Option<String>,
    /// A `SecurityGroup` object of this namespace whose ID becomes `destGroupId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dest_group_id_ref: Option<Reference>,
    /// Labels of a `SecurityGroup` object of this namespace whose ID becomes `destGroupId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dest_group_id_selector: Option<Selector>,
    /// Egress: the ECS prefix list traffic goes to, `pl-...` (CreatePrefixList): the rule
    /// admits every block of the list, as the list changes. Of the rule's region and account;
    /// ECS refuses to delete the list while the rule names it. Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^pl-[a-z0-9]+$"), length(max = 64))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("destPrefixListId is immutable; create a new SecurityGroupRule"))]
    pub dest_prefix_list_id: Option<String>,
    /// `accept` (when unset) or `drop`. Changed in place; a change made elsewhere is reverted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<RulePolicy>,
    /// 1 (highest, when unset) to 100. Changed in place; a change made elsewhere is reverted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 100))]
    pub priority: Option<u32>,
    /// Description, at most 512 characters, not starting with `http://`, `https://` or
    /// `ferroplane:`. Changed in place; a change made elsewhere is reverted. Unset, the rule
    /// keeps the `ferroplane:<uid>` marker it is authorized with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    #[x_kube(validation = Rule::new("!self.startsWith('http://') && !self.startsWith('https://') && !self.startsWith('ferroplane:')").message("description cannot start with http://, https:// or ferroplane: (reserved for ferroplane's marker)"))]
    pub description: Option<String>,
}

/// What ferroplane observed of the rule.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecurityGroupRuleObservation {
    /// `sgr-...`, the rule's external name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_group_rule_id: Option<String>,
    /// The group that holds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_group_id: Option<String>,
    /// `Accept` or `Drop`, as ECS reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    /// As ECS reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<u32>,
    /// As ECS reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// Observed state of a SecurityGroupRule.
pub type SecurityGroupRuleStatus = CloudStatus<SecurityGroupRuleObservation>;

crate::impl_managed!(
    SecurityGroupRule,
    provider_config,
    references = &[
        SECURITY_GROUP_ID_REFERENCE,
        SOURCE_GROUP_ID_REFERENCE,
        DEST_GROUP_ID_REFERENCE
    ]
);
