//! Which Secrets a TLS cluster uses ([`SecretNames`]: the user's, or the ones ferroplane makes)
//! and where a member pod finds them.

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
