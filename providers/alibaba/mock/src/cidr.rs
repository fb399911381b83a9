//! IPv4 CIDR blocks as VPC and vSwitch parameters and security-group rules carry them.

use std::fmt;
use std::net::Ipv4Addr;

/// An IPv4 block: network address (host bits zero) and prefix length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cidr {
    base: u32,
    prefix: u8,
}

fn mask(prefix: u8) -> u32 {
    if prefix == 0 {
        0
    } else {
        u32::MAX << (32 - u32::from(prefix.min(32)))
    }
}

impl Cidr {
    /// The block of `base` (host bits are cleared) and `prefix` (at most 32).
    pub fn new(base: u32, prefix: u8) -> Self {
        let prefix = prefix.min(32);
        Self {
            base: base & mask(prefix),
            prefix,
        }
    }

    /// Parses `a.b.c.d/n`; a bare address is a `/32`. Host bits must be zero unless `lenient`.
    pub fn parse(text: &str, lenient: bool) -> Option<Self> {
        let (addr, prefix) = match text.split_once('/') {
            Some((a, p)) => (a, p.parse::<u8>().ok().filter(|p| *p <= 32)?),
            None => (text, 32),
        };
        let base = u32::from(addr.parse::<Ipv4Addr>().ok()?);
        if !lenient && base & !mask(prefix) != 0 {
            return None;
        }
        Some(Self::new(base, prefix))
    }

    /// The network address as a number.
    pub fn base(&self) -> u32 {
        self.base
    }

    /// The prefix length.
    pub fn prefix(&self) -> u8 {
        self.prefix
    }

    /// Addresses in the block.
    pub fn size(&self) -> u64 {
        1_u64 << (32 - u32::from(self.prefix))
    }

    /// Whether `other` lies entirely inside this block.
    pub fn contains(&self, other: &Cidr) -> bool {
        other.prefix >= self.prefix && other.base & mask(self.prefix) == self.base
    }

    /// Whether the two blocks share an address.
    pub fn overlaps(&self, other: &Cidr) -> bool {
        self.contains(other) || other.contains(self)
    }

    /// The `n`-th address of the block (wrapping inside it).
    pub fn address(&self, n: u64) -> Ipv4Addr {
        let offset = u32::try_from(n % self.size()).unwrap_or(0);
        Ipv4Addr::from(self.base.wrapping_add(offset))
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", Ipv4Addr::from(self.base), self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_contains_overlaps() {
        let vpc = Cidr::parse("192.168.0.0/16", false).unwrap();
        let a = Cidr::parse("192.168.1.0/24", false).unwrap();
        let b = Cidr::parse("192.168.1.128/25", false).unwrap();
        let c = Cidr::parse("10.0.0.0/8", false).unwrap();
        assert!(vpc.contains(&a) && a.contains(&b) && !b.contains(&a));
        assert!(a.overlaps(&b) && b.overlaps(&a) && !a.overlaps(&c));
        assert!(Cidr::parse("192.168.1.1/24", false).is_none());
        assert_eq!(Cidr::parse("192.168.1.1/24", true).unwrap(), a);
        assert!(Cidr::parse("192.168.0.0/33", false).is_none());
        assert!(Cidr::parse("nope/8", false).is_none());
        assert_eq!(Cidr::parse("0.0.0.0/0", false).unwrap().size(), 1 << 32);
        assert_eq!(a.to_string(), "192.168.1.0/24");
        assert_eq!(a.address(258), Ipv4Addr::new(192, 168, 1, 2));
    }
}
