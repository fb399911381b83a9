//! The quorum-loss check of `observe` and `update` (`spec.recovery`): the evidence the rule of
//! [`crate::quorum_loss`] judges, the recovery a permanent loss triggers ([`crate::recovery`]),
//! and what the status records for the next reconcile (the volume each voter was last seen
//! healthy on, since when a loss lasts, the recovery under way).

use std::collections::BTreeMap;

use ferroplane_apis::etcd::{EtcdCluster, EtcdQuorumLoss, EtcdRecoveryRecord, RecoveryPolicy};
use ferroplane_apis::etcd_backup::EtcdBackup;
use ferroplane_runtime::ReconcileError;
use jiff::{SignedDuration, Timestamp};
use kube::api::{Api, ListParams};

use super::client::EtcdClient;
use super::snapshot::Snapshot;
use super::volumes::volume_state;
use crate::error::{Error, to_reconcile};
use crate::membership::Membership;
use crate::names::RECOVER_FROM_ANNOTATION;
use crate::planner::Health;
use crate::quorum_loss::{self, Verdict, VoterEvidence};
use crate::recovery::{self, Trigger};

/// What the check found, for the status and the `Ready` condition.
pub(super) struct QuorumCheck {
    pub(super) verdict: Verdict,
    /// Voter name → UID of the claim it was last seen healthy on (empty during a recovery: the
    /// restored members are recorded anew once healthy).
    pub(super) member_volumes: BTreeMap<String, String>,
    /// The recovery under way (from the status) or decided now.
    pub(super) recovery: Option<EtcdRecoveryRecord>,
    /// Why a triggered recovery cannot start (no snapshot, a bad annotation).
    pub(super) blocked: Option<String>,
    /// Whether the recovery was read from the status: only a recovery the status records is
    /// carried out (the decision is written before anything is deleted).
    pub(super) recorded: bool,
}

impl QuorumCheck {
    /// `status.quorumLoss` (`None` removes it).
    pub(super) fn status(&self) -> Option<EtcdQuorumLoss> {
        self.verdict.loss().map(|(members, since)| EtcdQuorumLoss {
            members: members.to_vec(),
            since: since.to_string(),
            recovery: self.recovery.clone(),
        })
    }

    /// The recovery to carry out: one the status records.
    pub(super) fn carried_out(&self) -> Option<&EtcdRecoveryRecord> {
        self.recovery.as_ref().filter(|_| self.recorded)
    }

    /// When the loss was first seen, as the status writes it.
    pub(super) fn since(&self) -> Option<String> {
        self.verdict.loss().map(|(_, since)| since.to_string())
    }

    /// The `Ready` message of a loss, or `None` while quorum holds.
    pub(super) fn message(&self, mr: &EtcdCluster) -> Option<String> {
        let (members, since) = self.verdict.loss()?;
        let grace = mr.spec.recovery.grace_period_seconds;
        let what = format!(
            "quorum lost: voting members {} do not answer and their data volumes are gone, since {since}",
            members.join(", ")
        );
        if let Some(r) = &self.recovery {
            return Some(format!(
                "{what}; permanent. Restoring snapshot {} of EtcdBackup {} (taken {}) into every member; the writes of {} are lost",
                r.key, r.backup, r.snapshot_taken_at, r.lost_window
            ));
        }
        if let Some(why) = &self.blocked {
            return Some(format!(
                "{what}; permanent, and the recovery cannot start: {why}"
            ));
        }
        Some(match (&self.verdict, mr.spec.recovery.policy) {
            (Verdict::Suspected { .. }, _) => format!(
                "{what}; counted as permanent after {grace}s (spec.recovery.gracePeriodSeconds) unless they come back"
            ),
            (_, RecoveryPolicy::Manual) => format!(
                "{what}; permanent. spec.recovery.policy is Manual: waiting. To restore every member from a snapshot, annotate the cluster: kubectl annotate etcdcluster {} {RECOVER_FROM_ANNOTATION}=<EtcdBackup>[/<snapshot key>]",
                mr.metadata.name.as_deref().unwrap_or_default()
            ),
            (_, RecoveryPolicy::FromLatestBackup) => {
                format!("{what}; permanent. spec.recovery.policy is FromLatestBackup")
            }
        })
    }
}

