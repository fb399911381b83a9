//! The quorum-loss recovery of `observe` and `update`, once [`super::quorum_step`] decided it:
//!
//! 1. **clear**: the StatefulSet is deleted (its pods go, so that no member runs on the lost
//!    cluster's data) and then every member claim not made by this recovery, the survivors'
//!    too: the restored cluster is a new cluster that a member with the old data could not join;
//! 2. **restore**: the restore of `spec.restore` runs as for a new cluster, from the chosen
//!    snapshot ([`crate::restore`]: a claim and a Job per member, the revision bumped), and the
//!    StatefulSet is created again on the restored claims, under the same Services;
//! 3. **complete**: once the restore's Jobs are removed, the loss leaves the status and the
//!    recovery is kept as `status.lastRecovery`.
//!
//! The claims this recovery makes carry the time of the loss ([`RECOVERY_OF_ANNOTATION`]), which
//! tells them from the lost cluster's whatever the controller restarts in between.

use std::borrow::Cow;
use std::collections::BTreeMap;

use ferroplane_apis::etcd::{
    EtcdBackupSnapshotReference, EtcdCluster, EtcdRecoveryRecord, EtcdRestore, EtcdRestoreSource,
};
use ferroplane_runtime::ReconcileError;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, PropagationPolicy};
use tracing::info;

use super::client::EtcdClient;
use super::quorum_step::QuorumCheck;
use super::snapshot::Snapshot;
use crate::error::{Error, to_reconcile};
use crate::jobs::ignore_missing;
use crate::membership::Membership;
use crate::quorum_loss::Verdict;
use crate::reasons::{QUORUM_LOST, QUORUM_RECOVERED, QUORUM_RECOVERY_STARTED};
use crate::recovery;
use crate::restore::{Progress, RECOVERY_OF_ANNOTATION, RecoveryMarks};
use crate::status::Report;
use ferroplane_runtime::Readiness;

/// Where a recovery stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Stage {
    /// No recovery.
    None,
    /// The lost cluster's StatefulSet or claims are still there: `what` is left to remove.
    Clear { what: String },
    /// The restore runs (or ran) on this recovery's claims.
    Restore,
}

/// The cluster as the restore sees it: `spec.restore` from the recovery's snapshot.
pub(super) fn effective<'a>(
    mr: &'a EtcdCluster,
    recovery: Option<&EtcdRecoveryRecord>,
) -> Cow<'a, EtcdCluster> {
    let Some(r) = recovery else {
        return Cow::Borrowed(mr);
    };
    let mut cluster = mr.clone();
    cluster.spec.restore = Some(EtcdRestore {
        from: EtcdRestoreSource {
            backup_ref: Some(EtcdBackupSnapshotReference {
                name: r.backup.clone(),
                key: Some(r.key.clone()),
            }),
            oss: None,
            pvc: None,
        },
    });
    Cow::Owned(cluster)
}

/// The marks of the recovery's claims and Jobs.
pub(super) fn marks<'a>(since: Option<&'a str>, snap: &Snapshot) -> Option<RecoveryMarks<'a>> {
    since.map(|since| RecoveryMarks {
        since,
        revision_bump: recovery::revision_bump(snap.release.version),
    })
}

impl<M: Membership> EtcdClient<M> {
    /// Where the recovery of `check` stands.
    pub(super) async fn recovery_stage(
        &self,
        mr: &EtcdCluster,
        snap: &Snapshot,
        check: &QuorumCheck,
    ) -> Result<Stage, ReconcileError> {
        let (Some(_), Some(since), true) = (&check.recovery, check.since(), check.recorded) else {
            return Ok(Stage::None);
        };
        let claims: Api<PersistentVolumeClaim> =
            Api::namespaced(self.kube.clone(), &self.names.namespace);
        let (mut old, mut missing) = (Vec::new(), false);
        for ordinal in 0..self.claimed_ordinals(mr, snap) {
            let name = self.names.data_volume(ordinal);
            let claim = claims
                .get_opt(&name)
                .await
                .map_err(|e| to_reconcile(Error::kube(format!("reading volume {name}"), e)))?;
            match claim {
                None => missing = true,
                Some(c) if c.annotations().get(RECOVERY_OF_ANNOTATION) != Some(&since) => {
                    old.push(name);
                }
                Some(_) => {}
            }
        }
        // The StatefulSet of the lost cluster goes first; one on this recovery's claims (all of
        // them there) is the restored cluster's.
        let lost_set = snap.statefulset.is_some() && (missing || !old.is_empty());
        Ok(match (lost_set, old.is_empty()) {
            (false, true) => Stage::Restore,
            (true, _) => Stage::Clear {
                what: format!(
                    "delete StatefulSet {} of the lost cluster{}",
                    self.names.statefulset(),
                    if old.is_empty() {
                        String::new()
                    } else {
                        format!(", then its volumes {}", old.join(", "))
                    }
                ),
            },
            (false, false) => Stage::Clear {
                what: format!("delete the lost cluster's volumes {}", old.join(", ")),
            },
        })
    }

