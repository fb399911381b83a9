//! The sandbox environment: the in-memory API server and the ECS mock on 127.0.0.1, the CRDs,
//! a Secret with the mock's credentials and the `default` ProviderConfig pointing at the mock,
//! and (optionally) every controller in this process. `ferroplane sandbox`, the end-to-end tests
//! and the benchmark all start it the same way.
//!
//! With workloads simulated, EtcdCluster members are simulated too
//! (`ferroplane_sandbox_etcd`): the sandbox runs no pods, so no etcd could answer.
//!
//! The controllers run as ferroplane's ServiceAccount (`controller.kubeconfig`), bound to the
//! cluster RBAC of deploy/ for the kinds they run, which the sandbox enforces as a cluster does.

use std::path::{Path, PathBuf};
use std::time::Duration;

use alibaba_mock::{MockConfig, MockServer};
use anyhow::Context as _;
use ferroplane_apis::alibabacloud::{
    ConnectionSettings, CredentialsSecretRef, CredentialsSource, ProviderConfig,
    ProviderConfigSpec, ProviderCredentials,
};
use ferroplane_apis::deploy;
use ferroplane_runtime::{Metrics, Runtime, RuntimeConfig};
use ferroplane_sandbox::{Sandbox, SandboxConfig};
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ObjectMeta, PostParams};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::controllers::{self, EtcdMembership, Options};

/// Name of the Secret holding the mock's credentials, in namespace `default`.
pub const CREDENTIALS_SECRET: &str = "alibabacloud-credentials";
/// Name of the ProviderConfig pointing at the mock, in namespace `default`.
pub const PROVIDER_CONFIG: &str = "default";
const NAMESPACE: &str = "default";

/// How to start the environment.
#[derive(Debug, Clone)]
pub struct EnvironmentConfig {
    /// Where `kubeconfig` and `sandbox.json` are written.
    pub dir: PathBuf,
    /// API server port on 127.0.0.1; 0 picks a free one.
    pub api_port: u16,
    /// ECS mock port on 127.0.0.1; 0 picks a free one.
    pub ecs_port: u16,
    /// How long ECS instances stay Pending, Starting or Stopping in the mock.
    pub transition_delay: Duration,
    /// How late the mock lists new instances and unlists released ones, as ECS does.
    pub visibility_lag: Duration,
    /// Let the API server mark Deployments and StatefulSets ready.
    pub simulate_workloads: bool,
    /// Controllers to run in this process; `None` runs none (a separate `ferroplane run` may).
    pub controllers: Option<Options>,
}

impl EnvironmentConfig {
    /// The defaults of `ferroplane sandbox`: free ports, 2 s transitions, a 1 s visibility lag,
    /// every controller.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            api_port: 0,
            ecs_port: 0,
            transition_delay: Duration::from_secs(2),
            visibility_lag: Duration::from_secs(1),
            simulate_workloads: true,
            controllers: Some(Options {
                poll_interval: Duration::from_secs(30),
                ..Options::default()
            }),
        }
    }
}

/// What `sandbox.json` records, for scripts and tests.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxInfo {
    pub kubeconfig: PathBuf,
    /// The controller's kubeconfig: ferroplane's ServiceAccount, limited to deploy/'s RBAC.
    pub controller_kubeconfig: PathBuf,
    pub api_server: String,
    pub ecs_endpoint: String,
}

/// A running environment. Stop it with [`Environment::shutdown`].
pub struct Environment {
    sandbox: Sandbox,
    mock: MockServer,
    client: kube::Client,
    info: SandboxInfo,
    stop_controllers: CancellationToken,
    controllers: Option<JoinHandle<()>>,
}

