//! Starting and stopping one control plane: etcd, then kube-apiserver, then the
//! controller-manager, the scheduler and kwok with its Nodes, each waited on until healthy.
//!
//! Health, in order: etcd's `/health`; the API server's `/readyz`; the controller-manager's and
//! the scheduler's `/healthz` on their loopback ports, plus the `default` ServiceAccount that the
//! controller-manager creates (pods cannot be created before it exists); every fake Node Ready.
//! Only then are `D/kubeconfig` and `D/ready` written.

use std::future::Future;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Node, ServiceAccount};
use kube::api::{ObjectMeta, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Api, Client, Config};

use crate::builder::{Binaries, Builder, human};
use crate::components::{self as comp, Ports};
use crate::credentials::{write_kubeconfigs, write_pki, write_private};
use crate::error::{Error, Result};
use crate::kubeconfig::{self, Credential};
use crate::layout::{Layout, prepare_dir};
use crate::nodes::{is_ready, register_nodes};
use crate::process::Processes;
use crate::versions::Versions;

/// How to start a control plane.
#[derive(Debug, Clone)]
pub struct Options {
    /// Its directory D (kubeconfig, ready, logs, certificates, etcd's data). `None`: a temporary
    /// directory, removed when the control plane stops.
    pub dir: Option<PathBuf>,
    /// How many fake nodes to register.
    pub nodes: usize,
    /// Where built programs are cached; `None`: [`Builder::default_cache_dir`].
    pub cache_dir: Option<PathBuf>,
    /// How long each component may take to become healthy.
    pub component_timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            dir: None,
            nodes: 2,
            cache_dir: None,
            component_timeout: Duration::from_secs(180),
        }
    }
}

/// A running control plane. Dropping it stops every process it started.
pub struct ControlPlane {
    // Declared first so it drops first: the processes stop before their directory goes.
    processes: Processes,
    layout: Layout,
    server: String,
    ca_pem: String,
    client: Client,
    nodes: Vec<String>,
    versions: Versions,
    started_in: Duration,
    _tempdir: Option<tempfile::TempDir>,
}

