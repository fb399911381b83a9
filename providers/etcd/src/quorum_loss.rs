//! Whether a cluster has lost its quorum for good: the rule that decides when a restore may
//! replace every member's data (`spec.recovery`). Pure; the controller gathers the evidence
//! (`controller/quorum_step.rs`).
//!
//! A voter is lost when it does not answer *and* its data is gone: its claim deleted, or
//! replaced by a new (empty) claim with another UID than the one it was last seen healthy on.
//! A voter that does not answer but keeps its volume is never lost: a network split or a node
//! down heals, and its data may be the newest copy. Quorum is lost when the voters not lost are
//! fewer than a quorum of all voters; the loss is permanent once it has lasted the grace
//! period, counted from the first reconcile that saw it (kept in status so that a restart of
//! the controller does not reset it).

use jiff::{SignedDuration, Timestamp};

use crate::planner::quorum;

/// What is left of a voter's data volume.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VolumeState {
    /// The claim it was last seen healthy on.
    Same,
    /// No claim, or one being deleted.
    Missing,
    /// A claim with another UID: a new, empty volume.
    Replaced,
    /// No record of the claim it ran on (never seen healthy since the record began): never
    /// counted as lost.
    Unrecorded,
}

/// What one reconcile found out about one voting member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VoterEvidence {
    /// The member's name (its pod's).
    pub name: String,
    /// Whether it answered its status request, following a leader.
    pub reachable: bool,
    pub volume: VolumeState,
}

impl VoterEvidence {
    /// Whether this voter's data is gone for good.
    fn lost(&self) -> bool {
        !self.reachable && matches!(self.volume, VolumeState::Missing | VolumeState::Replaced)
    }
}

/// The judgement of one reconcile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Enough voters keep their data to form a quorum (some may be unreachable for now).
    Intact,
    /// A majority of voters lost with their data, for less than the grace period so far.
    Suspected { lost: Vec<String>, since: Timestamp },
    /// The same, for at least the grace period: a restore may replace every member's data.
    Permanent { lost: Vec<String>, since: Timestamp },
}

impl Verdict {
    /// The lost members and since when, unless intact.
    pub fn loss(&self) -> Option<(&[String], Timestamp)> {
        match self {
            Verdict::Intact => None,
            Verdict::Suspected { lost, since } | Verdict::Permanent { lost, since } => {
                Some((lost, *since))
            }
        }
    }
}

