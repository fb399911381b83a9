//! Status of an EtcdCluster from what one reconcile observed: the StatefulSet, and etcd's
//! membership when the membership API answered. Pure.
//!
//! When etcd cannot be reached (no pods yet, a network policy in the way, or the sandbox, which
//! runs no pods at all), status degrades gracefully: `readyMembers` comes from the
//! StatefulSet's `readyReplicas`, `members` stays empty, and the `Degraded` condition is
//! `Unknown` with reason `MembershipUnknown` saying why.

use ferroplane_apis::common::ConditionStatus;
use ferroplane_apis::etcd::{EtcdAuthState, EtcdMember, EtcdPhase};
use ferroplane_runtime::Readiness;
use ferroplane_runtime::conditions::Desired;
use k8s_openapi::api::apps::v1::StatefulSet;
use serde::Serialize;

use crate::names::ClusterNames;
use crate::planner::{Health, Replacement, Step, quorum};
use crate::reasons;
use crate::scaling::Observed;

/// Condition types besides `Ready` and `Synced` (their reasons are in [`crate::reasons`]).
pub mod conditions {
    pub const AVAILABLE: &str = "Available";
    pub const PROGRESSING: &str = "Progressing";
    pub const DEGRADED: &str = "Degraded";
}

/// What etcd told us this time.
#[derive(Clone, Debug)]
pub enum Membership<'a> {
    Known {
        observed: &'a Observed,
        step: &'a Step,
    },
    /// The membership API did not answer; `why` says what failed.
    Unknown { why: String },
}

/// The top-level status fields the provider writes, every one on every observe.
///
/// Not `EtcdClusterStatus`: that type leaves an empty `members` and an absent `leader` out,
/// which to the framework means "keep what is there". Here they are written (`[]`, and `null`,
/// which removes the field), so that members or a leader etcd no longer reports do not linger.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusFields {
    pub ready_members: i32,
    pub members: Vec<EtcdMember>,
    pub leader: Option<String>,
    pub client_endpoint: String,
    pub phase: EtcdPhase,
    /// The member pods' label selector, which the `/scale` subresource reports.
    pub selector: String,
    /// A restore's progress (`spec.restore` is set at creation only, so it is never removed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restore: Option<ferroplane_apis::etcd::EtcdRestoreStatus>,
    /// Whether etcd requires authentication; left out (what was reported stays) when etcd was
    /// not asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth: Option<EtcdAuthState>,
    /// The volume each voter was last seen healthy on ([`crate::quorum_loss`]); left out
    /// while it is empty and nothing is recorded (no write for an empty map).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub member_volumes: Option<std::collections::BTreeMap<String, String>>,
    /// A loss of quorum while it lasts (`null` removes it once over).
    pub quorum_loss: Option<ferroplane_apis::etcd::EtcdQuorumLoss>,
    /// The last completed recovery; left out (what was reported stays) until one completes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_recovery: Option<ferroplane_apis::etcd::EtcdRecoveryRecord>,
}

/// Status fields, readiness, conditions and a note for the `Synced` message.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub status: StatusFields,
    pub readiness: Readiness,
    pub conditions: Vec<Desired>,
    pub note: Option<String>,
    /// Something is changing: look again soon.
    pub in_transition: bool,
}

