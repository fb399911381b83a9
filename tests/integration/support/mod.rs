//! Harness for the kubectl-driven end-to-end tests, on ferroplane-testkit.
//!
//! The same test bodies run against two API servers (see `main.rs`): the sandbox and the real
//! Kubernetes control plane of `ferroplane-testenv`. Each test runs its body through [`on`],
//! which says which server the harness starts or joins.
//!
//! On the sandbox every test starts its own environment (API server, ECS mock, controllers; see
//! `ferroplane::environment`, which `ferroplane sandbox` runs). On the real control plane the
//! tests of one binary share one (`ferroplane_testkit::real_cluster::shared`) with ferroplane's
//! CRDs and deploy/'s RBAC installed; the ECS mock and the controllers run in the test process,
//! watching only the test's namespace, as ferroplane's ServiceAccount. With
//! `FERROPLANE_E2E_KUBECONFIG` set, the sandbox binary's tests run against that cluster instead
//! (CRDs applied there, the controllers with that kubeconfig).
//!
//! Each test gets its own namespace with a Secret and a ProviderConfig `default` pointing at the
//! mock, and its own kubectl `--cache-dir`.
//!
//! Neither server runs an ingress controller. The sandbox's simulator gives every Ingress the
//! address `192.0.2.1` as one would; on the real control plane a test that runs the Application
//! controller gets the same from `ferroplane_testkit::ingress::IngressStandIn`, watching its
//! namespace. Against an external cluster (`FERROPLANE_E2E_KUBECONFIG`) its own ingress
//! controller, if any, does it.

/// The mock's eventual consistency in the end-to-end suite.
pub const VISIBILITY_LAG: Duration = Duration::from_secs(1);

pub mod daemon;
pub mod helm;

tokio::task_local! {
    static SERVER: Server;
}

/// Runs a test body with `server` as the API server the harness uses.
pub async fn on(server: Server, body: impl Future<Output = ()>) {
    SERVER.scope(server, body).await
}

/// The API server of the running test.
pub fn server() -> Server {
    SERVER
        .try_with(|server| *server)
        .expect("test bodies run through support::on, which names their API server")
}
pub mod etcd_members;

/// The API server a test runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {
    /// `ferroplane::environment`'s in-memory API server, one per test.
    Sandbox,
    /// The real kube-apiserver, controller-manager, scheduler, etcd and kwok of
    /// `ferroplane-testenv`.
    RealControlPlane,
}

use std::path::PathBuf;
use std::time::Duration;

use alibaba_mock::{AccessKey, DEFAULT_ACCOUNT_ID, InstanceSummary, MockConfig, MockServer};
use ferroplane::controllers::{self, Kind, Options};
use ferroplane::environment::{Environment, EnvironmentConfig};
use ferroplane_runtime::{Runtime, RuntimeConfig};
use ferroplane_testkit::ingress::IngressStandIn;
use ferroplane_testkit::wait::Probe;
use ferroplane_testkit::{
    Controllers, Kubectl, KubectlOutput, apply_crds, client_from_kubeconfig, ecs_mock, eventually,
    real_cluster,
};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, PostParams};

pub const ACCESS_KEY_ID: &str = "LTAIe2etestkey0001";
pub const ACCESS_KEY_SECRET: &str = "e2e-secret-never-logged-7f3a";

/// How often the tests re-run a kubectl probe.
const KUBECTL_INTERVAL: Duration = Duration::from_millis(200);

enum Backend {
    Sandbox(Box<Environment>),
    Cluster {
        mock: MockServer,
        controllers: Controllers,
        /// On the real control plane, when the test runs the EtcdCluster controller.
        etcd: Option<etcd_members::EtcdHarness>,
        /// On the real control plane, which runs no ingress controller, when the test runs the
        /// Application controller: Ingresses get an address as the sandbox's do.
        _ingress: Option<IngressStandIn>,
    },
}

