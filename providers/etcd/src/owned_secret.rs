//! Writing a Secret the EtcdCluster owns (its TLS material, root's password in effect): the
//! values are in the request body only, and errors name the Secret, never its data.

use std::collections::BTreeMap;

use ferroplane_apis::etcd::EtcdCluster;
use ferroplane_runtime::children::{self, Child, Children};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;

use crate::error::Error;
use crate::names::ClusterNames;
use crate::render::owner::Owner;

/// One Secret of the cluster: its name, type, values and annotations.
pub(crate) struct OwnedSecret<'a> {
    pub name: &'a str,
    pub type_: &'a str,
    pub data: &'a [(&'a str, &'a str)],
    pub annotations: Option<BTreeMap<String, String>>,
}

impl OwnedSecret<'_> {
    /// Applies the Secret with the labels and owner reference every child of `mr` carries.
    pub(crate) async fn apply(
        self,
        children: &Children,
        mr: &EtcdCluster,
        names: &ClusterNames,
    ) -> Result<(), Error> {
        let mut metadata = Owner::of(mr, children::owned(mr))?.meta(self.name.to_owned(), names);
        if self.annotations.is_some() {
            metadata.annotations = self.annotations;
        }
        let secret = Secret {
            metadata,
            type_: Some(self.type_.to_owned()),
            data: Some(
                self.data
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), ByteString(v.as_bytes().to_vec())))
                    .collect(),
            ),
            ..Secret::default()
        };
        let child = Child::from_typed(&secret).map_err(|source| Error::Serialize {
            what: "Secret",
            source,
        })?;
        children
            .apply(&child)
            .await
            .map_err(|e| Error::kube(format!("writing Secret {}", self.name), e))
    }
}
