//! Tests of `planner`.

use super::*;
use crate::member_pod::{ClaimFacts, PodFacts};
use Health::*;

fn voter(ordinal: u32, health: Health) -> PlannedMember {
    PlannedMember {
        id: 100 + u64::from(ordinal),
        ordinal: Some(ordinal),
        started: true,
        is_learner: false,
        health,
        data_lost: false,
        pod_on_claim: None,
    }
}

fn learner(ordinal: u32, started: bool, health: Health) -> PlannedMember {
    PlannedMember {
        is_learner: true,
        started,
        ..voter(ordinal, health)
    }
}

fn view(desired: u32, replicas: u32, members: Vec<PlannedMember>) -> ClusterView {
    ClusterView {
        desired_size: desired,
        statefulset_replicas: replicas,
        members,
        replace_failed: false,
    }
}

fn healthy_voters(n: u32) -> Vec<PlannedMember> {
    (0..n).map(|o| voter(o, Healthy)).collect()
}

#[test]
fn quorum_and_fault_tolerance() {
    assert_eq!(
        (1..=7).map(quorum).collect::<Vec<_>>(),
        [1, 2, 2, 3, 3, 4, 4]
    );
    assert_eq!(
        (1..=7).map(fault_tolerance).collect::<Vec<_>>(),
        [0, 0, 1, 1, 2, 2, 3]
    );
}

#[test]
fn steady_when_everything_matches() {
    for n in 1..=5 {
        assert_eq!(plan(&view(n, n, healthy_voters(n))), Step::Steady);
    }
}

#[test]
fn growing_adds_a_learner_before_the_pod() {
    assert_eq!(
        plan(&view(3, 1, healthy_voters(1))),
        Step::AddLearner { ordinal: 1 }
    );
}

#[test]
fn an_added_learner_gets_its_pod_then_waits() {
    let mut members = healthy_voters(1);
    members.push(learner(1, false, Unhealthy));
    assert_eq!(
        plan(&view(3, 1, members.clone())),
        Step::ScaleStatefulSet { replicas: 2 }
    );
    assert!(matches!(plan(&view(3, 2, members)), Step::Wait(_)));
}

#[test]
fn a_started_learner_is_promoted_when_healthy() {
    let mut members = healthy_voters(1);
    members.push(learner(1, true, Unhealthy));
    assert!(matches!(plan(&view(3, 2, members.clone())), Step::Wait(_)));
    members[1].health = Healthy;
    assert_eq!(
        plan(&view(3, 2, members)),
        Step::Promote {
            id: 101,
            ordinal: 1
        }
    );
}

#[test]
fn growth_waits_for_every_member_to_be_healthy() {
    let mut members = healthy_voters(2);
    members[1].health = Unhealthy;
    assert!(matches!(plan(&view(3, 2, members)), Step::Wait(_)));
}

#[test]
fn growth_fills_the_lowest_missing_ordinal() {
    let members = vec![voter(0, Healthy), voter(2, Healthy)];
    assert_eq!(plan(&view(3, 3, members)), Step::AddLearner { ordinal: 1 });
}

#[test]
fn shrinking_removes_the_highest_member_first_then_the_pod() {
    assert_eq!(
        plan(&view(1, 3, healthy_voters(3))),
        Step::Remove {
            id: 102,
            ordinal: 2,
            why: Removal::ScaleDown
        }
    );
    assert_eq!(
        plan(&view(1, 3, healthy_voters(2))),
        Step::Remove {
            id: 101,
            ordinal: 1,
            why: Removal::ScaleDown
        }
    );
    assert_eq!(
        plan(&view(1, 3, healthy_voters(1))),
        Step::ScaleStatefulSet { replicas: 1 }
    );
    assert_eq!(plan(&view(1, 1, healthy_voters(1))), Step::Steady);
}

