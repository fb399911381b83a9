//! The `spec.restore` step of create and update: where the restore stands and its due steps
//! ([`crate::restore`]), with their events.

use ferroplane_apis::etcd::EtcdCluster;
use ferroplane_runtime::ReconcileError;

use super::client::EtcdClient;
use super::snapshot::Snapshot;
use crate::membership::Membership;
use crate::restore::{Progress, RecoveryMarks, Restorer};

impl<M: Membership> EtcdClient<M> {
    /// The restorer of `spec.restore`, or of a quorum-loss recovery with its `recovery` marks.
    pub(super) fn restorer<'a>(&'a self, recovery: Option<RecoveryMarks<'a>>) -> Restorer<'a> {
        Restorer {
            kube: &self.kube,
            names: &self.names,
            sources: self.restore.sources.as_deref(),
            tools_image: &self.restore.tools_image,
            recovery,
        }
    }

    /// Where the restore stands, its due steps taken.
    pub(super) async fn restore_progress(
        &self,
        mr: &EtcdCluster,
        snap: &Snapshot,
        recovery: Option<RecoveryMarks<'_>>,
    ) -> Result<Progress, ReconcileError> {
        let restore = self
            .restorer(recovery)
            .look(mr, snap.statefulset.is_some(), jiff::Timestamp::now())
            .await?;
        if matches!(restore, Progress::Act { .. }) {
            self.advance_restore(mr, snap, recovery).await?;
        }
        Ok(restore)
    }

    /// Takes the restore's due steps, recording their events.
    pub(super) async fn advance_restore(
        &self,
        mr: &EtcdCluster,
        snap: &Snapshot,
        recovery: Option<RecoveryMarks<'_>>,
    ) -> Result<(), ReconcileError> {
        let events = self
            .restorer(recovery)
            .act(
                mr,
                &snap.release,
                snap.statefulset.is_some(),
                jiff::Timestamp::now(),
            )
            .await?;
        for (reason, message) in events {
            self.events.normal(mr, reason, message).await;
        }
        Ok(())
    }
}
