//! Which Secrets a TLS cluster uses ([`SecretNames`]: the user's, or the ones ferroplane makes)
//! and where a member pod finds them.

use ferroplane_apis::etcd::EtcdCluster;

use super::user_trust::{PEER_CA, SERVER_CA};
use crate::names::{ClusterNames, PEER_TLS_MOUNT, SERVER_TLS_MOUNT, TRUST_TLS_MOUNT};
use crate::render::bootstrap::MemberTls;

/// The Secrets of a TLS cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretNames {
    pub peer: String,
    pub server: String,
    pub client: String,
    /// Whether ferroplane makes them (and the CA Secret `<name>-tls-ca`).
    pub generated: bool,
    /// With the user's Secrets: the Secret of ferroplane's holding what the members trust
    /// (`<name>-tls-trust`, [`super::user_trust`]).
    pub trust: Option<String>,
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
                trust: Some(names.tls_secret("trust")),
            },
            // Admission refuses a partial set; anything but all three is made by ferroplane.
            _ => SecretNames {
                peer: names.tls_secret("peer"),
                server: names.tls_secret("server"),
                client: names.tls_secret("client"),
                generated: true,
                trust: None,
            },
        },
    )
}

/// Where a member pod of `secrets` finds its certificates and what it trusts.
pub fn member_tls(secrets: &SecretNames) -> MemberTls {
    let in_dirs = MemberTls::in_dirs(PEER_TLS_MOUNT.to_owned(), SERVER_TLS_MOUNT.to_owned());
    match secrets.trust {
        Some(_) => MemberTls {
            peer_ca_file: format!("{TRUST_TLS_MOUNT}/{PEER_CA}"),
            server_ca_file: format!("{TRUST_TLS_MOUNT}/{SERVER_CA}"),
            ..in_dirs
        },
        None => in_dirs,
    }
}
