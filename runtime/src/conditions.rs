//! The `Ready` and `Synced` conditions, computed from what a reconcile found (the provider's
//! [`Readiness`] among it), and merged into the object's existing conditions so that
//! `lastTransitionTime` moves only when a condition's status actually changes.

use ferroplane_apis::common::{Condition, ConditionStatus, names};
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::readiness::Readiness;
use crate::reasons;

/// A condition as the reconciler wants it, before timestamps and generations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Desired {
    pub type_: &'static str,
    pub status: ConditionStatus,
    pub reason: &'static str,
    pub message: String,
}

/// Upper bound of a condition message, so a huge cloud error cannot bloat the object.
const MAX_MESSAGE_LEN: usize = 2048;

impl Desired {
    pub fn new(
        type_: &'static str,
        status: ConditionStatus,
        reason: &'static str,
        message: impl Into<String>,
    ) -> Self {
        Self {
            type_,
            status,
            reason,
            message: truncate(message.into()),
        }
    }
}

fn truncate(mut message: String) -> String {
    if message.len() > MAX_MESSAGE_LEN {
        let mut cut = MAX_MESSAGE_LEN;
        while !message.is_char_boundary(cut) {
            cut -= 1;
        }
        message.truncate(cut);
        message.push('…');
    }
    message
}

/// `Ready` from the provider's readiness.
pub(crate) fn ready(readiness: &Readiness) -> Desired {
    match readiness {
        Readiness::Available => {
            Desired::new(names::READY, ConditionStatus::True, reasons::AVAILABLE, "")
        }
        Readiness::Unavailable(why) => Desired::new(
            names::READY,
            ConditionStatus::False,
            reasons::UNAVAILABLE,
            why.clone(),
        ),
        Readiness::UnavailableBecause { reason, why } => {
            Desired::new(names::READY, ConditionStatus::False, reason, why.clone())
        }
        Readiness::Creating => creating(),
    }
}

/// `Ready=False/Creating`: the external resource is being made.
pub(crate) fn creating() -> Desired {
    Desired::new(names::READY, ConditionStatus::False, reasons::CREATING, "")
}

/// `Ready=False/Deleting`: the external resource is being removed.
pub(crate) fn deleting() -> Desired {
    Desired::new(names::READY, ConditionStatus::False, reasons::DELETING, "")
}

/// `Synced=True/ReconcileSuccess`, with an optional note (e.g. drift left alone by policy).
pub(crate) fn synced(note: impl Into<String>) -> Desired {
    Desired::new(
        names::SYNCED,
        ConditionStatus::True,
        reasons::RECONCILE_SUCCESS,
        note,
    )
}

/// Errors that are refusals to touch something another object owns: their reason is the
/// `Synced` condition's reason too (instead of `ReconcileError`), so users and alerts can match it.
const REFUSAL_REASONS: &[&str] = &[
    reasons::OWNED_ELSEWHERE,
    reasons::EXISTS_UNMANAGED,
    reasons::SCOPE_CHANGED,
    reasons::CONNECTION_SECRET_NOT_CONTROLLED,
    reasons::EXTERNAL_RESOURCE_NOT_FOUND,
];

/// `Synced=False` for a failed step: reason `ReconcileError`, or the error's own reason when it is
/// a refusal (see [`REFUSAL_REASONS`]); the message is the error's.
pub(crate) fn sync_failure(err: &crate::error::ReconcileError) -> Desired {
    let reason = REFUSAL_REASONS
        .iter()
        .find(|r| **r == err.reason())
        .copied()
        .unwrap_or(reasons::RECONCILE_ERROR);
    Desired::new(
        names::SYNCED,
        ConditionStatus::False,
        reason,
        err.to_string(),
    )
}

/// `Synced=False/ReconcilePaused`.
pub(crate) fn paused(message: impl Into<String>) -> Desired {
    Desired::new(
        names::SYNCED,
        ConditionStatus::False,
        reasons::RECONCILE_PAUSED,
        message,
    )
}

/// `Synced=False/InvalidAnnotation`.
pub(crate) fn invalid_annotation(message: impl Into<String>) -> Desired {
    Desired::new(
        names::SYNCED,
        ConditionStatus::False,
        names::REASON_INVALID_ANNOTATION,
        message,
    )
}

/// Applies `desired` to `existing`: conditions of other types are kept in place, a condition
/// whose status is unchanged keeps its `lastTransitionTime`, new ones are appended.
pub fn merge(
    existing: &[Condition],
    desired: &[Desired],
    generation: Option<i64>,
    now: Timestamp,
) -> Vec<Condition> {
    let mut out: Vec<Condition> = existing.to_vec();
    for d in desired {
        let transition_time = match existing.iter().find(|c| c.type_ == d.type_) {
            Some(old) if old.status == d.status => old.last_transition_time.clone(),
            _ => Time(now),
        };
        let cond = Condition {
            type_: d.type_.to_owned(),
            status: d.status,
            reason: d.reason.to_owned(),
            message: d.message.clone(),
            last_transition_time: transition_time,
            observed_generation: generation,
        };
        match out.iter_mut().find(|c| c.type_ == d.type_) {
            Some(slot) => *slot = cond,
            None => out.push(cond),
        }
    }
    out
}

