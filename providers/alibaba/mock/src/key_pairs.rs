//! SSH key pairs: the OpenSSH public-key format ImportKeyPair accepts, fingerprints, the key
//! CreateKeyPair generates (an RSA 2048 key, its private half returned once as PEM PKCS#8 and
//! never kept), and the key-pair store per account and region.

use std::collections::BTreeMap;
use std::sync::Arc;

use aws_lc_rs::encoding::AsDer as _;
use aws_lc_rs::signature::KeyPair as _;
use base64::Engine as _;
use jiff::Timestamp;

use crate::error::ErrorResponse;
use crate::ids::short_random_id;

/// Most key pairs an account holds per region.
pub const MAX_KEY_PAIRS_PER_REGION: usize = 500;

/// Key types ImportKeyPair accepts, as ECS documents them.
const KEY_TYPES: &[&str] = &[
    "ssh-rsa",
    "ssh-dss",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "ssh-rsa-cert-v00@openssh.com",
    "ssh-dss-cert-v00@openssh.com",
    "ssh-rsa-cert-v01@openssh.com",
    "ssh-dss-cert-v01@openssh.com",
    "ecdsa-sha2-nistp256-cert-v01@openssh.com",
    "ecdsa-sha2-nistp384-cert-v01@openssh.com",
    "ecdsa-sha2-nistp521-cert-v01@openssh.com",
];

/// One key pair.
#[derive(Debug, Clone)]
pub struct KeyPair {
    pub name: String,
    /// `skp-…`.
    pub id: String,
    pub seq: u64,
    /// `aa:bb:…`: MD5 of the public key blob.
    pub fingerprint: String,
    /// `ssh-rsa AAAA…` (without the comment).
    pub public_key: String,
    pub created_at: Timestamp,
    pub resource_group_id: String,
    pub tags: Vec<(String, String)>,
}

/// `InvalidPublicKeyBody.Malformed` (400).
fn malformed_public_key(why: &str) -> ErrorResponse {
    ErrorResponse::bad_request(
        "InvalidPublicKeyBody.Malformed",
        format!(
            "The PublicKeyBody format is not supported: {why}. Give an OpenSSH public key line such as \"ssh-rsa AAAAB3Nza... comment\"."
        ),
    )
}

/// Reads one SSH wire string (`uint32` length, bytes) from `blob`.
fn wire_string(blob: &[u8]) -> Option<(&[u8], &[u8])> {
    let len = u32::from_be_bytes(blob.get(..4)?.try_into().ok()?) as usize;
    let rest = &blob[4..];
    (rest.len() >= len).then(|| rest.split_at(len))
}

/// A checked OpenSSH public key line: its type, blob and canonical text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKey {
    pub key_type: String,
    pub blob: Vec<u8>,
}

impl PublicKey {
    /// Parses `<type> <base64 blob> [comment]`: the type must be one ECS accepts and the blob
    /// must be well-formed and name the same type.
    pub fn parse(line: &str) -> Result<Self, ErrorResponse> {
        let mut fields = line.split_whitespace();
        let key_type = fields
            .next()
            .ok_or_else(|| malformed_public_key("it is empty"))?;
        if !KEY_TYPES.contains(&key_type) {
            return Err(malformed_public_key(&format!(
                "the key type {} is not one of {}",
                crate::error::truncate(key_type, 40),
                KEY_TYPES.join(", ")
            )));
        }
        let encoded = fields
            .next()
            .ok_or_else(|| malformed_public_key("the Base64 key data is missing"))?;
        let blob = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .map_err(|_| malformed_public_key("the key data is not Base64"))?;
        let (inner_type, mut rest) =
            wire_string(&blob).ok_or_else(|| malformed_public_key("the key data is truncated"))?;
        if inner_type != key_type.as_bytes() {
            return Err(malformed_public_key(
                "the key data is of another type than the line names",
            ));
        }
        // Every accepted type carries at least two more fields (RSA: e, n; DSA: p, q, g, y;
        // ECDSA: curve, point; certificates: nonce, key...).
        for _ in 0..2 {
            let (_, after) = wire_string(rest)
                .filter(|(field, _)| !field.is_empty())
                .ok_or_else(|| malformed_public_key("the key data is truncated"))?;
            rest = after;
        }
        Ok(Self {
            key_type: key_type.to_owned(),
            blob,
        })
    }

    /// `<type> <base64>`.
    pub fn to_line(&self) -> String {
        format!(
            "{} {}",
            self.key_type,
            base64::engine::general_purpose::STANDARD.encode(&self.blob)
        )
    }

    /// The colon-separated MD5 of the blob, as ECS reports `KeyPairFingerPrint`.
    pub fn fingerprint(&self) -> String {
        crate::md5::digest(&self.blob)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(":")
    }
}

