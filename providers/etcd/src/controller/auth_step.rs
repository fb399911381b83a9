//! The authentication step: what etcd says about authentication and the step `spec.auth` asks
//! for (enable, change root's password, disable), with its event ([`crate::auth`]).

use ferroplane_apis::etcd::EtcdCluster;
use ferroplane_runtime::ReconcileError;
use tracing::info;

use super::client::EtcdClient;
use super::snapshot::Snapshot;
use crate::auth::{self as etcd_auth, AuthSecrets, AuthStep};
use crate::error::{Error, to_reconcile};
use crate::membership::{Membership, MembershipError};
use crate::reasons;

impl<M: Membership> EtcdClient<M> {
    /// What etcd says about authentication, when it matters (`spec.auth` is or was set) and
    /// etcd answers; `None` otherwise. Refusing every password is an error.
    pub(super) async fn auth_status(
        &self,
        snap: &Snapshot,
    ) -> Result<Option<crate::membership::AuthStatus>, ReconcileError> {
        if !self.passwords.involved() || snap.membership.is_err() {
            return Ok(None);
        }
        match self.membership.auth_status().await {
            Ok(status) => Ok(Some(status)),
            Err(e) if e.is_unreachable() => Ok(None),
            Err(e) => Err(to_reconcile(e.into())),
        }
    }

    /// Takes the authentication step `spec.auth` asks for, and records the password in
    /// effect.
    pub(super) async fn reconcile_auth(
        &self,
        mr: &EtcdCluster,
        snap: &Snapshot,
    ) -> Result<(), ReconcileError> {
        let Some(status) = self.auth_status(snap).await? else {
            return Ok(());
        };
        let step = etcd_auth::plan_with_owner(&self.passwords, status);
        let failed = |what: &str, e: MembershipError| {
            let err = Error::from(e);
            ReconcileError::retryable(err.reason(), format!("{what}: {err}"))
        };
        let secrets = AuthSecrets::new(&self.kube, &self.children, &self.names);
        let record =
            |password| async move { secrets.record(mr, password).await.map_err(to_reconcile) };
        let (reason, message) = match &step {
            AuthStep::Steady => return Ok(()),
            AuthStep::Record(password) => return record(password).await,
            AuthStep::Enable(password) => {
                self.membership
                    .enable_auth(password)
                    .await
                    .map_err(|e| failed("enabling authentication", e))?;
                record(password).await?;
                (
                    reasons::AUTH_ENABLED,
                    "enabled etcd authentication with user root (password from the auth Secret)",
                )
            }
            AuthStep::ChangePassword(password) => {
                self.membership
                    .change_root_password(password)
                    .await
                    .map_err(|e| failed("changing root's password", e))?;
                record(password).await?;
                (
                    reasons::ROOT_PASSWORD_CHANGED,
                    "changed root's password to the auth Secret's",
                )
            }
            AuthStep::Disable => {
                self.membership
                    .disable_auth()
                    .await
                    .map_err(|e| failed("disabling authentication", e))?;
                (
                    reasons::AUTH_DISABLED,
                    "disabled etcd authentication: spec.auth was removed (user root keeps its password)",
                )
            }
        };
        info!(cluster = %self.names.name, "{message}");
        self.events.normal(mr, reason, message.to_owned()).await;
        Ok(())
    }
}
