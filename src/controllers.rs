//! Which controllers a process runs, and running them until a shutdown token fires.

use std::time::Duration;

use clap::ValueEnum;
use ferroplane_runtime::requeue::RequeuePolicy;
use ferroplane_runtime::{ControllerConfig, Runtime};
use tokio_util::sync::CancellationToken;

/// A kind ferroplane can reconcile (`--kinds`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, ValueEnum)]
pub enum Kind {
    /// The Alibaba Cloud kinds (ECSInstance, VPC, VSwitch, SecurityGroup, SecurityGroupRule,
    /// Disk, KeyPair, EIP, EIPAssociation, NATGateway, SNATEntry, DNATEntry), with
    /// ProviderConfig and ClusterProviderConfig.
    #[value(name = "ecsinstance")]
    EcsInstance,
    /// EtcdCluster (StatefulSet, Services and PodDisruptionBudget, membership through etcd) and
    /// EtcdBackup (snapshots in OSS).
    #[value(name = "etcdcluster")]
    EtcdCluster,
    /// Application: Deployment, Service and Ingress.
    #[value(name = "application")]
    Application,
}

impl Kind {
    /// Every kind, the default of `--kinds`.
    pub fn all() -> Vec<Kind> {
        Kind::value_variants().to_vec()
    }

    /// The provider whose RBAC in deploy/ this kind needs.
    pub fn provider(self) -> ferroplane_apis::deploy::Provider {
        use ferroplane_apis::deploy::Provider;
        match self {
            Kind::EcsInstance => Provider::Alibaba,
            Kind::EtcdCluster => Provider::Etcd,
            Kind::Application => Provider::Application,
        }
    }
}

/// Settings shared by all controllers of a process.
#[derive(Debug, Clone)]
pub struct Options {
    /// Kinds to run.
    pub kinds: Vec<Kind>,
    /// Watch only this namespace, for every kind (the managed objects, their children and the
    /// Secrets and ProviderConfigs they use); `None` watches all.
    pub namespace: Option<String>,
    /// How often a resource is observed when nothing changes.
    pub poll_interval: Duration,
    /// Reconciles of one kind running at once.
    pub max_concurrent_reconciles: u16,
    /// Coalesce ECS observations into `DescribeInstances` calls of up to 100 IDs.
    pub batch_describe: bool,
    /// Endpoints a namespaced ProviderConfig may name besides `https://*.aliyuncs.com`
    /// (`--allow-endpoint`; the sandbox adds its ECS mock).
    pub allowed_endpoints: provider_alibaba::EndpointAllowList,
    /// Lifetime and rotation of the CAs made for EtcdClusters with generated TLS
    /// (`--etcd-ca-validity-days`, `--etcd-ca-renew-before-days`).
    pub etcd_ca: provider_etcd::tls::certs::CaPolicy,
    /// Image of ferroplane's steps in EtcdCluster restore Jobs (`--tools-image`).
    pub tools_image: String,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            kinds: Kind::all(),
            namespace: None,
            poll_interval: Duration::from_secs(60),
            max_concurrent_reconciles: 16,
            batch_describe: true,
            allowed_endpoints: provider_alibaba::EndpointAllowList::default(),
            etcd_ca: provider_etcd::tls::certs::CaPolicy::default(),
            tools_image: provider_etcd::controller::default_tools_image(),
        }
    }
}

impl Options {
    /// The per-controller defaults these options imply, for `RuntimeConfig::controller`: the
    /// in-cluster kinds take their poll interval and concurrency from there.
    pub fn controller_config(&self) -> ControllerConfig {
        ControllerConfig {
            concurrency: self.max_concurrent_reconciles,
            requeue: RequeuePolicy {
                poll_interval: self.poll_interval,
                // A transition is never watched less often than an object at rest.
                transition_interval: RequeuePolicy::default()
                    .transition_interval
                    .min(self.poll_interval),
                min_poll_interval: RequeuePolicy::default()
                    .min_poll_interval
                    .min(self.poll_interval),
                ..RequeuePolicy::default()
            },
        }
    }
}

