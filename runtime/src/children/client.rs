//! The API calls on children: read, refuse children that are not the owner's, server-side
//! apply (forced, under the field manager of the kind that renders them, so hand edits of fields
//! it owns are reverted), delete one, and delete (or, by leaving them, orphan) all the owner's.

use kube::Client;
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PropagationPolicy};
use serde_json::Value;

use super::call_error::CallError;
use super::child::Child;
use super::ownership::{Holder, holder, refusal_message};
use crate::error::ReconcileError;
use crate::external::Deletion;
use crate::field_manager::FIELD_MANAGER;
use crate::reasons::CHILD_NOT_OURS;

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

    /// The live object, `None` when it does not exist; a failure names the child.
    pub async fn read(&self, child: &Child) -> Result<Option<Value>, CallError> {
        self.get(child)
            .await
            .map_err(|e| CallError::new(format!("reading {}", child.key()), e))
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

    /// Refuses (reason [`CHILD_NOT_OURS`], not retried until the spec changes) when an object
    /// with the name of one of `children` exists and is not the owner's (another object's, or
    /// made by hand): it is never adopted, changed or deleted.
    pub async fn refuse_foreign(
        &self,
        children: &[Child],
        owner_uid: &str,
    ) -> Result<(), ReconcileError> {
        match self
            .foreign(children, owner_uid)
            .await
            .map_err(|e| CallError::new("checking who holds the children", e))?
        {
            Some(message) => Err(ReconcileError::terminal(CHILD_NOT_OURS, message)),
            None => Ok(()),
        }
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

    /// Deletes those of `children` that are the owner's ([`Holder::Us`]), in reverse order (the
    /// reverse of apply order); an object that merely has a child's name (made by hand, another
    /// object's) is left alone. Gone when none of the owner's is left.
    pub async fn delete_owned(
        &self,
        children: &[Child],
        owner_uid: &str,
    ) -> Result<Deletion, CallError> {
        let mut all_gone = true;
        for child in children.iter().rev() {
            let Some(live) = self.read(child).await? else {
                continue;
            };
            if holder(&live, owner_uid) != Holder::Us {
                continue;
            }
            all_gone &= self
                .delete(child)
                .await
                .map_err(|e| CallError::new(format!("deleting {}", child.key()), e))?;
        }
        Ok(if all_gone {
            Deletion::Gone
        } else {
            Deletion::InProgress
        })
    }
}
