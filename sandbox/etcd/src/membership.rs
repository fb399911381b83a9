//! [`SimulatedMembership`]: etcd's membership API of one simulated cluster. Before every call
//! it reads what the cluster shows through the Kubernetes API ([`crate::world`]) and brings
//! the members in line with it ([`crate::cluster`]); authentication goes through the same
//! client session as the production client's.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use provider_etcd::membership::auth::{self as etcd_auth, ROOT};
use provider_etcd::membership::session::RootSession;
use provider_etcd::membership::{
    self, AuthStatus, Member, MemberStatus, Membership, MembershipError, Password, PromoteOutcome,
    RootCredentials,
};
use provider_etcd::names::ClusterNames;

use crate::auth::AuthStore;
use crate::cluster::SimulatedCluster;
use crate::world;

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The membership API of one simulated cluster.
pub struct SimulatedMembership {
    kube: kube::Client,
    names: ClusterNames,
    cluster: Arc<Mutex<SimulatedCluster>>,
    session: RootSession,
}

impl SimulatedMembership {
    pub(crate) fn new(
        kube: kube::Client,
        names: ClusterNames,
        cluster: Arc<Mutex<SimulatedCluster>>,
    ) -> Self {
        Self {
            kube,
            names,
            cluster,
            session: RootSession::default(),
        }
    }

    /// Reads the pods and brings the members in line with them; then `call` on the cluster.
    async fn synced<T>(
        &self,
        call: impl FnOnce(&mut SimulatedCluster) -> Result<T, MembershipError>,
    ) -> Result<T, MembershipError> {
        let world =
            world::observe(&self.kube, &self.names)
                .await
                .map_err(|e| MembershipError::Down {
                    endpoint: self.names.client_endpoint(),
                    reason: format!("the simulation cannot read the cluster's pods: {e}"),
                })?;
        let mut cluster = lock(&self.cluster);
        cluster.sync(&world);
        call(&mut cluster)
    }

    /// A token from the cluster's auth store for root with `password`.
    async fn authenticate(&self, password: Password) -> Result<String, MembershipError> {
        lock(&self.cluster)
            .auth
            .authenticate(ROOT, password.expose(), Instant::now())
    }

    /// `call` with root's token, once more with a new one when the cluster refuses the token
    /// (see [`RootSession::authorized`]); the pods are read before each attempt.
    async fn authorized<T>(
        &self,
        call: impl Fn(&mut SimulatedCluster, Option<&str>) -> Result<T, MembershipError>,
    ) -> Result<T, MembershipError> {
        let call = &call;
        self.session
            .authorized(
                |password| self.authenticate(password),
                |token| async move {
                    self.synced(|c| call(c, token.as_ref().map(Password::expose)))
                        .await
                },
            )
            .await
    }

    /// `call` on the auth store with the token, retried once like [`Self::authorized`].
    async fn on_auth(
        &self,
        call: impl Fn(&mut AuthStore, Option<&str>, Instant) -> Result<(), MembershipError>,
    ) -> Result<(), MembershipError> {
        self.authorized(|c, token| call(&mut c.auth, token, Instant::now()))
            .await
    }
}

impl Membership for SimulatedMembership {
    async fn list(&self) -> Result<Vec<Member>, MembershipError> {
        self.synced(|c| c.list()).await
    }

    async fn add_learner(&self, peer_url: &str) -> Result<Member, MembershipError> {
        let added = self
            .authorized(|c, token| {
                c.auth.require_admin("member add", token, Instant::now())?;
                c.add_learner(peer_url, jiff::Timestamp::now().as_second())
            })
            .await;
        membership::settle_add(added, peer_url, || self.list()).await
    }

    async fn promote(&self, id: u64) -> Result<PromoteOutcome, MembershipError> {
        self.authorized(|c, token| {
            c.auth
                .require_admin("member promote", token, Instant::now())?;
            c.promote(id)
        })
        .await
    }

    async fn remove(&self, id: u64) -> Result<(), MembershipError> {
        self.authorized(|c, token| {
            c.auth
                .require_admin("member remove", token, Instant::now())?;
            c.remove(id)
        })
        .await
    }

    /// Answers from the state the last call synced (a status follows a list).
    async fn status(&self, client_url: &str) -> Result<MemberStatus, MembershipError> {
        lock(&self.cluster).status(client_url)
    }