/// What the EtcdCluster controller asks about each cluster's members.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EtcdMembership {
    /// etcd itself, through each cluster's client Service (pods run etcd).
    #[default]
    Etcd,
    /// `ferroplane_sandbox_etcd`: pods that run no etcd (the sandbox's), whose members the
    /// simulation derives from what the API server shows.
    Simulated,
}

/// Runs the enabled controllers until `shutdown` is cancelled; running reconciles finish first.
pub async fn run(runtime: &Runtime, options: &Options, shutdown: CancellationToken) {
    run_with(runtime, options, EtcdMembership::Etcd, shutdown).await;
}

/// [`run`] with EtcdCluster members answered by `membership`.
pub async fn run_with(
    runtime: &Runtime,
    options: &Options,
    membership: EtcdMembership,
    shutdown: CancellationToken,
) {
    let mut running = Vec::new();
    // `--kinds ecsinstance,ecsinstance` must not start two controllers of one kind.
    let mut kinds = options.kinds.clone();
    kinds.sort();
    kinds.dedup();
    for kind in &kinds {
        let stop = shutdown.clone().cancelled_owned();
        match kind {
            Kind::EcsInstance => {
                let ecs = provider_alibaba::Options {
                    namespace: options.namespace.clone(),
                    poll_interval: options.poll_interval,
                    max_concurrent_reconciles: options.max_concurrent_reconciles,
                    batching: options.batch_describe,
                    allowed_endpoints: options.allowed_endpoints.clone(),
                    ..provider_alibaba::Options::default()
                };
                let runtime = runtime.clone();
                running.push(tokio::spawn(async move {
                    if let Err(error) = provider_alibaba::run(&runtime, ecs, stop).await {
                        tracing::error!(%error, "cannot start the ECSInstance controllers");
                    }
                }));
            }
            Kind::EtcdCluster => {
                let mut etcd = provider_etcd::Options::default();
                etcd.namespace = options.namespace.clone();
                etcd.ca = options.etcd_ca;
                // EtcdBackup runs with EtcdCluster: its snapshots come from the same members.
                let stores = crate::etcd_backup_store::OssStores::new(
                    runtime.client().clone(),
                    options.allowed_endpoints.clone(),
                );
                let stop_backups = shutdown.clone().cancelled_owned();
                let runtime = runtime.clone();
                let tools_image = options.tools_image.clone();
                running.push(tokio::spawn(async move {
                    let stores = match stores {
                        Ok(stores) => stores,
                        Err(error) => {
                            tracing::error!(%error, "cannot make the EtcdBackup OSS client");
                            return;
                        }
                    };
                    // Restores read snapshots with the same stores and tenancy rules.
                    etcd.restore = provider_etcd::controller::RestoreSetup {
                        sources: Some(std::sync::Arc::new(stores.clone())),
                        tools_image: tools_image.into(),
                    };
                    match membership {
                        EtcdMembership::Etcd => {
                            let (clusters, backups) = tokio::join!(
                                provider_etcd::run(&runtime, etcd.clone(), stop),
                                provider_etcd::run_backups(&runtime, etcd, stores, stop_backups),
                            );
                            for error in [clusters.err(), backups.err()].into_iter().flatten() {
                                tracing::error!(%error, "an etcd controller failed");
                            }
                        }
                        EtcdMembership::Simulated => {
                            drop(stop_backups);
                            ferroplane_sandbox_etcd::run_simulated_with_backups(
                                &runtime, etcd, stores, stop,
                            )
                            .await;
                        }
                    }
                }));
            }
            Kind::Application => {
                let runtime = runtime.clone();
                let mut application = provider_application::Options::default();
                application.namespace = options.namespace.clone();
                running.push(tokio::spawn(async move {
                    if let Err(error) = provider_application::run(&runtime, application, stop).await
                    {
                        tracing::error!(%error, "the Application controller failed");
                    }
                }));
            }
        }
    }
    for task in running {
        if let Err(error) = task.await {
            tracing::error!(%error, "a controller task failed");
        }
    }
}
