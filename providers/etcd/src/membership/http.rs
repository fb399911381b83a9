//! The HTTP side of the gateway client: its timeouts ([`GatewayConfig`]) and the HTTPS client
//! of a TLS cluster ([`http_with_tls`]).

use std::time::Duration;

use super::error::MembershipError;
use crate::tls::ClientTls;

/// Timeouts of gateway calls. A membership change blocks while the cluster has no quorum, so
/// calls must time out rather than hold a reconcile forever.
#[derive(Clone, Debug)]
pub struct GatewayConfig {
    pub connect_timeout: Duration,
    pub request_timeout: Duration,
}

impl Default for GatewayConfig {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(2),
            request_timeout: Duration::from_secs(5),
        }
    }
}

/// `builder` finished with the client certificate of `tls` and trusting only its CA (members
/// are named by cluster DNS names, which no public CA vouches for), HTTPS only.
pub fn http_with_tls(
    builder: reqwest::ClientBuilder,
    tls: &ClientTls,
) -> Result<reqwest::Client, MembershipError> {
    let detail = |what: &str, e: reqwest::Error| MembershipError::Tls {
        detail: format!("{what}: {e}"),
    };
    let identity = reqwest::Identity::from_pem(
        format!("{}\n{}", tls.key_pem.trim_end(), tls.cert_pem).as_bytes(),
    )
    .map_err(|e| detail("the certificate and key do not load", e))?;
    let ca = reqwest::Certificate::from_pem_bundle(tls.ca_pem.as_bytes())
        .map_err(|e| detail("ca.crt does not load", e))?;
    builder
        .tls_certs_only(ca)
        .identity(identity)
        .https_only(true)
        .build()
        .map_err(|e| detail("the HTTP client cannot be built", e))
}
