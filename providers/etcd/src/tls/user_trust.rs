//! The user's TLS Secrets (`spec.tls.*SecretRef`) followed when their CA changes.
//!
//! etcd reads its certificate and key at every new connection (the kubelet updates a mounted
//! Secret in place), but its trusted CA file only at start. So the members do not trust the
//! `ca.crt` of the user's Secrets directly: they trust the bundles of a Secret of ferroplane's,
//! `<name>-tls-trust` (`peer-ca.crt`, `server-ca.crt`), which follows the user's in two steps
//! ([`next`]), each one a new trust generation that restarts the members one at a time (the
//! pod template's annotation, as a CA rotation does):
//!
//! 1. the user's `ca.crt` changed: the bundle holds what the members trusted and the new
//!    certificates ([`Step::Overlap`]), so a restarted member trusts both the old and the new
//!    CA while the others still run;
//! 2. once every member runs that generation and etcd reports each one healthy: the bundle is
//!    the user's `ca.crt` alone ([`Step::Settle`]).
//!
//! The first time (a new cluster, or one made before this existed) the user's bundles are
//! recorded as they are, at generation 0: nothing restarts for them.

use std::collections::BTreeMap;

use super::recovery::surviving_bundle;
use super::rotation::TRUST_GENERATION_ANNOTATION;

/// The data keys of the trust Secret.
pub const PEER_CA: &str = "peer-ca.crt";
pub const SERVER_CA: &str = "server-ca.crt";
/// Annotation of the trust Secret: the user's bundles last seen (their fingerprints).
pub const SEEN_ANNOTATION: &str = "etcd.ferroplane.io/user-ca-seen";
/// Annotation of the trust Secret while the old CA is trusted beside the new one.
pub const OVERLAP_ANNOTATION: &str = "etcd.ferroplane.io/user-ca-overlap";

/// What the user's Secrets hold now (`ca.crt` of the peer and of the server Secret).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserBundles {
    pub peer: String,
    pub server: String,
}

impl UserBundles {
    /// Which bundles these are (their fingerprints), to tell a change.
    pub fn seen(&self) -> String {
        format!(
            "{},{}",
            super::certs::fingerprint(&self.peer),
            super::certs::fingerprint(&self.server)
        )
    }
}

/// What the trust Secret holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserTrust {
    /// What the members trust.
    pub trusted: UserBundles,
    /// [`UserBundles::seen`] of the user's bundles this follows.
    pub seen: String,
    /// Whether the old CA is still trusted beside the new one.
    pub overlap: bool,
    pub generation: u64,
}

/// A step of [`next`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The user's bundles recorded the first time (no restart).
    Record,
    /// The user's CA changed: old and new trusted while the members restart.
    Overlap,
    /// Every member restarted on the overlap: the user's bundles alone.
    Settle,
}

impl Step {
    /// What happened, for the event (`secrets`: the user's Secrets' names).
    pub fn describe(self, secrets: &str) -> Option<String> {
        match self {
            Step::Record => None,
            Step::Overlap => Some(format!(
                "the ca.crt of {secrets} changed: the members trust the old and the new \
                 certificates while they restart one at a time"
            )),
            Step::Settle => Some(format!(
                "every member restarted on the new ca.crt of {secrets}: the old certificates are \
                 no longer trusted, members restart one at a time"
            )),
        }
    }
}

/// What the trust Secret holds next, and the step, given what it holds (`None`: missing) and
/// the user's bundles now; `rolled_out`: every member runs the current generation, healthy.
/// `None` when nothing changes.
pub fn next(
    current: Option<&UserTrust>,
    user: &UserBundles,
    rolled_out: bool,
) -> Option<(UserTrust, Step)> {
    let seen = user.seen();
    let Some(current) = current else {
        return Some((
            UserTrust {
                trusted: user.clone(),
                seen,
                overlap: false,
                generation: 0,
            },
            Step::Record,
        ));
    };
    let join = |trusted: &str, new: &str| {
        surviving_bundle([trusted, new]).unwrap_or_else(|| new.to_owned())
    };
    if current.seen != seen {
        // Changed again during an overlap: still trust what the members run.
        return Some((
            UserTrust {
                trusted: UserBundles {
                    peer: join(&current.trusted.peer, &user.peer),
                    server: join(&current.trusted.server, &user.server),
                },
                seen,
                overlap: true,
                generation: current.generation + 1,
            },
            Step::Overlap,
        ));
    }
    (current.overlap && rolled_out).then(|| {
        (
            UserTrust {
                trusted: user.clone(),
                seen,
                overlap: false,
                generation: current.generation + 1,
            },
            Step::Settle,
        )
    })
}

