//! The EtcdCluster controller on ferroplane-runtime. The "external resource" is the set of
//! children (bootstrap ConfigMap, Services, StatefulSet, PodDisruptionBudget):
//!
//! - `observe` validates the spec, reads the children and etcd's membership, plans the next
//!   membership step and reports drift (a child differing from its rendering, or a step to take)
//!   and the status;
//! - `create` applies the children of a new cluster (all members bootstrap together);
//! - `update` carries out one membership step, then applies the children (server-side apply,
//!   forced, so hand edits are reverted);
//! - `delete` removes the children that are this cluster's (member volumes are kept:
//!   `whenDeleted: Retain`).
//!
//! With deletion policy Orphan the children carry no owner reference, so the framework's orphan
//! path (drop the finalizer, touch nothing) leaves them running.

mod auth_step;
mod child_objects;
mod client;
mod defrag_step;
mod quorum_step;
mod recovery_step;
mod restore_step;
mod snapshot;
mod tls_step;
mod volumes;

// Where callers have always found them; each is defined in its own ground-floor module.
pub use self::client::EtcdClient;
pub use crate::membership::{GatewayFactory, HttpBuilder, MembershipFactory};
pub use crate::names::{FIELD_MANAGER, default_tools_image};
pub use crate::restore::RestoreSetup;

use std::sync::Arc;

use ferroplane_apis::etcd::EtcdCluster;
use ferroplane_runtime::children::{self, Children, owned};
use ferroplane_runtime::events::Events;
use ferroplane_runtime::{
    ConnectionDetails, Connector, Creation, Deletion, ExternalClient, ExternalRef, IdempotencyKey,
    Observation, ReconcileError, Update,
};
use kube::{Client, ResourceExt};
use tracing::info;

use self::child_objects::all_children;
use self::recovery_step::Stage;
use self::snapshot::desired_size;
use crate::auth::{self as etcd_auth, AuthSecrets, Passwords};
use crate::error::{Error, to_reconcile};
use crate::membership::Membership;
use crate::planner::Step;
use crate::reasons;
use crate::render;
use crate::restore::Progress;
use crate::scaling;
use crate::status::{self, Membership as MembershipState};
use crate::tls::certs::CaPolicy;
use crate::tls::rotation::Phase;
use crate::tls::{self, TlsSecrets};

/// The connector: in-cluster kinds need no credentials, only the Kubernetes client.
pub struct EtcdConnector<F> {
    client: Client,
    factory: Arc<F>,
    events: Events,
    ca_policy: CaPolicy,
    restore: RestoreSetup,
}

impl<F: MembershipFactory> EtcdConnector<F> {
    pub fn new(client: Client, factory: F, events: Events) -> Self {
        Self {
            client,
            factory: Arc::new(factory),
            events,
            ca_policy: CaPolicy::default(),
            restore: RestoreSetup::default(),
        }
    }

    /// The same, making and rotating generated CAs by `policy`.
    pub fn with_ca_policy(self, policy: CaPolicy) -> Self {
        Self {
            ca_policy: policy,
            ..self
        }
    }

    /// Restores `spec.restore` with `setup`.
    pub fn with_restore(mut self, setup: RestoreSetup) -> Self {
        self.restore = setup;
        self
    }
}

impl<F: MembershipFactory> Connector<EtcdCluster> for EtcdConnector<F> {
    type Client = EtcdClient<F::Client>;

    async fn connect(&self, mr: &EtcdCluster) -> Result<Self::Client, ReconcileError> {
        let names = render::cluster_names(mr).map_err(to_reconcile)?;
        let children = Children::with_field_manager(self.client.clone(), FIELD_MANAGER);
        let tls = tls::secret_names(mr, &names);
        // Only read here: the Secrets are written by create and update.
        let client_tls = match &tls {
            Some(secrets) => TlsSecrets::new(&self.client, &children, &names, secrets)
                .client()
                .await
                .map_err(to_reconcile)?,
            None => None,
        };
        let mut membership = self
            .factory
            .for_cluster(&names, client_tls.as_ref())
            .map_err(|e| to_reconcile(e.into()))?;
        let passwords = match AuthSecrets::new(&self.client, &children, &names)
            .passwords(mr)
            .await
        {
            Ok(passwords) => passwords,
            // Deletion only removes children: a missing auth Secret must not stand in its way.
            Err(_) if mr.metadata.deletion_timestamp.is_some() => Passwords::default(),
            Err(e) => return Err(to_reconcile(e)),
        };
        membership.set_credentials(passwords.credentials());
        Ok(EtcdClient {
            kube: self.client.clone(),
            children,
            membership,
            events: self.events.clone(),
            names,
            tls,
            ca_policy: self.ca_policy,
            restore: self.restore.clone(),
            passwords,
        })
    }
}