impl Environment {
    /// Starts everything and returns once the CRDs, the Secret and the ProviderConfig exist and
    /// the controllers (if any) are started.
    pub async fn start(config: EnvironmentConfig) -> anyhow::Result<Self> {
        let sandbox = Sandbox::start(SandboxConfig {
            port: config.api_port,
            simulate_workloads: config.simulate_workloads,
            ..SandboxConfig::default()
        })
        .await
        .context("cannot start the sandbox API server")?;

        let (access_key_id, access_key_secret) = mock_credentials();
        let mut mock_config = MockConfig::new(&access_key_id, &access_key_secret)
            .with_transition_delay(config.transition_delay)
            .with_visibility_lag(config.visibility_lag);
        mock_config.listen = ([127, 0, 0, 1], config.ecs_port).into();
        let mock = MockServer::start(mock_config)
            .await
            .context("cannot start the ECS mock")?;

        std::fs::create_dir_all(&config.dir)
            .with_context(|| format!("cannot create {}", config.dir.display()))?;
        let kubeconfig = sandbox
            .write_kubeconfig(&config.dir)
            .context("cannot write the kubeconfig")?;
        let kubeconfig = std::path::absolute(&kubeconfig).unwrap_or(kubeconfig);
        let kinds = config
            .controllers
            .as_ref()
            .map_or_else(controllers::Kind::all, |o| o.kinds.clone());
        let controller_kubeconfig = install_rbac(&sandbox, &config.dir, &kinds)?;
        let info = SandboxInfo {
            kubeconfig,
            controller_kubeconfig,
            api_server: sandbox.url(),
            ecs_endpoint: mock.endpoint(),
        };

        let client = client_for(&info.api_server)?;
        install_crds(&client).await?;
        create_provider_config(
            &client,
            &info.ecs_endpoint,
            &access_key_id,
            &access_key_secret,
        )
        .await?;
        write_info(&config.dir, &info)?;
        crate::sandbox_access::SandboxAccess {
            endpoint: info.ecs_endpoint.clone(),
            access_key_id: access_key_id.clone(),
            access_key_secret: access_key_secret.clone(),
        }
        .write(&config.dir)?;

        let mut controller_options = config.controllers;
        if let Some(options) = controller_options.as_mut() {
            // The `default` ProviderConfig is namespaced and names the mock: allow its endpoint.
            options
                .allowed_endpoints
                .allow(&info.ecs_endpoint)
                .context("the ECS mock's endpoint is not a URL")?;
        }
        let stop_controllers = CancellationToken::new();
        let controller_client = match controller_options {
            Some(_) => Some(client_from_kubeconfig(&info.controller_kubeconfig).await?),
            None => None,
        };
        let simulate_workloads = config.simulate_workloads;
        let controllers = controller_options
            .zip(controller_client)
            .map(|(options, client)| {
                let runtime = Runtime::with_metrics(
                    client,
                    RuntimeConfig {
                        rate_limit: 0.0,
                        controller: options.controller_config(),
                        ..RuntimeConfig::default()
                    },
                    Metrics::new(),
                );
                let stop = stop_controllers.clone();
                // The sandbox's pods run no etcd: with its workloads simulated, so are the
                // EtcdCluster members (without, no pod is ever ready and nothing answers).
                let membership = if simulate_workloads {
                    EtcdMembership::Simulated
                } else {
                    EtcdMembership::Etcd
                };
                tokio::spawn(async move {
                    controllers::run_with(&runtime, &options, membership, stop).await
                })
            });

        Ok(Self {
            sandbox,
            mock,
            client,
            info,
            stop_controllers,
            controllers,
        })
    }

    /// Paths and addresses, as written to `sandbox.json`.
    pub fn info(&self) -> &SandboxInfo {
        &self.info
    }

    /// A client of the sandbox API server.
    pub fn client(&self) -> &kube::Client {
        &self.client
    }

    /// The ECS mock, for its statistics and fault injection.
    pub fn mock(&self) -> &MockServer {
        &self.mock
    }

    /// The API server, for its write counters.
    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    /// Stops the controllers (letting running reconciles finish), then the servers.
    pub async fn shutdown(self) {
        self.stop_controllers.cancel();
        if let Some(task) = self.controllers
            && let Err(error) = task.await
        {
            tracing::error!(%error, "the controllers task failed");
        }
        self.mock.shutdown().await;
        self.sandbox.shutdown().await;
    }
}

/// A kube client for an API server URL on 127.0.0.1, with `default` as its namespace.
pub fn client_for(api_server: &str) -> anyhow::Result<kube::Client> {
    let url = api_server
        .parse()
        .with_context(|| format!("bad API server URL {api_server}"))?;
    let config = kube::Config::new(url);
    kube::Client::try_from(config).context("cannot build a client for the sandbox")
}

