//! TLS of an EtcdCluster: which Secrets hold the peer, server and client certificates
//! ([`SecretNames`]), the certificates ferroplane makes when the user gives none ([`certs`]),
//! and keeping those Secrets present and renewed ([`secrets`]).
//!
//! Each Secret is a `kubernetes.io/tls` Secret with `tls.crt`, `tls.key` and `ca.crt`. The peer
//! and server Secrets are mounted into the member pods; the client Secret is what the
//! controller presents to etcd (membership, status, snapshots).

pub mod ca_secret;
pub mod certs;
mod client_tls;
pub mod expiry;
pub mod recovery;
pub mod rotation;
pub mod secret_data;
mod secret_refs;
pub mod secrets;
pub mod user_trust;

pub use client_tls::ClientTls;
pub use secret_refs::{SecretNames, member_tls, secret_names};
pub use secrets::{Ensured, Rotation, TlsSecrets};
