//! The production [`MembershipFactory`]: [`GatewayClient`]s that talk to each cluster's client
//! Service through etcd's JSON gateway.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::error::MembershipError;
use super::factory::MembershipFactory;
use super::gateway::GatewayClient;
use super::http::{GatewayConfig, http_with_tls};
use crate::names::ClusterNames;
use crate::tls::ClientTls;

/// Makes the HTTP client builder each membership client starts from (a test's resolver, say).
pub type HttpBuilder = Arc<dyn Fn() -> reqwest::ClientBuilder + Send + Sync>;

/// The HTTP client of each TLS cluster (by namespace and name) and the certificate it presents.
type TlsClients = HashMap<(String, String), (ClientTls, reqwest::Client)>;

/// [`GatewayClient`]s: clusters without TLS share one connection pool; each TLS cluster has a
/// client of its own with its client certificate, kept until the certificate changes.
#[derive(Clone)]
pub struct GatewayFactory {
    http: reqwest::Client,
    builder: HttpBuilder,
    config: GatewayConfig,
    with_tls: Arc<Mutex<TlsClients>>,
}

impl GatewayFactory {
    pub fn new(config: &GatewayConfig) -> Result<Self, reqwest::Error> {
        Self::with_builder(config, Arc::new(reqwest::Client::builder))
    }

    /// Clients built from `builder` (plus the timeouts of `config` and, for TLS clusters,
    /// their certificates).
    pub fn with_builder(
        config: &GatewayConfig,
        builder: HttpBuilder,
    ) -> Result<Self, reqwest::Error> {
        let http = builder()
            .connect_timeout(config.connect_timeout)
            .timeout(config.request_timeout)
            .build()?;
        Ok(Self {
            http,
            builder,
            config: config.clone(),
            with_tls: Arc::default(),
        })
    }

    fn tls_client(&self, tls: &ClientTls) -> Result<reqwest::Client, MembershipError> {
        let builder = (self.builder)()
            .connect_timeout(self.config.connect_timeout)
            .timeout(self.config.request_timeout);
        http_with_tls(builder, tls)
    }
}

impl MembershipFactory for GatewayFactory {
    type Client = GatewayClient;
    fn for_cluster(
        &self,
        names: &ClusterNames,
        tls: Option<&ClientTls>,
    ) -> Result<GatewayClient, MembershipError> {
        let http = match tls {
            None => self.http.clone(),
            Some(tls) => {
                let key = (names.namespace.clone(), names.name.clone());
                let mut cache = self
                    .with_tls
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                match cache.get(&key) {
                    Some((cached, http)) if cached == tls => http.clone(),
                    _ => {
                        let http = self.tls_client(tls)?;
                        cache.insert(key, (tls.clone(), http.clone()));
                        http
                    }
                }
            }
        };
        Ok(GatewayClient::with_http(
            http,
            vec![names.client_endpoint()],
        ))
    }
}
