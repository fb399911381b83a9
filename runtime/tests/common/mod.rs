//! Shared harness for the framework's integration tests: a test-only managed kind (`Widget`), an
//! in-memory fake cloud with fault injection, a Kubernetes client that can fail its N-th write,
//! and a sandbox API server with the Widget CRD installed.

#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use ferroplane_apis::common::{
    Condition, ConditionStatus, DeletionPolicy, LocalSecretReference, ManagementAction,
    ProviderConfigReference, default_management_policies,
};
use ferroplane_runtime::requeue::RequeuePolicy;
use ferroplane_runtime::{
    ConnectionDetails, Connector, Creation, Deletion, ExternalClient, ExternalRef, IdempotencyKey,
    Observation, Readiness, ReconcileError, Reconciler, RetryClass, Runtime, RuntimeConfig,
    UID_TAG, Update,
};
use ferroplane_sandbox::{Sandbox, SandboxConfig};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ObjectMeta, PostParams};
use kube::{CustomResource, CustomResourceExt, Resource, ResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

pub const NS: &str = "default";

/// A test-only managed kind with the shared spec and status fields.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "test.ferroplane.io",
    version = "v1",
    kind = "Widget",
    plural = "widgets",
    namespaced,
    status = "WidgetStatus"
)]
#[serde(rename_all = "camelCase")]
pub struct WidgetSpec {
    #[serde(default)]
    pub deletion_policy: DeletionPolicy,
    #[serde(default = "default_management_policies")]
    pub management_policies: Vec<ManagementAction>,
    #[serde(default)]
    pub provider_config_ref: ProviderConfigReference,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_connection_secret_to_ref: Option<LocalSecretReference>,
    pub for_provider: WidgetParameters,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WidgetParameters {
    pub size: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Late-initialized from the cloud when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WidgetObservation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WidgetStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_provider: Option<WidgetObservation>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

ferroplane_apis::impl_managed!(Widget, provider_config);

/// A widget referencing ProviderConfig `cfg` (a ConfigMap of that name stands in for it).
pub fn widget(name: &str, size: i64) -> Widget {
    let mut w = Widget::new(
        name,
        WidgetSpec {
            deletion_policy: DeletionPolicy::Delete,
            management_policies: default_management_policies(),
            provider_config_ref: ProviderConfigReference {
                name: "cfg".into(),
                ..Default::default()
            },
            write_connection_secret_to_ref: None,
            for_provider: WidgetParameters {
                size,
                label: None,
                zone: None,
            },
        },
    );
    w.metadata.namespace = Some(NS.into());
    w
}

// ---------------------------------------------------------------------------------------------
// Fake cloud
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
pub struct Res {
    pub uid: String,
    pub size: i64,
    pub label: Option<String>,
    pub zone: String,
    pub state: String,
    pub pending_observes: u32,
    pub deleting_observes: Option<u32>,
}

/// An injected failure: the call fails with this reason and retry class.
#[derive(Clone, Debug)]
pub struct Fault {
    pub reason: &'static str,
    pub retry: RetryClass,
    /// Apply the call's effect before failing (the response was lost).
    pub after_effect: bool,
}

#[derive(Default)]
pub struct CloudState {
    pub resources: BTreeMap<String, Res>,
    pub tokens: HashMap<String, String>,
    pub next_id: u32,
    pub calls: Vec<String>,
    pub faults: HashMap<&'static str, VecDeque<Fault>>,
    /// After the call's effect, never return (the reconcile is killed there).
    pub hang_after: Option<&'static str>,
    /// Before the call's effect, never return.
    pub hang_before: Option<&'static str>,
    /// Searching by UID tag finds nothing (an eventually consistent list API).
    pub blind_search: bool,
    /// New resources stay Pending for this many observes.
    pub pending_observes: u32,
    /// Deleted resources stay visible (Deleting) for this many observes.
    pub deleting_observes: u32,
}

#[derive(Clone, Default)]
pub struct FakeCloud {
    pub state: Arc<Mutex<CloudState>>,
}

impl FakeCloud {
    pub fn lock(&self) -> std::sync::MutexGuard<'_, CloudState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn count(&self) -> usize {
        self.lock().resources.len()
    }

    pub fn calls(&self, action: &str) -> usize {
        self.lock().calls.iter().filter(|c| *c == action).count()
    }

    pub fn fail_next(&self, action: &'static str, fault: Fault) {
        self.lock()
            .faults
            .entry(action)
            .or_default()
            .push_back(fault);
    }

    /// Inserts a resource made outside ferroplane (for imports).
    pub fn insert(&self, id: &str, size: i64) {
        self.lock().resources.insert(
            id.to_owned(),
            Res {
                uid: String::new(),
                size,
                label: None,
                zone: "zone-b".into(),
                state: "Running".into(),
                pending_observes: 0,
                deleting_observes: None,
            },
        );
    }

    pub fn only_resource(&self) -> (String, Res) {
        let st = self.lock();
        assert_eq!(
            st.resources.len(),
            1,
            "exactly one resource: {:?}",
            st.resources.keys().collect::<Vec<_>>()
        );
        let (k, v) = st.resources.iter().next().expect("one");
        (k.clone(), v.clone())
    }
}

/// Connects when ConfigMap `<providerConfigRef.name>` exists in the object's namespace.
#[derive(Clone)]
pub struct FakeConnector {
    pub cloud: FakeCloud,
    pub client: kube::Client,
    pub connects: Arc<AtomicU32>,
    /// Runs during observe (e.g. to change the object under the reconcile).
    pub on_observe: Arc<Mutex<Option<Hook>>>,
}

pub type Hook = Box<dyn FnMut() -> Pin<Box<dyn Future<Output = ()> + Send>> + Send>;

impl FakeConnector {
    pub fn new(cloud: FakeCloud, client: kube::Client) -> Self {
        Self {
            cloud,
            client,
            connects: Arc::default(),
            on_observe: Arc::default(),
        }
    }
}

pub struct FakeClient {
    cloud: FakeCloud,
    on_observe: Arc<Mutex<Option<Hook>>>,
}

impl Connector<Widget> for FakeConnector {
    type Client = FakeClient;

