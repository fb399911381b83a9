//! Harness for the kubectl-driven end-to-end tests.
//!
//! By default every test starts its own sandbox environment (API server, ECS mock, controllers;
//! see `ferroplane::environment`). With `FERROPLANE_E2E_KUBECONFIG` set, the same tests run
//! against that cluster instead: the CRDs are applied there, and the ECS mock and the controllers
//! run in the test process, watching only the test's namespace.
//!
//! Each test gets its own namespace with a Secret and a ProviderConfig `default` pointing at the
//! mock, and its own kubectl `--cache-dir`.

#![allow(dead_code)] // the harness serves the sandbox and the real-cluster modes; no test uses all of it

pub mod daemon;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use alibaba_mock::{AccessKey, DEFAULT_ACCOUNT_ID, InstanceSummary, MockConfig, MockServer};
use ferroplane::controllers::{self, Kind, Options};
use ferroplane::environment::{Environment, EnvironmentConfig};
use ferroplane_runtime::{Runtime, RuntimeConfig};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use tokio_util::sync::CancellationToken;

pub const ACCESS_KEY_ID: &str = "LTAIe2etestkey0001";
pub const ACCESS_KEY_SECRET: &str = "e2e-secret-never-logged-7f3a";

enum Backend {
    Sandbox(Box<Environment>),
    Cluster {
        mock: MockServer,
        stop: CancellationToken,
        controllers: tokio::task::JoinHandle<()>,
    },
}

pub struct E2e {
    backend: Option<Backend>,
    pub namespace: String,
    kubeconfig: PathBuf,
    client: kube::Client,
    _dir: tempfile::TempDir,
}

fn poll_interval() -> Duration {
    Duration::from_secs(2)
}

