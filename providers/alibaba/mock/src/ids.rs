//! Resource IDs like the real ones: a prefix, `-` and random lowercase letters and digits.

use rand::Rng as _;

const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";

/// `prefix-` and `len` random lowercase letters and digits.
fn random_id_of(prefix: &str, len: usize) -> String {
    let mut rng = rand::rng();
    let mut id = String::with_capacity(prefix.len() + 1 + len);
    id.push_str(prefix);
    id.push('-');
    for _ in 0..len {
        id.push(char::from(ALPHABET[rng.random_range(0..ALPHABET.len())]));
    }
    id
}

/// `prefix-` and 22 random characters, as network resources (VPCs, vSwitches, security groups
/// and their rules) carry.
pub fn random_id(prefix: &str) -> String {
    random_id_of(prefix, 22)
}

/// `prefix-` and 20 random characters, as instances (`i-`), disks (`d-`) and key pairs (`skp-`)
/// carry.
pub fn short_random_id(prefix: &str) -> String {
    random_id_of(prefix, 20)
}