    /// Writes the loss and the recovery into `report`, with their events; a recovery whose
    /// restore is complete leaves the status (kept as `lastRecovery`).
    pub(super) async fn report_quorum(
        &self,
        mr: &EtcdCluster,
        snap: &Snapshot,
        check: &QuorumCheck,
        stage: &Stage,
        restore: &Progress,
        report: &mut Report,
    ) {
        let complete = *stage == Stage::Restore
            && snap.statefulset.is_some()
            && matches!(restore, Progress::Done(Some(_)));
        if let (true, Some(r)) = (complete, &check.recovery) {
            report.status.last_recovery = Some(r.clone());
            report.status.quorum_loss = None;
            report.status.member_volumes = Some(BTreeMap::new());
            self.events
                .normal(
                    mr,
                    QUORUM_RECOVERED,
                    format!(
                        "restored snapshot {} of EtcdBackup {} (taken {}) into every member, under the same Services; the writes of {} were lost",
                        r.key, r.backup, r.snapshot_taken_at, r.lost_window
                    ),
                )
                .await;
            return;
        }
        let recorded = mr
            .status
            .as_ref()
            .is_some_and(|s| !s.member_volumes.is_empty());
        report.status.member_volumes =
            (recorded || !check.member_volumes.is_empty()).then(|| check.member_volumes.clone());
        report.status.quorum_loss = check.status();
        let Some(why) = check.message(mr) else {
            return;
        };
        match (&check.recovery, check.recorded) {
            (Some(_), false) => {
                self.events
                    .warning(mr, QUORUM_RECOVERY_STARTED, why.clone())
                    .await;
            }
            (None, _) if matches!(check.verdict, Verdict::Permanent { .. }) => {
                // Repeated on every poll while it lasts; the recorder counts repeats.
                self.events.warning(mr, QUORUM_LOST, why.clone()).await;
            }
            _ => {}
        }
        report.readiness = Readiness::UnavailableBecause {
            reason: QUORUM_LOST,
            why,
        };
        report.in_transition = true;
    }

    /// Ordinals that may have a claim: the StatefulSet's and the spec's, whichever is more.
    fn claimed_ordinals(&self, mr: &EtcdCluster, snap: &Snapshot) -> u32 {
        let size = u32::try_from(mr.spec.size).unwrap_or(0);
        size.max(snap.replicas.unwrap_or(0))
    }

    /// Removes the lost cluster: its StatefulSet, then the claims without this recovery's mark
    /// (a claim still mounted by a terminating pod goes when the pod does).
    pub(super) async fn clear_lost_cluster(
        &self,
        mr: &EtcdCluster,
        snap: &Snapshot,
        since: &str,
    ) -> Result<(), ReconcileError> {
        let background = DeleteParams {
            propagation_policy: Some(PropagationPolicy::Background),
            ..DeleteParams::default()
        };
        if snap.statefulset.is_some() {
            let sets: Api<StatefulSet> = Api::namespaced(self.kube.clone(), &self.names.namespace);
            ignore_missing(sets.delete(&self.names.statefulset(), &background).await).map_err(
                |e| to_reconcile(Error::kube("deleting the lost cluster's StatefulSet", e)),
            )?;
            info!(cluster = %self.names.name, "recovery: deleted the lost cluster's StatefulSet");
            // Its claims go once the StatefulSet controller no longer makes them again.
            return Ok(());
        }
        let claims: Api<PersistentVolumeClaim> =
            Api::namespaced(self.kube.clone(), &self.names.namespace);
        for ordinal in 0..self.claimed_ordinals(mr, snap) {
            let name = self.names.data_volume(ordinal);
            let claim = claims
                .get_opt(&name)
                .await
                .map_err(|e| to_reconcile(Error::kube(format!("reading volume {name}"), e)))?;
            let Some(claim) = claim else { continue };
            let ours = claim
                .annotations()
                .get(RECOVERY_OF_ANNOTATION)
                .map(String::as_str)
                == Some(since);
            if ours || claim.metadata.deletion_timestamp.is_some() {
                continue;
            }
            ignore_missing(claims.delete(&name, &DeleteParams::default()).await).map_err(|e| {
                to_reconcile(Error::kube(format!("deleting the lost volume {name}"), e))
            })?;
            info!(cluster = %self.names.name, volume = %name, "recovery: deleted a volume of the lost cluster");
        }
        Ok(())
    }
}
