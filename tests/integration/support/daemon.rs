//! An API server and an ECS mock in the test process, and `ferroplane run` as a separate process
//! against them (with debug logs captured to a file), so tests can SIGKILL the controller and
//! read everything it logged.
//!
//! The API server is the sandbox, or (`super::server()`) a real control plane of the test's own:
//! these tests put their objects in `default` and list cluster-wide, so they do not share one.
//! Either way the controller runs as ferroplane's ServiceAccount with deploy/'s RBAC, and
//! `default` holds the mock's credentials Secret and the ProviderConfig `default` naming it.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use alibaba_mock::{ErrorInjection, Faults, MockConfig, MockServer};
use ferroplane::environment::{
    CREDENTIALS_SECRET, Environment, EnvironmentConfig, PROVIDER_CONFIG,
};
use ferroplane_apis::alibabacloud::{ECSInstance, ECSInstanceParameters, ECSInstanceSpec};
use ferroplane_apis::common::DeletionPolicy;
use ferroplane_testkit::conditions::is_ready;
use ferroplane_testkit::real_cluster::Dedicated;
use ferroplane_testkit::wait::Seen;
use ferroplane_testkit::{ecs_mock, eventually, secrets};
use futures::{StreamExt, TryStreamExt};
use kube::api::{Api, DeleteParams, ListParams, PostParams};

use super::Server;

/// The namespace of the credentials, the ProviderConfig and the tests' objects.
const NAMESPACE: &str = "default";

/// The API server and the mock the controller process runs against.
pub enum DaemonEnv {
    Sandbox(Box<Environment>),
    Real {
        // Declared first: the mock stops before the control plane.
        mock: MockServer,
        cluster: Box<Dedicated>,
    },
}

impl DaemonEnv {
    /// The ECS mock, for its statistics and fault injection.
    pub fn mock(&self) -> &MockServer {
        match self {
            Self::Sandbox(env) => env.mock(),
            Self::Real { mock, .. } => mock,
        }
    }

    fn controller_kubeconfig(&self) -> PathBuf {
        match self {
            Self::Sandbox(env) => env.info().controller_kubeconfig.clone(),
            Self::Real { cluster, .. } => cluster.cluster().controller_kubeconfig().to_owned(),
        }
    }

    async fn shutdown(self) {
        match self {
            Self::Sandbox(env) => env.shutdown().await,
            Self::Real { mock, cluster } => {
                mock.shutdown().await;
                drop(cluster);
            }
        }
    }
}

/// The API server + mock, and at most one controller process at a time.
pub struct Daemon {
    pub env: DaemonEnv,
    client: kube::Client,
    dir: tempfile::TempDir,
    child: Option<tokio::process::Child>,
}

impl Daemon {
    pub async fn start(transition_delay: Duration) -> Self {
        let mut dir = tempfile::tempdir().expect("temp dir");
        // `FERROPLANE_E2E_KEEP_LOGS=1` keeps the controller's log (and says where) for a failure
        // to be read afterwards.
        if std::env::var_os("FERROPLANE_E2E_KEEP_LOGS").is_some() {
            dir.disable_cleanup(true);
            eprintln!(
                "controller log kept: {}",
                dir.path().join("controller.log").display()
            );
        }
        let mut config = EnvironmentConfig::new(dir.path());
        config.transition_delay = transition_delay;
        config.controllers = None;
        let (env, client) = match super::server() {
            Server::Sandbox => {
                let env = Environment::start(config)
                    .await
                    .expect("environment starts");
                let client = env.client().clone();
                (DaemonEnv::Sandbox(Box::new(env)), client)
            }
            Server::RealControlPlane => {
                let cluster = Dedicated::start().await;
                let client = cluster.cluster().admin_client().await;
                let (id, secret) = (
                    "LTAIreal0daemon0001",
                    uuid::Uuid::new_v4().simple().to_string(),
                );
                let mock = ecs_mock::start(
                    MockConfig::new(id, &secret)
                        .with_transition_delay(config.transition_delay)
                        .with_visibility_lag(config.visibility_lag),
                )
                .await;
                secrets::put(
                    &client,
                    NAMESPACE,
                    CREDENTIALS_SECRET,
                    &[("accessKeyId", id), ("accessKeySecret", &secret)],
                )
                .await;
                ecs_mock::create_provider_config(
                    &client,
                    NAMESPACE,
                    PROVIDER_CONFIG,
                    CREDENTIALS_SECRET,
                    None,
                    &mock.endpoint(),
                )
                .await;
                let cluster = Box::new(cluster);
                (DaemonEnv::Real { mock, cluster }, client)
            }
        };
        Self {
            env,
            client,
            dir,
            child: None,
        }
    }

    /// An admin client.
    pub fn client(&self) -> &kube::Client {
        &self.client
    }