/// Computes the report.
pub fn report(
    names: &ClusterNames,
    desired_size: u32,
    statefulset: Option<&StatefulSet>,
    membership: &Membership<'_>,
) -> Report {
    use conditions::*;
    use reasons::*;
    let status = statefulset.and_then(|s| s.status.as_ref());
    let ready = status.and_then(|s| s.ready_replicas).unwrap_or(0);
    let replicas = statefulset
        .and_then(|s| s.spec.as_ref())
        .and_then(|s| s.replicas)
        .unwrap_or(0);
    let rolling = status.is_some_and(|s| {
        let revisions_differ =
            matches!((&s.current_revision, &s.update_revision), (Some(c), Some(u)) if c != u);
        revisions_differ || s.updated_replicas.unwrap_or(replicas) < replicas
    });
    let desired = i32::try_from(desired_size).unwrap_or(i32::MAX);
    let mut notes = Vec::new();
    if desired_size.is_multiple_of(2) {
        notes.push(format!(
            "size {desired_size} is even: it tolerates no more member failures than size {} and needs a larger quorum; prefer an odd size",
            desired_size - 1
        ));
    }

    let (members, leader, available, progressing, degraded, healthy_all) = match membership {
        Membership::Known { observed, step } => {
            let voters: Vec<_> = observed
                .members
                .iter()
                .filter(|m| !m.member.is_learner)
                .collect();
            let healthy = voters
                .iter()
                .filter(|m| m.health == Health::Healthy)
                .count();
            let has_quorum = healthy >= quorum(voters.len());
            let available = Desired::new(
                AVAILABLE,
                if has_quorum {
                    ConditionStatus::True
                } else {
                    ConditionStatus::False
                },
                if has_quorum {
                    QUORUM_AVAILABLE
                } else {
                    QUORUM_LOST
                },
                format!(
                    "{healthy} of {} voting members healthy, quorum {}",
                    voters.len(),
                    quorum(voters.len())
                ),
            );
            let unhealthy: Vec<String> = observed
                .members
                .iter()
                .filter(|m| m.health != Health::Healthy)
                .map(|m| m.member.name.clone())
                .collect();
            let alarmed: Vec<String> = observed
                .members
                .iter()
                .filter(|m| {
                    m.status
                        .as_ref()
                        .is_some_and(|s| s.alarms().contains(&"NOSPACE"))
                })
                .map(|m| m.member.name.clone())
                .collect();
            let degraded = match step {
                _ if !alarmed.is_empty() => {
                    let message = format!(
                        "etcd raised its NOSPACE alarm (reported by {}): the database reached its space quota (option quota-backend-bytes) and every write fails; quorum is not lost. Compact the history, defragment each member, then disarm the alarm (etcdctl alarm disarm), or raise the quota",
                        alarmed.join(", ")
                    );
                    notes.push(message.clone());
                    Desired::new(DEGRADED, ConditionStatus::True, NO_SPACE, message)
                }
                Step::Blocked(why) => {
                    notes.push(why.clone());
                    Desired::new(DEGRADED, ConditionStatus::True, BLOCKED, why.clone())
                }
                Step::Flapping { why, .. } => {
                    notes.push(why.clone());
                    Desired::new(
                        DEGRADED,
                        ConditionStatus::True,
                        MEMBER_FLAPPING,
                        why.clone(),
                    )
                }
                _ if !unhealthy.is_empty() => Desired::new(
                    DEGRADED,
                    ConditionStatus::True,
                    MEMBER_UNHEALTHY,
                    format!("members not healthy: {}", unhealthy.join(", ")),
                ),
                _ => Desired::new(DEGRADED, ConditionStatus::False, ALL_MEMBERS_HEALTHY, ""),
            };
            let progressing = match step {
                Step::Steady | Step::Blocked(_) | Step::Flapping { .. } if rolling => {
                    rolling_condition()
                }
                Step::Steady | Step::Blocked(_) | Step::Flapping { .. } => {
                    Desired::new(PROGRESSING, ConditionStatus::False, STABLE, "")
                }
                other => Desired::new(
                    PROGRESSING,
                    ConditionStatus::True,
                    SCALING,
                    describe(other, names),
                ),
            };
            let all_healthy = unhealthy.is_empty()
                && alarmed.is_empty()
                && observed.members.len() == desired_size as usize
                && matches!(step, Step::Steady);
            (
                observed.status_members(names),
                observed.leader_name(),
                available,
                progressing,
                degraded,
                all_healthy,
            )
        }
        Membership::Unknown { why } => {
            let has_quorum =
                ready >= i32::try_from(quorum(desired_size as usize)).unwrap_or(i32::MAX);
            let available = Desired::new(
                AVAILABLE,
                if has_quorum {
                    ConditionStatus::True
                } else {
                    ConditionStatus::False
                },
                if has_quorum {
                    QUORUM_AVAILABLE
                } else {
                    QUORUM_LOST
                },
                format!("{ready} of {desired} member pods ready (membership unknown)"),
            );
            let message = format!(
                "cannot read etcd's membership ({why}); member health is unknown and size changes wait"
            );
            notes.push(message.clone());
            let degraded = Desired::new(
                DEGRADED,
                ConditionStatus::Unknown,
                MEMBERSHIP_UNKNOWN,
                message,
            );
            let progressing = if rolling {
                rolling_condition()
            } else if replicas != desired && statefulset.is_some() {
                Desired::new(
                    PROGRESSING,
                    ConditionStatus::True,
                    SCALING,
                    format!("size {replicas} → {desired} waits for etcd's membership API"),
                )
            } else {
                Desired::new(PROGRESSING, ConditionStatus::False, STABLE, "")
            };
            // Pods being ready says nothing about etcd's members (a pod can be ready in a
            // cluster that lost a member, or hold a removed member's data): never Ready here.
            (Vec::new(), None, available, progressing, degraded, false)
        }
    };

    let readiness = if statefulset.is_none() {
        Readiness::Creating
    } else if ready >= desired && healthy_all && !rolling {
        Readiness::Available
    } else if let Membership::Unknown { why } = membership {
        Readiness::Unavailable(format!(
            "{ready} of {desired} member pods ready, but etcd's membership is unknown ({why})"
        ))
    } else {
        Readiness::Unavailable(format!("{ready} of {desired} members ready"))
    };
    let phase = if statefulset.is_none()
        || (ready == 0
            && replicas > 0
            && readiness != Readiness::Available
            && !rolling
            && progressing.status != ConditionStatus::True)
    {
        EtcdPhase::Creating
    } else if rolling {
        EtcdPhase::Upgrading
    } else if progressing.status == ConditionStatus::True {
        EtcdPhase::Scaling
    } else if readiness != Readiness::Available {
        EtcdPhase::Degraded
    } else {
        EtcdPhase::Running
    };
    let in_transition =
        readiness != Readiness::Available || progressing.status == ConditionStatus::True;
    Report {
        status: StatusFields {
            ready_members: ready,
            members,
            leader,
            client_endpoint: names.client_endpoint(),
            phase,
            selector: names
                .selector()
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(","),
            restore: None,
            member_volumes: None,
            quorum_loss: None,
            last_recovery: None,
            auth: None,
        },
        readiness,
        conditions: vec![available, progressing, degraded],
        note: (!notes.is_empty()).then(|| notes.join("; ")),
        in_transition,
    }
}