fn put_string(out: &mut Vec<u8>, bytes: &[u8]) {
    let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(bytes);
}

fn put_mpint(out: &mut Vec<u8>, magnitude: &[u8]) {
    if magnitude.first().is_some_and(|b| b & 0x80 != 0) {
        let mut padded = Vec::with_capacity(magnitude.len() + 1);
        padded.push(0);
        padded.extend_from_slice(magnitude);
        put_string(out, &padded);
    } else {
        put_string(out, magnitude);
    }
}

/// A new RSA 2048 key: its public key and its private key as PEM PKCS#8.
pub fn generate() -> Result<(PublicKey, String), ErrorResponse> {
    let failed = || {
        ErrorResponse::new(
            500,
            "InternalError",
            "The request processing has failed due to some unknown error: the key could not be generated.",
        )
    };
    let pair = aws_lc_rs::rsa::KeyPair::generate(aws_lc_rs::rsa::KeySize::Rsa2048)
        .map_err(|_| failed())?;
    let public = pair.public_key();
    let mut blob = Vec::new();
    put_string(&mut blob, b"ssh-rsa");
    put_mpint(
        &mut blob,
        public.exponent().big_endian_without_leading_zero(),
    );
    put_mpint(
        &mut blob,
        public.modulus().big_endian_without_leading_zero(),
    );
    let der = pair.as_der().map_err(|_| failed())?;
    let encoded = base64::engine::general_purpose::STANDARD.encode(der.as_ref());
    let mut pem = String::from("-----BEGIN PRIVATE KEY-----\n");
    for line in encoded.as_bytes().chunks(64) {
        pem.push_str(std::str::from_utf8(line).unwrap_or_default());
        pem.push('\n');
    }
    pem.push_str("-----END PRIVATE KEY-----\n");
    Ok((
        PublicKey {
            key_type: "ssh-rsa".to_owned(),
            blob,
        },
        pem,
    ))
}

/// `KeyPairName`: 2–128 characters, starting with a letter, of letters, digits, `:`, `_`, `-`
/// and `.`, not a URL.
pub fn check_name(name: &str) -> Result<(), ErrorResponse> {
    let len = name.chars().count();
    let ok = (2..=128).contains(&len)
        && name.chars().next().is_some_and(char::is_alphabetic)
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, ':' | '_' | '-' | '.'))
        && !name.starts_with("http://")
        && !name.starts_with("https://");
    if ok {
        Ok(())
    } else {
        Err(ErrorResponse::bad_request(
            "InvalidKeyPairName.Malformed",
            "Specified Key Pair name is not valid: 2 to 128 characters, starting with a letter, of letters, digits, ':', '_', '-' and '.'.",
        ))
    }
}

/// `InvalidKeyPairName.NotFound` with the given status (RunInstances answers 404, the attach
/// actions 400).
pub fn not_found(status: u16, name: &str) -> ErrorResponse {
    ErrorResponse::new(
        status,
        "InvalidKeyPairName.NotFound",
        format!(
            "The specified KeyPairName \"{}\" does not exist in our records.",
            crate::error::truncate(name, 128)
        ),
    )
}

/// Every key pair, per (account, region), by name.
#[derive(Debug, Default)]
pub struct KeyPairStore {
    pairs: BTreeMap<(Arc<str>, &'static str), BTreeMap<String, KeyPair>>,
    next_seq: u64,
}

impl KeyPairStore {
    /// The key pair, if the account has it in the region.
    pub fn get(
        &self,
        account_id: &Arc<str>,
        region_id: &'static str,
        name: &str,
    ) -> Option<&KeyPair> {
        self.pairs
            .get(&(account_id.clone(), region_id))
            .and_then(|m| m.get(name))
    }

    /// Mutable [`KeyPairStore::get`].
    pub fn get_mut(
        &mut self,
        account_id: &Arc<str>,
        region_id: &'static str,
        name: &str,
    ) -> Option<&mut KeyPair> {
        self.pairs
            .get_mut(&(account_id.clone(), region_id))
            .and_then(|m| m.get_mut(name))
    }

    /// The account's key pairs in a region, oldest first.
    pub fn in_region(&self, account_id: &Arc<str>, region_id: &'static str) -> Vec<&KeyPair> {
        let mut all: Vec<&KeyPair> = self
            .pairs
            .get(&(account_id.clone(), region_id))
            .map(|m| m.values().collect())
            .unwrap_or_default();
        all.sort_unstable_by_key(|k| k.seq);
        all
    }