    /// A running member answers (the simulation keeps no data to rewrite); a stopped one is
    /// unreachable, as for a status.
    async fn defragment(&self, client_url: &str) -> Result<(), MembershipError> {
        // Not through `authorized`: a defragmentation asks one member, not the pods' state.
        self.session
            .authorized(
                |password| self.authenticate(password),
                |token| async move {
                    let mut cluster = lock(&self.cluster);
                    cluster.auth.require_admin(
                        "defragment",
                        token.as_ref().map(Password::expose),
                        Instant::now(),
                    )?;
                    cluster.status(client_url).map(|_| ())
                },
            )
            .await
    }

    fn set_credentials(&mut self, credentials: RootCredentials) {
        self.session.set_credentials(credentials);
    }

    async fn auth_status(&self) -> Result<AuthStatus, MembershipError> {
        if self.session.credentials().is_empty() {
            return if lock(&self.cluster).auth.enabled() {
                Err(MembershipError::AuthFailed { tried: 0 })
            } else {
                Ok(AuthStatus::Disabled)
            };
        }
        self.session
            .token(|password| self.authenticate(password))
            .await?;
        Ok(self.session.status())
    }

    async fn enable_auth(&self, password: &Password) -> Result<(), MembershipError> {
        let password = password.expose();
        self.on_auth(|auth, token, now| {
            match auth.user_add(token, ROOT, password, now) {
                Err(e) if etcd_auth::already_exists(&e, etcd_auth::USER_ALREADY_EXISTS) => {
                    auth.change_password(token, ROOT, password, now)
                }
                other => other,
            }?;
            match auth.role_add(token, ROOT, now) {
                Err(e) if etcd_auth::already_exists(&e, etcd_auth::ROLE_ALREADY_EXISTS) => Ok(()),
                other => other,
            }?;
            auth.grant(token, ROOT, ROOT, now)?;
            auth.enable()
        })
        .await?;
        self.session.forget_token();
        Ok(())
    }

    async fn disable_auth(&self) -> Result<(), MembershipError> {
        self.on_auth(|auth, token, now| auth.disable(token, now))
            .await?;
        self.session.disabled();
        Ok(())
    }

    async fn change_root_password(&self, password: &Password) -> Result<(), MembershipError> {
        self.on_auth(|auth, token, now| auth.change_password(token, ROOT, password.expose(), now))
            .await?;
        self.session.forget_token();
        Ok(())
    }
}

/// The simulation keeps no data: its snapshot is a small file in etcd's snapshot layout (a
/// database, here a line naming the cluster and its raft index, then its SHA-256), enough for
/// EtcdBackup's lifecycle in the sandbox, not for a restore.
impl provider_etcd::backup::SnapshotSource for SimulatedMembership {
    async fn snapshot(
        &self,
    ) -> Result<provider_etcd::backup::Taken, provider_etcd::membership::snapshot::SnapshotError>
    {
        let endpoint = self.names.client_endpoint();
        // A snapshot needs the root role while authentication is on.
        self.authorized(|c, token| c.auth.require_admin("snapshot", token, Instant::now()))
            .await
            .map_err(|e| match e {
                MembershipError::Api { code, message, .. } => {
                    provider_etcd::membership::snapshot::SnapshotError::Refused {
                        endpoint: endpoint.clone(),
                        code: i64::from(code),
                        message,
                    }
                }
                other => provider_etcd::membership::snapshot::SnapshotError::NoMember {
                    detail: other.to_string(),
                },
            })?;
        let members = self.list().await.map_err(|e| {
            provider_etcd::membership::snapshot::SnapshotError::NoMember {
                detail: e.to_string(),
            }
        })?;
        let mut index = None;
        for member in members.iter().filter(|m| m.started()) {
            let Some(ordinal) = self.names.ordinal_of(&member.name) else {
                continue;
            };
            if let Ok(status) = self.status(&self.names.member_client_url(ordinal)).await {
                index = Some(status.raft_index);
                break;
            }
        }
        let Some(index) = index else {
            return Err(
                provider_etcd::membership::snapshot::SnapshotError::NoMember {
                    detail: format!("no member of {endpoint} is running"),
                },
            );
        };
        let db = format!(
            "ferroplane simulated etcd {}/{} raft index {index}\n",
            self.names.namespace, self.names.name
        );
        let bytes = provider_etcd::membership::snapshot::with_trailer(db.as_bytes());
        Ok(provider_etcd::backup::Taken {
            sha256: hex::encode(<sha2::Sha256 as sha2::Digest>::digest(db.as_bytes())),
            snapshot: provider_etcd::backup::Spooled::from_bytes(&bytes)?,
            revision: i64::try_from(index).ok(),
        })
    }
}
