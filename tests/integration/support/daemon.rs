//! A sandbox and an ECS mock in the test process, and `ferroplane run` as a separate process
//! against them (with debug logs captured to a file), so tests can SIGKILL the controller and
//! read everything it logged.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use ferroplane::environment::{Environment, EnvironmentConfig};
use ferroplane_apis::alibabacloud::{ECSInstance, ECSInstanceParameters, ECSInstanceSpec};
use ferroplane_apis::common::DeletionPolicy;
use ferroplane_testkit::conditions::is_ready;
use ferroplane_testkit::eventually;
use ferroplane_testkit::wait::Seen;
use futures::{StreamExt, TryStreamExt};
use kube::api::{Api, DeleteParams, ListParams, PostParams};

/// The sandbox + mock, and at most one controller process at a time.
pub struct Daemon {
    pub env: Environment,
    dir: tempfile::TempDir,
    child: Option<tokio::process::Child>,
    starts: u32,
}

impl Daemon {
    pub async fn start(transition_delay: Duration) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut config = EnvironmentConfig::new(dir.path());
        config.transition_delay = transition_delay;
        config.controllers = None;
        let env = Environment::start(config)
            .await
            .expect("environment starts");
        Self {
            env,
            dir,
            child: None,
            starts: 0,
        }
    }

    pub fn client(&self) -> &kube::Client {
        self.env.client()
    }

    pub fn api(&self) -> Api<ECSInstance> {
        Api::namespaced(self.client().clone(), "default")
    }

    /// Starts `ferroplane run` (debug logs appended to `controller.log`).
    pub fn spawn_controller(&mut self) {
        assert!(self.child.is_none(), "one controller at a time");
        self.starts += 1;
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
            .args(["--allow-endpoint", &self.env.info().ecs_endpoint])
            .args([
                "--poll-interval",
                "2s",
                "--rate-limit",
                "0",
                "--log-format",
                "json",
            ])
            .env("KUBECONFIG", &self.env.info().kubeconfig)
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

    pub fn controller_starts(&self) -> u32 {
        self.starts
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
