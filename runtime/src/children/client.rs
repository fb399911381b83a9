//! The API calls on children: read, server-side apply (forced, under the field manager of the
//! kind that renders them, so hand edits of fields it owns are reverted) and delete.

use kube::Client;
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PropagationPolicy};
use serde_json::Value;

use super::child::Child;
use super::ownership::{holder, refusal_message};
use crate::field_manager::FIELD_MANAGER;

/// API calls on the children of one managed object.
#[derive(Clone)]
pub struct Children {
    client: Client,
    field_manager: &'static str,
}

impl Children {
    /// Applies under ferroplane's shared field manager.
    pub fn new(client: Client) -> Self {
        Self::with_field_manager(client, FIELD_MANAGER)
    }

    /// Applies under `field_manager`: one per kind, so that two kinds never take each other's
    /// fields silently (a forced apply would otherwise look like the same writer's).
    pub fn with_field_manager(client: Client, field_manager: &'static str) -> Self {
        Self {
            client,
            field_manager,
        }
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

    /// Why one of `children` may not be touched for the owner with `owner_uid` (the first that
    /// exists and is not its, see [`holder`]), or `None` when every one is its or absent.
    pub async fn foreign(
        &self,
        children: &[Child],
        owner_uid: &str,
    ) -> Result<Option<String>, kube::Error> {
        for child in children {
            if let Some(live) = self.get(child).await? {
                let message = refusal_message(&child.key(), &holder(&live, owner_uid), owner_uid);
                if message.is_some() {
                    return Ok(message);
                }
            }
        }
        Ok(None)
    }

    /// Server-side apply, forced: the child ends up with every field we render, whoever
    /// changed it in between.
    pub async fn apply(&self, child: &Child) -> Result<(), kube::Error> {
        let params = PatchParams::apply(self.field_manager).force();
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
