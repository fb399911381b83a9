//! Desired children of an EtcdCluster, as pure functions of the spec and a few observed facts
//! (replica count, bootstrap configuration). Every child carries the `app.kubernetes.io/*`
//! labels, the owner's UID label and a controller owner reference to the EtcdCluster.

pub mod bootstrap;
mod go_duration;
mod input;
mod option_values;
pub mod options;
pub(crate) mod owner;
mod pdb;
mod services;
pub(crate) mod statefulset;
#[cfg(test)]
mod tests;

use ferroplane_apis::etcd::EtcdCluster;
use ferroplane_runtime::children::Child;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ConfigMap, Service};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::ResourceExt;

pub use self::input::{BootstrapFiles, RenderInput};

use self::bootstrap::Bootstrap;
use self::owner::Owner;
use crate::error::Error;
use crate::names::ClusterNames;

/// The children of one EtcdCluster.
#[derive(Clone, Debug, PartialEq)]
pub struct Rendered {
    pub peer_service: Service,
    pub client_service: Service,
    pub metrics_service: Service,
    pub bootstrap_config: ConfigMap,
    pub statefulset: StatefulSet,
    pub pdb: PodDisruptionBudget,
}

impl Rendered {
    /// The children in apply order: configuration and Services before the pods that use them.
    pub fn into_children(self) -> Result<Vec<Child>, Error> {
        let ser = |what| move |source| Error::Serialize { what, source };
        Ok(vec![
            Child::from_typed(&self.bootstrap_config).map_err(ser("ConfigMap"))?,
            Child::from_typed(&self.peer_service).map_err(ser("Service"))?,
            Child::from_typed(&self.client_service).map_err(ser("Service"))?,
            Child::from_typed(&self.metrics_service).map_err(ser("Service"))?,
            Child::from_typed(&self.statefulset).map_err(ser("StatefulSet"))?,
            Child::from_typed(&self.pdb).map_err(ser("PodDisruptionBudget"))?,
        ])
    }
}

/// Renders every child of `cluster`.
pub fn render(cluster: &EtcdCluster, input: &RenderInput) -> Result<Rendered, Error> {
    let names = cluster_names(cluster)?;
    let owner = Owner::of(cluster, input.owned)?;
    let token = initial_cluster_token(cluster, &names);
    let options = options::effective(cluster)?;
    let tls = crate::tls::secret_names(cluster, &names);
    let member_tls = tls.as_ref().map(crate::tls::member_tls);
    Ok(Rendered {
        peer_service: services::peer(&names, &owner),
        client_service: services::client(&names, &owner),
        metrics_service: services::metrics(&names, &owner),
        bootstrap_config: ConfigMap {
            metadata: owner.meta(names.bootstrap_config(), &names),
            data: Some(match &input.bootstrap {
                BootstrapFiles::Render(b) => bootstrap::config_files(
                    &names,
                    bootstrap_ordinals(b, input.replicas),
                    b,
                    &token,
                    statefulset::DATA_DIR,
                    &options,
                    member_tls.as_ref(),
                ),
                BootstrapFiles::Keep(files) => bootstrap::with_options(files, &options),
            }),
            ..ConfigMap::default()
        },
        statefulset: statefulset::render(cluster, &names, &owner, input, &options, tls.as_ref()),
        pdb: pdb::render(&names, &owner, pdb_members(cluster, input.replicas)),
    })
}

/// Members the PodDisruptionBudget protects: the spec's size, never more than the pods the
/// controller runs (while growing, the new members do not count yet), and never what a hand
/// edit of the StatefulSet says.
fn pdb_members(cluster: &EtcdCluster, replicas: u32) -> u32 {
    u32::try_from(cluster.spec.size).unwrap_or(0).min(replicas)
}

/// Names of `cluster`'s children.
pub fn cluster_names(cluster: &EtcdCluster) -> Result<ClusterNames, Error> {
    let namespace = cluster
        .namespace()
        .ok_or(Error::MissingMetadata("namespace"))?;
    Ok(ClusterNames::new(cluster.name_any(), namespace).with_tls(cluster.spec.tls.is_some()))
}

/// Ordinals that need a configuration file: every pod that may run.
fn bootstrap_ordinals(bootstrap: &Bootstrap, replicas: u32) -> Vec<u32> {
    let mut ordinals: Vec<u32> = (0..replicas).collect();
    match bootstrap {
        Bootstrap::New { size } => ordinals.extend(0..*size),
        Bootstrap::Existing { members, .. } => ordinals.extend(members.iter().copied()),
    }
    ordinals.sort_unstable();
    ordinals.dedup();
    ordinals
}

/// Unique per EtcdCluster object, so that a cluster re-created under the same name never
/// mistakes the old members' traffic for its own.
pub(crate) fn initial_cluster_token(cluster: &EtcdCluster, names: &ClusterNames) -> String {
    let uid = cluster.uid().unwrap_or_default();
    format!("{}-{}", names.name, uid.chars().take(8).collect::<String>())
}