impl<M: Membership> ExternalClient<EtcdCluster> for EtcdClient<M> {
    async fn observe(
        &self,
        mr: &EtcdCluster,
        _ext: &ExternalRef,
    ) -> Result<Observation, ReconcileError> {
        if mr.metadata.deletion_timestamp.is_some() {
            return self.observe_deletion(mr).await;
        }
        self.refuse_foreign(mr).await?;
        let snap = self.snapshot(mr).await?;
        let now = jiff::Timestamp::now();
        let quorum = self.check_quorum(mr, &snap, now).await?;
        let stage = self.recovery_stage(mr, &snap, &quorum).await?;
        let since = quorum.since();
        let restore = match &stage {
            Stage::Clear { .. } => Progress::Done(None),
            _ => {
                let carried_out = quorum.carried_out();
                self.restorer(recovery_step::marks(
                    since.as_deref().filter(|_| carried_out.is_some()),
                    &snap,
                ))
                .look(
                    &recovery_step::effective(mr, carried_out),
                    snap.statefulset.is_some(),
                    now,
                )
                .await?
            }
        };
        let mut desired = self.desired(mr, &snap, None)?;
        if restore.holds_members() || matches!(stage, Stage::Clear { .. }) {
            desired.retain(|c| c.kind() != "StatefulSet");
        }
        let uid = mr.uid().unwrap_or_default();
        let mut existing = 0;
        let mut diffs = Vec::new();
        for child in &desired {
            match self
                .children
                .get(child)
                .await
                .map_err(|e| to_reconcile(Error::kube(format!("reading {}", child.key()), e)))?
            {
                None => diffs.push(format!("{} is missing", child.key())),
                Some(live) => {
                    existing += 1;
                    diffs.extend(children::difference(child, &live, &uid, owned(mr)));
                }
            }
        }
        if existing == 0 {
            return Ok(Observation::missing());
        }
        diffs.extend(self.tls_drift(mr, &snap).await?);
        if let Step::Flapping { why, .. } = &snap.step {
            // Repeated on every poll while it lasts; the recorder counts repeats of one event.
            self.events
                .warning(mr, reasons::MEMBER_FLAPPING, why.clone())
                .await;
        }
        if snap.step.is_change() {
            diffs.push(format!(
                "membership: {}",
                status::describe(&snap.step, &self.names)
            ));
        }
        if let Some((name, why)) = self.defrag_due(mr, &snap) {
            diffs.push(format!("member {name} is due a defragmentation: {why}"));
        }
        if let Progress::Act { what, .. } = &restore {
            diffs.push(format!("restore: {what}"));
        }
        if let Stage::Clear { what } = &stage {
            diffs.push(format!("quorum-loss recovery: {what}"));
        }
        let size = desired_size(mr)?;
        let membership = match &snap.membership {
            Ok(observed) => MembershipState::Known {
                observed,
                step: &snap.step,
            },
            Err(why) => MembershipState::Unknown { why: why.clone() },
        };
        let mut report = status::report(&self.names, size, snap.statefulset.as_ref(), &membership);
        report.status.restore = restore.status().cloned();
        self.report_quorum(mr, &snap, &quorum, &stage, &restore, &mut report)
            .await;
        if let Progress::Wait { why, .. } = &restore {
            report.note = Some(match report.note.take() {
                Some(note) if !note.is_empty() => format!("{why}; {note}"),
                _ => why.clone(),
            });
            report.in_transition = true;
        }
        if let Some(auth) = self.auth_status(&snap).await? {
            report.status.auth = Some(etcd_auth::state(auth));
            if let Some(why) = etcd_auth::plan_with_owner(&self.passwords, auth).describe() {
                diffs.push(format!("auth: {why}"));
            }
        }
        let endpoints =
            ConnectionDetails::new().with("endpoints", report.status.client_endpoint.clone());
        let mut obs = Observation::found(self.names.name.clone())
            .with_readiness(report.readiness)
            .with_status(&report.status)?
            .with_connection_details(endpoints);
        for condition in report.conditions {
            obs = obs.with_condition(condition);
        }
        let notes: Vec<String> = report
            .note
            .into_iter()
            .chain(snap.trust.1.describe().map(str::to_owned))
            .collect();
        if !notes.is_empty() {
            obs = obs.with_note(notes.join("; "));
        }
        if report.in_transition
            || snap.step.is_change()
            || matches!(snap.step, Step::Wait(_))
            || snap.trust.1 != Phase::Steady
        {
            obs = obs.in_transition();
        }
        if !diffs.is_empty() {
            obs = obs.with_diff(diffs.join("; "));
        }
        Ok(obs)
    }