    async fn connect(&self, mr: &Widget) -> Result<FakeClient, ReconcileError> {
        self.connects.fetch_add(1, Ordering::SeqCst);
        let name = &mr.spec.provider_config_ref.name;
        let api: Api<ConfigMap> =
            Api::namespaced(self.client.clone(), &mr.namespace().unwrap_or_default());
        let found = api.get_opt(name).await.map_err(|e| {
            ReconcileError::retryable(
                "ProviderConfigUnreadable",
                format!("cannot read ProviderConfig {name}: {e}"),
            )
        })?;
        if found.is_none() {
            return Err(ReconcileError::dependency(
                "ProviderConfigNotFound",
                format!("ProviderConfig {name} not found; create it or fix spec.providerConfigRef"),
            ));
        }
        Ok(FakeClient {
            cloud: self.cloud.clone(),
            on_observe: self.on_observe.clone(),
        })
    }
}

impl FakeClient {
    /// Records the call and returns the injected fault (if any) and the hang settings.
    fn enter(&self, action: &'static str) -> (Option<Fault>, bool, bool) {
        let mut st = self.cloud.lock();
        st.calls.push(action.to_owned());
        let fault = st.faults.get_mut(action).and_then(VecDeque::pop_front);
        (
            fault,
            st.hang_before == Some(action),
            st.hang_after == Some(action),
        )
    }
}

fn fault_error(action: &str, f: &Fault) -> ReconcileError {
    ReconcileError::new(f.reason, format!("injected {action} failure"), f.retry)
}

async fn hang() {
    std::future::pending::<()>().await;
}

fn observation(id: &str, r: &Res) -> Observation {
    let at_provider = WidgetObservation {
        id: Some(id.to_owned()),
        size: Some(r.size),
        state: Some(r.state.clone()),
        zone: Some(r.zone.clone()),
    };
    let mut obs = Observation::found(id)
        .with_status(WidgetStatus {
            at_provider: Some(at_provider),
            ..WidgetStatus::default()
        })
        .expect("a widget's status serializes");
    obs = obs.with_connection_details(
        ConnectionDetails::new().with("endpoint", format!("{id}.widgets.test:{}", r.size)),
    );
    if r.state == "Pending" {
        obs = obs.with_readiness(Readiness::Creating).in_transition();
    } else if r.state == "Deleting" {
        obs = obs
            .with_readiness(Readiness::Unavailable("deleting".into()))
            .in_transition();
    }
    obs
}

impl ExternalClient<Widget> for FakeClient {
    async fn observe(&self, mr: &Widget, ext: &ExternalRef) -> Result<Observation, ReconcileError> {
        let hook = self
            .on_observe
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_mut()
            .map(|h| h());
        if let Some(h) = hook {
            h.await;
        }
        let (fault, _, _) = self.enter("observe");
        if let Some(f) = fault {
            return Err(fault_error("observe", &f));
        }
        let mut st = self.cloud.lock();
        let id = match ext.name() {
            Some(id) => Some(id.to_owned()),
            None if st.blind_search => None,
            None => st
                .resources
                .iter()
                .find(|(_, r)| r.uid == ext.uid)
                .map(|(k, _)| k.clone()),
        };
        let Some(id) = id else {
            return Ok(Observation::missing());
        };
        let mut gone = false;
        let obs = match st.resources.get_mut(&id) {
            None => return Ok(Observation::missing()),
            Some(r) => {
                if let Some(left) = r.deleting_observes.as_mut() {
                    if *left == 0 {
                        gone = true;
                    } else {
                        *left -= 1;
                        r.state = "Deleting".into();
                    }
                } else if r.pending_observes > 0 {
                    r.pending_observes -= 1;
                } else if r.state == "Pending" {
                    r.state = "Running".into();
                }
                let mut obs = observation(&id, r);
                let spec = &mr.spec.for_provider;
                let mut diff = Vec::new();
                if spec.size != r.size {
                    diff.push(format!("size: {} → {}", r.size, spec.size));
                }
                if spec.label.is_some() && spec.label != r.label {
                    diff.push(format!("label: {:?} → {:?}", r.label, spec.label));
                }
                if !diff.is_empty() {
                    obs = obs.with_diff(diff.join(", "));
                }
                if spec.zone.is_none() {
                    obs = obs
                        .with_late_init(json!({"zone": r.zone}))
                        .expect("an object");
                }
                obs
            }
        };
        if gone {
            st.resources.remove(&id);
            return Ok(Observation::missing());
        }
        Ok(obs)
    }

