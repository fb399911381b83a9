//! Desired children of an EtcdCluster, as pure functions of the spec and a few observed facts
//! (replica count, bootstrap configuration). Every child carries the `app.kubernetes.io/*`
//! labels, the owner's UID label and a controller owner reference to the EtcdCluster.

pub mod bootstrap;
mod input;
mod owner;
mod pdb;
mod services;
mod statefulset;
#[cfg(test)]
mod tests;

use ferroplane_apis::etcd::EtcdCluster;
use ferroplane_runtime::children::Child;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ConfigMap, Service};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::ResourceExt;

pub use self::input::RenderInput;

use self::bootstrap::Bootstrap;
use self::owner::Owner;
use crate::error::Error;
use crate::names::ClusterNames;

/// The children of one EtcdCluster.
#[derive(Clone, Debug, PartialEq)]
pub struct Rendered {
    pub peer_service: Service,
    pub client_service: Service,
    pub bootstrap_config: Option<ConfigMap>,
    pub statefulset: StatefulSet,
    pub pdb: PodDisruptionBudget,
}

impl Rendered {
    /// The children in apply order: configuration and Services before the pods that use them.
    pub fn into_children(self) -> Result<Vec<Child>, Error> {
        let ser = |what| move |source| Error::Serialize { what, source };
        let mut children = Vec::with_capacity(5);
        if let Some(cm) = &self.bootstrap_config {
            children.push(Child::from_typed(cm).map_err(ser("ConfigMap"))?);
        }
        children.push(Child::from_typed(&self.peer_service).map_err(ser("Service"))?);
        children.push(Child::from_typed(&self.client_service).map_err(ser("Service"))?);
        children.push(Child::from_typed(&self.statefulset).map_err(ser("StatefulSet"))?);
        children.push(Child::from_typed(&self.pdb).map_err(ser("PodDisruptionBudget"))?);
        Ok(children)
    }
}

/// Renders every child of `cluster`.
pub fn render(cluster: &EtcdCluster, input: &RenderInput) -> Result<Rendered, Error> {
    let names = cluster_names(cluster)?;
    let owner = Owner::of(cluster, input.owned)?;
    let token = initial_cluster_token(cluster, &names);
    Ok(Rendered {
        peer_service: services::peer(&names, &owner),
        client_service: services::client(&names, &owner),
        bootstrap_config: input.bootstrap.as_ref().map(|b| {
            let data = bootstrap::config_files(
                &names,
                bootstrap_ordinals(b, input.replicas),
                b,
                &token,
                statefulset::DATA_DIR,
            );
            ConfigMap {
                metadata: owner.meta(names.bootstrap_config(), &names),
                data: Some(data),
                ..ConfigMap::default()
            }
        }),
        statefulset: statefulset::render(cluster, &names, &owner, input),
        pdb: pdb::render(&names, &owner, input.replicas),
    })
}

/// Names of `cluster`'s children.
pub fn cluster_names(cluster: &EtcdCluster) -> Result<ClusterNames, Error> {
    let namespace = cluster
        .namespace()
        .ok_or(Error::MissingMetadata("namespace"))?;
    Ok(ClusterNames::new(cluster.name_any(), namespace))
}

/// Ordinals that need a configuration file: every pod that may run.
fn bootstrap_ordinals(bootstrap: &Bootstrap, replicas: u32) -> Vec<u32> {
    let mut ordinals: Vec<u32> = (0..replicas).collect();
    match bootstrap {
        Bootstrap::New { size } => ordinals.extend(0..*size),
        Bootstrap::Existing { members } => ordinals.extend(members.iter().copied()),
    }
    ordinals.sort_unstable();
    ordinals.dedup();
    ordinals
}

/// Unique per EtcdCluster object, so that a cluster re-created under the same name never
/// mistakes the old members' traffic for its own.
fn initial_cluster_token(cluster: &EtcdCluster, names: &ClusterNames) -> String {
    let uid = cluster.uid().unwrap_or_default();
    format!("{}-{}", names.name, uid.chars().take(8).collect::<String>())
}