fn rolling_condition() -> Desired {
    Desired::new(
        conditions::PROGRESSING,
        ConditionStatus::True,
        reasons::ROLLING_UPDATE,
        "the StatefulSet is replacing members one at a time",
    )
}

/// A step in words, for conditions and events.
pub fn describe(step: &Step, names: &ClusterNames) -> String {
    match step {
        Step::Steady => "membership matches the spec".into(),
        Step::Wait(why) | Step::Blocked(why) | Step::Flapping { why, .. } => why.clone(),
        Step::RestartEmpty { ordinal } => {
            format!("restarting {} with an empty volume", names.member(*ordinal))
        }
        Step::DeletePodOnDeletedClaim { ordinal, .. } => format!(
            "deleting pod {}, scheduled on its claim while the claim is being deleted",
            names.member(*ordinal)
        ),
        Step::AddLearner { ordinal } => format!("adding {} as a learner", names.member(*ordinal)),
        Step::Promote { ordinal, .. } => {
            format!("promoting learner {} to voter", names.member(*ordinal))
        }
        Step::Remove { ordinal, .. } => format!("removing member {}", names.member(*ordinal)),
        Step::Replace {
            ordinal,
            cause: Replacement::Failed,
            ..
        } => format!("replacing failed member {}", names.member(*ordinal)),
        Step::Replace {
            ordinal,
            cause: Replacement::DataLost,
            ..
        } => format!(
            "replacing member {}, whose data volume was lost",
            names.member(*ordinal)
        ),
        Step::ScaleStatefulSet { replicas } => {
            format!("setting the StatefulSet to {replicas} pods")
        }
    }
}

#[cfg(test)]
mod tests;
