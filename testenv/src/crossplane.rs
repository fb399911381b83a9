//! Crossplane core running against a control plane, with the composition function of this
//! crate (`composition_function`) reachable without pods.
//!
//! What [`Crossplane::start`] does, in order:
//! 1. builds (once) core, the function, and applies core's CRDs (`cluster/crds` of its module,
//!    server-side) and the namespace `crossplane-system`, waiting until every CRD is Established;
//! 2. makes a CA, core's client certificate and the function's server certificate for
//!    127.0.0.1, both signed by it (core always calls functions over mTLS, and checks the
//!    function's certificate against the CA in its `--tls-client-certs-dir`);
//! 3. starts the function on a free loopback port and waits until it accepts connections;
//! 4. starts `crossplane core start` with the admin kubeconfig (`KUBECONFIG`: core has no flag
//!    for it; admin because the composition engine checks its own access with
//!    SelfSubjectAccessReviews), webhooks off (no server certificate; Usage protection does not
//!    run) and the package runtime `External` (no Deployments for packages), and waits for its
//!    readiness probe;
//! 5. registers the function: a `Function` and an Active `FunctionRevision`, both paused
//!    (`crossplane.io/paused`) so the package manager pulls no image, and the revision's
//!    `status.endpoint` set to the function's loopback port, which is where core dials.
//!
//! Core's metrics and health ports bind every interface (`:PORT`, no flag narrows them): they
//! are chosen free on every interface, and serve nothing but metrics and probes.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{Value, json};

use crate::builder::Builder;
use crate::components::LOOPBACK;
use crate::control_plane::Access;
use crate::credentials::write_private;
use crate::error::{Error, Result};
use crate::pki::Ca;
use crate::process::Processes;

/// The namespace core runs in (its `--namespace` default).
pub const CROSSPLANE_NAMESPACE: &str = "crossplane-system";
/// The field manager of what this module applies.
const MANAGER: &str = "ferroplane-testenv";
/// Core's label that names a revision's package.
const PACKAGE_LABEL: &str = "pkg.crossplane.io/package";
/// How long core, the function or the CRDs may take to become ready on a loaded machine.
const READY_WITHIN: Duration = Duration::from_secs(180);

/// Core and the function, running until dropped.
pub struct Crossplane {
    processes: Processes,
    core_log: PathBuf,
    function_log: PathBuf,
    function_endpoint: String,
    function_name: String,
}

impl Crossplane {
    /// Starts core against the control plane of `access` and registers the composition
    /// function as `function_name`; `dir` holds certificates, caches and logs.
    pub async fn start(access: &Access, dir: &Path, function_name: &str) -> Result<Self> {
        let builder = Builder::new(None);
        let (core, crds, function) = tokio::task::spawn_blocking(move || {
            let (core, crds) = builder.ensure_crossplane()?;
            let function = builder.ensure_composition_function()?;
            Ok::<_, Error>((core, crds, function))
        })
        .await
        .expect("the build thread does not panic")?;
        let client = access.client().await?;
        apply_crds(&client, &crds).await?;
        apply(
            &client,
            &json!({"apiVersion": "v1", "kind": "Namespace",
                    "metadata": {"name": CROSSPLANE_NAMESPACE}}),
        )
        .await?;

        let tls = Tls::write(dir)?;
        let function_port = free_port(LOOPBACK)?;
        let function_endpoint = format!("{LOOPBACK}:{function_port}");
        let mut processes = Processes::new()?;
        let function_log = dir.join("composition-function.log");
        let mut cmd = Command::new(&function);
        cmd.arg(format!("--address={function_endpoint}"))
            .arg(format!("--tls-certs-dir={}", tls.function.display()));
        processes.start_command("composition-function", cmd, function_log.clone())?;
        wait_until("the composition function accepts connections", || {
            TcpStream::connect((LOOPBACK, function_port)).is_ok()
        })
        .await?;

        let health_port = free_port("0.0.0.0")?;
        let metrics_port = free_port("0.0.0.0")?;
        let xpkg_cache = dir.join("xpkg-cache");
        std::fs::create_dir_all(&xpkg_cache).map_err(Error::io("creating core's package cache"))?;
        let core_log = dir.join("crossplane.log");
        let mut cmd = Command::new(&core);
        cmd.args([
            "core",
            "start",
            "--enable-webhooks=false",
            "--package-runtime=External",
        ])
        .arg(format!("--tls-client-certs-dir={}", tls.core.display()))
        .arg(format!("--xpkg-cache-dir={}", xpkg_cache.display()))
        .arg(format!("--metrics-port={metrics_port}"))
        .arg(format!("--health-probe-port={health_port}"))
        // Compositions react to their composed resources' watches; the poll is a backstop.
        .arg("--poll-interval=15s")
        .env("KUBECONFIG", access.kubeconfig_path());
        processes.start_command("crossplane", cmd, core_log.clone())?;
        let mut started = Self {
            processes,
            core_log,
            function_log,
            function_endpoint,
            function_name: function_name.to_owned(),
        };
        started.wait_for_core(health_port).await?;
        started.register_function(&client).await?;
        Ok(started)
    }

    /// Where the function serves (127.0.0.1:PORT).
    pub fn function_endpoint(&self) -> &str {
        &self.function_endpoint
    }

    /// Core's log (stdout and stderr).
    pub fn core_log(&self) -> &Path {
        &self.core_log
    }

    /// The function's log.
    pub fn function_log(&self) -> &Path {
        &self.function_log
    }

    /// Ok while core and the function run; else which ended, with the end of its log.
    pub fn check_running(&mut self) -> Result<()> {
        self.processes.check_all_running()
    }