    /// Cloud faults for the reliability tests: each call throttled with probability 0.30, else
    /// answered 503 with probability 0.05, plus `scripted` answers. The rates are drawn per call,
    /// so a run could meet few of one kind; the scripted ones happen on every run.
    pub fn inject_faults(&self, scripted: &[(&str, &str, u32)]) {
        let mock = self.env.mock();
        mock.set_faults(Faults {
            throttle_rate: 0.30,
            error_rate: 0.05,
            ..Faults::default()
        })
        .expect("faults accepted");
        for &(code, action, times) in scripted {
            mock.inject_error(ErrorInjection::new(code, Some(action), times))
                .expect("injection accepted");
        }
    }

    pub fn api(&self) -> Api<ECSInstance> {
        Api::namespaced(self.client().clone(), NAMESPACE)
    }

    /// Starts `ferroplane run` (debug logs appended to `controller.log`).
    pub fn spawn_controller(&mut self) {
        assert!(self.child.is_none(), "one controller at a time");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())
            .expect("log file");
        let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_ferroplane"))
            .args([
                "run",
                "--kinds",
                "ecsinstance",
                "--metrics-addr",
                "127.0.0.1:0",
            ])
            // The `default` ProviderConfig is namespaced and names the mock.
            .args(["--allow-endpoint", &self.env.mock().endpoint()])
            .args([
                "--poll-interval",
                "2s",
                "--rate-limit",
                "0",
                "--log-format",
                "json",
            ])
            // ferroplane's ServiceAccount: a verb deploy/ does not grant fails the controller.
            .env("KUBECONFIG", self.env.controller_kubeconfig())
            .env(
                "RUST_LOG",
                "debug,hyper=info,h2=info,tower=info,rustls=info",
            )
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(log))
            .kill_on_drop(true)
            .spawn()
            .expect("ferroplane run starts");
        self.child = Some(child);
    }

    /// SIGKILL, no graceful shutdown.
    pub async fn kill_controller(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.start_kill().expect("kill");
            child.wait().await.expect("reaped");
        }
    }

    pub fn log_path(&self) -> PathBuf {
        self.dir.path().join("controller.log")
    }

    pub async fn finish(mut self) {
        self.kill_controller().await;
        self.env.shutdown().await;
    }
}

pub fn instance(name: &str, deletion_policy: DeletionPolicy) -> ECSInstance {
    ECSInstance::new(
        name,
        ECSInstanceSpec {
            deletion_policy,
            management_policies: ferroplane_apis::common::default_management_policies(),
            provider_config_ref: Default::default(),
            write_connection_secret_to_ref: None,
            for_provider: ECSInstanceParameters {
                region_id: "cn-beijing".into(),
                image_id: "centos_7_8_x64_20G_alibase_20200519.vhd".into(),
                instance_type: "ecs.g6.large".into(),
                instance_name: Some(name.to_owned()),
                internet_max_bandwidth_out: Some(1),
                v_switch_id: alibaba_mock::defaults::first_vswitch_id("cn-beijing"),
                security_group_ids: Some(vec![alibaba_mock::defaults::security_group_id(
                    "cn-beijing",
                )]),
                ..ECSInstanceParameters::default()
            },
        },
    )
}

pub async fn create_many(api: &Api<ECSInstance>, names: &[String]) {
    futures::stream::iter(names.iter().cloned())
        .map(|name| {
            let api = api.clone();
            async move {
                api.create(
                    &PostParams::default(),
                    &instance(&name, DeletionPolicy::Delete),
                )
                .await
            }
        })
        .buffer_unordered(16)
        .try_collect::<Vec<_>>()
        .await
        .expect("objects created");
}

pub async fn delete_many(api: &Api<ECSInstance>, names: &[String]) {
    futures::stream::iter(names.iter().cloned())
        .map(|name| {
            let api = api.clone();
            async move {
                api.delete(&name, &DeleteParams::default())
                    .await
                    .map(|_| ())
            }
        })
        .buffer_unordered(16)
        .try_collect::<Vec<_>>()
        .await
        .expect("objects deleted");
}

/// Waits until all `n` objects are Ready, or panics saying how far it got.
pub async fn wait_all_ready(api: &Api<ECSInstance>, n: usize, timeout: Duration) {
    eventually(format!("all {n} ECSInstances Ready"))
        .within(timeout)
        .every(Duration::from_millis(250))
        .until_async(|| async {
            let list = api.list(&ListParams::default()).await.expect("list");
            let ready = list.items.iter().filter(|o| is_ready(*o)).count();
            if ready == n {
                return Ok(());
            }
            let stuck: Vec<String> = list
                .items
                .iter()
                .filter(|o| !is_ready(*o))
                .take(3)
                .map(|o| format!("{:?}", o.status))
                .collect();
            Err(Seen(format!("only {ready} of {n} Ready; e.g. {stuck:#?}")))
        })
        .await;
}

/// Waits until no ECSInstance is left.
pub async fn wait_all_gone(api: &Api<ECSInstance>, timeout: Duration) {
    eventually("no ECSInstance left")
        .within(timeout)
        .every(Duration::from_millis(250))
        .until_async(|| async {
            let left = api
                .list(&ListParams::default())
                .await
                .expect("list")
                .items
                .len();
            if left == 0 {
                Ok(())
            } else {
                Err(Seen(format!("{left} ECSInstances still there")))
            }
        })
        .await;
}
