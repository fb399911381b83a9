//! Kube clients for tests: for an API server URL on 127.0.0.1 (the sandbox serves plain HTTP
//! and needs no credentials) and from a kubeconfig file (a real cluster).

use std::path::Path;

/// An admin client for the API server at `url`, with `default` as its namespace.
pub fn client_for(url: &str) -> kube::Client {
    let url = url.parse().expect("a valid API server URL");
    kube::Client::try_from(kube::Config::new(url)).expect("a client for the API server")
}

/// A client from the kubeconfig file at `path`, with its current context.
pub async fn client_from_kubeconfig(path: &Path) -> kube::Client {
    let kubeconfig = kube::config::Kubeconfig::read_from(path)
        .unwrap_or_else(|e| panic!("cannot read kubeconfig {}: {e}", path.display()));
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .unwrap_or_else(|e| panic!("kubeconfig {} is not usable: {e}", path.display()));
    kube::Client::try_from(config).expect("a client for the cluster")
}