    async fn create(&self, mr: &Widget, key: &IdempotencyKey) -> Result<Creation, ReconcileError> {
        let (fault, hang_before, hang_after) = self.enter("create");
        if hang_before {
            hang().await;
        }
        if let Some(f) = &fault
            && !f.after_effect
        {
            return Err(fault_error("create", f));
        }
        assert!(key.token().len() <= 64 && key.token().is_ascii());
        let id = {
            let mut st = self.cloud.lock();
            if let Some(id) = st.tokens.get(key.token()) {
                id.clone()
            } else {
                st.next_id += 1;
                let id = format!("w-{:04}", st.next_id);
                let pending = st.pending_observes;
                st.resources.insert(
                    id.clone(),
                    Res {
                        uid: key.uid().to_owned(),
                        size: mr.spec.for_provider.size,
                        label: mr.spec.for_provider.label.clone(),
                        zone: mr
                            .spec
                            .for_provider
                            .zone
                            .clone()
                            .unwrap_or_else(|| "zone-a".into()),
                        state: if pending > 0 {
                            "Pending".into()
                        } else {
                            "Running".into()
                        },
                        pending_observes: pending,
                        deleting_observes: None,
                    },
                );
                st.tokens.insert(key.token().to_owned(), id.clone());
                id
            }
        };
        if hang_after {
            hang().await;
        }
        if let Some(f) = &fault {
            return Err(fault_error("create", f));
        }
        let _ = UID_TAG;
        Ok(Creation::new(id)
            .with_connection_details(ConnectionDetails::new().with("password", "s3cret")))
    }

    async fn update(&self, mr: &Widget, ext: &ExternalRef) -> Result<Update, ReconcileError> {
        let (fault, _, _) = self.enter("update");
        if let Some(f) = fault {
            return Err(fault_error("update", &f));
        }
        let id = ext
            .name()
            .ok_or_else(|| ReconcileError::terminal("NoExternalName", "no external name"))?;
        let mut st = self.cloud.lock();
        let r = st
            .resources
            .get_mut(id)
            .ok_or_else(|| ReconcileError::retryable("NotFound", format!("{id} not found")))?;
        r.size = mr.spec.for_provider.size;
        if mr.spec.for_provider.label.is_some() {
            r.label = mr.spec.for_provider.label.clone();
        }
        Ok(Update::done())
    }

