//! The API calls on children: read, server-side apply (forced, under ferroplane's field
//! manager, so hand edits of fields we own are reverted) and delete.

use kube::Client;
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PropagationPolicy};
use serde_json::Value;

use super::child::Child;
use crate::field_manager::FIELD_MANAGER;

/// API calls on the children of one managed object.
#[derive(Clone)]
pub struct Children {
    client: Client,
}

impl Children {
    pub fn new(client: Client) -> Self {
        Self { client }
    }

    fn api(&self, child: &Child) -> Api<DynamicObject> {
        Api::namespaced_with(self.client.clone(), child.namespace(), &child.resource)
    }

    /// The live object, `None` when it does not exist.
    pub async fn get(&self, child: &Child) -> Result<Option<Value>, kube::Error> {
        let live = self.api(child).get_opt(child.name()).await?;
        live.map(serde_json::to_value)
            .transpose()
            .map_err(kube::Error::SerdeError)
    }

    /// Server-side apply, forced: the child ends up with every field we render, whoever
    /// changed it in between.
    pub async fn apply(&self, child: &Child) -> Result<(), kube::Error> {
        let params = PatchParams::apply(FIELD_MANAGER).force();
        self.api(child)
            .patch(child.name(), &params, &Patch::Apply(&child.object))
            .await?;
        Ok(())
    }

    /// Deletes the child (its own dependents, such as a StatefulSet's pods, in the background).
    /// Returns `true` when it is gone already.
    pub async fn delete(&self, child: &Child) -> Result<bool, kube::Error> {
        let params = DeleteParams {
            propagation_policy: Some(PropagationPolicy::Background),
            ..DeleteParams::default()
        };
        match self.api(child).delete(child.name(), &params).await {
            Ok(_) => Ok(false),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(true),
            Err(e) => Err(e),
        }
    }
}
