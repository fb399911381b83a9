//! The scaling planner: from etcd's current members, their health, the StatefulSet's replica
//! count and the desired size, the single next step that moves the cluster toward the desired
//! size without ever losing quorum. Pure; the controller executes one step per reconcile and
//! plans again from fresh observations, so a crash between steps is harmless.
//!
//! Rules, in priority order:
//! 1. A member ferroplane did not create (peer URL not of this cluster) blocks all changes.
//! 2. A member added but not started: grow the StatefulSet so its pod exists, or wait for it;
//!    remove it instead if it is no longer wanted. When its pod exists and keeps crashing, the
//!    pod holds data of an earlier member (a volume that outlived a removal: etcd refuses it
//!    with "the member has been permanently removed from the cluster"): when it is a learner,
//!    restart it empty. It never started, so that data is no member's copy of the cluster's.
//!    While its pod and claim come back from such a restart, it waits for Kubernetes, except
//!    for a pod scheduled on the claim being deleted, which is deleted again (`member_pod`).
//! 3. A started member whose data volume is gone (its claim deleted or replaced by an empty one
//!    since it was last seen healthy) and that does not answer: removed to come back as a new
//!    member (rule 8), while quorum holds without it, with or without `replaceFailedMembers`
//!    (its data is gone either way). etcd's procedure for a member that lost
//!    its data is remove-and-add; under its old identity it would rejoin with an empty log,
//!    having forgotten the entries and votes it acknowledged. Its pod cannot start meanwhile:
//!    a started member's configuration file names no peer to join (see `render::bootstrap`).
//!    Without quorum it is the quorum-loss rule's case (`quorum_loss`), and blocked here.
//! 4. A started learner: promote it once healthy (etcd itself refuses while it lags), remove it
//!    when no longer wanted, or replace it when its pod keeps failing (a learner holds nothing
//!    the voters lack).
//! 5. A failed voter (its pod crash-loops while the member does not answer): reported as
//!    flapping and left alone, because its data may be the only healthy copy (an OOM or a bad
//!    image look the same as lost data from outside). Only when the spec allows replacement
//!    (`replaceFailedMembers`) and quorum survives without it is it removed; rule 8 then adds it
//!    back as a learner, and because its pod exists the pod restarts with an empty data
//!    directory. A failed voter above the desired size is removed like any scale-down.
//! 6. Too many voters: remove the highest ordinal, only if the remaining healthy voters still
//!    form a quorum of the remaining voters.
//! 7. More pods than members need: shrink the StatefulSet (only pods without a member go).
//! 8. Too few members: add the lowest missing ordinal as a learner, only while every voter is
//!    healthy (one learner at a time, as etcd requires).

use std::collections::BTreeSet;

use crate::member_pod::{PodOnClaim, PodOnClaimStep};

/// Health of one member as the controller observed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Health {
    Healthy,
    /// Not answering, not (yet) known to be broken: restarting, starting, partitioned.
    Unhealthy,
    /// Its pod keeps crashing while the member cannot be reached: typically a member whose data
    /// was lost and which etcd refuses to run with its old identity.
    Failed,
}

/// One member as the planner needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedMember {
    pub id: u64,
    /// From the member's peer URL; `None` for a member that is not one of this cluster's pods.
    pub ordinal: Option<u32>,
    pub started: bool,
    pub is_learner: bool,
    pub health: Health,
    /// The data volume it was last seen healthy on is gone (deleted, or replaced by a new,
    /// empty one); only known for voters with a recorded volume.
    pub data_lost: bool,
    /// Its pod and data claim; only read for learners that have not started, on storage.
    pub pod_on_claim: Option<PodOnClaim>,
}

/// Everything the planner looks at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterView {
    pub desired_size: u32,
    pub statefulset_replicas: u32,
    pub members: Vec<PlannedMember>,
    /// Whether a failed voter may be removed and rejoin empty (`spec.replaceFailedMembers`).
    pub replace_failed: bool,
}

impl ClusterView {
    /// The view with replacement of failed voters allowed or not.
    pub fn replacing_failed(self, allowed: bool) -> Self {
        Self {
            replace_failed: allowed,
            ..self
        }
    }
}

/// Why a member is removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Removal {
    /// The cluster is shrinking.
    ScaleDown,
    /// A learner or unstarted member that the desired size no longer needs.
    NotNeeded,
}

/// Why a member is replaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replacement {
    /// Its data volume is gone.
    DataLost,
    /// It keeps failing (a voter with `replaceFailedMembers`, or a learner).
    Failed,
}

