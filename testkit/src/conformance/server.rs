//! The API server the suite runs on: a sandbox, or a real control plane of its own
//! (`ferroplane-testenv`'s kube-apiserver, controller-manager, scheduler and etcd, prepared as
//! a cluster install: CRDs Established, deploy/'s RBAC, controllers as ferroplane's
//! ServiceAccount). Both enforce deploy/'s RBAC on the controllers; the real one adds the real
//! apiserver's admission, watch and garbage collection.

use std::future::Future;

use ferroplane_runtime::{RunError, Runtime};
use tokio_util::sync::CancellationToken;

use crate::TestCluster;
use crate::controllers::{Controllers, test_runtime};
use crate::real_cluster::Dedicated;

/// Which API server a run of the suite uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {
    /// The in-memory sandbox API server.
    Sandbox,
    /// A real Kubernetes control plane started for the run.
    RealControlPlane,
}

impl Server {
    /// How the matrix names the server.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sandbox => "sandbox",
            Self::RealControlPlane => "real control plane",
        }
    }
}

enum Backend {
    Sandbox(TestCluster),
    Real {
        // Dropped last: stops the control plane's processes.
        plane: Box<Dedicated>,
        admin: kube::Client,
        controller: kube::Client,
        controllers: Vec<Controllers>,
    },
}

/// A running API server with ferroplane's CRDs and RBAC, and the controllers run against it.
pub(super) struct SuiteCluster {
    backend: Backend,
}

impl SuiteCluster {
    /// Starts `server` and installs ferroplane's CRDs (Established before this returns).
    pub async fn start(server: Server) -> Self {
        let backend = match server {
            Server::Sandbox => {
                let cluster = TestCluster::start().await;
                cluster.install_crds(ferroplane_apis::crds()).await;
                Backend::Sandbox(cluster)
            }
            Server::RealControlPlane => {
                let plane = Box::new(Dedicated::start().await);
                let admin = plane.cluster().admin_client().await;
                let controller = plane.cluster().controller_client().await;
                Backend::Real {
                    plane,
                    admin,
                    controller,
                    controllers: Vec::new(),
                }
            }
        };
        Self { backend }
    }

    /// An admin client (the user's side: namespaces, Secrets, the objects).
    pub fn client(&self) -> kube::Client {
        match &self.backend {
            Backend::Sandbox(cluster) => cluster.client(),
            Backend::Real { admin, .. } => admin.clone(),
        }
    }

    /// A runtime of ferroplane's ServiceAccount, for controllers.
    pub fn runtime(&self) -> Runtime {
        match &self.backend {
            Backend::Sandbox(cluster) => cluster.runtime(),
            Backend::Real { controller, .. } => test_runtime(controller.clone()),
        }
    }

    /// Runs controllers until [`SuiteCluster::shutdown`], which stops them cleanly.
    pub fn spawn_controllers<F, Fut>(&mut self, run: F)
    where
        F: FnOnce(Runtime, CancellationToken) -> Fut,
        Fut: Future<Output = Result<(), RunError>> + Send + 'static,
    {
        match &mut self.backend {
            Backend::Sandbox(cluster) => cluster.spawn_controllers(run),
            Backend::Real {
                controller,
                controllers,
                ..
            } => {
                let runtime = test_runtime(controller.clone());
                controllers.push(Controllers::spawn(runtime, run));
            }
        }
    }

    /// Stops the controllers (each must stop cleanly), then the server; on the sandbox, fails
    /// when deploy/'s RBAC refused the controllers anything (the real apiserver's refusals fail
    /// the reconciles themselves, which the cases see).
    pub async fn shutdown(self) {
        match self.backend {
            Backend::Sandbox(cluster) => cluster.shutdown().await,
            Backend::Real {
                plane, controllers, ..
            } => {
                for running in controllers {
                    running.stop().await;
                }
                drop(plane);
            }
        }
    }
}
