//! `SecurityGroup`: a VPC's firewall, with its rules kept as the spec lists them.

use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::network::{
    TAG_KEYS_MESSAGE, TAG_KEYS_RULE, TAG_VALUES_MESSAGE, TAG_VALUES_RULE, tag_values_schema,
};
use super::network::{Tags, VPC_ID_REFERENCE};
use crate::common::CloudStatus;
use crate::managed_kind::managed_spec;
use crate::references::{Reference, Selector};

managed_spec! {
    columns: [printcolumn(name = "VPC", type_ = "string", json_path = ".spec.forProvider.vpcId")];
    /// A security group.
    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
    #[kube(
        group = "alibabacloud.ferroplane.io",
        version = "v1alpha1",
        kind = "SecurityGroup",
        plural = "securitygroups",
        singular = "securitygroup",
        status = "SecurityGroupStatus",
        shortname = "sg",
        doc = "An Alibaba Cloud security group in a VPC. ferroplane creates it with CreateSecurityGroup, keeps the rules spec.forProvider.ingress and egress list (a missing one authorized; with rulesPolicy Exclusive, the default, a rule added elsewhere is revoked; with Additive other rules are left alone) and deletes it when the object is deleted (unless deletionPolicy is Orphan), waiting while instances use it."
    )]
    #[serde(rename_all = "camelCase")]
    pub struct SecurityGroupSpec {
        /// `Delete` deletes the group with the object; `Orphan` leaves it in the cloud.
        deletion_policy,
        management_policies,
        provider_config_ref,
        /// When set, ferroplane writes `securityGroupId` to this Secret in the object's namespace.
        write_connection_secret_to_ref,
        /// The desired security group, with the ECS API's parameter names.
        pub for_provider: SecurityGroupParameters,
    }
}

/// CreateSecurityGroup parameters and the rules.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(self.vpcId) || has(self.vpcIdRef) || has(self.vpcIdSelector)").message("set the VPC: vpcId, vpcIdRef or vpcIdSelector"))]
#[x_kube(validation = Rule::new("!has(oldSelf.vpcId) || has(self.vpcId)").message("vpcId cannot be removed once set"))]
pub struct SecurityGroupParameters {
    /// Region, e.g. `cn-beijing`; the VPC's. Immutable.
    #[schemars(
        regex(pattern = r"^[a-z]{2,4}-[a-z0-9-]+[0-9a-z]$"),
        length(min = 4, max = 64)
    )]
    #[x_kube(validation = Rule::new("self == oldSelf").message("regionId is immutable"))]
    pub region_id: String,
    /// The VPC, `vpc-...`. Written by ferroplane from `vpcIdRef` / `vpcIdSelector` when those are
    /// used. Immutable once set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^vpc-[a-z0-9]+$"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("vpcId is immutable; create a new SecurityGroup in the other VPC"))]
    pub vpc_id: Option<String>,
    /// A `VPC` object of this namespace whose ID becomes `vpcId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vpc_id_ref: Option<Reference>,
    /// Labels of a `VPC` object of this namespace whose ID becomes `vpcId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vpc_id_selector: Option<Selector>,
    /// Name, 2 to 128 characters, starting with a letter. Changed in place
    /// (ModifySecurityGroupAttribute); a change made elsewhere is reverted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 2, max = 128))]
    pub security_group_name: Option<String>,
    /// Description, 2 to 256 characters. Changed in place (ModifySecurityGroupAttribute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 2, max = 256))]
    pub description: Option<String>,
    /// Tags, at most 18 (ECS keeps 20 per group; ferroplane's UID and
    /// `ferroplane.io/rules-policy` tags are the others). Changed in place (TagResources /
    /// UntagResources): tags the group has beyond these are removed, except ferroplane's own and
    /// the cloud's (`acs:`, `aliyun`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("maxProperties" = 18))]
    #[schemars(transform = tag_values_schema)]
    #[x_kube(validation = Rule::new(TAG_KEYS_RULE).message(TAG_KEYS_MESSAGE))]
    #[x_kube(validation = Rule::new(TAG_VALUES_RULE).message(TAG_VALUES_MESSAGE))]
    pub tags: Option<Tags>,
    /// Inbound rules, kept as `rulesPolicy` says. Changed in place.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 200))]
    pub ingress: Vec<IngressRule>,
    /// Outbound rules, kept as `rulesPolicy` says (with none, a VPC group allows all outbound
    /// traffic). Changed in place.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 200))]
    pub egress: Vec<EgressRule>,
    /// How `ingress` and `egress` are kept. `Exclusive` (the default): they are the group's whole
    /// set, a rule made elsewhere is revoked. `Additive`: they are ensured and nothing else is
    /// revoked, so a shared group can carry rules of other objects (SecurityGroupRule) or other
    /// tools. Changed in place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules_policy: Option<RulesPolicy>,
}