impl ControlPlane {
    /// Builds what is missing, starts every component on 127.0.0.1 and returns once all are
    /// healthy.
    pub async fn start(opts: Options) -> Result<Self> {
        let builder = Builder::new(opts.cache_dir.clone());
        let versions = builder.versions().clone();
        let binaries = tokio::task::spawn_blocking(move || builder.ensure_all())
            .await
            .map_err(|e| Error::io("building")(std::io::Error::other(e)))??;
        let started = Instant::now();
        let (layout, tempdir) = prepare_dir(opts.dir.as_deref())?;
        let ports = free_ports()?;
        let server = comp::apiserver_url(&ports);
        let ca = write_pki(&layout)?;
        write_kubeconfigs(&layout, &server, &ca)?;

        let mut processes = Processes::new()?;
        let timeout = opts.component_timeout;
        let http = reqwest::Client::builder()
            .no_proxy()
            .tls_certs_only([reqwest::Certificate::from_pem(ca.cert_pem.as_bytes())
                .map_err(|e| Error::Kubeconfig(format!("the CA certificate: {e}")))?])
            .timeout(Duration::from_secs(5))
            .build()
            .map_err(|e| Error::Kubeconfig(format!("an HTTP client: {e}")))?;

        start(
            &mut processes,
            &layout,
            "etcd",
            &binaries.etcd,
            comp::etcd_args(&layout, &ports),
        )?;
        let etcd_health = format!("{}/health", comp::etcd_url(&ports));
        wait_until(
            &mut processes,
            "etcd",
            "etcd's /health",
            timeout,
            || async {
                match http.get(&etcd_health).send().await {
                    Ok(r) if r.status().is_success() => {
                        r.text().await.is_ok_and(|t| t.contains("\"true\""))
                    }
                    _ => false,
                }
            },
        )
        .await?;

        start(
            &mut processes,
            &layout,
            "kube-apiserver",
            &binaries.kube_apiserver,
            comp::apiserver_args(&layout, &ports),
        )?;
        // /readyz answers anyone (system:public-info-viewer): plain HTTPS with the CA will do.
        let readyz = format!("{server}/readyz");
        wait_until(
            &mut processes,
            "kube-apiserver",
            "kube-apiserver's /readyz",
            timeout,
            || async {
                match http.get(&readyz).send().await {
                    Ok(r) if r.status().is_success() => {
                        r.text().await.is_ok_and(|t| t.trim() == "ok")
                    }
                    _ => false,
                }
            },
        )
        .await?;
        let admin_kubeconfig = layout.component_kubeconfig("admin");
        let client = admin_client(&admin_kubeconfig).await?;
        // The admin's client certificate works, or the start fails here, saying so.
        client.apiserver_version().await?;

        start_rest(&mut processes, &layout, &binaries, &ports)?;
        let nodes = register_nodes(&client, opts.nodes).await?;

        for (name, port) in [
            ("kube-controller-manager", ports.controller_manager),
            ("kube-scheduler", ports.scheduler),
        ] {
            let url = format!("https://{}:{port}/healthz", comp::LOOPBACK);
            let what = format!("{name}'s /healthz");
            wait_until(&mut processes, name, &what, timeout, || async {
                match http.get(&url).send().await {
                    Ok(r) => r.status().is_success(),
                    Err(_) => false,
                }
            })
            .await?;
        }
        let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), "default");
        wait_until(
            &mut processes,
            "kube-controller-manager",
            "the default ServiceAccount, which kube-controller-manager creates",
            timeout,
            || async { matches!(accounts.get_opt("default").await, Ok(Some(_))) },
        )
        .await?;
        let node_api: Api<Node> = Api::all(client.clone());
        wait_until(
            &mut processes,
            "kwok",
            "every fake node Ready, which kwok reports",
            timeout,
            || async {
                let mut ready = 0;
                for n in &nodes {
                    if node_api
                        .get_opt(n)
                        .await
                        .ok()
                        .flatten()
                        .is_some_and(|n| is_ready(&n))
                    {
                        ready += 1;
                    }
                }
                ready == nodes.len()
            },
        )
        .await?;

        // Written only now, so that whoever waits for D/kubeconfig finds a working cluster.
        let admin = std::fs::read_to_string(&admin_kubeconfig)
            .map_err(Error::io("reading the admin kubeconfig"))?;
        write_private(&layout.kubeconfig(), &admin)?;
        let started_in = started.elapsed();
        let ready = serde_json::json!({
            "server": server,
            "kubeconfig": layout.kubeconfig(),
            "nodes": nodes,
            "kubernetes": versions.kubernetes,
            "etcd": versions.etcd,
            "kwok": versions.kwok,
            "startSeconds": (started_in.as_secs_f64() * 10.0).round() / 10.0,
        });
        std::fs::write(layout.ready(), format!("{ready:#}\n"))
            .map_err(Error::io("writing D/ready"))?;
        tracing::info!(dir = %layout.dir.display(), took = %human(started_in), "control plane ready");
        Ok(Self {
            processes,
            layout,
            server,
            ca_pem: ca.cert_pem,
            client,
            nodes,
            versions,
            started_in,
            _tempdir: tempdir,
        })
    }

    /// The admin's kubeconfig (user in `system:masters`).
    pub fn kubeconfig_path(&self) -> PathBuf {
        self.layout.kubeconfig()
    }

    /// A client authenticated as the admin.
    pub fn client(&self) -> Client {
        self.client.clone()
    }

    /// The API server's URL (https, 127.0.0.1).
    pub fn server_url(&self) -> &str {
        &self.server
    }

    /// The control plane's directory D.
    pub fn dir(&self) -> &Path {
        &self.layout.dir
    }

    /// Where each program's log is: `logs/<program>.log` under D.
    pub fn log_path(&self, program: &str) -> PathBuf {
        self.layout.log(program)
    }

    /// The names of the fake nodes.
    pub fn nodes(&self) -> &[String] {
        &self.nodes
    }

    pub fn versions(&self) -> &Versions {
        &self.versions
    }

    /// How long the start took once the programs were built.
    pub fn started_in(&self) -> Duration {
        self.started_in
    }

    /// Ok while every program runs; else which one ended, and the end of its log.
    pub fn check_running(&mut self) -> Result<()> {
        self.processes.check_all_running()
    }

    /// Writes a kubeconfig that authenticates as the ServiceAccount `namespace/name` (which must
    /// exist) with a token from the TokenRequest API, valid for 24 hours, and returns its path.
    /// The token is written only into that file (mode 0600), never logged.
    pub async fn service_account_kubeconfig(&self, namespace: &str, name: &str) -> Result<PathBuf> {
        self.access()
            .issue_service_account_kubeconfig(&self.client, namespace, name)
            .await
    }

    /// What another task or thread (with a tokio runtime of its own) needs to reach this control
    /// plane: [`Access`] makes its clients in the caller's runtime.
    pub fn access(&self) -> Access {
        Access {
            server: self.server.clone(),
            ca_pem: self.ca_pem.clone(),
            layout: self.layout.clone(),
        }
    }

    /// Stops every process (SIGTERM, then SIGKILL after 10 s) and removes `D/ready`; a
    /// temporary directory is removed too.
    pub fn stop(mut self) {
        self.processes.stop_all(Duration::from_secs(10));
        let _ = std::fs::remove_file(self.layout.ready());
    }
}