    async fn create(
        &self,
        mr: &EtcdCluster,
        _key: &IdempotencyKey,
    ) -> Result<Creation, ReconcileError> {
        self.refuse_foreign(mr).await?;
        let snap = self.snapshot(mr).await?;
        let restore = self.restore_progress(mr, &snap, None).await?;
        let mut desired = self.desired(mr, &snap, None)?;
        if restore.holds_members() {
            desired.retain(|c| c.kind() != "StatefulSet");
        }
        self.ensure_tls(mr, None).await?;
        self.apply_all(&desired).await?;
        info!(cluster = %self.names.name, size = mr.spec.size, restore = restore.holds_members(), "created etcd cluster");
        Ok(Creation::new(self.names.name.clone()))
    }

    async fn update(&self, mr: &EtcdCluster, _ext: &ExternalRef) -> Result<Update, ReconcileError> {
        self.refuse_foreign(mr).await?;
        let snap = self.snapshot(mr).await?;
        // Only a recovery the status records is carried out (`observe` decides and records it).
        let recovering = mr
            .status
            .as_ref()
            .and_then(|s| s.quorum_loss.as_ref())
            .is_some_and(|l| l.recovery.is_some());
        let quorum = if recovering {
            Some(self.check_quorum(mr, &snap, jiff::Timestamp::now()).await?)
        } else {
            None
        };
        let since = quorum.as_ref().and_then(|q| q.since());
        if let Some(quorum) = &quorum
            && let Stage::Clear { .. } = self.recovery_stage(mr, &snap, quorum).await?
        {
            self.clear_lost_cluster(mr, &snap, since.as_deref().unwrap_or_default())
                .await?;
            return Ok(Update::in_progress());
        }
        let carried_out = quorum.as_ref().and_then(|q| q.carried_out());
        let restore = self
            .restore_progress(
                &recovery_step::effective(mr, carried_out),
                &snap,
                recovery_step::marks(since.as_deref().filter(|_| recovering), &snap),
            )
            .await?;
        if restore.holds_members() {
            let mut desired = self.desired(mr, &snap, None)?;
            desired.retain(|c| c.kind() != "StatefulSet");
            self.ensure_tls(mr, None).await?;
            self.apply_all(&desired).await?;
            return Ok(Update::in_progress());
        }
        let replicas = snap.replicas.unwrap_or(0);
        let applied = if snap.membership.is_ok() && snap.step.is_change() {
            scaling::apply(&snap.step, &self.membership, &self.names, replicas)
                .await
                .map_err(|e| {
                    let transient = e.is_transient();
                    let err = Error::from(e);
                    if transient {
                        ReconcileError::retryable(err.reason(), err.to_string())
                    } else {
                        to_reconcile(err)
                    }
                })?
        } else {
            scaling::Applied::default()
        };
        if let Some((reason, message)) = &applied.event {
            self.events.normal(mr, reason, message.clone()).await;
        }
        // Before the configuration files change: a learner's file names its peers, and the old
        // pod, were it still there, could join with it on the volume about to be deleted and
        // then lose it (started, its file sealed, it could not join again).
        if let Some(ordinal) = applied.restart_empty {
            self.restart_empty(mr, ordinal).await?;
        }
        if let Some((ordinal, uid)) = &applied.delete_pod {
            self.delete_pod_on_deleted_claim(*ordinal, uid).await?;
        }
        // After a membership change the bootstrap configuration must list the new membership.
        let snap = if applied.changed_membership {
            self.snapshot(mr).await?
        } else {
            snap
        };
        let mut scale_to = applied.scale_to;
        if let Some(to) = scale_to.filter(|to| *to > replicas)
            && let Some(volume) = self.volume_being_deleted(mr, replicas..to).await?
        {
            info!(cluster = %self.names.name, %volume, "scale-up waits for a removed member's volume to go");
            scale_to = None;
        }
        let desired = self.desired(mr, &snap, scale_to)?;
        // The pods of a new trust generation roll in the next reconcile, once the Secrets of
        // this one are written.
        let rotated = self.ensure_tls(mr, Some(&snap)).await?;
        self.apply_all(&desired).await?;
        self.reconcile_auth(mr, &snap).await?;
        if !applied.changed_membership && scale_to.is_none() {
            self.defragment(mr, &snap).await?;
        }
        self.delete_volumes(mr, &applied.delete_volumes).await?;
        Ok(
            if applied.changed_membership
                || applied.scale_to.is_some()
                || applied.restart_empty.is_some()
                || applied.delete_pod.is_some()
                || rotated
            {
                Update::in_progress()
            } else {
                Update::done()
            },
        )
    }

    async fn delete(
        &self,
        mr: &EtcdCluster,
        _ext: &ExternalRef,
    ) -> Result<Deletion, ReconcileError> {
        let children = all_children(mr)?;
        let uid = mr.uid().unwrap_or_default();
        // Only this cluster's children go with it; an object that merely has a child's name is
        // left alone.
        Ok(self.children.delete_owned(&children, &uid).await?)
    }
}
