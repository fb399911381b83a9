//! IPv6 in the mock's VPCs: a VPC created with `EnableIpv6` gets a `/56` from the mock's
//! provider range, a vSwitch created with `Ipv6CidrBlock` (0–255, the last eight bits of its
//! prefix) the `/64` of that index, and an instance's primary ENI IPv6 addresses of its
//! vSwitch's `/64` (`AssignIpv6Addresses`).

use std::collections::BTreeSet;
use std::net::Ipv6Addr;

use crate::error::ErrorResponse;

/// The `/56` of the `seq`-th VPC with IPv6: `2408:4005:3XX:YY00::/56`.
pub fn vpc_block(seq: u64) -> u128 {
    let n = u128::from(seq & 0xffff);
    (0x2408_4005_0300_u128 << 80) | (n << 72)
}

/// The `/64` of index `index` inside a VPC's `/56`.
pub fn vswitch_block(vpc_block: u128, index: u8) -> u128 {
    vpc_block | (u128::from(index) << 64)
}

/// `prefix/len` as ECS prints it.
pub fn block_text(block: u128, len: u8) -> String {
    format!("{}/{len}", Ipv6Addr::from(block))
}

/// The most IPv6 addresses an ENI of `instance_type` holds. ECS scales it with the type; the
/// mock allows 1 for the smallest types (1 vCPU) and 10 otherwise.
pub fn limit_for(cpu: u32) -> usize {
    if cpu <= 1 { 1 } else { 10 }
}

/// `count` addresses of `block` (a `/64`) that `held` lacks, the lowest first from `::10`.
pub fn allocate(block: u128, held: &BTreeSet<Ipv6Addr>, count: usize) -> Vec<Ipv6Addr> {
    (0x10_u128..)
        .map(|n| Ipv6Addr::from(block | n))
        .filter(|ip| !held.contains(ip))
        .take(count)
        .collect()
}

/// Whether `ip` lies in the `/64` `block`.
pub fn in_block(block: u128, ip: Ipv6Addr) -> bool {
    u128::from(ip) >> 64 == block >> 64
}

/// `InvalidVSwitch.Ipv6NotTurnOn` (403).
pub fn not_turned_on(vswitch_id: &str) -> ErrorResponse {
    ErrorResponse::forbidden(
        "InvalidVSwitch.Ipv6NotTurnOn",
        format!("The specified VSwitch \"{vswitch_id}\" ipv6 function not turn on."),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_nest_and_print_as_ecs_does() {
        let vpc = vpc_block(3);
        assert_eq!(block_text(vpc, 56), "2408:4005:300:300::/56");
        let vsw = vswitch_block(vpc, 0x12);
        assert_eq!(block_text(vsw, 64), "2408:4005:300:312::/64");
        let ips = allocate(vsw, &BTreeSet::new(), 2);
        assert_eq!(ips[0].to_string(), "2408:4005:300:312::10");
        assert!(ips.iter().all(|ip| in_block(vsw, *ip)));
        let held = BTreeSet::from([ips[0]]);
        assert_eq!(allocate(vsw, &held, 1), vec![ips[1]]);
    }
}
