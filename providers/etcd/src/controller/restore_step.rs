//! The `spec.restore` step of create and update: where the restore stands and its due steps
//! ([`crate::restore`]), with their events.

use ferroplane_apis::etcd::EtcdCluster;
use ferroplane_runtime::ReconcileError;

use super::client::EtcdClient;
use super::snapshot::Snapshot;
use crate::membership::Membership;
use crate::restore::{Progress, Restorer};

impl<M: Membership> EtcdClient<M> {
    pub(super) fn restorer(&self) -> Restorer<'_> {
        Restorer {
            kube: &self.kube,
            names: &self.names,
            sources: self.restore.sources.as_deref(),
            tools_image: &self.restore.tools_image,
        }
    }

    /// Where the restore stands, its due steps taken.
    pub(super) async fn restore_progress(
        &self,
        mr: &EtcdCluster,
        snap: &Snapshot,
    ) -> Result<Progress, ReconcileError> {
        let restore = self
            .restorer()
            .look(mr, snap.statefulset.is_some(), jiff::Timestamp::now())
            .await?;
        if matches!(restore, Progress::Act { .. }) {
            self.advance_restore(mr, snap).await?;
        }
        Ok(restore)
    }

    /// Takes the restore's due steps, recording their events.
    pub(super) async fn advance_restore(
        &self,
        mr: &EtcdCluster,
        snap: &Snapshot,
    ) -> Result<(), ReconcileError> {
        let events = self
            .restorer()
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
