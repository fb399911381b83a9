//! The steps of a reconcile that talk to the provider: observe, delete until gone, create (and
//! wait for a cloud that lists new resources late), update, and publish the connection Secret.
//! Their writes to the object itself are in `object_writes`.

use std::time::Duration;

use jiff::Timestamp;
use kube::ResourceExt;
use kube::api::Api;
use kube::runtime::controller::Action;
use serde_json::Map;
use tracing::{debug, info};

use ferroplane_apis::common::{ConditionStatus, names};

use super::object_writes::late_init_note;
use super::observed_status::ObservedStatus;
use super::{Finish, Reconciler, object_key};
use crate::conditions;
use crate::connection_details::ConnectionDetails;
use crate::error::{ReconcileError, RetryClass};
use crate::external::{Deletion, ExternalRef};
use crate::idempotency::{IdempotencyKey, create_parameters};
use crate::metrics::ObjectState;
use crate::observation::{Observation, UpToDate};
use crate::policy::Policies;
use crate::provider::{Connector, ExternalClient};
use crate::readiness::Readiness;
use crate::reasons;
use crate::requeue::{self, RequeuePolicy};
use crate::resource::ManagedResource;
use crate::status;

impl<K: ManagedResource, C: Connector<K>> Reconciler<K, C> {
    pub(super) async fn observe(
        &self,
        api: &Api<K>,
        obj: &mut K,
        client: &C::Client,
        ext: &ExternalRef,
    ) -> Result<Observation, ReconcileError> {
        match client.observe(obj, ext).await {
            Ok(obs) => Ok(obs),
            Err(e) => {
                let err = e.context("cannot observe external resource");
                Err(self
                    .fail(api, obj, reasons::CANNOT_OBSERVE, err, None)
                    .await)
            }
        }
    }

    pub(super) async fn finish_deletion(
        &self,
        api: &Api<K>,
        mut obj: K,
        client: &C::Client,
        ext: ExternalRef,
        mut obs: Observation,
    ) -> Result<Finish, ReconcileError> {
        for attempt in 0..2 {
            // Not listed yet after a recent create is not gone: dropping the finalizer now would
            // leak the resource.
            if !obs.exists
                && let (Some(name), Some(left)) = (ext.name(), self.recently_created(&obj))
            {
                return self.await_visibility(api, obj, name, left, true).await;
            }
            if !obs.exists {
                self.remove_finalizer(api, &obj).await?;
                if let Some(asked) = obj.meta().deletion_timestamp.as_ref() {
                    let took = Timestamp::now().duration_since(asked.0);
                    self.metrics.gone(
                        &self.kind,
                        &self.gvk,
                        &object_key(&obj),
                        Some(Duration::try_from(took).unwrap_or_default()),
                    );
                }
                let name = ext.name().unwrap_or("(never created)");
                self.events
                    .normal(
                        &obj,
                        reasons::DELETED,
                        format!("external resource {name} is gone"),
                    )
                    .await;
                if let (Some(ns), Some(target)) =
                    (obj.namespace(), obj.write_connection_secret_to_ref())
                {
                    self.secrets.forget(&ns, &target.name);
                }
                self.import_checks.forget(&ext.uid);
                return Ok(Finish::Gone);
            }
            if attempt == 1 {
                break;
            }
            self.write_status(
                api,
                &mut obj,
                &[conditions::deleting(), conditions::synced("")],
                &Map::new(),
            )
            .await?;
            let deletion = match client.delete(&obj, &ext).await {
                Ok(d) => d,
                Err(e) => {
                    let err = e.context("cannot delete external resource");
                    return Err(self
                        .fail(
                            api,
                            &mut obj,
                            reasons::CANNOT_DELETE,
                            err,
                            Some(conditions::deleting()),
                        )
                        .await);
                }
            };
            debug!(?deletion, "delete requested");
            match deletion {
                // Confirm with a fresh observe rather than trusting the delete call.
                Deletion::Gone => obs = self.observe(api, &mut obj, client, &ext).await?,
                Deletion::InProgress => break,
                Deletion::Waiting(why) => {
                    self.write_status(
                        api,
                        &mut obj,
                        &[conditions::deleting(), conditions::synced(why.clone())],
                        &Map::new(),
                    )
                    .await?;
                    self.events
                        .normal(&obj, reasons::DELETION_WAITING, why)
                        .await;
                    break;
                }
            }
        }
        Ok(Finish::Done(
            Action::requeue(self.jitter(self.policy.transition_interval)),
            ObjectState::Deleting,
        ))
    }