/// The data and annotations of the trust Secret holding `trust`.
pub fn contents(trust: &UserTrust) -> (Vec<(&'static str, String)>, BTreeMap<String, String>) {
    let mut annotations = BTreeMap::from([
        (SEEN_ANNOTATION.to_owned(), trust.seen.clone()),
        (
            TRUST_GENERATION_ANNOTATION.to_owned(),
            trust.generation.to_string(),
        ),
    ]);
    if trust.overlap {
        annotations.insert(OVERLAP_ANNOTATION.to_owned(), "true".to_owned());
    }
    let data = vec![
        (PEER_CA, trust.trusted.peer.clone()),
        (SERVER_CA, trust.trusted.server.clone()),
    ];
    (data, annotations)
}

/// What a trust Secret of `data` (UTF-8 values) and `annotations` holds; `None` when
/// incomplete (it is then written anew from the user's bundles).
pub fn read(
    data: impl Fn(&str) -> Option<String>,
    annotations: &BTreeMap<String, String>,
) -> Option<UserTrust> {
    Some(UserTrust {
        trusted: UserBundles {
            peer: data(PEER_CA)?,
            server: data(SERVER_CA)?,
        },
        seen: annotations.get(SEEN_ANNOTATION)?.clone(),
        overlap: annotations.contains_key(OVERLAP_ANNOTATION),
        generation: annotations.get(TRUST_GENERATION_ANNOTATION)?.parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pem(name: &str) -> String {
        format!("-----BEGIN CERTIFICATE-----\n{name}\n-----END CERTIFICATE-----\n")
    }

    fn bundles(peer: &str, server: &str) -> UserBundles {
        UserBundles {
            peer: pem(peer),
            server: pem(server),
        }
    }

    #[test]
    fn a_changed_user_ca_is_trusted_beside_the_old_one_until_every_member_restarted() {
        let old = bundles("old-peer", "old-server");
        let (first, step) = next(None, &old, true).expect("recorded");
        assert_eq!(
            (step, first.generation, first.overlap),
            (Step::Record, 0, false)
        );
        assert_eq!(next(Some(&first), &old, true), None, "nothing changed");

        let new = bundles("new-peer", "old-server");
        let (overlap, step) = next(Some(&first), &new, false).expect("a change");
        assert_eq!((step, overlap.generation), (Step::Overlap, 1));
        assert!(
            overlap.trusted.peer.contains("old-peer") && overlap.trusted.peer.contains("new-peer")
        );
        assert_eq!(overlap.trusted.server.trim(), pem("old-server").trim());
        // The members have not all restarted: the old CA stays trusted.
        assert_eq!(next(Some(&overlap), &new, false), None);

        let (settled, step) = next(Some(&overlap), &new, true).expect("settles");
        assert_eq!(
            (step, settled.generation, settled.overlap),
            (Step::Settle, 2, false)
        );
        assert_eq!(settled.trusted, new);
        assert_eq!(next(Some(&settled), &new, true), None);
    }

    #[test]
    fn a_second_change_during_the_overlap_keeps_what_the_members_run() {
        let (first, _) = next(None, &bundles("a", "s"), true).expect("recorded");
        let (overlap, _) = next(Some(&first), &bundles("b", "s"), false).expect("a change");
        let (again, step) = next(Some(&overlap), &bundles("c", "s"), false).expect("again");
        assert_eq!((step, again.generation), (Step::Overlap, 2));
        for ca in ["a", "b", "c"] {
            assert!(again.trusted.peer.contains(&format!("\n{ca}\n")), "{ca}");
        }
    }

    #[test]
    fn the_trust_secret_is_read_back() {
        let (first, _) = next(None, &bundles("a", "s"), true).expect("recorded");
        let (overlap, _) = next(Some(&first), &bundles("b", "s"), false).expect("a change");
        for trust in [first, overlap] {
            let (data, annotations) = contents(&trust);
            let value = |k: &str| {
                data.iter()
                    .find(|(key, _)| *key == k)
                    .map(|(_, v)| v.clone())
            };
            assert_eq!(read(value, &annotations), Some(trust));
        }
        assert_eq!(read(|_| None, &BTreeMap::new()), None);
    }

    #[test]
    fn steps_say_what_happens() {
        assert_eq!(Step::Record.describe("x"), None);
        assert!(
            Step::Overlap
                .describe("Secrets p, s")
                .is_some_and(|m| m.contains("old and the new"))
        );
    }
}