    /// Adds a key pair; `KeyPair.AlreadyExist` for a name in use, `QuotaExceed.KeyPair` past
    /// the quota.
    pub fn add(
        &mut self,
        (account_id, region_id): (&Arc<str>, &'static str),
        name: &str,
        public_key: &PublicKey,
        resource_group_id: &str,
        tags: Vec<(String, String)>,
        now: Timestamp,
    ) -> Result<&KeyPair, ErrorResponse> {
        let seq = self.next_seq;
        let scope = self
            .pairs
            .entry((account_id.clone(), region_id))
            .or_default();
        if scope.contains_key(name) {
            return Err(ErrorResponse::bad_request(
                "KeyPair.AlreadyExist",
                "The key pair already exist: choose another KeyPairName or delete the existing one.",
            ));
        }
        if scope.len() >= MAX_KEY_PAIRS_PER_REGION {
            return Err(ErrorResponse::forbidden(
                "QuotaExceed.KeyPair",
                format!(
                    "The key pair quota exceeds: at most {MAX_KEY_PAIRS_PER_REGION} per region."
                ),
            ));
        }
        self.next_seq += 1;
        let pair = KeyPair {
            name: name.to_owned(),
            id: short_random_id("skp"),
            seq,
            fingerprint: public_key.fingerprint(),
            public_key: public_key.to_line(),
            created_at: now,
            resource_group_id: resource_group_id.to_owned(),
            tags,
        };
        scope.insert(name.to_owned(), pair);
        scope.get(name).ok_or_else(|| not_found(404, name))
    }

    /// Every key pair of every account, with its account and region.
    pub fn all(&self) -> impl Iterator<Item = (&Arc<str>, &'static str, &KeyPair)> {
        self.pairs
            .iter()
            .flat_map(|((account_id, region_id), pairs)| {
                pairs
                    .values()
                    .map(move |pair| (account_id, *region_id, pair))
            })
    }

    /// Removes the named key pairs that exist; the others are ignored.
    pub fn remove(&mut self, account_id: &Arc<str>, region_id: &'static str, names: &[String]) {
        if let Some(scope) = self.pairs.get_mut(&(account_id.clone(), region_id)) {
            for name in names {
                scope.remove(name);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_parse_back_with_the_same_fingerprint() {
        let (public, pem) = generate().unwrap();
        assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----\n"));
        let parsed = PublicKey::parse(&format!("{} me@host", public.to_line())).unwrap();
        assert_eq!(parsed.fingerprint(), public.fingerprint());
        assert_eq!(parsed.fingerprint().split(':').count(), 16);
    }

    #[test]
    fn malformed_keys_are_refused() {
        let code = |line: &str| PublicKey::parse(line).unwrap_err().code;
        assert_eq!(code(""), "InvalidPublicKeyBody.Malformed");
        assert_eq!(code("ssh-rsa"), "InvalidPublicKeyBody.Malformed");
        assert_eq!(code("ssh-rsa !!!"), "InvalidPublicKeyBody.Malformed");
        assert_eq!(code("ssh-foo AAAA"), "InvalidPublicKeyBody.Malformed");
        // A blob of another type than the line says.
        let (public, _) = generate().unwrap();
        let encoded = base64::engine::general_purpose::STANDARD.encode(&public.blob);
        assert_eq!(
            code(&format!("ssh-dss {encoded}")),
            "InvalidPublicKeyBody.Malformed"
        );
        // Truncated data.
        let short = base64::engine::general_purpose::STANDARD.encode(&public.blob[..20]);
        assert_eq!(
            code(&format!("ssh-rsa {short}")),
            "InvalidPublicKeyBody.Malformed"
        );
    }

    #[test]
    fn names_and_duplicates() {
        assert!(check_name("web-key_1").is_ok());
        assert!(check_name("1key").is_err());
        assert!(check_name("k").is_err());
        assert!(check_name("key with space").is_err());
        let mut store = KeyPairStore::default();
        let acct: Arc<str> = Arc::from("1");
        let (public, _) = generate().unwrap();
        store
            .add(
                (&acct, "cn-hangzhou"),
                "web",
                &public,
                "",
                Vec::new(),
                Timestamp::now(),
            )
            .unwrap();
        assert_eq!(
            store
                .add(
                    (&acct, "cn-hangzhou"),
                    "web",
                    &public,
                    "",
                    Vec::new(),
                    Timestamp::now()
                )
                .unwrap_err()
                .code,
            "KeyPair.AlreadyExist"
        );
        // Another region is another namespace.
        assert!(
            store
                .add(
                    (&acct, "cn-beijing"),
                    "web",
                    &public,
                    "",
                    Vec::new(),
                    Timestamp::now()
                )
                .is_ok()
        );
        store.remove(&acct, "cn-hangzhou", &["web".to_owned(), "nope".to_owned()]);
        assert!(store.get(&acct, "cn-hangzhou", "web").is_none());
    }
}