/// The single next action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Membership and StatefulSet match the desired size.
    Steady,
    /// Something is in progress (a member starting, a learner catching up); plan again soon.
    Wait(String),
    /// A human must act; nothing is changed automatically.
    Blocked(String),
    /// `MemberAdd` as a learner for the pod of this ordinal.
    AddLearner {
        ordinal: u32,
    },
    Promote {
        id: u64,
        ordinal: u32,
    },
    Remove {
        id: u64,
        ordinal: u32,
        why: Removal,
    },
    /// Remove the member so that it rejoins under the same peer URL as a new member (the next
    /// step adds it as a learner and restarts its pod empty).
    Replace {
        id: u64,
        ordinal: u32,
        cause: Replacement,
    },
    /// Set the StatefulSet's replicas.
    ScaleStatefulSet {
        replicas: u32,
    },
    /// Delete the pod and data volume of a member that was added but whose pod keeps failing on
    /// data left by an earlier member, so that it starts empty and joins.
    RestartEmpty {
        ordinal: u32,
    },
    /// Delete the pod (this UID only) of a member that was added, scheduled on its claim while
    /// the claim is being deleted: it would keep the claim and run on the old volume
    /// (`member_pod`). The StatefulSet makes it again once the claim is gone.
    DeletePodOnDeletedClaim {
        ordinal: u32,
        uid: String,
    },
    /// A voter keeps failing; it is reported, not removed (see rule 5). Not a change.
    Flapping {
        id: u64,
        ordinal: u32,
        /// Why it is not replaced automatically.
        why: String,
    },
}

impl Step {
    /// Whether the step changes etcd membership or the StatefulSet.
    pub fn is_change(&self) -> bool {
        !matches!(
            self,
            Step::Steady | Step::Wait(_) | Step::Blocked(_) | Step::Flapping { .. }
        )
    }
}

/// Votes needed for a decision among `voters` members.
pub fn quorum(voters: usize) -> usize {
    voters / 2 + 1
}

/// Members that may be unavailable at once without losing quorum.
pub fn fault_tolerance(voters: usize) -> usize {
    voters.saturating_sub(quorum(voters))
}

