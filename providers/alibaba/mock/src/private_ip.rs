//! Primary private IPv4 addresses in a vSwitch, with ECS's rules: an address named by the caller
//! must parse, lie in the vSwitch's CIDR block, not be one of the block's reserved addresses (the
//! first and the last three) and not be held by another instance; one chosen by the mock is the
//! first free usable address from a starting point.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use crate::cidr::Cidr;
use crate::error::ErrorResponse;

/// Where the address is asked for: ECS names the out-of-block refusal differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Asked {
    /// `RunInstances` / `CreateInstance`: `InvalidPrivateIpAddress`.
    AtLaunch,
    /// `ModifyInstanceVpcAttribute`: `InvalidPrivateIpAddress.Mismatch`.
    OnMove,
}

/// `text` as an IPv4 address, or `InvalidPrivateIpAddress.Malformed`.
pub fn parse(text: &str) -> Result<Ipv4Addr, ErrorResponse> {
    text.parse().map_err(|_| {
        ErrorResponse::bad_request(
            "InvalidPrivateIpAddress.Malformed",
            "Specified private IP address is malformed.",
        )
    })
}

/// Whether `ip` is in `block` and not reserved by the vSwitch.
pub fn usable(block: Cidr, ip: Ipv4Addr) -> bool {
    let ip = u32::from(ip);
    let first = block.base();
    let last = u64::from(first) + block.size() - 1;
    u64::from(ip) > u64::from(first)
        && u64::from(ip) + 3 <= last
        && block.contains(&Cidr::new(ip, 32))
}

/// Checks an address the caller asked for against the vSwitch's block and the addresses held.
pub fn check(
    ip: Ipv4Addr,
    block: Cidr,
    held: &BTreeSet<Ipv4Addr>,
    asked: Asked,
) -> Result<Ipv4Addr, ErrorResponse> {
    if !usable(block, ip) {
        return Err(match asked {
            Asked::AtLaunch => ErrorResponse::bad_request(
                "InvalidPrivateIpAddress",
                "Specified private IP address is not in the CIDR block of virtual switch.",
            ),
            Asked::OnMove => ErrorResponse::bad_request(
                "InvalidPrivateIpAddress.Mismatch",
                "Specified private IP address isn't in the CIDR block of virtual switch.",
            ),
        });
    }
    if held.contains(&ip) {
        return Err(duplicated());
    }
    Ok(ip)
}

/// `InvalidPrivateIpAddress.Duplicated`.
pub fn duplicated() -> ErrorResponse {
    ErrorResponse::bad_request(
        "InvalidPrivateIpAddress.Duplicated",
        "Specified private IP address is duplicated.",
    )
}

/// Whether every usable address of `block` is held.
pub fn exhausted(block: Cidr, held: &BTreeSet<Ipv4Addr>) -> bool {
    let held = u64::try_from(held.len()).unwrap_or(u64::MAX);
    held >= block.size().saturating_sub(4)
}

/// The first usable address not held, from `start` on (wrapping inside the block).
pub fn allocate(
    block: Cidr,
    start: Ipv4Addr,
    held: &BTreeSet<Ipv4Addr>,
) -> Result<Ipv4Addr, ErrorResponse> {
    let offset = u64::from(u32::from(start).wrapping_sub(block.base()));
    (0..block.size())
        .map(|n| block.address(offset + n))
        .find(|ip| usable(block, *ip) && !held.contains(ip))
        .ok_or_else(|| {
            ErrorResponse::forbidden(
                "InvalidVSwitchId.IpNotEnough",
                "The specified VSwitch has not enough IpAddress.",
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block() -> Cidr {
        Cidr::parse("172.16.16.0/24", false).expect("cidr")
    }

    #[test]
    fn the_first_and_the_last_three_addresses_are_reserved() {
        let b = block();
        assert!(!usable(b, Ipv4Addr::new(172, 16, 16, 0)));
        assert!(usable(b, Ipv4Addr::new(172, 16, 16, 1)));
        assert!(usable(b, Ipv4Addr::new(172, 16, 16, 252)));
        assert!(!usable(b, Ipv4Addr::new(172, 16, 16, 253)));
        assert!(!usable(b, Ipv4Addr::new(172, 16, 17, 10)));
    }

    #[test]
    fn asked_addresses_are_refused_with_ecs_codes() {
        let held = BTreeSet::from([Ipv4Addr::new(172, 16, 16, 10)]);
        let code = |ip, asked| check(ip, block(), &held, asked).unwrap_err().code;
        assert_eq!(
            code(Ipv4Addr::new(10, 0, 0, 5), Asked::AtLaunch),
            "InvalidPrivateIpAddress"
        );
        assert_eq!(
            code(Ipv4Addr::new(10, 0, 0, 5), Asked::OnMove),
            "InvalidPrivateIpAddress.Mismatch"
        );
        assert_eq!(
            code(Ipv4Addr::new(172, 16, 16, 10), Asked::AtLaunch),
            "InvalidPrivateIpAddress.Duplicated"
        );
        assert_eq!(
            parse("172.16.16").unwrap_err().code,
            "InvalidPrivateIpAddress.Malformed"
        );
    }

    #[test]
    fn allocation_skips_held_and_reserved_addresses() {
        let held = BTreeSet::from([Ipv4Addr::new(172, 16, 16, 10)]);
        assert_eq!(
            allocate(block(), Ipv4Addr::new(172, 16, 16, 10), &held),
            Ok(Ipv4Addr::new(172, 16, 16, 11))
        );
        assert_eq!(
            allocate(block(), Ipv4Addr::new(172, 16, 16, 253), &held),
            Ok(Ipv4Addr::new(172, 16, 16, 1))
        );
    }
}
