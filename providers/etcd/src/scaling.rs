//! One reconcile's worth of membership work: observe the members and their health through a
//! [`Membership`], turn that into the planner's view, and carry out the planner's step.
//! The parts that concern pods (StatefulSet replicas, wiping a failed member's pod) are handed
//! back to the caller as an [`Applied`] so that the same code drives the controller and the
//! tests with real etcd processes.

use ferroplane_apis::etcd::{EtcdMember, MemberRole};
use futures::future::join_all;

use crate::membership::{Member, MemberStatus, Membership, MembershipError, PromoteOutcome};
use crate::names::Topology;
use crate::planner::{ClusterView, Health, PlannedMember, Removal, Replacement, Step};
use crate::reasons;

/// A member with what the controller found out about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObservedMember {
    pub member: Member,
    pub ordinal: Option<u32>,
    /// `None` when the member did not answer.
    pub status: Option<MemberStatus>,
    pub health: Health,
}

/// The members of a reachable cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observed {
    pub members: Vec<ObservedMember>,
    /// ID of the leader, as a healthy member reports it.
    pub leader: Option<u64>,
}

impl Observed {
    pub fn planner_view(&self, desired_size: u32, statefulset_replicas: u32) -> ClusterView {
        ClusterView {
            desired_size,
            statefulset_replicas,
            members: self
                .members
                .iter()
                .map(|m| PlannedMember {
                    id: m.member.id,
                    ordinal: m.ordinal,
                    started: m.member.started(),
                    is_learner: m.member.is_learner,
                    health: m.health,
                    data_lost: false,
                    pod_on_claim: None,
                })
                .collect(),
            replace_failed: false,
        }
    }

    /// Ordinals of the members, for the bootstrap configuration of new pods.
    pub fn ordinals(&self) -> std::collections::BTreeSet<u32> {
        self.members.iter().filter_map(|m| m.ordinal).collect()
    }

    /// Ordinals of the members whose configuration files are sealed: the voters that have
    /// started (hold data of their own). A learner is not sealed until it is promoted: it may
    /// have started and published its name before its log is on disk (a pod restarted while
    /// it receives the leader's snapshot comes back without a WAL), and then it must join again
    /// from its peers; a learner that rejoins empty cannot vote, so nothing is lost by it.
    pub fn sealable_ordinals(&self) -> std::collections::BTreeSet<u32> {
        self.members
            .iter()
            .filter(|m| m.member.started() && !m.member.is_learner)
            .filter_map(|m| m.ordinal)
            .collect()
    }

    /// Ordinals below `replicas` (those with a pod) that are no member: their member was
    /// removed (replaced, or by hand) and their pod and volume are about to be deleted. Their
    /// files are sealed as a started member's are: a pod restarting there after the replacement
    /// learner was added would otherwise find its peer URL in the membership and join as that
    /// learner on the doomed volume; the learner, started again empty under the same ID, could
    /// then never catch up (the leader remembers a log it no longer has).
    pub fn memberless_ordinals(&self, replicas: u32) -> std::collections::BTreeSet<u32> {
        let members = self.ordinals();
        (0..replicas).filter(|o| !members.contains(o)).collect()
    }

    /// The ordinals whose configuration files are sealed with a StatefulSet of `replicas`: the
    /// started voters when their data is on claims (`storage`; without it every replaced pod
    /// starts empty and rejoins as etcd allows), and the pods that are no member, always.
    pub fn sealed_ordinals(&self, replicas: u32, storage: bool) -> std::collections::BTreeSet<u32> {
        let mut sealed = if storage {
            self.sealable_ordinals()
        } else {
            std::collections::BTreeSet::new()
        };
        sealed.extend(self.memberless_ordinals(replicas));
        sealed
    }