/// Whether the last reconcile failed with `reason`: `Synced=False` with that reason, or with
/// `ReconcileError` and a message that starts with it (as [`sync_failure`] writes them). Another
/// controller reads its objects' failures this way (an ECSFleet its members' `NoStock`).
pub fn sync_failed_with(conditions: &[Condition], reason: &str) -> bool {
    find(conditions, names::SYNCED).is_some_and(|c| {
        c.status == ConditionStatus::False
            && (c.reason == reason
                || (c.reason == reasons::RECONCILE_ERROR
                    && c.message
                        .strip_prefix(reason)
                        .is_some_and(|rest| rest.starts_with(": "))))
    })
}

/// The condition of a type, if present.
pub fn find<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_is_read_from_the_reason_or_the_start_of_the_message() {
        let failed = |reason: &'static str, message: &str| {
            merge(
                &[],
                &[Desired::new(
                    names::SYNCED,
                    ConditionStatus::False,
                    reason,
                    message,
                )],
                None,
                ts("2026-01-01T00:00:00Z"),
            )
        };
        let no_stock = failed(reasons::RECONCILE_ERROR, "NoStock: the zone has no stock");
        assert!(sync_failed_with(&no_stock, "NoStock"));
        assert!(!sync_failed_with(&no_stock, "NoSto"));
        let refusal = failed(reasons::EXTERNAL_RESOURCE_NOT_FOUND, "gone");
        assert!(sync_failed_with(
            &refusal,
            reasons::EXTERNAL_RESOURCE_NOT_FOUND
        ));
        let mut fine = no_stock.clone();
        fine[0].status = ConditionStatus::True;
        assert!(!sync_failed_with(&fine, "NoStock"));
    }

    fn ts(s: &str) -> Timestamp {
        s.parse().expect("timestamp")
    }

    #[test]
    fn a_provider_reason_reaches_ready() {
        let r = ready(&Readiness::UnavailableBecause {
            reason: "QuorumLost",
            why: "members a, b lost".into(),
        });
        let merged = merge(&[], &[r], Some(1), ts("2026-01-01T00:00:00Z"));
        let ready = find(&merged, names::READY).expect("ready");
        assert_eq!(ready.status, ConditionStatus::False);
        assert_eq!(ready.reason, "QuorumLost");
        assert_eq!(ready.message, "members a, b lost");
    }

    #[test]
    fn transition_time_kept_when_status_unchanged() {
        let t0 = ts("2026-01-01T00:00:00Z");
        let t1 = ts("2026-01-01T01:00:00Z");
        let first = merge(&[], &[creating(), synced("")], Some(1), t0);
        assert_eq!(first.len(), 2);
        // Reason changes (Creating → Unavailable) but status stays False: time kept.
        let second = merge(
            &first,
            &[ready(&Readiness::Unavailable("booting".into()))],
            Some(2),
            t1,
        );
        let r = find(&second, names::READY).expect("ready");
        assert_eq!(r.reason, reasons::UNAVAILABLE);
        assert_eq!(r.message, "booting");
        assert_eq!(r.last_transition_time, Time(t0));
        assert_eq!(r.observed_generation, Some(2));
        // Status flips: time moves.
        let third = merge(&second, &[ready(&Readiness::Available)], Some(2), t1);
        assert_eq!(
            find(&third, names::READY)
                .expect("ready")
                .last_transition_time,
            Time(t1)
        );
    }

    #[test]
    fn other_condition_types_are_kept_in_place() {
        let t = ts("2026-01-01T00:00:00Z");
        let custom = Condition {
            type_: "MembersHealthy".into(),
            status: ConditionStatus::True,
            reason: "AllHealthy".into(),
            message: String::new(),
            last_transition_time: Time(t),
            observed_generation: None,
        };
        let merged = merge(std::slice::from_ref(&custom), &[synced("")], Some(1), t);
        assert_eq!(merged[0], custom);
        assert_eq!(merged[1].type_, names::SYNCED);
    }

    #[test]
    fn merge_is_idempotent() {
        let t0 = ts("2026-01-01T00:00:00Z");
        let once = merge(
            &[],
            &[ready(&Readiness::Available), synced("")],
            Some(3),
            t0,
        );
        let twice = merge(
            &once,
            &[ready(&Readiness::Available), synced("")],
            Some(3),
            ts("2026-02-01T00:00:00Z"),
        );
        assert_eq!(once, twice);
    }

    #[test]
    fn long_messages_are_truncated_on_a_char_boundary() {
        let err = crate::error::ReconcileError::retryable("X", "é".repeat(MAX_MESSAGE_LEN));
        let d = sync_failure(&err);
        assert!(d.message.len() <= MAX_MESSAGE_LEN + '…'.len_utf8());
        assert!(d.message.ends_with('…'));
    }

    #[test]
    fn refusals_keep_their_reason_other_failures_are_reconcile_errors() {
        use crate::error::ReconcileError;
        let refused = ReconcileError::terminal(reasons::OWNED_ELSEWHERE, "not yours");
        let d = sync_failure(&refused);
        assert_eq!(d.reason, "ExternalResourceOwnedElsewhere");
        assert_eq!(d.status, ConditionStatus::False);
        let other = ReconcileError::retryable("Throttling", "slow down");
        assert_eq!(sync_failure(&other).reason, reasons::RECONCILE_ERROR);
        assert_eq!(sync_failure(&other).message, "Throttling: slow down");
    }
}
