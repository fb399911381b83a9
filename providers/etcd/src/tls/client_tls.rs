//! The client certificate the controller presents to etcd ([`ClientTls`]), shared by the
//! membership clients and the TLS Secrets that hold it.

use std::fmt;

/// What the controller presents to etcd, and the CA it trusts etcd's certificate by. The key
/// never appears in `Debug` output.
#[derive(Clone, PartialEq, Eq)]
pub struct ClientTls {
    pub ca_pem: String,
    pub cert_pem: String,
    pub key_pem: String,
}

impl fmt::Debug for ClientTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientTls")
            .field("cert_pem", &format_args!("{} bytes", self.cert_pem.len()))
            .field("key_pem", &"<redacted>")
            .finish()
    }
}