pub struct E2e {
    backend: Option<Backend>,
    pub namespace: String,
    kubectl: Kubectl,
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
        let external = std::env::var_os("FERROPLANE_E2E_KUBECONFIG").map(PathBuf::from);
        let (backend, kubeconfig, client) = match (server(), external) {
            (Server::RealControlPlane, _) => {
                let cluster = real_cluster::shared().await;
                let client = cluster.admin_client().await;
                let controller_client = cluster.controller_client().await;
                let mut options = options;
                // EtcdCluster's controller runs with real members (see `etcd_members`).
                if options.kinds.contains(&Kind::EtcdCluster) {
                    etcd_members::ensure_sample_release().await;
                }
                let mock = start_mock().await;
                let etcd = options.kinds.contains(&Kind::EtcdCluster).then(|| {
                    options.kinds.retain(|k| *k != Kind::EtcdCluster);
                    etcd_members::EtcdHarness::start(
                        client.clone(),
                        controller_runtime(controller_client.clone(), &options),
                        &namespace,
                        dir.path(),
                        &mock,
                    )
                });
                let ingress = options
                    .kinds
                    .contains(&Kind::Application)
                    .then(|| IngressStandIn::start(client.clone(), &namespace));
                let backend =
                    in_cluster(controller_client, &namespace, options, mock, etcd, ingress).await;
                (backend, cluster.admin_kubeconfig(), client)
            }
            (Server::Sandbox, None) => {
                let mut config = EnvironmentConfig::new(dir.path());
                config.transition_delay = Duration::from_millis(300);
                // ECS lists new instances late and released ones for a while: the suite must end
                // with no duplicate and no leak all the same.
                config.visibility_lag = VISIBILITY_LAG;
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
            (Server::Sandbox, Some(kubeconfig)) => {
                let client = client_from_kubeconfig(&kubeconfig).await;
                apply_crds(&client, ferroplane_apis::crds()).await;
                let mock = start_mock().await;
                let backend =
                    in_cluster(client.clone(), &namespace, options, mock, None, None).await;
                (backend, kubeconfig, client)
            }
        };
        let kubectl =
            Kubectl::new(kubeconfig, dir.path().join("kubectl-cache")).in_namespace(&namespace);
        let e2e = Self {
            backend: Some(backend),
            namespace,
            kubectl,
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
        ))
        .await;
        e2e
    }

    /// The test's (admin) client of the API server.
    pub fn client(&self) -> &kube::Client {
        &self.client
    }

    pub fn mock(&self) -> &MockServer {
        match self.backend.as_ref().expect("running") {
            Backend::Sandbox(env) => env.mock(),
            Backend::Cluster { mock, .. } => mock,
        }
    }

    /// The real etcd members of the test's namespace (real control plane, EtcdCluster kind).
    pub fn etcd_members(&self) -> &ferroplane_testenv::EtcdMembers {
        match self.backend.as_ref().expect("running") {
            Backend::Cluster {
                etcd: Some(etcd), ..
            } => &etcd.members,
            _ => panic!("real etcd members run only on the real control plane, for EtcdCluster"),
        }
    }

    /// The kubeconfig kubectl uses (the test's admin), for other clients such as the binary.
    pub fn kubeconfig(&self) -> &std::path::Path {
        self.kubectl.kubeconfig()
    }

    /// Runs kubectl in the test's namespace with its own cache dir.
    pub async fn kubectl(&self, args: &[&str], stdin: Option<&str>) -> KubectlOutput {
        match stdin {
            Some(input) => self.kubectl.run_with_input(args, input).await,
            None => self.kubectl.run(args).await,
        }
    }

    /// kubectl that must succeed; returns stdout.
    pub async fn k(&self, args: &[&str]) -> String {
        self.kubectl.ok(args).await
    }

    /// `kubectl apply -f -` that must succeed.
    pub async fn apply(&self, yaml: &str) -> String {
        self.kubectl.apply(yaml).await
    }

    /// `kubectl get <what> -o jsonpath=<path>`.
    pub async fn jsonpath(&self, what: &str, path: &str) -> String {
        self.kubectl.jsonpath(what, path).await
    }

    /// Re-runs `check` every 200 ms until it is done (`Some`, `Ok`, `true`), or panics with
    /// `what` and what an `Err` said last.
    pub async fn eventually<Fut>(
        &self,
        what: &str,
        timeout: Duration,
        check: impl FnMut() -> Fut,
    ) -> <Fut::Output as Probe>::Value
    where
        Fut: Future,
        Fut::Output: Probe,
    {
        eventually(what)
            .within(timeout)
            .every(KUBECTL_INTERVAL)
            .until_async(check)
            .await
    }

    /// Waits until a jsonpath of an object equals `expected`, looking again each time
    /// `kubectl get -w` reports a change of the object; on timeout says what kubectl describes.
    pub async fn wait_jsonpath(&self, what: &str, path: &str, expected: &str) {
        const WITHIN: Duration = Duration::from_secs(30);
        let mut changes = self.kubectl.changes(what);
        let waited = tokio::time::timeout(WITHIN, async {
            loop {
                let last = self.jsonpath(what, path).await;
                if last == expected {
                    return;
                }
                changes.next().await;
            }
        })
        .await;
        if waited.is_err() {
            let last = self.jsonpath(what, path).await;
            panic!(
                "{what} {path} == {expected:?} not seen within {WITHIN:?}; last: {last:?}\n{}",
                self.k(&["describe", what]).await
            );
        }
    }

    /// The live mock instances tagged with the UID of `kind/name` in this namespace.
    pub async fn instances_of(&self, object: &str) -> Vec<InstanceSummary> {
        let uid = self.jsonpath(object, "{.metadata.uid}").await;
        ecs_mock::instances_of(self.mock(), &uid)
    }

    pub fn instance(&self, id: &str) -> Option<InstanceSummary> {
        ecs_mock::instance(self.mock(), id)
    }

    /// ECS and VPC clients signed with the tenant's keys, to read what the mock holds the way
    /// the console would (VPCs, vSwitches and security groups as the cloud describes them).
    pub fn cloud(&self) -> (alibaba_sdk::ecs::EcsClient, alibaba_sdk::vpc::VpcClient) {
        use alibaba_sdk::credentials::Credentials;
        let endpoint = self.mock().endpoint();
        let ecs = alibaba_sdk::ecs::EcsClient::builder("cn-beijing")
            .credentials(Credentials::new(ACCESS_KEY_ID, ACCESS_KEY_SECRET))
            .endpoint(endpoint.clone())
            .build()
            .expect("ECS client of the mock");
        let vpc = alibaba_sdk::vpc::VpcClient::with_settings_of(
            &ecs,
            alibaba_sdk::endpoint::parse_endpoint(&endpoint).expect("the mock's endpoint"),
        )
        .expect("VPC client of the mock");
        (ecs, vpc)
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

    /// Stops the controllers and servers; on a cluster also deletes the namespace.
    pub async fn finish(mut self) {
        match self.backend.take().expect("running") {
            Backend::Sandbox(env) => env.shutdown().await,
            Backend::Cluster {
                mock,
                controllers,
                etcd,
                ..
            } => {
                let namespaces: Api<Namespace> = Api::all(self.client.clone());
                let _ = namespaces
                    .delete(&self.namespace, &DeleteParams::default())
                    .await;
                controllers.stop().await;
                if let Some(etcd) = etcd {
                    etcd.controller.stop().await;
                }
                mock.shutdown().await;
            }
        }
    }
}

