//! A generated CA Secret that is missing while the cluster runs (deleted by hand): rebuilt with
//! an overlap, so that no client holding the old CA is locked out at once.
//!
//! The CA Secret's key is gone, but the old CA's certificates (public parts) survive in the
//! `ca.crt` trust bundle of the leaf Secrets the members mount and clients read. [`recover`]
//! makes a new CA and writes the CA Secret directly in [`Phase::TrustBoth`]: the surviving
//! bundle trusted beside the new CA, a new trust generation (the members restart one at a
//! time on the joined bundle). The rotation's own phases then carry on: [`Phase::Reissue`] once
//! every member trusts both (every leaf from the new CA), [`Phase::DropOld`] once every leaf is
//! the new CA's.
//!
//! While the old CA's key is lost ([`CaState::signing_key_lost`]: the CA Secret's `tls.key` is
//! empty, `tls.crt` holds the surviving bundle), nothing can be signed by it, so:
//! - a leaf Secret that still holds a certificate and key keeps them until [`Phase::Reissue`],
//!   even when it would otherwise be renewed (near expiry, other host names): it is still valid
//!   and every member trusts it, whereas a new CA's leaf would be refused by the members that
//!   have not restarted yet. Only its `ca.crt` takes the joined bundle.
//! - a leaf Secret that is missing or has no certificate or key cannot wait (no pod mounting it
//!   can start, the controller cannot call etcd without its client certificate): it is issued at
//!   once by the new CA ([`CaState::signer`]). A member that has not restarted yet refuses it
//!   until the roll reaches it; no old-CA certificate could be made instead.
//!
//! When no bundle survives either (every TLS Secret deleted), the new CA is trusted alone as
//! before, and since clients cannot trust it yet the event is a Warning ([`Recovered::Cold`]).
//! A cluster without members yet (no StatefulSet) gets its first CA without an event.

use jiff::Timestamp;

#[cfg(doc)]
use super::rotation::Phase;
use super::rotation::{Ca, CaState};

/// The name recorded for the lost CA in the CA Secret while its key is lost.
pub const LOST_CA_NAME: &str = "lost CA (certificates from the surviving trust bundle)";

const PEM_END: &str = "-----END CERTIFICATE-----";

/// The certificates of `bundles` (PEM `ca.crt` texts), each once, in the order first seen;
/// `None` when none holds a certificate.
pub fn surviving_bundle<'a>(bundles: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let mut certs: Vec<String> = Vec::new();
    for bundle in bundles {
        for part in bundle.split_inclusive(PEM_END) {
            let cert = part.trim();
            if cert.ends_with(PEM_END) && !certs.iter().any(|c| c == cert) {
                certs.push(cert.to_owned());
            }
        }
    }
    (!certs.is_empty()).then(|| certs.join("\n") + "\n")
}

/// How a missing CA Secret was rebuilt, for the event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Recovered {
    /// The cluster's first CA (no members yet): nothing to say.
    First,
    /// The bundle of `found_in` survived: it is trusted beside `new_ca` ([`Phase::TrustBoth`]).
    Overlap { found_in: String, new_ca: String },
    /// Nothing survived: `new_ca` is trusted alone and clients must get the new bundle.
    Cold { new_ca: String },
}

impl Recovered {
    /// What happened and what comes next, in words (names only, never key material);
    /// `ca_secret` and `client_secret` are the Secrets' names.
    pub fn describe(&self, ca_secret: &str, client_secret: &str) -> Option<String> {
        match self {
            Recovered::First => None,
            Recovered::Overlap { found_in, new_ca } => Some(format!(
                "Secret {ca_secret} was missing: new CA {new_ca:?} is trusted beside the old CA \
                 certificates found in the ca.crt of Secret {found_in} (the old CA's key is lost); \
                 members restart one at a time, then certificates are reissued from the new CA \
                 and the old CA is dropped (CA rotation 1/3 to 3/3). Clients keep working with \
                 their bundle until the last step; give them the ca.crt of Secret \
                 {client_secret} before then"
            )),
            Recovered::Cold { new_ca } => Some(format!(
                "Secret {ca_secret} was missing and no TLS Secret kept a trust bundle: new CA \
                 {new_ca:?} was made, which no client trusts yet; members restart on it, and \
                 clients must get the new bundle (the ca.crt of Secret {client_secret})"
            )),
        }
    }
}