    pub(super) async fn create(
        &self,
        api: &Api<K>,
        mut obj: K,
        client: &C::Client,
        ext: &ExternalRef,
        policies: &Policies,
        scope: Option<&str>,
    ) -> Result<Finish, ReconcileError> {
        if !policies.should_create() {
            let err = ReconcileError::new(
                reasons::EXTERNAL_RESOURCE_NOT_FOUND,
                format!(
                    "the external resource {} does not exist and spec.managementPolicies do not allow Create; \
                     set the ferroplane.io/external-name annotation to an existing resource to import it",
                    ext.name().unwrap_or("(no external name)")
                ),
                RetryClass::UntilSpecChanges,
            );
            let ready = conditions::ready(&Readiness::Unavailable(
                "external resource not found".into(),
            ));
            return Err(self
                .fail(api, &mut obj, reasons::CANNOT_OBSERVE, err, Some(ready))
                .await);
        }
        let spec = serde_json::to_value(&obj)
            .ok()
            .and_then(|v| v.get("spec").cloned());
        // Secrets may exist only once (see `connection_secret`): nothing is created while the
        // connection Secret cannot be written, and secrets the kind makes itself are stored
        // before the create.
        let stored = match self.secrets_before_create(&obj, client).await {
            Ok(stored) => stored,
            Err(err) => {
                return Err(self
                    .fail(api, &mut obj, reasons::CANNOT_PUBLISH_CONNECTION, err, None)
                    .await);
            }
        };
        let key = IdempotencyKey::derive(&ext.uid, &create_parameters(spec.as_ref(), ext.name()));
        let creation = match client.create_with_secrets(&obj, &key, &stored).await {
            Ok(c) => c,
            Err(e) => {
                let err = e.context("cannot create external resource");
                return Err(self
                    .fail(
                        api,
                        &mut obj,
                        reasons::CANNOT_CREATE,
                        err,
                        Some(conditions::creating()),
                    )
                    .await);
            }
        };
        if let Some(target) = obj.write_connection_secret_to_ref() {
            self.secrets
                .hold(&obj, target, &creation.connection_details);
        }
        let created = ExternalRef {
            name: Some(creation.external_name.clone()),
            uid: ext.uid.clone(),
        };
        // Look at the new resource at once: when it is already visible, its name and the
        // late-initialized spec go out in one write and the status in one more, so a create
        // costs three writes (finalizer, name, status) instead of five. A failed or empty look
        // changes nothing: the next reconcile observes as usual. A provider whose cloud lists
        // new resources late skips the look (it would find nothing and cost a call): the next
        // reconcile comes once the lag has passed, with the first looks of other creates.
        let first_look = match creation.listed_after {
            Some(_) => None,
            None => client
                .observe(&obj, &created)
                .await
                .ok()
                .filter(|o| o.exists),
        };
        let late_fill = first_look
            .as_ref()
            .filter(|_| policies.should_late_initialize())
            .and_then(|o| o.late_init.as_ref())
            .and_then(|patch| status::late_init_patch(spec.as_ref()?, patch));
        // If this write is lost the next observe finds the resource by its UID tag.
        self.record_creation(
            api,
            &mut obj,
            &creation.external_name,
            scope,
            late_fill.as_ref(),
            first_look.is_some(),
        )
        .await?;
        info!(external_name = %creation.external_name, "created external resource");
        // One event for both: events are writes too, and a create storm is where they add up.
        let mut note = format!("created external resource {}", creation.external_name);
        if let Some(fill) = &late_fill {
            note = format!("{note}; {}", late_init_note(fill));
        }
        self.events.normal(&obj, reasons::CREATED, note).await;
        let mut details = creation.connection_details.clone();
        if let Some(obs) = &first_look {
            details.merge(&obs.connection_details);
        }
        let observed = match &first_look {
            Some(obs) => ObservedStatus::of(obs),
            None => ObservedStatus::unobserved(Some(conditions::creating())),
        };
        self.publish_details(api, &mut obj, &details, &observed)
            .await?;

        let Some(obs) = first_look else {
            self.write_status(
                api,
                &mut obj,
                &[conditions::creating(), conditions::synced("")],
                &Map::new(),
            )
            .await?;
            // Not jittered: the first looks of creates made within one lag share one instant.
            let after = match creation.listed_after {
                Some(lag) => {
                    let after = requeue::until_listed(lag);
                    self.first_looks.schedule(&object_key(&obj), after);
                    after
                }
                None => self.jitter(self.policy.transition_interval),
            };
            return Ok(Finish::Done(Action::requeue(after), ObjectState::NotReady));
        };
        let desired = observed.conditions(conditions::synced(obs.note.clone().unwrap_or_default()));
        self.write_status(api, &mut obj, &desired, &observed.fields)
            .await?;
        let is_ready = observed
            .ready()
            .is_some_and(|r| r.status == ConditionStatus::True);
        let (after, state) =
            if is_ready && !obs.in_transition && matches!(obs.up_to_date, UpToDate::Yes) {
                let poll = obs_poll_interval(&self.policy, &obj);
                (self.until_poll(&obj, poll), ObjectState::Ready)
            } else if is_ready {
                (
                    self.jitter(self.policy.transition_interval),
                    ObjectState::Ready,
                )
            } else {
                (
                    self.jitter(self.policy.transition_interval),
                    ObjectState::NotReady,
                )
            };
        Ok(Finish::Done(Action::requeue(after), state))
    }

