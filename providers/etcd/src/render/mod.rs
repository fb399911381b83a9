//! Desired children of an EtcdCluster, as pure functions of the spec and a few observed facts
//! (replica count, bootstrap configuration). Every child carries the `app.kubernetes.io/*`
//! labels, the owner's UID label and a controller owner reference to the EtcdCluster.

pub mod bootstrap;
mod pdb;
mod services;
mod statefulset;

use std::collections::BTreeMap;

use ferroplane_apis::etcd::EtcdCluster;
use ferroplane_runtime::UID_TAG;
use ferroplane_runtime::children::Child;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ConfigMap, Service};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::api::ObjectMeta;
use kube::{Resource, ResourceExt};

use self::bootstrap::Bootstrap;
use crate::error::Error;
use crate::names::{ClusterNames, VERSION_ANNOTATION};
use crate::version::Release;

/// What rendering needs beyond the spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderInput {
    pub release: Release,
    /// StatefulSet replicas: the planner decides them, never the spec directly.
    pub replicas: u32,
    /// Member configuration to write; `None` leaves the live ConfigMap as it is (while etcd
    /// cannot be asked who its members are).
    pub bootstrap: Option<Bootstrap>,
    /// Whether children carry an owner reference to the EtcdCluster. Without one (deletion
    /// policy Orphan), deleting the EtcdCluster leaves them running.
    pub owned: bool,
}

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

/// Owner reference and labels shared by every child.
pub(crate) struct Owner {
    reference: Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference>,
    uid: String,
    version: String,
}

impl Owner {
    fn of(cluster: &EtcdCluster, owned: bool) -> Result<Self, Error> {
        let reference = cluster
            .controller_owner_ref(&())
            .ok_or(Error::MissingMetadata("uid"))?;
        let uid = reference.uid.clone();
        Ok(Self {
            reference: owned.then_some(reference),
            uid,
            version: String::new(),
        })
    }

    fn meta(&self, name: String, names: &ClusterNames) -> ObjectMeta {
        let mut labels = names.labels();
        labels.insert(UID_TAG.to_owned(), self.uid.clone());
        ObjectMeta {
            name: Some(name),
            namespace: Some(names.namespace.clone()),
            labels: Some(labels),
            owner_references: self.reference.clone().map(|r| vec![r]),
            annotations: (!self.version.is_empty())
                .then(|| BTreeMap::from([(VERSION_ANNOTATION.to_owned(), self.version.clone())])),
            ..ObjectMeta::default()
        }
    }

    fn with_version(&self, version: String) -> Self {
        Self {
            reference: self.reference.clone(),
            uid: self.uid.clone(),
            version,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::version;

    pub fn cluster(spec: serde_json::Value) -> EtcdCluster {
        let mut c: EtcdCluster = serde_json::from_value(serde_json::json!({
            "apiVersion": "etcd.ferroplane.io/v1alpha1",
            "kind": "EtcdCluster",
            "metadata": {"name": "etcd", "namespace": "db", "uid": "0123456789abcdef"},
            "spec": spec,
        }))
        .expect("valid EtcdCluster");
        c.metadata.generation = Some(1);
        c
    }

    pub fn input(c: &EtcdCluster, replicas: u32) -> RenderInput {
        RenderInput {
            release: version::resolve(&c.spec).expect("resolves"),
            replicas,
            bootstrap: Some(Bootstrap::New { size: replicas }),
            owned: true,
        }
    }

    #[test]
    fn every_child_is_owned_and_labelled() {
        let c = cluster(serde_json::json!({"size": 3}));
        let children = render(&c, &input(&c, 3))
            .expect("renders")
            .into_children()
            .expect("serializes");
        let kinds: Vec<&str> = children.iter().map(|c| c.kind()).collect();
        assert_eq!(
            kinds,
            [
                "ConfigMap",
                "Service",
                "Service",
                "StatefulSet",
                "PodDisruptionBudget"
            ]
        );
        for child in &children {
            let meta = &child.object["metadata"];
            assert_eq!(meta["namespace"], "db");
            assert_eq!(
                meta["ownerReferences"][0]["uid"],
                "0123456789abcdef",
                "{}",
                child.key()
            );
            assert_eq!(meta["ownerReferences"][0]["controller"], true);
            assert_eq!(meta["ownerReferences"][0]["kind"], "EtcdCluster");
            assert_eq!(meta["labels"]["app.kubernetes.io/name"], "etcd");
            assert_eq!(meta["labels"]["app.kubernetes.io/instance"], "etcd");
            assert_eq!(meta["labels"]["app.kubernetes.io/managed-by"], "ferroplane");
            assert_eq!(meta["labels"][UID_TAG], "0123456789abcdef");
        }
    }

    #[test]
    fn orphaned_children_have_no_owner_reference() {
        let c = cluster(serde_json::json!({"size": 1, "deletionPolicy": "Orphan"}));
        let mut i = input(&c, 1);
        i.owned = false;
        let children = render(&c, &i)
            .expect("renders")
            .into_children()
            .expect("serializes");
        for child in &children {
            assert!(
                child.object["metadata"].get("ownerReferences").is_none(),
                "{}",
                child.key()
            );
            assert_eq!(
                child.object["metadata"]["labels"][UID_TAG],
                "0123456789abcdef"
            );
        }
    }

    #[test]
    fn without_a_bootstrap_decision_the_config_map_is_left_alone() {
        let c = cluster(serde_json::json!({"size": 3}));
        let mut i = input(&c, 3);
        i.bootstrap = None;
        let children = render(&c, &i)
            .expect("renders")
            .into_children()
            .expect("serializes");
        assert!(children.iter().all(|c| c.kind() != "ConfigMap"));
    }

    #[test]
    fn config_files_cover_every_pod_and_member() {
        let b = Bootstrap::Existing {
            members: [0, 1, 4].into(),
        };
        assert_eq!(bootstrap_ordinals(&b, 3), [0, 1, 2, 4]);
        assert_eq!(
            bootstrap_ordinals(&Bootstrap::New { size: 3 }, 0),
            [0, 1, 2]
        );
    }

    #[test]
    fn token_depends_on_the_uid() {
        let c = cluster(serde_json::json!({"size": 1}));
        let rendered = render(&c, &input(&c, 1)).expect("renders");
        let data = rendered
            .bootstrap_config
            .and_then(|cm| cm.data)
            .expect("data");
        assert!(data["etcd-0.json"].contains("\"initial-cluster-token\": \"etcd-01234567\""));
    }
}
