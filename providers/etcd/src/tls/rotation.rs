//! Rotation of a generated CA before it expires, in phases that never interrupt the cluster.
//!
//! etcd reads its leaf certificates at every new connection but its trusted CA file
//! (`trusted-ca-file`, `peer-trusted-ca-file`: `ca.crt` of the mounted Secrets, which may hold
//! several certificates) only at start. So each phase changes what the Secrets hold, then the
//! members restart one at a time (the StatefulSet's rolling update, started by the pod
//! template's [`TRUST_GENERATION_ANNOTATION`]), and the next phase waits until every member runs
//! a pod of that generation and etcd reports each one healthy ([`Progress::rolled_out`]):
//!
//! 1. [`Phase::TrustBoth`]: a new CA is made; every `ca.crt` holds the old and the new one; the
//!    leaves are still the old CA's. A restarted member trusts both, the others the old one,
//!    and every leaf in use is the old CA's.
//! 2. [`Phase::Reissue`]: the new CA signs: every leaf is reissued from it. Every member
//!    trusts both CAs since phase 1, so old and new leaves meet without refusal.
//! 3. [`Phase::DropOld`]: only once every leaf is the new CA's ([`Progress::leaves_from_current`])
//!    and every member restarted on them: `ca.crt` holds the new CA alone.
//!
//! Then [`Phase::Steady`] again. The whole state (phase, both CAs, the trust bundle, the
//! generation) is in the CA Secret, written in one update, so a controller that stops anywhere
//! resumes where the Secret says. Pure: [`decide`] says what to do, [`CaState`]'s methods say
//! what the Secret holds next.

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;

use super::certs::{CaPolicy, fingerprint};

/// Annotation of the CA Secret: the rotation phase ([`Phase::as_str`]); absent when steady.
pub const ROTATION_ANNOTATION: &str = "etcd.ferroplane.io/ca-rotation";
/// Annotation of the CA Secret and of the member pods' template: how often the trust bundle or
/// the issuing CA changed. A new value rolls the members. Absent (0) until the first rotation,
/// so that clusters made before rotation existed are not restarted.
pub const TRUST_GENERATION_ANNOTATION: &str = "etcd.ferroplane.io/trust-generation";

/// The trust generation the members' pod template carries (0 before the first rotation);
/// `None` without a StatefulSet.
pub fn running_generation(sts: Option<&StatefulSet>) -> Option<u64> {
    Some(
        sts?.spec
            .as_ref()
            .and_then(|s| s.template.metadata.as_ref())
            .and_then(|m| m.annotations.as_ref())
            .and_then(|a| a.get(TRUST_GENERATION_ANNOTATION))
            .and_then(|g| g.parse::<u64>().ok())
            .unwrap_or(0),
    )
}

/// Where a rotation is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// One CA, trusted alone, signs every leaf.
    Steady,
    /// The new CA is trusted beside the old one; the old one still signs.
    TrustBoth,
    /// The new CA signs; both are trusted.
    Reissue,
    /// Only the new CA is trusted.
    DropOld,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Steady => "",
            Phase::TrustBoth => "trust-both",
            Phase::Reissue => "reissue",
            Phase::DropOld => "drop-old",
        }
    }

    /// What is under way, for the `Synced` condition's message; `None` when steady.
    pub fn describe(self) -> Option<&'static str> {
        match self {
            Phase::Steady => None,
            Phase::TrustBoth => Some(
                "CA rotation 1/3: the new CA is trusted beside the old one, members restart one at a time",
            ),
            Phase::Reissue => Some(
                "CA rotation 2/3: certificates are reissued from the new CA, members restart one at a time",
            ),
            Phase::DropOld => Some(
                "CA rotation 3/3: the old CA is no longer trusted, members restart one at a time",
            ),
        }
    }

    /// The phase an annotation names; `None` for a value no version of ferroplane wrote.
    pub fn parse(text: &str) -> Option<Self> {
        [
            Phase::Steady,
            Phase::TrustBoth,
            Phase::Reissue,
            Phase::DropOld,
        ]
        .into_iter()
        .find(|p| p.as_str() == text)
    }
}

