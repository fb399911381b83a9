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
use crate::planner::{Health, Step, quorum};
use crate::scaling::Observed;

/// Condition types and reasons besides `Ready` and `Synced`.
pub mod conditions {
    pub const AVAILABLE: &str = "Available";
    pub const PROGRESSING: &str = "Progressing";
    pub const DEGRADED: &str = "Degraded";

    pub const QUORUM_AVAILABLE: &str = "QuorumAvailable";
    pub const QUORUM_LOST: &str = "QuorumLost";
    pub const SCALING: &str = "Scaling";
    pub const ROLLING_UPDATE: &str = "RollingUpdate";
    pub const STABLE: &str = "Stable";
    pub const MEMBER_UNHEALTHY: &str = "MemberUnhealthy";
    pub const BLOCKED: &str = "Blocked";
    pub const MEMBER_FLAPPING: &str = "MemberFlapping";
    pub const ALL_MEMBERS_HEALTHY: &str = "AllMembersHealthy";
    pub const MEMBERSHIP_UNKNOWN: &str = "MembershipUnknown";
    /// etcd raised its NOSPACE alarm: the database reached the space quota and writes fail.
    pub const NO_SPACE: &str = "NoSpace";
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
        conditions::ROLLING_UPDATE,
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
        Step::AddLearner { ordinal } => format!("adding {} as a learner", names.member(*ordinal)),
        Step::Promote { ordinal, .. } => {
            format!("promoting learner {} to voter", names.member(*ordinal))
        }
        Step::Remove { ordinal, .. } => format!("removing member {}", names.member(*ordinal)),
        Step::Replace { ordinal, .. } => {
            format!("replacing failed member {}", names.member(*ordinal))
        }
        Step::ScaleStatefulSet { replicas } => {
            format!("setting the StatefulSet to {replicas} pods")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::membership::Member;
    use crate::scaling::ObservedMember;
    use k8s_openapi::api::apps::v1::{StatefulSetSpec, StatefulSetStatus};

    fn sts(replicas: i32, ready: i32) -> StatefulSet {
        StatefulSet {
            spec: Some(StatefulSetSpec {
                replicas: Some(replicas),
                ..StatefulSetSpec::default()
            }),
            status: Some(StatefulSetStatus {
                replicas,
                ready_replicas: Some(ready),
                ..StatefulSetStatus::default()
            }),
            ..StatefulSet::default()
        }
    }

    fn observed(healthy: &[bool]) -> Observed {
        let names = ClusterNames::new("e", "ns");
        Observed {
            members: healthy
                .iter()
                .enumerate()
                .map(|(i, h)| {
                    let o = u32::try_from(i).expect("small");
                    ObservedMember {
                        member: Member {
                            id: 10 + u64::from(o),
                            name: names.member(o),
                            peer_urls: vec![names.peer_url(o)],
                            client_urls: vec![],
                            is_learner: false,
                        },
                        ordinal: Some(o),
                        status: None,
                        health: if *h {
                            Health::Healthy
                        } else {
                            Health::Unhealthy
                        },
                    }
                })
                .collect(),
            leader: Some(10),
        }
    }

    fn find<'a>(r: &'a Report, type_: &str) -> &'a Desired {
        r.conditions
            .iter()
            .find(|c| c.type_ == type_)
            .expect("condition present")
    }

    #[test]
    fn nospace_is_reported_as_such_and_not_as_quorum_loss() {
        let names = ClusterNames::new("e", "ns");
        let mut o = observed(&[true, true, true]);
        for m in &mut o.members {
            m.status = Some(crate::membership::MemberStatus {
                member_id: m.member.id,
                leader: 10,
                version: "3.5.17".into(),
                raft_index: 9,
                is_learner: false,
                errors: vec![format!("memberID:{} alarm:NOSPACE ", 10)],
                db_size: 16384,
                db_size_in_use: 16384,
            });
        }
        let r = report(
            &names,
            3,
            Some(&sts(3, 3)),
            &Membership::Known {
                observed: &o,
                step: &Step::Steady,
            },
        );
        let available = find(&r, conditions::AVAILABLE);
        assert_eq!(
            (available.status, available.reason),
            (ConditionStatus::True, conditions::QUORUM_AVAILABLE)
        );
        let degraded = find(&r, conditions::DEGRADED);
        assert_eq!(
            (degraded.status, degraded.reason),
            (ConditionStatus::True, conditions::NO_SPACE)
        );
        assert!(
            degraded.message.contains("quota-backend-bytes"),
            "{}",
            degraded.message
        );
        assert_ne!(r.readiness, Readiness::Available, "writes fail: not Ready");
    }

    #[test]
    fn a_healthy_cluster_is_running_and_ready() {
        let names = ClusterNames::new("e", "ns");
        let o = observed(&[true, true, true]);
        let r = report(
            &names,
            3,
            Some(&sts(3, 3)),
            &Membership::Known {
                observed: &o,
                step: &Step::Steady,
            },
        );
        assert_eq!(r.readiness, Readiness::Available);
        assert_eq!(r.status.phase, EtcdPhase::Running);
        assert_eq!(r.status.leader.as_deref(), Some("e-0"));
        assert_eq!(r.status.members.len(), 3);
        assert_eq!(r.status.client_endpoint, "http://e-client.ns.svc:2379");
        assert_eq!(
            r.status.selector,
            "app.kubernetes.io/instance=e,app.kubernetes.io/name=etcd"
        );
        assert_eq!(
            find(&r, conditions::AVAILABLE).status,
            ConditionStatus::True
        );
        assert_eq!(
            find(&r, conditions::DEGRADED).status,
            ConditionStatus::False
        );
        assert_eq!(
            find(&r, conditions::PROGRESSING).status,
            ConditionStatus::False
        );
        assert!(r.note.is_none());
        assert!(!r.in_transition);
    }

    #[test]
    fn an_unhealthy_member_degrades_but_keeps_quorum() {
        let names = ClusterNames::new("e", "ns");
        let o = observed(&[true, true, false]);
        let r = report(
            &names,
            3,
            Some(&sts(3, 2)),
            &Membership::Known {
                observed: &o,
                step: &Step::Steady,
            },
        );
        assert_eq!(
            find(&r, conditions::AVAILABLE).status,
            ConditionStatus::True
        );
        assert_eq!(
            find(&r, conditions::DEGRADED).reason,
            conditions::MEMBER_UNHEALTHY
        );
        assert!(matches!(r.readiness, Readiness::Unavailable(_)));
        assert_eq!(r.status.phase, EtcdPhase::Degraded);
    }

    #[test]
    fn lost_quorum_is_reported() {
        let names = ClusterNames::new("e", "ns");
        let o = observed(&[true, false, false]);
        let r = report(
            &names,
            3,
            Some(&sts(3, 1)),
            &Membership::Known {
                observed: &o,
                step: &Step::Steady,
            },
        );
        assert_eq!(
            find(&r, conditions::AVAILABLE).reason,
            conditions::QUORUM_LOST
        );
    }

    #[test]
    fn scaling_is_progressing() {
        let names = ClusterNames::new("e", "ns");
        let o = observed(&[true]);
        let step = Step::AddLearner { ordinal: 1 };
        let r = report(
            &names,
            3,
            Some(&sts(1, 1)),
            &Membership::Known {
                observed: &o,
                step: &step,
            },
        );
        let p = find(&r, conditions::PROGRESSING);
        assert_eq!(
            (p.status, p.reason),
            (ConditionStatus::True, conditions::SCALING)
        );
        assert!(p.message.contains("e-1"));
        assert_eq!(r.status.phase, EtcdPhase::Scaling);
        assert!(r.in_transition);
    }

    #[test]
    fn unknown_membership_falls_back_to_the_statefulset_and_is_never_ready() {
        let names = ClusterNames::new("e", "ns");
        let m = Membership::Unknown {
            why: "connection refused".into(),
        };
        let r = report(&names, 3, Some(&sts(3, 3)), &m);
        assert_eq!(r.status.ready_members, 3);
        assert!(r.status.members.is_empty());
        match &r.readiness {
            Readiness::Unavailable(why) => {
                assert!(why.contains("membership is unknown"), "{why}");
            }
            other => panic!("all pods ready but membership unknown: {other:?}"),
        }
        assert_eq!(
            find(&r, conditions::DEGRADED).status,
            ConditionStatus::Unknown
        );
        assert!(
            r.note
                .as_deref()
                .is_some_and(|n| n.contains("connection refused"))
        );
        let creating = report(&names, 3, None, &m);
        assert_eq!(creating.readiness, Readiness::Creating);
        assert_eq!(creating.status.phase, EtcdPhase::Creating);
    }

    #[test]
    fn even_sizes_are_warned_about() {
        let names = ClusterNames::new("e", "ns");
        let o = observed(&[true, true, true, true]);
        let r = report(
            &names,
            4,
            Some(&sts(4, 4)),
            &Membership::Known {
                observed: &o,
                step: &Step::Steady,
            },
        );
        assert!(
            r.note.as_deref().is_some_and(|n| n.contains("even")),
            "{:?}",
            r.note
        );
        assert_eq!(r.readiness, Readiness::Available, "even sizes are allowed");
    }

    #[test]
    fn a_rolling_update_is_upgrading() {
        let names = ClusterNames::new("e", "ns");
        let mut s = sts(3, 3);
        if let Some(st) = s.status.as_mut() {
            st.current_revision = Some("a".into());
            st.update_revision = Some("b".into());
        }
        let o = observed(&[true, true, true]);
        let r = report(
            &names,
            3,
            Some(&s),
            &Membership::Known {
                observed: &o,
                step: &Step::Steady,
            },
        );
        assert_eq!(r.status.phase, EtcdPhase::Upgrading);
        assert_eq!(
            find(&r, conditions::PROGRESSING).reason,
            conditions::ROLLING_UPDATE
        );
    }

    #[test]
    fn status_fields_clear_members_and_leader_etcd_no_longer_reports() {
        let fields = StatusFields {
            ready_members: 1,
            members: Vec::new(),
            leader: None,
            client_endpoint: "http://e-client.ns.svc:2379".into(),
            phase: EtcdPhase::Degraded,
            restore: None,
            selector: "app.kubernetes.io/instance=e".into(),
            auth: None,
        };
        assert_eq!(
            serde_json::to_value(&fields).expect("serializes"),
            serde_json::json!({
                "readyMembers": 1,
                "members": [],
                "leader": null,
                "clientEndpoint": "http://e-client.ns.svc:2379",
                "phase": "Degraded",
                "selector": "app.kubernetes.io/instance=e",
            })
        );
    }
}
