//! etcd's membership API as the controller uses it: the [`Membership`] trait and what its calls
//! return.

use std::future::Future;

use super::auth::{AuthStatus, Password, RootCredentials};
use super::error::MembershipError;
use super::grpc;

/// One member as etcd's `MemberList` reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    pub id: u64,
    /// Empty until the member has started and published its name.
    pub name: String,
    pub peer_urls: Vec<String>,
    pub client_urls: Vec<String>,
    pub is_learner: bool,
}

impl Member {
    /// Whether the member's process has joined: etcd learns a member's name when it starts.
    pub fn started(&self) -> bool {
        !self.name.is_empty()
    }
}

/// What one member says about itself (`Maintenance/Status`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberStatus {
    pub member_id: u64,
    /// ID of the leader this member follows; 0 when it knows none.
    pub leader: u64,
    pub version: String,
    pub raft_index: u64,
    pub is_learner: bool,
    /// Alarms and errors the member reports (e.g. `NOSPACE`).
    pub errors: Vec<String>,
    /// Size of the database file, bytes.
    pub db_size: u64,
    /// Bytes of it in use; the rest is free pages only a defragmentation gives back.
    pub db_size_in_use: u64,
}

impl MemberStatus {
    /// The alarms among the errors: etcd reports an active alarm as
    /// `memberID:<id> alarm:<NAME> ` (`NOSPACE`, `CORRUPT`).
    pub fn alarms(&self) -> Vec<&str> {
        self.errors
            .iter()
            .filter_map(|e| e.split_once("alarm:").map(|(_, name)| name.trim()))
            .filter(|name| !name.is_empty())
            .collect()
    }

    /// Whether the member reports errors other than alarms (which are the cluster's state,
    /// raised on one member and reported by all, not this member's health).
    pub fn has_other_errors(&self) -> bool {
        self.errors.iter().any(|e| !e.contains("alarm:"))
    }
}

/// Result of asking etcd to promote a learner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PromoteOutcome {
    Promoted,
    /// The learner has not caught up with the leader's log yet; ask again later.
    NotCaughtUp,
}

/// What etcd's answer to `member add` of `peer_url` means for a client that may be asking again:
/// a refusal because the member is there already (the first answer was lost: "member ID already
/// exist" within the same second, "Peer URLs already exists" after) is that member, and etcd's
/// removed-ID refusal ("member not found") is [`MembershipError::MemberIdTaken`]. Public for
/// the sandbox's simulated membership, which answers the same way.
pub async fn settle_add<L>(
    added: Result<Member, MembershipError>,
    peer_url: &str,
    list: impl FnOnce() -> L,
) -> Result<Member, MembershipError>
where
    L: Future<Output = Result<Vec<Member>, MembershipError>>,
{
    match added {
        Err(MembershipError::Api {
            code: grpc::FAILED_PRECONDITION,
            message,
            action,
        }) if message.contains("already exist") => list()
            .await?
            .into_iter()
            .find(|m| m.peer_urls.iter().any(|u| u == peer_url))
            .ok_or(MembershipError::Api {
                action,
                code: grpc::FAILED_PRECONDITION,
                message,
            }),
        Err(MembershipError::Api {
            code: grpc::NOT_FOUND,
            ..
        }) => Err(MembershipError::MemberIdTaken {
            peer_url: peer_url.to_owned(),
        }),
        other => other,
    }
}

/// etcd's membership API. Every call is idempotent where etcd allows it: adding a peer URL that
/// is already a member returns that member, removing a member that is gone succeeds.
pub trait Membership: Send + Sync {
    fn list(&self) -> impl Future<Output = Result<Vec<Member>, MembershipError>> + Send;
    /// Adds a non-voting member with this peer URL.
    fn add_learner(
        &self,
        peer_url: &str,
    ) -> impl Future<Output = Result<Member, MembershipError>> + Send;
    fn promote(
        &self,
        id: u64,
    ) -> impl Future<Output = Result<PromoteOutcome, MembershipError>> + Send;
    fn remove(&self, id: u64) -> impl Future<Output = Result<(), MembershipError>> + Send;
    /// Status of the member serving `client_url`, asked directly (not through the Service).
    fn status(
        &self,
        client_url: &str,
    ) -> impl Future<Output = Result<MemberStatus, MembershipError>> + Send;
    /// Defragments the database of the member serving `client_url` (it serves nothing else
    /// meanwhile).
    fn defragment(
        &self,
        client_url: &str,
    ) -> impl Future<Output = Result<(), MembershipError>> + Send;
    /// Authenticate as root with `credentials` on every later call that etcd asks a token of
    /// (none: send no token).
    fn set_credentials(&mut self, credentials: RootCredentials);
    /// Whether etcd requires authentication, and which of the credentials' passwords is
    /// root's (`AuthFailed` when none is).
    fn auth_status(&self) -> impl Future<Output = Result<AuthStatus, MembershipError>> + Send;
    /// Turns authentication on with root's password `password`: creates root (or, while
    /// authentication is off, sets its password), the role root, grants it, enables.
    fn enable_auth(
        &self,
        password: &Password,
    ) -> impl Future<Output = Result<(), MembershipError>> + Send;
    /// Turns authentication off (root and its role stay).
    fn disable_auth(&self) -> impl Future<Output = Result<(), MembershipError>> + Send;
    /// Changes root's password (etcd invalidates root's tokens; later calls authenticate
    /// again).
    fn change_root_password(
        &self,
        password: &Password,
    ) -> impl Future<Output = Result<(), MembershipError>> + Send;
}