/// One CA: its certificate, key, name (the issuer name of its leaves) and expiry.
#[derive(Clone, PartialEq, Eq)]
pub struct Ca {
    pub name: String,
    pub cert_pem: String,
    pub key_pem: String,
    pub not_after: Timestamp,
}

impl std::fmt::Debug for Ca {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ca")
            .field("name", &self.name)
            .field("fingerprint", &fingerprint(&self.cert_pem))
            .field("not_after", &self.not_after)
            .field("key_pem", &"<redacted>")
            .finish()
    }
}

/// What the CA Secret holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaState {
    /// The CA that signs the leaves.
    pub current: Ca,
    /// The CA being brought in ([`Phase::TrustBoth`] only).
    pub next: Option<Ca>,
    /// What every member and the controller trust: `ca.crt` of every Secret.
    pub bundle: String,
    pub phase: Phase,
    pub generation: u64,
}

fn join(a: &str, b: &str) -> String {
    format!("{}\n{}\n", a.trim_end(), b.trim_end())
}

impl CaState {
    /// A cluster's first CA.
    pub fn new(ca: Ca) -> Self {
        Self {
            bundle: ca.cert_pem.clone(),
            current: ca,
            next: None,
            phase: Phase::Steady,
            generation: 0,
        }
    }

    /// Phase 1: `new` is trusted beside the current CA.
    pub fn trust_both(&self, new: Ca) -> Self {
        Self {
            bundle: join(&self.current.cert_pem, &new.cert_pem),
            current: self.current.clone(),
            next: Some(new),
            phase: Phase::TrustBoth,
            generation: self.generation + 1,
        }
    }

    /// Phase 2: the new CA signs. Unchanged when there is no new CA.
    pub fn reissue(&self) -> Self {
        let Some(next) = self.next.clone() else {
            return self.clone();
        };
        Self {
            current: next,
            next: None,
            bundle: self.bundle.clone(),
            phase: Phase::Reissue,
            generation: self.generation + 1,
        }
    }

    /// Phase 3: the current CA alone is trusted.
    pub fn drop_old(&self) -> Self {
        Self {
            bundle: self.current.cert_pem.clone(),
            phase: Phase::DropOld,
            generation: self.generation + 1,
            ..self.clone()
        }
    }

    /// Back to steady; the members already run with the bundle of [`Self::drop_old`].
    pub fn finish(&self) -> Self {
        Self {
            phase: Phase::Steady,
            ..self.clone()
        }
    }
}

/// What the rest of the cluster shows, as the controller observed it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Every member runs a pod of the current trust generation's template (the StatefulSet's
    /// rollout is complete, every replica ready), etcd reports every member healthy and no
    /// membership change is under way.
    pub rolled_out: bool,
    /// Every leaf Secret holds a certificate of the current CA.
    pub leaves_from_current: bool,
}

/// The next move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Nothing to do (steady and not due, or waiting for the members).
    Stay,
    /// Make a new CA and trust it beside the old one ([`CaState::trust_both`]).
    Start,
    /// [`CaState::reissue`].
    Reissue,
    /// [`CaState::drop_old`].
    DropOld,
    /// [`CaState::finish`]: the rotation is complete.
    Finish,
}

/// What to do with `state` at `now`.
pub fn decide(state: &CaState, progress: Progress, now: Timestamp, policy: &CaPolicy) -> Next {
    if !progress.rolled_out {
        // Every phase (and the start) waits until every member picked up the last one.
        return Next::Stay;
    }
    match state.phase {
        Phase::Steady if policy.rotation_due(state.current.not_after, now) => Next::Start,
        Phase::Steady => Next::Stay,
        Phase::TrustBoth if state.next.is_some() => Next::Reissue,
        // A Secret edited by hand to lose its new CA: start over with a new one.
        Phase::TrustBoth => Next::Start,
        Phase::Reissue if progress.leaves_from_current => Next::DropOld,
        Phase::Reissue => Next::Stay,
        Phase::DropOld => Next::Finish,
    }
}

