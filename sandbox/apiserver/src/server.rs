//! Starting and stopping the sandbox API server, and what a client needs to reach it.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::app::{App, SandboxConfig};
use crate::{http, simulate};

/// Why the sandbox could not start or write its kubeconfig.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("cannot listen on 127.0.0.1:{port}: {source}")]
    Bind { port: u16, source: std::io::Error },
    #[error("cannot create {kind} {name:?}: {message}")]
    Create {
        kind: String,
        name: String,
        message: String,
    },
    #[error("cannot write the kubeconfig to {path}: {source}")]
    Kubeconfig {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A running sandbox API server. Dropping it stops it; `shutdown` also waits for the end.
#[derive(Debug)]
pub struct Sandbox {
    address: SocketAddr,
    app: Arc<App>,
    stop: watch::Sender<bool>,
    server: Option<JoinHandle<()>>,
    simulator: Option<JoinHandle<()>>,
}

impl Sandbox {
    /// Binds 127.0.0.1 and starts serving (and simulating workloads, if configured).
    pub async fn start(config: SandboxConfig) -> Result<Self, SandboxError> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", config.port))
            .await
            .map_err(|source| SandboxError::Bind {
                port: config.port,
                source,
            })?;
        let address = listener.local_addr().map_err(|source| SandboxError::Bind {
            port: config.port,
            source,
        })?;
        let (stop, stopped) = watch::channel(false);
        let simulate = config.simulate_workloads;
        let app = Arc::new(App::new(config, stopped.clone(), address.to_string()));
        let router = Router::new()
            .fallback(http::handle)
            .layer(DefaultBodyLimit::disable())
            .with_state(app.clone());
        let mut shutdown_signal = stopped;
        let server = tokio::spawn(async move {
            let graceful = async move {
                // Either a stop request or a dropped sender ends the server.
                let _ = shutdown_signal.wait_for(|stop| *stop).await;
            };
            if let Err(error) = axum::serve(listener, router)
                .with_graceful_shutdown(graceful)
                .await
            {
                tracing::error!(%error, "sandbox API server failed");
            }
        });
        let simulator = simulate.then(|| tokio::spawn(simulate::run(app.clone())));
        tracing::info!(%address, "sandbox API server listening");
        Ok(Self {
            address,
            app,
            stop,
            server: Some(server),
            simulator,
        })
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// A kubeconfig whose current context reaches this server, namespace `default`.
    pub fn kubeconfig_yaml(&self) -> String {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: ferroplane-sandbox\n  cluster:\n    server: {url}\ncontexts:\n- name: ferroplane-sandbox\n  context:\n    cluster: ferroplane-sandbox\n    user: ferroplane-sandbox\n    namespace: default\ncurrent-context: ferroplane-sandbox\nusers:\n- name: ferroplane-sandbox\n  user: {{}}\npreferences: {{}}\n",
            url = self.url()
        )
    }

    /// Creates `objects` (each with `apiVersion`, `kind` and `metadata`) as the administrator,
    /// in order; an object that already exists is left as it is. For what a test or the sandbox
    /// sets up before clients connect, such as deploy/'s RBAC.
    pub fn create_objects(&self, objects: &[serde_json::Value]) -> Result<(), SandboxError> {
        for object in objects {
            let api_version = object["apiVersion"].as_str().unwrap_or_default();
            let kind = object["kind"].as_str().unwrap_or_default();
            let name = object["metadata"]["name"].as_str().unwrap_or_default();
            let failed = |message: String| SandboxError::Create {
                kind: kind.to_owned(),
                name: name.to_owned(),
                message,
            };
            let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
            let def = self
                .app
                .store
                .read_registry(|registry| registry.find_kind(group, version, kind))
                .ok_or_else(|| failed(format!("{api_version} {kind} is not served")))?;
            let namespace = object["metadata"]["namespace"]
                .as_str()
                .unwrap_or("default");
            let namespace = if def.namespaced { namespace } else { "" };
            match self.app.store.create(
                &def,
                namespace,
                object.clone(),
                &crate::store::ops::options::WriteOptions {
                    manager: "ferroplane-sandbox".to_owned(),
                    ..Default::default()
                },
            ) {
                Ok(_) => {}
                Err(error) if error.code == 409 => {}
                Err(error) => return Err(failed(error.message)),
            }
        }
        Ok(())
    }

    /// The messages of the 403s RBAC answered so far, oldest first: a test that runs the
    /// controllers under deploy/'s rules can check that they needed nothing more.
    pub fn refusals(&self) -> Vec<String> {
        self.app
            .refusals
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// A bearer token that authenticates as ServiceAccount `namespace/name` (the user
    /// `system:serviceaccount:<namespace>:<name>`), whose requests RBAC then authorizes. It is
    /// refused with 401 while the ServiceAccount does not exist.
    pub fn service_account_token(&self, namespace: &str, name: &str) -> String {
        self.app.tokens.issue(namespace, name)
    }

    /// A kubeconfig that reaches this server as ServiceAccount `namespace/name` (a fresh token;
    /// see [`Sandbox::service_account_token`]), namespace `namespace`.
    pub fn service_account_kubeconfig_yaml(&self, namespace: &str, name: &str) -> String {
        let token = self.service_account_token(namespace, name);
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: ferroplane-sandbox\n  cluster:\n    server: {url}\ncontexts:\n- name: {name}\n  context:\n    cluster: ferroplane-sandbox\n    user: {name}\n    namespace: {namespace}\ncurrent-context: {name}\nusers:\n- name: {name}\n  user:\n    token: {token}\npreferences: {{}}\n",
            url = self.url()
        )
    }

    /// Writes `dir/<namespace>.<name>.kubeconfig` (see
    /// [`Sandbox::service_account_kubeconfig_yaml`]) and returns its path.
    pub fn write_service_account_kubeconfig(
        &self,
        dir: &Path,
        namespace: &str,
        name: &str,
    ) -> Result<PathBuf, SandboxError> {
        let path = dir.join(format!("{namespace}.{name}.kubeconfig"));
        std::fs::create_dir_all(dir)
            .and_then(|()| {
                write_private(
                    &path,
                    &self.service_account_kubeconfig_yaml(namespace, name),
                )
            })
            .map_err(|source| SandboxError::Kubeconfig {
                path: path.clone(),
                source,
            })?;
        Ok(path)
    }

    /// Writes `dir/kubeconfig` (creating `dir`) and returns its path.
    pub fn write_kubeconfig(&self, dir: &Path) -> Result<PathBuf, SandboxError> {
        let path = dir.join("kubeconfig");
        std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::write(&path, self.kubeconfig_yaml()))
            .map_err(|source| SandboxError::Kubeconfig {
                path: path.clone(),
                source,
            })?;
        Ok(path)
    }

    /// Write requests received so far, by `(verb, resource)`, e.g.
    /// `("patch", "ecsinstances.alibabacloud.ferroplane.io/status")`.
    pub fn writes(&self) -> BTreeMap<(String, String), u64> {
        self.app.writes.snapshot()
    }

    /// The total of `writes()`.
    pub fn total_writes(&self) -> u64 {
        self.app.writes.snapshot().values().sum()
    }

    pub fn reset_writes(&self) {
        self.app.writes.reset();
    }

    /// Hands one request straight to the server's handler, without HTTP, and returns its
    /// response (a watch streams its body). For benchmarks that measure the API server's own
    /// work; everything else talks to [`Sandbox::url`].
    pub async fn handle(&self, request: axum::extract::Request) -> axum::response::Response {
        http::handle(axum::extract::State(self.app.clone()), request).await
    }

    /// Watch requests that have started streaming changes, ever: once a client's watch is
    /// counted, it sees every later change (a barrier for tests that start `kubectl get -w`,
    /// `kubectl wait` or a watch of their own before they change something).
    pub fn watches_started(&self) -> usize {
        self.app.watches_started.count()
    }

    /// The current global resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.app.store.resource_version()
    }

    /// Stops accepting requests, ends open watches and waits for the server to finish.
    pub async fn shutdown(mut self) {
        let _ = self.stop.send(true);
        if let Some(server) = self.server.take() {
            let _ = server.await;
        }
        if let Some(simulator) = self.simulator.take() {
            let _ = simulator.await;
        }
    }
}

/// Writes a file only its owner can read (it holds a token).
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?
        .write_all(text.as_bytes())
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}