    async fn delete(&self, _mr: &Widget, ext: &ExternalRef) -> Result<Deletion, ReconcileError> {
        let (fault, hang_before, hang_after) = self.enter("delete");
        if hang_before {
            hang().await;
        }
        if let Some(f) = &fault
            && !f.after_effect
        {
            return Err(fault_error("delete", f));
        }
        let Some(id) = ext.name() else {
            return Ok(Deletion::Gone);
        };
        let outcome = {
            let mut st = self.cloud.lock();
            let slow = st.deleting_observes;
            match st.resources.get_mut(id) {
                None => Deletion::Gone,
                Some(r) if slow > 0 => {
                    if r.deleting_observes.is_none() {
                        r.deleting_observes = Some(slow);
                    }
                    Deletion::InProgress
                }
                Some(_) => {
                    st.resources.remove(id);
                    Deletion::Gone
                }
            }
        };
        if hang_after {
            hang().await;
        }
        if let Some(f) = &fault {
            return Err(fault_error("delete", f));
        }
        Ok(outcome)
    }
}

// ---------------------------------------------------------------------------------------------
// A client whose N-th write to widgets fails (before or after reaching the server)
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteFault {
    /// The request never reaches the server (crash before the write).
    Before,
    /// The server applies it, the response is lost (crash after the write).
    After,
}

#[derive(Default)]
pub struct WritePlan {
    pub writes: u32,
    pub fail_at: Option<(u32, WriteFault)>,
    /// Fail this many watch requests (a broken watch connection).
    pub fail_watches: u32,
    /// Bumping it ends every open watch stream at its next chunk (a dropped connection).
    pub watch_generation: Arc<AtomicU32>,
}

/// A response body that ends once the plan's watch generation moves past the one it was
/// opened in.
pub struct KillableBody<B> {
    inner: Pin<Box<B>>,
    opened: u32,
    generation: Arc<AtomicU32>,
}

impl<B: http_body::Body> http_body::Body for KillableBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        if self.generation.load(Ordering::SeqCst) != self.opened {
            return Poll::Ready(None);
        }
        self.inner.as_mut().poll_frame(cx)
    }
}

