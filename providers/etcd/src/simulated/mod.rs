//! A simulation of etcd's membership API for environments whose pods run no etcd (the
//! sandbox): [`SimulatedFactory`] hands the controller a [`SimulatedMembership`] per cluster
//! that, before every membership call, reads what the cluster shows through the Kubernetes API
//! ([`world`]: ready StatefulSet ordinals, their data claims, their configuration files, the
//! image) and applies etcd's rules to it ([`cluster`]). Every change is journaled
//! ([`Event`]), so tests assert on what happened rather than on samples.

mod auth;
mod cluster;
mod world;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

pub use auth::{AuthStore, DEFAULT_TOKEN_TTL};
pub use cluster::{Event, PERMANENTLY_REMOVED, SimulatedCluster};
pub use world::{DataDir, World, version_of_image};

use crate::controller::MembershipFactory;
use crate::membership;
use crate::membership::auth::{self as etcd_auth, ROOT};
use crate::membership::session::RootSession;
use crate::membership::{
    AuthStatus, Member, MemberStatus, Membership, MembershipError, Password, PromoteOutcome,
    RootCredentials,
};
use crate::names::ClusterNames;

type Clusters = Arc<Mutex<HashMap<(String, String), Arc<Mutex<SimulatedCluster>>>>>;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Simulated clusters, one per EtcdCluster (namespace and name), reading the pods through
/// `kube`.
#[derive(Clone)]
pub struct SimulatedFactory {
    kube: kube::Client,
    clusters: Clusters,
}

impl SimulatedFactory {
    pub fn new(kube: kube::Client) -> Self {
        Self {
            kube,
            clusters: Arc::default(),
        }
    }

    fn cluster(&self, names: &ClusterNames) -> Arc<Mutex<SimulatedCluster>> {
        lock(&self.clusters)
            .entry((names.namespace.clone(), names.name.clone()))
            .or_insert_with(|| Arc::new(Mutex::new(SimulatedCluster::new(names.clone()))))
            .clone()
    }

    /// What happened so far in the cluster of `names` (empty for a cluster never asked about).
    pub fn journal(&self, names: &ClusterNames) -> Vec<Event> {
        lock(&self.cluster(names)).journal().to_vec()
    }

    /// Whether the cluster of `names` requires authentication.
    pub fn auth_enabled(&self, names: &ClusterNames) -> bool {
        lock(&self.cluster(names)).auth.enabled()
    }

    /// Ends every token of the cluster of `names`, as when their TTL passes.
    pub fn expire_tokens(&self, names: &ClusterNames) {
        lock(&self.cluster(names)).auth.expire_tokens();
    }

    /// Authenticates as `user` on the cluster of `names`, as any etcd client would.
    pub fn authenticate(
        &self,
        names: &ClusterNames,
        user: &str,
        password: &str,
    ) -> Result<String, MembershipError> {
        lock(&self.cluster(names))
            .auth
            .authenticate(user, password, Instant::now())
    }
}

impl MembershipFactory for SimulatedFactory {
    type Client = SimulatedMembership;
    /// The simulation has no TLS to speak: the client certificate is not used.
    fn for_cluster(
        &self,
        names: &ClusterNames,
        _tls: Option<&crate::tls::ClientTls>,
    ) -> Result<SimulatedMembership, MembershipError> {
        Ok(SimulatedMembership {
            kube: self.kube.clone(),
            names: names.clone(),
            cluster: self.cluster(names),
            session: RootSession::default(),
        })
    }
}

/// The membership API of one simulated cluster.
pub struct SimulatedMembership {
    kube: kube::Client,
    names: ClusterNames,
    cluster: Arc<Mutex<SimulatedCluster>>,
    session: RootSession,
}

impl SimulatedMembership {
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
impl crate::backup::SnapshotSource for SimulatedMembership {
    async fn snapshot(
        &self,
    ) -> Result<crate::backup::Taken, crate::membership::snapshot::SnapshotError> {
        let endpoint = self.names.client_endpoint();
        // A snapshot needs the root role while authentication is on.
        self.authorized(|c, token| c.auth.require_admin("snapshot", token, Instant::now()))
            .await
            .map_err(|e| match e {
                MembershipError::Api { code, message, .. } => {
                    crate::membership::snapshot::SnapshotError::Refused {
                        endpoint: endpoint.clone(),
                        code: i64::from(code),
                        message,
                    }
                }
                other => crate::membership::snapshot::SnapshotError::NoMember {
                    detail: other.to_string(),
                },
            })?;
        let members = self.list().await.map_err(|e| {
            crate::membership::snapshot::SnapshotError::NoMember {
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
            return Err(crate::membership::snapshot::SnapshotError::NoMember {
                detail: format!("no member of {endpoint} is running"),
            });
        };
        let db = format!(
            "ferroplane simulated etcd {}/{} raft index {index}\n",
            self.names.namespace, self.names.name
        );
        let bytes = crate::membership::snapshot::with_trailer(db.as_bytes());
        Ok(crate::backup::Taken {
            sha256: hex::encode(<sha2::Sha256 as sha2::Digest>::digest(db.as_bytes())),
            bytes,
            revision: i64::try_from(index).ok(),
        })
    }
}
