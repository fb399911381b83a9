//! The reconcile of one managed object: a linear sequence of short steps, each saying why it
//! exists, what it reports on failure and when the object is looked at again.
//!
//! Kubernetes writes (the only ones a reconcile makes):
//! - `metadata.finalizers` merge patch with a resourceVersion precondition (add / remove),
//! - the `ferroplane.io/external-name` annotation right after create or adoption (after a
//!   create, together with the late-initialized spec when the new resource is already visible),
//! - late-initialized `spec` fields with a resourceVersion precondition,
//! - `/status` merge patch with a resourceVersion precondition, only when it changes.

use std::marker::PhantomData;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ferroplane_apis::common::ConditionStatus;
use ferroplane_apis::common::names;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Client, Resource, ResourceExt};
use serde_json::Map;
use tracing::{Instrument, info_span, warn};

use crate::annotations;
use crate::conditions;
use crate::connection_secret::ConnectionSecrets;
use crate::crossplane_metrics::gvk_label;
use crate::error::ReconcileError;
use crate::events::Events;
use crate::external::ExternalRef;
use crate::finalizer;
use crate::idempotency::UID_TAG;
use crate::import_census::ImportCensus;
use crate::metrics::{Metrics, ObjectState};
use crate::missing::named_resource_missing;
pub(crate) use crate::object_table::object_key;
use crate::observation::UpToDate;
use crate::observation_digests::ObservationDigests;
use crate::ownership::{ExternalOwner, Verdict};
use crate::paused::{Paused, not_understood, paused};
use crate::policy::Policies;
use crate::provider::{Connector, ExternalClient};
use crate::ratelimit::RateLimiter;
use crate::readiness::Readiness;
use crate::reasons;
use crate::requeue::{self, RequeuePolicy};
use crate::resource::ManagedResource;
use crate::runtime::Runtime;
use crate::scope::moved;
use crate::versions::KnownVersions;
use observed_status::ObservedStatus;

mod first_looks;
mod object_writes;
mod observed_status;
mod ownership;
mod report;
mod steps;
mod streaks;

/// Requeue after an optimistic-concurrency conflict: the object changed while we worked, so
/// we simply run again on the new version, soon and without counting a failure.
const CONFLICT_REQUEUE: Duration = Duration::from_millis(500);

/// Reconciles objects of kind `K` with the provider's connector `C`.
pub struct Reconciler<K, C> {
    client: Client,
    connector: C,
    kind: String,
    /// The kind as Crossplane's metrics label it (`crossplane_metrics::gvk_label`).
    gvk: String,
    policy: RequeuePolicy,
    metrics: Metrics,
    limiter: Arc<RateLimiter>,
    events: Events,
    secrets: ConnectionSecrets,
    /// Consecutive failures per object and retry class, for exponential backoff; cleared on
    /// success.
    failures: streaks::Streaks,
    versions: Arc<KnownVersions>,
    /// Digests of the observations the cache shed, shared with the controller's watch.
    digests: Arc<ObservationDigests>,
    first_looks: first_looks::FirstLooks,
    /// Which objects import which resource, for the check before a claim (lists shared by the
    /// importers that ask at once).
    importers: ImportCensus,
    /// The importers found first, not claimed yet.
    import_checks: ownership::ImportChecks,
    _kind: PhantomData<fn() -> K>,
}

/// Where a reconcile ended, for metrics.
enum Finish {
    Done(Action, ObjectState),
    Gone,
}

impl<K: ManagedResource, C: Connector<K>> Reconciler<K, C> {
    pub fn new(runtime: &Runtime, connector: C, policy: RequeuePolicy) -> Self {
        let client = runtime.client().clone();
        Self {
            kind: K::kind(&()).into_owned(),
            gvk: gvk_label(&K::group(&()), &K::version(&()), &K::kind(&())),
            events: Events::new(runtime.recorder()),
            secrets: ConnectionSecrets::new(client.clone()),
            metrics: runtime.metrics().clone(),
            limiter: runtime.rate_limiter(),
            client,
            connector,
            policy,
            failures: streaks::Streaks::default(),
            versions: Arc::default(),
            digests: Arc::default(),
            first_looks: first_looks::FirstLooks::default(),
            importers: crate::ownership::census::<K>(runtime.client()),
            import_checks: ownership::ImportChecks::default(),
            _kind: PhantomData,
        }
    }

    /// Shares the versions this reconciler writes with the controller's watch, which then
    /// skips the events of our own writes.
    pub(crate) fn with_versions(mut self, versions: Arc<KnownVersions>) -> Self {
        self.versions = versions;
        self
    }