pub struct FaultService<S> {
    inner: S,
    plan: Arc<Mutex<WritePlan>>,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl<S, B> tower::Service<http::Request<kube::client::Body>> for FaultService<S>
where
    S: tower::Service<http::Request<kube::client::Body>, Response = http::Response<B>>
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: http_body::Body + Send + 'static,
{
    type Response = http::Response<KillableBody<B>>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, req: http::Request<kube::client::Body>) -> Self::Future {
        let is_widget_write =
            req.method() != http::Method::GET && req.uri().path().contains("/widgets");
        let is_watch = req.uri().query().is_some_and(|q| q.contains("watch=true"));
        let mut fault = None;
        let generation;
        {
            let mut plan = self.plan.lock().unwrap_or_else(|p| p.into_inner());
            generation = plan.watch_generation.clone();
            if is_watch && plan.fail_watches > 0 {
                plan.fail_watches -= 1;
                return Box::pin(async {
                    Err::<Self::Response, BoxError>("injected watch failure".into())
                });
            }
            if is_widget_write {
                plan.writes += 1;
                if let Some((n, f)) = plan.fail_at
                    && n == plan.writes
                {
                    fault = Some(f);
                }
            }
        }
        let opened = generation.load(Ordering::SeqCst);
        let fut = self.inner.call(req);
        Box::pin(async move {
            match fault {
                Some(WriteFault::Before) => Err("injected crash before write".into()),
                Some(WriteFault::After) => {
                    let _ = fut.await.map_err(Into::into)?;
                    Err("injected crash after write (response lost)".into())
                }
                None => {
                    let resp = fut.await.map_err(Into::into)?;
                    Ok(resp.map(|inner| KillableBody {
                        inner: Box::pin(inner),
                        opened,
                        generation,
                    }))
                }
            }
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------------------------

pub struct Harness {
    pub sandbox: Sandbox,
    pub client: kube::Client,
    pub cloud: FakeCloud,
}

pub fn fast_policy() -> RequeuePolicy {
    RequeuePolicy {
        poll_interval: Duration::from_secs(60),
        jitter: 0.0,
        transition_interval: Duration::from_millis(200),
        backoff_base: Duration::from_millis(100),
        backoff_max: Duration::from_secs(2),
        min_poll_interval: Duration::from_millis(100),
    }
}

impl Harness {
    pub async fn start() -> Self {
        Self::start_with_crd(Widget::crd()).await
    }

    /// Like [`Harness::start`] with a custom Widget CRD (e.g. a loosened schema).
    pub async fn start_with_crd(crd: CustomResourceDefinition) -> Self {
        let sandbox = Sandbox::start(SandboxConfig::default())
            .await
            .expect("sandbox starts");
        let client = plain_client(&sandbox);
        let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
        crds.create(&PostParams::default(), &crd)
            .await
            .expect("widget CRD created");
        let h = Self {
            sandbox,
            client,
            cloud: FakeCloud::default(),
        };
        h.create_config("cfg").await;
        h
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
        Runtime::new(
            self.client.clone(),
            RuntimeConfig {
                rate_limit: 0.0,
                ..RuntimeConfig::default()
            },
        )
    }

    pub fn connector(&self) -> FakeConnector {
        FakeConnector::new(self.cloud.clone(), self.client.clone())
    }

    /// A reconciler as a fresh process would build it.
    pub fn reconciler(&self) -> Reconciler<Widget, FakeConnector> {
        Reconciler::new(&self.runtime(), self.connector(), fast_policy())
    }

    /// A reconciler whose Kubernetes client fails according to `plan`.
    pub fn faulty_reconciler(
        &self,
        plan: Arc<Mutex<WritePlan>>,
    ) -> Reconciler<Widget, FakeConnector> {
        let client = faulty_client(&self.sandbox, plan);
        let runtime = Runtime::new(
            client,
            RuntimeConfig {
                rate_limit: 0.0,
                ..RuntimeConfig::default()
            },
        );
        Reconciler::new(&runtime, self.connector(), fast_policy())
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
        self.sandbox
            .writes()
            .iter()
            .filter(|((_, resource), _)| resource.starts_with("widgets.test.ferroplane.io"))
            .map(|(_, n)| *n)
            .sum()
    }

    pub async fn event_reasons(&self, name: &str) -> Vec<String> {
        self.events(name)
            .await
            .into_iter()
            .map(|(reason, _)| reason)
            .collect()
    }

    /// (reason, note) of the events about widget `name`.
    pub async fn events(&self, name: &str) -> Vec<(String, String)> {
        let api: Api<k8s_openapi::api::events::v1::Event> =
            Api::namespaced(self.client.clone(), NS);
        api.list(&Default::default())
            .await
            .expect("events listed")
            .items
            .into_iter()
            .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name))
            .map(|e| (e.reason.unwrap_or_default(), e.note.unwrap_or_default()))
            .collect()
    }

    /// Polls `check` on the widget until it holds or `timeout` passes.
    pub async fn wait_for(
        &self,
        name: &str,
        timeout: Duration,
        check: impl Fn(Option<&Widget>) -> bool,
    ) {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let w = self.get_opt(name).await;
            if check(w.as_ref()) {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "timed out waiting; last: {w:#?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

pub fn plain_client(sandbox: &Sandbox) -> kube::Client {
    let url = sandbox.url().parse().expect("valid url");
    kube::Client::try_from(kube::Config::new(url)).expect("client")
}

pub fn faulty_client(sandbox: &Sandbox, plan: Arc<Mutex<WritePlan>>) -> kube::Client {
    let url = sandbox.url().parse().expect("valid url");
    let builder =
        kube::client::ClientBuilder::try_from(kube::Config::new(url)).expect("client builder");
    builder
        .with_layer(&tower::layer::layer_fn(move |inner| FaultService {
            inner,
            plan: plan.clone(),
        }))
        .build()
}

pub fn condition<'a>(w: &'a Widget, type_: &str) -> Option<&'a Condition> {
    w.status
        .as_ref()?
        .conditions
        .iter()
        .find(|c| c.type_ == type_)
}

pub fn is(w: &Widget, type_: &str, status: ConditionStatus, reason: &str) -> bool {
    condition(w, type_).is_some_and(|c| c.status == status && c.reason == reason)
}

pub fn external_name(w: &Widget) -> Option<String> {
    w.annotations().get("ferroplane.io/external-name").cloned()
}

pub fn has_finalizer(w: &Widget) -> bool {
    w.finalizers()
        .iter()
        .any(|f| f == "ferroplane.io/managed-resource")
}

pub fn meta_of(w: &Widget) -> &ObjectMeta {
    w.meta()
}
