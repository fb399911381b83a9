//! The real Kubernetes control plane of `ferroplane-testenv` as a test's cluster, prepared the
//! way a cluster install is: ferroplane's CRDs (waited on until Established) and deploy/'s
//! cluster RBAC of every provider with its Namespace and ServiceAccount, applied server-side;
//! the controllers get a kubeconfig of that ServiceAccount's token, so a verb deploy/ does not
//! grant fails them with the real apiserver's 403.
//!
//! [`shared`]: one control plane per test binary (tests isolate themselves by namespace);
//! [`Dedicated`]: a control plane of one test's own, for tests that need a whole cluster (their
//! objects in `default`, cluster-wide listings).

use std::path::{Path, PathBuf};
use std::time::Duration;

use ferroplane_apis::deploy::{self, ALL_PROVIDERS, SERVICE_ACCOUNT, SERVICE_ACCOUNT_NAMESPACE};
use ferroplane_testenv::{Access, ControlPlane, Options};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::core::GroupVersionKind;
use kube::discovery::{Scope, pinned_kind};
use kube::runtime::wait::{await_condition, conditions};
use tokio::sync::OnceCell;

use crate::client::client_from_kubeconfig;
use crate::crds;

/// Field manager of what the harness applies.
const FIELD_MANAGER: &str = "ferroplane-tests";
/// How long a CRD may take to be Established.
const CRD_ESTABLISHED: Duration = Duration::from_secs(30);

/// A real control plane with ferroplane installed.
#[derive(Debug, Clone)]
pub struct RealCluster {
    access: Access,
    controller_kubeconfig: PathBuf,
}

impl RealCluster {
    /// The admin's kubeconfig (for kubectl and the test's own client).
    pub fn admin_kubeconfig(&self) -> PathBuf {
        self.access.kubeconfig_path()
    }

    /// ferroplane's ServiceAccount (`ferroplane-system/ferroplane`), with deploy/'s RBAC only.
    pub fn controller_kubeconfig(&self) -> &Path {
        &self.controller_kubeconfig
    }

    /// A new admin client in the caller's runtime.
    pub async fn admin_client(&self) -> kube::Client {
        client_from_kubeconfig(&self.admin_kubeconfig()).await
    }

    /// A new client of ferroplane's ServiceAccount in the caller's runtime.
    pub async fn controller_client(&self) -> kube::Client {
        client_from_kubeconfig(&self.controller_kubeconfig).await
    }

    /// The control plane's addresses and files.
    pub fn access(&self) -> &Access {
        &self.access
    }
}

/// The control plane shared by every test of this binary, started and prepared by the first
/// caller. Panics (in every test that asks) when it cannot start: the message says why.
pub async fn shared() -> &'static RealCluster {
    static PREPARED: OnceCell<RealCluster> = OnceCell::const_new();
    PREPARED
        .get_or_init(|| async {
            let access = tokio::task::spawn_blocking(ferroplane_testenv::shared)
                .await
                .expect("the start of the shared control plane did not panic")
                .unwrap_or_else(|e| panic!("{e}"));
            prepare(access.clone()).await
        })
        .await
}

/// A control plane of one test's own, prepared like [`shared`]; stopped when dropped.
pub struct Dedicated {
    cluster: RealCluster,
    // Dropped last: stops the processes.
    _control_plane: ControlPlane,
}

impl Dedicated {
    pub async fn start() -> Self {
        let control_plane = ControlPlane::start(Options::default())
            .await
            .unwrap_or_else(|e| panic!("a control plane of the test's own starts: {e}"));
        let cluster = prepare(control_plane.access()).await;
        Self {
            cluster,
            _control_plane: control_plane,
        }
    }

    pub fn cluster(&self) -> &RealCluster {
        &self.cluster
    }
}

/// Installs ferroplane's CRDs and deploy/'s RBAC and issues the controller's kubeconfig.
async fn prepare(access: Access) -> RealCluster {
    let admin = access
        .client()
        .await
        .unwrap_or_else(|e| panic!("an admin client of the real control plane: {e}"));
    apply_crds_established(&admin).await;
    let objects: Vec<serde_json::Value> = deploy::cluster_rbac(&ALL_PROVIDERS)
        .iter()
        .flat_map(|m| m.objects().expect("deploy/'s manifests parse"))
        .collect();
    apply_objects(&admin, &objects).await;
    let controller_kubeconfig = access
        .service_account_kubeconfig(SERVICE_ACCOUNT_NAMESPACE, SERVICE_ACCOUNT)
        .await
        .unwrap_or_else(|e| panic!("a token of ferroplane's ServiceAccount: {e}"));
    RealCluster {
        access,
        controller_kubeconfig,
    }
}

/// Applies ferroplane's CRDs and waits until each is Established (before that, the real
/// apiserver answers 404 to its objects).
pub async fn apply_crds_established(client: &kube::Client) {
    let all = ferroplane_apis::crds();
    let names: Vec<String> = all
        .iter()
        .map(|c| c.metadata.name.clone().expect("a named CRD"))
        .collect();
    crds::apply(client, all).await;
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    for name in names {
        tokio::time::timeout(
            CRD_ESTABLISHED,
            await_condition(api.clone(), &name, conditions::is_crd_established()),
        )
        .await
        .unwrap_or_else(|_| panic!("CRD {name} Established within {CRD_ESTABLISHED:?}"))
        .unwrap_or_else(|e| panic!("watching CRD {name}: {e}"));
    }
}

/// Applies each object (server-side, forced), finding its resource by discovery.
pub async fn apply_objects(client: &kube::Client, objects: &[serde_json::Value]) {
    for object in objects {
        let object: DynamicObject = serde_json::from_value(object.clone())
            .unwrap_or_else(|e| panic!("not a Kubernetes object: {e}: {object}"));
        let types = object.types.clone().expect("apiVersion and kind");
        let gvk = GroupVersionKind::try_from(&types)
            .unwrap_or_else(|e| panic!("bad apiVersion {}: {e}", types.api_version));
        let (resource, capabilities) = pinned_kind(client, &gvk)
            .await
            .unwrap_or_else(|e| panic!("the server serves {gvk:?}: {e}"));
        let name = object.metadata.name.clone().expect("a named object");
        let api: Api<DynamicObject> = match (capabilities.scope, &object.metadata.namespace) {
            (Scope::Namespaced, Some(namespace)) => {
                Api::namespaced_with(client.clone(), namespace, &resource)
            }
            (Scope::Namespaced, None) => Api::default_namespaced_with(client.clone(), &resource),
            (Scope::Cluster, _) => Api::all_with(client.clone(), &resource),
        };
        api.patch(
            &name,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&object),
        )
        .await
        .unwrap_or_else(|e| panic!("{} {name} applied: {e}", types.kind));
    }
}