/// The next step toward `view.desired_size`.
pub fn plan(view: &ClusterView) -> Step {
    let desired = view.desired_size;
    let replicas = view.statefulset_replicas;
    let members = &view.members;
    if members.is_empty() {
        return Step::Wait("etcd lists no members yet".into());
    }
    if let Some(foreign) = members.iter().find(|m| m.ordinal.is_none()) {
        return Step::Blocked(format!(
            "member {:x} does not belong to this cluster's pods; remove it with etcdctl before ferroplane changes membership",
            foreign.id
        ));
    }
    let ordinal = |m: &PlannedMember| m.ordinal.unwrap_or(u32::MAX);

    // 2. Members added but not started.
    if let Some(m) = members.iter().find(|m| !m.started) {
        let o = ordinal(m);
        if o >= desired && safe_to_remove(members, m.id) {
            return Step::Remove {
                id: m.id,
                ordinal: o,
                why: Removal::NotNeeded,
            };
        }
        if o >= replicas {
            return Step::ScaleStatefulSet { replicas: o + 1 };
        }
        // After a restart empty: the pod and its claim until the pod runs on a fresh claim.
        match m.pod_on_claim.as_ref().map(PodOnClaim::next) {
            Some(PodOnClaimStep::Wait(why)) => {
                return Step::Wait(format!("member {o} was added: {why}"));
            }
            Some(PodOnClaimStep::DeletePod { uid }) => {
                return Step::DeletePodOnDeletedClaim { ordinal: o, uid };
            }
            Some(PodOnClaimStep::Clear) | None => {}
        }
        // Only a learner: it was added by ferroplane for an empty pod and never started, so
        // whatever its volume holds is no member's data. An unstarted voter (a new cluster's
        // member) is left to a human.
        if m.is_learner && m.health == Health::Failed {
            return Step::RestartEmpty { ordinal: o };
        }
        return Step::Wait(format!("member {o} was added and its pod is starting"));
    }

    // 3. Started members whose data is gone.
    if let Some(m) = members
        .iter()
        .find(|m| m.data_lost && m.health != Health::Healthy)
    {
        let o = ordinal(m);
        if !safe_to_remove(members, m.id) {
            return Step::Blocked(format!(
                "member {o} lost its data volume and removing it would lose quorum ({}); see the Ready condition and spec.recovery",
                healthy_summary(members)
            ));
        }
        if o >= desired {
            return Step::Remove {
                id: m.id,
                ordinal: o,
                why: Removal::ScaleDown,
            };
        }
        // No `replaceFailedMembers` needed: unlike a failed voter (rule 5), whose data may be
        // the only healthy copy, this one's data is gone either way.
        return Step::Replace {
            id: m.id,
            ordinal: o,
            cause: Replacement::DataLost,
        };
    }

    // 4. Learners that have started.
    if let Some(m) = members.iter().find(|m| m.is_learner) {
        let o = ordinal(m);
        if o >= desired {
            return Step::Remove {
                id: m.id,
                ordinal: o,
                why: Removal::NotNeeded,
            };
        }
        if m.health == Health::Healthy {
            return Step::Promote {
                id: m.id,
                ordinal: o,
            };
        }
        if m.health == Health::Failed {
            return Step::Replace {
                id: m.id,
                ordinal: o,
                cause: Replacement::Failed,
            };
        }
        return Step::Wait(format!("learner {o} is catching up with the leader"));
    }

    // 5. Failed voters.
    if let Some(m) = members.iter().find(|m| m.health == Health::Failed) {
        let o = ordinal(m);
        let safe = safe_to_remove(members, m.id);
        if o >= desired && safe {
            return Step::Remove {
                id: m.id,
                ordinal: o,
                why: Removal::ScaleDown,
            };
        }
        if !view.replace_failed {
            return Step::Flapping {
                id: m.id,
                ordinal: o,
                why: format!(
                    "member {o} keeps crashing and does not answer; it is not removed automatically because its data may be the only healthy copy (check the pod's logs: an OOM or a bad image look the same as lost data). Set spec.replaceFailedMembers: true to let ferroplane replace it with an empty member while quorum allows ({})",
                    healthy_summary(members)
                ),
            };
        }
        if !safe {
            return Step::Blocked(format!(
                "member {o} has failed and replacing it would lose quorum ({}); restore it or recover the cluster from a snapshot",
                healthy_summary(members)
            ));
        }
        return Step::Replace {
            id: m.id,
            ordinal: o,
            cause: Replacement::Failed,
        };
    }

    // 6. Shrink membership, highest ordinal first so the StatefulSet can follow.
    if members.len() > desired as usize {
        let victim = members
            .iter()
            .max_by_key(|m| ordinal(m))
            .unwrap_or(&members[0]);
        let o = ordinal(victim);
        if !safe_to_remove(members, victim.id) {
            return Step::Wait(format!(
                "removing member {o} now would lose quorum ({}); waiting for members to become healthy",
                healthy_summary(members)
            ));
        }
        return Step::Remove {
            id: victim.id,
            ordinal: o,
            why: Removal::ScaleDown,
        };
    }

    // 7. Shrink the StatefulSet down to the members that remain (never below the desired size:
    //    a pod whose member is being replaced keeps its place).
    let needed = members
        .iter()
        .map(|m| ordinal(m) + 1)
        .max()
        .unwrap_or(0)
        .max(desired.min(replicas));
    if replicas > needed {
        return Step::ScaleStatefulSet { replicas: needed };
    }

    // 8. Grow, one learner at a time, only into a fully healthy cluster.
    if members.len() < desired as usize {
        if members.iter().any(|m| m.health != Health::Healthy) {
            return Step::Wait(format!(
                "adding a member waits until every member is healthy ({})",
                healthy_summary(members)
            ));
        }
        let present: BTreeSet<u32> = members.iter().map(ordinal).collect();
        if let Some(missing) = (0..desired).find(|o| !present.contains(o)) {
            return Step::AddLearner { ordinal: missing };
        }
    }

    if replicas < needed {
        return Step::ScaleStatefulSet { replicas: needed };
    }
    Step::Steady
}

/// Whether removing member `id` leaves a quorum of healthy voters among the remaining voters.
/// Removing a learner never affects quorum; the last voter is never removed.
pub fn safe_to_remove(members: &[PlannedMember], id: u64) -> bool {
    let Some(target) = members.iter().find(|m| m.id == id) else {
        return true;
    };
    if target.is_learner {
        return true;
    }
    let remaining: Vec<&PlannedMember> = members
        .iter()
        .filter(|m| !m.is_learner && m.id != id)
        .collect();
    let healthy = remaining
        .iter()
        .filter(|m| m.health == Health::Healthy)
        .count();
    !remaining.is_empty() && healthy >= quorum(remaining.len())
}

fn healthy_summary(members: &[PlannedMember]) -> String {
    let voters: Vec<_> = members.iter().filter(|m| !m.is_learner).collect();
    let healthy = voters
        .iter()
        .filter(|m| m.health == Health::Healthy)
        .count();
    format!(
        "{healthy} of {} voters healthy, quorum {}",
        voters.len(),
        quorum(voters.len())
    )
}

#[cfg(test)]
mod tests;