impl<M: Membership> EtcdClient<M> {
    /// Judges whether a majority of voters was lost with its data. Without storage, or before
    /// the StatefulSet exists, there is nothing to judge.
    pub(super) async fn check_quorum(
        &self,
        mr: &EtcdCluster,
        snap: &Snapshot,
        now: Timestamp,
    ) -> Result<QuorumCheck, ReconcileError> {
        let status = mr.status.as_ref();
        let loss = status.and_then(|s| s.quorum_loss.as_ref());
        if let Some(loss) = loss
            && let Some(recovery) = &loss.recovery
        {
            // Decided: it runs to its end, whatever the members look like meanwhile.
            let since = loss.since.parse::<Timestamp>().unwrap_or(now);
            return Ok(QuorumCheck {
                verdict: Verdict::Permanent {
                    lost: loss.members.clone(),
                    since,
                },
                member_volumes: BTreeMap::new(),
                recovery: Some(recovery.clone()),
                blocked: None,
                recorded: true,
            });
        }
        let recorded = status.map(|s| s.member_volumes.clone()).unwrap_or_default();
        let intact = |member_volumes| QuorumCheck {
            verdict: Verdict::Intact,
            member_volumes,
            recovery: None,
            blocked: None,
            recorded: false,
        };
        if mr.spec.storage.is_none() || snap.statefulset.is_none() {
            return Ok(intact(recorded));
        }
        // etcd answers its member list from any member, without a quorum: the list says who the
        // voters are, their health whether a quorum stands.
        let (voters, member_volumes) = match &snap.membership {
            Ok(observed) => {
                let mut volumes = BTreeMap::new();
                let mut voters = Vec::new();
                for m in observed.members.iter().filter(|m| !m.member.is_learner) {
                    let Some(ordinal) = m.ordinal else { continue };
                    let name = self.names.member(ordinal);
                    let healthy = m.health == Health::Healthy;
                    let live = self.claim_uid(ordinal).await?;
                    // Only a healthy voter's volume is recorded: it holds the member's data.
                    let uid = if healthy { live.clone() } else { None };
                    let record = uid.or_else(|| recorded.get(&name).cloned());
                    voters.push(VoterEvidence {
                        name: name.clone(),
                        reachable: healthy,
                        volume: volume_state(record.as_deref(), live.as_deref()),
                    });
                    if let Some(uid) = record {
                        volumes.insert(name, uid);
                    }
                }
                (voters, volumes)
            }
            // Nothing answered: the voters are those recorded.
            Err(_) => {
                let mut voters = Vec::new();
                for (name, uid) in &recorded {
                    let Some(ordinal) = self.names.ordinal_of(name) else {
                        continue;
                    };
                    // A member that answers but follows no leader is part of no quorum either.
                    let reachable = self
                        .membership
                        .status(&self.names.member_client_url(ordinal))
                        .await
                        .is_ok_and(|s| s.leader != 0);
                    let live = self.claim_uid(ordinal).await?;
                    voters.push(VoterEvidence {
                        name: name.clone(),
                        reachable,
                        volume: volume_state(Some(uid), live.as_deref()),
                    });
                }
                (voters, recorded)
            }
        };
        let since = loss.and_then(|l| l.since.parse::<Timestamp>().ok());
        let grace = SignedDuration::from_secs(mr.spec.recovery.grace_period_seconds.max(0));
        let verdict = quorum_loss::judge(&voters, since, now, grace);
        let mut check = QuorumCheck {
            verdict,
            member_volumes,
            recovery: None,
            blocked: None,
            recorded: false,
        };
        if let Verdict::Permanent { since, .. } = &check.verdict {
            match self.choose_snapshot(mr).await? {
                Ok(Some(chosen)) => check.recovery = Some(recovery::record(&chosen, *since)),
                Ok(None) => {}
                Err(why) => check.blocked = Some(why),
            }
        }
        Ok(check)
    }

    /// The snapshot a permanent loss is to be restored from: `Ok(None)` while the policy says
    /// wait, `Err` with why none can be used.
    async fn choose_snapshot(
        &self,
        mr: &EtcdCluster,
    ) -> Result<Result<Option<recovery::Chosen>, String>, ReconcileError> {
        let annotation = mr
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(RECOVER_FROM_ANNOTATION))
            .map(String::as_str);
        let (named, key) = match recovery::trigger(&mr.spec.recovery, annotation) {
            Err(bad) => return Ok(Err(bad.to_string())),
            Ok(Trigger::Wait) => return Ok(Ok(None)),
            Ok(Trigger::Latest) => (None, None),
            Ok(Trigger::Named { backup, key }) => (Some(backup), key),
        };
        let backups: Api<EtcdBackup> = Api::namespaced(self.kube.clone(), &self.names.namespace);
        let listed = backups
            .list(&ListParams::default())
            .await
            .map_err(|e| to_reconcile(Error::kube("listing the EtcdBackups", e)))?
            .items;
        let chosen = recovery::choose(&listed, &self.names.name, named.as_deref(), key.as_deref());
        Ok(chosen.map(Some).ok_or_else(|| match (&named, &key) {
            (None, _) => format!(
                "no EtcdBackup of cluster {} in namespace {} lists a snapshot; restore by hand, or name a snapshot with the annotation {RECOVER_FROM_ANNOTATION}",
                self.names.name, self.names.namespace
            ),
            (Some(backup), None) => format!("EtcdBackup {backup} lists no snapshot"),
            (Some(backup), Some(key)) => {
                format!("EtcdBackup {backup} lists no snapshot with key {key}")
            }
        }))
    }
}