    /// Shares the digests of the observations the controller's watch takes out of its cache.
    pub(crate) fn with_observation_digests(mut self, digests: Arc<ObservationDigests>) -> Self {
        self.digests = digests;
        self
    }

    /// Reconciles one object, as the informer cache has it, unless the cache has not caught up
    /// with this process's own last write yet (then it is read). Every write below carries a
    /// resourceVersion precondition (or, for the external name, cannot do harm), so acting on a
    /// version someone else changed meanwhile ends in a conflict and a quick requeue, never in
    /// a lost update; creates are safe too, with the same idempotency key on every attempt.
    pub async fn reconcile(&self, obj: &K) -> Result<Action, ReconcileError> {
        let key = object_key(obj);
        let span = info_span!("reconcile", kind = %self.kind, object = %key);
        async {
            self.limiter.acquire().await;
            self.note_first_reconcile(obj, &key);
            let started = Instant::now();
            let result = self.run(obj).await;
            let outcome = match &result {
                Ok(Finish::Done(_, state)) => {
                    self.metrics.set_state(&self.kind, &key, *state);
                    if *state == ObjectState::Paused {
                        "paused"
                    } else {
                        "success"
                    }
                }
                Ok(Finish::Gone) => {
                    self.metrics.gone(&self.kind, &self.gvk, &key, None);
                    self.versions.forget(&key);
                    self.first_looks.forget(&key);
                    "success"
                }
                Err(e) if e.is_conflict() => "conflict",
                Err(e) => {
                    self.metrics.error(&self.kind, e.reason());
                    self.metrics.set_state(&self.kind, &key, ObjectState::Error);
                    "error"
                }
            };
            self.metrics
                .reconciled(&self.kind, outcome, started.elapsed());
            match result {
                Ok(finish) => {
                    self.failures.clear(&key);
                    Ok(match finish {
                        Finish::Done(action, _) => action,
                        Finish::Gone => Action::await_change(),
                    })
                }
                Err(e) => {
                    warn!(
                        reason = e.reason(),
                        message = e.message(),
                        "reconcile failed"
                    );
                    Err(e)
                }
            }
        }
        .instrument(span)
        .await
    }

    /// The requeue after a failed reconcile: soon after a conflict, else backoff by class.
    pub fn error_action(&self, obj: &K, err: &ReconcileError) -> Action {
        if err.is_conflict() {
            return Action::requeue(self.jitter(CONFLICT_REQUEUE));
        }
        let key = object_key(obj);
        let failures = self.failures.fail(key, err.retry());
        let (poll, _) = self.policy.poll_interval(
            obj.annotations()
                .get(names::POLL_INTERVAL)
                .map(String::as_str),
        );
        Action::requeue(self.jitter(self.policy.backoff(failures, err.retry(), poll)))
    }

    fn jitter(&self, d: Duration) -> Duration {
        self.policy.jittered(d, &mut rand::rng())
    }

    /// The delay until the object's next slot on the poll grid (see `requeue`).
    fn until_poll(&self, obj: &K, interval: Duration) -> Duration {
        let uid = obj.meta().uid.as_deref();
        match uid {
            Some(uid) => requeue::until_next_poll(interval, uid),
            None => requeue::until_next_poll(interval, &object_key(obj)),
        }
    }

    fn api_for(&self, obj: &K) -> Api<K> {
        Api::namespaced(self.client.clone(), &obj.namespace().unwrap_or_default())
    }