impl Drop for ControlPlane {
    fn drop(&mut self) {
        self.processes.stop_all(Duration::from_secs(5));
        let _ = std::fs::remove_file(self.layout.ready());
    }
}

/// The addresses and credentials of a running control plane, without its processes: cheap to
/// clone, usable from any tokio runtime (a kube client is bound to the runtime that made it, so
/// every client is made by the caller).
#[derive(Debug, Clone)]
pub struct Access {
    server: String,
    ca_pem: String,
    layout: Layout,
}

impl Access {
    /// The admin's kubeconfig (user in `system:masters`).
    pub fn kubeconfig_path(&self) -> PathBuf {
        self.layout.kubeconfig()
    }

    /// The API server's URL (https, 127.0.0.1).
    pub fn server_url(&self) -> &str {
        &self.server
    }

    /// The control plane's directory D.
    pub fn dir(&self) -> &Path {
        &self.layout.dir
    }

    /// A new admin client, bound to the caller's tokio runtime.
    pub async fn client(&self) -> Result<Client> {
        admin_client(&self.layout.kubeconfig()).await
    }

    /// [`ControlPlane::service_account_kubeconfig`], with an admin client of the caller's.
    pub async fn service_account_kubeconfig(&self, namespace: &str, name: &str) -> Result<PathBuf> {
        let admin = self.client().await?;
        self.issue_service_account_kubeconfig(&admin, namespace, name)
            .await
    }

    async fn issue_service_account_kubeconfig(
        &self,
        admin: &Client,
        namespace: &str,
        name: &str,
    ) -> Result<PathBuf> {
        let api: Api<ServiceAccount> = Api::namespaced(admin.clone(), namespace);
        let request = TokenRequest {
            metadata: ObjectMeta::default(),
            spec: TokenRequestSpec {
                audiences: Vec::new(),
                expiration_seconds: Some(24 * 3600),
                bound_object_ref: None,
            },
            status: None,
        };
        let issued = api
            .create_token_request(name, &PostParams::default(), &request)
            .await?;
        let token = issued
            .status
            .map(|s| s.token)
            .ok_or_else(|| Error::Kubeconfig(format!("no token issued for {namespace}/{name}")))?;
        let path = self.layout.service_account_kubeconfig(namespace, name);
        let text = kubeconfig::render(
            &format!("{namespace}.{name}"),
            &self.server,
            &self.ca_pem,
            Credential::Token(&token),
            Some(namespace),
        );
        write_private(&path, &text)?;
        Ok(path)
    }
}