#[test]
fn shrinking_never_loses_quorum() {
    // 3 voters, 2 unhealthy: removing the healthy one leaves 0 of 2; the unhealthy top one
    // leaves 1 of 2 — both below quorum.
    let members = vec![voter(0, Healthy), voter(1, Unhealthy), voter(2, Unhealthy)];
    assert!(matches!(plan(&view(1, 3, members)), Step::Wait(_)));
    // 5 voters with one down: removing the top (healthy) one leaves 3 of 4 healthy ≥ 3.
    let mut members = healthy_voters(5);
    members[1].health = Unhealthy;
    assert_eq!(
        plan(&view(3, 5, members)),
        Step::Remove {
            id: 104,
            ordinal: 4,
            why: Removal::ScaleDown
        }
    );
}

#[test]
fn the_last_voter_is_never_removed() {
    assert!(!safe_to_remove(&healthy_voters(1), 100));
}

#[test]
fn an_unwanted_learner_is_removed_even_when_unhealthy() {
    let mut members = healthy_voters(1);
    members.push(learner(1, true, Unhealthy));
    assert_eq!(
        plan(&view(1, 2, members)),
        Step::Remove {
            id: 101,
            ordinal: 1,
            why: Removal::NotNeeded
        }
    );
    let mut members = healthy_voters(1);
    members.push(learner(1, false, Unhealthy));
    assert_eq!(
        plan(&view(1, 1, members)),
        Step::Remove {
            id: 101,
            ordinal: 1,
            why: Removal::NotNeeded
        }
    );
}

#[test]
fn a_failed_member_is_only_reported_unless_replacement_is_allowed() {
    let mut members = healthy_voters(3);
    members[1].health = Failed;
    match plan(&view(3, 3, members.clone())) {
        Step::Flapping {
            id: 101,
            ordinal: 1,
            why,
        } => {
            assert!(why.contains("replaceFailedMembers"), "{why}");
        }
        other => panic!("expected Flapping, got {other:?}"),
    }
    assert!(!plan(&view(3, 3, members.clone())).is_change());
    assert_eq!(
        plan(&view(3, 3, members).replacing_failed(true)),
        Step::Replace {
            id: 101,
            ordinal: 1,
            cause: Replacement::Failed,
        }
    );
}

fn lost(member: PlannedMember) -> PlannedMember {
    PlannedMember {
        data_lost: true,
        ..member
    }
}

#[test]
fn a_voter_whose_volume_is_gone_is_replaced_without_replace_failed_members() {
    // Unhealthy is enough: the pod need not crash-loop first, the data is gone either way.
    for health in [Unhealthy, Failed] {
        let members = vec![voter(0, Healthy), lost(voter(1, health)), voter(2, Healthy)];
        for allowed in [false, true] {
            assert_eq!(
                plan(&view(3, 3, members.clone()).replacing_failed(allowed)),
                Step::Replace {
                    id: 101,
                    ordinal: 1,
                    cause: Replacement::DataLost,
                },
                "{health:?}, replaceFailedMembers {allowed}"
            );
        }
    }
}

#[test]
fn a_volume_lost_beyond_quorum_blocks_instead_of_removing() {
    let members = vec![
        voter(0, Healthy),
        lost(voter(1, Failed)),
        lost(voter(2, Failed)),
    ];
    match plan(&view(3, 3, members)) {
        Step::Blocked(why) => assert!(why.contains("lost its data volume"), "{why}"),
        other => panic!("expected Blocked, got {other:?}"),
    }
}

#[test]
fn a_healthy_member_is_never_replaced_for_its_volume_record() {
    // Healthy on another claim than the record (the record is only rewritten at the end of the
    // reconcile): it answers, so its data is there.
    let members = vec![
        voter(0, Healthy),
        lost(voter(1, Healthy)),
        voter(2, Healthy),
    ];
    assert_eq!(plan(&view(3, 3, members)), Step::Steady);
}

