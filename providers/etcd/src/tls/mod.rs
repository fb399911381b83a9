//! TLS of an EtcdCluster: which Secrets hold the peer, server and client certificates
//! ([`SecretNames`]), the certificates ferroplane makes when the user gives none ([`certs`]),
//! and keeping those Secrets present and renewed ([`secrets`]).
//!
//! Each Secret is a `kubernetes.io/tls` Secret with `tls.crt`, `tls.key` and `ca.crt`. The peer
//! and server Secrets are mounted into the member pods; the client Secret is what the
//! controller presents to etcd (membership, status, snapshots).

pub mod ca_secret;
pub mod certs;
pub mod rotation;
pub mod secrets;

pub use secrets::{ClientTls, Rotation, TlsSecrets};

use ferroplane_apis::etcd::EtcdCluster;

use crate::names::{ClusterNames, PEER_TLS_MOUNT, SERVER_TLS_MOUNT};
use crate::render::bootstrap::MemberTls;

/// The Secrets of a TLS cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretNames {
    pub peer: String,
    pub server: String,
    pub client: String,
    /// Whether ferroplane makes them (and the CA Secret `<name>-tls-ca`).
    pub generated: bool,
}

/// The TLS Secrets of `cluster`, `None` without TLS.
pub fn secret_names(cluster: &EtcdCluster, names: &ClusterNames) -> Option<SecretNames> {
    let tls = cluster.spec.tls.as_ref()?;
    Some(
        match (
            &tls.peer_secret_ref,
            &tls.server_secret_ref,
            &tls.client_secret_ref,
        ) {
            (Some(peer), Some(server), Some(client)) => SecretNames {
                peer: peer.name.clone(),
                server: server.name.clone(),
                client: client.name.clone(),
                generated: false,
            },
            // Admission refuses a partial set; anything but all three is made by ferroplane.
            _ => SecretNames {
                peer: names.tls_secret("peer"),
                server: names.tls_secret("server"),
                client: names.tls_secret("client"),
                generated: true,
            },
        },
    )
}

/// Where a member pod finds its certificates.
pub fn member_tls() -> MemberTls {
    MemberTls {
        peer_dir: PEER_TLS_MOUNT.to_owned(),
        server_dir: SERVER_TLS_MOUNT.to_owned(),
    }
}
