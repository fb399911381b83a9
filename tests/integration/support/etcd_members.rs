//! EtcdCluster on the real control plane: real etcd members for its pods and a controller that
//! reaches them.
//!
//! The real StatefulSet controller makes the pods and their claims; a provisioner
//! (`ferroplane_testenv::Provisioner`) gives the claims volumes and `EtcdMembers` starts a real
//! etcd for each pod kwok reports Running, on a loopback address of its own. In a cluster the
//! controller reaches etcd at its client Service's DNS name; here the same production membership
//! client (`GatewayClient`) runs with an HTTP client whose resolver is the members' address
//! table, the one thing that differs from a cluster. The EtcdBackup controller runs beside it
//! with the same client, storing snapshots in the test's ECS mock's OSS.

use std::path::{Path, PathBuf};

use ferroplane_runtime::Runtime;
use ferroplane_testenv::{Builder, EtcdMembers, MemberAddresses, Provisioner};
use ferroplane_testkit::Controllers;
use std::sync::Arc;

use alibaba_mock::MockServer;
use ferroplane::etcd_backup_store::OssStores;
use provider_alibaba::EndpointAllowList;
use provider_etcd::controller::{GatewayFactory, RestoreSetup};
use provider_etcd::membership::GatewayConfig;

/// Builds the etcd release of `deploy/samples/etcdcluster.yaml` when missing (about a minute
/// on 2 cores), before the test: the runner would otherwise build it while the test waits.
pub async fn ensure_sample_release() {
    let sample: serde_json::Value =
        serde_saphyr::from_str(&ferroplane_testkit::samples::read("etcdcluster.yaml"))
            .expect("the EtcdCluster sample is YAML");
    let version = sample["spec"]["version"]
        .as_str()
        .expect("the EtcdCluster sample names its version")
        .trim_start_matches('v')
        .to_owned();
    tokio::task::spawn_blocking(move || Builder::new(None).ensure_etcd(&format!("v{version}")))
        .await
        .expect("the build does not panic")
        .unwrap_or_else(|e| panic!("the sample's etcd builds: {e}"));
}

/// The production membership clients (TLS clusters included), resolving the cluster's names
/// to the test's members.
fn loopback_factory(addresses: MemberAddresses) -> GatewayFactory {
    GatewayFactory::with_builder(
        &GatewayConfig::default(),
        Arc::new(move || {
            reqwest::Client::builder()
                .no_proxy()
                .dns_resolver(addresses.clone())
        }),
    )
    .expect("an HTTP client for the members")
}

/// The members, their volumes and the EtcdCluster controller of one namespace.
pub struct EtcdHarness {
    pub members: EtcdMembers,
    _provisioner: Provisioner,
    pub controller: Controllers,
}

impl EtcdHarness {
    /// `admin` runs the provisioner and the members; the EtcdCluster and EtcdBackup
    /// controllers run on `runtime`, the latter storing snapshots in `mock`'s OSS.
    pub fn start(
        admin: kube::Client,
        runtime: Runtime,
        namespace: &str,
        dir: &Path,
        mock: &MockServer,
    ) -> Self {
        let provisioner = Provisioner::start(admin.clone(), namespace, dir)
            .expect("the storage provisioner starts");
        let members = EtcdMembers::start(
            admin,
            namespace,
            dir,
            Builder::new(None),
            Some(PathBuf::from(env!("CARGO_BIN_EXE_ferroplane"))),
        )
        .expect("the etcd member runner starts");
        let factory = loopback_factory(members.addresses());
        let endpoints = EndpointAllowList::default()
            .with(&mock.endpoint())
            .expect("the mock's endpoint is a URL");
        let stores =
            OssStores::new(runtime.client().clone(), endpoints).expect("an HTTP client for OSS");
        let namespace = namespace.to_owned();
        // Restores read snapshots from the same stores, as `ferroplane run` sets it up.
        let restore = RestoreSetup {
            sources: Some(Arc::new(stores.clone())),
            ..RestoreSetup::default()
        };
        let controller = Controllers::spawn(runtime, |runtime, shutdown| async move {
            let clusters = provider_etcd::controller_with(
                &runtime,
                factory.clone(),
                Some(&namespace),
                restore,
            )
            .run(shutdown.clone().cancelled_owned());
            let backups = provider_etcd::backup::backup_controller(
                &runtime,
                factory,
                stores,
                Some(&namespace),
                RestoreSetup::default().tools_image,
            )
            .run(shutdown.cancelled_owned());
            futures::join!(clusters, backups);
            Ok(())
        });
        Self {
            members,
            _provisioner: provisioner,
            controller,
        }
    }
}
