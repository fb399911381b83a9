//! [`SimulatedFactory`]: one simulated cluster per EtcdCluster (namespace and name), handed to
//! the controllers as their membership clients, with what tests ask of it (the journal, the
//! auth store).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use provider_etcd::membership::{MembershipError, MembershipFactory};
use provider_etcd::names::ClusterNames;
use provider_etcd::tls::ClientTls;

use crate::cluster::{Event, SimulatedCluster};
use crate::membership::{SimulatedMembership, lock};

type Clusters = Arc<Mutex<HashMap<(String, String), Arc<Mutex<SimulatedCluster>>>>>;

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

    /// Whether the cluster of `names` requires authentication.
    pub fn auth_enabled(&self, names: &ClusterNames) -> bool {
        lock(&self.cluster(names)).auth.enabled()
    }

    /// Ends every token of the cluster of `names`, as when their TTL passes.
    pub fn expire_tokens(&self, names: &ClusterNames) {
        lock(&self.cluster(names)).auth.expire_tokens();
    }

    /// Authenticates as `user` on the cluster of `names`, as any etcd client would.
    pub fn authenticate(
        &self,
        names: &ClusterNames,
        user: &str,
        password: &str,
    ) -> Result<String, MembershipError> {
        lock(&self.cluster(names))
            .auth
            .authenticate(user, password, Instant::now())
    }
}

impl MembershipFactory for SimulatedFactory {
    type Client = SimulatedMembership;
    /// The simulation has no TLS to speak: the client certificate is not used.
    fn for_cluster(
        &self,
        names: &ClusterNames,
        _tls: Option<&ClientTls>,
    ) -> Result<SimulatedMembership, MembershipError> {
        Ok(SimulatedMembership::new(
            self.kube.clone(),
            names.clone(),
            self.cluster(names),
        ))
    }
}
