//! The certificates ferroplane makes for a cluster without user Secrets: one CA per cluster
//! (ECDSA P-256, ten years by default: [`CaPolicy`]) and leaf certificates signed by it (one
//! year), renewed when fewer than [`RENEW_BEFORE_DAYS`] days remain. etcd reads its certificate
//! files at every new connection, so a renewed leaf (updated in the pod's volume by the kubelet)
//! takes effect without a restart. Its trusted CA file is read once, at start: a new CA is
//! brought in by [`super::rotation`], which restarts the members.
//!
//! Leaves:
//! - peer: `*.<name>.<namespace>.svc` (and `.cluster.local`), server and client authentication
//!   (a member is a client of the other members' peer ports);
//! - server: the client Service's names and every member's, server and client authentication
//!   (etcd's JSON gateway dials the member's own gRPC port with the server certificate when
//!   client certificates are required), and `localhost`/`127.0.0.1` for tools in the pod;
//! - client: CN `root`, client authentication (etcd maps a client certificate's CN to a user
//!   once authentication is enabled).

use jiff::{Timestamp, ToSpan};
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};

/// Days before a leaf's expiry at which it is renewed.
pub const RENEW_BEFORE_DAYS: i64 = 30;
const LEAF_DAYS: i64 = 365;
/// Lifetime of a CA made before [`CaPolicy`] existed (its Secret has no expiry annotation).
pub const LEGACY_CA_DAYS: i64 = 3650;

/// How long a generated CA lives and when its rotation starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CaPolicy {
    /// Days a new CA is valid.
    pub validity_days: i64,
    /// Rotation starts when fewer days than this remain (one fifth of the default life: two
    /// years, so that it has long finished before any leaf of the old CA expires).
    pub renew_before_days: i64,
}

impl Default for CaPolicy {
    fn default() -> Self {
        Self {
            validity_days: LEGACY_CA_DAYS,
            renew_before_days: LEGACY_CA_DAYS / 5,
        }
    }
}

impl CaPolicy {
    /// Whether a CA expiring at `not_after` is rotated at `now`.
    pub fn rotation_due(&self, not_after: Timestamp, now: Timestamp) -> bool {
        now.checked_add((self.renew_before_days * 24).hours())
            .map_or(true, |horizon| not_after <= horizon)
    }
}

/// A certificate and its private key, PEM, and when it expires.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Issued {
    pub cert_pem: String,
    pub key_pem: String,
    pub not_after: Timestamp,
}

/// Why a certificate could not be made (a key that does not parse, a name rcgen refuses).
#[derive(Debug, thiserror::Error)]
#[error("cannot make a certificate: {0}")]
pub struct CertError(#[from] rcgen::Error);

/// Which leaf.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Leaf {
    Peer,
    Server,
    Client,
}

impl Leaf {
    pub const ALL: [Leaf; 3] = [Leaf::Peer, Leaf::Server, Leaf::Client];

    /// The suffix of its Secret, `<name>-tls-<suffix>`.
    pub fn suffix(self) -> &'static str {
        match self {
            Leaf::Peer => "peer",
            Leaf::Server => "server",
            Leaf::Client => "client",
        }
    }
}

fn validity(params: &mut CertificateParams, now: Timestamp, days: i64) -> Timestamp {
    let start = now.to_zoned(jiff::tz::TimeZone::UTC).date();
    // A day of slack before now, for members whose clocks lag.
    let from = start.yesterday().unwrap_or(start);
    let until = start.checked_add(days.days()).unwrap_or(start);
    let ymd = |d: jiff::civil::Date| {
        rcgen::date_time_ymd(i32::from(d.year()), d.month() as u8, d.day() as u8)
    };
    params.not_before = ymd(from);
    params.not_after = ymd(until);
    until
        .to_zoned(jiff::tz::TimeZone::UTC)
        .map(|z| z.timestamp())
        .unwrap_or(now)
}

