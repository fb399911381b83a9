//! A simulation of etcd's membership API for environments whose pods run no etcd (the
//! sandbox): [`SimulatedFactory`] hands the controller a [`SimulatedMembership`] per cluster
//! that, before every membership call, reads what the cluster shows through the Kubernetes API
//! ([`world`]: ready StatefulSet ordinals, their data claims, their configuration files, the
//! image) and applies etcd's rules to it ([`cluster`]). Every change is journaled
//! ([`Event`]), so tests assert on what happened rather than on samples.

mod cluster;
mod world;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

pub use cluster::{Event, PERMANENTLY_REMOVED, SimulatedCluster};
pub use world::{DataDir, World, version_of_image};

use crate::controller::MembershipFactory;
use crate::membership::{Member, MemberStatus, Membership, MembershipError, PromoteOutcome};
use crate::names::ClusterNames;

type Clusters = Arc<Mutex<HashMap<(String, String), Arc<Mutex<SimulatedCluster>>>>>;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Simulated clusters, one per EtcdCluster (namespace and name), reading the pods through
/// `kube`.
#[derive(Clone)]
pub struct SimulatedFactory {
    kube: kube::Client,
    clusters: Clusters,
}

impl SimulatedFactory {
    pub fn new(kube: kube::Client) -> Self {
        Self {
            kube,
            clusters: Arc::default(),
        }
    }

    fn cluster(&self, names: &ClusterNames) -> Arc<Mutex<SimulatedCluster>> {
        lock(&self.clusters)
            .entry((names.namespace.clone(), names.name.clone()))
            .or_insert_with(|| Arc::new(Mutex::new(SimulatedCluster::new(names.clone()))))
            .clone()
    }

    /// What happened so far in the cluster of `names` (empty for a cluster never asked about).
    pub fn journal(&self, names: &ClusterNames) -> Vec<Event> {
        lock(&self.cluster(names)).journal().to_vec()
    }
}

impl MembershipFactory for SimulatedFactory {
    type Client = SimulatedMembership;
    /// The simulation has no TLS to speak: the client certificate is not used.
    fn for_cluster(
        &self,
        names: &ClusterNames,
        _tls: Option<&crate::tls::ClientTls>,
    ) -> Result<SimulatedMembership, MembershipError> {
        Ok(SimulatedMembership {
            kube: self.kube.clone(),
            names: names.clone(),
            cluster: self.cluster(names),
        })
    }
}

/// The membership API of one simulated cluster.
pub struct SimulatedMembership {
    kube: kube::Client,
    names: ClusterNames,
    cluster: Arc<Mutex<SimulatedCluster>>,
}

impl SimulatedMembership {
    /// Reads the pods and brings the members in line with them; then `call` on the cluster.
    async fn synced<T>(
        &self,
        call: impl FnOnce(&mut SimulatedCluster) -> Result<T, MembershipError>,
    ) -> Result<T, MembershipError> {
        let world =
            world::observe(&self.kube, &self.names)
                .await
                .map_err(|e| MembershipError::Down {
                    endpoint: self.names.client_endpoint(),
                    reason: format!("the simulation cannot read the cluster's pods: {e}"),
                })?;
        let mut cluster = lock(&self.cluster);
        cluster.sync(&world);
        call(&mut cluster)
    }
}

impl Membership for SimulatedMembership {
    async fn list(&self) -> Result<Vec<Member>, MembershipError> {
        self.synced(|c| c.list()).await
    }

    async fn add_learner(&self, peer_url: &str) -> Result<Member, MembershipError> {
        self.synced(|c| c.add_learner(peer_url)).await
    }

    async fn promote(&self, id: u64) -> Result<PromoteOutcome, MembershipError> {
        self.synced(|c| c.promote(id)).await
    }

    async fn remove(&self, id: u64) -> Result<(), MembershipError> {
        self.synced(|c| c.remove(id)).await
    }

    /// Answers from the state the last call synced (a status follows a list).
    async fn status(&self, client_url: &str) -> Result<MemberStatus, MembershipError> {
        lock(&self.cluster).status(client_url)
    }

    /// A running member answers (the simulation keeps no data to rewrite); a stopped one is
    /// unreachable, as for a status.
    async fn defragment(&self, client_url: &str) -> Result<(), MembershipError> {
        lock(&self.cluster).status(client_url).map(|_| ())
    }
}

/// The simulation keeps no data: its snapshot is a small file in etcd's snapshot layout (a
/// database, here a line naming the cluster and its raft index, then its SHA-256), enough for
/// EtcdBackup's lifecycle in the sandbox, not for a restore.
impl crate::backup::SnapshotSource for SimulatedMembership {
    async fn snapshot(
        &self,
    ) -> Result<crate::backup::Taken, crate::membership::snapshot::SnapshotError> {
        let endpoint = self.names.client_endpoint();
        let members = self.list().await.map_err(|e| {
            crate::membership::snapshot::SnapshotError::NoMember {
                detail: e.to_string(),
            }
        })?;
        let mut index = None;
        for member in members.iter().filter(|m| m.started()) {
            let Some(ordinal) = self.names.ordinal_of(&member.name) else {
                continue;
            };
            if let Ok(status) = self.status(&self.names.member_client_url(ordinal)).await {
                index = Some(status.raft_index);
                break;
            }
        }
        let Some(index) = index else {
            return Err(crate::membership::snapshot::SnapshotError::NoMember {
                detail: format!("no member of {endpoint} is running"),
            });
        };
        let db = format!(
            "ferroplane simulated etcd {}/{} raft index {index}\n",
            self.names.namespace, self.names.name
        );
        let bytes = crate::membership::snapshot::with_trailer(db.as_bytes());
        Ok(crate::backup::Taken {
            sha256: hex::encode(<sha2::Sha256 as sha2::Digest>::digest(db.as_bytes())),
            bytes,
            revision: i64::try_from(index).ok(),
        })
    }
}
