//! Why a membership call failed ([`MembershipError`]), and how the controller classes it. A
//! ground floor of `membership`: the API, authentication and the clients all use it.

use super::grpc;

/// Why a membership call failed.
#[derive(Debug, thiserror::Error)]
pub enum MembershipError {
    #[error("no etcd endpoint to talk to")]
    NoEndpoints,
    #[error("etcd at {endpoint} is unreachable: {source}")]
    Unreachable {
        endpoint: String,
        #[source]
        source: reqwest::Error,
    },
    /// Nothing serves the endpoint (no process runs there, as the simulation sees it).
    #[error("etcd at {endpoint} does not answer: {reason}")]
    Down { endpoint: String, reason: String },
    #[error("etcd refused {action}: {message} (gRPC code {code})")]
    Api {
        action: &'static str,
        code: i32,
        message: String,
    },
    /// The client certificate or CA could not be loaded (never shows key material).
    #[error("cannot use the TLS client certificate for etcd: {detail}")]
    Tls { detail: String },
    /// etcd requires authentication and refuses every password ferroplane has for root.
    #[error(
        "etcd refuses root's password: none of the {tried} password(s) ferroplane has (the auth Secret's and the one it last set) is root's; put root's current password in the Secret, then change it there"
    )]
    AuthFailed { tried: usize },
    /// With authentication on, etcd's JSON gateway refuses a client certificate that has a
    /// Common Name (it could not carry the certificate's user to etcd).
    #[error(
        "etcd at {endpoint} refuses the client certificate: with authentication on, etcd's JSON gateway accepts no client certificate that has a Common Name; give tls.clientSecretRef a certificate without one (a certificate ferroplane made is issued again without one by itself)"
    )]
    CommonNameRefused { endpoint: String },
    /// etcd derives a new member's ID from its peer URL and the second it is added in, and
    /// refuses ("member not found") an ID that belongs to a removed member: the peer URL was
    /// added and removed within this same second. The next second gives another ID.
    #[error(
        "etcd refused to add {peer_url} again within the second its earlier member was added and removed (the member ID etcd derives from the peer URL and the second is taken); asked again shortly"
    )]
    MemberIdTaken { peer_url: String },
    #[error("unexpected answer from etcd at {endpoint} to {action}: {detail}")]
    Decode {
        endpoint: String,
        action: &'static str,
        detail: String,
    },
}

impl MembershipError {
    /// Whether the error says nothing about etcd's state, only that it could not be asked.
    pub fn is_unreachable(&self) -> bool {
        matches!(
            self,
            MembershipError::Unreachable { .. }
                | MembershipError::NoEndpoints
                | MembershipError::Down { .. }
        )
    }

    /// Whether trying again shortly may succeed: etcd is unreachable, refuses a membership
    /// change with `Unavailable` ("unhealthy cluster") because a member has not been connected
    /// to the leader for long enough yet, or a re-added member's ID is taken for this second.
    pub fn is_transient(&self) -> bool {
        self.is_unreachable()
            || matches!(self, MembershipError::MemberIdTaken { .. })
            || matches!(
                self,
                MembershipError::Api {
                    code: grpc::UNAVAILABLE,
                    ..
                }
            )
    }
}
