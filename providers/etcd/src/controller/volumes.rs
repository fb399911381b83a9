//! Member data volumes: a scale-up waits while a removed member's volume is being deleted, a
//! removed member's volume is deleted, and a member restarts empty (pod and volume deleted).

use ferroplane_apis::etcd::EtcdCluster;
use ferroplane_runtime::ReconcileError;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kube::api::{Api, DeleteParams};
use tracing::info;

use super::client::EtcdClient;
use crate::error::{Error, to_reconcile};
use crate::membership::Membership;
use crate::reasons::VOLUME_DELETED;

impl<M: Membership> EtcdClient<M> {
    /// Whether a data volume of `ordinals` is still being deleted: a pod created now would
    /// mount it (and lose it under itself, or start on a removed member's data).
    pub(super) async fn volume_being_deleted(
        &self,
        mr: &EtcdCluster,
        ordinals: std::ops::Range<u32>,
    ) -> Result<Option<String>, ReconcileError> {
        if mr.spec.storage.is_none() {
            return Ok(None);
        }
        let pvcs: Api<PersistentVolumeClaim> =
            Api::namespaced(self.kube.clone(), &self.names.namespace);
        for ordinal in ordinals {
            let name = self.names.data_volume(ordinal);
            let live = pvcs
                .get_opt(&name)
                .await
                .map_err(|e| to_reconcile(Error::kube(format!("reading volume {name}"), e)))?;
            if live.is_some_and(|pvc| pvc.metadata.deletion_timestamp.is_some()) {
                return Ok(Some(name));
            }
        }
        Ok(None)
    }

    /// Deletes the data volumes of `ordinals` (their members were removed from etcd).
    pub(super) async fn delete_volumes(
        &self,
        mr: &EtcdCluster,
        ordinals: &[u32],
    ) -> Result<(), ReconcileError> {
        if mr.spec.storage.is_none() {
            return Ok(());
        }
        let pvcs: Api<PersistentVolumeClaim> =
            Api::namespaced(self.kube.clone(), &self.names.namespace);
        for &ordinal in ordinals {
            let name = self.names.data_volume(ordinal);
            let deleted = match pvcs.delete(&name, &DeleteParams::default()).await {
                Ok(_) => true,
                Err(kube::Error::Api(s)) if s.code == 404 => false,
                Err(e) => {
                    return Err(to_reconcile(Error::kube(
                        format!("deleting volume {name} of a removed member"),
                        e,
                    )));
                }
            };
            if deleted {
                info!(cluster = %self.names.name, volume = %name, "deleted the volume of a removed member");
                self.events
                    .normal(
                        mr,
                        VOLUME_DELETED,
                        format!(
                            "deleted volume {name}: its member was removed from etcd, which refuses to start a pod on a removed member's data"
                        ),
                    )
                    .await;
            }
        }
        Ok(())
    }

    /// Deletes a member's pod and data volume so that it starts empty.
    pub(super) async fn restart_empty(
        &self,
        mr: &EtcdCluster,
        ordinal: u32,
    ) -> Result<(), ReconcileError> {
        let pod = self.names.member(ordinal);
        if mr.spec.storage.is_some() {
            let pvcs: Api<PersistentVolumeClaim> =
                Api::namespaced(self.kube.clone(), &self.names.namespace);
            crate::jobs::ignore_missing(
                pvcs.delete(&self.names.data_volume(ordinal), &DeleteParams::default())
                    .await,
            )
            .map_err(|e| to_reconcile(Error::kube(format!("deleting the volume of {pod}"), e)))?;
        }
        let pods: Api<Pod> = Api::namespaced(self.kube.clone(), &self.names.namespace);
        crate::jobs::ignore_missing(pods.delete(&pod, &DeleteParams::default()).await)
            .map_err(|e| to_reconcile(Error::kube(format!("deleting pod {pod}"), e)))
    }
}
