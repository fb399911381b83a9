//! The owner reference and labels every child of one EtcdCluster carries.

use std::collections::BTreeMap;

use ferroplane_apis::etcd::EtcdCluster;
use ferroplane_runtime::UID_TAG;
use kube::Resource;
use kube::api::ObjectMeta;

use crate::error::Error;
use crate::names::{ClusterNames, REPLICAS_ANNOTATION, VERSION_ANNOTATION};

/// Owner reference and labels shared by every child.
pub(crate) struct Owner {
    reference: Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference>,
    uid: String,
    /// Annotations of the StatefulSet: the version and replicas it was rendered with.
    version: String,
    replicas: Option<u32>,
}

impl Owner {
    pub(crate) fn of(cluster: &EtcdCluster, owned: bool) -> Result<Self, Error> {
        let reference = cluster
            .controller_owner_ref(&())
            .ok_or(Error::MissingMetadata("uid"))?;
        let uid = reference.uid.clone();
        Ok(Self {
            reference: owned.then_some(reference),
            uid,
            version: String::new(),
            replicas: None,
        })
    }

    pub(crate) fn meta(&self, name: String, names: &ClusterNames) -> ObjectMeta {
        let mut labels = names.labels();
        labels.insert(UID_TAG.to_owned(), self.uid.clone());
        ObjectMeta {
            name: Some(name),
            namespace: Some(names.namespace.clone()),
            labels: Some(labels),
            owner_references: self.reference.clone().map(|r| vec![r]),
            annotations: (!self.version.is_empty()).then(|| {
                let mut annotations =
                    BTreeMap::from([(VERSION_ANNOTATION.to_owned(), self.version.clone())]);
                if let Some(replicas) = self.replicas {
                    annotations.insert(REPLICAS_ANNOTATION.to_owned(), replicas.to_string());
                }
                annotations
            }),
            ..ObjectMeta::default()
        }
    }

    /// The owner of the StatefulSet, which records the version and replicas it runs.
    pub(super) fn with_version(&self, version: String, replicas: u32) -> Self {
        Self {
            reference: self.reference.clone(),
            uid: self.uid.clone(),
            version,
            replicas: Some(replicas),
        }
    }
}
