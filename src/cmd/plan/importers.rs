//! The reconcile's first-importer check, previewed: of two objects importing one unowned
//! resource, only the one created first may change it; the later one is refused at its first
//! reconcile. Each kind's importers are listed once per plan (metadata of every namespace) and
//! asked for every object whose resource would be taken over.

use std::collections::HashMap;
use std::sync::Arc;

use ferroplane_runtime::{ImportersPreview, ReconcileError};
use kube::Resource;
use serde::de::DeserializeOwned;
use tokio::sync::Mutex;

pub struct ImporterLists {
    kube: kube::Client,
    by_kind: Mutex<HashMap<String, Arc<ImportersPreview>>>,
}

impl ImporterLists {
    pub fn new(kube: kube::Client) -> Self {
        Self {
            kube,
            by_kind: Mutex::default(),
        }
    }

    /// The refusal the reconcile would give `obj` for importing `external_name`, if an object
    /// created before it imports it too.
    pub async fn refusal<K>(
        &self,
        obj: &K,
        external_name: &str,
    ) -> Result<Option<ReconcileError>, ReconcileError>
    where
        K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug,
    {
        let kind = K::kind(&()).into_owned();
        let list = {
            let mut by_kind = self.by_kind.lock().await;
            match by_kind.get(&kind) {
                Some(list) => list.clone(),
                None => {
                    let list = Arc::new(ImportersPreview::list::<K>(&self.kube).await?);
                    by_kind.insert(kind, list.clone());
                    list
                }
            }
        };
        Ok(list.refusal(obj.meta(), external_name))
    }
}