#[test]
fn a_lost_voter_above_the_desired_size_is_removed_as_a_scale_down() {
    let members = vec![
        voter(0, Healthy),
        voter(1, Healthy),
        voter(2, Healthy),
        lost(voter(3, Failed)),
    ];
    assert_eq!(
        plan(&view(3, 4, members)),
        Step::Remove {
            id: 103,
            ordinal: 3,
            why: Removal::ScaleDown,
        }
    );
}

#[test]
fn a_started_learner_that_keeps_failing_is_replaced() {
    let mut members = healthy_voters(2);
    members.push(learner(2, true, Failed));
    assert_eq!(
        plan(&view(3, 3, members.clone())),
        Step::Replace {
            id: 102,
            ordinal: 2,
            cause: Replacement::Failed,
        }
    );
    members[2].health = Unhealthy;
    assert!(matches!(plan(&view(3, 3, members)), Step::Wait(_)));
}

#[test]
fn a_failed_member_is_not_replaced_when_quorum_would_be_lost() {
    let mut members = healthy_voters(3);
    members[1].health = Failed;
    members[2].health = Unhealthy;
    assert!(matches!(
        plan(&view(3, 3, members).replacing_failed(true)),
        Step::Blocked(_)
    ));
    let mut single = healthy_voters(1);
    single[0].health = Failed;
    assert!(matches!(
        plan(&view(1, 1, single).replacing_failed(true)),
        Step::Blocked(_)
    ));
}

#[test]
fn an_added_member_whose_pod_fails_on_stale_data_restarts_empty() {
    let mut members = healthy_voters(1);
    members.push(learner(1, false, Failed));
    assert_eq!(
        plan(&view(3, 2, members.clone())),
        Step::RestartEmpty { ordinal: 1 }
    );
    let mut unstarted_voter = members.clone();
    unstarted_voter[1].is_learner = false;
    assert!(
        matches!(plan(&view(3, 2, unstarted_voter)), Step::Wait(_)),
        "a voter's volume is never emptied"
    );
    // Without a pod yet, the pod comes first.
    assert_eq!(
        plan(&view(3, 1, members)),
        Step::ScaleStatefulSet { replicas: 2 }
    );
}

fn on_claim(claim: ClaimFacts, pod: Option<(bool, bool)>) -> Option<PodOnClaim> {
    Some(PodOnClaim {
        claim_name: "data-e-1".into(),
        claim,
        pod_name: "e-1".into(),
        pod: pod.map(|(scheduled, terminating)| PodFacts {
            uid: "pod-uid".into(),
            scheduled,
            terminating,
        }),
    })
}

#[test]
fn a_member_restarted_empty_waits_for_its_fresh_claim_and_pod() {
    for health in [Unhealthy, Failed] {
        let mut members = healthy_voters(2);
        members.push(PlannedMember {
            pod_on_claim: on_claim(ClaimFacts::BeingDeleted, Some((false, false))),
            ..learner(2, false, health)
        });
        match plan(&view(3, 3, members.clone())) {
            Step::Wait(why) => assert!(
                why.starts_with("member 2 was added: pod e-1 is pending on claim data-e-1"),
                "{why}"
            ),
            other => panic!("{health:?}: expected a wait, got {other:?}"),
        }
        // A crash-looping pod is not restarted empty again while its claim is missing.
        members[2].pod_on_claim = on_claim(ClaimFacts::Missing, Some((true, false)));
        assert!(
            matches!(plan(&view(3, 3, members.clone())), Step::Wait(_)),
            "{health:?}"
        );
    }
}

#[test]
fn a_new_pod_scheduled_on_the_deleted_claim_is_deleted_by_uid() {
    let mut members = healthy_voters(2);
    members.push(PlannedMember {
        pod_on_claim: on_claim(ClaimFacts::BeingDeleted, Some((true, false))),
        ..learner(2, false, Failed)
    });
    assert_eq!(
        plan(&view(3, 3, members.clone())),
        Step::DeletePodOnDeletedClaim {
            ordinal: 2,
            uid: "pod-uid".into()
        }
    );
    // On a fresh claim it is the ordinary rule again: a failing learner restarts empty, a
    // starting one is waited for.
    members[2].pod_on_claim = on_claim(ClaimFacts::Live, Some((true, false)));
    assert_eq!(
        plan(&view(3, 3, members.clone())),
        Step::RestartEmpty { ordinal: 2 }
    );
    members[2].health = Unhealthy;
    assert!(matches!(plan(&view(3, 3, members)), Step::Wait(_)));
}