    async fn run(&self, cached: &K) -> Result<Finish, ReconcileError> {
        let api = self.api_for(cached);
        let name = cached.name_any();
        let key = object_key(cached);
        let mut obj = if self.versions.is_current(&key, cached) {
            cached.clone()
        } else {
            let Some(current) = api
                .get_opt(&name)
                .await
                .map_err(|e| ReconcileError::kube("cannot read object", e))?
            else {
                return Ok(Finish::Gone);
            };
            self.versions.note(&key, &current);
            current
        };
        // Created a moment ago and unchanged since: the first look is not due yet (see
        // `first_looks`).
        if self.versions.is_own(&key, &obj)
            && self.versions.is_current(&key, &obj)
            && let Some(left) = self.first_looks.remaining(&key)
        {
            return Ok(Finish::Done(Action::requeue(left), ObjectState::NotReady));
        }
        let (poll, poll_warning) = self
            .policy
            .poll_interval(annotation(&obj, names::POLL_INTERVAL));

        // Aliases: a `crossplane.io/` annotation that differs from its `ferroplane.io/` one is
        // overruled (see `annotations`), said once as a Warning and kept in `Synced`'s message.
        let conflict = self.report_conflicting_annotations(&obj).await;

        // Paused: a human asked ferroplane to keep its hands off, including deletion. A value
        // not understood is not guessed at: the safe reading is "paused", said loudly.
        let paused_by = annotations::PAUSED.read(obj.meta().annotations.as_ref());
        match paused(paused_by.map(|p| p.value)) {
            Paused::No => {}
            Paused::Yes => {
                let key = paused_by.map_or(names::PAUSED, |p| p.key);
                let msg = join_notes(
                    &format!(
                        "reconciliation is paused by the {key} annotation; remove it to resume"
                    ),
                    conflict.as_deref().unwrap_or_default(),
                );
                self.write_status(&api, &mut obj, &[conditions::paused(msg)], &Map::new())
                    .await?;
                return Ok(Finish::Done(Action::await_change(), ObjectState::Paused));
            }
            Paused::NotUnderstood(value) => {
                let key = paused_by.map_or(names::PAUSED, |p| p.key);
                let msg = not_understood(key, value);
                // One event per value: the status write below requeues the object once more.
                let told = conditions::find(obj.conditions(), names::SYNCED).is_some_and(|c| {
                    c.reason == names::REASON_INVALID_ANNOTATION && c.message == msg
                });
                let desired = [conditions::invalid_annotation(msg.clone())];
                self.write_status(&api, &mut obj, &desired, &Map::new())
                    .await?;
                if !told {
                    self.events
                        .warning(&obj, names::REASON_INVALID_ANNOTATION, msg)
                        .await;
                }
                return Ok(Finish::Done(Action::await_change(), ObjectState::Paused));
            }
        }

        // Policies: an unsupported combination is a user error, reported, never guessed at.
        let policies = match Policies::resolve(obj.management_policies(), obj.deletion_policy()) {
            Ok(p) => p,
            Err(e) => {
                let err = ReconcileError::terminal(
                    reasons::UNSUPPORTED_MANAGEMENT_POLICIES,
                    e.to_string(),
                );
                return Err(self
                    .fail(&api, &mut obj, reasons::CANNOT_RESOLVE_POLICIES, err, None)
                    .await);
            }
        };
        if policies.is_paused() {
            let msg = "spec.managementPolicies is empty, which pauses reconciliation";
            self.write_status(&api, &mut obj, &[conditions::paused(msg)], &Map::new())
                .await?;
            return Ok(Finish::Done(Action::await_change(), ObjectState::Paused));
        }

        // Deleting and orphaning: nothing outside the cluster is touched, so no credentials are
        // needed; the finalizer goes at once.
        let deleting = obj.meta().deletion_timestamp.is_some();
        if deleting && !finalizer::has(obj.meta()) {
            return Ok(Finish::Gone);
        }
        if deleting && !policies.should_delete() {
            let ext = external_name(&obj).unwrap_or("(unknown)").to_owned();
            self.remove_finalizer(&api, &obj).await?;
            self.events
                .normal(
                    &obj,
                    reasons::ORPHANED,
                    format!("left external resource {ext} in place (orphaned)"),
                )
                .await;
            return Ok(Finish::Gone);
        }

        // Deleting: say so at once, before connect, observe and delete, which take a while or
        // may fail (a user watching `kubectl get` sees Ready=False/Deleting, not a stale True).
        if deleting {
            let mut desired = vec![conditions::deleting()];
            // A note of a healthy Synced is about a spec that no longer matters; a failure stays
            // until a step of the deletion succeeds. One write either way.
            if conditions::find(obj.conditions(), names::SYNCED)
                .is_some_and(|c| c.status == ConditionStatus::True)
            {
                desired.push(conditions::synced(""));
            }
            self.write_status(&api, &mut obj, &desired, &Map::new())
                .await?;
        } else {
            // References: fill the literals the spec names by reference before anything uses the
            // spec, so no cloud call is made with a half-filled request.
            self.resolve_references(&api, &mut obj).await?;
        }

        // Connect: resolve ProviderConfig and credentials. Failing here during deletion keeps
        // the finalizer: the resource still exists and must not leak.
        let client = match self.connector.connect(&obj).await {
            Ok(c) => c,
            Err(e) => {
                let err = e.context("cannot connect to the provider");
                return Err(self
                    .fail(&api, &mut obj, reasons::CANNOT_CONNECT, err, None)
                    .await);
            }
        };

        // Scope: a resource lives in one account and region. A configuration that now acts
        // elsewhere must neither create a second resource there nor, while deleting, let go of
        // this one (see `scope`).
        let scope = client.scope();
        if let Some(err) = moved(
            external_name(&obj),
            annotation(&obj, names::EXTERNAL_SCOPE),
            scope.as_deref(),
        ) {
            let ready = conditions::ready(&Readiness::Unavailable(
                "the configuration now points to another account or region".into(),
            ));
            return Err(self
                .fail(&api, &mut obj, reasons::SCOPE_CHANGED, err, Some(ready))
                .await);
        }

        // Observe. Without an external name the provider searches by the UID tag, which is how
        // a resource whose creation was never recorded is found again. A brand-new object is
        // searched too, although nothing can be found: that search may be the first use of the
        // credentials (unless connect used them), and when they fail it fails before the
        // finalizer goes on, so an object whose credentials never worked can still simply be
        // deleted.
        let mut ext = ExternalRef {
            name: external_name(&obj).map(str::to_owned),
            uid: uid(&obj),
        };
        let obs = self.observe(&api, &mut obj, &client, &ext).await?;

        // Ownership: a resource whose tag names another live object is never adopted, changed or
        // deleted for this one (while deleting, this object lets go of it); an untagged or
        // orphaned one is taken over below, right before its first change.
        let mut verdict = self.ownership(&api, &mut obj, &ext, &obs).await?;
        // Two importers of one unowned resource: only the one created first may change it (claim
        // it, or delete it); the other is refused at once. An object that passed once stays
        // first: no object created after it can be earlier (`ImportChecks`).
        if matches!(verdict, Verdict::Claim)
            && (deleting || policies.should_update())
            && !self.import_checks.passed(&ext.uid)
        {
            verdict = self.first_importer(&api, &mut obj, &ext).await?;
            if matches!(verdict, Verdict::Claim) {
                self.import_checks.pass(&ext.uid);
            }
        }
        if let Verdict::Refuse(err) = verdict {
            let found = obs
                .external_name
                .as_deref()
                .or(ext.name())
                .unwrap_or("(unnamed)");
            return self.refuse(&api, obj, found, err, deleting).await;
        }

        // Adopt: record a name observe found (an unrecorded create, or a corrected name) before
        // anything else, so it is never lost again.
        if obs.exists
            && let Some(found) = obs.external_name.as_deref()
            && ext.name.as_deref() != Some(found)
        {
            let before = ext.name.clone();
            self.record_external_name(&api, &mut obj, found, scope.as_deref())
                .await?;
            ext.name = Some(found.to_owned());
            let note = match before {
                None if obs.owner == ExternalOwner::NotReported => {
                    format!("adopted external resource {found}")
                }
                None => format!(
                    "adopted external resource {found} found by its {} tag",
                    UID_TAG
                ),
                Some(old) => format!("external name corrected from {old} to {found}"),
            };
            self.events.normal(&obj, reasons::ADOPTED, note).await;
        }

        // A name imported under one key gets the other (Crossplane's tools read
        // `crossplane.io/external-name`), and one recorded before scopes were gets its scope.
        if !deleting
            && obs.exists
            && let Some(name) = ext.name()
            && let Some(missing) =
                object_writes::missing_name_annotations(&obj, name, scope.as_deref())
        {
            let name = name.to_owned();
            self.record_annotations(&api, &mut obj, missing, &name)
                .await?;
        }

        // Deleting: delete while it exists; the finalizer goes only once observe says gone.
        // A creation time not forgotten yet (the late-initialization write below forgets it)
        // goes first: once listed, an unlisted resource is gone, not late.
        if deleting {
            if obs.exists {
                self.forget_creation_time(&api, &mut obj).await?;
            }
            return self.finish_deletion(&api, obj, &client, ext, obs).await;
        }

        // Finalizer: must be in place before anything can be created, or a deletion racing the
        // create would leak the resource.
        if let Some(patch) = finalizer::add_patch(obj.meta()) {
            obj = api
                .patch(&name, &PatchParams::default(), &Patch::Merge(patch))
                .await
                .map_err(|e| ReconcileError::kube("cannot add finalizer", e))?;
            self.versions.note(&key, &obj);
        }

        // Create: idempotent end to end (same key on every retry), and the name is saved in the
        // very next write.
        if !obs.exists {
            // Not listed, but created a moment ago (maybe by a process that died since): the
            // cloud lists it late. Creating now would make a second one under a new token.
            if let (Some(name), Some(left)) = (ext.name(), self.recently_created(&obj)) {
                return self.await_visibility(&api, obj, name, left, false).await;
            }
            // Named, not found, and the cloud assigns names: a create would make a different
            // resource and silently replace the name (see `missing`). A person decides.
            if let Some(name) = ext.name()
                && client.assigns_names()
            {
                let err = named_resource_missing(name);
                let ready = conditions::ready(&Readiness::Unavailable(
                    "external resource not found".into(),
                ));
                return Err(self
                    .fail(&api, &mut obj, reasons::CANNOT_OBSERVE, err, Some(ready))
                    .await);
            }
            return self
                .create(&api, obj, &client, &ext, &policies, scope.as_deref())
                .await;
        }

        // Take over: rewrite the ownership tag of an imported untagged or orphaned resource
        // right before its first change, so that no object of another cluster can take it from
        // this one once this one changes it. A resource that matches its spec is not written: an
        // import switched to full management changes nothing until the spec asks for a change
        // (and an observe-only import never does).
        if matches!(verdict, Verdict::Claim)
            && policies.should_update()
            && matches!(obs.up_to_date, UpToDate::No(_))
        {
            self.claim(&api, &mut obj, &client, &ext, &obs.owner)
                .await?;
            self.import_checks.forget(&ext.uid);
        }

        // From here on a failed step still writes what the observation describes (`Ready`,
        // `atProvider`) beside its `Synced=False`: never the status of an earlier observation.
        let observed = ObservedStatus::of(&obs);

        // Late-initialize: fill spec fields the user left unset with what the resource has,
        // never overwriting a value the user wrote. The same write forgets the creation time of
        // a resource the cloud lists now (see `await_visibility`).
        let fill = obs
            .late_init
            .as_ref()
            .filter(|_| policies.should_late_initialize());
        self.late_initialize(&api, &mut obj, fill, &observed)
            .await?;

        // Update: when the resource drifted from the spec, if the policies allow it.
        let mut in_transition = obs.in_transition;
        let mut details = obs.connection_details.clone();
        let mut note = String::new();
        self.metrics
            .observed(&self.gvk, &key, !matches!(obs.up_to_date, UpToDate::No(_)));
        if let UpToDate::No(diff) = &obs.up_to_date {
            if policies.should_update() {
                let produced = self
                    .update(&api, &mut obj, &client, &ext, diff, &observed)
                    .await?;
                details.merge(&produced);
                // Observe again soon so status shows the result of the update.
                in_transition = true;
            } else {
                note = format!(
                    "external resource differs from the spec ({diff}); spec.managementPolicies do not allow Update"
                );
            }
        }

        if let Some(provider_note) = obs.note.as_deref().filter(|n| !n.is_empty()) {
            note = if note.is_empty() {
                provider_note.to_owned()
            } else {
                join_notes(provider_note, &note)
            };
        }

        // Connection Secret: published when the details change.
        self.publish_details(&api, &mut obj, &details, &observed)
            .await?;

        // Status: conditions and observed fields, written only when they change.
        if let Some(c) = conflict.as_deref() {
            note = join_notes(&note, c);
        }
        if let Some(w) = poll_warning {
            note = join_notes(&note, &format!("{w}; polling every {}s", poll.as_secs()));
        }
        let desired = observed.conditions(conditions::synced(note));
        self.write_status(&api, &mut obj, &desired, &observed.fields)
            .await?;

        // Requeue: soon while the resource changes state, else at the poll interval.
        let ready = conditions::ready(&obs.readiness);
        let state = if ready.status == ConditionStatus::True {
            ObjectState::Ready
        } else {
            ObjectState::NotReady
        };
        let after = if in_transition {
            self.jitter(self.policy.transition_interval)
        } else {
            self.until_poll(&obj, poll)
        };
        Ok(Finish::Done(Action::requeue(after), state))
    }
}

fn annotation<'a, K: Resource>(obj: &'a K, key: &str) -> Option<&'a str> {
    obj.meta()
        .annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .map(String::as_str)
}

fn external_name<K: Resource>(obj: &K) -> Option<&str> {
    annotations::external_name(obj)
}

fn uid<K: Resource>(obj: &K) -> String {
    obj.meta().uid.clone().unwrap_or_default()
}

fn join_notes(a: &str, b: &str) -> String {
    if a.is_empty() {
        b.to_owned()
    } else if b.is_empty() {
        a.to_owned()
    } else {
        format!("{a}; {b}")
    }
}
