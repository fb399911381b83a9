//! VPC, VSwitch and SecurityGroup manifests of existing resources, with the spec that matches
//! them: name, description and tags as the cloud has them (the attribute comparison changes
//! nothing then), the VPC by `vpcIdRef` when it is imported too, and a group's rules inline
//! (`ingress`, `egress`). Pure.

use alibaba_sdk::ecs::Permission;
use alibaba_sdk::vpc::{VSwitch as CloudVSwitch, Vpc as CloudVpc};
use ferroplane_apis::alibabacloud::{
    EgressRule, IngressRule, IpProtocol, RulePolicy, RulesPolicy, SecurityGroup,
    SecurityGroupParameters, SecurityGroupSpec, VPC, VPCParameters, VPCSpec, VSwitch,
    VSwitchParameters, VSwitchSpec,
};
use ferroplane_apis::references::Reference;

use super::fields::{letter_name, plain_name, text, user_tags};
use super::inventory::Group;
use super::manifest::{Common, Manifest};
use super::object_names::Names;

/// Most tags a VPC or vSwitch spec takes; a SecurityGroup takes one fewer.
const MAX_TAGS: usize = 19;

/// `id` as a reference when the import names it, or as the literal ID.
pub fn reference(names: &Names, id: &str) -> (Option<String>, Option<Reference>) {
    match names.get(id) {
        Some(name) => (
            None,
            Some(Reference {
                name: name.to_owned(),
            }),
        ),
        None => ((!id.is_empty()).then(|| id.to_owned()), None),
    }
}

pub fn vpc(common: &Common, name: &str, region: &str, found: &CloudVpc) -> Manifest {
    let object = VPC {
        metadata: common.metadata(name, &found.vpc_id),
        spec: VPCSpec {
            deletion_policy: common.management.deletion_policy(),
            management_policies: common.management.policies(),
            provider_config_ref: common.provider_config.clone(),
            write_connection_secret_to_ref: None,
            for_provider: VPCParameters {
                region_id: region.to_owned(),
                cidr_block: text(&found.cidr_block, 1, 64),
                vpc_name: plain_name(&found.vpc_name, 1, 128),
                description: text(&found.description, 1, 256),
                tags: user_tags(found.tags.pairs(), MAX_TAGS),
                enable_ipv6: None,
            },
        },
        status: None,
    };
    Manifest::of("VPC", name, &object)
}

pub fn vswitch(
    common: &Common,
    name: &str,
    region: &str,
    found: &CloudVSwitch,
    vpcs: &Names,
) -> Manifest {
    let (vpc_id, vpc_id_ref) = reference(vpcs, &found.vpc_id);
    let object = VSwitch {
        metadata: common.metadata(name, &found.vswitch_id),
        spec: VSwitchSpec {
            deletion_policy: common.management.deletion_policy(),
            management_policies: common.management.policies(),
            provider_config_ref: common.provider_config.clone(),
            write_connection_secret_to_ref: None,
            for_provider: VSwitchParameters {
                region_id: region.to_owned(),
                zone_id: found.zone_id.clone(),
                cidr_block: found.cidr_block.clone(),
                vpc_id,
                vpc_id_ref,
                vpc_id_selector: None,
                v_switch_name: plain_name(&found.vswitch_name, 1, 128),
                description: text(&found.description, 1, 256),
                tags: user_tags(found.tags.pairs(), MAX_TAGS),
                ipv6_cidr_block: None,
            },
        },
        status: None,
    };
    Manifest::of("VSwitch", name, &object)
}

/// A rule's parts as the spec lists them, when it takes them: an IPv4 peer, a protocol of the
/// schema's, ports as the protocol wants them, a priority of 1 to 100.
struct Listed {
    protocol: IpProtocol,
    port_range: String,
    peer: String,
    policy: RulePolicy,
    priority: i32,
    description: Option<String>,
}

