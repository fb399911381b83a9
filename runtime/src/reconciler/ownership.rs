//! The ownership steps of a reconcile (see [`crate::ownership`]): decide whose the observed
//! resource is, refuse one another live object owns (and, while deleting, let go of it without
//! a cloud delete), and take over an untagged or orphaned one.

use std::sync::Arc;

use kube::Api;
use kube::ResourceExt;

use super::{Finish, Reconciler};
use crate::conditions;
use crate::error::{ReconcileError, RetryClass};
use crate::external::ExternalRef;
use crate::idempotency::UID_TAG;
use crate::import_census::CensusFailure;
use crate::observation::Observation;
use crate::ownership::{self, ExternalOwner, Verdict};
use crate::provider::{Connector, ExternalClient};
use crate::readiness::Readiness;
use crate::reasons;
use crate::resource::ManagedResource;

impl<K: ManagedResource, C: Connector<K>> Reconciler<K, C> {
    /// Whose the resource `observe` found is, for this object. Looks the tagged owner up only
    /// when the tag names another object.
    pub(super) async fn ownership(
        &self,
        api: &Api<K>,
        obj: &mut K,
        ext: &ExternalRef,
        obs: &Observation,
    ) -> Result<Verdict, ReconcileError> {
        if !obs.exists {
            return Ok(Verdict::Ours);
        }
        let owner = match ownership::other_uid(&obs.owner, &ext.uid) {
            Some(uid) => match ownership::find_owner::<K>(&self.client, uid).await {
                Ok(found) => Some(found),
                Err(err) => {
                    return Err(self
                        .fail(api, obj, reasons::CANNOT_OBSERVE, err, None)
                        .await);
                }
            },
            None => None,
        };
        let name = obs
            .external_name
            .as_deref()
            .or(ext.name())
            .unwrap_or("(unnamed)");
        Ok(ownership::decide(
            &self.kind,
            &obj.namespace().unwrap_or_default(),
            name,
            &obs.owner,
            &ext.uid,
            owner.as_ref(),
            ext.name.is_some(),
        ))
    }

    /// `Claim` when no object created earlier imports the same resource, else the refusal (see
    /// [`ownership::earlier_importer`]), from the census of every namespace or, where the
    /// controller may not list every namespace, from a list of the object's own.
    pub(super) async fn first_importer(
        &self,
        api: &Api<K>,
        obj: &mut K,
        ext: &ExternalRef,
    ) -> Result<Verdict, ReconcileError> {
        let Some(name) = ext.name() else {
            return Ok(Verdict::Claim);
        };
        let namespace = obj.namespace().unwrap_or_default();
        let importers = match self.importers.list_started_after_now().await {
            Err(CensusFailure::Forbidden) => {
                let own: Api<K> = Api::namespaced(self.client.clone(), &namespace);
                ownership::list_importers(own).await.map(Arc::new)
            }
            listed => listed,
        };
        let err = match importers {
            Ok(importers) => {
                return Ok(
                    match ownership::earlier_importer(&importers, obj.meta(), name) {
                        None => Verdict::Claim,
                        Some(older) => Verdict::Refuse(ownership::later_importer(
                            &self.kind, &namespace, name, &older,
                        )),
                    },
                );
            }
            Err(CensusFailure::Failed(err)) => err,
            Err(CensusFailure::Forbidden) => ReconcileError::new(
                reasons::FORBIDDEN,
                format!(
                    "cannot check which objects import the external resource: this controller may not list {}s in namespace {namespace}",
                    self.kind
                ),
                RetryClass::Backoff,
            ),
        };
        Err(self
            .fail(api, obj, reasons::CANNOT_OBSERVE, err, None)
            .await)
    }

    /// Touches nothing of a resource another object owns (or may own). While deleting, the
    /// finalizer goes without a cloud delete: the resource is not this object's to delete.
    pub(super) async fn refuse(
        &self,
        api: &Api<K>,
        mut obj: K,
        name: &str,
        err: ReconcileError,
        deleting: bool,
    ) -> Result<Finish, ReconcileError> {
        if deleting {
            self.remove_finalizer(api, &obj).await?;
            self.events
                .normal(
                    &obj,
                    reasons::ORPHANED,
                    format!(
                        "left external resource {name} in place: it is not this object's ({})",
                        err.reason()
                    ),
                )
                .await;
            if let (Some(ns), Some(target)) =
                (obj.namespace(), obj.write_connection_secret_to_ref())
            {
                self.secrets.forget(&ns, &target.name);
            }
            return Ok(Finish::Gone);
        }
        let (event_reason, why) = if err.reason() == reasons::EXISTS_UNMANAGED {
            (reasons::EXISTS_UNMANAGED, "was not created for this object")
        } else {
            (reasons::OWNED_ELSEWHERE, "is managed by another object")
        };
        let ready = conditions::ready(&Readiness::Unavailable(format!(
            "external resource {name} {why}"
        )));
        Err(self
            .fail(api, &mut obj, event_reason, err, Some(ready))
            .await)
    }

    /// Rewrites the ownership tag of an untagged or orphaned resource to this object's UID.
    pub(super) async fn claim(
        &self,
        api: &Api<K>,
        obj: &mut K,
        client: &C::Client,
        ext: &ExternalRef,
        previous: &ExternalOwner,
    ) -> Result<(), ReconcileError> {
        if let Err(e) = client.claim(obj, ext).await {
            let err = e.context("cannot take over the external resource");
            return Err(self.fail(api, obj, reasons::CANNOT_CLAIM, err, None).await);
        }
        let name = ext.name().unwrap_or("(unnamed)");
        let why = match previous {
            ExternalOwner::Uid(_) => "the object it was tagged for no longer exists",
            _ => "it had no owner",
        };
        self.events
            .normal(
                &*obj,
                reasons::ADOPTED,
                format!("took over external resource {name} ({why}): its {UID_TAG} tag now names this object"),
            )
            .await;
        Ok(())
    }
}

/// The importers (by UID) whose check found no object created earlier importing the same
/// resource, while they have not claimed it: an import that matches its spec is checked once,
/// not at every poll. Kept in memory only: after a restart each is checked once again.
#[derive(Default)]
pub(crate) struct ImportChecks {
    passed: std::sync::Mutex<std::collections::HashSet<Box<str>>>,
}

impl ImportChecks {
    fn lock(&self) -> std::sync::MutexGuard<'_, std::collections::HashSet<Box<str>>> {
        self.passed.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn passed(&self, uid: &str) -> bool {
        !uid.is_empty() && self.lock().contains(uid)
    }

    pub(crate) fn pass(&self, uid: &str) {
        if !uid.is_empty() {
            self.lock().insert(uid.into());
        }
    }

    /// The resource is claimed (its tag names the object from now on), or the object is gone.
    pub(crate) fn forget(&self, uid: &str) {
        self.lock().remove(uid);
    }
}
