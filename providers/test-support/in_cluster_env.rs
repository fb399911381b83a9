//! Shared by the in-cluster providers' end-to-end tests (`#[path]`-included, since the provider
//! crates may not depend on each other): a sandbox API server with one CRD installed, a
//! controller running in-process until `stop`, and kubectl pointed at it with its own cache.
//! The including test crate defines `EVENTUALLY_TIMEOUT`.

use std::future::Future;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use ferroplane_runtime::{Runtime, RuntimeConfig};
use ferroplane_sandbox::{Sandbox, SandboxConfig};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use tokio::sync::oneshot;

pub struct Env {
    sandbox: Sandbox,
    pub client: kube::Client,
    pub dir: tempfile::TempDir,
    kubeconfig: PathBuf,
    stop: Option<oneshot::Sender<()>>,
    controller: Option<tokio::task::JoinHandle<()>>,
}

impl Env {
    /// Starts the sandbox, installs `crd`, and spawns the controller that `run` returns; its
    /// second argument completes when the test calls [`Env::stop`].
    pub async fn start<Fut>(
        crd: CustomResourceDefinition,
        run: impl FnOnce(Runtime, Box<dyn Future<Output = ()> + Send + Sync + Unpin>) -> Fut,
    ) -> Self
    where
        Fut: Future<Output = ()> + Send + 'static,
    {
        let sandbox = Sandbox::start(SandboxConfig {
            workload_delay: Duration::from_millis(100),
            ..SandboxConfig::default()
        })
        .await
        .expect("sandbox starts");
        let client = kube::Client::try_from(kube::Config::new(sandbox.url().parse().expect("url")))
            .expect("client");
        let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
        crds.create(&PostParams::default(), &crd)
            .await
            .expect("CRD installed");
        let dir = tempfile::tempdir().expect("temp dir");
        let kubeconfig = sandbox.write_kubeconfig(dir.path()).expect("kubeconfig");
        let runtime = Runtime::new(
            client.clone(),
            RuntimeConfig {
                rate_limit: 0.0,
                ..RuntimeConfig::default()
            },
        );
        let (stop, stopped) = oneshot::channel::<()>();
        let stopped = Box::new(Box::pin(async {
            let _ = stopped.await;
        }));
        let controller = tokio::spawn(run(runtime, stopped));
        Self {
            sandbox,
            client,
            dir,
            kubeconfig,
            stop: Some(stop),
            controller: Some(controller),
        }
    }

    pub fn kubectl(&self, args: &[&str]) -> String {
        let output = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--cache-dir")
            .arg(self.dir.path().join("cache"))
            .args(args)
            .output()
            .expect("kubectl runs (install kubectl)");
        assert!(
            output.status.success(),
            "kubectl {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    pub fn api<K>(&self) -> Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
            + Clone
            + serde::de::DeserializeOwned
            + std::fmt::Debug,
    {
        Api::namespaced(self.client.clone(), "default")
    }

    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(handle) = self.controller.take() {
            let _ = tokio::time::timeout(Duration::from_secs(10), handle).await;
        }
        self.sandbox.shutdown().await;
    }
}

/// Polls `probe` every 100 ms until it returns `Some`, for at most `EVENTUALLY_TIMEOUT`.
pub async fn eventually<T, F, Fut>(what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let start = Instant::now();
    loop {
        if let Some(v) = probe().await {
            return v;
        }
        assert!(
            start.elapsed() < super::EVENTUALLY_TIMEOUT,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Path of a sample manifest in `deploy/samples/`.
pub fn sample(file: &str) -> String {
    format!("{}/../../deploy/samples/{file}", env!("CARGO_MANIFEST_DIR"))
}
