//! One sandbox API server for one test: an admin client, a kubeconfig and a kubectl of its own
//! (in a temporary directory), the CRDs the test installs, and the controllers it runs against
//! the server. [`TestCluster::shutdown`] stops the controllers, then the server.

use std::fmt::Debug;
use std::future::Future;
use std::path::{Path, PathBuf};

use ferroplane_runtime::{RunError, Runtime};
use ferroplane_sandbox::{Sandbox, SandboxConfig};
use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Resource;
use kube::api::Api;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use crate::client::client_for;
use crate::controllers::{Controllers, test_runtime};
use crate::crds;
use crate::kubectl::Kubectl;

/// A running sandbox API server with what a test needs to talk to it.
pub struct TestCluster {
    sandbox: Sandbox,
    client: kube::Client,
    dir: tempfile::TempDir,
    kubectl: Kubectl,
    controllers: Vec<Controllers>,
}

impl TestCluster {
    /// A sandbox with the default configuration.
    pub async fn start() -> Self {
        Self::start_with(SandboxConfig::default()).await
    }

    pub async fn start_with(config: SandboxConfig) -> Self {
        let sandbox = Sandbox::start(config).await.expect("sandbox starts");
        let client = client_for(&sandbox.url());
        let dir = tempfile::tempdir().expect("temp dir");
        let kubeconfig = sandbox
            .write_kubeconfig(dir.path())
            .expect("kubeconfig written");
        let kubectl = Kubectl::new(kubeconfig, dir.path().join("kubectl-cache"));
        Self {
            sandbox,
            client,
            dir,
            kubectl,
            controllers: Vec::new(),
        }
    }

    /// An admin client of the server.
    pub fn client(&self) -> kube::Client {
        self.client.clone()
    }

    /// An API of namespaced kind `K` in namespace `default` (the client's).
    pub fn api<K>(&self) -> Api<K>
    where
        K: Resource<Scope = NamespaceResourceScope> + Clone + DeserializeOwned + Debug,
        K::DynamicType: Default,
    {
        Api::default_namespaced(self.client())
    }

    /// The server itself (its URL, write counters, resource version).
    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    pub fn url(&self) -> String {
        self.sandbox.url()
    }

    /// The test's temporary directory (kubeconfig, kubectl cache, files the test writes).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    pub fn kubeconfig(&self) -> PathBuf {
        self.kubectl.kubeconfig().to_path_buf()
    }

    /// kubectl with this server's kubeconfig and the test's own cache dir.
    pub fn kubectl(&self) -> &Kubectl {
        &self.kubectl
    }

    /// A runtime for controllers against this server (see [`test_runtime`]).
    pub fn runtime(&self) -> Runtime {
        test_runtime(self.client())
    }

    /// Creates `crds` on the server.
    pub async fn install_crds(&self, crds: impl IntoIterator<Item = CustomResourceDefinition>) {
        crds::install(&self.client, crds).await;
    }

    /// Runs controllers against this server until [`TestCluster::shutdown`]; see
    /// [`Controllers::spawn`].
    pub fn spawn_controllers<F, Fut>(&mut self, run: F)
    where
        F: FnOnce(Runtime, CancellationToken) -> Fut,
        Fut: Future<Output = Result<(), RunError>> + Send + 'static,
    {
        let controllers = Controllers::spawn(self.runtime(), run);
        self.controllers.push(controllers);
    }

    /// Stops the controllers (each must stop cleanly), then the server.
    pub async fn shutdown(self) {
        for controllers in self.controllers {
            controllers.stop().await;
        }
        self.sandbox.shutdown().await;
    }
}
