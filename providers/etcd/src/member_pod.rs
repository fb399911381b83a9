//! Where the pod of a member being added stands with its data claim, and what that asks of the
//! controller. Pure; the controller reads the pod and the claim (`controller/volumes.rs`), the
//! planner (rule 2) acts on [`PodOnClaim::next`].
//!
//! A member restarted empty has its claim and its pod deleted (`Step::RestartEmpty`, and the
//! learner added for a replaced member). What follows, as Kubernetes 1.37 does it (the testenv's
//! release; read in its source):
//! - the pvc-protection controller keeps a deleted claim while a *scheduled* pod (`nodeName`
//!   set) names it, and only then (`podUsesPVCForDeletion`);
//! - a kubelet starts a pod on a claim being deleted as long as the claim still carries the
//!   pvc-protection finalizer (`getPVCExtractPV`): such a pod runs on the old volume, and keeps
//!   the claim from ever going;
//! - the scheduler does not place a pod whose claim is missing or being deleted (volume binding
//!   PreFilter);
//! - the StatefulSet controller creates a missing pod only once its claims exist and none is
//!   being deleted, and creates the missing claims of a Pending pod
//!   (`createMissingPersistentVolumeClaims`) — but it reads claims from its cache, so a pod can
//!   be made for a claim whose deletion it has not seen yet.
//!
//! So a new pod scheduled on the claim being deleted is the one state that never resolves by
//! itself: its pod is deleted again. Every other state is waited out, and said what it waits for.

/// The member's pod, as far as it matters here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodFacts {
    pub uid: String,
    /// `spec.nodeName` is set: the scheduler placed it (pvc-protection counts it).
    pub scheduled: bool,
    /// It has a deletion timestamp: it is stopping.
    pub terminating: bool,
}

/// The member's data claim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClaimFacts {
    Live,
    BeingDeleted,
    Missing,
}

/// The pod and the claim of one member that has not started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodOnClaim {
    pub claim_name: String,
    pub claim: ClaimFacts,
    /// The pod's name, whether or not it exists.
    pub pod_name: String,
    pub pod: Option<PodFacts>,
}

/// What the state asks of the controller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PodOnClaimStep {
    /// Nothing is in the way of the pod on its claim.
    Clear,
    /// Kubernetes is on its way; the text says what to.
    Wait(String),
    /// Delete the pod with this UID (and no other).
    DeletePod { uid: String },
}

impl PodOnClaim {
    /// The next step for this pod and claim.
    pub fn next(&self) -> PodOnClaimStep {
        let (claim, pod) = (&self.claim_name, &self.pod_name);
        match (&self.claim, &self.pod) {
            (ClaimFacts::Live, _) => PodOnClaimStep::Clear,
            (ClaimFacts::BeingDeleted, Some(p)) if p.terminating => PodOnClaimStep::Wait(format!(
                "pod {pod} is stopping; its claim {claim} is deleted once no scheduled pod uses it, then the StatefulSet makes both again, the claim empty"
            )),
            (ClaimFacts::BeingDeleted, Some(p)) if p.scheduled => {
                PodOnClaimStep::DeletePod { uid: p.uid.clone() }
            }
            (ClaimFacts::BeingDeleted, Some(_)) => PodOnClaimStep::Wait(format!(
                "pod {pod} is pending on claim {claim}, which is being deleted; once it is gone the StatefulSet controller makes a new, empty one"
            )),
            (ClaimFacts::BeingDeleted, None) => PodOnClaimStep::Wait(format!(
                "claim {claim} is being deleted; the StatefulSet controller makes it again, empty, and then pod {pod}"
            )),
            (ClaimFacts::Missing, Some(_)) => PodOnClaimStep::Wait(format!(
                "pod {pod} is pending: the StatefulSet controller creates its missing claim {claim}"
            )),
            (ClaimFacts::Missing, None) => PodOnClaimStep::Wait(format!(
                "the StatefulSet controller creates claim {claim}, then pod {pod}"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(claim: ClaimFacts, pod: Option<(bool, bool)>) -> PodOnClaim {
        PodOnClaim {
            claim_name: "data-e-2".into(),
            claim,
            pod_name: "e-2".into(),
            pod: pod.map(|(scheduled, terminating)| PodFacts {
                uid: "u-2".into(),
                scheduled,
                terminating,
            }),
        }
    }

    #[test]
    fn a_pod_on_a_live_claim_is_left_to_start() {
        for pod in [
            None,
            Some((true, false)),
            Some((false, false)),
            Some((true, true)),
        ] {
            assert_eq!(
                state(ClaimFacts::Live, pod).next(),
                PodOnClaimStep::Clear,
                "{pod:?}"
            );
        }
    }

    #[test]
    fn a_new_pod_scheduled_on_a_claim_being_deleted_is_deleted_again() {
        // It would hold the claim for ever and run on the old volume.
        assert_eq!(
            state(ClaimFacts::BeingDeleted, Some((true, false))).next(),
            PodOnClaimStep::DeletePod { uid: "u-2".into() }
        );
    }

    #[test]
    fn a_stopping_or_pending_pod_is_waited_for_and_never_deleted() {
        for (pod, words) in [
            (Some((true, true)), "pod e-2 is stopping"),
            (Some((false, true)), "pod e-2 is stopping"),
            (Some((false, false)), "pod e-2 is pending on claim data-e-2"),
            (None, "claim data-e-2 is being deleted"),
        ] {
            match state(ClaimFacts::BeingDeleted, pod).next() {
                PodOnClaimStep::Wait(why) => assert!(why.contains(words), "{why}"),
                other => panic!("{pod:?}: expected a wait, got {other:?}"),
            }
        }
    }

    #[test]
    fn a_missing_claim_is_left_to_the_statefulset_controller() {
        for pod in [None, Some((false, false)), Some((true, false))] {
            match state(ClaimFacts::Missing, pod).next() {
                PodOnClaimStep::Wait(why) => {
                    assert!(why.contains("creates") && why.contains("data-e-2"), "{why}");
                }
                other => panic!("{pod:?}: expected a wait, got {other:?}"),
            }
        }
    }
}