/// deploy/'s cluster RBAC for `kinds` (with the common, leader-election and connection-Secret
/// roles) and ferroplane's ServiceAccount; writes `dir/controller.kubeconfig` for that account
/// and returns its path.
fn install_rbac(
    sandbox: &Sandbox,
    dir: &Path,
    kinds: &[controllers::Kind],
) -> anyhow::Result<PathBuf> {
    let providers: Vec<deploy::Provider> = kinds.iter().map(|k| k.provider()).collect();
    let mut objects = Vec::new();
    for manifest in deploy::cluster_rbac(&providers) {
        objects.extend(manifest.objects()?);
    }
    sandbox
        .create_objects(&objects)
        .context("cannot create deploy/'s RBAC in the sandbox")?;
    let path = dir.join("controller.kubeconfig");
    let yaml = sandbox.service_account_kubeconfig_yaml(
        deploy::SERVICE_ACCOUNT_NAMESPACE,
        deploy::SERVICE_ACCOUNT,
    );
    {
        use std::io::Write as _;
        use std::os::unix::fs::OpenOptionsExt as _;
        // The token is the controller's identity: readable by its owner only.
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&path)
            .and_then(|mut file| file.write_all(yaml.as_bytes()))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(std::path::absolute(&path).unwrap_or(path))
}

/// A client from a kubeconfig file, with its current context.
async fn client_from_kubeconfig(path: &Path) -> anyhow::Result<kube::Client> {
    let kubeconfig = kube::config::Kubeconfig::read_from(path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .with_context(|| format!("{} is not a usable kubeconfig", path.display()))?;
    kube::Client::try_from(config).context("cannot build a client for the sandbox")
}

/// A fresh, random key pair for the mock: nothing outside this process knows it.
fn mock_credentials() -> (String, String) {
    let id = uuid::Uuid::new_v4().simple().to_string();
    let secret = uuid::Uuid::new_v4().simple().to_string();
    (format!("LTAIsandbox{}", &id[..12]), secret)
}

async fn install_crds(client: &kube::Client) -> anyhow::Result<()> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in ferroplane_apis::crds() {
        let name = crd.metadata.name.clone().unwrap_or_default();
        api.create(&PostParams::default(), &crd)
            .await
            .with_context(|| format!("cannot install CRD {name}"))?;
    }
    Ok(())
}

/// Creates the credentials Secret and the `default` ProviderConfig pointing at `endpoint` (the
/// mock) in namespace `default`; the benchmark sets up its cluster the same way.
pub async fn create_provider_config(
    client: &kube::Client,
    endpoint: &str,
    access_key_id: &str,
    access_key_secret: &str,
) -> anyhow::Result<()> {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), NAMESPACE);
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(CREDENTIALS_SECRET.to_owned()),
            ..ObjectMeta::default()
        },
        string_data: Some(
            [
                ("accessKeyId".to_owned(), access_key_id.to_owned()),
                ("accessKeySecret".to_owned(), access_key_secret.to_owned()),
            ]
            .into(),
        ),
        ..Secret::default()
    };
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .context("cannot create the credentials Secret")?;

    let configs: Api<ProviderConfig> = Api::namespaced(client.clone(), NAMESPACE);
    let config = ProviderConfig::new(
        PROVIDER_CONFIG,
        ProviderConfigSpec {
            credentials: ProviderCredentials {
                source: CredentialsSource::Secret,
                secret_ref: Some(CredentialsSecretRef {
                    name: CREDENTIALS_SECRET.to_owned(),
                    namespace: None,
                    key: None,
                }),
                rrsa: None,
                ram_role_arn: None,
                instance_role: None,
            },
            connection: ConnectionSettings {
                endpoint: Some(endpoint.to_owned()),
                ..ConnectionSettings::default()
            },
        },
    );
    configs
        .create(&PostParams::default(), &config)
        .await
        .context("cannot create the default ProviderConfig")?;
    Ok(())
}

fn write_info(dir: &Path, info: &SandboxInfo) -> anyhow::Result<()> {
    let path = dir.join("sandbox.json");
    let text = serde_json::to_string_pretty(info).context("cannot encode sandbox.json")?;
    std::fs::write(&path, text + "\n").with_context(|| format!("cannot write {}", path.display()))
}
