//! The reconcile's first-importer check, previewed: of two objects importing one unowned
//! resource, only the one created first may change it; the later one is refused at its first
//! reconcile. Each kind's importers are listed once per plan (metadata of every namespace) and
//! asked for every object whose resource would be taken over.

use std::collections::HashMap;
use std::sync::Arc;

use ferroplane_runtime::reasons::FORBIDDEN;
use ferroplane_runtime::{ImportersPreview, ReconcileError};
use kube::Resource;
use serde::de::DeserializeOwned;
use tokio::sync::Mutex;

/// A kind, and the namespace of a list that could not be made of every namespace.
type ListKey = (String, Option<String>);

pub struct ImporterLists {
    kube: kube::Client,
    /// By kind, and namespace where the kind's objects may not be listed in every namespace.
    by_kind: Mutex<HashMap<ListKey, Arc<ImportersPreview>>>,
}

impl ImporterLists {
    pub fn new(kube: kube::Client) -> Self {
        Self {
            kube,
            by_kind: Mutex::default(),
        }
    }

    /// The refusal the reconcile would give `obj` for importing `external_name`, if an object
    /// created before it imports it too: from the kind's list of every namespace, or, where
    /// that is forbidden, of the object's own (as the reconcile falls back).
    pub async fn refusal<K>(
        &self,
        obj: &K,
        external_name: &str,
    ) -> Result<Option<ReconcileError>, ReconcileError>
    where
        K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
            + Clone
            + DeserializeOwned
            + std::fmt::Debug,
    {
        let kind = K::kind(&()).into_owned();
        let namespace = obj.meta().namespace.clone().unwrap_or_default();
        let list = {
            let mut by_kind = self.by_kind.lock().await;
            let everywhere = (kind.clone(), None);
            let own = (kind, Some(namespace.clone()));
            match by_kind.get(&everywhere).or_else(|| by_kind.get(&own)) {
                Some(list) => list.clone(),
                None => {
                    let (key, list) = match ImportersPreview::list::<K>(&self.kube, None).await {
                        Ok(list) => (everywhere, list),
                        Err(e) if e.reason() == FORBIDDEN => (
                            own,
                            ImportersPreview::list::<K>(&self.kube, Some(&namespace)).await?,
                        ),
                        Err(e) => return Err(e),
                    };
                    let list = Arc::new(list);
                    by_kind.insert(key, list.clone());
                    list
                }
            }
        };
        Ok(list.refusal(obj.meta(), external_name))
    }
}
