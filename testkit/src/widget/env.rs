//! A sandbox with the Widget CRD and ProviderConfig `cfg` (a ConfigMap stands in for it), a
//! fake cloud, and reconcilers built as a fresh process would build them.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferroplane_runtime::requeue::RequeuePolicy;
use ferroplane_runtime::{Reconciler, Runtime};
use ferroplane_sandbox::Sandbox;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;
use kube::api::{Api, ObjectMeta, PostParams};

use super::cloud::{FakeCloud, FakeConnector};
use super::kind::{NS, Widget};
use crate::cluster::TestCluster;
use crate::controllers::test_runtime;
use crate::faulty_client::{WritePlan, faulty_client};
use crate::{events, wait};

/// Short requeue intervals, so that tests run in seconds; polls rarely (60 s), so that only
/// what a test does triggers a reconcile.
pub fn fast_policy() -> RequeuePolicy {
    RequeuePolicy {
        poll_interval: Duration::from_secs(60),
        jitter: 0.0,
        transition_interval: Duration::from_millis(200),
        backoff_base: Duration::from_millis(100),
        backoff_max: Duration::from_secs(2),
        min_poll_interval: Duration::from_millis(100),
        // The fake cloud lists what it creates at once.
        visibility_grace: Duration::ZERO,
    }
}

/// The sandbox, an admin client and the fake cloud of one widget test.
pub struct WidgetEnv {
    pub cluster: TestCluster,
    pub client: kube::Client,
    pub cloud: FakeCloud,
}

impl WidgetEnv {
    pub async fn start() -> Self {
        Self::start_with_crd(Widget::crd()).await
    }

    /// Like [`WidgetEnv::start`] with a custom Widget CRD (e.g. a loosened schema).
    pub async fn start_with_crd(crd: CustomResourceDefinition) -> Self {
        let cluster = TestCluster::start().await;
        cluster.install_crds([crd]).await;
        let env = Self {
            client: cluster.client(),
            cluster,
            cloud: FakeCloud::default(),
        };
        env.create_config("cfg").await;
        env
    }

    /// The API server (its write counters).
    pub fn sandbox(&self) -> &Sandbox {
        self.cluster.sandbox()
    }

    pub async fn shutdown(self) {
        self.cluster.shutdown().await;
    }

    pub fn widgets(&self) -> Api<Widget> {
        Api::namespaced(self.client.clone(), NS)
    }

    pub async fn create_config(&self, name: &str) {
        let api: Api<ConfigMap> = Api::namespaced(self.client.clone(), NS);
        let cm = ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..ObjectMeta::default()
            },
            data: Some([("endpoint".to_owned(), "fake".to_owned())].into()),
            ..ConfigMap::default()
        };
        api.create(&PostParams::default(), &cm)
            .await
            .expect("config created");
    }

    pub async fn delete_config(&self, name: &str) {
        let api: Api<ConfigMap> = Api::namespaced(self.client.clone(), NS);
        api.delete(name, &Default::default())
            .await
            .expect("config deleted");
    }

    pub fn runtime(&self) -> Runtime {
        test_runtime(self.client.clone())
    }

    pub fn connector(&self) -> FakeConnector {
        FakeConnector::new(self.cloud.clone(), self.client.clone())
    }

    /// A reconciler as a fresh process would build it.
    pub fn reconciler(&self) -> Reconciler<Widget, FakeConnector> {
        Reconciler::new(&self.runtime(), self.connector(), fast_policy())
    }

    /// A reconciler whose Kubernetes client fails according to `plan` (counting widget writes).
    pub fn faulty_reconciler(
        &self,
        plan: Arc<Mutex<WritePlan>>,
    ) -> Reconciler<Widget, FakeConnector> {
        let client = faulty_client(&self.cluster.url(), "widgets", plan);
        Reconciler::new(&test_runtime(client), self.connector(), fast_policy())
    }

    pub async fn create(&self, w: &Widget) -> Widget {
        self.widgets()
            .create(&PostParams::default(), w)
            .await
            .expect("widget created")
    }

    pub async fn get(&self, name: &str) -> Widget {
        self.widgets().get(name).await.expect("widget exists")
    }

    /// The widget as the controller's cache would hand it to a reconcile: its current version
    /// (or `w` itself once it is gone).
    pub async fn latest(&self, w: &Widget) -> Widget {
        let name = w.metadata.name.as_deref().expect("named widget");
        self.get_opt(name).await.unwrap_or_else(|| w.clone())
    }

    pub async fn get_opt(&self, name: &str) -> Option<Widget> {
        self.widgets().get_opt(name).await.expect("read widget")
    }

    /// Writes to widgets and their status so far, from the sandbox's counters.
    pub fn widget_writes(&self) -> u64 {
        self.sandbox()
            .writes()
            .iter()
            .filter(|((_, resource), _)| resource.starts_with("widgets.test.ferroplane.io"))
            .map(|(_, n)| *n)
            .sum()
    }

    pub async fn event_reasons(&self, name: &str) -> Vec<String> {
        events::reasons(&self.client, NS, name).await
    }

    /// (reason, note) of the events about widget `name`.
    pub async fn events(&self, name: &str) -> Vec<(String, String)> {
        events::about(&self.client, NS, name).await
    }

    /// Watches widget `name` until `check` holds (`None`: it does not exist) or `timeout`
    /// passes.
    pub async fn wait_for(
        &self,
        name: &str,
        timeout: Duration,
        check: impl Fn(Option<&Widget>) -> bool,
    ) {
        wait::eventually(format!("widget {name}"))
            .within(timeout)
            .for_object(&self.widgets(), name, check)
            .await;
    }
}