fn listed(p: &Permission, peer: &str, other_peers: [&str; 3]) -> Option<Listed> {
    if peer.is_empty() || other_peers.iter().any(|o| !o.is_empty()) {
        return None;
    }
    let protocol = match p.ip_protocol.to_ascii_lowercase().as_str() {
        "tcp" => IpProtocol::Tcp,
        "udp" => IpProtocol::Udp,
        "icmp" => IpProtocol::Icmp,
        "gre" => IpProtocol::Gre,
        "all" => IpProtocol::All,
        _ => return None,
    };
    let ports_fit = match protocol {
        IpProtocol::Tcp | IpProtocol::Udp => !p.port_range.starts_with("-1"),
        _ => p.port_range == "-1/-1",
    };
    let policy = match p.policy.to_ascii_lowercase().as_str() {
        "accept" | "" => RulePolicy::Accept,
        "drop" => RulePolicy::Drop,
        _ => return None,
    };
    let priority = i32::try_from(p.priority)
        .ok()
        .filter(|n| (1..=100).contains(n))?;
    let description = match p.description.as_str() {
        "" => None,
        d if d.chars().count() <= 512 => Some(d.to_owned()),
        _ => return None,
    };
    ports_fit.then(|| Listed {
        protocol,
        port_range: p.port_range.clone(),
        peer: peer.to_owned(),
        policy,
        priority,
        description,
    })
}

/// The group's manifest, and whether some of its rules could not be listed (another group, an
/// IPv6 block or a prefix list as the peer): then its `rulesPolicy` is `Additive`, which keeps
/// them, instead of `Exclusive`, which would revoke them.
pub fn security_group(
    common: &Common,
    name: &str,
    region: &str,
    found: &Group,
    vpcs: &Names,
) -> (Manifest, bool) {
    let g = &found.group;
    let ingress: Vec<Option<IngressRule>> = found
        .ingress
        .iter()
        .map(|p| {
            listed(
                p,
                &p.source_cidr_ip,
                [
                    &p.ipv6_source_cidr_ip,
                    &p.source_group_id,
                    &p.source_prefix_list_id,
                ],
            )
            .map(|r| IngressRule {
                ip_protocol: r.protocol,
                port_range: r.port_range,
                source_cidr_ip: r.peer,
                policy: r.policy,
                priority: r.priority,
                description: r.description,
            })
        })
        .collect();
    let egress: Vec<Option<EgressRule>> = found
        .egress
        .iter()
        .map(|p| {
            listed(
                p,
                &p.dest_cidr_ip,
                [
                    &p.ipv6_dest_cidr_ip,
                    &p.dest_group_id,
                    &p.dest_prefix_list_id,
                ],
            )
            .map(|r| EgressRule {
                ip_protocol: r.protocol,
                port_range: r.port_range,
                dest_cidr_ip: r.peer,
                policy: r.policy,
                priority: r.priority,
                description: r.description,
            })
        })
        .collect();
    let unlisted = ingress.iter().any(Option::is_none) || egress.iter().any(Option::is_none);
    let (vpc_id, vpc_id_ref) = reference(vpcs, &g.vpc_id);
    let object = SecurityGroup {
        metadata: common.metadata(name, &g.security_group_id),
        spec: SecurityGroupSpec {
            deletion_policy: common.management.deletion_policy(),
            management_policies: common.management.policies(),
            provider_config_ref: common.provider_config.clone(),
            write_connection_secret_to_ref: None,
            for_provider: SecurityGroupParameters {
                region_id: region.to_owned(),
                vpc_id,
                vpc_id_ref,
                vpc_id_selector: None,
                security_group_name: letter_name(&g.security_group_name, 2, 128),
                description: text(&g.description, 2, 256),
                tags: user_tags(g.tags.pairs(), MAX_TAGS - 1),
                ingress: ingress.into_iter().flatten().collect(),
                egress: egress.into_iter().flatten().collect(),
                rules_policy: Some(if unlisted {
                    RulesPolicy::Additive
                } else {
                    RulesPolicy::Exclusive
                }),
            },
        },
        status: None,
    };
    (Manifest::of("SecurityGroup", name, &object), unlisted)
}
