//! One sandbox API server for one test: an admin client, a kubeconfig and a kubectl of its own
//! (in a temporary directory), the CRDs the test installs, and the controllers it runs against
//! the server. [`TestCluster::shutdown`] stops the controllers, then the server.
//!
//! The controllers run as ferroplane's ServiceAccount with deploy/'s cluster RBAC (every
//! provider's role, embedded from the YAML files by `ferroplane_apis::deploy`), which the sandbox
//! enforces: a call the manifests do not grant fails with the apiserver's 403, as in a cluster.

use std::fmt::Debug;
use std::future::Future;
use std::path::{Path, PathBuf};

use ferroplane_apis::deploy::{self, ALL_PROVIDERS, SERVICE_ACCOUNT, SERVICE_ACCOUNT_NAMESPACE};
use ferroplane_runtime::{RunError, Runtime};
use ferroplane_sandbox::{Sandbox, SandboxConfig};
use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Resource;
use kube::api::Api;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use crate::client::{client_for, client_from_kubeconfig};
use crate::controllers::{Controllers, test_runtime};
use crate::crds;
use crate::kubectl::Kubectl;

/// Which of deploy/'s RBAC the controllers' ServiceAccount gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rbac {
    /// The cluster install of every provider (deploy/rbac/).
    Cluster,
    /// The namespaced install (deploy/namespaced/) of `providers` in `namespace`, which is
    /// created: Roles and RoleBindings only, for controllers run with that namespace.
    Namespaced {
        namespace: String,
        providers: Vec<deploy::Provider>,
    },
}

/// A running sandbox API server with what a test needs to talk to it.
pub struct TestCluster {
    sandbox: Sandbox,
    client: kube::Client,
    /// ferroplane's ServiceAccount: what the controllers use.
    controller_client: kube::Client,
    dir: tempfile::TempDir,
    kubectl: Kubectl,
    controllers: Vec<Controllers>,
}

/// The objects `rbac` creates, in order.
fn rbac_objects(rbac: &Rbac) -> Vec<serde_json::Value> {
    let parse = |m: &deploy::Manifest| m.objects().expect("deploy/'s manifests parse");
    match rbac {
        Rbac::Cluster => deploy::cluster_rbac(&ALL_PROVIDERS)
            .iter()
            .flat_map(parse)
            .collect(),
        Rbac::Namespaced {
            namespace,
            providers,
        } => {
            let mut objects: Vec<serde_json::Value> =
                deploy::MANAGER.iter().flat_map(parse).collect();
            objects.push(serde_json::json!({
                "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace},
            }));
            objects.extend(
                deploy::namespaced_rbac(providers, namespace).expect("deploy/namespaced/ parses"),
            );
            objects
        }
    }
}

impl TestCluster {
    /// A sandbox with the default configuration.
    pub async fn start() -> Self {
        Self::start_with(SandboxConfig::default()).await
    }

    pub async fn start_with(config: SandboxConfig) -> Self {
        Self::start_with_rbac(config, Rbac::Cluster).await
    }

    /// A sandbox whose controllers get `rbac`.
    pub async fn start_with_rbac(config: SandboxConfig, rbac: Rbac) -> Self {
        let sandbox = Sandbox::start(config).await.expect("sandbox starts");
        let client = client_for(&sandbox.url());
        let dir = tempfile::tempdir().expect("temp dir");
        let kubeconfig = sandbox
            .write_kubeconfig(dir.path())
            .expect("kubeconfig written");
        let kubectl = Kubectl::new(kubeconfig, dir.path().join("kubectl-cache"));
        sandbox
            .create_objects(&rbac_objects(&rbac))
            .expect("deploy/'s RBAC is created");
        let controller_kubeconfig = sandbox
            .write_service_account_kubeconfig(
                dir.path(),
                SERVICE_ACCOUNT_NAMESPACE,
                SERVICE_ACCOUNT,
            )
            .expect("the controller's kubeconfig is written");
        let controller_client = client_from_kubeconfig(&controller_kubeconfig).await;
        Self {
            sandbox,
            client,
            controller_client,
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

    /// A client of the server as ferroplane's ServiceAccount, limited to deploy/'s RBAC.
    pub fn controller_client(&self) -> kube::Client {
        self.controller_client.clone()
    }

    /// A runtime for controllers against this server (see [`test_runtime`]), as ferroplane's
    /// ServiceAccount.
    pub fn runtime(&self) -> Runtime {
        test_runtime(self.controller_client())
    }

    /// Creates `crds` on the server.
    pub async fn install_crds(&self, crds: impl IntoIterator<Item = CustomResourceDefinition>) {
        crds::install(&self.client, crds).await;
    }

    /// Runs controllers against this server, as ferroplane's ServiceAccount, until
    /// [`TestCluster::shutdown`]; see [`Controllers::spawn`].
    pub fn spawn_controllers<F, Fut>(&mut self, run: F)
    where
        F: FnOnce(Runtime, CancellationToken) -> Fut,
        Fut: Future<Output = Result<(), RunError>> + Send + 'static,
    {
        let controllers = Controllers::spawn(self.runtime(), run);
        self.controllers.push(controllers);
    }

    /// Stops the controllers (each must stop cleanly), then the server. Fails the test when
    /// RBAC refused the controllers anything: deploy/ must grant every call they make.
    pub async fn shutdown(self) {
        let ran_controllers = !self.controllers.is_empty();
        for controllers in self.controllers {
            controllers.stop().await;
        }
        let refusals = self.sandbox.refusals();
        self.sandbox.shutdown().await;
        if ran_controllers {
            assert!(
                refusals.is_empty(),
                "deploy/'s RBAC refused the controllers {} request(s):\n{}",
                refusals.len(),
                refusals.join("\n")
            );
        }
    }
}