/// The ECS mock and the controllers in the test process, against a cluster, watching only
/// `namespace`; `controller_client` is who they act as.
/// The ECS mock of a test on a real API server.
async fn start_mock() -> MockServer {
    ecs_mock::start(
        MockConfig::new(ACCESS_KEY_ID, ACCESS_KEY_SECRET)
            .with_transition_delay(Duration::from_millis(300))
            .with_visibility_lag(VISIBILITY_LAG),
    )
    .await
}

async fn in_cluster(
    controller_client: kube::Client,
    namespace: &str,
    options: Options,
    mock: MockServer,
    etcd: Option<etcd_members::EtcdHarness>,
    ingress: Option<IngressStandIn>,
) -> Backend {
    let runtime = controller_runtime(controller_client, &options);
    let mut options = Options {
        namespace: Some(namespace.to_owned()),
        ..options
    };
    // The ProviderConfig the test creates is namespaced and names the mock.
    options
        .allowed_endpoints
        .allow(&mock.endpoint())
        .expect("the mock's endpoint is a URL");
    let controllers = Controllers::spawn(runtime, |runtime, shutdown| async move {
        controllers::run(&runtime, &options, shutdown).await;
        Ok(())
    });
    Backend::Cluster {
        mock,
        controllers,
        etcd,
        _ingress: ingress,
    }
}

/// A runtime as the sandbox environment makes it: no client-side rate limit, the options' poll
/// interval and concurrency.
fn controller_runtime(client: kube::Client, options: &Options) -> Runtime {
    Runtime::new(
        client,
        RuntimeConfig {
            rate_limit: 0.0,
            controller: options.controller_config(),
            ..RuntimeConfig::default()
        },
    )
}
