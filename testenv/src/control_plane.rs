//! Starting and stopping one control plane: etcd, then kube-apiserver, then the
//! controller-manager, the scheduler and kwok with its Nodes, each waited on until healthy.
//!
//! Health, in order: etcd's `/health`; the API server's `/readyz`; the controller-manager's and
//! the scheduler's `/healthz` on their loopback ports, plus the `default` ServiceAccount that the
//! controller-manager creates (pods cannot be created before it exists); every fake Node Ready.
//! Only then are `D/kubeconfig` and `D/ready` written.

use std::collections::BTreeMap;
use std::future::Future;
use std::net::TcpListener;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Node, ServiceAccount};
use kube::api::{ObjectMeta, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Api, Client, Config};

use crate::builder::{Binaries, Builder, human};
use crate::components::{self as comp, KWOK_NODE_ANNOTATION, Layout, Ports};
use crate::error::{Error, Result};
use crate::kubeconfig::{self, Credential};
use crate::pki::{self, Ca};
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
        let api: Api<ServiceAccount> = Api::namespaced(self.client.clone(), namespace);
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
    start(
        processes,
        layout,
        "kwok",
        &binaries.kwok,
        comp::kwok_args(layout, &binaries.kwok_stages),
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

/// D, made or cleared; a directory with other files in it is refused rather than emptied.
fn prepare_dir(dir: Option<&Path>) -> Result<(Layout, Option<tempfile::TempDir>)> {
    let (layout, tempdir) = match dir {
        Some(d) => (Layout::new(d), None),
        None => {
            let t = tempfile::Builder::new()
                .prefix("ferroplane-testenv-")
                .tempdir()
                .map_err(Error::io("creating a temporary directory"))?;
            (Layout::new(t.path()), Some(t))
        }
    };
    let d = &layout.dir;
    let has_files = std::fs::read_dir(d).is_ok_and(|mut e| e.next().is_some());
    if has_files {
        if !layout.marker().exists() {
            return Err(Error::Dir(format!(
                "{} is not empty and no control plane made it: give `--dir` a new or empty directory",
                d.display()
            )));
        }
        for entry in layout.entries() {
            if entry.is_dir() {
                std::fs::remove_dir_all(&entry)
            } else if entry.exists() {
                std::fs::remove_file(&entry)
            } else {
                Ok(())
            }
            .map_err(Error::io(format!("clearing {}", entry.display())))?;
        }
    }
    for sub in [
        d.join("pki"),
        d.join("kubeconfigs"),
        d.join("logs"),
        d.join("serviceaccounts"),
    ] {
        std::fs::create_dir_all(&sub).map_err(Error::io(format!("creating {}", sub.display())))?;
    }
    std::fs::write(
        layout.marker(),
        "made by ferroplane-testenv: `up --dir` clears what it wrote here before starting again\n",
    )
    .map_err(Error::io("writing the directory marker"))?;
    Ok((layout, tempdir))
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

fn write_pki(layout: &Layout) -> Result<Ca> {
    let ca = Ca::new("ferroplane-testenv-ca")?;
    let front_proxy_ca = Ca::new("ferroplane-testenv-front-proxy-ca")?;
    let front_proxy_client = front_proxy_ca.client(comp::FRONT_PROXY_CLIENT, None)?;
    std::fs::write(layout.pki("front-proxy-ca.crt"), &front_proxy_ca.cert_pem)
        .map_err(Error::io("writing front-proxy-ca.crt"))?;
    std::fs::write(
        layout.pki("front-proxy-client.crt"),
        &front_proxy_client.cert_pem,
    )
    .map_err(Error::io("writing front-proxy-client.crt"))?;
    write_private(
        &layout.pki("front-proxy-client.key"),
        &front_proxy_client.key_pem,
    )?;
    let apiserver = ca.serving(
        "kube-apiserver",
        &[
            comp::LOOPBACK,
            "localhost",
            comp::KUBERNETES_SERVICE_IP,
            "kubernetes",
            "kubernetes.default",
            "kubernetes.default.svc",
            "kubernetes.default.svc.cluster.local",
        ],
    )?;
    let kcm = ca.serving("kube-controller-manager", &[comp::LOOPBACK, "localhost"])?;
    let scheduler = ca.serving("kube-scheduler", &[comp::LOOPBACK, "localhost"])?;
    std::fs::write(layout.pki("ca.crt"), &ca.cert_pem).map_err(Error::io("writing ca.crt"))?;
    write_private(&layout.pki("ca.key"), &ca.key_pem)?;
    for (name, pair) in [
        ("apiserver", &apiserver),
        ("controller-manager", &kcm),
        ("scheduler", &scheduler),
    ] {
        std::fs::write(layout.pki(&format!("{name}.crt")), &pair.cert_pem)
            .map_err(Error::io(format!("writing {name}.crt")))?;
        write_private(&layout.pki(&format!("{name}.key")), &pair.key_pem)?;
    }
    let (sa_private, sa_public) = pki::service_account_keys()?;
    write_private(&layout.pki("sa.key"), &sa_private)?;
    std::fs::write(layout.pki("sa.pub"), sa_public).map_err(Error::io("writing sa.pub"))?;
    Ok(ca)
}

/// The admin's kubeconfig (copied to D/kubeconfig once all is healthy) and one per component, each with its own client certificate: the
/// controller-manager and the scheduler as the users Kubernetes' default RBAC grants to them,
/// kwok (which writes any node's and pod's status) in `system:masters`.
fn write_kubeconfigs(layout: &Layout, server: &str, ca: &Ca) -> Result<()> {
    let users: [(&str, PathBuf, &str, Option<&str>); 4] = [
        (
            "admin",
            layout.component_kubeconfig("admin"),
            "ferroplane-testenv-admin",
            Some("system:masters"),
        ),
        (
            "kube-controller-manager",
            layout.component_kubeconfig("kube-controller-manager"),
            "system:kube-controller-manager",
            None,
        ),
        (
            "kube-scheduler",
            layout.component_kubeconfig("kube-scheduler"),
            "system:kube-scheduler",
            None,
        ),
        (
            "kwok",
            layout.component_kubeconfig("kwok"),
            "kwok-controller",
            Some("system:masters"),
        ),
    ];
    for (context, path, user, group) in users {
        let pair = ca.client(user, group)?;
        let text = kubeconfig::render(
            &format!("testenv-{context}"),
            server,
            &ca.cert_pem,
            Credential::ClientCertificate {
                cert_pem: &pair.cert_pem,
                key_pem: &pair.key_pem,
            },
            None,
        );
        write_private(&path, &text)?;
    }
    Ok(())
}

/// Writes a file only its owner can read: it holds a key or a token.
fn write_private(path: &Path, text: &str) -> Result<()> {
    use std::io::Write as _;
    let _ = std::fs::remove_file(path);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(Error::io(format!("creating {}", path.display())))?;
    f.write_all(text.as_bytes())
        .map_err(Error::io(format!("writing {}", path.display())))
}

async fn admin_client(kubeconfig: &Path) -> Result<Client> {
    let file = Kubeconfig::read_from(kubeconfig).map_err(|e| Error::Kubeconfig(e.to_string()))?;
    let config = Config::from_custom_kubeconfig(file, &KubeConfigOptions::default())
        .await
        .map_err(|e| Error::Kubeconfig(e.to_string()))?;
    Ok(Client::try_from(config)?)
}

/// A Node for kwok to play: no taints (ordinary pods schedule onto it), the labels a kubelet
/// sets, and the annotation kwok selects its nodes by.
pub fn fake_node(name: &str) -> Node {
    let labels = BTreeMap::from([
        ("kubernetes.io/hostname".to_string(), name.to_string()),
        ("kubernetes.io/os".to_string(), "linux".to_string()),
        ("kubernetes.io/arch".to_string(), "amd64".to_string()),
        ("type".to_string(), "kwok".to_string()),
    ]);
    let annotations = BTreeMap::from([(
        KWOK_NODE_ANNOTATION.0.to_string(),
        KWOK_NODE_ANNOTATION.1.to_string(),
    )]);
    Node {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            labels: Some(labels),
            annotations: Some(annotations),
            ..ObjectMeta::default()
        },
        ..Node::default()
    }
}

async fn register_nodes(client: &Client, count: usize) -> Result<Vec<String>> {
    let api: Api<Node> = Api::all(client.clone());
    let mut names = Vec::with_capacity(count);
    for i in 0..count {
        let name = format!("fake-node-{i}");
        api.create(&PostParams::default(), &fake_node(&name))
            .await?;
        names.push(name);
    }
    Ok(names)
}

pub fn is_ready(node: &Node) -> bool {
    node.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fake_node_is_handed_to_kwok_and_takes_pods() {
        let n = fake_node("fake-node-0");
        let annotations = n.metadata.annotations.unwrap();
        assert_eq!(
            annotations.get("kwok.x-k8s.io/node").map(String::as_str),
            Some("fake")
        );
        assert!(n.spec.and_then(|s| s.taints).is_none());
        assert!(!is_ready(&Node::default()));
    }

    #[test]
    fn a_directory_with_foreign_files_is_refused() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("notes.txt"), "mine").unwrap();
        let err = prepare_dir(Some(t.path())).expect_err("refused");
        assert!(err.to_string().contains("not empty"), "{err}");
        assert!(t.path().join("notes.txt").exists());
    }

    #[test]
    fn a_directory_of_an_earlier_run_is_cleared() {
        let t = tempfile::tempdir().unwrap();
        prepare_dir(Some(t.path())).unwrap();
        std::fs::write(t.path().join("ready"), "{}").unwrap();
        prepare_dir(Some(t.path())).unwrap();
        assert!(!t.path().join("ready").exists());
        assert!(t.path().join("logs").is_dir());
    }

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