    /// Members as the status reports them.
    pub fn status_members(&self, topology: &impl Topology) -> Vec<EtcdMember> {
        let mut out: Vec<EtcdMember> = self
            .members
            .iter()
            .map(|m| EtcdMember {
                name: match (m.member.started(), m.ordinal) {
                    (true, _) => m.member.name.clone(),
                    (false, Some(o)) => topology.member_name(o),
                    (false, None) => String::new(),
                },
                id: format!("{:x}", m.member.id),
                role: if m.member.is_learner {
                    MemberRole::Learner
                } else {
                    MemberRole::Voter
                },
                healthy: m.health == Health::Healthy,
            })
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// Name of the leader.
    pub fn leader_name(&self) -> Option<String> {
        let leader = self.leader?;
        self.members
            .iter()
            .find(|m| m.member.id == leader)
            .map(|m| m.member.name.clone())
    }
}

/// Lists the members and asks each one for its status (concurrently). `failed(ordinal)` says
/// whether a member's pod is known to be crash-looping: an unreachable member whose pod keeps
/// failing is [`Health::Failed`] (started or not: a member added but never started whose pod
/// crash-loops is typically stuck on data an earlier member left in its volume).
pub async fn observe<M: Membership>(
    client: &M,
    topology: &impl Topology,
    failed: impl Fn(u32) -> bool,
) -> Result<Observed, MembershipError> {
    let members = client.list().await?;
    let statuses = join_all(members.iter().map(|m| async {
        let url = m.client_urls.first().cloned().or_else(|| {
            let ordinal = m
                .peer_urls
                .iter()
                .find_map(|u| topology.ordinal_of_peer_url(u))?;
            Some(topology.client_url(ordinal))
        })?;
        client.status(&url).await.ok()
    }))
    .await;
    let mut leader = None;
    let members = members
        .into_iter()
        .zip(statuses)
        .map(|(member, status)| {
            let ordinal = member
                .peer_urls
                .iter()
                .find_map(|u| topology.ordinal_of_peer_url(u));
            // An alarm (NOSPACE) is not the member's ill health: it answers, follows a leader
            // and keeps the quorum; the status reports the alarm itself.
            let answered = status.as_ref().is_some_and(|s| {
                !s.has_other_errors() && s.leader != 0 && s.member_id == member.id
            });
            if answered {
                leader = leader.or(status.as_ref().map(|s| s.leader));
            }
            let health = match (answered, ordinal) {
                (true, _) => Health::Healthy,
                (false, Some(o)) if failed(o) => Health::Failed,
                (false, _) => Health::Unhealthy,
            };
            ObservedMember {
                member,
                ordinal,
                status,
                health,
            }
        })
        .collect();
    Ok(Observed { members, leader })
}

/// What carrying out a step asks of the pods, and what to tell the user.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    /// New StatefulSet replicas.
    pub scale_to: Option<u32>,
    /// Delete this ordinal's pod and data volume so that it starts empty and joins as the
    /// learner just added for it.
    pub restart_empty: Option<u32>,
    /// Delete this ordinal's pod if it still has this UID (its claim is being deleted; the
    /// claim is left alone).
    pub delete_pod: Option<(u32, String)>,
    /// Delete the data volumes (PVC `data-<pod>`) of these ordinals, whose pods are gone or
    /// going: a removed member's data must never be mounted again by a pod of the same ordinal
    /// (etcd refuses to start on it: "the member has been permanently removed from the
    /// cluster"). A StatefulSet keeps such volumes unless its retention policy says otherwise.
    pub delete_volumes: Vec<u32>,
    /// An event: (reason, message).
    pub event: Option<(&'static str, String)>,
    /// Whether membership changed; when it did, observe again before the next step.
    pub changed_membership: bool,
}

/// Carries out `step`'s membership part. `statefulset_replicas` tells whether the pod of a
/// member being added exists already: it then holds the data of a removed member (a
/// replacement, or a member removed by hand) and must restart empty to join as the new member.
pub async fn apply<M: Membership>(
    step: &Step,
    client: &M,
    topology: &impl Topology,
    statefulset_replicas: u32,
) -> Result<Applied, MembershipError> {
    let mut applied = Applied::default();
    match *step {
        Step::Steady | Step::Wait(_) | Step::Blocked(_) | Step::Flapping { .. } => {}
        Step::ScaleStatefulSet { replicas } => {
            applied.scale_to = Some(replicas);
            applied.delete_volumes = (replicas..statefulset_replicas).collect();
        }
        Step::RestartEmpty { ordinal } => {
            applied.restart_empty = Some(ordinal);
            applied.event = Some((
                reasons::MEMBER_RESTARTED_EMPTY,
                format!(
                    "{} was added but its pod keeps failing on data an earlier member left in its volume; its pod and volume are deleted so that it starts empty",
                    topology.member_name(ordinal)
                ),
            ));
        }
        Step::DeletePodOnDeletedClaim { ordinal, ref uid } => {
            applied.delete_pod = Some((ordinal, uid.clone()));
            applied.event = Some((
                reasons::MEMBER_RESTARTED_EMPTY,
                format!(
                    "{} was scheduled on its data claim while the claim was being deleted (it would run on the old volume and keep the claim); its pod is deleted so that the StatefulSet makes it again on a fresh claim",
                    topology.member_name(ordinal)
                ),
            ));
        }
        Step::AddLearner { ordinal } => {
            let member = client.add_learner(&topology.peer_url(ordinal)).await?;
            applied.changed_membership = true;
            let pod_exists = ordinal < statefulset_replicas;
            if pod_exists {
                applied.restart_empty = Some(ordinal);
            } else {
                applied.delete_volumes = vec![ordinal];
            }
            applied.event = Some((
                reasons::MEMBER_ADDED,
                format!(
                    "added {} as learner {:x}{}; it is promoted to voter once it has caught up",
                    topology.member_name(ordinal),
                    member.id,
                    if pod_exists {
                        ", its pod restarts with an empty data directory"
                    } else {
                        ""
                    }
                ),
            ));
        }
        Step::Promote { id, ordinal } => {
            if client.promote(id).await? == PromoteOutcome::Promoted {
                applied.changed_membership = true;
                applied.event = Some((
                    reasons::MEMBER_PROMOTED,
                    format!(
                        "promoted {} ({id:x}) to voter",
                        topology.member_name(ordinal)
                    ),
                ));
            }
        }
        Step::Remove { id, ordinal, why } => {
            client.remove(id).await?;
            applied.changed_membership = true;
            let because = match why {
                Removal::ScaleDown => "the cluster is scaling down",
                Removal::NotNeeded => "the desired size no longer needs it",
            };
            applied.event = Some((
                reasons::MEMBER_REMOVED,
                format!(
                    "removed {} ({id:x}) because {because}",
                    topology.member_name(ordinal)
                ),
            ));
        }
        Step::Replace { id, ordinal, cause } => {
            // A failed voter counts toward quorum; removing it first makes the cluster's fault
            // tolerance honest again. It comes back as a learner at the next step.
            client.remove(id).await?;
            applied.changed_membership = true;
            let member = topology.member_name(ordinal);
            applied.event = Some(match cause {
                Replacement::DataLost => (
                    reasons::MEMBER_DATA_LOST,
                    format!(
                        "{member} ({id:x}) lost its data volume; removed it, it rejoins as a new member and copies the data from the leader"
                    ),
                ),
                Replacement::Failed => (
                    reasons::MEMBER_REPLACED,
                    format!(
                        "{member} ({id:x}) kept failing while the rest of the cluster was healthy (e.g. its data was lost); removed it, it rejoins as a new member"
                    ),
                ),
            });
        }
    }
    Ok(applied)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(id: u64, name: &str, is_learner: bool, ordinal: u32) -> ObservedMember {
        ObservedMember {
            member: Member {
                id,
                name: name.to_owned(),
                is_learner,
                peer_urls: Vec::new(),
                client_urls: Vec::new(),
            },
            ordinal: Some(ordinal),
            status: None,
            health: Health::Healthy,
        }
    }

    #[test]
    fn only_started_voters_are_sealed_never_a_learner_catching_up() {
        let observed = Observed {
            members: vec![
                member(1, "e-0", false, 0),
                member(2, "e-1", false, 1),
                // Added a moment ago as a learner and started: its log may not be on disk yet.
                member(3, "e-2", true, 2),
                // Added, not started.
                member(4, "", true, 3),
            ],
            leader: Some(1),
        };
        assert_eq!(observed.sealable_ordinals(), [0, 1].into());
        assert_eq!(observed.ordinals(), [0, 1, 2, 3].into());
    }
}
