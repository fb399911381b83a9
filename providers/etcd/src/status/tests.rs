//! Tests of `status`.

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
        (ConditionStatus::True, reasons::QUORUM_AVAILABLE)
    );
    let degraded = find(&r, conditions::DEGRADED);
    assert_eq!(
        (degraded.status, degraded.reason),
        (ConditionStatus::True, reasons::NO_SPACE)
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
        reasons::MEMBER_UNHEALTHY
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
    assert_eq!(find(&r, conditions::AVAILABLE).reason, reasons::QUORUM_LOST);
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
        (ConditionStatus::True, reasons::SCALING)
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
        reasons::ROLLING_UPDATE
    );
}

#[test]
fn status_fields_clear_members_leader_and_a_quorum_loss_no_longer_seen() {
    let fields = StatusFields {
        ready_members: 1,
        members: Vec::new(),
        leader: None,
        client_endpoint: "http://e-client.ns.svc:2379".into(),
        phase: EtcdPhase::Degraded,
        restore: None,
        selector: "app.kubernetes.io/instance=e".into(),
        auth: None,
        member_volumes: Some([("e-0".to_owned(), "uid-0".to_owned())].into()),
        quorum_loss: None,
        last_recovery: None,
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
            "memberVolumes": {"e-0": "uid-0"},
            "quorumLoss": null,
        })
    );
}