/// The CA Secret's state when it is missing: `new` is trusted beside `surviving` (the bundle
/// found in `found_in`) in [`Phase::TrustBoth`], or alone without one. `running` is the trust
/// generation the members' pod template carries (`None` without members yet): the new state's
/// generation differs from it, so that the members restart on the new bundle.
pub fn recover(
    surviving: Option<(String, String)>,
    new: Ca,
    running: Option<u64>,
    now: Timestamp,
) -> (CaState, Recovered) {
    let generation = running.map_or(0, |g| g + 1);
    match (surviving, running) {
        (Some((found_in, bundle)), _) => {
            let lost = Ca {
                name: LOST_CA_NAME.to_owned(),
                cert_pem: bundle,
                key_pem: String::new(),
                not_after: now,
            };
            let recovered = Recovered::Overlap {
                found_in,
                new_ca: new.name.clone(),
            };
            let state = CaState {
                generation,
                ..CaState::new(lost).trust_both(new)
            };
            (state, recovered)
        }
        (None, None) => (CaState::new(new), Recovered::First),
        (None, Some(_)) => {
            let recovered = Recovered::Cold {
                new_ca: new.name.clone(),
            };
            let mut state = CaState::new(new);
            state.generation = generation;
            (state, recovered)
        }
    }
}

impl CaState {
    /// Whether the signing CA's key is lost (a recovered CA Secret before [`Phase::Reissue`]).
    pub fn signing_key_lost(&self) -> bool {
        self.current.key_pem.is_empty()
    }

    /// The CA that issues a leaf now: the current one, or while its key is lost the new one.
    pub fn signer(&self) -> &Ca {
        match &self.next {
            Some(next) if self.signing_key_lost() => next,
            _ => &self.current,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tls::rotation::{Next, Phase, Progress, decide};

    fn ts(text: &str) -> Timestamp {
        text.parse().expect("timestamp")
    }

    fn pem(name: &str) -> String {
        format!("-----BEGIN CERTIFICATE-----\n{name}\n-----END CERTIFICATE-----\n")
    }

    fn ca(name: &str) -> Ca {
        Ca {
            name: name.to_owned(),
            cert_pem: pem(name),
            key_pem: format!("key of {name}"),
            not_after: ts("2036-01-01T00:00:00Z"),
        }
    }

    const NOW: &str = "2026-11-29T10:00:00Z";

    #[test]
    fn bundles_are_joined_without_repeating_a_certificate() {
        let both = format!("{}{}", pem("old"), pem("mid"));
        assert_eq!(
            surviving_bundle([pem("old").as_str(), both.as_str(), "garbage"]),
            Some(format!("{}\n{}\n", pem("old").trim(), pem("mid").trim()))
        );
        assert_eq!(surviving_bundle(["", "not a certificate"]), None);
        assert_eq!(surviving_bundle([]), None);
    }

    #[test]
    fn a_missing_ca_secret_with_a_surviving_bundle_trusts_both_cas() {
        let (state, recovered) = recover(
            Some(("e-tls-peer".to_owned(), pem("old"))),
            ca("new"),
            Some(4),
            ts(NOW),
        );
        assert_eq!(state.phase, Phase::TrustBoth);
        assert_eq!(state.generation, 5, "a generation the members do not run");
        assert!(state.bundle.contains("\nold\n") && state.bundle.contains("\nnew\n"));
        assert!(state.signing_key_lost());
        assert_eq!(state.signer(), &ca("new"));
        assert_eq!(
            recovered,
            Recovered::Overlap {
                found_in: "e-tls-peer".to_owned(),
                new_ca: "new".to_owned()
            }
        );
        let message = recovered
            .describe("e-tls-ca", "e-tls-client")
            .expect("said");
        assert!(message.contains("e-tls-peer") && !message.contains("key of"));
    }

    #[test]
    fn the_recovered_overlap_carries_on_through_the_rotation_phases() {
        let (trust, _) = recover(
            Some(("e-tls-peer".to_owned(), pem("old"))),
            ca("new"),
            Some(0),
            ts(NOW),
        );
        let policy = crate::tls::certs::CaPolicy::default();
        let rolled = Progress {
            rolled_out: true,
            leaves_from_current: true,
        };
        assert_eq!(decide(&trust, rolled, ts(NOW), &policy), Next::Reissue);
        let reissue = trust.reissue();
        assert_eq!(reissue.current, ca("new"));
        assert!(!reissue.signing_key_lost());
        assert_eq!(reissue.bundle, trust.bundle, "both still trusted");
        let dropped = reissue.drop_old();
        assert_eq!(dropped.bundle, pem("new"), "the new CA alone at the end");
        assert_eq!(
            (dropped.generation, dropped.finish().phase),
            (3, Phase::Steady)
        );
    }

    #[test]
    fn nothing_surviving_makes_a_new_ca_with_a_warning_but_not_for_a_new_cluster() {
        let (state, recovered) = recover(None, ca("new"), Some(2), ts(NOW));
        assert_eq!((state.phase, state.generation), (Phase::Steady, 3));
        assert_eq!(state.bundle, pem("new"));
        assert_eq!(
            recovered,
            Recovered::Cold {
                new_ca: "new".to_owned()
            }
        );
        assert!(
            recovered
                .describe("e-tls-ca", "e-tls-client")
                .is_some_and(|m| m.contains("clients must get the new bundle"))
        );
        let (first, recovered) = recover(None, ca("new"), None, ts(NOW));
        assert_eq!(first, CaState::new(ca("new")));
        assert_eq!(recovered.describe("e-tls-ca", "e-tls-client"), None);
    }
}
