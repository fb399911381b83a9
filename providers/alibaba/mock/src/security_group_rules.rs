//! The rules of AuthorizeSecurityGroup(Egress) and RevokeSecurityGroup(Egress), read from their
//! parameters (flat, or `Permissions.N.*`) and checked as ECS checks them: one authorization
//! object per rule (an IPv4 or IPv6 CIDR block, a security group, or a prefix list of the
//! caller's in the region).

use jiff::Timestamp;

use crate::action::ActionContext;
use crate::catalog::CatalogRegion;
use crate::cidr::Cidr;
use crate::error::ErrorResponse;
use crate::ids::random_id;
use crate::network::{Direction, Rule};
use crate::prefix_lists::AddressFamily;
use crate::received_params::ReceivedParams;
use crate::store::Store;

/// Most rules one call may carry (`Permissions.N`).
pub const MAX_PERMISSIONS: usize = 100;

fn bad(code: &'static str, message: impl Into<String>) -> ErrorResponse {
    ErrorResponse::bad_request(code, message)
}

/// The names of one rule's parameters: flat (`IpProtocol`) or `Permissions.N.IpProtocol`.
struct RuleParams<'a> {
    p: &'a ReceivedParams,
    prefix: String,
}

impl RuleParams<'_> {
    fn name(&self, field: &str) -> String {
        format!("{}{field}", self.prefix)
    }

    fn get(&self, field: &str) -> Option<&str> {
        self.p.get(&self.name(field))
    }
}

/// `tcp`, `udp`, `icmp`, `icmpv6`, `gre` or `all` (any case).
fn protocol(r: &RuleParams<'_>) -> Result<String, ErrorResponse> {
    let name = r.name("IpProtocol");
    let value = r
        .get("IpProtocol")
        .ok_or_else(|| ErrorResponse::missing(&name))?
        .to_ascii_lowercase();
    if ["tcp", "udp", "icmp", "icmpv6", "gre", "all"].contains(&value.as_str()) {
        Ok(value)
    } else {
        Err(bad(
            "InvalidIpProtocol.Malformed",
            format!(
                "The specified parameter \"{name}\" is not valid: use TCP, UDP, ICMP, ICMPv6, GRE or ALL."
            ),
        ))
    }
}

/// `start/end` within 1–65535 for TCP and UDP; `-1/-1` for the others.
fn port_range(r: &RuleParams<'_>, protocol: &str) -> Result<String, ErrorResponse> {
    let name = r.name("PortRange");
    let value = r
        .get("PortRange")
        .ok_or_else(|| ErrorResponse::missing(&name))?;
    let malformed = || {
        bad(
            "InvalidPortRange.Malformed",
            format!(
                "The specified parameter \"{name}\" is not valid: TCP and UDP take start/end within 1-65535 (e.g. 22/22), other protocols -1/-1."
            ),
        )
    };
    let (start, end) = value.split_once('/').ok_or_else(malformed)?;
    let (start, end): (i32, i32) = (
        start.parse().map_err(|_| malformed())?,
        end.parse().map_err(|_| malformed())?,
    );
    let ok = match protocol {
        "tcp" | "udp" => (1..=65535).contains(&start) && (start..=65535).contains(&end),
        _ => start == -1 && end == -1,
    };
    if ok {
        Ok(value.to_owned())
    } else {
        Err(malformed())
    }
}

/// An IPv6 address or CIDR block (`2001:db8::/32`).
fn ipv6_block(text: &str) -> bool {
    let (addr, prefix) = text.split_once('/').unwrap_or((text, "128"));
    addr.parse::<std::net::Ipv6Addr>().is_ok() && prefix.parse::<u8>().is_ok_and(|p| p <= 128)
}

/// The prefix list a rule names: the caller's in the region (`InvalidPrefixListId.NotFound`),
/// of the family of a CIDR block given beside it (`InvalidParam.PrefixListAddressFamilyMismatch`;
/// a block of the same family beside it is still a second authorization object).
fn check_prefix_list(
    store: &Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    id: &str,
    v4: &str,
    v6: &str,
) -> Result<(), ErrorResponse> {
    let list = store
        .prefix_lists
        .get(&ctx.caller.account_id, region.id, id)?;
    let beside = [(v4, AddressFamily::Ipv4), (v6, AddressFamily::Ipv6)];
    if beside
        .iter()
        .any(|(value, family)| !value.is_empty() && *family != list.family)
    {
        return Err(bad(
            "InvalidParam.PrefixListAddressFamilyMismatch",
            format!(
                "The address family of the specified prefix list {id} ({}) does not match the specified CidrIp.",
                list.family.as_str()
            ),
        ));
    }
    Ok(())
}