fn start(
    processes: &mut Processes,
    layout: &Layout,
    name: &'static str,
    program: &Path,
    args: Vec<String>,
) -> Result<()> {
    processes.start(name, program, &args, layout.log(name))?;
    Ok(())
}

fn start_rest(
    processes: &mut Processes,
    layout: &Layout,
    binaries: &Binaries,
    ports: &Ports,
) -> Result<()> {
    start(
        processes,
        layout,
        "kube-controller-manager",
        &binaries.kube_controller_manager,
        comp::controller_manager_args(layout, ports),
    )?;
    start(
        processes,
        layout,
        "kube-scheduler",
        &binaries.kube_scheduler,
        comp::scheduler_args(layout, ports),
    )?;
    let stages = std::fs::read_to_string(&binaries.kwok_stages).map_err(Error::io(format!(
        "reading {}",
        binaries.kwok_stages.display()
    )))?;
    std::fs::write(
        layout.kwok_stages(),
        crate::builder::stages_without(&stages, crate::builder::KWOK_DROPPED_STAGE),
    )
    .map_err(Error::io("writing kwok's stages"))?;
    start(
        processes,
        layout,
        "kwok",
        &binaries.kwok,
        comp::kwok_args(layout, &layout.kwok_stages()),
    )
}

/// Polls `probe` every 200 ms until `what` holds, failing at once when any process has ended;
/// a timeout points at `program`'s log.
async fn wait_until<F, Fut>(
    processes: &mut Processes,
    program: &'static str,
    what: &str,
    timeout: Duration,
    mut probe: F,
) -> Result<()>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let started = Instant::now();
    loop {
        processes.check_all_running()?;
        if probe().await {
            tracing::info!(took = %human(started.elapsed()), "{what}: ok");
            return Ok(());
        }
        if started.elapsed() > timeout {
            let log = processes
                .get_mut(program)
                .map(|c| c.log.clone())
                .unwrap_or_default();
            return Err(Error::NotReady {
                what: what.to_string(),
                seconds: timeout.as_secs(),
                log,
            });
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Five free loopback ports, all held until all are chosen so that none is handed out twice.
fn free_ports() -> Result<Ports> {
    let listeners: Vec<TcpListener> = (0..5)
        .map(|_| TcpListener::bind((comp::LOOPBACK, 0)))
        .collect::<std::io::Result<_>>()
        .map_err(Error::io("finding free ports on 127.0.0.1"))?;
    let port = |i: usize| listeners[i].local_addr().map(|a| a.port());
    let ports = (|| {
        Ok::<_, std::io::Error>(Ports {
            etcd_client: port(0)?,
            etcd_peer: port(1)?,
            apiserver: port(2)?,
            controller_manager: port(3)?,
            scheduler: port(4)?,
        })
    })()
    .map_err(Error::io("finding free ports on 127.0.0.1"))?;
    Ok(ports)
}

async fn admin_client(kubeconfig: &Path) -> Result<Client> {
    let file = Kubeconfig::read_from(kubeconfig).map_err(|e| Error::Kubeconfig(e.to_string()))?;
    let config = Config::from_custom_kubeconfig(file, &KubeConfigOptions::default())
        .await
        .map_err(|e| Error::Kubeconfig(e.to_string()))?;
    Ok(Client::try_from(config)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_ports_are_distinct() {
        let p = free_ports().unwrap();
        let mut all = vec![
            p.etcd_client,
            p.etcd_peer,
            p.apiserver,
            p.controller_manager,
            p.scheduler,
        ];
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 5);
    }
}