/// Judges `voters` at `now`; `since` is when an earlier reconcile first saw the loss.
pub fn judge(
    voters: &[VoterEvidence],
    since: Option<Timestamp>,
    now: Timestamp,
    grace: SignedDuration,
) -> Verdict {
    let lost: Vec<String> = voters
        .iter()
        .filter(|v| v.lost())
        .map(|v| v.name.clone())
        .collect();
    if voters.is_empty() || voters.len() - lost.len() >= quorum(voters.len()) {
        return Verdict::Intact;
    }
    // A `since` in the future (a clock set back) counts from now.
    let since = since.filter(|s| *s <= now).unwrap_or(now);
    if now.duration_since(since) >= grace {
        Verdict::Permanent { lost, since }
    } else {
        Verdict::Suspected { lost, since }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use VolumeState::*;

    fn voter(name: &str, reachable: bool, volume: VolumeState) -> VoterEvidence {
        VoterEvidence {
            name: name.into(),
            reachable,
            volume,
        }
    }

    fn at(s: &str) -> Timestamp {
        s.parse().expect("timestamp")
    }

    #[test]
    fn the_rule_on_a_table_of_cases() {
        let grace = SignedDuration::from_secs(300);
        let now = at("2026-11-29T03:10:00Z");
        let earlier = at("2026-11-29T03:00:00Z");
        let recent = at("2026-11-29T03:08:00Z");
        let lost2 = || vec!["e-1".to_owned(), "e-2".to_owned()];
        let cases: Vec<(&str, Vec<VoterEvidence>, Option<Timestamp>, Verdict)> = vec![
            (
                "all answer",
                vec![
                    voter("e-0", true, Same),
                    voter("e-1", true, Same),
                    voter("e-2", true, Same),
                ],
                None,
                Verdict::Intact,
            ),
            (
                "transient split: two unreachable, volumes kept, for long",
                vec![
                    voter("e-0", true, Same),
                    voter("e-1", false, Same),
                    voter("e-2", false, Same),
                ],
                Some(earlier),
                Verdict::Intact,
            ),
            (
                "one volume gone: quorum survives",
                vec![
                    voter("e-0", true, Same),
                    voter("e-1", false, Missing),
                    voter("e-2", true, Same),
                ],
                Some(earlier),
                Verdict::Intact,
            ),
            (
                "one gone, one split: the split member may rejoin",
                vec![
                    voter("e-0", true, Same),
                    voter("e-1", false, Missing),
                    voter("e-2", false, Same),
                ],
                Some(earlier),
                Verdict::Intact,
            ),
            (
                "volumes gone but the members answer (new empty volume, started): not lost",
                vec![
                    voter("e-0", true, Same),
                    voter("e-1", true, Replaced),
                    voter("e-2", true, Replaced),
                ],
                Some(earlier),
                Verdict::Intact,
            ),
            (
                "two volumes gone, first seen now: grace not over",
                vec![
                    voter("e-0", true, Same),
                    voter("e-1", false, Missing),
                    voter("e-2", false, Replaced),
                ],
                None,
                Verdict::Suspected {
                    lost: lost2(),
                    since: now,
                },
            ),
            (
                "two volumes gone, seen two minutes ago: grace not over",
                vec![
                    voter("e-0", true, Same),
                    voter("e-1", false, Missing),
                    voter("e-2", false, Replaced),
                ],
                Some(recent),
                Verdict::Suspected {
                    lost: lost2(),
                    since: recent,
                },
            ),
            (
                "two volumes gone for ten minutes: permanent",
                vec![
                    voter("e-0", true, Same),
                    voter("e-1", false, Missing),
                    voter("e-2", false, Replaced),
                ],
                Some(earlier),
                Verdict::Permanent {
                    lost: lost2(),
                    since: earlier,
                },
            ),
            (
                "a since in the future counts from now",
                vec![
                    voter("e-0", true, Same),
                    voter("e-1", false, Missing),
                    voter("e-2", false, Missing),
                ],
                Some(at("2026-11-29T04:00:00Z")),
                Verdict::Suspected {
                    lost: lost2(),
                    since: now,
                },
            ),
            (
                "even size: two of four lost is a loss",
                vec![
                    voter("e-0", true, Same),
                    voter("e-1", false, Missing),
                    voter("e-2", false, Missing),
                    voter("e-3", true, Same),
                ],
                Some(earlier),
                Verdict::Permanent {
                    lost: lost2(),
                    since: earlier,
                },
            ),
            (
                "no record of the volumes: never counted",
                vec![
                    voter("e-0", true, Same),
                    voter("e-1", false, Unrecorded),
                    voter("e-2", false, Unrecorded),
                ],
                Some(earlier),
                Verdict::Intact,
            ),
            (
                "the survivor down too, its volume kept: the majority is still lost",
                vec![
                    voter("e-0", false, Same),
                    voter("e-1", false, Missing),
                    voter("e-2", false, Replaced),
                ],
                Some(earlier),
                Verdict::Permanent {
                    lost: lost2(),
                    since: earlier,
                },
            ),
            ("no voters known", vec![], Some(earlier), Verdict::Intact),
        ];
        for (case, voters, since, want) in cases {
            assert_eq!(judge(&voters, since, now, grace), want, "{case}");
        }
    }

    #[test]
    fn the_grace_period_ends_exactly_at_its_length() {
        let since = at("2026-11-29T03:00:00Z");
        let voters = [voter("e-0", false, Missing)];
        let grace = SignedDuration::from_secs(60);
        assert!(matches!(
            judge(&voters, Some(since), at("2026-11-29T03:00:59Z"), grace),
            Verdict::Suspected { .. }
        ));
        assert!(matches!(
            judge(&voters, Some(since), at("2026-11-29T03:01:00Z"), grace),
            Verdict::Permanent { .. }
        ));
    }
}