impl E2e {
    /// A fresh environment and namespace with credentials and ProviderConfig `default`.
    pub async fn start(kinds: &[Kind]) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let options = Options {
            kinds: kinds.to_vec(),
            poll_interval: poll_interval(),
            ..Options::default()
        };
        let namespace = format!("e2e-{}", &uuid::Uuid::new_v4().simple().to_string()[..10]);
        let (backend, kubeconfig, client) = match std::env::var_os("FERROPLANE_E2E_KUBECONFIG") {
            None => {
                let mut config = EnvironmentConfig::new(dir.path());
                config.transition_delay = Duration::from_millis(300);
                config.controllers = Some(options);
                let env = Environment::start(config)
                    .await
                    .expect("sandbox environment starts");
                env.mock().add_access_key(AccessKey::new(
                    ACCESS_KEY_ID,
                    ACCESS_KEY_SECRET,
                    DEFAULT_ACCOUNT_ID,
                ));
                let kubeconfig = env.info().kubeconfig.clone();
                let client = env.client().clone();
                (Backend::Sandbox(Box::new(env)), kubeconfig, client)
            }
            Some(path) => {
                let kubeconfig = PathBuf::from(path);
                let client = client_from_kubeconfig(&kubeconfig).await;
                apply_crds(&client).await;
                let mock = MockServer::start(
                    MockConfig::new(ACCESS_KEY_ID, ACCESS_KEY_SECRET)
                        .with_transition_delay(Duration::from_millis(300)),
                )
                .await
                .expect("ECS mock starts");
                let stop = CancellationToken::new();
                let runtime = Runtime::new(client.clone(), RuntimeConfig::default());
                let options = Options {
                    namespace: Some(namespace.clone()),
                    ..options
                };
                let token = stop.clone();
                let controllers = tokio::spawn(async move {
                    controllers::run(&runtime, &options, token).await;
                });
                (
                    Backend::Cluster {
                        mock,
                        stop,
                        controllers,
                    },
                    kubeconfig,
                    client,
                )
            }
        };
        let e2e = Self {
            backend: Some(backend),
            namespace,
            kubeconfig,
            client,
            _dir: dir,
        };
        e2e.create_namespace().await;
        e2e.apply(&format!(
            r#"
apiVersion: v1
kind: Secret
metadata:
  name: alibabacloud-credentials
stringData:
  accessKeyId: {ACCESS_KEY_ID}
  accessKeySecret: {ACCESS_KEY_SECRET}
---
apiVersion: alibabacloud.ferroplane.io/v1alpha1
kind: ProviderConfig
metadata:
  name: default
spec:
  credentials:
    source: Secret
    secretRef:
      name: alibabacloud-credentials
  endpoint: {endpoint}
"#,
            endpoint = e2e.mock().endpoint()
        ));
        e2e
    }

    pub fn mock(&self) -> &MockServer {
        match self.backend.as_ref().expect("running") {
            Backend::Sandbox(env) => env.mock(),
            Backend::Cluster { mock, .. } => mock,
        }
    }

    pub fn client(&self) -> &kube::Client {
        &self.client
    }

    /// Runs kubectl in the test's namespace with its own cache dir.
    pub fn kubectl(&self, args: &[&str], stdin: Option<&str>) -> Output {
        let mut command = Command::new("kubectl");
        command
            .env("KUBECONFIG", &self.kubeconfig)
            .arg("--cache-dir")
            .arg(self._dir.path().join("kubectl-cache"))
            .arg("--namespace")
            .arg(&self.namespace)
            .args(args)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command
            .spawn()
            .expect("kubectl runs (CI installs it; see .ci/run)");
        if let Some(text) = stdin {
            use std::io::Write as _;
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(text.as_bytes())
                .expect("write stdin");
        }
        child.wait_with_output().expect("kubectl output")
    }

    /// kubectl that must succeed; returns stdout.
    pub fn k(&self, args: &[&str]) -> String {
        let out = self.kubectl(args, None);
        assert!(
            out.status.success(),
            "kubectl {} failed: {}{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `kubectl apply -f -` that must succeed.
    pub fn apply(&self, yaml: &str) -> String {
        let out = self.kubectl(&["apply", "-f", "-"], Some(yaml));
        assert!(
            out.status.success(),
            "kubectl apply failed: {}\n{yaml}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `kubectl get <what> -o jsonpath=<path>`.
    pub fn jsonpath(&self, what: &str, path: &str) -> String {
        let out = self.kubectl(&["get", what, "-o", &format!("jsonpath={path}")], None);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits until `check` returns `Some`, polling every 200 ms, or panics with `what`.
    pub async fn eventually<T>(
        &self,
        what: &str,
        timeout: Duration,
        mut check: impl FnMut() -> Option<T>,
    ) -> T {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(value) = check() {
                return value;
            }
            assert!(
                Instant::now() < deadline,
                "timed out after {timeout:?} waiting for {what}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Waits until a jsonpath of an object equals `expected`.
    pub async fn wait_jsonpath(&self, what: &str, path: &str, expected: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let last = self.jsonpath(what, path);
            if last == expected {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what} {path} == {expected:?}; last {last:?}\n{}",
                self.k(&["describe", what])
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// The live mock instances tagged with the UID of `kind/name` in this namespace.
    pub fn instances_of(&self, object: &str) -> Vec<InstanceSummary> {
        let uid = self.jsonpath(object, "{.metadata.uid}");
        self.mock()
            .instances()
            .into_iter()
            .filter(|i| i.tags.get("ferroplane.io/uid").map(String::as_str) == Some(uid.as_str()))
            .collect()
    }

    pub fn instance(&self, id: &str) -> Option<InstanceSummary> {
        self.mock()
            .instances()
            .into_iter()
            .find(|i| i.instance_id == id)
    }

    async fn create_namespace(&self) {
        let namespaces: Api<Namespace> = Api::all(self.client.clone());
        let namespace = Namespace {
            metadata: kube::api::ObjectMeta {
                name: Some(self.namespace.clone()),
                ..Default::default()
            },
            ..Default::default()
        };
        namespaces
            .create(&PostParams::default(), &namespace)
            .await
            .expect("namespace created");
    }

    /// Stops the controllers and servers; on a real cluster also deletes the namespace.
    pub async fn finish(mut self) {
        match self.backend.take().expect("running") {
            Backend::Sandbox(env) => env.shutdown().await,
            Backend::Cluster {
                mock,
                stop,
                controllers,
            } => {
                let namespaces: Api<Namespace> = Api::all(self.client.clone());
                let _ = namespaces
                    .delete(&self.namespace, &DeleteParams::default())
                    .await;
                stop.cancel();
                let _ = controllers.await;
                mock.shutdown().await;
            }
        }
    }
}

async fn client_from_kubeconfig(path: &PathBuf) -> kube::Client {
    let kubeconfig =
        kube::config::Kubeconfig::read_from(path).expect("FERROPLANE_E2E_KUBECONFIG is readable");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .expect("kubeconfig is usable");
    kube::Client::try_from(config).expect("client")
}

async fn apply_crds(client: &kube::Client) {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in ferroplane_apis::crds() {
        let name = crd.metadata.name.clone().expect("named");
        api.patch(
            &name,
            &PatchParams::apply("ferroplane-e2e").force(),
            &Patch::Apply(&crd),
        )
        .await
        .expect("CRD applied");
    }
}