    async fn wait_for_core(&mut self, health_port: u16) -> Result<()> {
        let url = format!("http://{LOOPBACK}:{health_port}/readyz");
        let http = reqwest::Client::new();
        let started = Instant::now();
        loop {
            self.processes.check_all_running()?;
            let ok = http
                .get(&url)
                .timeout(Duration::from_secs(5))
                .send()
                .await
                .is_ok_and(|r| r.status().is_success());
            if ok {
                return Ok(());
            }
            if started.elapsed() > READY_WITHIN {
                return Err(Error::NotReady {
                    what: format!("crossplane core ({url})"),
                    seconds: READY_WITHIN.as_secs(),
                    log: self.core_log.clone(),
                });
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// The Function and its Active revision, paused, the revision's endpoint the function's.
    async fn register_function(&self, client: &Client) -> Result<()> {
        let name = &self.function_name;
        let paused = json!({"crossplane.io/paused": "true"});
        let image = format!("ferroplane.invalid/testenv/{name}:fixture");
        apply(
            client,
            &json!({"apiVersion": "pkg.crossplane.io/v1", "kind": "Function",
                    "metadata": {"name": name, "annotations": paused},
                    "spec": {"package": image}}),
        )
        .await?;
        let revision = format!("{name}-fixture");
        apply(
            client,
            &json!({"apiVersion": "pkg.crossplane.io/v1", "kind": "FunctionRevision",
                    "metadata": {"name": revision, "annotations": paused,
                                 "labels": {PACKAGE_LABEL: name}},
                    "spec": {"desiredState": "Active", "image": image, "revision": 1}}),
        )
        .await?;
        let api = dynamic_api(
            client,
            "pkg.crossplane.io",
            "v1",
            "FunctionRevision",
            "functionrevisions",
        );
        let status = json!({"status": {"endpoint": self.function_endpoint,
                                       "capabilities": ["composition"]}});
        api.patch_status(&revision, &PatchParams::default(), &Patch::Merge(status))
            .await?;
        Ok(())
    }
}

/// The two certificate directories: core's client side and the function's server side.
struct Tls {
    core: PathBuf,
    function: PathBuf,
}

impl Tls {
    fn write(dir: &Path) -> Result<Self> {
        let ca = Ca::new("ferroplane-testenv-crossplane")?;
        let client = ca.client("crossplane", None)?;
        let server = ca.serving("composition-function", &[LOOPBACK])?;
        let tls = Self {
            core: dir.join("crossplane-tls"),
            function: dir.join("function-tls"),
        };
        for (path, pair) in [(&tls.core, &client), (&tls.function, &server)] {
            std::fs::create_dir_all(path)
                .map_err(Error::io(format!("creating {}", path.display())))?;
            std::fs::write(path.join("ca.crt"), &ca.cert_pem)
                .map_err(Error::io("writing ca.crt"))?;
            std::fs::write(path.join("tls.crt"), &pair.cert_pem)
                .map_err(Error::io("writing tls.crt"))?;
            write_private(&path.join("tls.key"), &pair.key_pem)?;
        }
        Ok(tls)
    }
}

/// A port nothing listens on at `address` right now.
fn free_port(address: &str) -> Result<u16> {
    TcpListener::bind((address, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(Error::io(format!("finding a free port on {address}")))
}

async fn wait_until(what: &str, mut ready: impl FnMut() -> bool) -> Result<()> {
    let started = Instant::now();
    while !ready() {
        if started.elapsed() > READY_WITHIN {
            return Err(Error::Crossplane(format!(
                "{what}: not after {} s",
                READY_WITHIN.as_secs()
            )));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(())
}

fn dynamic_api(
    client: &Client,
    group: &str,
    version: &str,
    kind: &str,
    plural: &str,
) -> Api<DynamicObject> {
    let resource =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural);
    Api::all_with(client.clone(), &resource)
}

/// Server-side applies one cluster-scoped object given as JSON.
async fn apply(client: &Client, object: &Value) -> Result<()> {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let kind = object["kind"].as_str().unwrap_or_default();
    let plural = format!("{}s", kind.to_lowercase());
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    dynamic_api(client, group, version, kind, &plural)
        .patch(
            name,
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(object),
        )
        .await?;
    Ok(())
}

/// Applies every CRD of core's `cluster/crds` and waits until each is Established.
async fn apply_crds(client: &Client, dir: &Path) -> Result<()> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let mut names = Vec::new();
    let entries =
        std::fs::read_dir(dir).map_err(Error::io(format!("reading {}", dir.display())))?;
    for entry in entries {
        let path = entry.map_err(Error::io("listing core's CRDs"))?.path();
        let text = std::fs::read_to_string(&path)
            .map_err(Error::io(format!("reading {}", path.display())))?;
        let crd: CustomResourceDefinition = serde_saphyr::from_str(&text)
            .map_err(|e| Error::Crossplane(format!("{}: {e}", path.display())))?;
        let name = crd.metadata.name.clone().unwrap_or_default();
        api.patch(
            &name,
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(&crd),
        )
        .await?;
        names.push(name);
    }
    let started = Instant::now();
    for name in names {
        loop {
            let crd = api.get(&name).await?;
            let established = crd.status.and_then(|s| s.conditions).is_some_and(|c| {
                c.iter()
                    .any(|c| c.type_ == "Established" && c.status == "True")
            });
            if established {
                break;
            }
            if started.elapsed() > READY_WITHIN {
                return Err(Error::Crossplane(format!(
                    "CRD {name} not Established after {} s",
                    READY_WITHIN.as_secs()
                )));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    Ok(())
}