/// Why [`Next`] is taken, for the events (names and dates, never key material).
pub fn describe(next: Next, before: &CaState, after: &CaState) -> String {
    match next {
        Next::Start => format!(
            "CA {:?} expires at {}: rotation started; new CA {:?} (valid until {}) is trusted beside it, members restart one at a time",
            before.current.name,
            before.current.not_after,
            after.next.as_ref().map_or("", |n| n.name.as_str()),
            after
                .next
                .as_ref()
                .map_or(before.current.not_after, |n| n.not_after),
        ),
        Next::Reissue => format!(
            "every member trusts both CAs: certificates are reissued from {:?}, members restart one at a time",
            after.current.name
        ),
        Next::DropOld => format!(
            "every certificate is from {:?}: the old CA is no longer trusted, members restart one at a time",
            after.current.name
        ),
        Next::Finish => format!(
            "CA rotated: every member trusts and uses {:?} alone (valid until {})",
            after.current.name, after.current.not_after
        ),
        Next::Stay => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(text: &str) -> Timestamp {
        text.parse().expect("timestamp")
    }

    fn ca(name: &str, not_after: &str) -> Ca {
        Ca {
            name: name.to_owned(),
            cert_pem: format!("-----BEGIN CERTIFICATE-----\n{name}\n-----END CERTIFICATE-----\n"),
            key_pem: format!("key of {name}"),
            not_after: ts(not_after),
        }
    }

    const ROLLED: Progress = Progress {
        rolled_out: true,
        leaves_from_current: true,
    };

    fn policy() -> CaPolicy {
        CaPolicy::default()
    }

    /// Runs the machine from `state` with every member always caught up, making CA `new`.
    fn run_to_steady(mut state: CaState, now: Timestamp, new: &Ca) -> Vec<(Next, CaState)> {
        let mut seen = Vec::new();
        loop {
            let next = decide(&state, ROLLED, now, &policy());
            state = match next {
                Next::Stay => return seen,
                Next::Start => state.trust_both(new.clone()),
                Next::Reissue => state.reissue(),
                Next::DropOld => state.drop_old(),
                Next::Finish => state.finish(),
            };
            seen.push((next, state.clone()));
            assert!(seen.len() < 10, "the machine ends: {seen:?}");
        }
    }

    #[test]
    fn a_ca_far_from_expiry_is_kept() {
        let state = CaState::new(ca("old", "2036-01-01T00:00:00Z"));
        assert_eq!(
            decide(&state, ROLLED, ts("2026-11-26T00:00:00Z"), &policy()),
            Next::Stay
        );
    }

    #[test]
    fn each_phase_trusts_what_every_leaf_in_use_needs() {
        let old = ca("old", "2028-01-01T00:00:00Z");
        let new = ca("new", "2038-01-01T00:00:00Z");
        let steps = run_to_steady(CaState::new(old.clone()), ts("2026-11-26T00:00:00Z"), &new);
        let phases: Vec<(Next, Phase, u64)> = steps
            .iter()
            .map(|(n, s)| (*n, s.phase, s.generation))
            .collect();
        assert_eq!(
            phases,
            [
                (Next::Start, Phase::TrustBoth, 1),
                (Next::Reissue, Phase::Reissue, 2),
                (Next::DropOld, Phase::DropOld, 3),
                (Next::Finish, Phase::Steady, 3),
            ]
        );
        let both = join(&old.cert_pem, &new.cert_pem);
        // 1: old signs, both trusted.
        assert_eq!(steps[0].1.current, old);
        assert_eq!(steps[0].1.bundle, both);
        // 2: new signs, both trusted.
        assert_eq!(steps[1].1.current, new);
        assert_eq!(steps[1].1.next, None);
        assert_eq!(steps[1].1.bundle, both);
        // 3 and after: new alone.
        assert_eq!(steps[2].1.bundle, new.cert_pem);
        assert_eq!(steps[3].1.bundle, new.cert_pem);
        assert_eq!(steps[3].1.current, new);
        // The new CA is far from expiry: nothing more.
        assert_eq!(
            decide(&steps[3].1, ROLLED, ts("2026-11-26T00:00:00Z"), &policy()),
            Next::Stay
        );
    }

    #[test]
    fn no_phase_starts_before_every_member_caught_up() {
        let now = ts("2026-11-26T00:00:00Z");
        let due = CaState::new(ca("old", "2027-06-01T00:00:00Z"));
        let rolling = Progress {
            rolled_out: false,
            leaves_from_current: true,
        };
        let trust = due.trust_both(ca("new", "2036-01-01T00:00:00Z"));
        for state in [
            due.clone(),
            trust.clone(),
            trust.reissue(),
            trust.reissue().drop_old(),
        ] {
            assert_eq!(
                decide(&state, rolling, now, &policy()),
                Next::Stay,
                "{state:?}"
            );
        }
    }

    #[test]
    fn the_old_ca_is_never_dropped_while_a_leaf_is_still_its() {
        let now = ts("2026-11-26T00:00:00Z");
        let reissuing = CaState::new(ca("old", "2027-06-01T00:00:00Z"))
            .trust_both(ca("new", "2036-01-01T00:00:00Z"))
            .reissue();
        let old_leaf_left = Progress {
            rolled_out: true,
            leaves_from_current: false,
        };
        assert_eq!(
            decide(&reissuing, old_leaf_left, now, &policy()),
            Next::Stay
        );
        assert_eq!(decide(&reissuing, ROLLED, now, &policy()), Next::DropOld);
    }

    #[test]
    fn a_controller_stopped_mid_rotation_resumes_from_the_secret() {
        let now = ts("2026-11-26T00:00:00Z");
        let old = ca("old", "2027-06-01T00:00:00Z");
        let new = ca("new", "2036-01-01T00:00:00Z");
        // Whatever phase the Secret records, the rest of the run is the same as from the start.
        let whole = run_to_steady(CaState::new(old), now, &new);
        for (i, (_, saved)) in whole.iter().enumerate() {
            let resumed = run_to_steady(saved.clone(), now, &new);
            assert_eq!(resumed, whole[i + 1..].to_vec(), "resumed from {saved:?}");
        }
    }

    #[test]
    fn a_trust_phase_without_its_new_ca_starts_over() {
        let now = ts("2026-11-26T00:00:00Z");
        let mut broken = CaState::new(ca("old", "2027-06-01T00:00:00Z"))
            .trust_both(ca("new", "2036-01-01T00:00:00Z"));
        broken.next = None;
        assert_eq!(decide(&broken, ROLLED, now, &policy()), Next::Start);
        assert_eq!(broken.reissue(), broken, "nothing to promote");
    }

    #[test]
    fn phases_round_trip_through_their_annotation() {
        for phase in [
            Phase::Steady,
            Phase::TrustBoth,
            Phase::Reissue,
            Phase::DropOld,
        ] {
            assert_eq!(Phase::parse(phase.as_str()), Some(phase));
        }
        assert_eq!(Phase::parse("sideways"), None);
        assert_eq!(Phase::Steady.describe(), None);
        assert!(
            Phase::Reissue
                .describe()
                .is_some_and(|d| d.starts_with("CA rotation 2/3"))
        );
    }

    #[test]
    fn keys_are_never_printed() {
        let state = CaState::new(ca("old", "2027-06-01T00:00:00Z"));
        let text = format!("{state:?}");
        assert!(!text.contains("key of old"), "{text}");
        let new = state.trust_both(ca("new", "2036-01-01T00:00:00Z"));
        let message = describe(Next::Start, &state, &new);
        assert!(
            message.contains("\"new\"") && !message.contains("key of"),
            "{message}"
        );
    }
}
