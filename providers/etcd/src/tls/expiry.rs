//! When the user's TLS Secrets expire. ferroplane never renews a Secret the user brought
//! (`spec.tls.*SecretRef`), so it reports the one whose certificate ends first once fewer than
//! [`EXPIRY_WARNING_DAYS`] days remain: a Warning event `CertificateExpiresSoon`, repeated on
//! every poll while it lasts (the event recorder counts the repeats). An event rather than a
//! condition: the managed resource's conditions are `Ready` and `Synced` only, and an expiring
//! certificate is neither (the cluster works until the last day).
//!
//! The date is read from the certificate itself (`tls.crt`, its first certificate: the leaf),
//! not from an annotation, since the user's tools write none.

use jiff::{Timestamp, ToSpan};
use x509_parser::pem::parse_x509_pem;

/// Days before a user certificate's expiry from which it is reported.
pub const EXPIRY_WARNING_DAYS: i64 = 30;

/// Why a certificate's expiry could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ExpiryError {
    #[error("tls.crt holds no PEM certificate")]
    NotPem,
    #[error("tls.crt does not parse as an X.509 certificate")]
    NotX509,
    #[error("the certificate's notAfter is out of range")]
    OutOfRange,
}

/// When the first certificate of `cert_pem` expires (its `notAfter`).
pub fn not_after(cert_pem: &str) -> Result<Timestamp, ExpiryError> {
    let (_, pem) = parse_x509_pem(cert_pem.as_bytes()).map_err(|_| ExpiryError::NotPem)?;
    let cert = pem.parse_x509().map_err(|_| ExpiryError::NotX509)?;
    Timestamp::from_second(cert.validity().not_after.timestamp())
        .map_err(|_| ExpiryError::OutOfRange)
}

/// The certificate that ends first, when it ends within [`EXPIRY_WARNING_DAYS`] of `now`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpiresSoon {
    /// The Secret holding it.
    pub secret: String,
    pub not_after: Timestamp,
}

impl ExpiresSoon {
    /// The event's message (names and dates only).
    pub fn describe(&self, now: Timestamp) -> String {
        let verb = if self.not_after <= now {
            "expired"
        } else {
            "expires"
        };
        format!(
            "the certificate of Secret {} {verb} at {}; ferroplane does not renew your Secrets: \
             write a renewed certificate to it (etcd reads it at its next connection; a new CA \
             in ca.crt needs the members restarted)",
            self.secret, self.not_after
        )
    }
}

/// Of `certs` (Secret name, `tls.crt`), the one ending first if it ends within
/// [`EXPIRY_WARNING_DAYS`] of `now`. A certificate that does not parse is skipped (etcd
/// refuses it at start, which the pods report).
pub fn expires_soon<'a>(
    certs: impl IntoIterator<Item = (&'a str, &'a str)>,
    now: Timestamp,
) -> Option<ExpiresSoon> {
    let horizon = now.checked_add((EXPIRY_WARNING_DAYS * 24).hours()).ok()?;
    certs
        .into_iter()
        .filter_map(|(secret, pem)| {
            Some(ExpiresSoon {
                secret: secret.to_owned(),
                not_after: not_after(pem).ok()?,
            })
        })
        .min_by_key(|e| e.not_after)
        .filter(|e| e.not_after <= horizon)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tls::certs::{self, Leaf};

    fn ts(text: &str) -> Timestamp {
        text.parse().expect("timestamp")
    }

    /// A leaf made on `day`, valid a year (until the same day a year later, midnight UTC).
    fn leaf_made(day: &str) -> String {
        let made = ts(day);
        let ca = certs::new_ca("test CA", made).expect("ca");
        certs::issue(
            "test CA",
            &ca.key_pem,
            Leaf::Server,
            &["e.ns.svc".to_owned()],
            made,
        )
        .expect("leaf")
        .cert_pem
    }

    #[test]
    fn the_expiry_is_read_from_the_certificate() {
        let pem = leaf_made("2026-01-10T12:00:00Z");
        assert_eq!(not_after(&pem), Ok(ts("2027-01-10T00:00:00Z")));
        assert_eq!(not_after("no certificate"), Err(ExpiryError::NotPem));
    }

    #[test]
    fn the_certificate_ending_first_is_reported_thirty_days_before() {
        let early = leaf_made("2026-01-10T12:00:00Z");
        let late = leaf_made("2026-06-10T12:00:00Z");
        let certs = [("peer", late.as_str()), ("server", early.as_str())];
        // 31 days before the early one ends: nothing yet.
        assert_eq!(expires_soon(certs, ts("2026-12-10T00:00:00Z")), None);
        let soon = expires_soon(certs, ts("2026-12-11T00:00:00Z")).expect("reported");
        assert_eq!(
            soon,
            ExpiresSoon {
                secret: "server".to_owned(),
                not_after: ts("2027-01-10T00:00:00Z"),
            }
        );
        assert!(
            soon.describe(ts("2026-12-11T00:00:00Z"))
                .contains("Secret server expires at 2027-01-10T00:00:00Z")
        );
        assert!(
            soon.describe(ts("2027-02-01T00:00:00Z"))
                .contains("expired at")
        );
        // A Secret whose tls.crt is not a certificate is skipped, not reported.
        assert_eq!(
            expires_soon([("client", "garbage")], ts("2026-12-11T00:00:00Z")),
            None
        );
    }
}