/// How a SecurityGroup keeps the rules its spec lists.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum RulesPolicy {
    /// The listed rules are the group's whole set: any other rule is revoked, and a rule that
    /// differs from its listing (even in its description) is revoked and authorized again.
    #[default]
    Exclusive,
    /// The listed rules are ensured (authorized when missing); no rule is revoked, and a rule
    /// that exists already (the same protocol, ports, peer, policy and priority) counts as
    /// listed, whatever its description. Removing a rule from the list leaves it in the group.
    Additive,
}

impl RulesPolicy {
    /// Its name, as the `ferroplane.io/rules-policy` tag of a group carries it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Exclusive => "Exclusive",
            Self::Additive => "Additive",
        }
    }
}

/// Transport protocol of a rule.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum IpProtocol {
    Tcp,
    Udp,
    Icmp,
    Gre,
    All,
}

impl IpProtocol {
    /// The API value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Tcp => "tcp",
            Self::Udp => "udp",
            Self::Icmp => "icmp",
            Self::Gre => "gre",
            Self::All => "all",
        }
    }
}

/// What a rule does with matching traffic.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RulePolicy {
    #[default]
    Accept,
    Drop,
}

impl RulePolicy {
    /// The API value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Accept => "accept",
            Self::Drop => "drop",
        }
    }
}

/// An inbound rule.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("(self.ipProtocol == 'tcp' || self.ipProtocol == 'udp') ? !self.portRange.startsWith('-1') : self.portRange == '-1/-1'").message("portRange is start/end (1 to 65535) for tcp and udp, and -1/-1 for icmp, gre and all"))]
pub struct IngressRule {
    /// `tcp`, `udp`, `icmp`, `gre` or `all`.
    pub ip_protocol: IpProtocol,
    /// `22/22`, `8000/8080`; `-1/-1` for icmp, gre and all.
    #[schemars(regex(pattern = r"^(-1/-1|[0-9]{1,5}/[0-9]{1,5})$"))]
    pub port_range: String,
    /// Where traffic comes from, an IPv4 CIDR block such as `203.0.113.0/24`.
    #[schemars(regex(pattern = r"^([0-9]{1,3}\.){3}[0-9]{1,3}(/[0-9]{1,2})?$"))]
    pub source_cidr_ip: String,
    /// `accept` (default) or `drop`.
    #[serde(default)]
    pub policy: RulePolicy,
    /// 1 (highest, default) to 100.
    #[serde(default = "default_priority")]
    #[schemars(range(min = 1, max = 100))]
    pub priority: i32,
    /// Description, at most 512 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 512))]
    pub description: Option<String>,
}

/// An outbound rule.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("(self.ipProtocol == 'tcp' || self.ipProtocol == 'udp') ? !self.portRange.startsWith('-1') : self.portRange == '-1/-1'").message("portRange is start/end (1 to 65535) for tcp and udp, and -1/-1 for icmp, gre and all"))]
pub struct EgressRule {
    /// `tcp`, `udp`, `icmp`, `gre` or `all`.
    pub ip_protocol: IpProtocol,
    /// `443/443`; `-1/-1` for icmp, gre and all.
    #[schemars(regex(pattern = r"^(-1/-1|[0-9]{1,5}/[0-9]{1,5})$"))]
    pub port_range: String,
    /// Where traffic goes, an IPv4 CIDR block such as `0.0.0.0/0`.
    #[schemars(regex(pattern = r"^([0-9]{1,3}\.){3}[0-9]{1,3}(/[0-9]{1,2})?$"))]
    pub dest_cidr_ip: String,
    /// `accept` (default) or `drop`.
    #[serde(default)]
    pub policy: RulePolicy,
    /// 1 (highest, default) to 100.
    #[serde(default = "default_priority")]
    #[schemars(range(min = 1, max = 100))]
    pub priority: i32,
    /// Description, at most 512 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 512))]
    pub description: Option<String>,
}

fn default_priority() -> i32 {
    1
}

/// What ferroplane observed of the security group.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecurityGroupObservation {
    /// `sg-...`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_group_id: Option<String>,
    /// Its VPC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vpc_id: Option<String>,
    /// Inbound rules in the cloud.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ingress_rule_count: Option<i32>,
    /// Outbound rules in the cloud.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub egress_rule_count: Option<i32>,
}

/// Observed state of a SecurityGroup.
pub type SecurityGroupStatus = CloudStatus<SecurityGroupObservation>;

crate::impl_managed!(
    SecurityGroup,
    provider_config,
    references = &[VPC_ID_REFERENCE]
);