#[test]
fn a_failed_member_above_the_desired_size_is_just_removed() {
    let mut members = healthy_voters(3);
    members[2].health = Failed;
    assert_eq!(
        plan(&view(1, 3, members)),
        Step::Remove {
            id: 102,
            ordinal: 2,
            why: Removal::ScaleDown
        }
    );
}

#[test]
fn after_a_replacement_the_member_comes_back_without_scaling() {
    // (replacement itself needs spec.replaceFailedMembers; see above)
    let members = vec![voter(0, Healthy), voter(2, Healthy)];
    assert_eq!(
        plan(&view(3, 3, members.clone())),
        Step::AddLearner { ordinal: 1 }
    );
    let mut with_learner = members;
    with_learner.push(learner(1, false, Unhealthy));
    assert!(
        matches!(plan(&view(3, 3, with_learner)), Step::Wait(_)),
        "the pod exists; wait for it"
    );
}

#[test]
fn a_foreign_member_blocks() {
    let mut members = healthy_voters(3);
    members.push(PlannedMember {
        ordinal: None,
        ..voter(9, Healthy)
    });
    assert!(matches!(plan(&view(3, 3, members)), Step::Blocked(_)));
}

#[test]
fn missing_pods_for_existing_members_are_restored() {
    assert_eq!(
        plan(&view(3, 1, healthy_voters(3))),
        Step::ScaleStatefulSet { replicas: 3 }
    );
}

/// Drives a simulated cluster through every planned step from each size to each other size
/// and checks that quorum holds after every step and the end state is steady.
#[test]
fn every_resize_converges_without_losing_quorum() {
    for from in 1..=7u32 {
        for to in 1..=7u32 {
            let mut v = view(to, from, healthy_voters(from));
            let mut next_id = 1000;
            for step_count in 0.. {
                assert!(step_count < 100, "{from}->{to} did not converge: {v:?}");
                let step = plan(&v);
                match step {
                    Step::Steady => break,
                    Step::AddLearner { ordinal } => {
                        next_id += 1;
                        v.members.push(PlannedMember {
                            id: next_id,
                            ..learner(ordinal, false, Unhealthy)
                        });
                    }
                    Step::ScaleStatefulSet { replicas } => {
                        // Pods of members start and catch up.
                        v.statefulset_replicas = replicas;
                        for m in &mut v.members {
                            if m.ordinal.is_some_and(|o| o < replicas) {
                                m.started = true;
                                m.health = Healthy;
                            }
                        }
                    }
                    Step::Promote { id, .. } => {
                        v.members
                            .iter_mut()
                            .filter(|m| m.id == id)
                            .for_each(|m| m.is_learner = false);
                    }
                    Step::Remove { id, .. } => v.members.retain(|m| m.id != id),
                    other => panic!("{from}->{to}: unexpected {other:?}"),
                }
                let voters = v.members.iter().filter(|m| !m.is_learner).count();
                let healthy = v
                    .members
                    .iter()
                    .filter(|m| !m.is_learner && m.health == Healthy)
                    .count();
                assert!(
                    healthy >= quorum(voters),
                    "{from}->{to}: quorum lost after {step:?}"
                );
                assert!(
                    v.members.iter().filter(|m| m.is_learner).count() <= 1,
                    "one learner at a time"
                );
                assert!(v.members.iter().all(|m| {
                    m.ordinal.is_some_and(|o| o < v.statefulset_replicas) || !m.started
                }));
            }
            assert_eq!(v.members.len(), to as usize);
            assert_eq!(v.statefulset_replicas, to);
        }
    }
}