    /// Checks that the connection Secret can be written, stores the secrets the kind makes
    /// itself, and returns what the Secret holds (empty without one).
    async fn secrets_before_create(
        &self,
        obj: &K,
        client: &C::Client,
    ) -> Result<ConnectionDetails, ReconcileError> {
        let Some(target) = obj.write_connection_secret_to_ref().cloned() else {
            return Ok(ConnectionDetails::new());
        };
        let mut stored = self.secrets.read_for_create(obj, &target).await?;
        if let Some(made) = client.secrets_before_create(obj, &stored) {
            stored.merge(&made);
            self.secrets.publish(obj, &target, &stored).await?;
        }
        Ok(stored)
    }

    /// Waits for a recently created resource the cloud does not list yet: says so in Synced and
    /// looks again soon, neither creating another nor letting the object go.
    pub(super) async fn await_visibility(
        &self,
        api: &Api<K>,
        mut obj: K,
        name: &str,
        left: Duration,
        deleting: bool,
    ) -> Result<Finish, ReconcileError> {
        let note = format!(
            "external resource {name} was created moments ago and is not listed by the cloud yet; waiting up to {}s for it to appear",
            left.as_secs().max(1)
        );
        let (ready, state) = if deleting {
            (conditions::deleting(), ObjectState::Deleting)
        } else {
            (conditions::creating(), ObjectState::NotReady)
        };
        self.write_status(
            api,
            &mut obj,
            &[ready, conditions::synced(note)],
            &Map::new(),
        )
        .await?;
        Ok(Finish::Done(
            Action::requeue(self.jitter(self.policy.transition_interval.min(left))),
            state,
        ))
    }

    /// Whether the resource named by the external name was created so recently that the cloud
    /// may not list it yet (see [`RequeuePolicy::visibility_grace`]).
    pub(super) fn recently_created(&self, obj: &K) -> Option<Duration> {
        let at: Timestamp = obj
            .annotations()
            .get(names::EXTERNAL_CREATE_SUCCEEDED)?
            .parse()
            .ok()?;
        let age = Duration::try_from(Timestamp::now().duration_since(at)).unwrap_or_default();
        (age < self.policy.visibility_grace).then(|| self.policy.visibility_grace - age)
    }

    /// Publishes the connection details; when the Secret cannot be written, the failure is
    /// reported with the status `observed` describes.
    pub(super) async fn publish_details(
        &self,
        api: &Api<K>,
        obj: &mut K,
        details: &ConnectionDetails,
        observed: &ObservedStatus,
    ) -> Result<(), ReconcileError> {
        let Some(target) = obj.write_connection_secret_to_ref().cloned() else {
            return Ok(());
        };
        let held = self.secrets.held_keys(&*obj, &target);
        if details.is_empty() && held.is_empty() {
            return Ok(());
        }
        match self.secrets.publish(&*obj, &target, details).await {
            Ok(_) => Ok(()),
            // Details only the create returned are not stored yet: not Ready until they are.
            Err(e) if !held.is_empty() => {
                let unstored = observed.not_ready(format!(
                    "the connection Secret {} does not hold {} yet, which the cloud returned only \
                     when it created the resource; it is written as soon as the Secret can be",
                    target.name,
                    held.join(", ")
                ));
                Err(self
                    .fail_observed(api, obj, reasons::CANNOT_PUBLISH_CONNECTION, e, &unstored)
                    .await)
            }
            Err(e) => Err(self
                .fail_observed(api, obj, reasons::CANNOT_PUBLISH_CONNECTION, e, observed)
                .await),
        }
    }

    /// Makes the resource match the spec; returns the connection details the update produced.
    /// A failure is reported with the status `observed` describes.
    pub(super) async fn update(
        &self,
        api: &Api<K>,
        obj: &mut K,
        client: &C::Client,
        ext: &ExternalRef,
        diff: &str,
        observed: &ObservedStatus,
    ) -> Result<ConnectionDetails, ReconcileError> {
        match client.update(obj, ext).await {
            Ok(update) => {
                let ext_name = ext.name().unwrap_or("(unnamed)");
                let verb = if update.in_transition {
                    "updating"
                } else {
                    "updated"
                };
                info!(external_name = ext_name, diff = %diff, "{verb} external resource");
                self.events
                    .normal(
                        &*obj,
                        reasons::UPDATED,
                        format!("{verb} external resource {ext_name}: {diff}"),
                    )
                    .await;
                Ok(update.connection_details)
            }
            Err(e) => {
                let err = e.context("cannot update external resource");
                Err(self
                    .fail_observed(api, obj, reasons::CANNOT_UPDATE, err, observed)
                    .await)
            }
        }
    }
}

/// The poll interval of `obj` (its annotation, else the policy's).
fn obs_poll_interval<K: ManagedResource>(policy: &RequeuePolicy, obj: &K) -> Duration {
    let annotation = obj
        .meta()
        .annotations
        .as_ref()
        .and_then(|a| a.get(names::POLL_INTERVAL))
        .map(String::as_str);
    policy.poll_interval(annotation).0
}