fn ca_params(common_name: &str) -> CertificateParams {
    let mut params = CertificateParams::default();
    params.distinguished_name = DistinguishedName::new();
    params
        .distinguished_name
        .push(DnType::CommonName, common_name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    params
}

/// A new CA named `common_name`, valid for [`LEGACY_CA_DAYS`].
pub fn new_ca(common_name: &str, now: Timestamp) -> Result<Issued, CertError> {
    new_ca_for(common_name, now, LEGACY_CA_DAYS)
}

/// A new CA named `common_name`, valid for `days`.
pub fn new_ca_for(common_name: &str, now: Timestamp, days: i64) -> Result<Issued, CertError> {
    let key = KeyPair::generate()?;
    let mut params = ca_params(common_name);
    let not_after = validity(&mut params, now, days);
    let cert = params.self_signed(&key)?;
    Ok(Issued {
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
        not_after,
    })
}

/// A leaf of `which`, for `dns_names`, signed by the CA of `ca_key_pem` named `ca_name`.
pub fn issue(
    ca_name: &str,
    ca_key_pem: &str,
    which: Leaf,
    dns_names: &[String],
    now: Timestamp,
) -> Result<Issued, CertError> {
    let issuer = Issuer::new(ca_params(ca_name), KeyPair::from_pem(ca_key_pem)?);
    let mut params = match which {
        Leaf::Client => CertificateParams::default(),
        Leaf::Peer | Leaf::Server => CertificateParams::new(dns_names.to_vec())?,
    };
    params.distinguished_name = DistinguishedName::new();
    match which {
        // No Common Name: with authentication on, etcd's JSON gateway refuses a client
        // certificate that has one (it cannot carry a certificate's user to etcd).
        Leaf::Client => params
            .distinguished_name
            .push(DnType::OrganizationName, "ferroplane"),
        Leaf::Peer | Leaf::Server => params.distinguished_name.push(
            DnType::CommonName,
            dns_names.first().map_or("etcd", String::as_str),
        ),
    }
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = match which {
        Leaf::Client => vec![ExtendedKeyUsagePurpose::ClientAuth],
        Leaf::Peer | Leaf::Server => vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ],
    };
    let not_after = validity(&mut params, now, LEAF_DAYS);
    let key = KeyPair::generate()?;
    let cert = params.signed_by(&key, &issuer)?;
    Ok(Issued {
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
        not_after,
    })
}

/// A short fingerprint of a certificate (SHA-256 of its PEM text): which CA issued a leaf, on
/// the leaf's Secret. Not secret: a certificate is public.
pub fn fingerprint(cert_pem: &str) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(cert_pem.trim().as_bytes());
    hex::encode(&digest[..12])
}

/// Whether a leaf expiring at `not_after` is renewed at `now`.
pub fn needs_renewal(not_after: Timestamp, now: Timestamp) -> bool {
    now.checked_add((RENEW_BEFORE_DAYS * 24).hours())
        .map_or(true, |horizon| not_after <= horizon)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        "2026-11-26T09:00:00Z".parse().expect("timestamp")
    }

    #[test]
    fn leaves_are_signed_by_the_ca_and_valid_for_a_year() {
        let ca = new_ca("etcd-ca", now()).expect("ca");
        assert!(ca.cert_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        let leaf = issue(
            "etcd-ca",
            &ca.key_pem,
            Leaf::Server,
            &["e-client.ns.svc".to_owned(), "localhost".to_owned()],
            now(),
        )
        .expect("leaf");
        assert!(leaf.key_pem.starts_with("-----BEGIN PRIVATE KEY-----"));
        assert_eq!(leaf.not_after.to_string(), "2027-11-26T00:00:00Z");
        assert_eq!(ca.not_after.to_string(), "2036-11-23T00:00:00Z");
    }

    #[test]
    fn ca_rotation_starts_when_a_fifth_of_its_life_remains() {
        let policy = CaPolicy::default();
        let ca = new_ca_for("etcd-ca", now(), policy.validity_days).expect("ca");
        assert!(!policy.rotation_due(ca.not_after, now()));
        assert_eq!(ca.not_after.to_string(), "2036-11-23T00:00:00Z");
        // Two years (730 days, one of them February 29th 2036) before expiry.
        let before: Timestamp = "2034-11-23T00:00:00Z".parse().expect("ts");
        assert!(!policy.rotation_due(ca.not_after, before));
        let from: Timestamp = "2034-11-24T00:00:00Z".parse().expect("ts");
        assert!(policy.rotation_due(ca.not_after, from));
        let other = new_ca("etcd-ca", now()).expect("ca");
        assert_ne!(fingerprint(&ca.cert_pem), fingerprint(&other.cert_pem));
        assert_eq!(
            fingerprint(&ca.cert_pem),
            fingerprint(&format!("{}\n", ca.cert_pem))
        );
    }

    #[test]
    fn renewal_starts_thirty_days_before_expiry() {
        let not_after: Timestamp = "2027-01-10T00:00:00Z".parse().expect("timestamp");
        assert!(!needs_renewal(
            not_after,
            "2026-12-10T00:00:00Z".parse().expect("ts")
        ));
        assert!(needs_renewal(
            not_after,
            "2026-12-11T00:00:01Z".parse().expect("ts")
        ));
        assert!(needs_renewal(
            not_after,
            "2027-02-01T00:00:00Z".parse().expect("ts")
        ));
    }
}
