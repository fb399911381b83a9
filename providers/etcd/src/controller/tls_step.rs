//! The TLS step: drift of the TLS Secrets, making and renewing them, and the next CA rotation
//! step once every member caught up with the last one ([`crate::tls`]).

use ferroplane_apis::etcd::EtcdCluster;
use ferroplane_runtime::ReconcileError;
use tracing::{info, warn};

use super::client::EtcdClient;
use super::snapshot::Snapshot;
use crate::error::to_reconcile;
use crate::membership::Membership;
use crate::planner::{self, Step};
use crate::reasons::{
    CA_ROTATED, CA_ROTATING, CA_SECRET_RECOVERED, CA_SECRET_REPLACED, CERTIFICATE_EXPIRES_SOON,
    USER_CA_ROLLED, USER_CA_ROLLING,
};
use crate::tls::recovery::Recovered;
use crate::tls::rotation::{Next, running_generation};
use crate::tls::user_trust::Step as UserTrustStep;
use crate::tls::{self, TlsSecrets};

/// Whether every member picked up the current trust generation: the StatefulSet's template
/// carries it and its rollout is complete (every replica updated and ready), etcd reports
/// every member healthy, and no membership change is under way. Each CA rotation phase waits
/// for this ([`tls::rotation::Progress::rolled_out`]).
pub(super) fn members_caught_up(snap: &Snapshot) -> bool {
    let (Some(sts), Some(template)) = (
        &snap.statefulset,
        running_generation(snap.statefulset.as_ref()),
    ) else {
        return false;
    };
    let replicas = sts.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
    let rolled_out = sts.status.as_ref().is_some_and(|status| {
        status.observed_generation >= sts.metadata.generation
            && status.update_revision.is_some()
            && status.current_revision == status.update_revision
            && status.updated_replicas == Some(replicas)
            && status.ready_replicas == Some(replicas)
    });
    let healthy = snap.membership.as_ref().is_ok_and(|observed| {
        observed.members.len() == usize::try_from(replicas).unwrap_or(0)
            && observed
                .members
                .iter()
                .all(|m| m.health == planner::Health::Healthy)
    });
    template == snap.trust.0 && rolled_out && healthy && snap.step == Step::Steady
}

impl<M: Membership> EtcdClient<M> {
    pub(super) fn tls_secrets<'a>(&'a self, secrets: &'a tls::SecretNames) -> TlsSecrets<'a> {
        TlsSecrets::new(&self.kube, &self.children, &self.names, secrets)
            .with_policy(self.ca_policy)
    }

    /// Why the TLS Secrets must be written (a generated certificate missing or due for
    /// renewal, a CA rotation step due); an error for a user Secret that is missing or
    /// incomplete. A user certificate near its end is reported by a Warning event
    /// ([`tls::expiry`]).
    pub(super) async fn tls_drift(
        &self,
        mr: &EtcdCluster,
        snap: &Snapshot,
    ) -> Result<Vec<String>, ReconcileError> {
        let Some(secrets) = &self.tls else {
            return Ok(Vec::new());
        };
        let now = jiff::Timestamp::now();
        let tls = self.tls_secrets(secrets);
        let drift = tls
            .check(mr, now, members_caught_up(snap))
            .await
            .map_err(to_reconcile)?;
        if let Some(soon) = tls.user_expiry(now).await.map_err(to_reconcile)? {
            // Repeated on every poll while it lasts; the recorder counts repeats.
            self.events
                .warning(mr, CERTIFICATE_EXPIRES_SOON, soon.describe(now))
                .await;
        }
        Ok(drift)
    }

    /// Makes or renews the generated TLS Secrets (checks the user's), before the pods that
    /// mount them are applied, and takes the next CA rotation step when one is due (`snap`
    /// says whether every member caught up with the last one) or rebuilds a missing CA Secret
    /// ([`tls::recovery`]); says so in an event.
    pub(super) async fn ensure_tls(
        &self,
        mr: &EtcdCluster,
        snap: Option<&Snapshot>,
    ) -> Result<bool, ReconcileError> {
        let Some(secrets) = &self.tls else {
            return Ok(false);
        };
        let caught_up = snap.is_some_and(members_caught_up);
        let running = running_generation(snap.and_then(|s| s.statefulset.as_ref()));
        let ensured = self
            .tls_secrets(secrets)
            .ensure(mr, jiff::Timestamp::now(), caught_up, running)
            .await
            .map_err(to_reconcile)?;
        if let Some(recovered) = &ensured.recovered {
            let message = recovered.describe(&self.names.tls_secret("ca"), &secrets.client);
            match (recovered, message) {
                (Recovered::Cold { .. }, Some(message)) => {
                    warn!(cluster = %self.names.name, "CA Secret replaced without overlap");
                    self.events.warning(mr, CA_SECRET_REPLACED, message).await;
                }
                (_, Some(message)) => {
                    info!(cluster = %self.names.name, "CA Secret rebuilt beside the surviving bundle");
                    self.events.normal(mr, CA_SECRET_RECOVERED, message).await;
                }
                (_, None) => {}
            }
        }
        if let Some(step) = ensured.user_trust {
            let secrets = format!("Secrets {} and {}", secrets.peer, secrets.server);
            if let Some(message) = step.describe(&secrets) {
                info!(cluster = %self.names.name, ?step, "trust of the user's CA");
                let reason = if step == UserTrustStep::Settle {
                    USER_CA_ROLLED
                } else {
                    USER_CA_ROLLING
                };
                self.events.normal(mr, reason, message).await;
                return Ok(true);
            }
        }
        let Some(step) = ensured.rotation else {
            return Ok(ensured.recovered.is_some_and(|r| r != Recovered::First));
        };
        info!(cluster = %self.names.name, step = ?step.next, "CA rotation");
        let reason = if step.next == Next::Finish {
            CA_ROTATED
        } else {
            CA_ROTATING
        };
        self.events.normal(mr, reason, step.message).await;
        Ok(true)
    }
}
