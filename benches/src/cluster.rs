//! Where the benchmark runs (`--cluster`): the sandbox API server in this process, or the real
//! control plane of `ferroplane-testenv` (kube-apiserver 1.37, etcd, controller-manager; built
//! on first use). Either way the ECS mock runs here with the mock's credentials Secret and the
//! ProviderConfig `default` in `default`.
//!
//! Kubernetes writes are counted by the server: the sandbox's own counters, or the real
//! kube-apiserver's `apiserver_request_total` from `/metrics`, as differences from the last
//! [`Cluster::reset_writes`].

use std::path::PathBuf;
use std::time::Duration;

use alibaba_mock::{MockConfig, MockServer};
use anyhow::Context as _;
use ferroplane::environment::{self, Environment, EnvironmentConfig};
use ferroplane_testenv::ControlPlane;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use kube::runtime::wait::{await_condition, conditions};

/// `--cluster`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ClusterKind {
    /// The sandbox API server, in this process.
    Sandbox,
    /// The real control plane of ferroplane-testenv.
    Real,
}

use ferroplane_testenv::Writes;

pub enum Cluster {
    Sandbox {
        env: Box<Environment>,
        _dir: tempfile::TempDir,
    },
    Real {
        // Declared first: the mock stops before the control plane.
        mock: MockServer,
        control_plane: Box<ControlPlane>,
        baseline: Writes,
    },
}

impl Cluster {
    pub async fn start(kind: ClusterKind) -> anyhow::Result<Self> {
        match kind {
            ClusterKind::Sandbox => {
                let dir = tempfile::tempdir()?;
                let mut config = EnvironmentConfig::new(dir.path());
                config.transition_delay = Duration::ZERO;
                config.simulate_workloads = false;
                config.controllers = None;
                let env = Environment::start(config).await?;
                Ok(Self::Sandbox {
                    env: Box::new(env),
                    _dir: dir,
                })
            }
            ClusterKind::Real => {
                let control_plane = ControlPlane::start(ferroplane_testenv::Options::default())
                    .await
                    .context("the real control plane (ferroplane-testenv) did not start")?;
                let client = control_plane.client();
                install_crds(&client).await?;
                let id = format!(
                    "LTAIbench{}",
                    &uuid::Uuid::new_v4().simple().to_string()[..12]
                );
                let secret = uuid::Uuid::new_v4().simple().to_string();
                let mock = MockServer::start(
                    MockConfig::new(&id, &secret)
                        .with_transition_delay(Duration::ZERO)
                        .with_visibility_lag(Duration::from_secs(1)),
                )
                .await
                .context("cannot start the ECS mock")?;
                environment::create_provider_config(&client, &mock.endpoint(), &id, &secret)
                    .await?;
                let baseline = real_writes(&client).await?;
                Ok(Self::Real {
                    mock,
                    control_plane: Box::new(control_plane),
                    baseline,
                })
            }
        }
    }

    /// An admin client.
    pub fn client(&self) -> kube::Client {
        match self {
            Self::Sandbox { env, .. } => env.client().clone(),
            Self::Real { control_plane, .. } => control_plane.client(),
        }
    }

    pub fn mock(&self) -> &MockServer {
        match self {
            Self::Sandbox { env, .. } => env.mock(),
            Self::Real { mock, .. } => mock,
        }
    }

    /// The admin's kubeconfig, for the controller process.
    pub fn kubeconfig(&self) -> PathBuf {
        match self {
            Self::Sandbox { env, .. } => env.info().kubeconfig.clone(),
            Self::Real { control_plane, .. } => control_plane.kubeconfig_path(),
        }
    }

    pub fn ecs_endpoint(&self) -> String {
        self.mock().endpoint()
    }

    /// What the server says it is, for the report.
    pub fn describe(&self) -> String {
        match self {
            Self::Sandbox { .. } => "the sandbox API server".to_owned(),
            Self::Real { control_plane, .. } => format!(
                "the real kube-apiserver {} (etcd {})",
                control_plane.versions().kubernetes,
                control_plane.versions().etcd
            ),
        }
    }

    pub async fn reset_writes(&mut self) -> anyhow::Result<()> {
        match self {
            Self::Sandbox { env, .. } => env.sandbox().reset_writes(),
            Self::Real {
                control_plane,
                baseline,
                ..
            } => *baseline = real_writes(&control_plane.client()).await?,
        }
        Ok(())
    }

    /// Writes since the last reset, by (verb, resource[/subresource]).
    pub async fn writes(&self) -> anyhow::Result<Writes> {
        match self {
            Self::Sandbox { env, .. } => Ok(env.sandbox().writes()),
            Self::Real {
                control_plane,
                baseline,
                ..
            } => {
                let now = real_writes(&control_plane.client()).await?;
                Ok(now
                    .into_iter()
                    .filter_map(|(key, n)| {
                        let delta = n - baseline.get(&key).copied().unwrap_or(0);
                        (delta > 0).then_some((key, delta))
                    })
                    .collect())
            }
        }
    }

    pub async fn shutdown(self) {
        match self {
            Self::Sandbox { env, .. } => env.shutdown().await,
            Self::Real {
                mock,
                control_plane,
                ..
            } => {
                mock.shutdown().await;
                control_plane.stop();
            }
        }
    }
}

async fn install_crds(client: &kube::Client) -> anyhow::Result<()> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in ferroplane_apis::crds() {
        let name = crd.metadata.name.clone().unwrap_or_default();
        api.create(&PostParams::default(), &crd)
            .await
            .with_context(|| format!("cannot install CRD {name}"))?;
        tokio::time::timeout(
            Duration::from_secs(30),
            await_condition(api.clone(), &name, conditions::is_crd_established()),
        )
        .await
        .with_context(|| format!("CRD {name} not Established within 30 s"))??;
    }
    Ok(())
}

/// The kube-apiserver's write counters (`apiserver_request_total`), keyed as the sandbox keys
/// its own.
async fn real_writes(client: &kube::Client) -> anyhow::Result<Writes> {
    ferroplane_testenv::read_apiserver_writes(client)
        .await
        .context("cannot read the kube-apiserver's /metrics")
}
