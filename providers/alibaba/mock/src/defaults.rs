//! The network a fresh mock account starts with, under deterministic IDs that look like real
//! ones: per region one default VPC (`172.16.0.0/12`), one default vSwitch in each zone (a `/20`
//! of it, in zone order) and one default security group in the default VPC.
//!
//! Samples and test fixtures name these IDs; on a real account they are random, so a user puts
//! their own there.
//!
//! ```
//! use alibaba_mock::defaults;
//! assert!(defaults::vswitch_id("cn-beijing-a").starts_with("vsw-"));
//! assert!(defaults::security_group_id("cn-beijing").starts_with("sg-"));
//! ```

use crate::catalog::{self, CatalogRegion};
use crate::cidr::Cidr;

/// Characters of the random-looking part of an ID.
const ID_LEN: usize = 22;

/// FNV-1a: stable across Rust releases and platforms (unlike `DefaultHasher`), so the IDs never
/// change.
fn fnv1a(seed: u64, input: &str) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325_u64 ^ seed;
    for byte in input.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// `prefix-` followed by [`ID_LEN`] lowercase letters and digits derived from `name`.
pub(crate) fn stable_id(prefix: &str, name: &str) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut id = String::with_capacity(prefix.len() + 1 + ID_LEN);
    id.push_str(prefix);
    id.push('-');
    let mut state = fnv1a(0, name);
    for round in 0..ID_LEN {
        if round % 8 == 0 {
            state = fnv1a(state, name);
        }
        let index = usize::try_from(state % 36).unwrap_or(0);
        id.push(char::from(ALPHABET[index]));
        state /= 36;
    }
    id
}

/// The default VPC of `region_id`.
pub fn vpc_id(region_id: &str) -> String {
    stable_id("vpc", &format!("default-vpc/{region_id}"))
}

/// The default vSwitch of `zone_id` (e.g. `cn-beijing-a`).
pub fn vswitch_id(zone_id: &str) -> String {
    stable_id("vsw", &format!("default-vswitch/{zone_id}"))
}

/// The default security group of `region_id`, in its default VPC.
pub fn security_group_id(region_id: &str) -> String {
    stable_id("sg", &format!("default-security-group/{region_id}"))
}

/// The CIDR block of every default VPC.
pub fn vpc_cidr() -> Cidr {
    Cidr::new(u32::from(std::net::Ipv4Addr::new(172, 16, 0, 0)), 12)
}

/// The CIDR block of the default vSwitch of the `index`-th zone of a region: consecutive `/20`s.
pub fn vswitch_cidr(index: usize) -> Cidr {
    let step = 1_u32 << 12;
    let offset = u32::try_from(index).unwrap_or(0).saturating_mul(step);
    Cidr::new(vpc_cidr().base().saturating_add(offset), 20)
}

/// The zones of a region with their default vSwitch IDs and CIDR blocks, in zone order.
pub fn region_vswitches(region: &CatalogRegion) -> Vec<(String, String, Cidr)> {
    region
        .zones()
        .enumerate()
        .map(|(i, zone)| {
            let id = vswitch_id(&zone);
            (zone, id, vswitch_cidr(i))
        })
        .collect()
}

/// The default vSwitch of the region's first zone, if the region is in the catalogue.
pub fn first_vswitch_id(region_id: &str) -> Option<String> {
    catalog::region_by_id(region_id)
        .ok()
        .map(|r| vswitch_id(&r.default_zone()))
}

/// How many deployment sets every region of a mock account has.
pub const DEPLOYMENT_SETS: usize = 3;

/// The `n`-th deployment set (`0..DEPLOYMENT_SETS`) of `region_id`, an Availability set.
pub fn deployment_set_id(region_id: &str, n: usize) -> String {
    stable_id("ds", &format!("deployment-set/{region_id}/{n}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_id(id: &str, prefix: &str) -> bool {
        id.strip_prefix(prefix).is_some_and(|rest| {
            rest.len() == ID_LEN
                && rest
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
    }

    #[test]
    fn ids_match_the_crd_patterns_and_never_change() {
        assert!(is_id(&vswitch_id("cn-beijing-a"), "vsw-"));
        assert!(is_id(&security_group_id("cn-beijing"), "sg-"));
        assert!(is_id(&vpc_id("cn-beijing"), "vpc-"));
        // Pinned: samples, fixtures and the README name these.
        assert_eq!(vswitch_id("cn-beijing-a"), PINNED_BEIJING_A_VSWITCH);
        assert_eq!(
            security_group_id("cn-beijing"),
            PINNED_BEIJING_SECURITY_GROUP
        );
    }

    const PINNED_BEIJING_A_VSWITCH: &str = "vsw-eafxvpknkjnma5xpiqaf0w";
    const PINNED_BEIJING_SECURITY_GROUP: &str = "sg-y2fkm5jxbput7ntjcm6tbw";

    #[test]
    fn ids_differ_per_zone_and_region() {
        let mut all: Vec<String> = catalog::regions()
            .iter()
            .flat_map(|r| {
                let mut ids: Vec<String> = r.zones().map(|z| vswitch_id(&z)).collect();
                ids.push(security_group_id(r.id));
                ids.push(vpc_id(r.id));
                ids
            })
            .collect();
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n);
    }

    #[test]
    fn default_vswitches_tile_the_vpc() {
        let beijing = catalog::region_by_id("cn-beijing").unwrap();
        let switches = region_vswitches(beijing);
        assert_eq!(switches.len(), 12);
        for (i, (_, _, cidr)) in switches.iter().enumerate() {
            assert!(vpc_cidr().contains(cidr));
            for (_, _, other) in &switches[..i] {
                assert!(!cidr.overlaps(other));
            }
        }
        assert_eq!(switches[1].2.to_string(), "172.16.16.0/20");
    }
}
