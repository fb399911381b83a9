//! The children of an EtcdCluster: the ones to apply for this reconcile, every one it can have
//! (for deletion), applying them, and who holds them (a same-named object that is not this
//! cluster's is never adopted, changed or deleted).

use ferroplane_apis::etcd::EtcdCluster;
use ferroplane_runtime::children::{self, Child, owned};
use ferroplane_runtime::{Observation, ReconcileError};
use kube::ResourceExt;

use super::client::EtcdClient;
use super::snapshot::{Snapshot, desired_size};
use crate::error::{Error, to_reconcile};
use crate::membership::Membership;
use crate::reasons::CHILD_NOT_OURS;
use crate::render::bootstrap::Bootstrap;
use crate::render::{self, BootstrapFiles, RenderInput};
use crate::version::{self, Release, Version};

/// Every child an EtcdCluster can have, whatever its spec says (names and kinds are what
/// matter): deletion must work even for a spec ferroplane refuses to act on.
pub(super) fn all_children(mr: &EtcdCluster) -> Result<Vec<Child>, ReconcileError> {
    let mut mr = mr.clone();
    mr.spec.options.clear();
    let mr = &mr;
    let release = version::resolve(&mr.spec).unwrap_or_else(|_| Release {
        version: Version::new(3, 5, 0),
        image: String::new(),
    });
    let input = RenderInput {
        release,
        replicas: 0,
        bootstrap: BootstrapFiles::Render(Bootstrap::New { size: 0 }),
        owned: true,
        trust_generation: 0,
    };
    render::render(mr, &input)
        .and_then(render::Rendered::into_children)
        .map_err(to_reconcile)
}

impl<M: Membership> EtcdClient<M> {
    /// The children to apply, with the StatefulSet at `replicas`.
    pub(super) fn desired(
        &self,
        mr: &EtcdCluster,
        snap: &Snapshot,
        replicas: Option<u32>,
    ) -> Result<Vec<Child>, ReconcileError> {
        let size = desired_size(mr)?;
        let (replicas, bootstrap) = match (&snap.membership, snap.replicas) {
            (_, None) => (size, BootstrapFiles::Render(Bootstrap::New { size })),
            (Ok(observed), Some(current)) => (
                replicas.unwrap_or(current),
                BootstrapFiles::Render(Bootstrap::Existing {
                    members: observed.ordinals(),
                    sealed: observed.sealed_ordinals(current, mr.spec.storage.is_some()),
                }),
            ),
            // Without membership, nothing changes size and the member configuration stays.
            (Err(_), Some(current)) => (
                current,
                snap.kept_bootstrap
                    .clone()
                    .unwrap_or(BootstrapFiles::Render(Bootstrap::New { size: current })),
            ),
        };
        let input = RenderInput {
            release: snap.release.clone(),
            replicas,
            bootstrap,
            owned: owned(mr),
            trust_generation: snap.trust.0,
        };
        render::render(mr, &input)
            .and_then(render::Rendered::into_children)
            .map_err(to_reconcile)
    }

    pub(super) async fn apply_all(&self, children: &[Child]) -> Result<(), ReconcileError> {
        for child in children {
            self.children
                .apply(child)
                .await
                .map_err(|e| to_reconcile(Error::kube(format!("applying {}", child.key()), e)))?;
        }
        Ok(())
    }
}

impl<M: Membership> EtcdClient<M> {
    /// While the object is being deleted only existence matters, and nothing about the spec
    /// (an invalid version, say) may stand in the way. Objects that are not this cluster's do
    /// not count: they are never deleted with it.
    pub(super) async fn observe_deletion(
        &self,
        mr: &EtcdCluster,
    ) -> Result<Observation, ReconcileError> {
        let uid = mr.uid().unwrap_or_default();
        for child in all_children(mr)? {
            let live =
                self.children.get(&child).await.map_err(|e| {
                    to_reconcile(Error::kube(format!("reading {}", child.key()), e))
                })?;
            if live.is_some_and(|l| children::holder(&l, &uid) == children::Holder::Us) {
                return Ok(Observation::found(self.names.name.clone()));
            }
        }
        Ok(Observation::missing())
    }

    /// Refuses, before anything is read from or written to the cluster, when an object with a
    /// child's name exists and is not this cluster's (another object's, or made by hand): it is
    /// never adopted, changed or deleted.
    pub(super) async fn refuse_foreign(&self, mr: &EtcdCluster) -> Result<(), ReconcileError> {
        let uid = mr.uid().unwrap_or_default();
        match self
            .children
            .foreign(&all_children(mr)?, &uid)
            .await
            .map_err(|e| to_reconcile(Error::kube("checking who holds the children", e)))?
        {
            Some(message) => Err(ReconcileError::terminal(CHILD_NOT_OURS, message)),
            None => Ok(()),
        }
    }
}
