//! Member data volumes: a scale-up waits while a removed member's volume is being deleted, a
//! removed member's volume is deleted, a member restarts empty (pod and volume deleted, then
//! followed until its pod is on a fresh claim: `member_pod`), and whether a member's volume is
//! still the one it was last seen healthy on.

use std::collections::BTreeMap;

use ferroplane_apis::etcd::EtcdCluster;
use ferroplane_runtime::ReconcileError;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kube::api::{Api, DeleteParams, Preconditions};
use tracing::info;

use super::client::EtcdClient;
use crate::error::{Error, to_reconcile};
use crate::member_pod::{ClaimFacts, PodFacts, PodOnClaim};
use crate::membership::Membership;
use crate::planner::{ClusterView, Health};
use crate::quorum_loss::VolumeState;
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

    /// Deletes the pod of `ordinal` if it is still the one with `uid` (a pod made since is left
    /// alone: the delete's precondition fails, which is not an error).
    pub(super) async fn delete_pod_on_deleted_claim(
        &self,
        ordinal: u32,
        uid: &str,
    ) -> Result<(), ReconcileError> {
        let pod = self.names.member(ordinal);
        let pods: Api<Pod> = Api::namespaced(self.kube.clone(), &self.names.namespace);
        let only_this = DeleteParams {
            preconditions: Some(Preconditions {
                uid: Some(uid.to_owned()),
                resource_version: None,
            }),
            ..DeleteParams::default()
        };
        match pods.delete(&pod, &only_this).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 404 || s.code == 409 => Ok(()),
            Err(e) => Err(to_reconcile(Error::kube(format!("deleting pod {pod}"), e))),
        }
    }

    /// Reads the data claim of every learner of `view` that has not started, and finds its pod
    /// among `member_pods` (the member pods as listed): after a restart empty the planner
    /// follows them until the pod runs on a fresh claim.
    pub(super) async fn mark_pods_on_claims(
        &self,
        mr: &EtcdCluster,
        member_pods: &[Pod],
        view: &mut ClusterView,
    ) -> Result<(), ReconcileError> {
        if mr.spec.storage.is_none() {
            return Ok(());
        }
        let claims: Api<PersistentVolumeClaim> =
            Api::namespaced(self.kube.clone(), &self.names.namespace);
        for member in &mut view.members {
            let Some(ordinal) = member.ordinal else {
                continue;
            };
            if member.started || !member.is_learner {
                continue;
            }
            let claim_name = self.names.data_volume(ordinal);
            let claim = claims.get_opt(&claim_name).await.map_err(|e| {
                to_reconcile(Error::kube(format!("reading volume {claim_name}"), e))
            })?;
            let pod_name = self.names.member(ordinal);
            let pod = member_pods
                .iter()
                .find(|p| p.metadata.name.as_deref() == Some(pod_name.as_str()));
            member.pod_on_claim = Some(PodOnClaim {
                claim: match claim {
                    None => ClaimFacts::Missing,
                    Some(c) if c.metadata.deletion_timestamp.is_some() => ClaimFacts::BeingDeleted,
                    Some(_) => ClaimFacts::Live,
                },
                claim_name,
                pod: pod.map(|p| PodFacts {
                    uid: p.metadata.uid.clone().unwrap_or_default(),
                    scheduled: p.spec.as_ref().is_some_and(|s| s.node_name.is_some()),
                    terminating: p.metadata.deletion_timestamp.is_some(),
                }),
                pod_name,
            });
        }
        Ok(())
    }

    /// Marks the started voters of `view` that do not answer and whose data volume is no longer
    /// the one `recorded` (voter name → claim UID, from the status) says they were last seen
    /// healthy on. Without storage there is no claim to tell by.
    pub(super) async fn mark_lost_data(
        &self,
        mr: &EtcdCluster,
        recorded: &BTreeMap<String, String>,
        view: &mut ClusterView,
    ) -> Result<(), ReconcileError> {
        if mr.spec.storage.is_none() {
            return Ok(());
        }
        for member in &mut view.members {
            let Some(ordinal) = member.ordinal else {
                continue;
            };
            if !member.started || member.is_learner || member.health == Health::Healthy {
                continue;
            }
            let Some(uid) = recorded.get(&self.names.member(ordinal)) else {
                continue;
            };
            let live = self.claim_uid(ordinal).await?;
            member.data_lost = matches!(
                volume_state(Some(uid), live.as_deref()),
                VolumeState::Missing | VolumeState::Replaced
            );
        }
        Ok(())
    }

    /// UID of the data claim of `ordinal`, `None` when it is missing or being deleted.
    pub(super) async fn claim_uid(&self, ordinal: u32) -> Result<Option<String>, ReconcileError> {
        let claims: Api<PersistentVolumeClaim> =
            Api::namespaced(self.kube.clone(), &self.names.namespace);
        let name = self.names.data_volume(ordinal);
        let claim = claims
            .get_opt(&name)
            .await
            .map_err(|e| to_reconcile(Error::kube(format!("reading volume {name}"), e)))?;
        Ok(claim
            .filter(|c| c.metadata.deletion_timestamp.is_none())
            .and_then(|c| c.metadata.uid))
    }
}

/// A voter's volume from the UID recorded for it and the live claim's.
pub(super) fn volume_state(recorded: Option<&str>, live: Option<&str>) -> VolumeState {
    match (recorded, live) {
        (None, _) => VolumeState::Unrecorded,
        (Some(_), None) => VolumeState::Missing,
        (Some(r), Some(l)) if r == l => VolumeState::Same,
        (Some(_), Some(_)) => VolumeState::Replaced,
    }
}