/// One rule from its parameters; `Some(Rule)` with everything checked.
fn parse_rule(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    r: &RuleParams<'_>,
    direction: Direction,
) -> Result<Rule, ErrorResponse> {
    let ip_protocol = protocol(r)?;
    let port_range = port_range(r, &ip_protocol)?;
    let (cidr_field, v6_field, group_field, list_field, cidr_code) = match direction {
        Direction::Ingress => (
            "SourceCidrIp",
            "Ipv6SourceCidrIp",
            "SourceGroupId",
            "SourcePrefixListId",
            "InvalidSourceCidrIp.Malformed",
        ),
        Direction::Egress => (
            "DestCidrIp",
            "Ipv6DestCidrIp",
            "DestGroupId",
            "DestPrefixListId",
            "InvalidDestCidrIp.Malformed",
        ),
    };
    let v4 = r.get(cidr_field).unwrap_or_default();
    let v6 = r.get(v6_field).unwrap_or_default();
    let peer_group = r.get(group_field).unwrap_or_default();
    let peer_list = r.get(list_field).unwrap_or_default();
    let given = [v4, v6, peer_group, peer_list]
        .iter()
        .filter(|v| !v.is_empty())
        .count();
    if given == 0 {
        return Err(ErrorResponse::missing(&r.name(cidr_field)));
    }
    if !peer_list.is_empty() {
        check_prefix_list(store, ctx, region, peer_list, v4, v6)?;
    }
    if given > 1 {
        return Err(bad(
            "InvalidParameter",
            format!(
                "A rule has one authorization object: give one of \"{}\", \"{}\", \"{}\" and \"{}\".",
                r.name(cidr_field),
                r.name(v6_field),
                r.name(group_field),
                r.name(list_field)
            ),
        ));
    }
    if !v4.is_empty() && Cidr::parse(v4, true).is_none() {
        return Err(bad(
            cidr_code,
            format!(
                "The specified parameter \"{}\" is not a valid IPv4 address or CIDR block.",
                r.name(cidr_field)
            ),
        ));
    }
    if !v6.is_empty() && !ipv6_block(v6) {
        return Err(bad(
            "InvalidIpv6CidrIp.Malformed",
            format!(
                "The specified parameter \"{}\" is not a valid IPv6 address or CIDR block.",
                r.name(v6_field)
            ),
        ));
    }
    // One field holds the CIDR block of either family; the view tells them apart.
    let peer_cidr = if v4.is_empty() { v6 } else { v4 };
    if !peer_group.is_empty() {
        store
            .network
            .account(&ctx.caller.account_id)
            .group(region.id, peer_group)?;
    }
    let policy = match r.get("Policy").map(str::to_ascii_lowercase).as_deref() {
        None | Some("accept") => "accept",
        Some("drop") => "drop",
        Some(_) => {
            return Err(bad(
                "InvalidPolicy.Malformed",
                format!(
                    "The specified parameter \"{}\" is not valid: use accept or drop.",
                    r.name("Policy")
                ),
            ));
        }
    };
    let priority = match r.get("Priority") {
        None => 1,
        Some(v) => v
            .parse::<u32>()
            .ok()
            .filter(|p| (1..=100).contains(p))
            .ok_or_else(|| {
                bad(
                    "InvalidPriority.Malformed",
                    format!(
                        "The specified parameter \"{}\" is not valid: 1 to 100.",
                        r.name("Priority")
                    ),
                )
            })?,
    };
    let description = r.get("Description").unwrap_or_default();
    if description.chars().count() > 512
        || description.starts_with("http://")
        || description.starts_with("https://")
    {
        return Err(bad(
            "InvalidDescription.Malformed",
            "The specified rule Description is not valid: at most 512 characters, not starting with http:// or https://.",
        ));
    }
    let nic_type = match r.get("NicType") {
        None | Some("intranet") => "intranet",
        Some("internet") => "internet",
        Some(_) => return Err(ErrorResponse::invalid(&r.name("NicType"))),
    };
    Ok(Rule {
        id: random_id("sgr"),
        direction,
        ip_protocol,
        port_range,
        peer_cidr: peer_cidr.to_owned(),
        peer_group: peer_group.to_owned(),
        peer_prefix_list: peer_list.to_owned(),
        policy: policy.to_owned(),
        priority,
        description: description.to_owned(),
        nic_type: nic_type.to_owned(),
        created_at: Timestamp::now(),
    })
}

/// The rules of a call: every `Permissions.N`, or the flat parameters when there are none.
pub fn parse_rules(
    store: &mut Store,
    ctx: &ActionContext<'_>,
    region: &'static CatalogRegion,
    p: &ReceivedParams,
    direction: Direction,
) -> Result<Vec<Rule>, ErrorResponse> {
    let indices = p.indices("Permissions")?;
    if indices.len() > MAX_PERMISSIONS {
        return Err(ErrorResponse::invalid("Permissions"));
    }
    let prefixes: Vec<String> = if indices.is_empty() {
        vec![String::new()]
    } else {
        indices
            .iter()
            .map(|n| format!("Permissions.{n}."))
            .collect()
    };
    prefixes
        .into_iter()
        .map(|prefix| parse_rule(store, ctx, region, &RuleParams { p, prefix }, direction))
        .collect()
}
